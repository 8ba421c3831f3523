/*
 * test_threads.c - one connection used by several threads of one process: a writer, readers
 * that rec, tryrec and rec_timed, an observer that reads the connection's stat, and threads
 * that create and close ports meanwhile. Every packet a reader gets must be intact and newer
 * than its previous one. Built also with ThreadSanitizer (scripts/test.sh tsan), which checks
 * the library's in-process synchronisation: the port list under concurrent create/close, the
 * per-thread error details, the process-wide options (a build without the port-list mutex
 * fails it). TSan cannot judge the slot protocol itself: every port maps the object at its
 * own address, so TSan sees no shared address. That protocol is checked by the SPIN model
 * (tests/model) and the torn-packet stress test.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ardnet.h"

#define WORDS 128 /* 1 KiB packets */
#define END UINT64_MAX

#ifndef THREADS_PACKETS
#define THREADS_PACKETS 100000
#endif

static char domain[64];
static ard_port *writer, *readers[3];
static atomic_bool writer_done;

static void fill(uint64_t *p, uint64_t v)
{
    p[0] = v;
    for (size_t i = 1; i < WORDS; i++)
        p[i] = v * 0x9E3779B97F4A7C15ull + i;
}

static bool intact(const uint64_t *p)
{
    for (size_t i = 1; i < WORDS; i++)
        if (p[i] != p[0] * 0x9E3779B97F4A7C15ull + i)
            return false;
    return true;
}

static void *write_all(void *arg)
{
    (void)arg;
    uint64_t buf[WORDS];
    for (uint64_t v = 1; v <= THREADS_PACKETS; v++) {
        fill(buf, v);
        if (ard_send(writer, buf) != 0)
            return (void *)"send failed";
        if ((v & 1023) == 0)
            sched_yield(); /* let blocked readers run now and then */
    }
    fill(buf, END);
    atomic_store(&writer_done, true);
    return ard_send(writer, buf) == 0 ? NULL : (void *)"send failed";
}

struct reader_result {
    uint64_t got, torn, older;
};

static void *read_all(void *arg)
{
    int mode = (int)(intptr_t)arg;
    ard_port *in = readers[mode];
    struct reader_result *res = calloc(1, sizeof *res);
    uint64_t buf[WORDS], last = 0, last_seq = 0;
    for (;;) {
        int rc;
        if (mode == 0) {
            rc = ard_rec(in, buf);
        } else if (mode == 1) {
            rc = ard_tryrec(in, buf);
            if (rc == 0 || rc == ARD_ENODATA) {
                sched_yield();
                continue;
            }
            rc = rc == 1 ? 0 : rc;
        } else {
            rc = ard_rec_timed(in, buf, 10000000);
            if (rc == ARD_ETIMEDOUT)
                continue;
        }
        if (rc != 0)
            break;
        struct ard_info info = ard_port_info(in);
        if (!intact(buf))
            res->torn++;
        else if (buf[0] <= last || info.seq <= last_seq)
            res->older++;
        last = buf[0];
        last_seq = info.seq;
        res->got++;
        if (buf[0] == END)
            break;
    }
    return res;
}

/* Reads the connection's stat while packets fly: its seq must never go backwards. */
static void *observe(void *arg)
{
    (void)arg;
    uint64_t last = 0;
    while (!atomic_load(&writer_done)) {
        struct ard_conn_stat st;
        if (ard_conn_stat(domain, "tw", &st) != 0)
            return (void *)"stat failed";
        if (st.seq < last)
            return (void *)"stat seq went backwards";
        last = st.seq;
        sched_yield();
    }
    return NULL;
}

/* Creates and closes ports of its own while the others run (the port list is shared). */
static void *churn(void *arg)
{
    char name[32];
    for (int i = 0; i < 200; i++) {
        snprintf(name, sizeof name, "c%d_%d", (int)(intptr_t)arg, i);
        ard_port *p = ard_create(name, i % 2 ? ARD_IN : ARD_OUT, 64, "u64[8]");
        if (p == NULL)
            return (void *)"create failed";
        ard_close(p);
        if (ard_conn_unlink(domain, name) != 0)
            return (void *)"unlink failed";
    }
    return NULL;
}

