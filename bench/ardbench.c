/*
 * ardbench.c - latency and send-cost benchmark of libardnet, side by side with raw
 * shared-memory hand-offs measured in the same run. See docs/performance.md.
 *
 * This file parses options, runs every row in fresh processes (roles.c), and prints the
 * table. A benchmark, never a test: targets are reported (PASS/MISS), not asserted.
 */
#include "bench.h"

#include "ardnet.h"

#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define EXIT_USAGE 2
#define MAX_SIZES 16
#define MAX_ROWS 256
/* ard_send's target: at most this many ns over a raw publish plus one clock read. */
#define ARD_SEND_OVER_NS 10.0

enum placement { PL_TWO, PL_ONE, PL_COUNT };

static const char *const placement_name[PL_COUNT] = {"two CPUs", "one CPU"};
static const char *const placement_key[PL_COUNT] = {"two", "one"};

static const char *const method_name[BM_COUNT] = {
    [BM_RAW_FUTEX] = "raw futex",
    [BM_RAW_SPIN] = "raw spin",
    [BM_ARD_REC] = "ard rec",
    [BM_ARD_TRYREC] = "ard tryrec",
    [BM_ARD_SPIN] = "ard spin-rec",
    [BM_RAW_SEND] = "raw publish",
    [BM_CLOCK_READ] = "one clock read",
    [BM_ARD_SEND] = "ard_send",
    [BM_ARD_SEND_STAMPED] = "send stamped",
    [BM_ARD_POLL] = "ard poll",
    [BM_ARD_WAIT16] = "ard wait-N",
    [BM_PP_RAW] = "raw spin",
    [BM_PP_TRYREC] = "ard tryrec",
    [BM_PP_POLL] = "ard poll",
    [BM_PP_STAMPED] = "poll stamped",
    [BM_PP_HEAD] = "head+copy",
    [BM_PP_SEQ] = "+seq check",
    [BM_PP_INFO] = "+info",
};

/* Names in CSV output. */
static const char *const method_csv[BM_COUNT] = {
    [BM_RAW_FUTEX] = "raw-futex",
    [BM_RAW_SPIN] = "raw-spin",
    [BM_ARD_REC] = "rec",
    [BM_ARD_TRYREC] = "tryrec",
    [BM_ARD_SPIN] = "spin-rec",
    [BM_RAW_SEND] = "raw-publish",
    [BM_CLOCK_READ] = "clock-read",
    [BM_ARD_SEND] = "ard-send",
    [BM_ARD_SEND_STAMPED] = "ard-send-stamped",
    [BM_ARD_POLL] = "poll",
    [BM_ARD_WAIT16] = "wait16",
    [BM_PP_RAW] = "pp-raw-spin",
    [BM_PP_TRYREC] = "pp-tryrec",
    [BM_PP_POLL] = "pp-poll",
    [BM_PP_STAMPED] = "pp-poll-stamped",
    [BM_PP_HEAD] = "pp-head",
    [BM_PP_SEQ] = "pp-seq",
    [BM_PP_INFO] = "pp-info",
};

/* Names accepted by --methods; "send" selects the four send-cost rows. */
static const char *const method_key[BM_COUNT] = {
    [BM_RAW_FUTEX] = "raw-futex", [BM_RAW_SPIN] = "raw-spin", [BM_ARD_REC] = "rec",
    [BM_ARD_TRYREC] = "tryrec",   [BM_ARD_SPIN] = "spin-rec", [BM_RAW_SEND] = "send",
    [BM_CLOCK_READ] = "send",     [BM_ARD_SEND] = "send",     [BM_ARD_SEND_STAMPED] = "send",
    [BM_ARD_POLL] = "poll",       [BM_ARD_WAIT16] = "wait16", [BM_PP_RAW] = "pp-raw-spin",
    [BM_PP_TRYREC] = "pp-tryrec", [BM_PP_POLL] = "pp-poll",   [BM_PP_STAMPED] = "pp-poll-stamped",
    [BM_PP_HEAD] = "pp-steps",    [BM_PP_SEQ] = "pp-steps",   [BM_PP_INFO] = "pp-steps",
};

struct options {
    uint32_t samples, warmup, batches, batch_len, rounds, raw_slots;
    size_t sizes[MAX_SIZES];
    size_t nsizes;
    bool placement[PL_COUNT];
    bool method[BM_COUNT];
    int cpu_a, cpu_b; /* -1: choose */
    int fifo;         /* 0: off, else the reader's priority (the writer gets one more) */
    int64_t pace_min_ns, pace_max_ns, spin_ns, row_limit_ns;
    uint32_t wait_ports;
    bool csv, exec, quick, separate;
};

/* A target: the row's median over its baseline's median, or, for send cost, ns: absolute, or
 * (plus_clock) `limit` ns over the sum of the raw publish's and one clock read's medians of
 * the same run and size. */
struct target {
    enum bench_method base; /* BM_COUNT: in ns */
    double limit;
    bool plus_clock;
};

struct row {
    enum placement pl;
    size_t size;
    enum bench_method method;
    bool ok;       /* every run of the row succeeded */
    uint32_t want; /* samples (or batches) wanted over all rounds */
    int64_t *v;    /* samples pooled over the rounds */
    size_t n;
    struct bench_stats st;
    uint64_t skipped, anomalies;
    /* filled when a target applies */
    bool has_target, pass, plus_clock;
    double ratio, limit;
    enum bench_method base;
};

struct ctx {
    struct options o;
    struct bench_shared *sh;
    int memfd; /* --exec: the region is a memfd the children map again; else -1 */
    sigset_t waitset, oldmask;
    char domain[64];
    struct row rows[MAX_ROWS];
    size_t nrows;
    int failures;
    bool interrupted;
    const char *self;
    char label[96]; /* the row being run, for messages */
};

