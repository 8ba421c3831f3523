/*
 * test_conn.c - connections seen from outside (for tools, ardkill, ardnet): ard_conn_stat,
 * ard_conn_list, ard_conn_unlink, ard_domain_unlink.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ardnet.h"

static char domain[64];

static int teardown(void **state)
{
    (void)state;
    ard_fini();
    char other[80];
    snprintf(other, sizeof other, "%s0", domain);
    if (ard_domain_unlink(domain) < 0 || ard_domain_unlink(other) < 0)
        fprintf(stderr, "ard_domain_unlink: %s\n", ard_errdetail());
    return 0;
}

static void init_ok(const char *first, ...)
{
    char *argv[16] = {"t"};
    int argc = 1;
    va_list ap;
    va_start(ap, first);
    for (const char *s = first; s && argc < 15; s = va_arg(ap, const char *))
        argv[argc++] = (char *)s;
    va_end(ap);
    argv[argc] = NULL;
    int rc = ard_init(&argc, argv);
    if (rc != 0)
        fail_msg("ard_init: %d %s", rc, ard_errdetail());
}

static void test_stat_describes_connection(void **state)
{
    (void)state;
    ard_port *o = ard_create("o", ARD_OUT, 24, "u32, f64 u8[3]");
    ard_port *i1 = ard_create("i1", ARD_IN, 24, NULL);
    ard_port *i2 = ard_create("i2", ARD_IN, 24, "u32 f64 u8[3]");
    assert_non_null(o);
    assert_non_null(i1);
    assert_non_null(i2);
    init_ok("--ard", "o=arm.state", "--ard", "i1=arm.state", "--ard", "i2=arm.state", NULL);

    struct ard_conn_stat st;
    assert_int_equal(ard_conn_stat(NULL, "arm.state", &st), 0);
    assert_string_equal(st.name, "arm.state");
    assert_string_equal(st.type, "u32 f64 u8[3]");
    assert_int_equal(st.size, 24);
    assert_int_equal(st.writer_pid, getpid());
    assert_int_equal(st.readers, 2);
    assert_int_equal(st.seq, 0);
    assert_int_equal(st.mode, 0600);

    unsigned char pkt[24] = {1};
    for (int k = 0; k < 3; k++)
        assert_int_equal(ard_send(o, pkt), 0);
    struct ard_info inf = ard_port_info(o);
    assert_int_equal(ard_conn_stat(domain, "arm.state", &st), 0);
    assert_int_equal(st.seq, 3);
    assert_int_equal(st.mono_ns, inf.mono_ns);
    assert_int_equal(st.real_ns, inf.real_ns);

    ard_close(i1);
    ard_close(o);
    assert_int_equal(ard_conn_stat(NULL, "arm.state", &st), 0);
    assert_int_equal(st.readers, 1);
    assert_int_equal(st.writer_pid, 0);
    assert_int_equal(st.seq, 3); /* the last value outlives its writer */

    assert_int_equal(ard_conn_stat(NULL, "nosuch", &st), ARD_ENOENT);
    assert_non_null(strstr(ard_errdetail(), "nosuch"));
    assert_int_equal(ard_conn_stat(NULL, "bad/name", &st), ARD_EINVAL);
    assert_int_equal(ard_conn_stat("bad.domain", "arm.state", &st), ARD_EINVAL);
}

