/* record_bench.c - cost of `ard record` against a plain copy to a file, in one run.
 *
 *   record_bench ARD [SECONDS [DIR]]
 *
 * A writer process sends 40 connections of 1 KiB (f64[128]) and one of 64 KiB (f64[8192]),
 * each at 1 kHz. For SECONDS (default 60) each, one after the other on the same writer:
 *   baseline  a plain program: one IN port per connection, polled every 500 us with
 *             ard_tryrec, each new packet appended to a buffer written to a file with write()
 *             (1 MiB at a time); packets it did not see are counted from ard_port_info skipped
 *   record    `ard record -o FILE` (polling every 500 us, chunks of 1 MiB, a writer thread)
 *   no-crc    `ard record --no-crc`
 *   zstd      `ard record --compress zstd`
 * and prints CPU (user+system of the whole process over wall time, % of one core), bytes/s
 * written, packets and missed packets, and CPU milliseconds per megabyte of packets taken
 * (the comparison that holds when a busy host keeps the writer below its rate). Then the cost per
 * packet of `ard play --rate 1000` (CPU time over packets) and of `ard export --csv` of one 1 KiB
 * connection (all 128 columns) and of `ard info`. Files go to DIR (default: /tmp). */
#include "ardnet.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NSMALL 40

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
    (void)sig;
    stop = 1;
}

static int writer(void)
{
    ard_port *p[NSMALL + 1];
    char name[32];
    for (int i = 0; i < NSMALL; i++) {
        snprintf(name, sizeof name, "small%02d", i);
        p[i] = ard_create(name, ARD_OUT, 1024, "v:f64[128]");
    }
    p[NSMALL] = ard_create("big", ARD_OUT, 65536, "v:f64[8192]");
    int ac = 1;
    char *av[] = {"writer", NULL};
    if (ard_init(&ac, av) < 0) {
        fprintf(stderr, "writer: %s\n", ard_errdetail());
        return 111;
    }
    double *buf = calloc(8192, sizeof *buf);
    ard_period per;
    if (!buf || ard_period_init(&per, 1000000) < 0)
        return 111;
    signal(SIGTERM, on_term);
    for (uint64_t k = 0; !stop; k++) {
        for (int i = 0; i <= NSMALL; i++) {
            buf[0] = (double)k;
            buf[1] = i;
            if (ard_send(p[i], buf) < 0)
                return 111;
        }
        ard_period_wait(&per);
    }
    return 0;
}

static int baseline(const char *path, double secs)
{
    ard_port *p[NSMALL + 1];
    char name[32];
    for (int i = 0; i <= NSMALL; i++) {
        if (i < NSMALL)
            snprintf(name, sizeof name, "small%02d", i);
        else
            snprintf(name, sizeof name, "big");
        p[i] = ard_create(name, ARD_IN, 0, NULL);
    }
    int ac = 1;
    char *av[] = {"baseline", NULL};
    if (ard_init(&ac, av) < 0) {
        fprintf(stderr, "baseline: %s\n", ard_errdetail());
        return 111;
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    size_t cap = 1 << 20, len = 0;
    char *out = malloc(cap + 65536);
    if (fd < 0 || !out)
        return 111;
    uint64_t missed = 0, got = 0;
    int64_t end = ard_now_ns() + (int64_t)(secs * 1e9);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    while (ard_now_ns() < end) {
        for (int i = 0; i <= NSMALL; i++) {
            int r = ard_tryrec(p[i], out + len);
            if (r == 1) {
                len += ard_port_size(p[i]);
                missed += ard_port_info(p[i]).skipped;
                got++;
            }
            if (len >= cap) {
                if (write(fd, out, len) != (ssize_t)len)
                    return 111;
                len = 0;
            }
        }
        ts.tv_nsec += 500000;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_nsec -= 1000000000;
            ts.tv_sec++;
        }
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
    }
    if (len && write(fd, out, len) != (ssize_t)len)
        return 111;
    close(fd);
    fprintf(stderr, "baseline packets %llu missed %llu\n", (unsigned long long)got,
            (unsigned long long)missed);
    return 0;
}

