/*
 * test_realtime.c - the realtime discipline (DESIGN §3), proved:
 *  (a) after ard_init, send / rec / tryrec / rec_timed / poll / wait and the zero-copy calls
 *      (send_loan, send_commit, sent) allocate nothing, also when rec and wait sleep: malloc
 *      and friends are interposed in this binary and counted while armed;
 *  (b) ard_send and ard_send_commit make no system call when no reader is blocked; ard_send_loan,
 * ard_sent, ard_tryrec and ard_poll (and rec of a packet that is already there, and ard_wait
 * when a port has news or when it only looks) never do: a
 * seccomp filter turns every system call into SIGSYS, which is counted; positive controls show
 * that the detector sees the one futex wake a send, or a commit, makes when a reader sleeps in
 * rec.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/futex.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ardnet.h"

#define SIZE 1024
#define ROUNDS 10000

static char domain[64];

static int teardown(void **state)
{
    (void)state;
    ard_fini();
    if (ard_domain_unlink(domain) < 0)
        fprintf(stderr, "ard_domain_unlink: %s\n", ard_errdetail());
    return 0;
}

static void pattern(unsigned char *p, uint64_t v)
{
    for (size_t i = 0; i < SIZE; i++)
        p[i] = (unsigned char)(v * 31 + i);
    memcpy(p, &v, 8);
}

static uint64_t first_word(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* Wait until process `pid` sleeps in futex(2) (it is blocked in ard_rec). */
static bool wait_in_futex(pid_t pid)
{
    char path[64], buf[128];
    snprintf(path, sizeof path, "/proc/%d/syscall", (int)pid);
    for (int i = 0; i < 20000; i++) {
        int fd = open(path, O_RDONLY);
        if (fd < 0)
            return false;
        ssize_t n = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (n > 0) {
            buf[n] = '\0';
            /* "nr addr op ...": the library's own sleep is FUTEX_WAIT_BITSET on a shared
             * word; a private futex (a libc lock during start-up) is not it. */
            char *end;
            long nr = strtol(buf, &end, 10);
            strtoull(end, &end, 16);
            unsigned long op = strtoul(end, NULL, 16);
            if (nr == SYS_futex && op == FUTEX_WAIT_BITSET)
                return true;
        }
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    return false;
}

/* A reader in its own process: blocks in ard_rec on `conn`, exits 0 if it got `want`. */
static pid_t fork_blocked_reader(const char *conn, uint64_t want)
{
    fflush(stdout);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        ard_port *in = ard_create("in", ARD_IN, SIZE, NULL);
        char wire[128];
        snprintf(wire, sizeof wire, "in=%s", conn);
        char *argv[] = {"reader", "--ard", wire, NULL};
        int argc = 3;
        if (in == NULL || ard_init(&argc, argv) != 0)
            _exit(2);
        unsigned char buf[SIZE];
        int rc = ard_rec(in, buf);
        _exit(rc == 0 && first_word(buf) == want ? 0 : 1);
    }
    return pid;
}

/* ======================================================================================
 * (a) no allocation
 * ==================================================================================== */

#ifndef ARD_SANITIZED

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void *__libc_memalign(size_t align, size_t size);
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

void *aligned_alloc(size_t align, size_t size)
{
    if (armed)
        allocations++;
    return __libc_memalign(align, size);
}

int posix_memalign(void **out, size_t align, size_t size)
{
    if (armed)
        allocations++;
    void *p = __libc_memalign(align, size);
    if (p == NULL)
        return ENOMEM;
    *out = p;
    return 0;
}

void free(void *p)
{
    if (armed && p != NULL)
        frees++;
    __libc_free(p);
}

static void arm(void)
{
    allocations = frees = 0;
    armed = 1;
}

static void disarm(void)
{
    armed = 0;
}

static void test_counting_allocator_sees_allocations(void **state)
{
    (void)state;
    /* Control: the counters do see the library allocate (ard_create allocates a port). */
    arm();
    ard_port *p = ard_create("ctl", ARD_IN, 8, NULL);
    ard_close(p);
    char *volatile s = strdup("libc's internal calls are seen too");
    free(s);
    disarm();
    assert_true(allocations >= 2);
    assert_true(frees >= 2);
}