static void test_threads_share_a_connection_safely(void **state)
{
    (void)state;
    writer = ard_create("tw", ARD_OUT, sizeof(uint64_t[WORDS]), "u64[128]");
    const char *names[] = {"tr0", "tr1", "tr2"};
    for (int i = 0; i < 3; i++)
        readers[i] = ard_create(names[i], ARD_IN, sizeof(uint64_t[WORDS]), "u64[128]");
    char *argv[] = {"t", "--ard", "tr0=tw", "--ard", "tr1=tw", "--ard", "tr2=tw", NULL};
    int argc = 7;
    if (ard_init(&argc, argv) != 0)
        fail_msg("ard_init: %s", ard_errdetail());

    pthread_t r[3], w, o, c[2];
    for (int i = 0; i < 3; i++)
        assert_int_equal(pthread_create(&r[i], NULL, read_all, (void *)(intptr_t)i), 0);
    assert_int_equal(pthread_create(&o, NULL, observe, NULL), 0);
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&c[i], NULL, churn, (void *)(intptr_t)i), 0);
    assert_int_equal(pthread_create(&w, NULL, write_all, NULL), 0);

    void *err;
    pthread_join(w, &err);
    if (err)
        fail_msg("writer: %s", (const char *)err);
    for (int i = 0; i < 2; i++) {
        pthread_join(c[i], &err);
        if (err)
            fail_msg("churn: %s: %s", (const char *)err, ard_errdetail());
    }
    pthread_join(o, &err);
    if (err)
        fail_msg("observer: %s", (const char *)err);
    for (int i = 0; i < 3; i++) {
        struct reader_result *res;
        pthread_join(r[i], (void **)&res);
        printf("reader %d: %llu packets, %llu torn, %llu older\n", i, (unsigned long long)res->got,
               (unsigned long long)res->torn, (unsigned long long)res->older);
        assert_int_equal(res->torn, 0);
        assert_int_equal(res->older, 0);
        assert_true(res->got >= 1); /* at least the END packet */
        free(res);
    }
}

/* ---- one thread waits on two connections (ard_wait) while two writer threads send ---------- */

#define WAIT_PACKETS (THREADS_PACKETS / 10)
static ard_port *wout[2], *win[2], *pollin;

static void *write_one(void *arg)
{
    int k = (int)(intptr_t)arg;
    uint64_t buf[WORDS];
    for (uint64_t v = 1; v <= WAIT_PACKETS; v++) {
        fill(buf, v == WAIT_PACKETS ? END : v);
        if (ard_send(wout[k], buf) != 0)
            return (void *)"send failed";
        if (v % 64 == 0)
            sched_yield();
    }
    return NULL;
}

static void *wait_both(void *arg)
{
    (void)arg;
    uint64_t buf[WORDS], last[2] = {0, 0};
    bool done[2] = {false, false};
    while (!done[0] || !done[1]) {
        unsigned char ready[2];
        int n = ard_wait(win, 2, 5000000000LL, ready);
        if (n <= 0)
            return (void *)"ard_wait failed or timed out";
        for (int k = 0; k < 2; k++) {
            if (!ready[k])
                continue;
            if (ard_tryrec(win[k], buf) != 1)
                return (void *)"ready port had nothing new";
            if (!intact(buf) || (buf[0] <= last[k] && buf[0] != END))
                return (void *)"torn or older packet";
            last[k] = buf[0];
            done[k] = buf[0] == END;
        }
    }
    return NULL;
}

static void *poll_one(void *arg)
{
    (void)arg;
    uint64_t buf[WORDS], last = 0;
    while (last != END) {
        int rc = ard_poll(pollin);
        if (rc < 0 && rc != ARD_ENODATA)
            return (void *)"ard_poll failed";
        if (rc == 1) {
            if (ard_tryrec(pollin, buf) != 1 || !intact(buf))
                return (void *)"poll said new, tryrec did not deliver";
            last = buf[0];
        } else
            sched_yield();
    }
    return NULL;
}

/* Creates and closes ports of its own while the waiter waits on others. */
static void *churn_while_waiting(void *arg)
{
    (void)arg;
    for (int i = 0; i < 100; i++) {
        ard_port *p = ard_create_on("wchurn", "ta", ARD_IN, sizeof(uint64_t[WORDS]), NULL);
        if (p == NULL)
            return (void *)"create failed";
        ard_close(p);
    }
    return NULL;
}

static void test_wait_on_two_connections_from_a_thread(void **state)
{
    (void)state;
    const char *conns[2] = {"ta", "tb"};
    char *argv[] = {"t", NULL};
    int argc = 1;
    if (ard_init(&argc, argv) != 0)
        fail_msg("ard_init: %s", ard_errdetail());
    for (int k = 0; k < 2; k++) {
        char o[8], i[8];
        snprintf(o, sizeof o, "wo%d", k);
        snprintf(i, sizeof i, "wi%d", k);
        wout[k] = ard_create_on(o, conns[k], ARD_OUT, sizeof(uint64_t[WORDS]), "u64[128]");
        win[k] = ard_create_on(i, conns[k], ARD_IN, sizeof(uint64_t[WORDS]), "u64[128]");
        assert_non_null(wout[k]);
        assert_non_null(win[k]);
    }
    pollin = ard_create_on("pi", "ta", ARD_IN, sizeof(uint64_t[WORDS]), NULL);
    assert_non_null(pollin);
    pthread_t wt, pt, ct, w[2];
    assert_int_equal(pthread_create(&wt, NULL, wait_both, NULL), 0);
    assert_int_equal(pthread_create(&pt, NULL, poll_one, NULL), 0);
    assert_int_equal(pthread_create(&ct, NULL, churn_while_waiting, NULL), 0);
    for (int k = 0; k < 2; k++)
        assert_int_equal(pthread_create(&w[k], NULL, write_one, (void *)(intptr_t)k), 0);
    void *err;
    pthread_t all[5] = {w[0], w[1], ct, wt, pt};
    const char *who[5] = {"writer a", "writer b", "churn", "waiter", "poller"};
    for (int i = 0; i < 5; i++) {
        pthread_join(all[i], &err);
        if (err)
            fail_msg("%s: %s", who[i], (const char *)err);
    }
}

