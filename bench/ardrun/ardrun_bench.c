/*
 * ardrun_bench - what running blocks in an ardrun group costs, next to baselines measured in
 * the same run: 40 blocks (bench/ardrun/relay.c: a small computation on a 1 KiB packet, each
 * passing it to the next) at 1 kHz and at 10 kHz,
 *
 *   hand     the same 40 step functions called in a hand-written loop in this process, packets
 *            passed by pointer, on a bare clock_nanosleep loop (same priority and CPU), keeping
 *            the per-block statistics ardrun keeps (one CLOCK_MONOTONIC reading per block,
 *            each block's step count, mean and max execution time); and
 *            once more with each packet copied into and out of an 8-slot ring per
 *            connection, as the shared-memory transport does (what copying alone costs)
 *   group    `ardrun --ticks N` with the 40 blocks in one rate group (same priority and CPU):
 *            the relay declares its output ARD_PORT_WHOLE (handed over without a copy), and
 *            once more built without the flag (relay_partial.so: one 1 KiB copy per hand-off)
 *   procs    the same plugin as 40 processes (`ardrun --block`; the first at the rate, the
 *            others --trigger in), same priority and CPU
 *
 * and prints per block step cost (ns), the wake-up delay of the ticks (min/median/p99/max),
 * the end-to-end latency from the first block's tick to the last block's packet arriving in
 * this process, and CPU time per tick.
 *
 *   ardrun_bench [--seconds S] [--rounds N] [--prio P] [--cpu C] [--rates 1000,10000]
 *                [--whole yes|no|both]
 *
 * --whole: which group runs (default both: with and without ARD_PORT_WHOLE). --rounds: the
 * hand loop and the group(s) run N times in turn (default 3), each round's group compared with
 * the same round's hand loop, and the median of the rounds is what the targets are checked
 * on: the machine's speed drifts by tens of percent over seconds, so only figures measured
 * side by side are compared. The 40 processes and the hand loop with copies run once.
 */
#include "ardnet_block.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NBLOCKS 40
#define PKT 1024

extern char **environ;

struct opts {
    double seconds;
    int prio;
    char cpu[16];
    long rates[4];
    int nrates;
    int whole; /* 1: the relay with ARD_PORT_WHOLE, 2: without, 3: both */
    int rounds;
};

#define MAX_ROUNDS 20

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

struct dist {
    double min, med, p99, max; /* us */
    size_t n;
};

static struct dist distribution(int64_t *v, size_t n)
{
    struct dist d = {0};
    if (n == 0)
        return d;
    qsort(v, n, sizeof *v, cmp_i64);
    d.n = n;
    d.min = (double)v[0] / 1e3;
    d.med = (double)v[n / 2] / 1e3;
    d.p99 = (double)v[(size_t)((double)n * 0.99)] / 1e3;
    d.max = (double)v[n - 1] / 1e3;
    return d;
}

/* ---- hand-written loop ------------------------------------------------------------------ */

struct hand_block {
    ard_block_ctx ctx;
    int64_t sum_ns, max_ns; /* execution time of its steps, as a user wanting ardrun's
                             * per-block figures would keep them */
    void *buf[2];
    int8_t fresh[2];
    uint8_t send[2];
    struct ard_info info[2];
    int first;
};

static int hand_param(ard_block_ctx *ctx, const char *name, enum ard_param_type t, void *out)
{
    struct hand_block *b = (struct hand_block *)ctx;
    if (strcmp(name, "first") || t != ARD_PARAM_BOOL)
        return ARD_EINVAL;
    *(int *)out = b->first;
    return 0;
}

static int hand_fail(ard_block_ctx *ctx, int code, const char *fmt, va_list ap)
{
    (void)ctx;
    vfprintf(stderr, fmt, ap);
    return code;
}

static const struct ard_block_host hand_host = {hand_param, hand_fail};

struct hand_result {
    double step_ns;       /* mean per block step */
    double block_mean_ns; /* from the per-block statistics (the same, seen by the blocks) */
    int64_t block_max_ns; /* the largest of the blocks' max execution times */
    struct dist wake;
    double cpu_per_tick_us;
};