/* ---- option parsing --------------------------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(f, "usage: ardbench [options]\n"
               "One-way latency between two processes of ard_send -> ard_rec / ard_tryrec /\n"
               "spin-then-block ard_rec, next to raw futex and raw spin hand-offs over plain\n"
               "shared memory, on one CPU and on two; and the cost of one ard_send next to a\n"
               "raw publish and one clock read (clock_gettime(CLOCK_MONOTONIC), the vDSO's).\n"
               "\n"
               "  --samples N        recorded packets per row (default 20000)\n"
               "  --warmup N         packets sent first and not recorded (default 200)\n"
               "  --sizes LIST       packet sizes, e.g. 64,1k,64k (default; >= 16 bytes)\n"
               "  --placements LIST  two,one (default both): two CPUs, or both on one CPU\n"
               "  --cpus A,B         CPUs to use (default: the first two allowed); one CPU = A\n"
               "  --methods LIST     raw-futex,raw-spin,rec,tryrec,spin-rec,poll,wait16,send,\n"
               "                     pp-raw-spin,pp-tryrec,pp-poll,pp-poll-stamped (default\n"
               "                     all); the pp- methods are the back-to-back ping-pong (two\n"
               "                     CPUs only): round trip with a reader polling without\n"
               "                     pause; pp-poll-stamped sends with ard_send_stamped;\n"
               "                     pp-steps: the receive path taken apart, sent as\n"
               "                     pp-poll-stamped: head+copy, +seq check, +info\n"
               "                     send: the send-cost rows (raw publish, one clock read,\n"
               "                     ard_send, send stamped)\n"
               "  --pace MIN,MAX     random gap in us between sends (20,50), and at least MIN\n"
               "                     after the reader took the previous packet\n"
               "  --spin-ns NS       spin time of the spin-rec rows (default 100000)\n"
               "  --wait-ports N     ports the wait rows wait on: the measured one and N-1 idle\n"
               "                     connections (default 16, at most 160)\n"
               "  --row-seconds S    stop a run of one placement and size early after S seconds\n"
               "                     (default 60; --quick: 3), with fewer samples\n"
               "  --batches N        send cost: timed batches (default 101)\n"
               "  --batch-len N      send cost: sends (or clock reads) per batch (default 10000)\n"
               "  --fifo[=PRIO]      SCHED_FIFO: reader PRIO (default 10), writer PRIO+1\n"
               "  --rounds N         run the whole set N times, interleaved, and pool the samples\n"
               "                     of each row (default 1): spreads slow drifts of a shared\n"
               "                     machine over all rows alike\n"
               "  --raw-slots N      buffers of the raw baselines, used in turn (default 1)\n"
               "  --separate         run each method in its own pair of processes, instead of\n"
               "                     interleaving all methods of a placement and size packet by\n"
               "                     packet (the default, fairer on a busy machine)\n"
               "  --exec             exec a fresh ardbench for each process, not only fork\n"
               "  --quick            few samples (smoke test, a few seconds)\n"
               "  --csv              CSV instead of the readable table\n"
               "  --help             this text\n"
               "Latency is the reader's CLOCK_MONOTONIC after its copy minus the writer's just\n"
               "before its send call, in ns. Exit status: 0 all rows ran (targets are reported,\n"
               "not asserted), 1 a row failed, 2 usage.\n");
}

static int bad(const char *opt, const char *val, const char *why)
{
    fprintf(stderr, "ardbench: %s '%s': %s (see --help)\n", opt, val, why);
    return -1;
}

static int parse_u64(const char *s, uint64_t max, uint64_t *out)
{
    char *end;
    errno = 0;
    if (*s < '0' || *s > '9')
        return -1;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0' || v > max)
        return -1;
    *out = v;
    return 0;
}

static int parse_size(const char *s, size_t *out)
{
    char *end;
    errno = 0;
    if (*s < '0' || *s > '9')
        return -1;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0)
        return -1;
    if (*end == 'k' || *end == 'K')
        v <<= 10, end++;
    else if (*end == 'm' || *end == 'M')
        v <<= 20, end++;
    if (*end != '\0' || v < sizeof(struct bench_stamp) || v > ARD_MAX_PACKET)
        return -1;
    *out = (size_t)v;
    return 0;
}

/* Splits a comma list (a copy: argv is printed later as given), calling fn on each item;
 * stops at the first error (-1, reported by fn). An empty list is -2, for the caller to
 * report. */
static int each_item(const char *arg, int (*fn)(struct options *, const char *), struct options *o)
{
    char list[512];
    if (snprintf(list, sizeof list, "%s", arg) >= (int)sizeof list)
        return bad("list", arg, "too long");
    char *save = NULL;
    int n = 0;
    for (char *t = strtok_r(list, ",", &save); t != NULL; t = strtok_r(NULL, ",", &save), n++)
        if (fn(o, t) < 0)
            return -1;
    return n == 0 ? -2 : 0;
}

static int add_size(struct options *o, const char *s)
{
    if (o->nsizes == MAX_SIZES)
        return bad("--sizes", s, "too many sizes");
    if (parse_size(s, &o->sizes[o->nsizes]) < 0)
        return bad("--sizes", s, "not a size from 16 bytes to 64M (suffix k or m allowed)");
    o->nsizes++;
    return 0;
}

static int add_placement(struct options *o, const char *s)
{
    for (int p = 0; p < PL_COUNT; p++)
        if (strcmp(s, placement_key[p]) == 0) {
            o->placement[p] = true;
            return 0;
        }
    return bad("--placements", s, "expected 'two' or 'one'");
}

static int add_method(struct options *o, const char *s)
{
    bool found = false;
    for (int m = 0; m < BM_COUNT; m++)
        if (strcmp(s, method_key[m]) == 0)
            o->method[m] = found = true;
    return found ? 0
                 : bad("--methods", s,
                       "expected raw-futex, raw-spin, rec, tryrec, "
                       "spin-rec, poll, wait16, send, pp-raw-spin, pp-tryrec, pp-poll, "
                       "pp-poll-stamped or pp-steps");
}

static int parse_pair(const char *opt, const char *s, uint64_t max, uint64_t *a, uint64_t *b)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%s", s);
    char *comma = strchr(buf, ',');
    if (comma == NULL)
        return bad(opt, s, "expected two numbers separated by a comma");
    *comma = '\0';
    if (parse_u64(buf, max, a) < 0 || parse_u64(comma + 1, max, b) < 0)
        return bad(opt, s, "not two numbers in range");
    return 0;
}