/* Run argv as a child (stderr to errfile), return CPU seconds and wall seconds. */
static int run(char *const argv[], const char *errfile, double *cpu, double *wall)
{
    int64_t t0 = ard_now_ns();
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(errfile, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int null = open("/dev/null", O_WRONLY);
        dup2(fd, 2);
        dup2(null, 1);
        execvp(argv[0], argv);
        _exit(127);
    }
    int st;
    struct rusage ru;
    if (wait4(pid, &st, 0, &ru) < 0)
        return -1;
    *wall = (double)(ard_now_ns() - t0) / 1e9;
    *cpu = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec / 1e6;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static long long fsize(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 ? (long long)st.st_size : -1;
}

/* Sum of "recorded N missed M" lines' counts for the final report of ard record. */
static void rec_counts(const char *errfile, unsigned long long *rec, unsigned long long *mis)
{
    FILE *f = fopen(errfile, "r");
    char line[256], name[80];
    unsigned long long r, m;
    *rec = *mis = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "%79s recorded %llu missed %llu", name, &r, &m) == 3) {
            *rec += r;
            *mis += m;
        }
    if (f)
        fclose(f);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: record_bench ARD [SECONDS [DIR]]\n");
        return 100;
    }
    const char *ard = argv[1];
    double secs = argc > 2 ? atof(argv[2]) : 60;
    const char *dir = argc > 3 ? argv[3] : "/tmp";
    char dom[64];
    snprintf(dom, sizeof dom, "recbench%d", (int)getpid());
    setenv("ARD_DOMAIN", dom, 1);
    pid_t w = fork();
    if (w == 0)
        _exit(writer());
    sleep(1);
    char f_base[256], f_rec[256], f_zstd[256], e_rec[256], e_zstd[256], e_base[256], e_x[256];
    snprintf(f_base, sizeof f_base, "%s/bench_base.bin", dir);
    snprintf(f_rec, sizeof f_rec, "%s/bench_rec.mcap", dir);
    snprintf(f_zstd, sizeof f_zstd, "%s/bench_zstd.mcap", dir);
    snprintf(e_base, sizeof e_base, "%s/bench_base.err", dir);
    snprintf(e_rec, sizeof e_rec, "%s/bench_rec.err", dir);
    snprintf(e_zstd, sizeof e_zstd, "%s/bench_zstd.err", dir);
    snprintf(e_x, sizeof e_x, "%s/bench_x.err", dir);
    char dur[32];
    snprintf(dur, sizeof dur, "%g", secs);
    printf("record_bench: 40 x 1 KiB + 1 x 64 KiB at 1 kHz, %g s per phase\n", secs);
    printf("%-10s %8s %10s %12s %10s %12s\n", "phase", "CPU %", "MB/s", "packets", "missed",
           "CPU ms/MB");

    double cpu, wall;
    pid_t b = fork();
    if (b == 0) {
        int fd = open(e_base, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(fd, 2);
        _exit(baseline(f_base, secs));
    }
    int st;
    struct rusage ru;
    int64_t t0 = ard_now_ns();
    wait4(b, &st, 0, &ru);
    wall = (double)(ard_now_ns() - t0) / 1e9;
    cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
          ru.ru_stime.tv_usec / 1e6;
    unsigned long long got = 0, mis = 0;
    FILE *f = fopen(e_base, "r");
    if (f) {
        if (fscanf(f, "baseline packets %llu missed %llu", &got, &mis) != 2)
            got = mis = 0;
        fclose(f);
    }
    /* The writer may not keep its rate on a busy host: compare CPU per megabyte of packets
     * taken (packets x mean size), not per second. */
    double per_pkt_bytes = (40.0 * 1024 + 65536) / 41;
    double base_ms_mb = cpu * 1e3 / ((double)got * per_pkt_bytes / 1e6);
    printf("%-10s %8.1f %10.1f %12llu %10llu %12.2f\n", "baseline", 100 * cpu / wall,
           fsize(f_base) / wall / 1e6, got, mis, base_ms_mb);
    char *phases[][10] = {
        {(char *)ard, "record", "-o", f_rec, "--duration", dur, NULL},
        {(char *)ard, "record", "--no-crc", "-o", f_rec, "--duration", dur, NULL},
        {(char *)ard, "record", "--compress", "zstd", "-o", f_zstd, "--duration", dur, NULL},
    };
    const char *names[] = {"record", "no-crc", "zstd"};
    for (int k = 0; k < 3; k++) {
        run(phases[k], e_rec, &cpu, &wall);
        rec_counts(e_rec, &got, &mis);
        double ms_mb = cpu * 1e3 / ((double)got * per_pkt_bytes / 1e6);
        printf("%-10s %8.1f %10.1f %12llu %10llu %12.2f  (%.2fx the baseline)\n", names[k],
               100 * cpu / wall, fsize(k == 2 ? f_zstd : f_rec) / wall / 1e6, got, mis, ms_mb,
               ms_mb / base_ms_mb);
    }
    char *again[] = {(char *)ard, "record", "-o", f_rec, "--duration", dur, NULL};
    run(again, e_rec, &cpu, &wall); /* the file play, export and info use (with CRCs) */
    kill(w, SIGTERM);
    waitpid(w, NULL, 0);

    unsigned long long total;
    rec_counts(e_rec, &total, &mis);
    printf("(%llu packets recorded again, with CRCs, for play/export/info)\n", total);
    char pdom[80];
    snprintf(pdom, sizeof pdom, "%s_play", dom);
    char *play[] = {(char *)ard, "--domain", pdom, "play", f_rec, "--rate", "1000", NULL};
    run(play, e_x, &cpu, &wall);
    printf("play --rate 1000: %llu packets in %.2f s wall, %.2f us CPU per packet\n", total, wall,
           cpu / (double)total * 1e6);
    unsigned long long small = total / 41;
    char *exp[] = {(char *)ard, "export", f_rec, "--csv", "--field", "small00:v", NULL};
    run(exp, e_x, &cpu, &wall);
    printf("export --csv (1 KiB, 128 columns): about %llu rows, %.2f us CPU per row\n", small,
           cpu / (double)small * 1e6);
    char *info[] = {(char *)ard, "info", f_rec, NULL};
    run(info, e_x, &cpu, &wall);
    printf("info (reads and checks the whole file): %.2f us CPU per packet, %.0f MB/s\n",
           cpu / (double)total * 1e6, fsize(f_rec) / cpu / 1e6);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -f /dev/shm/ard.%s.* /dev/shm/ard.%s.* %s %s %s", dom, pdom,
             f_base, f_rec, f_zstd);
    if (system(cmd) != 0)
        return 111;
    return 0;
}
