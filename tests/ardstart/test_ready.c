/*
 * test_ready.c - readiness (src/lib/ready.c): ARD_READY_FD=FD:DEV:INO is written only when FD
 * is still the starter's pipe. A descriptor closed and reused for a connection's shared memory
 * or a regular file is left untouched; readiness is then simply not reported.
 *
 * Every case runs in a child process (ard_init is once per process); the child reports what
 * it saw through its exit status, the parent checks the effects on pipes and files.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ardnet.h"

static char domain[64];

#define READY_FD 3 /* where ardstart's readiness pipe usually lands */

static void set_ready_var(int fd, const struct stat *st)
{
    char v[80];
    snprintf(v, sizeof v, "%d:%ju:%ju", fd, (uintmax_t)st->st_dev, (uintmax_t)st->st_ino);
    setenv("ARD_READY_FD", v, 1);
}

/* The write end of a new pipe moved to READY_FD; its identity in *st, read end in *rd. */
static void ready_pipe(int *rd, struct stat *st)
{
    int p[2];
    assert_int_equal(pipe(p), 0);
    if (p[0] == READY_FD) { /* keep the read end out of the way */
        int r = dup(p[0]);
        assert_true(r > READY_FD);
        close(p[0]);
        p[0] = r;
    }
    if (p[1] != READY_FD) {
        assert_int_equal(dup2(p[1], READY_FD), READY_FD);
        close(p[1]);
    }
    *rd = p[0];
    assert_int_equal(fstat(READY_FD, st), 0);
}

/* In a child: create an IN port on connection `conn`, ard_init, and exit with
 * 10 + ard_init's result (so 10 is success) or 50 if ard_ready afterwards is not 0 or the
 * variable is still set. */
static void child_init(const char *conn)
{
    char wire[96];
    snprintf(wire, sizeof wire, "p=%s", conn);
    char *argv[] = {"blk", "--ard", wire, NULL};
    int argc = 3;
    if (!ard_create("p", ARD_IN, 8, "u64"))
        _exit(60);
    int rc = ard_init(&argc, argv);
    if (getenv("ARD_READY_FD") != NULL || ard_ready() != 0)
        _exit(50);
    _exit(10 + (rc < 0 ? -rc : rc));
}

static int run_child(void (*prepare)(void *), void *arg, const char *conn)
{
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        prepare(arg);
        child_init(conn);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    return WEXITSTATUS(st);
}

static size_t drain(int fd, char *buf, size_t len)
{
    int fl = fcntl(fd, F_GETFL);
    fcntl(fd, F_SETFL, fl | O_NONBLOCK);
    ssize_t n = read(fd, buf, len - 1);
    buf[n > 0 ? n : 0] = '\0';
    return n > 0 ? (size_t)n : 0;
}

/* ---- the pipe itself: the line is written, the descriptor closed ------------------------ */

struct pipe_case {
    int rd;
    struct stat st;
    const char *value; /* NULL: the right FD:DEV:INO */
    bool unset;        /* no variable at all */
};

static void prepare_pipe(void *arg)
{
    struct pipe_case *c = arg;
    if (c->unset)
        unsetenv("ARD_READY_FD");
    else if (c->value)
        setenv("ARD_READY_FD", c->value, 1);
    else
        set_ready_var(READY_FD, &c->st);
    close(c->rd);
}

static void test_ready_line_written_to_the_starters_pipe(void **state)
{
    (void)state;
    struct pipe_case c = {0};
    ready_pipe(&c.rd, &c.st);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        prepare_pipe(&c);
        char *argv[] = {"blk", NULL};
        int argc = 1;
        if (!ard_create("rd", ARD_OUT, 8, NULL) || ard_init(&argc, argv) != 0)
            _exit(1);
        /* Told once: the descriptor is closed and the variable gone. */
        _exit(getenv("ARD_READY_FD") == NULL && fcntl(READY_FD, F_GETFD) < 0 ? 0 : 2);
    }
    close(READY_FD);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    char buf[64], want[64];
    assert_true(drain(c.rd, buf, sizeof buf) > 0);
    snprintf(want, sizeof want, "ready %d\n", (int)pid);
    assert_string_equal(buf, want);
    close(c.rd);
}