static int parse_options(int argc, char **argv, struct options *o)
{
    enum {
        O_SAMPLES = 256,
        O_WARMUP,
        O_SIZES,
        O_PLACEMENTS,
        O_CPUS,
        O_METHODS,
        O_PACE,
        O_SPIN,
        O_ROWSEC,
        O_BATCHES,
        O_BATCHLEN,
        O_FIFO,
        O_EXEC,
        O_QUICK,
        O_CSV,
        O_HELP,
        O_ROUNDS,
        O_RAWSLOTS,
        O_SEPARATE,
        O_WAITPORTS
    };
    static const struct option longopts[] = {
        {"samples", required_argument, NULL, O_SAMPLES},
        {"warmup", required_argument, NULL, O_WARMUP},
        {"sizes", required_argument, NULL, O_SIZES},
        {"placements", required_argument, NULL, O_PLACEMENTS},
        {"cpus", required_argument, NULL, O_CPUS},
        {"methods", required_argument, NULL, O_METHODS},
        {"pace", required_argument, NULL, O_PACE},
        {"spin-ns", required_argument, NULL, O_SPIN},
        {"row-seconds", required_argument, NULL, O_ROWSEC},
        {"batches", required_argument, NULL, O_BATCHES},
        {"batch-len", required_argument, NULL, O_BATCHLEN},
        {"fifo", optional_argument, NULL, O_FIFO},
        {"exec", no_argument, NULL, O_EXEC},
        {"rounds", required_argument, NULL, O_ROUNDS},
        {"raw-slots", required_argument, NULL, O_RAWSLOTS},
        {"separate", no_argument, NULL, O_SEPARATE},
        {"wait-ports", required_argument, NULL, O_WAITPORTS},
        {"quick", no_argument, NULL, O_QUICK},
        {"csv", no_argument, NULL, O_CSV},
        {"help", no_argument, NULL, O_HELP},
        {NULL, 0, NULL, 0},
    };
    bool have_samples = false, have_warmup = false, have_batches = false, have_len = false;
    bool have_rowsec = false;
    uint64_t v, w;
    int c, e;
    *o = (struct options){.samples = 20000,
                          .warmup = 200,
                          .batches = 101,
                          .batch_len = 10000,
                          .rounds = 1,
                          .raw_slots = 1,
                          .cpu_a = -1,
                          .cpu_b = -1,
                          .pace_min_ns = 20000,
                          .pace_max_ns = 50000,
                          .spin_ns = 100000,
                          .wait_ports = 16,
                          .row_limit_ns = 60 * 1000000000LL};
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case O_SAMPLES:
            if (parse_u64(optarg, 10000000, &v) < 0 || v == 0)
                return bad("--samples", optarg, "expected 1..10000000");
            o->samples = (uint32_t)v;
            have_samples = true;
            break;
        case O_WARMUP:
            if (parse_u64(optarg, 1000000, &v) < 0)
                return bad("--warmup", optarg, "expected 0..1000000");
            o->warmup = (uint32_t)v;
            have_warmup = true;
            break;
        case O_SIZES:
            o->nsizes = 0;
            if ((e = each_item(optarg, add_size, o)) != 0)
                return e == -2 ? bad("--sizes", optarg, "empty list") : -1;
            break;
        case O_PLACEMENTS:
            if ((e = each_item(optarg, add_placement, o)) != 0)
                return e == -2 ? bad("--placements", optarg, "empty list") : -1;
            break;
        case O_CPUS:
            if (parse_pair("--cpus", optarg, CPU_SETSIZE - 1, &v, &w) < 0)
                return -1;
            if (v == w)
                return bad("--cpus", optarg, "the two CPUs must differ");
            o->cpu_a = (int)v;
            o->cpu_b = (int)w;
            break;
        case O_METHODS:
            if ((e = each_item(optarg, add_method, o)) != 0)
                return e == -2 ? bad("--methods", optarg, "empty list") : -1;
            break;
        case O_PACE:
            if (parse_pair("--pace", optarg, 1000000, &v, &w) < 0)
                return -1;
            if (v > w || v == 0)
                return bad("--pace", optarg, "expected 0 < MIN <= MAX (microseconds)");
            o->pace_min_ns = (int64_t)v * 1000;
            o->pace_max_ns = (int64_t)w * 1000;
            break;
        case O_WAITPORTS:
            if (parse_u64(optarg, BENCH_WAIT_MAX, &v) < 0 || v == 0)
                return bad("--wait-ports", optarg, "expected 1..160");
            o->wait_ports = (uint32_t)v;
            break;
        case O_SPIN:
            if (parse_u64(optarg, 1000000000, &v) < 0)
                return bad("--spin-ns", optarg, "expected 0..1000000000");
            o->spin_ns = (int64_t)v;
            break;
        case O_ROWSEC:
            if (parse_u64(optarg, 3600, &v) < 0 || v == 0)
                return bad("--row-seconds", optarg, "expected 1..3600");
            o->row_limit_ns = (int64_t)v * 1000000000LL;
            have_rowsec = true;
            break;
        case O_BATCHES:
            if (parse_u64(optarg, 1000000, &v) < 0 || v == 0)
                return bad("--batches", optarg, "expected 1..1000000");
            o->batches = (uint32_t)v;
            have_batches = true;
            break;
        case O_BATCHLEN:
            if (parse_u64(optarg, 100000000, &v) < 0 || v == 0)
                return bad("--batch-len", optarg, "expected 1..100000000");
            o->batch_len = (uint32_t)v;
            have_len = true;
            break;
        case O_FIFO:
            o->fifo = 10;
            if (optarg != NULL) {
                if (parse_u64(optarg, 98, &v) < 0 || v == 0)
                    return bad("--fifo", optarg, "expected a priority 1..98");
                o->fifo = (int)v;
            }
            break;
        case O_EXEC:
            o->exec = true;
            break;
        case O_SEPARATE:
            o->separate = true;
            break;
        case O_ROUNDS:
            if (parse_u64(optarg, 1000, &v) < 0 || v == 0)
                return bad("--rounds", optarg, "expected 1..1000");
            o->rounds = (uint32_t)v;
            break;
        case O_RAWSLOTS:
            if (parse_u64(optarg, 64, &v) < 0 || v == 0)
                return bad("--raw-slots", optarg, "expected 1..64");
            o->raw_slots = (uint32_t)v;
            break;
        case O_QUICK:
            o->quick = true;
            break;
        case O_CSV:
            o->csv = true;
            break;
        case O_HELP:
            usage(stdout);
            exit(0);
        default:
            fprintf(stderr, "ardbench: unknown or incomplete option '%s' (see --help)\n",
                    argv[optind - 1]);
            return -1;
        }
    }
    if (optind < argc)
        return bad("argument", argv[optind], "ardbench takes no operands");
    if (o->quick) {
        /* explicit options win over --quick's defaults */
        if (!have_samples)
            o->samples = 300;
        if (!have_warmup)
            o->warmup = 30;
        if (!have_batches)
            o->batches = 21;
        if (!have_len)
            o->batch_len = 2000;
        if (!have_rowsec)
            o->row_limit_ns = 3 * 1000000000LL;
    }
    if (o->nsizes == 0) {
        o->sizes[0] = 64;
        o->sizes[1] = 1024;
        o->sizes[2] = 64 * 1024;
        o->nsizes = 3;
    }
    bool any = false;
    for (int p = 0; p < PL_COUNT; p++)
        any |= o->placement[p];
    if (!any)
        o->placement[PL_TWO] = o->placement[PL_ONE] = true;
    any = false;
    for (int m = 0; m < BM_COUNT; m++)
        any |= o->method[m];
    if (!any)
        for (int m = 0; m < BM_COUNT; m++)
            o->method[m] = true;
    return 0;
}