struct hand_arg {
    const struct opts *o;
    long rate;
    int copies; /* also copy each packet in and out of an 8-slot ring, as the transport does */
    const struct ard_block_desc *d;
    struct hand_result res;
    int error;
};

static void *hand_thread(void *p)
{
    struct hand_arg *a = p;
    if ((a->o->prio || a->o->cpu[0]) &&
        ard_realtime(a->o->cpu[0] ? a->o->cpu : NULL, 0, a->o->prio) < 0) {
        fprintf(stderr, "hand loop: %s\n", ard_errdetail());
        a->error = 1;
        return NULL;
    }
    static struct hand_block blk[NBLOCKS];
    static _Alignas(64) uint8_t bufs[NBLOCKS + 1][PKT], inb[NBLOCKS][PKT];
    static _Alignas(64) uint8_t ring[NBLOCKS + 1][8][PKT + 64];
    memset(blk, 0, sizeof blk);
    memset(bufs, 0, sizeof bufs);
    for (int i = 0; i < NBLOCKS; i++) {
        struct hand_block *b = &blk[i];
        b->buf[0] = a->copies ? inb[i] : bufs[i];
        b->buf[1] = bufs[i + 1];
        b->fresh[0] = i == 0 ? -1 : 1;
        b->first = i == 0;
        b->ctx = (ard_block_ctx){.api = ARD_BLOCK_API,
                                 .nports = 2,
                                 .instance = "hand",
                                 .buf = b->buf,
                                 .fresh = b->fresh,
                                 .send = b->send,
                                 .info = b->info,
                                 .host = &hand_host};
        if (a->d->init(&b->ctx) < 0) {
            a->error = 1;
            return NULL;
        }
    }
    int64_t period = 1000000000 / a->rate;
    size_t n = (size_t)(a->o->seconds * (double)a->rate);
    int64_t *wake = calloc(n, sizeof *wake);
    double sum = 0;
    struct timespec c0, c1;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
    int64_t next = ard_now_ns() + period;
    for (size_t t = 0; t < n; t++) {
        struct timespec ts = {next / 1000000000, next % 1000000000};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
            ;
        int64_t now = ard_now_ns(), t0 = now;
        wake[t] = now - next;
        for (int i = 0; i < NBLOCKS; i++) {
            struct hand_block *b = &blk[i];
            b->ctx.now_ns = now;
            b->ctx.period_ns = period;
            if (a->copies && i > 0)
                memcpy(inb[i], ring[i][t % 8] + 64, PKT);
            (void)a->d->step(&b->ctx);
            if (a->copies)
                memcpy(ring[i + 1][t % 8] + 64, bufs[i + 1], PKT);
            b->send[1] = 0;
            b->ctx.steps++;
            /* one clock reading per block: this block's end is the next one's start */
            int64_t t1 = ard_now_ns(), dt = t1 - t0;
            b->sum_ns += dt;
            if (dt > b->max_ns)
                b->max_ns = dt;
            t0 = t1;
        }
        sum += (double)(t0 - now);
        next += period;
        while (next <= ard_now_ns())
            next += period; /* skip missed deadlines, like ard_period_wait */
    }
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
    int64_t bsum = 0, bmax = 0;
    for (int i = 0; i < NBLOCKS; i++) {
        a->d->close(&blk[i].ctx);
        bsum += blk[i].sum_ns;
        bmax = blk[i].max_ns > bmax ? blk[i].max_ns : bmax;
    }
    a->res.block_mean_ns = (double)bsum / (double)n / NBLOCKS;
    a->res.block_max_ns = bmax;
    a->res.step_ns = sum / (double)n / NBLOCKS;
    a->res.wake = distribution(wake, n);
    a->res.cpu_per_tick_us =
        ((double)(c1.tv_sec - c0.tv_sec) * 1e6 + (double)(c1.tv_nsec - c0.tv_nsec) / 1e3) /
        (double)n;
    free(wake);
    return NULL;
}