static void test_stat_shows_no_writer_after_kill(void **state)
{
    (void)state;
    int pfd[2];
    assert_int_equal(pipe(pfd), 0);
    fflush(stdout);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        ard_port *o = ard_create("k", ARD_OUT, 8, NULL);
        char *argv[] = {"w", NULL};
        int argc = 1;
        uint64_t v = 5;
        if (o == NULL || ard_init(&argc, argv) != 0 || ard_send(o, &v) != 0)
            _exit(2);
        if (write(pfd[1], "r", 1) != 1)
            _exit(3);
        pause();
        _exit(0);
    }
    close(pfd[1]);
    char c;
    assert_int_equal(read(pfd[0], &c, 1), 1);
    close(pfd[0]);
    struct ard_conn_stat st;
    assert_int_equal(ard_conn_stat(NULL, "k", &st), 0);
    assert_int_equal(st.writer_pid, pid);
    kill(pid, SIGKILL);
    assert_int_equal(waitpid(pid, NULL, 0), pid);
    assert_int_equal(ard_conn_stat(NULL, "k", &st), 0);
    assert_int_equal(st.writer_pid, 0); /* a dead writer is no writer */
    assert_int_equal(st.seq, 1);
}

static int collect_names(const char *name, void *arg)
{
    char *buf = arg;
    strcat(buf, name);
    strcat(buf, " ");
    return 0;
}

static int stop_at_b(const char *name, void *arg)
{
    (void)arg;
    return strcmp(name, "b") == 0 ? 77 : 0;
}

static void test_list_visits_in_name_order(void **state)
{
    (void)state;
    char empty[80];
    snprintf(empty, sizeof empty, "%s0", domain);
    assert_int_equal(ard_conn_list(empty, collect_names, (char[8]){0}), 0);

    const char *names[] = {"c", "a.x", "b", "a"};
    for (size_t i = 0; i < 4; i++)
        assert_non_null(ard_create(names[i], ARD_IN, 8, NULL));
    init_ok(NULL);
    /* A connection of a domain whose name extends ours must not be listed. */
    char other_path[160];
    snprintf(other_path, sizeof other_path, "/dev/shm/ard.%s0.zz", domain);
    int fd = open(other_path, O_CREAT | O_WRONLY, 0600);
    assert_true(fd >= 0);
    close(fd);

    char buf[256] = "";
    assert_int_equal(ard_conn_list(NULL, collect_names, buf), 4);
    assert_string_equal(buf, "a a.x b c ");
    buf[0] = '\0';
    assert_int_equal(ard_conn_list(domain, collect_names, buf), 4);
    assert_int_equal(ard_conn_list(NULL, stop_at_b, NULL), 77);
    buf[0] = '\0';
    assert_int_equal(ard_conn_list(empty, collect_names, buf), 1);
    assert_string_equal(buf, "zz ");
    assert_int_equal(ard_conn_list("bad.domain", collect_names, buf), ARD_EINVAL);
}

/* With no descriptor left the domain's directory cannot be opened: listing and removing fail
 * with ARD_ESYS naming it (once they freed what was never allocated: a crash). */