/* ---- the shared region and the children ------------------------------------------------- */

static size_t round64(size_t n)
{
    return (n + 63) & ~(size_t)63;
}

static struct bench_shared *map_region(const struct options *o, int *memfd)
{
    size_t maxsize = 0;
    for (size_t i = 0; i < o->nsizes; i++)
        if (o->sizes[i] > maxsize)
            maxsize = o->sizes[i];
    size_t nsamp = (size_t)o->samples * BM_LATENCY_COUNT;
    if (nsamp < o->batches)
        nsamp = o->batches;
    size_t payload_off = round64(sizeof(struct bench_shared));
    size_t samples_off = payload_off + o->raw_slots * round64(maxsize);
    size_t len = samples_off + nsamp * sizeof(int64_t);
    void *p;
    *memfd = -1;
    if (o->exec) {
        /* Without CLOEXEC: the exec'd children map it again from the inherited descriptor. */
        *memfd = memfd_create("ardbench", 0);
        if (*memfd < 0 || ftruncate(*memfd, (off_t)len) < 0) {
            fprintf(stderr, "ardbench: memfd for the shared region: %s\n", strerror(errno));
            return NULL;
        }
        p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, *memfd, 0);
    } else {
        p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    }
    if (p == MAP_FAILED) {
        fprintf(stderr, "ardbench: mmap of %zu bytes: %s\n", len, strerror(errno));
        return NULL;
    }
    struct bench_shared *sh = p;
    memset(sh, 0, len);
    sh->payload_off = payload_off;
    sh->samples_off = samples_off;
    sh->region_len = len;
    return sh;
}

static int run_role(const char *role, struct bench_shared *sh)
{
    if (strcmp(role, "writer") == 0)
        return bench_writer(sh);
    if (strcmp(role, "reader") == 0)
        return bench_reader(sh);
    if (strcmp(role, "ppwriter") == 0)
        return bench_pp_writer(sh);
    if (strcmp(role, "ppreader") == 0)
        return bench_pp_reader(sh);
    return bench_send_cost(sh);
}

/* Entry of an exec'd child: ardbench --child ROLE FD. */
static int child_main(int argc, char **argv)
{
    uint64_t fd;
    if (argc != 4 || parse_u64(argv[3], 1 << 20, &fd) < 0) {
        fprintf(stderr, "ardbench: --child is internal\n");
        return EXIT_USAGE;
    }
    struct bench_shared head;
    if (pread((int)fd, &head, sizeof head, 0) != (ssize_t)sizeof head) {
        fprintf(stderr, "ardbench: --child: cannot read the shared region\n");
        return 1;
    }
    void *p = mmap(NULL, head.region_len, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
    if (p == MAP_FAILED) {
        fprintf(stderr, "ardbench: --child: mmap: %s\n", strerror(errno));
        return 1;
    }
    close((int)fd);
    return run_role(argv[2], p);
}

static pid_t spawn(struct ctx *c, const char *role)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "ardbench: fork: %s\n", strerror(errno));
        return -1;
    }
    if (pid > 0)
        return pid;
    sigprocmask(SIG_SETMASK, &c->oldmask, NULL);
    if (c->o.exec) {
        char fd[16];
        snprintf(fd, sizeof fd, "%d", c->memfd);
        execl(c->self, "ardbench", "--child", role, fd, (char *)NULL);
        fprintf(stderr, "ardbench: exec %s: %s\n", c->self, strerror(errno));
        _exit(127);
    }
    _exit(run_role(role, c->sh));
}