static int run_hand(const struct opts *o, long rate, const struct ard_block_desc *d, int copies,
                    struct hand_result *r)
{
    struct hand_arg a = {.o = o, .rate = rate, .d = d, .copies = copies};
    pthread_t th;
    if (pthread_create(&th, NULL, hand_thread, &a))
        return -1;
    pthread_join(th, NULL);
    *r = a.res;
    return a.error ? -1 : 0;
}

/* ---- a reader of the chain's last connection: end-to-end latency ------------------------ */

struct reader {
    pthread_t th;
    const char *conn;
    _Atomic int stop;
    int64_t since; /* packets of ticks before this are an earlier run's (the same names) */
    int64_t *lat;
    size_t n, max;
    uint64_t skipped;
};

static void *reader_thread(void *p)
{
    struct reader *r = p;
    ard_port *in = NULL;
    for (int tries = 0; in == NULL && tries < 500 && !atomic_load(&r->stop); tries++) {
        in = ard_create_on("bench.last", r->conn, ARD_IN, PKT, "i64 f64[127]");
        if (in == NULL)
            usleep(10000);
    }
    if (in == NULL) {
        fprintf(stderr, "reader: %s\n", ard_errdetail());
        return NULL;
    }
    uint8_t buf[PKT];
    while (!atomic_load(&r->stop)) {
        if (ard_rec_timed(in, buf, 100000000) != 0)
            continue;
        int64_t t0;
        memcpy(&t0, buf, 8);
        if (r->n < r->max && t0 >= r->since)
            r->lat[r->n++] = ard_now_ns() - t0;
        r->skipped += ard_port_info(in).skipped;
    }
    ard_close(in);
    return NULL;
}

static void reader_start(struct reader *r, const char *conn, size_t max)
{
    memset(r, 0, sizeof *r);
    r->conn = conn;
    r->since = ard_now_ns();
    r->max = max;
    r->lat = calloc(max, sizeof *r->lat);
    pthread_create(&r->th, NULL, reader_thread, r);
}

static void reader_stop(struct reader *r)
{
    atomic_store(&r->stop, 1);
    pthread_join(r->th, NULL);
}

/* ---- children --------------------------------------------------------------------------- */

static pid_t spawn(char **argv, const char *errfile)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 2, errfile, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    int e = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    return e ? -1 : pid;
}

static double rusage_us(const struct rusage *r)
{
    return (double)r->ru_utime.tv_sec * 1e6 + (double)r->ru_utime.tv_usec +
           (double)r->ru_stime.tv_sec * 1e6 + (double)r->ru_stime.tv_usec;
}

struct group_result {
    double step_ns; /* mean per block step of blocks 0..38 (the last one wakes the reader) */
    double last_ns;
    char wake[160];
    unsigned long long overruns;
    double cpu_per_tick_us;
    struct dist lat;
    uint64_t skipped;
};