static void test_list_without_descriptors_fails_cleanly(void **state)
{
    (void)state;
    assert_non_null(ard_create("nf", ARD_IN, 8, NULL));
    init_ok(NULL);
    struct rlimit old, low;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
    int fds[64], nfds = 0;
    low = old; /* the soft limit lowered to 64 (the hard one kept: set back below) */
    low.rlim_cur = 64;
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
    int fd;
    while (nfds < 64 && (fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0)
        fds[nfds++] = fd;
    int list_rc = ard_conn_list(NULL, collect_names, (char[64]){0});
    char detail[256];
    snprintf(detail, sizeof detail, "%s", ard_errdetail());
    int unlink_rc = ard_domain_unlink(NULL);
    while (nfds > 0)
        close(fds[--nfds]);
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
    assert_int_equal(list_rc, ARD_ESYS);
    assert_int_equal(unlink_rc, ARD_ESYS);
    assert_non_null(strstr(detail, "opendir(/dev/shm)"));
    char buf[64] = "";
    assert_int_equal(ard_conn_list(NULL, collect_names, buf), 1);
    assert_string_equal(buf, "nf ");
}

static void test_unlink_refuses_attached_connection(void **state)
{
    (void)state;
    ard_port *o = ard_create("u", ARD_OUT, 8, NULL);
    ard_port *i = ard_create("ui", ARD_IN, 8, NULL);
    init_ok("--ard", "ui=u", NULL);
    uint64_t v = 1, got = 0;
    assert_int_equal(ard_send(o, &v), 0);
    /* Attached: not removed, and the message names it. */
    assert_int_equal(ard_conn_unlink(NULL, "u"), ARD_EBUSY);
    assert_non_null(strstr(ard_errdetail(), "'u'"));
    struct ard_conn_stat st;
    assert_int_equal(ard_conn_stat(NULL, "u", &st), 0);
    assert_int_equal(st.seq, 1);
    /* Only the reader left: still attached. */
    ard_close(o);
    assert_int_equal(ard_conn_unlink(NULL, "u"), ARD_EBUSY);
    assert_int_equal(ard_tryrec(i, &got), 1);
    assert_int_equal(got, 1);
    ard_close(i);
    assert_int_equal(ard_conn_unlink(NULL, "u"), 0);
    assert_int_equal(ard_conn_stat(NULL, "u", &st), ARD_ENOENT);
    /* A new attach creates a new, empty object. */
    ard_port *n = ard_create("u", ARD_IN, 8, NULL);
    assert_non_null(n);
    assert_int_equal(ard_tryrec(n, &got), ARD_ENODATA);
    ard_close(n);
    assert_int_equal(ard_conn_unlink(NULL, "u"), 0);
    assert_int_equal(ard_conn_unlink(NULL, "u"), ARD_ENOENT);
    assert_int_equal(ard_conn_unlink(NULL, "../etc"), ARD_EINVAL);
}

static void test_unlink_after_kill_of_attached_process(void **state)
{
    (void)state;
    int pfd[2];
    assert_int_equal(pipe(pfd), 0);
    fflush(stdout);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        ard_port *in = ard_create("kd", ARD_IN, 8, NULL);
        char *argv[] = {"r", NULL};
        int argc = 1;
        if (in == NULL || ard_init(&argc, argv) != 0 || write(pfd[1], "r", 1) != 1)
            _exit(2);
        pause();
        _exit(0);
    }
    close(pfd[1]);
    char c;
    assert_int_equal(read(pfd[0], &c, 1), 1);
    close(pfd[0]);
    assert_int_equal(ard_conn_unlink(NULL, "kd"), ARD_EBUSY);
    kill(pid, SIGKILL);
    assert_int_equal(waitpid(pid, NULL, 0), pid);
    /* The kernel dropped the dead reader's attach lock: nothing to clean up by hand. */
    assert_int_equal(ard_conn_unlink(NULL, "kd"), 0);
}

static void test_domain_unlink_counts_and_removes(void **state)
{
    (void)state;
    for (int k = 0; k < 3; k++) {
        char name[8];
        snprintf(name, sizeof name, "d%d", k);
        assert_non_null(ard_create(name, ARD_OUT, 8, NULL));
    }
    init_ok(NULL);
    ard_fini();
    assert_int_equal(ard_domain_unlink(NULL), 3);
    assert_int_equal(ard_conn_list(NULL, NULL, NULL), 0);
    assert_int_equal(ard_domain_unlink(domain), 0);
    assert_int_equal(ard_domain_unlink("bad.domain"), ARD_EINVAL);
}

static void test_domain_unlink_skips_and_names_attached(void **state)
{
    (void)state;
    ard_port *keep[2];
    keep[0] = ard_create("busy_a", ARD_OUT, 8, NULL);
    keep[1] = ard_create("busy_b", ARD_IN, 8, NULL);
    ard_port *gone = ard_create("free_c", ARD_OUT, 8, NULL);
    assert_non_null(keep[0]);
    assert_non_null(keep[1]);
    assert_non_null(gone);
    init_ok(NULL);
    ard_close(gone);
    assert_int_equal(ard_domain_unlink(NULL), ARD_EBUSY);
    const char *d = ard_errdetail();
    assert_non_null(strstr(d, "removed 1 object"));
    assert_non_null(strstr(d, "'busy_a'"));
    assert_non_null(strstr(d, "'busy_b'"));
    char buf[256] = "";
    assert_int_equal(ard_conn_list(NULL, collect_names, buf), 2);
    assert_string_equal(buf, "busy_a busy_b ");
    ard_fini();
    assert_int_equal(ard_domain_unlink(NULL), 2);
}