static void describe_status(char *buf, size_t len, const char *who, int status)
{
    if (WIFEXITED(status))
        snprintf(buf, len, "%s exited with status %d", who, WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        snprintf(buf, len, "%s killed by signal %d (%s)", who, WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
    else
        snprintf(buf, len, "%s ended oddly (status 0x%x)", who, status);
}

/* Wait for the row's children (n of them) without using a CPU: sigtimedwait on SIGCHLD.
 * If one fails, the other may be blocked in a wait for ever: it is killed. */
static int wait_children(struct ctx *c, pid_t *pid, const char *const *who, int n,
                         int64_t timeout_ns)
{
    int status[2] = {0, 0};
    bool done[2] = {false, false};
    int left = n, rc = 0;
    int64_t deadline = bench_now_ns() + timeout_ns;
    const char *why = NULL;
    while (left > 0) {
        for (int i = 0; i < n; i++) {
            if (done[i] || waitpid(pid[i], &status[i], WNOHANG) != pid[i])
                continue;
            done[i] = true;
            left--;
            if (!WIFEXITED(status[i]) || WEXITSTATUS(status[i]) != 0)
                rc = -1;
        }
        if (left == 0)
            break;
        int64_t rest = deadline - bench_now_ns();
        if (rc < 0 || rest <= 0 || c->interrupted) {
            why = c->interrupted ? "interrupted" : rc < 0 ? NULL : "row timed out";
            for (int i = 0; i < n; i++)
                if (!done[i]) {
                    kill(pid[i], SIGKILL);
                    waitpid(pid[i], &status[i], 0);
                    done[i] = true;
                }
            rc = -1;
            break;
        }
        struct timespec ts = {.tv_sec = rest / 1000000000LL, .tv_nsec = rest % 1000000000LL};
        int sig = sigtimedwait(&c->waitset, NULL, &ts);
        if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP)
            c->interrupted = true;
    }
    if (rc < 0 && !c->interrupted) {
        struct bench_shared *sh = c->sh;
        fprintf(stderr, "ardbench: run '%s' failed:", c->label);
        if (why != NULL)
            fprintf(stderr, " %s;", why);
        for (int i = 0; i < n; i++) {
            char buf[128];
            const char *err = i == 0 ? sh->err_w : sh->err_r;
            describe_status(buf, sizeof buf, who[i], status[i]);
            fprintf(stderr, " %s%s%s;", buf, *err ? ": " : "", err);
        }
        fputc('\n', stderr);
    }
    return rc;
}

static const char *size_text(size_t size, char *buf, size_t len)
{
    if (size >= (1u << 20) && size % (1u << 20) == 0)
        snprintf(buf, len, "%zu MiB", size >> 20);
    else if (size >= 1024 && size % 1024 == 0)
        snprintf(buf, len, "%zu KiB", size >> 10);
    else
        snprintf(buf, len, "%zu B", size);
    return buf;
}

/* ---- rows ------------------------------------------------------------------------------- */

static struct target target_of(enum bench_method m, enum placement pl, size_t size)
{
    switch (m) {
    case BM_ARD_REC:
        return (struct target){BM_RAW_FUTEX, 1.10, false};
    case BM_ARD_TRYREC:
        return (struct target){BM_RAW_SPIN, 1.50, false};
    case BM_ARD_SPIN:
        return pl == PL_TWO ? (struct target){BM_RAW_SPIN, 2.00, false}
                            : (struct target){BM_RAW_FUTEX, 1.20, false};
    case BM_ARD_POLL:
        return (struct target){BM_RAW_SPIN, 1.30, false};
    case BM_ARD_WAIT16:
        return (struct target){BM_ARD_REC, 1.20, false};
    case BM_PP_POLL: /* the copy's share of the round trip grows with the size */
        return (struct target){BM_PP_RAW, size <= 64 ? 1.20 : size <= 1024 ? 1.10 : 1.30, false};
    case BM_PP_TRYREC: /* no target: the row that shows what the empty polls' copies cost */
        return (struct target){BM_PP_RAW, 0.0, false};
    case BM_ARD_SEND: /* one clock read per send, and little else */
        return (struct target){BM_COUNT, size <= 1024 ? ARD_SEND_OVER_NS : 0.0, true};
    default:
        return (struct target){BM_COUNT, 0.0, false};
    }
}

static const struct row *find_row(const struct ctx *c, enum placement pl, size_t size,
                                  enum bench_method m)
{
    for (size_t i = 0; i < c->nrows; i++)
        if (c->rows[i].pl == pl && c->rows[i].size == size && c->rows[i].method == m &&
            c->rows[i].ok)
            return &c->rows[i];
    return NULL;
}

static bool is_send_cost(enum bench_method m)
{
    return m == BM_RAW_SEND || m == BM_CLOCK_READ || m == BM_ARD_SEND || m == BM_ARD_SEND_STAMPED;
}

static uint32_t wanted_samples(const struct options *o, enum bench_method m)
{
    return is_send_cost(m) ? o->batches : o->samples;
}

static void add_row(struct ctx *c, enum placement pl, size_t size, enum bench_method m)
{
    if (c->nrows == MAX_ROWS)
        return;
    struct row *r = &c->rows[c->nrows++];
    *r = (struct row){.pl = pl, .size = size, .method = m, .ok = true};
    r->want = wanted_samples(&c->o, m);
    r->v = malloc((size_t)r->want * sizeof *r->v);
    if (r->v == NULL) {
        fprintf(stderr, "ardbench: out of memory\n");
        exit(1);
    }
}

/* Run rows[first .. first+count) once, together: one process for a send-cost row, or a
 * writer and a reader that interleave the latency methods of those rows packet by packet.
 * `share` samples per row (batches for send cost) go into the rows' pools. */
static void run_job(struct ctx *c, size_t first, size_t count, uint32_t share, uint32_t round)
{
    struct bench_shared *sh = c->sh;
    const struct options *o = &c->o;
    struct row *r0 = &c->rows[first];
    for (size_t i = first; i < first + count; i++)
        if (!c->rows[i].ok)
            return;
    if (share == 0)
        return;

    /* Reset everything the previous run left in the region. */
    memset(&sh->spec, 0, sizeof sh->spec);
    atomic_store(&sh->reader_ready, 0);
    atomic_store(&sh->abort, 0);
    atomic_store(&sh->ack, 0);
    atomic_store(&sh->ack_t, 0);
    atomic_store(&sh->pong, 0);
    atomic_store(&sh->raw_seq, 0);
    atomic_store(&sh->raw_waiters, 0);
    memset(sh->nrec, 0, sizeof sh->nrec);
    memset(sh->skipped, 0, sizeof sh->skipped);
    memset(sh->anomalies, 0, sizeof sh->anomalies);
    sh->err_w[0] = sh->err_r[0] = '\0';

    struct bench_spec *sp = &sh->spec;
    bool send = is_send_cost(r0->method);
    sp->method = r0->method;
    for (size_t i = first; i < first + count; i++)
        sp->methods |= 1u << c->rows[i].method;
    sp->seed = 0x2545f4914f6cdd1dull * (first + 1) + round;
    sp->size = r0->size;
    sp->cpu_w = o->cpu_a;
    sp->cpu_r = r0->pl == PL_ONE ? o->cpu_a : o->cpu_b;
    /* On one CPU a spinning reader above the writer would starve it: the writer is higher. */
    sp->prio_w = o->fifo > 0 ? o->fifo + 1 : 0;
    sp->prio_r = o->fifo;
    sp->nwarm = o->warmup;
    sp->nsamples = share;
    sp->pace_min_ns = o->pace_min_ns;
    sp->pace_max_ns = o->pace_max_ns;
    sp->spin_ns = o->spin_ns;
    sp->wait_ports = o->wait_ports;
    sp->row_limit_ns = o->row_limit_ns;
    sp->batches = share;
    sp->batch_len = o->batch_len;
    sp->raw_slots = o->raw_slots;
    snprintf(sp->domain, sizeof sp->domain, "%s", c->domain);
    snprintf(sp->conn, sizeof sp->conn, "job%zu.%u", first, round);

    char sz[32];
    int off =
        snprintf(c->label, sizeof c->label, "%s, %s,",
                 send ? "one process" : placement_name[r0->pl], size_text(r0->size, sz, sizeof sz));
    for (size_t i = first; i < first + count && off < (int)sizeof c->label; i++)
        off += snprintf(c->label + off, sizeof c->label - (size_t)off, " %s",
                        method_name[c->rows[i].method]);
    pid_t pid[2];
    int n = 0, rc;
    static const char *const who_lat[2] = {"writer", "reader"};
    static const char *const who_send[1] = {"sender"};
    int64_t timeout = o->row_limit_ns + 30000000000LL;
    if (send) {
        if ((pid[n] = spawn(c, "send")) > 0)
            n++;
        rc = n == 1 ? wait_children(c, pid, who_send, n, timeout) : -1;
    } else {
        bool pp = bench_is_pingpong(r0->method);
        if ((pid[n] = spawn(c, pp ? "ppwriter" : "writer")) > 0)
            n++;
        if (n == 1 && (pid[n] = spawn(c, pp ? "ppreader" : "reader")) > 0)
            n++;
        if (n < 2) {
            for (int i = 0; i < n; i++) {
                kill(pid[i], SIGKILL);
                waitpid(pid[i], NULL, 0);
            }
            rc = -1;
        } else {
            rc = wait_children(c, pid, who_lat, n, timeout);
        }
    }
    for (size_t i = first; i < first + count; i++) {
        struct row *r = &c->rows[i];
        if (rc < 0) {
            r->ok = false;
            continue;
        }
        size_t got = sh->nrec[r->method] < share ? sh->nrec[r->method] : share;
        if (got > r->want - r->n)
            got = r->want - r->n;
        memcpy(r->v + r->n, bench_samples(sh, r->method), got * sizeof *r->v);
        r->n += got;
        r->skipped += sh->skipped[r->method];
        r->anomalies += sh->anomalies[r->method];
    }
    if (rc < 0 && !c->interrupted)
        c->failures++;
}

static void finish_stats(struct row *r)
{
    if (r->ok)
        bench_stats_compute(r->v, r->n, &r->st);
}

/* After every row's statistics: the ratio to the baseline and the verdict. */
static void finish_target(const struct ctx *c, struct row *r)
{
    struct target t = target_of(r->method, r->pl, r->size);
    if (!r->ok || r->st.n == 0 || t.limit <= 0.0)
        return;
    if (t.base == BM_COUNT) {
        double limit = t.limit;
        if (t.plus_clock) {
            const struct row *raw = find_row(c, r->pl, r->size, BM_RAW_SEND);
            const struct row *clk = find_row(c, r->pl, r->size, BM_CLOCK_READ);
            if (raw == NULL || clk == NULL || raw->st.n == 0 || clk->st.n == 0)
                return;
            limit += (double)(raw->st.median + clk->st.median) / 1000.0;
        }
        r->has_target = true;
        r->plus_clock = t.plus_clock;
        r->ratio = (double)r->st.median / 1000.0; /* send cost: ps -> ns */
        r->limit = limit;
        r->base = BM_COUNT;
        r->pass = r->ratio <= limit;
        return;
    }
    const struct row *b = find_row(c, r->pl, r->size, t.base);
    if (b == NULL || b->st.median <= 0)
        return;
    r->has_target = true;
    r->base = t.base;
    r->limit = t.limit;
    r->ratio = (double)r->st.median / (double)b->st.median;
    r->pass = r->ratio <= t.limit;
}

/* ---- output ----------------------------------------------------------------------------- */

static void print_host(const struct ctx *c, int argc, char **argv)
{
    struct utsname u;
    char model[128] = "unknown CPU", clocksrc[64] = "unknown";
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f != NULL) {
        char line[256];
        while (fgets(line, sizeof line, f) != NULL)
            if (strncmp(line, "model name", 10) == 0 && strchr(line, ':') != NULL) {
                snprintf(model, sizeof model, "%s", strchr(line, ':') + 2);
                model[strcspn(model, "\n")] = '\0';
                break;
            }
        fclose(f);
    }
    f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
    if (f != NULL) {
        if (fgets(clocksrc, sizeof clocksrc, f) != NULL)
            clocksrc[strcspn(clocksrc, "\n")] = '\0';
        fclose(f);
    }
    if (uname(&u) < 0)
        memset(&u, 0, sizeof u);
    const struct options *o = &c->o;
    char cmd[512];
    size_t off = 0;
    for (int i = 0; i < argc && off < sizeof cmd; i++)
        off += (size_t)snprintf(cmd + off, sizeof cmd - off, "%s%s", i ? " " : "", argv[i]);
    printf("ardbench (libardnet %d.%d.%d): %s\n", ARD_VERSION_MAJOR, ARD_VERSION_MINOR,
           ARD_VERSION_PATCH, cmd);
    printf("host: %s %s %s, %s, %ld CPUs online, clocksource %s\n", u.sysname, u.release, u.machine,
           model, sysconf(_SC_NPROCESSORS_ONLN), clocksrc);
    char where[96];
    if (o->placement[PL_TWO])
        snprintf(where, sizeof where,
                 "writer on CPU %d, reader on CPU %d (two CPUs) or %d (one CPU)", o->cpu_a,
                 o->cpu_b, o->cpu_a);
    else
        snprintf(where, sizeof where, "writer and reader on CPU %d", o->cpu_a);
    printf("run:  %s; %s; processes %s\n", where, o->fifo ? "SCHED_FIFO" : "default scheduling",
           o->exec ? "forked and exec'd" : "forked");
    printf("      %u samples per row (%u round%s) after %u warm-up packets; %s\n", o->samples,
           o->rounds, o->rounds == 1 ? "" : "s", o->warmup,
           o->separate ? "each method in its own processes"
                       : "methods interleaved packet by packet in random order");
    printf("      gap %lld-%lld us between sends and >= %lld us after the reader's ack; "
           "spin-rec spins up to %lld ns; raw buffers %u; wait rows on %u ports\n",
           (long long)(o->pace_min_ns / 1000), (long long)(o->pace_max_ns / 1000),
           (long long)(o->pace_min_ns / 1000), (long long)o->spin_ns, o->raw_slots, o->wait_ports);
}