static void test_send_rec_tryrec_allocate_nothing_after_init(void **state)
{
    (void)state;
    /* Processes on the other side, started before this one declares any port. */
    int go[2];
    assert_int_equal(pipe(go), 0);
    fflush(stdout);
    pid_t writer = fork();
    assert_true(writer >= 0);
    if (writer == 0) {
        close(go[1]);
        ard_port *out = ard_create("late", ARD_OUT, SIZE, NULL);
        char *argv[] = {"writer", NULL};
        int argc = 1;
        if (out == NULL || ard_init(&argc, argv) != 0)
            _exit(2);
        char c;
        if (read(go[0], &c, 1) != 1)
            _exit(3);
        struct timespec ts = {0, 100000000};
        nanosleep(&ts, NULL);
        unsigned char pkt[SIZE];
        pattern(pkt, 77);
        _exit(ard_send(out, pkt) == 0 ? 0 : 1);
    }
    close(go[0]);
    pid_t reader = fork_blocked_reader("woken", 99);

    ard_port *out = ard_create("out", ARD_OUT, SIZE, NULL);
    ard_port *in = ard_create("in", ARD_IN, SIZE, NULL);
    ard_port *late = ard_create("late", ARD_IN, SIZE, NULL);
    ard_port *wake = ard_create("woken", ARD_OUT, SIZE, NULL);
    assert_non_null(out);
    assert_non_null(in);
    assert_non_null(late);
    assert_non_null(wake);
    char *argv[] = {"t", "--ard", "in=out", NULL};
    int argc = 3;
    assert_int_equal(ard_init(&argc, argv), 0);
    unsigned char pkt[SIZE], buf[SIZE];
    pattern(pkt, 1);

    arm();
    int bad = 0;
    ard_port *both[2] = {late, in};
    unsigned char ready[2];
    bad += ard_tryrec(in, buf) != ARD_ENODATA;
    bad += ard_rec_timed(in, buf, 0) != ARD_ETIMEDOUT;
    bad += ard_rec_timed(in, buf, 1000000) != ARD_ETIMEDOUT; /* sleeps in futex, times out */
    bad += ard_wait(both, 2, 0, ready) != ARD_ETIMEDOUT;
    bad += ard_wait(both, 2, 1000000, ready) != ARD_ETIMEDOUT; /* sleeps in futex_waitv */
    for (uint64_t i = 1; i <= 1000; i++) {
        pattern(pkt, i);
        bad += ard_send(out, pkt) != 0;
        bad += ard_poll(in) != 1;
        bad += ard_tryrec(in, buf) != 1;
        bad += ard_poll(in) != 0;
        bad += ard_tryrec(in, buf) != 0;
        bad += ard_send(out, pkt) != 0;
        bad += ard_rec(in, buf) != 0;
        bad += ard_send(out, pkt) != 0;
        bad += ard_rec_timed(in, buf, 1000000000) != 0;
        bad += ard_rec_timed(in, buf, 0) != ARD_ETIMEDOUT;
        struct ard_info info = ard_port_info(in);
        bad += info.seq != 3 * i;
        bad += ard_wait(both, 2, 0, ready) != ARD_ETIMEDOUT;
    }
    for (uint64_t i = 1; i <= 1000; i++) {
        bad += ard_send(out, pkt) != 0;
        bad += ard_wait(both, 2, -1, ready) != 1 || ready[0] || !ready[1];
        bad += ard_tryrec(in, buf) != 1;
    }
    /* the zero-copy calls */
    for (uint64_t i = 1; i <= 1000; i++) {
        unsigned char *slot = ard_send_loan(out);
        bad += slot == NULL;
        if (slot == NULL)
            break;
        pattern(slot, i);
        bad += ard_send_loan(out) != slot;
        bad += ard_sent(out, NULL) == NULL;
        bad += (i & 1) ? ard_send_commit(out) != 0 : ard_send_commit_stamped(out, 1, 2) != 0;
        bad += ard_tryrec(in, buf) != 1;
        bad += first_word(buf) != i;
        bad += ard_sent(out, NULL) != slot;
    }
    /* rec that really sleeps until another process sends. */
    bad += write(go[1], "g", 1) != 1;
    bad += ard_rec(late, buf) != 0;
    bad += first_word(buf) != 77;
    /* send that wakes a reader sleeping in another process. */
    bool blocked = wait_in_futex(reader);
    pattern(pkt, 99);
    bad += ard_send(wake, pkt) != 0;
    disarm();

    int st;
    assert_int_equal(waitpid(writer, &st, 0), writer);
    assert_int_equal(WEXITSTATUS(st), 0);
    assert_int_equal(waitpid(reader, &st, 0), reader);
    assert_int_equal(WEXITSTATUS(st), 0);
    close(go[1]);
    assert_true(blocked);
    assert_int_equal(bad, 0);
    if (allocations != 0 || frees != 0)
        fail_msg("realtime calls allocated %lu times and freed %lu times", allocations, frees);
}

#else /* ARD_SANITIZED */

static void test_send_rec_tryrec_allocate_nothing_after_init(void **state)
{
    (void)state;
    print_message("skipping: interposing malloc conflicts with AddressSanitizer's allocator; "
                  "this test runs in the normal build\n");
    skip();
}

#endif

/* ======================================================================================
 * (b) no system call, by seccomp
 * ==================================================================================== */

