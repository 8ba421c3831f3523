/*
 * ardstart_bench - time to start N local blocks with readiness and to stop them again:
 *   baseline   fork/exec each block with a readiness pipe, wait for "ready", then
 *              SIGTERM + waitpid each (the floor: process start + ard_init, no books)
 *   sequential ardstart --wait for each block in turn (how a startup script starts a level),
 *              then one ardkill of the whole domain
 *   parallel   N ardstart --wait at once (a script that starts a level in the background),
 *              then one ardkill
 * Prints the median over the rounds, and the CPU time (user + system) that all processes of
 * a row took: the bench is their subreaper, so the detached supervisors and the blocks they
 * reaped are counted too. CPU time moves less than wall time when other jobs load the
 * machine. Not a test: it asserts nothing about time.
 *
 *   ardstart_bench [--blocks N] [--rounds R] [--block PATH] [--books-in DIR]
 *
 * The books go to a new directory in DIR (default /tmp): the file system they are on counts
 * (creating a file on ext4 costs more than on tmpfs, where /run usually is).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static const char *ardstart = ARDSTART_BIN, *ardkill = ARDKILL_BIN, *block = BLOCK_BIN;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static pid_t spawn(char *const argv[], const posix_spawn_file_actions_t *fa)
{
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], fa, NULL, argv, environ);
    if (rc != 0) {
        fprintf(stderr, "ardstart_bench: cannot run %s: %s\n", argv[0], strerror(rc));
        exit(111);
    }
    return pid;
}

static void must_succeed(pid_t pid, const char *what)
{
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "ardstart_bench: %s failed (status 0x%x)\n", what, st);
        exit(1);
    }
}

/* CPU time (ms) of all reaped children so far; the orphans that came to us are reaped first. */
static double children_cpu_ms(void)
{
    while (waitpid(-1, NULL, WNOHANG) > 0) {
    }
    struct rusage ru;
    getrusage(RUSAGE_CHILDREN, &ru);
    return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
           (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

/* The supervisors outlive ardkill by a moment (they record how their command ended): wait
 * until every one of them has come back to us, so that its CPU time is counted. */
static void reap_all(void)
{
    for (int i = 0; i < 5000; i++) {
        pid_t w = waitpid(-1, NULL, WNOHANG);
        if (w < 0 && errno == ECHILD)
            return;
        if (w == 0)
            usleep(1000);
    }
}

static void conn_arg(char *buf, size_t len, int i)
{
    snprintf(buf, len, "ref=b%d", i);
}

static void baseline(int n, double *ready, double *stopped)
{
    pid_t *pids = calloc((size_t)n, sizeof *pids);
    double t0 = now_ms();
    for (int i = 0; i < n; i++) {
        int p[2];
        if (pipe(p) < 0)
            exit(111);
        fcntl(p[0], F_SETFD, FD_CLOEXEC);
        char fd[80], conn[32];
        struct stat st;
        if (fstat(p[1], &st) < 0)
            exit(111);
        /* The protocol ardstart uses: descriptor, device and inode of the pipe. */
        snprintf(fd, sizeof fd, "%d:%ju:%ju", p[1], (uintmax_t)st.st_dev, (uintmax_t)st.st_ino);
        setenv("ARD_READY_FD", fd, 1);
        conn_arg(conn, sizeof conn, i);
        char *argv[] = {(char *)block, "--rate", "10", "--ard", conn, NULL};
        pids[i] = spawn(argv, NULL);
        close(p[1]);
        char line[64];
        ssize_t r = read(p[0], line, sizeof line);
        close(p[0]);
        if (r <= 0 || strncmp(line, "ready", 5) != 0) {
            fprintf(stderr, "ardstart_bench: baseline block %d never got ready\n", i);
            exit(1);
        }
    }
    unsetenv("ARD_READY_FD");
    *ready = now_ms() - t0;
    t0 = now_ms();
    for (int i = n - 1; i >= 0; i--) {
        kill(pids[i], SIGTERM);
        waitpid(pids[i], NULL, 0);
    }
    *stopped = now_ms() - t0;
    free(pids);
}

static void with_ardstart(int n, int parallel, double *ready, double *stopped)
{
    pid_t *pids = calloc((size_t)n, sizeof *pids);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    double t0 = now_ms();
    for (int i = 0; i < n; i++) {
        char name[32], conn[32];
        snprintf(name, sizeof name, "b%d", i);
        conn_arg(conn, sizeof conn, i);
        char *argv[] = {(char *)ardstart, "--wait=30", "-n",    name, "--", (char *)block,
                        "--rate",         "10",        "--ard", conn, NULL};
        pids[i] = spawn(argv, &fa);
        if (!parallel)
            must_succeed(pids[i], "ardstart");
    }
    if (parallel)
        for (int i = 0; i < n; i++)
            must_succeed(pids[i], "ardstart");
    *ready = now_ms() - t0;
    t0 = now_ms();
    char *argv[] = {(char *)ardkill, "--grace=2", NULL};
    must_succeed(spawn(argv, &fa), "ardkill");
    *stopped = now_ms() - t0;
    posix_spawn_file_actions_destroy(&fa);
    free(pids);
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
    int n = 100, rounds = 3;
    const char *books_in = "/tmp";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--blocks") && i + 1 < argc)
            n = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--block") && i + 1 < argc)
            block = argv[++i];
        else if (!strcmp(argv[i], "--books-in") && i + 1 < argc)
            books_in = argv[++i];
        else {
            fprintf(stderr, "usage: ardstart_bench [--blocks N] [--rounds R] [--block PATH] "
                            "[--books-in DIR]\n");
            return 100;
        }
    }
    if (n < 1 || rounds < 1 || rounds > 50)
        return 100;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/ardstart_bench.XXXXXX", books_in);
    if (!mkdtemp(dir)) {
        fprintf(stderr, "ardstart_bench: cannot create a directory in %s: %s\n", books_in,
                strerror(errno));
        return 111;
    }
    char domain[64];
    snprintf(domain, sizeof domain, "bench_as_%ld", (long)getpid());
    setenv("ARD_BOOKS_DIR", dir, 1);
    setenv("ARD_DOMAIN", domain, 1);
    unsetenv("ARD_PATH");

    /* Detached supervisors come to us when their ardstart exits: their CPU time counts. */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    double r[3][50], s[3][50], c[3][50];
    for (int k = 0; k < rounds; k++) {
        for (int row = 0; row < 3; row++) {
            double c0 = children_cpu_ms();
            if (row == 0)
                baseline(n, &r[row][k], &s[row][k]);
            else
                with_ardstart(n, row == 2, &r[row][k], &s[row][k]);
            reap_all();
            c[row][k] = children_cpu_ms() - c0;
        }
        fprintf(stderr,
                "round %d: baseline %.0f/%.0f ms (cpu %.0f), sequential %.0f/%.0f ms (cpu %.0f, "
                "x%.2f/x%.2f), parallel %.0f/%.0f ms (cpu %.0f, x%.2f/x%.2f)\n",
                k + 1, r[0][k], s[0][k], c[0][k], r[1][k], s[1][k], c[1][k], r[1][k] / r[0][k],
                s[1][k] / s[0][k], r[2][k], s[2][k], c[2][k], r[2][k] / r[0][k], s[2][k] / s[0][k]);
    }
    printf("ardstart_bench: %d blocks (%s --rate 10), books in %s, median of %d rounds\n", n, block,
           books_in, rounds);
    printf("%-44s %12s %12s %12s\n", "", "all ready", "all stopped", "cpu time");
    const char *names[] = {"baseline: fork/exec + readiness pipe, kill",
                           "ardstart --wait one after another, ardkill",
                           "ardstart --wait all at once, ardkill"};
    for (int i = 0; i < 3; i++)
        printf("%-44s %9.0f ms %9.0f ms %9.0f ms\n", names[i], median(r[i], rounds),
               median(s[i], rounds), median(c[i], rounds));
    char cmd[sizeof dir + 200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'; rm -f /dev/shm/ard.%s.*", dir, domain);
    return system(cmd) == 0 ? 0 : 111;
}