static void print_row_text(const struct ctx *c, const struct row *r)
{
    char sz[32];
    if (is_send_cost(r->method)) {
        const struct bench_stats *s = &r->st;
        printf("%-7s %-14s %7zu %9.1f %9.1f %9.1f %9.1f  ", size_text(r->size, sz, sizeof sz),
               method_name[r->method], s->n, s->min / 1000.0, s->median / 1000.0, s->p99 / 1000.0,
               s->max / 1000.0);
        if (r->method == BM_ARD_SEND || r->method == BM_ARD_SEND_STAMPED) {
            const struct row *b = find_row(c, r->pl, r->size, BM_RAW_SEND);
            if (b != NULL && b->st.median > 0)
                printf("%.2fx raw publish", (double)s->median / (double)b->st.median);
            if (r->has_target && r->plus_clock)
                printf("%s(target <= raw publish + one clock read + %.0f ns = %.1f ns) %s",
                       b != NULL ? "  " : "", ARD_SEND_OVER_NS, r->limit,
                       r->pass ? "PASS" : "MISS");
            else if (r->has_target)
                printf("%s(target <= %.0f ns) %s", b != NULL ? "  " : "", r->limit,
                       r->pass ? "PASS" : "MISS");
        }
        putchar('\n');
        return;
    }
    const struct bench_stats *s = &r->st;
    printf("%-9s %-7s %-12s %7zu %7lld %7lld %7lld %7lld %8lld  ", placement_name[r->pl],
           size_text(r->size, sz, sizeof sz), method_name[r->method], s->n, (long long)s->min,
           (long long)s->median, (long long)s->p99, (long long)s->p999, (long long)s->max);
    if (r->has_target)
        printf("%.2fx %s (<= %.2fx) %s", r->ratio, method_name[r->base], r->limit,
               r->pass ? "PASS" : "MISS");
    else if (r->method == BM_RAW_FUTEX || r->method == BM_RAW_SPIN || r->method == BM_PP_RAW)
        printf("baseline");
    else if (r->method == BM_PP_TRYREC || r->method == BM_PP_STAMPED || r->method == BM_PP_HEAD ||
             r->method == BM_PP_SEQ || r->method == BM_PP_INFO) {
        const struct row *b = find_row(c, r->pl, r->size, BM_PP_RAW);
        if (b != NULL && b->st.median > 0)
            printf("%.2fx raw spin (no target)", (double)s->median / (double)b->st.median);
    }
    putchar('\n');
    if (s->n < r->want)
        printf("          ^ stopped early after --row-seconds: %zu of %u samples\n", s->n, r->want);
    if (r->skipped)
        printf("          ^ the reader missed %llu packets (the protocol should prevent it)\n",
               (unsigned long long)r->skipped);
    if (r->anomalies)
        printf("          ^ %llu packets carried a library send time outside [t0, t1]\n",
               (unsigned long long)r->anomalies);
}