/* ---- a port closed by one thread while another waits on it ------------------------------ */

#ifndef SYS_futex_waitv
#define SYS_futex_waitv 449
#endif

enum blocking_call { CALL_WAIT, CALL_REC, CALL_REC_TIMED };

struct blocked {
    enum blocking_call call;
    ard_port *ports[2]; /* ard_wait waits on both; rec on ports[1] */
    _Atomic long tid;
    int rc;
    char detail[512];
};

static void *block_on_ports(void *arg)
{
    struct blocked *b = arg;
    atomic_store(&b->tid, (long)syscall(SYS_gettid));
    uint64_t buf[WORDS];
    unsigned char ready[2];
    switch (b->call) {
    case CALL_WAIT:
        b->rc = ard_wait(b->ports, 2, -1, ready);
        break;
    case CALL_REC:
        b->rc = ard_rec(b->ports[1], buf);
        break;
    case CALL_REC_TIMED:
        b->rc = ard_rec_timed(b->ports[1], buf, 600000000000LL);
        break;
    }
    snprintf(b->detail, sizeof b->detail, "%s", ard_errdetail());
    return NULL;
}

/* True once thread `tid` (a process: pid, pid) sleeps in futex or futex_waitv: then it is
 * inside the library's call, past every check that comes before the sleep. */
static bool sleeps_in_futex(long pid, long tid)
{
    char path[96], buf[128];
    snprintf(path, sizeof path, "/proc/%ld/task/%ld/syscall", pid, tid);
    for (int i = 0; i < 20000; i++) {
        int fd = open(path, O_RDONLY);
        ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
        if (fd >= 0)
            close(fd);
        if (n > 0) {
            buf[n] = '\0';
            long nr = strtol(buf, NULL, 10);
            if (nr == SYS_futex || nr == SYS_futex_waitv)
                return true;
        }
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    return false;
}

/* A reader in another process on the same connection: blocked in ard_rec until `want`. */
static pid_t fork_reader(const char *conn, uint64_t want)
{
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        /* The library is initialised (inherited): the port attaches at once. Whatever is
         * already there is taken first, so that ard_rec really waits for news. */
        ard_port *in = ard_create_on("other", conn, ARD_IN, sizeof(uint64_t[WORDS]), NULL);
        uint64_t buf[WORDS];
        if (in == NULL || ard_tryrec(in, buf) < 0)
            _exit(2);
        _exit(ard_rec(in, buf) == 0 && buf[0] == want && intact(buf) ? 0 : 1);
    }
    return pid;
}

