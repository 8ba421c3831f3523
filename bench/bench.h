/*
 * bench.h - declarations shared by the files of ardbench (bench/).
 *
 * ardbench measures each placement and packet size in one run of two fresh processes, a
 * writer and a reader, that take the latency methods in turns packet by packet. They share
 * one region of plain shared memory with the parent: the run's parameters, the hand-shake
 * words, the raw baselines' packet area and the reader's samples.
 */
#ifndef ARDBENCH_H
#define ARDBENCH_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* What a row measures. The first two are the baselines written here on plain shared memory. */
enum bench_method {
    BM_RAW_FUTEX,  /* writer copies, bumps a counter, FUTEX_WAKE if a waiter flag is set */
    BM_RAW_SPIN,   /* writer copies, bumps a counter; reader spins on the counter */
    BM_ARD_REC,    /* ard_send -> ard_rec (blocking, no spin) */
    BM_ARD_TRYREC, /* ard_send -> reader spinning on ard_tryrec until it returns 1 */
    BM_ARD_SPIN,   /* ard_send -> ard_rec with ard_port_set_spin (spin-then-block) */
    BM_ARD_POLL,   /* ard_send -> reader spinning on ard_poll, then one ard_tryrec */
    BM_ARD_WAIT16, /* ard_send -> ard_wait on spec.wait_ports ports (all but one idle) */
    /* Back-to-back ping-pong (bench_pp_*): no pacing, the reader polls without pause and
     * answers each packet at once on the `pong` word; the writer spins on it and times the
     * round trip. The answer path is the same raw word for all three. */
    BM_PP_RAW,     /* raw spin: counter + one copy when it moved */
    BM_PP_TRYREC,  /* ard_send -> ard_tryrec in a loop until it returns 1 */
    BM_PP_POLL,    /* ard_send -> ard_poll in a loop, then one ard_tryrec */
    BM_PP_STAMPED, /* as BM_PP_POLL, sent with ard_send_stamped: no clock read */
    /* The receive side's steps (steps.c, white-box), sent as BM_PP_STAMPED is; each adds one
     * step of what ard_poll + ard_tryrec do, without their calls and argument checks. */
    BM_PP_HEAD, /* spin on the connection's head word, copy the slot's payload unchecked */
    BM_PP_SEQ,  /* ... with the slot's sequence lock checked before and after the copy */
    BM_PP_INFO, /* ... and the send times and packet info (seq, skipped) kept as ard_tryrec does */
    BM_LATENCY_COUNT, /* the methods above are latency methods, those below send costs */
    BM_RAW_SEND = BM_LATENCY_COUNT, /* cost of the raw futex writer's publish, no waiter */
    BM_CLOCK_READ,                  /* cost of one clock_gettime(CLOCK_MONOTONIC) (vDSO) */
    BM_ARD_SEND,                    /* cost of one ard_send, no reader blocked */
    BM_ARD_SEND_STAMPED,            /* the same with ard_send_stamped: no clock read */
    BM_COUNT
};

/* Parameters of one row, written by the parent before it starts the children. */
struct bench_spec {
    enum bench_method method; /* send-cost rows */
    uint32_t methods;         /* latency rows: bit per method, interleaved packet by packet */
    uint64_t seed;            /* of the order in which those methods take turns */
    size_t size;              /* packet bytes, >= sizeof(struct bench_stamp) */
    int cpu_w, cpu_r;         /* CPUs the writer and the reader are pinned to */
    int prio_w, prio_r;       /* SCHED_FIFO priorities, 0: leave the default policy */
    uint32_t nwarm;           /* packets sent first and not recorded (rounded up to whole turns) */
    uint32_t nsamples;        /* packets recorded per method (at most) */
    int64_t pace_min_ns;      /* random gap before each send, after the reader's ack */
    int64_t pace_max_ns;
    int64_t spin_ns;      /* BM_ARD_SPIN: spin time given to ard_port_set_spin */
    int64_t row_limit_ns; /* the writer stops early (with fewer samples) after this long */
    uint32_t batches;     /* send-cost rows: number of timed batches */
    uint32_t batch_len;   /* send-cost rows: sends per batch */
    uint32_t raw_slots;   /* raw baselines: packet buffers used in turn (1: a single one) */
    uint32_t wait_ports;  /* BM_ARD_WAIT16: ports waited on, the measured one first */
    char domain[64];
    char conn[64];
};