static void test_no_variable_writes_nothing_to_an_inherited_pipe(void **state)
{
    (void)state;
    /* The pipe is there (inherited) but nobody named it: ard_init must not write to it. */
    struct pipe_case c = {.unset = true};
    ready_pipe(&c.rd, &c.st);
    int code = run_child(prepare_pipe, &c, "nv");
    close(READY_FD);
    assert_int_equal(code, 10);
    char buf[64];
    assert_int_equal(drain(c.rd, buf, sizeof buf), 0);
    close(c.rd);
}

static void test_old_plain_fd_form_is_refused_and_writes_nothing(void **state)
{
    (void)state;
    char plain[16];
    snprintf(plain, sizeof plain, "%d", READY_FD);
    const char *bad[] = {plain, "3:1", "3:1:2:4", "x:1:2", "3:1:2x", "-3:1:2", "", ":::"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct pipe_case c = {.value = bad[i]};
        ready_pipe(&c.rd, &c.st);
        int code = run_child(prepare_pipe, &c, "bad");
        close(READY_FD);
        /* "" is no variable at all; every other value is ARD_EINVAL from ard_init. */
        assert_int_equal(code, bad[i][0] ? 10 - ARD_EINVAL : 10);
        char buf[64];
        assert_int_equal(drain(c.rd, buf, sizeof buf), 0);
        close(c.rd);
    }
    /* The detail names the variable. */
    setenv("ARD_READY_FD", plain, 1);
    assert_int_equal(ard_ready(), ARD_EINVAL);
    assert_non_null(strstr(ard_errdetail(), "ARD_READY_FD"));
    assert_null(getenv("ARD_READY_FD"));
}

/* ---- the descriptor is no longer the pipe ---------------------------------------------- */

struct reuse_case {
    struct stat st; /* the pipe's identity, carried in the variable */
    const char *file;
};

/* fd 3 is the pipe, the variable names it; then fd 3 is closed (and maybe reopened onto
 * `file`) before ard_init, as a program that tidies its descriptors would. */
static void prepare_reuse(void *arg)
{
    struct reuse_case *c = arg;
    set_ready_var(READY_FD, &c->st);
    close(READY_FD);
    if (c->file) {
        int fd = open(c->file, O_RDWR);
        if (fd < 0)
            _exit(61);
        if (fd != READY_FD && (dup2(fd, READY_FD) != READY_FD || close(fd) < 0))
            _exit(62);
    }
}

static void snapshot(const char *file, char *buf, size_t len, size_t *n)
{
    int fd = open(file, O_RDONLY);
    assert_true(fd >= 0);
    ssize_t r = read(fd, buf, len);
    assert_true(r > 0);
    *n = (size_t)r;
    close(fd);
}

static void test_closed_descriptor_is_not_reported(void **state)
{
    (void)state;
    struct reuse_case c = {0};
    int rd;
    ready_pipe(&rd, &c.st);
    int code = run_child(prepare_reuse, &c, "closed");
    close(READY_FD);
    assert_int_equal(code, 10); /* ard_init succeeds; readiness is simply not reported */
    char buf[64];
    assert_int_equal(drain(rd, buf, sizeof buf), 0);
    close(rd);
}