static int run_group(const struct opts *o, long rate, const char *dir, const char *so,
                     struct group_result *g)
{
    char yaml[512], err[512];
    snprintf(yaml, sizeof yaml, "%s/group.yaml", dir);
    snprintf(err, sizeof err, "%s/group.err", dir);
    FILE *f = fopen(yaml, "w");
    if (!f)
        return -1;
    fprintf(f, "name: benchg\nrate_hz: %ld\nrates:\n  - { name: r, prio: %d, cpu: \"%s\" }\n", rate,
            o->prio, o->cpu);
    fprintf(f, "blocks:\n");
    for (int i = 0; i < NBLOCKS; i++)
        fprintf(f,
                "  - { name: b%d, plugin: %s, params: { first: %s }, ard: { in: g%ld.c%d, "
                "out: g%ld.c%d } }\n",
                i, so, i ? "false" : "true", rate, i, rate, i + 1);
    fclose(f);
    long ticks = (long)(o->seconds * (double)rate);
    char nt[32];
    snprintf(nt, sizeof nt, "%ld", ticks);
    char *argv[] = {ARDRUN_BIN, "--ticks", nt, yaml, NULL};
    struct reader rd;
    char last[32];
    snprintf(last, sizeof last, "g%ld.c%d", rate, NBLOCKS);
    reader_start(&rd, last, (size_t)ticks + 16);
    pid_t pid = spawn(argv, err);
    int st;
    struct rusage ru;
    if (pid < 0 || wait4(pid, &st, 0, &ru) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
        reader_stop(&rd);
        fprintf(stderr, "group run failed, see %s\n", err);
        return -1;
    }
    reader_stop(&rd);
    g->cpu_per_tick_us = rusage_us(&ru) / (double)ticks;
    g->lat = distribution(rd.lat, rd.n);
    g->skipped = rd.skipped;
    free(rd.lat);
    f = fopen(err, "r");
    char line[512];
    double sum = 0;
    int n = 0;
    while (f && fgets(line, sizeof line, f)) {
        int b;
        long long mean;
        char *p = strstr(line, "wake-up delay ");
        if (p) {
            snprintf(g->wake, sizeof g->wake, "%s", p + 14);
            g->wake[strcspn(g->wake, "\n")] = 0;
            char *ov = strstr(line, "overruns ");
            if (ov)
                g->overruns = strtoull(ov + 9, NULL, 10);
        } else if ((p = strstr(line, "block 'b")) && sscanf(p, "block 'b%d'", &b) == 1 &&
                   (p = strstr(p, "mean ")) && sscanf(p, "mean %lld", &mean) == 1) {
            if (b == NBLOCKS - 1)
                g->last_ns = (double)mean;
            else {
                sum += (double)mean;
                n++;
            }
        }
    }
    if (f)
        fclose(f);
    g->step_ns = n ? sum / n : 0;
    return n == NBLOCKS - 1 ? 0 : -1;
}

struct procs_result {
    double cpu_per_tick_us;
    struct dist lat;
    uint64_t skipped;
    size_t got, sent;
};