static void print_row_csv(const struct row *r)
{
    const struct bench_stats *s = &r->st;
    double k = is_send_cost(r->method) ? 1000.0 : 1.0; /* send cost is kept in ps */
    printf("%s,%zu,%s,%zu,%.1f,%.1f,%.1f,%.1f,%.1f,",
           is_send_cost(r->method) ? "single" : placement_key[r->pl], r->size,
           method_csv[r->method], s->n, s->min / k, s->median / k, s->p99 / k, s->p999 / k,
           s->max / k);
    if (r->has_target)
        printf("%s,%.3f,%.2f,%s\n", r->base == BM_COUNT ? "ns" : method_csv[r->base], r->ratio,
               r->limit, r->pass ? "PASS" : "MISS");
    else
        printf(",,,\n");
}

static void print_summary(const struct ctx *c)
{
    int pass = 0, miss = 0;
    for (size_t i = 0; i < c->nrows; i++)
        if (c->rows[i].ok && c->rows[i].has_target)
            c->rows[i].pass ? pass++ : miss++;
    printf("\ntargets: %d PASS, %d MISS (reported, not asserted)\n", pass, miss);
    for (size_t i = 0; i < c->nrows; i++) {
        const struct row *r = &c->rows[i];
        char sz[32];
        if (!r->ok || !r->has_target || r->pass)
            continue;
        if (r->base == BM_COUNT)
            printf("  MISS %s %s: %.1f ns median, target %.1f ns (%.1f%% over)\n",
                   size_text(r->size, sz, sizeof sz), method_name[r->method], r->ratio, r->limit,
                   (r->ratio / r->limit - 1.0) * 100.0);
        else
            printf("  MISS %s %s %s: %.3fx %s, target %.2fx (%.1f%% over)\n", placement_name[r->pl],
                   size_text(r->size, sz, sizeof sz), method_name[r->method], r->ratio,
                   method_name[r->base], r->limit, (r->ratio / r->limit - 1.0) * 100.0);
    }
    if (c->failures)
        printf("%d row(s) failed: see the messages above\n", c->failures);
}

/* ---- main ------------------------------------------------------------------------------- */

