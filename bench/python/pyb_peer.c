/*
 * pyb_peer - the C side of the Python binding's benchmark (bench/python/pybench.py).
 *
 *   pyb_peer write SIZE N GAP_MIN_US GAP_MAX_US CPU [--ard out=CONN]
 *       send N packets, a random gap apart; then print "seq t0" per packet, t0 being
 *       CLOCK_MONOTONIC just before the ard_send call
 *   pyb_peer read SIZE N CPU SPIN_NS [--ard in=CONN]
 *       print "ready", then take packets with ard_rec (spinning up to SPIN_NS first) until
 *       packet N or 2 s without a packet; then print "seq t1" per packet, t1 being
 *       CLOCK_MONOTONIC right after ard_rec returned
 *   pyb_peer cost SIZE BATCHES LEN CPU
 *       median over BATCHES of ns per call of LEN ard_send, and of LEN ard_tryrec that find
 *       the same packet again: prints "send NS" and "tryrec NS"
 *
 * The packets are opaque bytes; no stamp travels in them: the driver pairs t0 and t1 by seq.
 * With $PYB_PRIO set (1..99) the process runs at that SCHED_FIFO priority.
 * Exit: 0 ok, 1 library or system error, 100 usage.
 */
#include "ardnet.h"

#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int fail(const char *what)
{
    fprintf(stderr, "pyb_peer: %s: %s\n", what, ard_errdetail());
    return 1;
}

/* Pin to `cpu`; SCHED_FIFO at $PYB_PRIO when set. */
static int pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) < 0) {
        perror("pyb_peer: sched_setaffinity");
        return -1;
    }
    const char *prio = getenv("PYB_PRIO");
    if (prio != NULL && *prio != '\0') {
        struct sched_param sp = {.sched_priority = atoi(prio)};
        if (sched_setscheduler(0, SCHED_FIFO, &sp) < 0) {
            perror("pyb_peer: sched_setscheduler(SCHED_FIFO)");
            return -1;
        }
    }
    return 0;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static void print_pairs(const uint64_t *seq, const int64_t *t, long n)
{
    for (long i = 0; i < n; i++)
        printf("%" PRIu64 " %" PRId64 "\n", seq[i], t[i]);
}

static int writer(size_t size, long n, long gmin, long gmax, int cpu, int *argc, char **argv)
{
    ard_port *out = ard_create("out", ARD_OUT, size, NULL);
    if (out == NULL || ard_init(argc, argv) < 0)
        return fail("start");
    if (pin(cpu) < 0)
        return 1;
    unsigned char *pkt = calloc(1, size);
    uint64_t *seq = calloc((size_t)n, sizeof *seq);
    int64_t *t0 = calloc((size_t)n, sizeof *t0);
    if (pkt == NULL || seq == NULL || t0 == NULL)
        return 1;
    srand(12345);
    for (long k = 0; k < n; k++) {
        long us = gmin + (gmax > gmin ? rand() % (gmax - gmin + 1) : 0);
        struct timespec ts = {0, us * 1000};
        nanosleep(&ts, NULL);
        int64_t t = ard_now_ns();
        if (ard_send(out, pkt) < 0)
            return fail("send");
        t0[k] = t;
        seq[k] = ard_port_info(out).seq;
    }
    print_pairs(seq, t0, n);
    return 0;
}

static int reader(size_t size, long n, int cpu, long spin, int *argc, char **argv)
{
    ard_port *in = ard_create("in", ARD_IN, size, NULL);
    if (in == NULL || ard_init(argc, argv) < 0)
        return fail("start");
    if (pin(cpu) < 0 || (spin > 0 && ard_port_set_spin(in, spin) < 0))
        return 1;
    unsigned char *pkt = calloc(1, size);
    uint64_t *seq = calloc((size_t)n, sizeof *seq);
    int64_t *t1 = calloc((size_t)n, sizeof *t1);
    if (pkt == NULL || seq == NULL || t1 == NULL)
        return 1;
    printf("ready\n");
    fflush(stdout);
    long k = 0;
    while (k < n) {
        int rc = ard_rec_timed(in, pkt, 2000000000LL);
        int64_t t = ard_now_ns();
        if (rc == ARD_ETIMEDOUT)
            break;
        if (rc < 0)
            return fail("rec");
        t1[k] = t;
        seq[k] = ard_port_info(in).seq;
        if (seq[k++] >= (uint64_t)n)
            break; /* the writer's last packet: no need to wait for the timeout */
    }
    print_pairs(seq, t1, k);
    return 0;
}

static int64_t batch_median(int64_t *v, long batches)
{
    qsort(v, (size_t)batches, sizeof *v, cmp_i64);
    return v[batches / 2];
}

static int cost(size_t size, long batches, long len, int cpu)
{
    ard_port *out = ard_create("out", ARD_OUT, size, NULL);
    ard_port *in = ard_create_on("in", "out", ARD_IN, size, NULL);
    if (out == NULL || in == NULL || ard_init(NULL, NULL) < 0)
        return fail("start");
    if (pin(cpu) < 0)
        return 1;
    unsigned char *pkt = calloc(1, size);
    int64_t *v = calloc((size_t)batches, sizeof *v);
    if (pkt == NULL || v == NULL)
        return 1;
    for (long b = 0; b < batches; b++) {
        int64_t t = ard_now_ns();
        for (long i = 0; i < len; i++)
            if (ard_send(out, pkt) < 0)
                return fail("send");
        v[b] = ard_now_ns() - t;
    }
    printf("send %.1f\n", (double)batch_median(v, batches) / (double)len);
    if (ard_tryrec(in, pkt) != 1)
        return fail("tryrec");
    for (long b = 0; b < batches; b++) {
        int64_t t = ard_now_ns();
        for (long i = 0; i < len; i++)
            if (ard_tryrec(in, pkt) != 0)
                return fail("tryrec");
        v[b] = ard_now_ns() - t;
    }
    printf("tryrec %.1f\n", (double)batch_median(v, batches) / (double)len);
    return ard_conn_unlink(NULL, "out") < 0 ? fail("unlink") : 0;
}

int main(int argc, char **argv)
{
    const char *usage = "usage: pyb_peer write SIZE N GAP_MIN_US GAP_MAX_US CPU [--ard ...]\n"
                        "       pyb_peer read SIZE N CPU SPIN_NS [--ard ...]\n"
                        "       pyb_peer cost SIZE BATCHES LEN CPU\n";
    if (argc >= 7 && strcmp(argv[1], "write") == 0)
        return writer((size_t)atol(argv[2]), atol(argv[3]), atol(argv[4]), atol(argv[5]),
                      atoi(argv[6]), &argc, argv);
    if (argc >= 6 && strcmp(argv[1], "read") == 0)
        return reader((size_t)atol(argv[2]), atol(argv[3]), atoi(argv[4]), atol(argv[5]), &argc,
                      argv);
    if (argc == 6 && strcmp(argv[1], "cost") == 0)
        return cost((size_t)atol(argv[2]), atol(argv[3]), atol(argv[4]), atoi(argv[5]));
    fputs(usage, stderr);
    return 100;
}