static int run_procs(const struct opts *o, long rate, const char *dir, struct procs_result *r)
{
    pid_t pids[NBLOCKS];
    char err[512], prio[16], rate_s[32], in[64], out[64], name[16];
    snprintf(prio, sizeof prio, "%d", o->prio);
    snprintf(rate_s, sizeof rate_s, "%ld", rate);
    struct rusage before, after;
    getrusage(RUSAGE_CHILDREN, &before);
    struct reader rd;
    char last[32];
    snprintf(last, sizeof last, "p%ld.c%d", rate, NBLOCKS);
    long ticks = (long)(o->seconds * (double)rate);
    reader_start(&rd, last, (size_t)ticks + 16);
    for (int i = NBLOCKS - 1; i >= 0; i--) {
        snprintf(err, sizeof err, "%s/proc%d.err", dir, i);
        snprintf(in, sizeof in, "in=p%ld.c%d", rate, i);
        snprintf(out, sizeof out, "out=p%ld.c%d", rate, i + 1);
        snprintf(name, sizeof name, "p%d", i);
        char *argv[24];
        int k = 0;
        argv[k++] = ARDRUN_BIN;
        argv[k++] = "--block";
        argv[k++] = RELAY_SO;
        argv[k++] = "--name";
        argv[k++] = name;
        if (i == 0) {
            argv[k++] = "--param";
            argv[k++] = "first=true";
            argv[k++] = "--rate";
            argv[k++] = rate_s;
        } else {
            argv[k++] = "--trigger";
            argv[k++] = "in";
        }
        argv[k++] = "--ard";
        argv[k++] = in;
        argv[k++] = "--ard";
        argv[k++] = out;
        if (o->prio) {
            argv[k++] = "--ard-prio";
            argv[k++] = prio;
        }
        if (o->cpu[0]) {
            argv[k++] = "--ard-cpu";
            argv[k++] = (char *)o->cpu;
        }
        argv[k] = NULL;
        pids[i] = spawn(argv, err);
        if (i == 1)
            usleep(300000); /* the chain is attached before the first block starts */
    }
    int64_t t0 = ard_now_ns();
    usleep((useconds_t)(o->seconds * 1e6));
    int64_t t1 = ard_now_ns();
    for (int i = 0; i < NBLOCKS; i++)
        if (pids[i] > 0)
            kill(pids[i], SIGTERM);
    for (int i = 0; i < NBLOCKS; i++)
        if (pids[i] > 0)
            waitpid(pids[i], NULL, 0);
    reader_stop(&rd);
    getrusage(RUSAGE_CHILDREN, &after);
    double sent = (double)(t1 - t0) / 1e9 * (double)rate;
    r->sent = (size_t)sent;
    r->got = rd.n;
    r->cpu_per_tick_us = (rusage_us(&after) - rusage_us(&before)) / sent;
    r->lat = distribution(rd.lat, rd.n);
    r->skipped = rd.skipped;
    free(rd.lat);
    return 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: ardrun_bench [--seconds S] [--rounds N] [--prio P] [--cpu LIST] "
                    "[--rates HZ[,HZ...]] [--whole yes|no|both]\n");
    exit(100);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(const double *v, int n)
{
    double s[MAX_ROUNDS];
    memcpy(s, v, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

int main(int argc, char **argv)
{
    struct opts o = {
        .seconds = 2, .prio = geteuid() == 0 ? 50 : 0, .cpu = "1", .whole = 3, .rounds = 3};
    o.rates[0] = 1000;
    o.rates[1] = 10000;
    o.nrates = 2;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
            o.seconds = atof(argv[++i]);
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            o.rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--prio") && i + 1 < argc)
            o.prio = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--cpu") && i + 1 < argc)
            snprintf(o.cpu, sizeof o.cpu, "%s", argv[++i]);
        else if (!strcmp(argv[i], "--whole") && i + 1 < argc) {
            i++;
            o.whole = !strcmp(argv[i], "yes")    ? 1
                      : !strcmp(argv[i], "no")   ? 2
                      : !strcmp(argv[i], "both") ? 3
                                                 : 0;
            if (!o.whole)
                usage();
        } else if (!strcmp(argv[i], "--rates") && i + 1 < argc) {
            o.nrates = 0;
            for (char *s = strtok(argv[++i], ","); s && o.nrates < 4; s = strtok(NULL, ","))
                o.rates[o.nrates++] = atol(s);
        } else
            usage();
    }
    if (!(o.seconds > 0 && o.seconds <= 600) || o.nrates == 0 || o.rounds < 1 ||
        o.rounds > MAX_ROUNDS)
        usage();
    for (int k = 0; k < o.nrates; k++)
        if (o.rates[k] < 1 || o.rates[k] > 100000)
            usage();
    char dom[32];
    snprintf(dom, sizeof dom, "ardrunbench%d", (int)getpid());
    if (ard_set_domain(dom) < 0 || ard_init(NULL, NULL) < 0) {
        fprintf(stderr, "ardrun_bench: %s\n", ard_errdetail());
        return 111;
    }
    setenv("ARD_DOMAIN", dom, 1);
    char dir[] = "/tmp/ardrun_bench.XXXXXX";
    if (!mkdtemp(dir))
        return 111;
    void *dl = dlopen(RELAY_SO, RTLD_NOW | RTLD_LOCAL);
    const struct ard_block_desc *(*fn)(void) = NULL;
    if (dl)
        *(void **)&fn = dlsym(dl, ARD_BLOCK_SYMBOL);
    if (!fn) {
        fprintf(stderr, "ardrun_bench: %s: %s\n", RELAY_SO, dlerror());
        return 111;
    }
    const struct ard_block_desc *d = fn();

    printf("ardrun_bench: %d blocks, %d-byte packets, %.1f s per run, %d round%s, SCHED_FIFO %d, "
           "CPU %s\n",
           NBLOCKS, PKT, o.seconds, o.rounds, o.rounds == 1 ? "" : "s", o.prio,
           o.cpu[0] ? o.cpu : "any");
    static const char *const label[2] = {"ARD_PORT_WHOLE", "without the flag"};
    for (int k = 0; k < o.nrates; k++) {
        long rate = o.rates[k];
        struct hand_result h = {0}, hc = {0};
        struct group_result g[2] = {{0}};
        struct procs_result p = {0};
        double hand[MAX_ROUNDS], grp[2][MAX_ROUNDS], ratio[2][MAX_ROUNDS], over[2][MAX_ROUNDS];
        printf("\n== %ld Hz\n", rate);
        for (int r = 0; r < o.rounds; r++) {
            if (run_hand(&o, rate, d, 0, &h) < 0)
                goto failed;
            hand[r] = h.step_ns;
            printf("round %d               hand loop %6.0f ns", r + 1, h.step_ns);
            for (int w = 0; w < 2; w++) {
                if (!(o.whole & (1 << w)))
                    continue;
                if (run_group(&o, rate, dir, w == 0 ? RELAY_SO : RELAY_PARTIAL_SO, &g[w]) < 0)
                    goto failed;
                grp[w][r] = g[w].step_ns;
                over[w][r] = g[w].step_ns - h.step_ns;
                ratio[w][r] = g[w].step_ns / h.step_ns;
                printf("   group %6.0f ns, %.2fx (%s)", g[w].step_ns, ratio[w][r], label[w]);
            }
            printf("\n");
            fflush(stdout);
        }
        if (run_hand(&o, rate, d, 1, &hc) < 0 || run_procs(&o, rate, dir, &p) < 0)
            goto failed;
        double hm = median(hand, o.rounds);
        for (int w = 0; w < 2; w++) {
            if (!(o.whole & (1 << w)))
                continue;
            double ov = median(over[w], o.rounds), ra = median(ratio[w], o.rounds);
            printf("step per block        hand loop %6.0f ns   group %6.0f ns (%s; medians of "
                   "the rounds; last block, which wakes the reader: %.0f ns)\n",
                   hm, median(grp[w], o.rounds), label[w], g[w].last_ns);
            printf("framework overhead    %6.0f ns per block step, %.2fx the hand loop   "
                   "[target <= 1.5x: %s, <= 100 ns: %s] (%s; medians of the rounds)\n",
                   ov, ra, ra <= 1.5 ? "PASS" : "MISS", ov <= 100 ? "PASS" : "MISS", label[w]);
        }
        /* the figures below are of the last round (its group with the flag if it ran) */
        const struct group_result *gl = (o.whole & 1) ? &g[0] : &g[1];
        printf("                      hand loop with the transport's two 1 KiB copies per "
               "block (8-slot rings, no atomics): %.0f ns\n",
               hc.step_ns);
        printf("                      hand loop's own per-block statistics (last round): mean "
               "%.0f ns, largest max %.1f us\n",
               h.block_mean_ns, (double)h.block_max_ns / 1e3);
        printf("wake-up delay (us)    bare loop min %.1f median %.1f p99 %.1f max %.1f\n",
               h.wake.min, h.wake.med, h.wake.p99, h.wake.max);
        printf("                      group     %s (1 us bins)  overruns %llu\n", gl->wake,
               gl->overruns);
        printf("CPU per tick (us)     hand loop %.1f   group %.1f   40 processes %.1f\n",
               h.cpu_per_tick_us, gl->cpu_per_tick_us, p.cpu_per_tick_us);
        printf("tick -> last packet   group     median %.1f p99 %.1f max %.1f us (%zu packets, "
               "%llu skipped)\n",
               gl->lat.med, gl->lat.p99, gl->lat.max, gl->lat.n, (unsigned long long)gl->skipped);
        printf("(in this process)     40 procs  median %.1f p99 %.1f max %.1f us (%zu of ~%zu "
               "ticks arrived, %llu skipped)\n",
               p.lat.med, p.lat.p99, p.lat.max, p.got, p.sent, (unsigned long long)p.skipped);
        fflush(stdout);
    }
    (void)!ard_domain_unlink(dom);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    (void)!system(cmd);
    return 0;
failed:
    fprintf(stderr, "ardrun_bench: a run failed (files in %s)\n", dir);
    (void)!ard_domain_unlink(dom);
    return 111;
}
