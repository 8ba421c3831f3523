/*
 * test_view.c - the read-only connection view (include/ardnet_view.h): open, stat, newest
 * packet, read and take of a given packet against a writer that overwrites them (never a torn
 * packet), stamps, peers, reader count, re-created objects, objects refused, and no
 * allocation after ard_view_open.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ardnet.h"
#include "ardnet_view.h"
#include "testutil.h"

static char domain[64];
static pid_t writer_pid; /* a writer process still running when a test failed */

static int teardown(void **state)
{
    (void)state;
    if (writer_pid > 0) {
        kill(writer_pid, SIGKILL);
        waitpid(writer_pid, NULL, 0);
        writer_pid = 0;
    }
    ard_fini();
    if (ard_domain_unlink(domain) < 0)
        fprintf(stderr, "ard_domain_unlink: %s\n", ard_errdetail());
    return 0;
}

static void init_wired(const char *first, ...)
{
    char *argv[16] = {"t"};
    int argc = 1;
    va_list ap;
    va_start(ap, first);
    for (const char *s = first; s && argc < 14; s = va_arg(ap, const char *)) {
        argv[argc++] = "--ard";
        argv[argc++] = (char *)s;
    }
    va_end(ap);
    argv[argc] = NULL;
    int rc = ard_init(&argc, argv);
    if (rc != 0)
        fail_msg("ard_init: %d %s", rc, ard_errdetail());
}

static void path_of(char *buf, size_t len, const char *conn)
{
    snprintf(buf, len, "/dev/shm/ard.%s.%s", domain, conn);
}

static void put_u32(unsigned char *pkt, uint32_t v)
{
    memcpy(pkt, &v, sizeof v);
}

static uint32_t get_u32(const unsigned char *pkt)
{
    uint32_t v;
    memcpy(&v, pkt, sizeof v);
    return v;
}

static void test_open_stat_and_peers_describe_the_connection(void **state)
{
    (void)state;
    ard_port *o = ard_create("o", ARD_OUT, 24, "u32, f64 u8[3]");
    ard_port *i1 = ard_create("i1", ARD_IN, 24, NULL);
    ard_port *i2 = ard_create("i2", ARD_IN, 24, NULL);
    assert_non_null(o);
    assert_non_null(i1);
    assert_non_null(i2);
    init_wired("o=arm.state", "i1=arm.state", "i2=arm.state", NULL);

    ard_view *v = NULL;
    assert_int_equal(ard_view_open(NULL, "arm.state", &v), 0);
    assert_non_null(v);
    struct ard_conn_stat st, cs;
    ard_view_stat(v, &st);
    assert_string_equal(st.name, "arm.state");
    assert_string_equal(st.type, "u32 f64 u8[3]");
    assert_int_equal(st.size, 24);
    assert_int_equal(st.writer_pid, getpid());
    assert_int_equal(st.readers, 2);
    assert_int_equal(st.unlisted, 0);
    assert_int_equal(st.seq, 0);
    assert_int_equal(st.mode, 0600);
    assert_int_equal(ard_view_head(v), 0);
    unsigned char buf[24];
    struct ard_info inf;
    assert_int_equal(ard_view_latest(v, buf, &inf), ARD_ENODATA);
    int64_t stamps[8];
    assert_int_equal(ard_view_stamps(v, stamps, 8), 0);

    /* The owner and the inode are those of the object under the name. */
    char path[256];
    path_of(path, sizeof path, "arm.state");
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(ard_view_uid(v), sb.st_uid);
    assert_int_equal(ard_port_uid(i1), sb.st_uid);
    assert_int_equal(ard_port_uid(NULL), (uint32_t)-1);
    assert_int_equal(ard_view_inode(v), sb.st_ino);

    /* The view is no port: the readers do not count it, and the writer sees two. */
    assert_int_equal(ard_port_readers(o), 2);
    assert_int_equal(ard_port_readers(i1), 2);
    ard_close(i2);
    assert_int_equal(ard_port_readers(o), 1);
    ard_view_stat(v, &st);
    assert_int_equal(st.readers, 1);

    unsigned char pkt[24] = {0};
    for (uint32_t k = 1; k <= 3; k++) {
        put_u32(pkt, 100 + k);
        assert_int_equal(ard_send(o, pkt), 0);
    }
    struct ard_info sent = ard_port_info(o);
    ard_view_stat(v, &st);
    assert_int_equal(ard_conn_stat(NULL, "arm.state", &cs), 0);
    assert_int_equal(st.seq, 3);
    assert_int_equal(st.mono_ns, sent.mono_ns);
    assert_int_equal(st.real_ns, sent.real_ns);
    assert_int_equal(cs.seq, st.seq);
    assert_int_equal(cs.readers, st.readers);
    assert_int_equal(cs.writer_pid, st.writer_pid);

    struct ard_peer peers[4];
    uint32_t unlisted = 99;
    assert_int_equal(ard_view_peers(v, peers, 4, &unlisted), 2);
    assert_int_equal(unlisted, 0);
    assert_int_equal(peers[0].dir, ARD_OUT);
    assert_string_equal(peers[0].port, "o");
    assert_int_equal(peers[0].pid, getpid());
    assert_int_equal(peers[1].dir, ARD_IN);
    assert_string_equal(peers[1].port, "i1");
    /* The count of live peers even when out has no room for them. */
    assert_int_equal(ard_view_peers(v, peers, 1, NULL), 2);
    assert_int_equal(ard_view_peers(v, NULL, 5, NULL), ARD_EINVAL);

    /* The writer gone: no live writer, whatever the pid field still says. */
    ard_close(o);
    ard_view_stat(v, &st);
    assert_int_equal(st.writer_pid, 0);
    assert_int_equal(st.seq, 3);
    ard_view_close(v);
    ard_view_close(NULL);
}