#if defined(__x86_64__)
#define AUDIT_ARCH_HERE AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define AUDIT_ARCH_HERE AUDIT_ARCH_AARCH64
#endif

static volatile sig_atomic_t trapped;
static volatile sig_atomic_t trapped_other; /* trapped calls other than futex */

static void on_sigsys(int sig, siginfo_t *si, void *ctx)
{
    (void)sig;
    (void)ctx;
    trapped++;
    if (si->si_syscall != SYS_futex)
        trapped_other++;
}

#ifdef AUDIT_ARCH_HERE
/* From here on every system call but rt_sigreturn and exit_group raises SIGSYS instead of
 * running. Only filtered_exit() may follow. */
static int trap_all_syscalls(void)
{
    struct sigaction sa = {.sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO};
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGSYS, &sa, NULL) < 0)
        return -1;
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_HERE, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_rt_sigreturn, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_exit_group, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
    };
    struct sock_fprog prog = {.len = sizeof f / sizeof f[0], .filter = f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        return -1;
    return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

static int exit_code(void)
{
    return trapped > 200 ? 200 : (int)trapped;
}

/* Exit under the filter. Not _exit(): a call to a noreturn function makes AddressSanitizer
 * run sigaltstack first, which the filter would trap. */
static void filtered_exit(int code)
{
    syscall(SYS_exit_group, code);
}

static void test_fast_paths_make_no_system_call(void **state)
{
    (void)state;
    fflush(stdout);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        ard_port *out = ard_create("sc", ARD_OUT, SIZE, NULL);
        ard_port *in = ard_create("sc_in", ARD_IN, SIZE, NULL);
        char *argv[] = {"t", "--ard", "sc_in=sc", NULL};
        int argc = 3;
        if (out == NULL || in == NULL || ard_init(&argc, argv) != 0)
            _exit(250);
        unsigned char pkt[SIZE], buf[SIZE];
        pattern(pkt, 1);
        /* Warm up every path once (lazy symbol binding may make calls). */
        int bad = ard_send(out, pkt) != 0;
        bad += ard_tryrec(in, buf) != 1;
        bad += ard_tryrec(in, buf) != 0;
        bad += ard_send(out, pkt) != 0;
        bad += ard_rec(in, buf) != 0;
        bad += ard_send(out, pkt) != 0;
        bad += ard_rec_timed(in, buf, 1000000000) != 0;
        bad += ard_poll(in) != 0;
        ard_port *one[1] = {in};
        unsigned char ready[1];
        bad += ard_wait(one, 1, 0, ready) != ARD_ETIMEDOUT;
        bad += ard_send(out, pkt) != 0;
        bad += ard_wait(one, 1, -1, ready) != 1 || ard_tryrec(in, buf) != 1;
        bad += ard_send_loan(out) == NULL || ard_sent(out, NULL) == NULL;
        bad += ard_send_commit(out) != 0 || ard_send_loan(out) == NULL;
        bad += ard_send_commit_stamped(out, 1, 2) != 0;
        (void)ard_port_info(in);
        if (bad || trap_all_syscalls() != 0)
            _exit(251);

        for (uint64_t i = 0; i < ROUNDS; i++) {
            pattern(pkt, i);
            bad += ard_send(out, pkt) != 0;
        }
        for (uint64_t i = 0; i < ROUNDS; i++)
            bad += ard_poll(in) != 1;
        for (uint64_t i = 0; i < ROUNDS; i++)
            bad += ard_tryrec(in, buf) != (i == 0 ? 1 : 0);
        for (uint64_t i = 0; i < ROUNDS; i++)
            bad += ard_poll(in) != 0;
        /* ard_wait that only looks, and one that finds news at once (timed and not). */
        for (uint64_t i = 0; i < ROUNDS; i++) {
            bad += ard_wait(one, 1, 0, ready) != ARD_ETIMEDOUT;
            bad += ard_send(out, pkt) != 0;
            bad += ard_wait(one, 1, (i & 1) ? -1 : 1000000000, ready) != 1 || ready[0] != 1;
            bad += ard_tryrec(in, buf) != 1;
        }
        for (uint64_t i = 0; i < ROUNDS; i++) {
            bad += ard_send(out, pkt) != 0;
            bad += ard_tryrec(in, buf) != 1;
            bad += ard_send(out, pkt) != 0;
            bad += ard_rec(in, buf) != 0; /* a new packet is there: no sleep */
            bad += ard_send(out, pkt) != 0;
            bad += ard_rec_timed(in, buf, 1000000000) != 0;
            bad += ard_tryrec(in, buf) != 0;
        }
        for (uint64_t i = 0; i < ROUNDS; i++) {
            unsigned char *slot = ard_send_loan(out);
            bad += slot == NULL || ard_send_loan(out) != slot;
            if (slot)
                pattern(slot, i);
            struct ard_info info;
            bad += ard_sent(out, &info) == NULL;
            bad += (i & 1) ? ard_send_commit(out) != 0 : ard_send_commit_stamped(out, 1, 2) != 0;
            bad += ard_sent(out, NULL) != slot;
            bad += ard_tryrec(in, buf) != 1;
        }
        filtered_exit(bad ? 252 : exit_code());
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    if (!WIFEXITED(st))
        fail_msg("child died by signal %d", WTERMSIG(st));
    int code = WEXITSTATUS(st);
    if (code >= 250)
        fail_msg("child failed to set up or a call returned a wrong code (%d)", code);
    if (code != 0)
        fail_msg("%d system calls on the fast paths (send with no reader blocked, tryrec, poll, "
                 "wait that finds news or only looks, rec "
                 "of a waiting packet)",
                 code);
}

static void one_wake_of_a_blocked_reader(bool commit)
{
    /* The writer takes the connection before the reader starts: a new writer wakes every
     * sleeper once, and a reader caught still inside that old sleep would look blocked
     * while its announcement is already gone. */
    int ready[2], pids[2];
    assert_int_equal(pipe(ready), 0);
    assert_int_equal(pipe(pids), 0);
    fflush(stdout);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        ard_port *out = ard_create("pc", ARD_OUT, SIZE, NULL);
        char *argv[] = {"t", NULL};
        int argc = 1;
        if (out == NULL || ard_init(&argc, argv) != 0)
            _exit(250);
        pid_t reader;
        if (write(ready[1], "r", 1) != 1 || read(pids[0], &reader, sizeof reader) != sizeof reader)
            _exit(250);
        if (!wait_in_futex(reader))
            _exit(251);
        unsigned char pkt[SIZE];
        pattern(pkt, 5);
        if (trap_all_syscalls() != 0)
            _exit(251);
        int bad;
        if (commit) {
            unsigned char *slot = ard_send_loan(out);
            if (slot != NULL)
                memcpy(slot, pkt, SIZE);
            bad = slot == NULL || ard_send_commit(out) != 0;
        } else {
            bad = ard_send(out, pkt) != 0;
        }
        /* The trapped wake did not run: exactly one call, and it was futex. */
        filtered_exit(bad ? 252 : trapped_other ? 100 + exit_code() : exit_code());
    }
    char r;
    assert_int_equal(read(ready[0], &r, 1), 1);
    pid_t reader = fork_blocked_reader("pc", 5);
    assert_int_equal(write(pids[1], &reader, sizeof reader), (ssize_t)sizeof reader);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    for (int i = 0; i < 2; i++) {
        close(ready[i]);
        close(pids[i]);
    }
    /* The wake never ran, so the reader still sleeps. */
    kill(reader, SIGKILL);
    waitpid(reader, NULL, 0);
    assert_true(WIFEXITED(st));
    int code = WEXITSTATUS(st);
    if (code >= 250)
        fail_msg("child failed to set up (%d)", code);
    if (code >= 100)
        fail_msg("%s made %d system calls, not all futex", commit ? "commit" : "send", code - 100);
    assert_int_equal(code, 1);
}

