/*
 * test_hostile.c - a connection object's header rewritten under live blocks (DESIGN §9, trust
 * boundaries): every field, one at a time, set to hostile values while a writer and two
 * readers (separate processes) run. Nobody may crash, hang, or read or write outside its
 * mapping (this test also runs under ASan); where data can no longer be trusted the calls say
 * so with ARD_ESTALE naming the connection; every packet a reader returns is whole.
 *
 * White-box: it includes ardi.h for the header's field offsets, so that no field is missed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ardi.h"
#include "testutil.h"

#define CONN "hostile.conn"
#define WORDS 8
#define WATCHDOG_S 20 /* a reader that makes no call for this long is hung */

static char domain[64];

/* Shared with the children (MAP_SHARED | MAP_ANONYMOUS, mapped before fork). */
struct reader_stats {
    _Atomic uint64_t calls; /* calls returned: the watchdog's progress counter */
    _Atomic uint64_t fresh; /* new packets */
    _Atomic uint64_t stale; /* ARD_ESTALE */
    _Atomic uint64_t other; /* any other error than ESTALE/ETIMEDOUT/ENODATA */
    _Atomic uint64_t torn;  /* a returned packet that is not whole or not its seq's */
    _Atomic uint32_t ready;
    char stale_detail[256]; /* detail of the last ARD_ESTALE */
    char other_detail[256];
};
struct shared {
    _Atomic uint64_t sent;
    _Atomic uint32_t writer_ready;
    _Atomic uint32_t stop;
    struct reader_stats r[2];
};
static struct shared *sh;
static pid_t writer_pid, reader_pid[2];

static void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

static void attach_or_die(const char *name, enum ard_dir dir, ard_port **p)
{
    *p = ard_create_on(name, CONN, dir, WORDS * 8, "u64[8]");
    int argc = 1;
    char *argv[] = {"child", NULL};
    if (*p == NULL || ard_init(&argc, argv) != 0) {
        fprintf(stderr, "child %s: %s\n", name, ard_errdetail());
        _exit(2);
    }
}

static void writer_main(void)
{
    ard_port *o;
    attach_or_die("w", ARD_OUT, &o);
    uint64_t pkt[WORDS];
    atomic_store(&sh->writer_ready, 1);
    while (!atomic_load(&sh->stop)) {
        /* Every word carries the packet's own sequence number. */
        uint64_t seq = ard_port_info(o).seq + 1;
        for (int i = 0; i < WORDS; i++)
            pkt[i] = seq;
        if (ard_send(o, pkt) != 0)
            _exit(3);
        atomic_fetch_add(&sh->sent, 1);
        sleep_us(100);
    }
    ard_fini();
    _exit(0);
}

/* Reader 0 blocks in ard_rec_timed, reader 1 polls with ard_tryrec. */
static void reader_main(int id)
{
    ard_port *in;
    attach_or_die(id ? "r1" : "r0", ARD_IN, &in);
    struct reader_stats *st = &sh->r[id];
    atomic_store(&st->ready, 1);
    uint64_t pkt[WORDS];
    while (!atomic_load(&sh->stop)) {
        memset(pkt, 0xEE, sizeof pkt);
        int rc = id ? ard_tryrec(in, pkt) : ard_rec_timed(in, pkt, 50000000);
        if (rc >= 0) {
            struct ard_info inf = ard_port_info(in);
            for (int i = 0; i < WORDS; i++)
                if (pkt[i] != inf.seq)
                    atomic_fetch_add(&st->torn, 1);
            if ((id == 0 && rc == 0) || rc == 1)
                atomic_fetch_add(&st->fresh, 1);
        } else if (rc == ARD_ESTALE) {
            snprintf(st->stale_detail, sizeof st->stale_detail, "%s", ard_errdetail());
            atomic_fetch_add(&st->stale, 1);
        } else if (rc != ARD_ETIMEDOUT && rc != ARD_ENODATA) {
            snprintf(st->other_detail, sizeof st->other_detail, "%d %s", rc, ard_errdetail());
            atomic_fetch_add(&st->other, 1);
        }
        atomic_fetch_add(&st->calls, 1);
        if (id)
            sleep_us(50);
    }
    ard_fini();
    _exit(0);
}

static pid_t start(void (*fn)(int), int arg)
{
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        alarm(600); /* never outlive a broken parent */
        fn(arg);
        _exit(0);
    }
    return pid;
}

static void writer_fn(int unused)
{
    (void)unused;
    writer_main();
}

/* Fail if any child died; name how. */
static void assert_children_alive(const char *when)
{
    pid_t pids[3] = {writer_pid, reader_pid[0], reader_pid[1]};
    const char *who[3] = {"writer", "reader 0 (rec_timed)", "reader 1 (tryrec)"};
    for (int i = 0; i < 3; i++) {
        int status;
        pid_t r = waitpid(pids[i], &status, WNOHANG);
        if (r == pids[i]) {
            if (WIFSIGNALED(status))
                fail_msg("%s: %s died of signal %d", when, who[i], WTERMSIG(status));
            fail_msg("%s: %s exited with status %d", when, who[i], WEXITSTATUS(status));
        }
    }
    for (int i = 0; i < 2; i++)
        if (atomic_load(&sh->r[i].other) != 0)
            fail_msg("%s: reader %d got an unexpected error: %s", when, i, sh->r[i].other_detail);
}