static int allowed_cpus(struct options *o)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) < 0) {
        fprintf(stderr, "ardbench: sched_getaffinity: %s\n", strerror(errno));
        return -1;
    }
    if (o->cpu_a >= 0) {
        for (int i = 0; i < 2; i++) {
            int cpu = i ? o->cpu_b : o->cpu_a;
            if (!CPU_ISSET(cpu, &set)) {
                fprintf(stderr, "ardbench: --cpus: CPU %d is not allowed for this process\n", cpu);
                return -1;
            }
        }
        return 0;
    }
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (!CPU_ISSET(cpu, &set))
            continue;
        if (o->cpu_a < 0)
            o->cpu_a = cpu;
        else if (o->cpu_b < 0)
            o->cpu_b = cpu;
    }
    if (o->cpu_a < 0)
        return -1;
    if (o->cpu_b < 0) {
        if (o->placement[PL_TWO])
            fprintf(stderr, "ardbench: only one CPU allowed: the two-CPU rows are left out\n");
        o->placement[PL_TWO] = false;
        o->placement[PL_ONE] = true;
        o->cpu_b = o->cpu_a;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "--child") == 0)
        return child_main(argc, argv);

    static struct ctx c; /* static: the row table is large */
    c.self = "/proc/self/exe";
    if (parse_options(argc, argv, &c.o) < 0)
        return EXIT_USAGE;
    if (allowed_cpus(&c.o) < 0)
        return EXIT_USAGE;
    /* Started by ardstart? The rows' ard_init must not answer for us. */
    unsetenv("ARD_READY_FD");
    snprintf(c.domain, sizeof c.domain, "ardbench_%ld", (long)getpid());
    if ((c.sh = map_region(&c.o, &c.memfd)) == NULL)
        return 1;

    /* Signals are taken synchronously in wait_children, so that the domain is cleaned up. */
    sigemptyset(&c.waitset);
    sigaddset(&c.waitset, SIGCHLD);
    sigaddset(&c.waitset, SIGINT);
    sigaddset(&c.waitset, SIGTERM);
    sigaddset(&c.waitset, SIGHUP);
    sigprocmask(SIG_BLOCK, &c.waitset, &c.oldmask);

    const struct options *o = &c.o;
    if (o->csv)
        printf("placement,size,method,n,min_ns,median_ns,p99_ns,p999_ns,max_ns,baseline,ratio,"
               "target,verdict\n");
    else
        print_host(&c, argc, argv);

    static const enum bench_method latency_order[] = {BM_RAW_FUTEX,  BM_RAW_SPIN, BM_ARD_REC,
                                                      BM_ARD_TRYREC, BM_ARD_SPIN, BM_ARD_POLL,
                                                      BM_ARD_WAIT16};
    for (int pl = 0; pl < PL_COUNT; pl++)
        for (size_t i = 0; i < o->nsizes && o->placement[pl]; i++)
            for (size_t k = 0; k < sizeof latency_order / sizeof *latency_order; k++)
                if (o->method[latency_order[k]])
                    add_row(&c, (enum placement)pl, o->sizes[i], latency_order[k]);
    size_t npaced = c.nrows;
    /* The ping-pong needs two CPUs: on one, a side spinning for the other's answer keeps it
     * from running until the scheduler preempts it, and the rows would time the time slice. */
    for (size_t i = 0; i < o->nsizes && o->placement[PL_TWO]; i++)
        for (int m = BM_PP_RAW; m <= BM_PP_INFO; m++)
            if (o->method[m])
                add_row(&c, PL_TWO, o->sizes[i], (enum bench_method)m);
    size_t nlatency = c.nrows;
    for (size_t i = 0; i < o->nsizes; i++)
        for (int m = BM_RAW_SEND; m <= BM_ARD_SEND_STAMPED; m++)
            if (o->method[m])
                add_row(&c, PL_ONE, o->sizes[i], (enum bench_method)m);

    /* Each round runs every job once with its share of the samples, so that a slow spell
     * of the machine is spread over all rows instead of landing on a few. A job is one row,
     * or (unless --separate) all latency rows of one placement and size, interleaved. */
    for (uint32_t round = 0; round < o->rounds && !c.interrupted; round++)
        for (size_t i = 0; i < c.nrows && !c.interrupted;) {
            struct row *r = &c.rows[i];
            size_t count = 1;
            while (!o->separate && !is_send_cost(r->method) && i + count < c.nrows &&
                   !is_send_cost(c.rows[i + count].method) && c.rows[i + count].pl == r->pl &&
                   c.rows[i + count].size == r->size &&
                   bench_is_pingpong(c.rows[i + count].method) == bench_is_pingpong(r->method))
                count++;
            uint64_t from = (uint64_t)r->want * round / o->rounds;
            uint64_t to = (uint64_t)r->want * (round + 1) / o->rounds;
            run_job(&c, i, count, (uint32_t)(to - from), round);
            i += count;
        }
    for (size_t i = 0; i < c.nrows; i++)
        finish_stats(&c.rows[i]);
    for (size_t i = 0; i < c.nrows; i++)
        finish_target(&c, &c.rows[i]);

    for (size_t i = 0; i < c.nrows; i++) {
        const struct row *r = &c.rows[i];
        if (i == 0 && npaced > 0 && !o->csv)
            printf("\none-way latency in ns: reader's CLOCK_MONOTONIC after its copy minus the "
                   "writer's just before the send call\n%-9s %-7s %-12s %7s %7s %7s %7s %7s %8s  "
                   "%s\n",
                   "placement", "size", "method", "n", "min", "median", "p99", "p99.9", "max",
                   "median vs baseline (target)");
        if (i == npaced && npaced < nlatency && !o->csv)
            printf("\nback-to-back ping-pong, two CPUs: round trip in ns, writer's clock after "
                   "it saw the reader's answer minus before its send call; no pacing\n%-9s "
                   "%-7s %-12s %7s %7s %7s %7s %7s %8s  %s\n",
                   "placement", "size", "method", "n", "min", "median", "p99", "p99.9", "max",
                   "median vs raw spin (target)");
        if (i == nlatency && !o->csv)
            printf("\ncost of one send with no reader blocked, ns per send, and of one "
                   "clock_gettime(CLOCK_MONOTONIC) (CPU %d; %u batches of %u calls; spread over "
                   "batches)\n%-7s %-14s %7s %9s %9s %9s %9s  %s\n",
                   o->cpu_a, o->batches, o->batch_len, "size", "method", "batches", "min", "median",
                   "p99", "max", "median vs raw publish (target)");
        if (r->ok && r->st.n > 0)
            o->csv ? print_row_csv(r) : print_row_text(&c, r);
    }
    if (!o->csv)
        print_summary(&c);

    int rc = ard_domain_unlink(c.domain);
    if (rc < 0 && rc != ARD_ENOENT)
        fprintf(stderr, "ardbench: removing domain %s: %s\n", c.domain, ard_errdetail());
    if (c.interrupted) {
        fprintf(stderr, "ardbench: interrupted\n");
        return 130;
    }
    return c.failures ? 1 : 0;
}