static void test_detector_sees_the_one_wake_of_a_blocked_reader(void **state)
{
    (void)state;
    one_wake_of_a_blocked_reader(false);
}

static void test_commit_makes_the_one_wake_of_a_blocked_reader(void **state)
{
    (void)state;
    one_wake_of_a_blocked_reader(true);
}

#else

static void test_fast_paths_make_no_system_call(void **state)
{
    (void)state;
    print_message("skipping: no seccomp architecture constant for this CPU\n");
    skip();
}

static void test_detector_sees_the_one_wake_of_a_blocked_reader(void **state)
{
    test_fast_paths_make_no_system_call(state);
}

static void test_commit_makes_the_one_wake_of_a_blocked_reader(void **state)
{
    test_fast_paths_make_no_system_call(state);
}

#endif

#define T(f) cmocka_unit_test_teardown(f, teardown)

int main(void)
{
    snprintf(domain, sizeof domain, "t_rt_%d", (int)getpid());
    setenv("ARD_DOMAIN", domain, 1);
    unsetenv("ARD_SPIN_NS");
    const struct CMUnitTest tests[] = {
#ifndef ARD_SANITIZED
        T(test_counting_allocator_sees_allocations),
#endif
        T(test_send_rec_tryrec_allocate_nothing_after_init),
        T(test_detector_sees_the_one_wake_of_a_blocked_reader),
        T(test_commit_makes_the_one_wake_of_a_blocked_reader),
        T(test_fast_paths_make_no_system_call),
    };
    return cmocka_run_group_tests_name("realtime", tests, NULL, NULL);
}