/* Watchdog: both readers must return from calls (they never block for long). */
static void assert_readers_progress(const char *when)
{
    for (int i = 0; i < 2; i++) {
        uint64_t c0 = atomic_load(&sh->r[i].calls);
        int waited = 0;
        while (atomic_load(&sh->r[i].calls) < c0 + 2) {
            if (waited++ > WATCHDOG_S * 100)
                fail_msg("%s: reader %d made no progress for %d s: hung", when, i, WATCHDOG_S);
            sleep_us(10000);
        }
    }
}

struct field {
    const char *name;
    size_t off, len;
    bool geometry; /* attach and stat must refuse a hostile value */
    bool live;     /* rewritten by the writer on every send */
};

#define F(member, geo, live)                                                                       \
    {                                                                                              \
#member, offsetof(struct ardi_seg, member), sizeof(((struct ardi_seg *)0)->member), geo,   \
            live                                                                                   \
    }

static const struct field fields[] = {
    F(magic, true, false),       F(version, true, false),  F(nslots, true, false),
    F(size, true, false),        F(stride, true, false),   F(total, true, false),
    F(type_hash, false, false),  F(conn, false, false),    F(type, true, false),
    F(head, false, true),        F(wake, false, true),     F(writer_cpu, false, false),
    F(writer_pid, false, false), F(readers, false, false), F(spinners, false, false),
};

/* Hostile value number k (0, 1, huge, all ones) written over the whole field. */
static void hostile(unsigned char *dst, size_t len, int k)
{
    if (len > 8) { /* character arrays: no terminator at all, or zeros, or ones, or 'A's */
        memset(dst, k == 0 ? 0 : k == 1 ? 1 : k == 2 ? 'A' : 0xFF, len);
        return;
    }
    uint64_t v = k == 0 ? 0 : k == 1 ? 1 : k == 2 ? (len == 4 ? 0x7FFFFFFFu : 1ull << 40) : ~0ull;
    memcpy(dst, &v, len); /* little-endian: the low bytes of v */
}

static const char *const value_names[] = {"0", "1", "huge", "all ones"};

static int probe_attach(void)
{
    ard_port *p = ard_create_on("probe", CONN, ARD_IN, WORDS * 8, "u64[8]");
    if (p == NULL)
        return ard_lasterror();
    ard_close(p);
    return 0;
}

/* New attaches and the tools' stat while the field is hostile: refused with ARD_ESTALE naming
 * the connection (geometry), or accepted; never anything else. */
static void check_newcomers(const struct field *f, int k, bool must_refuse)
{
    struct ard_conn_stat st;
    int rcs[2] = {probe_attach(), 0};
    char detail[768];
    snprintf(detail, sizeof detail, "%s", ard_errdetail());
    rcs[1] = ard_conn_stat(domain, CONN, &st);
    /* The table of who is attached is input too: whatever is listed is well-formed. */
    struct ard_peer peers[8];
    int np = ard_conn_peers(domain, CONN, peers, 8);
    if (np < 0 && np != ARD_ESTALE)
        fail_msg("%s = %s: ard_conn_peers returned %d: %s", f->name, value_names[k], np,
                 ard_errdetail());
    for (int i = 0; i < np && i < 8; i++) {
        if (peers[i].pid <= 0 || (peers[i].dir != ARD_IN && peers[i].dir != ARD_OUT) ||
            memchr(peers[i].port, '\0', sizeof peers[i].port) == NULL ||
            memchr(peers[i].program, '\0', sizeof peers[i].program) == NULL)
            fail_msg("%s = %s: ard_conn_peers listed a malformed entry", f->name, value_names[k]);
    }
    /* Untouched table: the writer and both readers are listed. */
    if (np >= 0 && strcmp(f->name, "peers") != 0 && np != 3)
        fail_msg("%s = %s: ard_conn_peers listed %d peers, not 3", f->name, value_names[k], np);
    for (int i = 0; i < 2; i++) {
        const char *what = i ? "ard_conn_stat" : "attach";
        const char *d = i ? ard_errdetail() : detail;
        if (rcs[i] != 0 && rcs[i] != ARD_ESTALE)
            fail_msg("%s = %s: %s returned %d: %s", f->name, value_names[k], what, rcs[i], d);
        if (must_refuse && rcs[i] != ARD_ESTALE)
            fail_msg("%s = %s: %s accepted a hostile header", f->name, value_names[k], what);
        if (rcs[i] == ARD_ESTALE)
            ASSERT_CONTAINS(d, CONN);
    }
}