static void test_close_a_port_another_thread_waits_on(void **state)
{
    (void)state;
    char *argv[] = {"t", NULL};
    int argc = 1;
    if (ard_init(&argc, argv) != 0)
        fail_msg("ard_init: %s", ard_errdetail());
    ard_port *out = ard_create_on("cw_out", "cw", ARD_OUT, sizeof(uint64_t[WORDS]), NULL);
    ard_port *keep = ard_create_on("cw_keep", "cw_other", ARD_IN, sizeof(uint64_t[WORDS]), NULL);
    ard_port *keep_out =
        ard_create_on("cw_keep_out", "cw_other", ARD_OUT, sizeof(uint64_t[WORDS]), NULL);
    assert_non_null(out);
    assert_non_null(keep);
    assert_non_null(keep_out);
    uint64_t buf[WORDS], got[WORDS];
    fill(buf, 1);
    assert_int_equal(ard_send(out, buf), 0);
    /* Another process sleeps on the same connection's futex word all along. */
    pid_t other = fork_reader("cw", 777);
    assert_true(sleeps_in_futex((long)other, (long)other));

    static const char *const what[3] = {"ard_wait", "ard_rec", "ard_rec_timed"};
    for (int round = 0; round < 30; round++) {
        enum blocking_call call = (enum blocking_call)(round % 3);
        ard_port *in = ard_create_on("cw_in", "cw", ARD_IN, sizeof(uint64_t[WORDS]), NULL);
        assert_non_null(in);
        assert_int_equal(ard_tryrec(in, got), 1); /* nothing newer: the call will sleep */
        struct blocked b = {.call = call, .ports = {keep, in}};
        pthread_t t;
        assert_int_equal(pthread_create(&t, NULL, block_on_ports, &b), 0);
        while (atomic_load(&b.tid) == 0)
            sched_yield();
        if (!sleeps_in_futex((long)getpid(), atomic_load(&b.tid)))
            fail_msg("%s never went to sleep", what[call]);
        ard_close(in); /* returns once the waiter has left the call */
        pthread_join(t, NULL);
        if (b.rc != ARD_ESTATE || strstr(b.detail, "'cw_in'") == NULL ||
            strstr(b.detail, "closed") == NULL)
            fail_msg("round %d, %s: rc %d, detail '%s'", round, what[call], b.rc, b.detail);
    }
    /* The port waited on with the closed one is untouched. */
    assert_int_equal(ard_poll(keep), ARD_ENODATA);
    fill(buf, 5);
    assert_int_equal(ard_send(keep_out, buf), 0);
    unsigned char ready[1];
    assert_int_equal(ard_wait(&keep, 1, -1, ready), 1);
    assert_int_equal(ard_tryrec(keep, got), 1);
    assert_int_equal(got[0], 5);
    /* The other process was woken for nothing many times and kept waiting for news. */
    int st;
    assert_int_equal(waitpid(other, &st, WNOHANG), 0);
    fill(buf, 777);
    assert_int_equal(ard_send(out, buf), 0);
    assert_int_equal(waitpid(other, &st, 0), other);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
}

/* A process forks while one of its threads waits on a port: in the child nobody waits, so
 * the child's ard_close and ard_fini return (they would wait for ever for the parent's
 * waiter if the count came along). The parent's waiter is not disturbed. */
static void test_child_of_fork_closes_ports_a_parent_thread_waits_on(void **state)
{
    (void)state;
    char *argv[] = {"t", NULL};
    int argc = 1;
    if (ard_init(&argc, argv) != 0)
        fail_msg("ard_init: %s", ard_errdetail());
    ard_port *out = ard_create_on("fk_out", "fk", ARD_OUT, sizeof(uint64_t[WORDS]), NULL);
    ard_port *in = ard_create_on("fk_in", "fk", ARD_IN, sizeof(uint64_t[WORDS]), NULL);
    ard_port *in2 = ard_create_on("fk_in2", "fk2", ARD_IN, sizeof(uint64_t[WORDS]), NULL);
    assert_non_null(out);
    assert_non_null(in);
    assert_non_null(in2);
    struct blocked b = {.call = CALL_WAIT, .ports = {in2, in}};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, block_on_ports, &b), 0);
    while (atomic_load(&b.tid) == 0)
        sched_yield();
    assert_true(sleeps_in_futex((long)getpid(), atomic_load(&b.tid)));
    fflush(NULL);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        ard_close(in);
        ard_fini();
        _exit(0);
    }
    /* A hang, not a slow child, is what this looks for: the bound is generous. */
    int st = 0;
    pid_t done = 0;
    for (int i = 0; i < 60000 && done == 0; i++) {
        done = waitpid(child, &st, WNOHANG);
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    if (done != child) {
        kill(child, SIGKILL);
        waitpid(child, NULL, 0);
        fail_msg("the child's ard_close / ard_fini did not return within 60 s");
    }
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    /* The parent's thread still waits, and gets the next packet. */
    assert_true(sleeps_in_futex((long)getpid(), atomic_load(&b.tid)));
    uint64_t buf[WORDS];
    fill(buf, 9);
    assert_int_equal(ard_send(out, buf), 0);
    pthread_join(t, NULL);
    assert_int_equal(b.rc, 1);
}

static int teardown(void **state)
{
    (void)state;
    ard_fini();
    if (ard_domain_unlink(domain) < 0)
        fprintf(stderr, "ard_domain_unlink: %s\n", ard_errdetail());
    return 0;
}

int main(void)
{
    snprintf(domain, sizeof domain, "t_threads_%d", (int)getpid());
    setenv("ARD_DOMAIN", domain, 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_threads_share_a_connection_safely, teardown),
        cmocka_unit_test_teardown(test_wait_on_two_connections_from_a_thread, teardown),
        cmocka_unit_test_teardown(test_close_a_port_another_thread_waits_on, teardown),
        cmocka_unit_test_teardown(test_child_of_fork_closes_ports_a_parent_thread_waits_on,
                                  teardown),
    };
    return cmocka_run_group_tests_name("threads", tests, NULL, NULL);
}