/* Header at the start of every packet the writer sends. */
struct bench_stamp {
    int64_t t0;   /* writer's CLOCK_MONOTONIC just before the send call */
    uint64_t seq; /* 1, 2, ...; BENCH_LAST_SEQ marks the end of the row */
};
#define BENCH_LAST_SEQ UINT64_MAX
#define BENCH_WAIT_MAX 160

#define BENCH_ERR_LEN 256

struct bench_shared {
    struct bench_spec spec;

    /* Hand-shake, on their own cache lines so they never share one with the measured words. */
    _Alignas(64) _Atomic uint32_t reader_ready; /* reader is attached and about to wait */
    _Atomic uint32_t abort;                     /* either side gave up: the other stops */
    _Alignas(64) _Atomic uint64_t ack;          /* seq of the last packet the reader timed */
    _Atomic int64_t ack_t;                      /* and the reader's clock when it got it */
    _Alignas(64) _Atomic uint64_t pong;         /* ping-pong: seq of the packet answered */

    /* The raw baselines' hand-off words: the counter (the futex word) and the waiter flag. */
    _Alignas(64) _Atomic uint32_t raw_seq;
    _Atomic uint32_t raw_waiters;

    /* Results, written by the children, read by the parent after both exited. */
    _Alignas(64) uint32_t nrec[BM_COUNT]; /* samples recorded per method */
    uint64_t skipped[BM_COUNT];           /* packets the reader never saw (should stay 0) */
    uint64_t anomalies[BM_COUNT];         /* ard: library send time outside [t0, t1] */
    char err_w[BENCH_ERR_LEN];            /* writer's error text, "" if none */
    char err_r[BENCH_ERR_LEN];

    size_t payload_off; /* raw baselines' packet area, from the start of this struct */
    size_t samples_off; /* int64_t samples[], from the start of this struct: for latency,
                         * spec.nsamples per method in method order; for send cost, one per
                         * batch */
    size_t region_len;  /* length of the whole mapping */
};

static inline unsigned char *bench_payload(struct bench_shared *sh)
{
    return (unsigned char *)sh + sh->payload_off;
}

/* The raw baselines' buffer that carries packet number `count`. */
static inline unsigned char *bench_raw_slot(struct bench_shared *sh, uint32_t count)
{
    size_t stride = (sh->spec.size + 63) & ~(size_t)63;
    return bench_payload(sh) + (size_t)(count % sh->spec.raw_slots) * stride;
}

static inline int64_t *bench_samples(struct bench_shared *sh, enum bench_method m)
{
    int64_t *v = (int64_t *)(void *)((unsigned char *)sh + sh->samples_off);
    return m < BM_LATENCY_COUNT ? v + (size_t)m * sh->spec.nsamples : v;
}

/* roles.c: the child processes. Each returns an exit status (0 ok, 1 failed: err_* says why). */
int bench_writer(struct bench_shared *sh);
int bench_reader(struct bench_shared *sh);
int bench_send_cost(struct bench_shared *sh);
int bench_pp_writer(struct bench_shared *sh);
int bench_pp_reader(struct bench_shared *sh);

static inline int bench_is_pingpong(enum bench_method m)
{
    return m == BM_PP_RAW || m == BM_PP_TRYREC || m == BM_PP_POLL || m == BM_PP_STAMPED ||
           m == BM_PP_HEAD || m == BM_PP_SEQ || m == BM_PP_INFO;
}

/* steps.c: receive one packet newer than the last one `in` took, by method m (BM_PP_HEAD,
 * BM_PP_SEQ, BM_PP_INFO), into buf. 0, or 1 when the run was aborted or the slot never
 * settled. */
struct ard_port;
int bench_step_receive(struct bench_shared *sh, enum bench_method m, struct ard_port *in,
                       unsigned char *buf);

/* CLOCK_MONOTONIC in ns. */
int64_t bench_now_ns(void);

/* stats.c */
struct bench_stats {
    size_t n;
    int64_t min, median, p99, p999, max;
};

/* Sorts v[0..n) in place and fills st (nearest-rank percentiles). n == 0 gives all zeroes. */
void bench_stats_compute(int64_t *v, size_t n, struct bench_stats *st);

#endif /* ARDBENCH_H */