static void test_rewritten_header_fields_harm_nobody(void **state)
{
    (void)state;
    sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    assert_true(sh != MAP_FAILED);
    memset(sh, 0, sizeof *sh);
    writer_pid = start(writer_fn, 0);
    while (!atomic_load(&sh->writer_ready) || atomic_load(&sh->sent) < 10)
        sleep_us(1000);
    for (int i = 0; i < 2; i++) {
        reader_pid[i] = start(reader_main, i);
        while (!atomic_load(&sh->r[i].ready))
            sleep_us(1000);
    }
    int argc = 1;
    char *argv[] = {"t", NULL};
    assert_int_equal(ard_init(&argc, argv), 0);

    char path[160];
    snprintf(path, sizeof path, "/dev/shm/ard.%s.%s", domain, CONN);
    int fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    struct stat sb;
    assert_int_equal(fstat(fd, &sb), 0);
    unsigned char *obj = mmap(NULL, (size_t)sb.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    assert_true(obj != MAP_FAILED);
    close(fd);

    static unsigned char saved[ARD_MAX_TYPE + 1];
    char when[128];
    for (size_t fi = 0; fi < sizeof fields / sizeof fields[0]; fi++) {
        const struct field *f = &fields[fi];
        unsigned char *at = obj + f->off;
        for (int k = 0; k < 4; k++) {
            snprintf(when, sizeof when, "%s = %s", f->name, value_names[k]);
            /* Phase A: the writer runs; the field is rewritten again and again. */
            memcpy(saved, at, f->len);
            static unsigned char bad[ARD_MAX_TYPE + 1];
            hostile(bad, f->len, k);
            /* A value that happens to be the real one (version 1) or valid (type "" is an
             * opaque connection) need not be refused. */
            bool refuse = f->geometry && memcmp(bad, saved, f->len) != 0 && !(fi == 8 && k == 0);
            uint64_t sent0 = atomic_load(&sh->sent);
            for (int i = 0; i < 40; i++) {
                hostile(at, f->len, k);
                if (i == 20)
                    check_newcomers(f, k, refuse && !f->live);
                sleep_us(500);
            }
            if (!f->live)
                memcpy(at, saved, f->len);
            assert_children_alive(when);
            assert_readers_progress(when);

            /* Phase B: the writer is stopped, so the hostile value stays put. */
            kill(writer_pid, SIGSTOP);
            sleep_us(2000);
            memcpy(saved, at, f->len);
            uint64_t stale0 = atomic_load(&sh->r[1].stale);
            hostile(at, f->len, k);
            check_newcomers(f, k, refuse);
            assert_readers_progress(when);
            assert_children_alive(when);
            if (fi == 9) {
                /* A head that can no longer be trusted is reported, naming the connection. */
                while (atomic_load(&sh->r[1].stale) == stale0)
                    assert_readers_progress(when);
                ASSERT_CONTAINS(sh->r[1].stale_detail, CONN);
            }
            memcpy(at, saved, f->len);
            kill(writer_pid, SIGCONT);

            /* Afterwards the connection works again for everybody. */
            while (atomic_load(&sh->sent) < sent0 + 20)
                sleep_us(1000);
            uint64_t fresh0 = atomic_load(&sh->r[1].fresh);
            while (atomic_load(&sh->r[1].fresh) < fresh0 + 2)
                assert_readers_progress(when);
            assert_int_equal(probe_attach(), 0);
        }
    }
    atomic_store(&sh->stop, 1);
    pid_t pids[3] = {writer_pid, reader_pid[0], reader_pid[1]};
    for (int i = 0; i < 3; i++) {
        int status;
        assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            fail_msg("child %d ended with status 0x%x", i, status);
    }
    writer_pid = reader_pid[0] = reader_pid[1] = 0;
    for (int i = 0; i < 2; i++) {
        if (atomic_load(&sh->r[i].torn) != 0)
            fail_msg("reader %d returned %llu packets that were not whole", i,
                     (unsigned long long)atomic_load(&sh->r[i].torn));
        assert_true(atomic_load(&sh->r[i].fresh) > 0);
    }
    munmap(obj, (size_t)sb.st_size);
    munmap(sh, sizeof *sh);
    sh = NULL;
}

static int teardown(void **state)
{
    (void)state;
    if (sh != NULL && sh != MAP_FAILED)
        atomic_store(&sh->stop, 1);
    pid_t pids[3] = {writer_pid, reader_pid[0], reader_pid[1]};
    for (int i = 0; i < 3; i++)
        if (pids[i] > 0 && kill(pids[i], SIGKILL) == 0)
            waitpid(pids[i], NULL, 0);
    ard_fini();
    if (ard_domain_unlink(domain) < 0)
        fprintf(stderr, "ard_domain_unlink: %s\n", ard_errdetail());
    return 0;
}

int main(void)
{
    snprintf(domain, sizeof domain, "t_hostile_%d", (int)getpid());
    setenv("ARD_DOMAIN", domain, 1);
    unsetenv("ARD_SHM_MODE");
    unsetenv("ARD_SPIN_NS");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_rewritten_header_fields_harm_nobody, teardown),
    };
    return cmocka_run_group_tests_name("hostile", tests, NULL, NULL);
}
