/*
 * ard_list_bench - how long `ard list` takes on a domain of N connections (default 1000),
 * next to `ls -ln` of a directory of N files of the same sizes in /dev/shm (the baseline,
 * measured in the same run). A child process holds every connection as a writer and has sent
 * 8 packets on each, so list reads real writers, rates and ages.
 *
 *   ard_list_bench [N] [RUNS] [OTHER]   prints the median and min wall time of each command
 *
 * OTHER: another `ard` binary (e.g. one built from an earlier commit) whose list commands are
 * measured in the same run, after this tree's, for a before/after comparison on one load.
 */
#include "ardnet.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef ARD_BIN
#define ARD_BIN "ard"
#endif

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Wall time of one run of argv with stdout to /dev/null, in ms. */
static double run(char *const argv[])
{
    int64_t t0 = ard_now_ns();
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open("/dev/null", O_WRONLY);
        dup2(fd, 1);
        execvp(argv[0], argv);
        _exit(127);
    }
    int st;
    waitpid(pid, &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "ard_list_bench: %s failed (status %d)\n", argv[0], st);
        exit(1);
    }
    return (double)(ard_now_ns() - t0) / 1e6;
}

static void measure(const char *label, char *const argv[], int runs)
{
    double *v = calloc((size_t)runs, sizeof *v);
    if (!v)
        exit(1);
    run(argv); /* warm-up: page cache, dentries */
    for (int i = 0; i < runs; i++)
        v[i] = run(argv);
    qsort(v, (size_t)runs, sizeof *v, cmp);
    printf("%-34s median %8.2f ms   min %8.2f ms\n", label, v[runs / 2], v[0]);
    free(v);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1000, runs = argc > 2 ? atoi(argv[2]) : 21;
    if (n < 1 || runs < 1)
        return 100;
    char domain[32], dir[64];
    snprintf(domain, sizeof domain, "bench%d", (int)getpid());
    snprintf(dir, sizeof dir, "/dev/shm/ard_list_bench.%d", (int)getpid());
    struct rlimit rl = {(rlim_t)n + 64, (rlim_t)n + 64};
    if (setrlimit(RLIMIT_NOFILE, &rl) < 0) {
        getrlimit(RLIMIT_NOFILE, &rl);
        if (rl.rlim_cur < (rlim_t)n + 64) {
            fprintf(stderr, "ard_list_bench: need %d open files (ulimit -n)\n", n + 64);
            return 111;
        }
    }
    int ready[2];
    if (pipe(ready) < 0)
        return 111;
    pid_t holder = fork();
    if (holder == 0) {
        close(ready[0]);
        if (ard_set_domain(domain) < 0)
            _exit(111);
        char *av[] = {"holder", NULL};
        int ac = 1;
        if (ard_init(&ac, av) < 0)
            _exit(111);
        double pkt[4] = {0};
        for (int i = 0; i < n; i++) {
            char name[32];
            snprintf(name, sizeof name, "c%04d", i);
            ard_port *p = ard_create(name, ARD_OUT, sizeof pkt, "x:f64[4]");
            if (!p) {
                fprintf(stderr, "holder: %s\n", ard_errdetail());
                _exit(111);
            }
            for (int k = 0; k < 8; k++)
                if (ard_send(p, pkt) < 0)
                    _exit(111);
        }
        if (write(ready[1], "r", 1) != 1)
            _exit(111);
        pause();
        _exit(0);
    }
    close(ready[1]);
    char c;
    if (read(ready[0], &c, 1) != 1) {
        fprintf(stderr, "ard_list_bench: the holder of the connections failed\n");
        return 111;
    }
    /* The baseline: as many files of the same size in a directory of /dev/shm. */
    struct stat sb;
    char path[128];
    snprintf(path, sizeof path, "/dev/shm/ard.%s.c0000", domain);
    if (stat(path, &sb) < 0 || mkdir(dir, 0700) < 0)
        return 111;
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/f%04d", dir, i);
        int fd = open(path, O_CREAT | O_WRONLY, 0600);
        if (fd < 0 || ftruncate(fd, sb.st_size) < 0)
            return 111;
        close(fd);
    }
    printf("%d connections (objects of %lld bytes), %d runs each\n", n, (long long)sb.st_size,
           runs);
    char *ls[] = {"ls", "-ln", dir, NULL};
    char dom_opt[48];
    snprintf(dom_opt, sizeof dom_opt, "--domain=%s", domain);
    char *list[] = {ARD_BIN, dom_opt, "list", NULL};
    char *json[] = {ARD_BIN, dom_opt, "list", "--json", NULL};
    char *lng[] = {ARD_BIN, dom_opt, "list", "-l", NULL};
    measure("baseline: ls -ln (same count)", ls, runs);
    measure("ard list", list, runs);
    measure("ard list --json", json, runs);
    measure("ard list -l (+ attached processes)", lng, runs);
    if (argc > 3) {
        list[0] = json[0] = lng[0] = argv[3];
        measure("other ard: ard list", list, runs);
        measure("other ard: ard list --json", json, runs);
        measure("other ard: ard list -l", lng, runs);
    }

    kill(holder, SIGTERM);
    waitpid(holder, NULL, 0);
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/f%04d", dir, i);
        unlink(path);
    }
    rmdir(dir);
    if (ard_domain_unlink(domain) < 0)
        fprintf(stderr, "ard_list_bench: %s\n", ard_errdetail());
    return 0;
}