static void test_latest_read_take_and_stamps(void **state)
{
    (void)state;
    ard_port *o = ard_create("o", ARD_OUT, 16, "u32 u32 f64");
    assert_non_null(o);
    init_wired("o=imu", NULL);
    ard_view *v;
    assert_int_equal(ard_view_open(domain, "imu", &v), 0);
    unsigned char pkt[16] = {0}, buf[16];
    int64_t sent_mono[40];
    for (uint32_t k = 1; k <= 5; k++) {
        put_u32(pkt, 1000 + k);
        assert_int_equal(ard_send(o, pkt), 0);
        sent_mono[k] = ard_port_info(o).mono_ns;
    }
    struct ard_info inf;
    assert_int_equal(ard_view_head(v), 5);
    assert_int_equal(ard_view_slots(v), 8);
    assert_int_equal(ard_view_latest(v, buf, &inf), 0);
    assert_int_equal(get_u32(buf), 1005);
    assert_int_equal(inf.seq, 5);
    assert_int_equal(inf.mono_ns, sent_mono[5]);
    assert_int_equal(inf.skipped, 0);
    /* skipped: packets between this call's and the previous call's. */
    for (uint32_t k = 6; k <= 8; k++) {
        put_u32(pkt, 1000 + k);
        assert_int_equal(ard_send(o, pkt), 0);
        sent_mono[k] = ard_port_info(o).mono_ns;
    }
    assert_int_equal(ard_view_latest(v, buf, &inf), 0);
    assert_int_equal(inf.seq, 8);
    assert_int_equal(inf.skipped, 2);
    assert_int_equal(get_u32(buf), 1008);

    /* A given packet while it is in the ring (8 slots for small packets). */
    assert_int_equal(ard_view_read(v, 3, buf, &inf), 0);
    assert_int_equal(get_u32(buf), 1003);
    assert_int_equal(inf.seq, 3);
    assert_int_equal(inf.mono_ns, sent_mono[3]);
    assert_int_equal(ard_view_read(v, 9, buf, &inf), ARD_ENODATA);
    assert_int_equal(ard_view_read(v, 0, buf, &inf), ARD_ENODATA);

    /* Stamps, newest first, as many as the ring holds. */
    int64_t st[16];
    size_t n = ard_view_stamps(v, st, 16);
    assert_true(n >= 7 && n <= 8);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(st[i], sent_mono[8 - i]);
    assert_int_equal(ard_view_stamps(v, st, 3), 3);
    assert_int_equal(st[2], sent_mono[6]);

    /* Zero-copy take: valid while the slot holds the packet, refused once overwritten. */
    int code = 1;
    const unsigned char *p = ard_view_take(v, 7, &inf, &code);
    assert_non_null(p);
    assert_int_equal(code, 0);
    assert_int_equal(get_u32(p), 1007);
    assert_int_equal(inf.seq, 7);
    assert_int_equal(ard_view_done(v, 7), 0);
    p = ard_view_take(v, 8, &inf, &code);
    assert_non_null(p);
    for (uint32_t k = 9; k <= 16; k++) { /* a whole ring: slot of 8 reused by 16 */
        put_u32(pkt, 1000 + k);
        assert_int_equal(ard_send(o, pkt), 0);
    }
    assert_int_equal(ard_view_done(v, 8), ARD_EAGAIN);
    ASSERT_CONTAINS(ard_errdetail(), "imu");
    /* Gone from the ring: not in it any more. */
    assert_null(ard_view_take(v, 8, &inf, &code));
    assert_int_equal(code, ARD_ENODATA);
    assert_int_equal(ard_view_read(v, 2, buf, &inf), ARD_ENODATA);
    assert_int_equal(ard_view_read(v, 16, buf, &inf), 0);
    assert_int_equal(get_u32(buf), 1016);
    ard_view_close(v);
}