static void test_descriptor_reused_for_a_connection_is_untouched(void **state)
{
    (void)state;
    /* A connection "victim" with a packet in it, made by another process. */
    fflush(NULL);
    pid_t maker = fork();
    assert_true(maker >= 0);
    if (maker == 0) {
        unsetenv("ARD_READY_FD");
        ard_port *w = ard_create("victim", ARD_OUT, 8, "u64");
        char *argv[] = {"t", NULL};
        int argc = 1;
        uint64_t v = 0x1122334455667788ull;
        _exit(w && ard_init(&argc, argv) == 0 && ard_send(w, &v) == 0 ? 0 : 1);
    }
    int mst;
    assert_int_equal(waitpid(maker, &mst, 0), maker);
    assert_int_equal(mst, 0);
    char file[160];
    snprintf(file, sizeof file, "/dev/shm/ard.%s.victim", domain);
    static char before[1 << 16], after[1 << 16];
    size_t nb, na;
    snapshot(file, before, sizeof before, &nb);

    struct reuse_case c = {.file = file};
    int rd;
    ready_pipe(&rd, &c.st);
    int code = run_child(prepare_reuse, &c, "other");
    close(READY_FD);
    assert_int_equal(code, 10);
    snapshot(file, after, sizeof after, &na);
    assert_int_equal(na, nb);
    assert_memory_equal(before, after, nb);
    char buf[64];
    assert_int_equal(drain(rd, buf, sizeof buf), 0);
    close(rd);
}

static void test_descriptor_reused_for_a_regular_file_is_untouched(void **state)
{
    (void)state;
    char file[] = "/tmp/ard_ready_file.XXXXXX";
    int fd = mkstemp(file);
    assert_true(fd >= 0);
    const char text[] = "calibration 1.0\n";
    assert_int_equal(write(fd, text, sizeof text - 1), (ssize_t)sizeof text - 1);
    close(fd);

    struct reuse_case c = {.file = file};
    int rd;
    ready_pipe(&rd, &c.st);
    int code = run_child(prepare_reuse, &c, "reg");
    close(READY_FD);
    assert_int_equal(code, 10);
    char got[64];
    size_t n;
    snapshot(file, got, sizeof got - 1, &n);
    got[n] = '\0';
    assert_string_equal(got, text);
    unlink(file);
    char buf[64];
    assert_int_equal(drain(rd, buf, sizeof buf), 0);
    close(rd);
}

static void test_another_pipe_on_the_descriptor_is_untouched(void **state)
{
    (void)state;
    /* The variable names pipe A; fd 3 is now pipe B (same kind, other inode). */
    struct reuse_case c = {0};
    int rd_a;
    ready_pipe(&rd_a, &c.st);
    close(READY_FD);
    int rd_b;
    struct stat st_b;
    ready_pipe(&rd_b, &st_b);
    assert_true(st_b.st_ino != c.st.st_ino);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        set_ready_var(READY_FD, &c.st);
        child_init("pb");
    }
    close(READY_FD);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_int_equal(WEXITSTATUS(st), 10);
    char buf[64];
    assert_int_equal(drain(rd_b, buf, sizeof buf), 0);
    close(rd_a);
    close(rd_b);
}

static int teardown(void **state)
{
    (void)state;
    unsetenv("ARD_READY_FD");
    const char *conns[] = {"rd", "nv", "bad", "closed", "victim", "other", "reg", "pb"};
    for (size_t i = 0; i < sizeof conns / sizeof conns[0]; i++) {
        char name[160];
        snprintf(name, sizeof name, "/ard.%s.%s", domain, conns[i]);
        shm_unlink(name);
    }
    return 0;
}

#define T(f) cmocka_unit_test_teardown(f, teardown)

int main(void)
{
    snprintf(domain, sizeof domain, "t_ready_%d", (int)getpid());
    setenv("ARD_DOMAIN", domain, 1);
    /* fd 3 must be free for the cases to place their pipe there. */
    close(READY_FD);
    const struct CMUnitTest tests[] = {
        T(test_ready_line_written_to_the_starters_pipe),
        T(test_no_variable_writes_nothing_to_an_inherited_pipe),
        T(test_old_plain_fd_form_is_refused_and_writes_nothing),
        T(test_closed_descriptor_is_not_reported),
        T(test_descriptor_reused_for_a_connection_is_untouched),
        T(test_descriptor_reused_for_a_regular_file_is_untouched),
        T(test_another_pipe_on_the_descriptor_is_untouched),
    };
    return cmocka_run_group_tests_name("ready", tests, NULL, NULL);
}
