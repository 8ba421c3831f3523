/*
 * test_segment.c - the shared-memory object's life: a creator killed at every system call of
 * its initialisation leaves nothing that needs manual clean-up.
 *
 * The creator runs under ptrace; the test stops it at the exit of its k-th system call from
 * the first ftruncate on (k = 0, 1, 2, ...) and kills it there with SIGKILL, until a creator
 * runs to the end. After each kill the next writer and reader attach, exchange a whole packet,
 * and the object can be removed: no "stale object, remove it" error, no hang.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "ardnet.h"
#include "ardnet_view.h"
#include "testutil.h"

static char domain[64];

/* Fork a creator of connection "born" and kill it at the exit of its k-th system call counted
 * from the first ftruncate. Returns true if it was killed, false if it finished first. */
static bool kill_creator_at(int k)
{
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0)
            _exit(3);
        raise(SIGSTOP);
        ard_port *p = ard_create("born", ARD_OUT, 64, "u64[8]");
        _exit(p == NULL ? 2 : 0);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSTOPPED(status));
    assert_int_equal(ptrace(PTRACE_SETOPTIONS, pid, NULL,
                            (void *)(long)(PTRACE_O_TRACESYSGOOD | PTRACE_O_EXITKILL)),
                     0);
    int seen = -1, sig = 0;
    for (;;) {
        assert_int_equal(ptrace(PTRACE_SYSCALL, pid, NULL, (void *)(long)sig), 0);
        sig = 0;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        if (WIFEXITED(status)) {
            if (WEXITSTATUS(status) != 0)
                fail_msg("creator failed with status %d", WEXITSTATUS(status));
            return false;
        }
        assert_true(WIFSTOPPED(status));
        if (WSTOPSIG(status) != (SIGTRAP | 0x80)) {
            sig = WSTOPSIG(status); /* an ordinary signal: deliver it */
            continue;
        }
        struct __ptrace_syscall_info info;
        assert_true(ptrace(PTRACE_GET_SYSCALL_INFO, pid, (void *)sizeof info, &info) > 0);
        if (info.op == PTRACE_SYSCALL_INFO_ENTRY && seen < 0 && info.entry.nr == SYS_ftruncate)
            seen = 0;
        else if (info.op == PTRACE_SYSCALL_INFO_EXIT && seen >= 0 && seen++ == k) {
            kill(pid, SIGKILL);
            assert_int_equal(waitpid(pid, &status, 0), pid);
            assert_true(WIFSIGNALED(status));
            return true;
        }
    }
}

static void test_creator_killed_during_init_leaves_nothing_to_clean(void **state)
{
    (void)state;
    int argc = 1;
    char *argv[] = {"t", NULL};
    assert_int_equal(ard_init(&argc, argv), 0);
    int kills = 0;
    for (int k = 0; k < 100; k++) {
        bool killed = kill_creator_at(k);
        /* Whatever the creator left: the next writer and reader just work. */
        ard_port *w = ard_create("born", ARD_OUT, 64, "u64[8]");
        if (w == NULL)
            fail_msg("after a kill at system call %d of the creator: %s", k, ard_errdetail());
        ard_port *r = ard_create_on("reader", "born", ARD_IN, 0, NULL);
        if (r == NULL)
            fail_msg("reader after a kill at system call %d: %s", k, ard_errdetail());
        uint64_t out[8], in[8];
        for (int i = 0; i < 8; i++)
            out[i] = (uint64_t)k * 100 + (uint64_t)i;
        assert_int_equal(ard_send(w, out), 0);
        memset(in, 0, sizeof in);
        assert_int_equal(ard_tryrec(r, in), 1);
        assert_memory_equal(in, out, sizeof out);
        ard_close(w);
        ard_close(r);
        assert_int_equal(ard_conn_unlink(NULL, "born"), 0);
        if (!killed)
            break;
        kills++;
    }
    /* At least ftruncate(0), the marker, fallocate(size), the header's mmap: every step of
     * initialisation was interrupted once. */
    assert_true(kills >= 4);
    printf("creator killed at %d system calls of its initialisation and attach\n", kills);
}

/* A creator stopped (not killed) half-way holds the init lock: others wait, boundedly, and
 * proceed when it continues. */
static void test_stopped_creator_then_continued(void **state)
{
    (void)state;
    int argc = 1;
    char *argv[] = {"t", NULL};
    assert_int_equal(ard_init(&argc, argv), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0)
            _exit(3);
        raise(SIGSTOP);
        ard_port *p = ard_create("held", ARD_OUT, 8, "u64");
        uint64_t v = 77;
        _exit(p != NULL && ard_send(p, &v) == 0 ? 0 : 2);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_int_equal(ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *)(long)PTRACE_O_TRACESYSGOOD), 0);
    /* Run to the exit of the fallocate (the object has its length, every page reserved, no
     * header yet). */
    int ft = 0;
    for (;;) {
        assert_int_equal(ptrace(PTRACE_SYSCALL, pid, NULL, NULL), 0);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFSTOPPED(status));
        struct __ptrace_syscall_info info;
        assert_true(ptrace(PTRACE_GET_SYSCALL_INFO, pid, (void *)sizeof info, &info) > 0);
        if (info.op == PTRACE_SYSCALL_INFO_ENTRY && info.entry.nr == SYS_fallocate)
            ft++;
        if (info.op == PTRACE_SYSCALL_INFO_EXIT && ft == 1)
            break;
    }
    /* Meanwhile a stat says what it is, instead of calling it foreign. */
    struct ard_conn_stat st;
    assert_int_equal(ard_conn_stat(NULL, "held", &st), ARD_ESTALE);
    ASSERT_CONTAINS(ard_errdetail(), "being created");
    assert_int_equal(ptrace(PTRACE_DETACH, pid, NULL, NULL), 0);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    ard_port *r = ard_create("held", ARD_IN, 8, "u64");
    assert_non_null(r);
    uint64_t v = 0;
    assert_int_equal(ard_tryrec(r, &v), 1);
    assert_int_equal(v, 77);
}