/* A writer in another process rewriting fast: every packet carries its number in each word,
 * so a torn copy shows two numbers. */
#define BIG 32768
static void test_never_torn_under_a_fast_writer(void **state)
{
    (void)state;
    int go[2];
    assert_int_equal(pipe(go), 0);
    fflush(stdout);
    pid_t w = fork();
    assert_true(w >= 0);
    if (w > 0)
        writer_pid = w;
    if (w == 0) {
        close(go[0]);
        ard_port *o = ard_create("o", ARD_OUT, BIG, NULL);
        char *argv[] = {"writer", "--ard", "o=fast", NULL};
        int argc = 3;
        if (o == NULL || ard_init(&argc, argv) != 0)
            _exit(2);
        static uint64_t pkt[BIG / 8];
        uint64_t next = 1;
        for (size_t i = 0; i < BIG / 8; i++)
            pkt[i] = next;
        if (ard_send(o, pkt) != 0)
            _exit(3);
        if (write(go[1], "g", 1) != 1)
            _exit(4);
        int64_t end = ard_now_ns() + 700000000LL;
        while (ard_now_ns() < end) {
            next++;
            for (size_t i = 0; i < BIG / 8; i++)
                pkt[i] = next;
            if (ard_send(o, pkt) != 0)
                _exit(5);
        }
        _exit(0);
    }
    close(go[1]);
    char c;
    assert_int_equal(read(go[0], &c, 1), 1);
    close(go[0]);
    ard_view *v;
    assert_int_equal(ard_view_open(NULL, "fast", &v), 0);
    static uint64_t buf[BIG / 8];
    unsigned ok = 0, again = 0, taken = 0, take_lost = 0;
    uint64_t last = 0;
    int status = 0;
    pid_t ended = 0;
    for (int round = 0; round < 200000 && (ended = waitpid(w, &status, WNOHANG)) == 0; round++) {
        struct ard_info inf;
        int rc = round % 2 ? ard_view_latest(v, buf, &inf)
                           : ard_view_read(v, ard_view_head(v), buf, &inf);
        if (rc == ARD_EAGAIN || rc == ARD_ENODATA) {
            again++;
            continue;
        }
        assert_int_equal(rc, 0);
        for (size_t i = 0; i < BIG / 8; i++)
            if (buf[i] != inf.seq)
                fail_msg("torn packet %llu: word %zu holds %llu", (unsigned long long)inf.seq, i,
                         (unsigned long long)buf[i]);
        assert_true(inf.seq >= last);
        last = inf.seq;
        ok++;
        /* And the zero-copy take: copied out, then confirmed or discarded. */
        uint64_t s = ard_view_head(v);
        int code;
        const uint64_t *p = ard_view_take(v, s, &inf, &code);
        if (p == NULL)
            continue;
        memcpy(buf, p, BIG);
        if (ard_view_done(v, s) != 0) {
            take_lost++;
            continue;
        }
        for (size_t i = 0; i < BIG / 8; i++)
            if (buf[i] != s)
                fail_msg("torn take %llu: word %zu holds %llu", (unsigned long long)s, i,
                         (unsigned long long)buf[i]);
        taken++;
    }
    writer_pid = 0;
    if (ended == 0) {
        kill(w, SIGTERM);
        waitpid(w, &status, 0);
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("the writer failed (status %d)", status);
    print_message("view: %u copies, %u retries, %u takes, %u takes overwritten, last seq %llu\n",
                  ok, again, taken, take_lost, (unsigned long long)last);
    assert_true(ok > 0);
    assert_true(taken > 0);
    assert_true(last > 1);
    ard_view_close(v);
}

static void test_recreated_and_gone(void **state)
{
    (void)state;
    ard_port *o = ard_create("o", ARD_OUT, 8, "f64");
    assert_non_null(o);
    init_wired("o=cmd", NULL);
    ard_port *in = ard_create_on("r", "cmd", ARD_IN, 0, NULL);
    assert_non_null(in);
    ard_view *v;
    assert_int_equal(ard_view_open(NULL, "cmd", &v), 0);
    assert_false(ard_view_recreated(v));
    assert_false(ard_port_recreated(in));
    ard_close(o);
    ard_close(in);
    assert_int_equal(ard_conn_unlink(NULL, "cmd"), 0);
    /* Removed, nothing new yet: not (yet) re-created; the view still reads the old object. */
    assert_false(ard_view_recreated(v));
    o = ard_create_on("o2", "cmd", ARD_OUT, 16, "f64[2]");
    assert_non_null(o);
    assert_true(ard_view_recreated(v));
    ard_view *v2;
    assert_int_equal(ard_view_open(NULL, "cmd", &v2), 0);
    assert_false(ard_view_recreated(v2));
    assert_true(ard_view_inode(v2) != ard_view_inode(v));
    struct ard_conn_stat st;
    ard_view_stat(v2, &st);
    assert_int_equal(st.size, 16);
    ard_view_stat(v, &st);
    assert_int_equal(st.size, 8);
    ard_view_close(v);
    ard_view_close(v2);
    ard_close(o);
    assert_false(ard_port_recreated(NULL));
    assert_int_equal(ard_port_readers(NULL), ARD_EINVAL);
}

static void test_refused_objects(void **state)
{
    (void)state;
    ard_view *v = (ard_view *)&v;
    assert_int_equal(ard_view_open(NULL, "nothing.here", &v), ARD_ENOENT);
    assert_null(v);
    ASSERT_CONTAINS(ard_errdetail(), "nothing.here");
    assert_int_equal(ard_view_open(NULL, "bad/name", &v), ARD_EINVAL);
    assert_int_equal(ard_view_open("bad.domain", "x", &v), ARD_EINVAL);
    assert_int_equal(ard_view_open(NULL, "x", NULL), ARD_EINVAL);

    ard_port *o = ard_create("o", ARD_OUT, 8, NULL);
    assert_non_null(o);
    init_wired("o=open", NULL);
    char path[256];
    path_of(path, sizeof path, "open");
    /* Too open for the configured mode (0600). */
    assert_int_equal(chmod(path, 0666), 0);
    assert_int_equal(ard_view_open(NULL, "open", &v), ARD_EACCES);
    ASSERT_CONTAINS(ard_errdetail(), "mode 0666");
    assert_int_equal(chmod(path, 0600), 0);
    assert_int_equal(ard_view_open(NULL, "open", &v), 0);
    ard_view_close(v);

    /* Another user's object (root trusts nobody else's without allow-foreign). */
    if (geteuid() == 0) {
        assert_int_equal(chown(path, NOBODY_UID, NOGROUP_GID), 0);
        assert_int_equal(ard_view_open(NULL, "open", &v), ARD_EACCES);
        ASSERT_CONTAINS(ard_errdetail(), "owned by uid 65534");
        assert_int_equal(chown(path, 0, 0), 0);
    }

    /* Not an ardnet object. */
    char junk_path[256];
    path_of(junk_path, sizeof junk_path, "junk");
    FILE *f = fopen(junk_path, "w");
    assert_non_null(f);
    char zeros[8192] = {0};
    zeros[0] = 'x';
    assert_int_equal(fwrite(zeros, 1, sizeof zeros, f), sizeof zeros);
    fclose(f);
    assert_int_equal(chmod(junk_path, 0600), 0);
    assert_int_equal(ard_view_open(NULL, "junk", &v), ARD_ESTALE);
    ASSERT_CONTAINS(ard_errdetail(), "not an ardnet object");
    unlink(junk_path);
    ard_close(o);
}

/* ---- nothing allocated after ard_view_open (the counting allocator of test_realtime.c) ---- */

#ifndef ARD_SANITIZED

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void __libc_free(void *p);

static volatile int armed;
static volatile unsigned long allocations, frees;

void *malloc(size_t size)
{
    if (armed)
        allocations++;
    return __libc_malloc(size);
}

void *calloc(size_t n, size_t size)
{
    if (armed)
        allocations++;
    return __libc_calloc(n, size);
}

void *realloc(void *p, size_t size)
{
    if (armed)
        allocations++;
    return __libc_realloc(p, size);
}

void free(void *p)
{
    if (armed && p != NULL)
        frees++;
    __libc_free(p);
}

static void test_nothing_allocated_after_open(void **state)
{
    (void)state;
    ard_port *o = ard_create("o", ARD_OUT, 64, "f64[8]");
    ard_port *i = ard_create("i", ARD_IN, 64, NULL);
    assert_non_null(o);
    assert_non_null(i);
    init_wired("o=joints", "i=joints", NULL);
    ard_view *v;
    /* Control: the counter sees the view being allocated. */
    allocations = frees = 0;
    armed = 1;
    int rc = ard_view_open(NULL, "joints", &v);
    armed = 0;
    assert_int_equal(rc, 0);
    assert_true(allocations >= 1);

    unsigned char pkt[64] = {1}, buf[64];
    struct ard_info inf;
    struct ard_conn_stat st;
    struct ard_peer peers[4];
    int64_t stamps[8];
    uint32_t ul;
    int code;
    allocations = frees = 0;
    armed = 1;
    int r1 = ard_view_latest(v, buf, &inf); /* ARD_ENODATA, with its detail */
    for (int k = 0; k < 20; k++)
        if (ard_send(o, pkt) != 0)
            break;
    ard_view_stat(v, &st);
    uint64_t h = ard_view_head(v);
    int r2 = ard_view_latest(v, buf, &inf);
    int r3 = ard_view_read(v, h - 1, buf, &inf);
    int r4 = ard_view_read(v, 1, buf, &inf); /* overwritten */
    const void *p = ard_view_take(v, h, &inf, &code);
    int r5 = ard_view_done(v, h);
    size_t ns = ard_view_stamps(v, stamps, 8);
    int np = ard_view_peers(v, peers, 4, &ul);
    bool re = ard_view_recreated(v);
    int nr = ard_port_readers(o);
    bool pre = ard_port_recreated(i);
    uint32_t uid = ard_view_uid(v);
    armed = 0;
    if (allocations != 0 || frees != 0)
        fail_msg("view calls allocated %lu times and freed %lu times", allocations, frees);
    assert_int_equal(r1, ARD_ENODATA);
    assert_int_equal(r2, 0);
    assert_int_equal(r3, 0);
    assert_int_equal(r4, ARD_ENODATA);
    assert_non_null(p);
    assert_int_equal(r5, 0);
    assert_int_equal(h, 20);
    assert_int_equal(st.seq, 20);
    assert_true(ns >= 7);
    assert_int_equal(np, 2);
    assert_false(re);
    assert_int_equal(nr, 1);
    assert_false(pre);
    assert_int_equal(uid, geteuid());
    ard_view_close(v);
}

#else

static void test_nothing_allocated_after_open(void **state)
{
    (void)state;
    print_message("skipping: interposing malloc conflicts with the sanitizers' allocator\n");
    skip();
}

#endif

#define T(f) cmocka_unit_test_teardown(f, teardown)

int main(void)
{
    snprintf(domain, sizeof domain, "t_view_%d", (int)getpid());
    setenv("ARD_DOMAIN", domain, 1);
    unsetenv("ARD_SHM_MODE");
    unsetenv("ARD_ALLOW_FOREIGN");
    const struct CMUnitTest tests[] = {
        T(test_open_stat_and_peers_describe_the_connection),
        T(test_latest_read_take_and_stamps),
        T(test_never_torn_under_a_fast_writer),
        T(test_recreated_and_gone),
        T(test_refused_objects),
        T(test_nothing_allocated_after_open),
    };
    return cmocka_run_group_tests_name("view", tests, NULL, NULL);
}