/* A child that attaches one port of connection "pc" under the program name `comm`, says so
 * on the pipe, and waits to be killed. */
static pid_t peer_child(const char *comm, const char *port, enum ard_dir dir)
{
    int pfd[2];
    assert_int_equal(pipe(pfd), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(pfd[0]);
        prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0); /* never outlive a failed test */
        prctl(PR_SET_NAME, comm, 0, 0, 0);
        ard_fini(); /* forget the parent's ports */
        ard_port *p = ard_create_on(port, "pc", dir, 8, "u64");
        char *argv[] = {"c", NULL};
        int argc = 1;
        if (p == NULL || ard_init(&argc, argv) != 0 || write(pfd[1], "r", 1) != 1)
            _exit(2);
        pause();
        _exit(0);
    }
    close(pfd[1]);
    char c;
    assert_int_equal(read(pfd[0], &c, 1), 1);
    close(pfd[0]);
    return pid;
}

static void kill_child(pid_t pid)
{
    kill(pid, SIGKILL);
    assert_int_equal(waitpid(pid, NULL, 0), pid);
}

static const struct ard_peer *find_peer(const struct ard_peer *v, int n, pid_t pid)
{
    for (int i = 0; i < n; i++)
        if (v[i].pid == pid)
            return &v[i];
    return NULL;
}

static void test_peers_lists_live_ports_writer_first(void **state)
{
    (void)state;
    int64_t t0 = ard_realtime_ns();
    pid_t r1 = peer_child("reader_one", "in1", ARD_IN);
    pid_t w = peer_child("the_writer", "out", ARD_OUT);
    pid_t r2 = peer_child("reader_two", "in2", ARD_IN);
    ard_port *self = ard_create_on("mine", "pc", ARD_IN, 8, "u64");
    assert_non_null(self);
    init_ok(NULL);
    int64_t t1 = ard_realtime_ns();

    struct ard_peer v[8];
    assert_int_equal(ard_conn_peers(NULL, "pc", v, 8), 4);
    assert_int_equal(v[0].pid, w);
    assert_int_equal(v[0].dir, ARD_OUT);
    assert_string_equal(v[0].program, "the_writer");
    assert_string_equal(v[0].port, "out");
    assert_in_range(v[0].attach_real_ns, t0, t1);
    const struct ard_peer *p = find_peer(v, 4, r1);
    assert_non_null(p);
    assert_int_equal(p->dir, ARD_IN);
    assert_string_equal(p->program, "reader_one");
    assert_string_equal(p->port, "in1");
    p = find_peer(v, 4, getpid());
    assert_non_null(p);
    assert_string_equal(p->port, "mine");
    assert_non_null(find_peer(v, 4, r2));
    struct ard_conn_stat st;
    assert_int_equal(ard_conn_stat(NULL, "pc", &st), 0);
    assert_int_equal(st.readers, 3);
    assert_int_equal(st.writer_pid, w);
    assert_int_equal(st.unlisted, 0);

    /* Fewer places than peers: the count is still the whole; the writer comes first. */
    assert_int_equal(ard_conn_peers(NULL, "pc", v, 1), 4);
    assert_int_equal(v[0].pid, w);
    assert_int_equal(ard_conn_peers(NULL, "pc", NULL, 0), 4);

    /* kill -9: gone from the list at once, nobody cleaned up. */
    kill_child(r1);
    assert_int_equal(ard_conn_peers(NULL, "pc", v, 8), 3);
    assert_null(find_peer(v, 3, r1));
    assert_int_equal(ard_conn_stat(NULL, "pc", &st), 0);
    assert_int_equal(st.readers, 2);
    kill_child(w);
    assert_int_equal(ard_conn_peers(NULL, "pc", v, 8), 2);
    assert_int_equal(v[0].dir, ARD_IN);
    assert_int_equal(v[1].dir, ARD_IN);
    assert_int_equal(ard_conn_stat(NULL, "pc", &st), 0);
    assert_int_equal(st.writer_pid, 0);

    /* A new writer takes a free entry (perhaps a dead one's) and is listed first. */
    ard_port *o = ard_create_on("neww", "pc", ARD_OUT, 8, "u64");
    assert_non_null(o);
    assert_int_equal(ard_conn_peers(NULL, "pc", v, 8), 3);
    assert_int_equal(v[0].pid, getpid());
    assert_string_equal(v[0].port, "neww");
    ard_close(o);
    ard_close(self);
    assert_int_equal(ard_conn_peers(NULL, "pc", v, 8), 1);
    assert_int_equal(v[0].pid, r2);
    kill_child(r2);
    assert_int_equal(ard_conn_peers(NULL, "pc", v, 8), 0);

    assert_int_equal(ard_conn_peers(NULL, "nosuch", v, 8), ARD_ENOENT);
    assert_int_equal(ard_conn_peers(NULL, "pc", NULL, 3), ARD_EINVAL);
}