static void shm_path(char *buf, size_t n, const char *conn)
{
    snprintf(buf, n, "/dev/shm/ard.%s.%s", domain, conn);
}

/* Bytes of the object not backed by memory (tmpfs counts a page reserved by fallocate in
 * st_blocks, written or not). */
static off_t unbacked(const char *conn)
{
    char path[256];
    shm_path(path, sizeof path, conn);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    off_t have = (off_t)st.st_blocks * 512;
    return have >= st.st_size ? 0 : st.st_size - have;
}

/* Rewrite connection `conn` as an older ardnet or a `truncate` by hand would leave it: the same
 * header, the same length, but only its first pages backed by memory. */
static void make_sparse(const char *conn)
{
    char path[256];
    shm_path(path, sizeof path, conn);
    int fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    static char head[16384];
    assert_int_equal(pread(fd, head, sizeof head, 0), (ssize_t)sizeof head);
    assert_int_equal(ftruncate(fd, 0), 0);
    assert_int_equal(pwrite(fd, head, sizeof head, 0), (ssize_t)sizeof head);
    assert_int_equal(ftruncate(fd, st.st_size), 0);
    close(fd);
    assert_true(unbacked(conn) > 0);
}

/* A sparse object is reserved whole before anyone maps it: by a read-write attach, and by a
 * read-only view (through a read-write descriptor of the same object); its header and its
 * last value are kept. */
static void test_sparse_object_is_reserved_at_attach(void **state)
{
    (void)state;
    int argc = 1;
    char *argv[] = {"t", NULL};
    assert_int_equal(ard_init(&argc, argv), 0);
    ard_port *w = ard_create("sparse", ARD_OUT, 65536, NULL);
    assert_non_null(w);
    static uint8_t out[65536], in[65536];
    memset(out, 0x5a, sizeof out);
    assert_int_equal(ard_send(w, out), 0);
    ard_close(w);
    /* A fresh create is reserved whole. */
    assert_int_equal(unbacked("sparse"), 0);

    make_sparse("sparse");
    ard_view *v = NULL;
    assert_int_equal(ard_view_open(NULL, "sparse", &v), 0);
    assert_int_equal(unbacked("sparse"), 0);
    ard_view_close(v);

    make_sparse("sparse");
    ard_port *r = ard_create_on("reader", "sparse", ARD_IN, 0, NULL);
    if (r == NULL)
        fail_msg("attach to a sparse object: %s", ard_errdetail());
    assert_int_equal(unbacked("sparse"), 0);
    /* The rewritten object lost its slots (zeros): nothing valid to read, and no fault. */
    assert_true(ard_tryrec(r, in) <= 0);
    ard_close(r);
}

/* A create that cannot get its space fails naming the bytes needed and free, and leaves no
 * object behind. RLIMIT_FSIZE makes tmpfs refuse the reservation (EFBIG) without root. */
static void test_failed_create_leaves_nothing(void **state)
{
    (void)state;
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl = {65536, 65536};
        if (setrlimit(RLIMIT_FSIZE, &rl) < 0)
            _exit(3);
        int argc = 1;
        char *argv[] = {"t", NULL};
        if (ard_init(&argc, argv) < 0)
            _exit(4);
        ard_port *p = ard_create("toobig", ARD_OUT, 1 << 20, NULL);
        if (p != NULL)
            _exit(5);
        if (ard_lasterror() != ARD_ENOMEM)
            _exit(6);
        const char *d = ard_errdetail();
        fprintf(stderr, "refused as expected: %s\n", d);
        if (strstr(d, "'toobig'") == NULL || strstr(d, "needs ") == NULL ||
            strstr(d, "bytes are free") == NULL)
            _exit(7);
        /* A small one still fits. */
        ard_port *q = ard_create("small", ARD_OUT, 64, NULL);
        _exit(q != NULL ? 0 : 8);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    char path[256];
    shm_path(path, sizeof path, "toobig");
    struct stat st;
    assert_int_equal(stat(path, &st), -1);
    assert_int_equal(errno, ENOENT);
    shm_path(path, sizeof path, "small");
    assert_int_equal(stat(path, &st), 0);
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
    snprintf(domain, sizeof domain, "t_seg_%d", (int)getpid());
    setenv("ARD_DOMAIN", domain, 1);
    unsetenv("ARD_SHM_MODE");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_creator_killed_during_init_leaves_nothing_to_clean,
                                  teardown),
        cmocka_unit_test_teardown(test_stopped_creator_then_continued, teardown),
        cmocka_unit_test_teardown(test_sparse_object_is_reserved_at_attach, teardown),
        cmocka_unit_test_teardown(test_failed_create_leaves_nothing, teardown),
    };
    return cmocka_run_group_tests_name("segment", tests, NULL, NULL);
}