static void test_peers_full_table_still_attaches_and_counts(void **state)
{
    (void)state;
    init_ok(NULL);
    enum { EXTRA = 6, TOTAL = 64 + EXTRA };
    ard_port *ports[TOTAL];
    for (int i = 0; i < TOTAL; i++) {
        char name[16];
        snprintf(name, sizeof name, "p%d", i);
        ports[i] = ard_create_on(name, "full", ARD_IN, 8, NULL);
        assert_non_null(ports[i]);
    }
    static struct ard_peer v[TOTAL];
    assert_int_equal(ard_conn_peers(NULL, "full", v, TOTAL), 64);
    struct ard_conn_stat st;
    assert_int_equal(ard_conn_stat(NULL, "full", &st), 0);
    assert_int_equal(st.unlisted, EXTRA);
    assert_int_equal(st.readers, TOTAL);
    /* Closing listed ports frees entries for newcomers. */
    for (int i = 0; i < 10; i++)
        ard_close(ports[i]);
    assert_int_equal(ard_conn_peers(NULL, "full", v, TOTAL), 54);
    ard_port *late = ard_create_on("late", "full", ARD_IN, 8, NULL);
    assert_non_null(late);
    assert_int_equal(ard_conn_peers(NULL, "full", v, TOTAL), 55);
    assert_int_equal(ard_conn_stat(NULL, "full", &st), 0);
    assert_int_equal(st.readers, TOTAL - 10 + 1);
}

#define T(f) cmocka_unit_test_teardown(f, teardown)

int main(void)
{
    snprintf(domain, sizeof domain, "t_conn_%d", (int)getpid());
    setenv("ARD_DOMAIN", domain, 1);
    unsetenv("ARD_SHM_MODE");
    const struct CMUnitTest tests[] = {
        T(test_stat_describes_connection),
        T(test_stat_shows_no_writer_after_kill),
        T(test_list_visits_in_name_order),
        T(test_list_without_descriptors_fails_cleanly),
        T(test_unlink_refuses_attached_connection),
        T(test_unlink_after_kill_of_attached_process),
        T(test_domain_unlink_counts_and_removes),
        T(test_domain_unlink_skips_and_names_attached),
        T(test_peers_lists_live_ports_writer_first),
        T(test_peers_full_table_still_attaches_and_counts),
    };
    return cmocka_run_group_tests_name("conn", tests, NULL, NULL);
}
