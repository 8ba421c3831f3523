/*
 * roles.c - the processes of one ardbench run: the writer, the reader, and the single
 * process that times send calls.
 *
 * Every latency method uses the same protocol, whatever carries the packet: the writer sends,
 * sleeps a random gap, waits until the reader has timed that packet (the `ack` word) at least
 * pace_min ago, so that the reader is back in its wait, then stamps its clock into the next
 * packet's header and sends it. The reader receives, reads its clock, records the difference
 * and acks. So each packet is measured, none overlaps the next, and ard and the raw baselines
 * are timed identically. The methods of a run take turns packet by packet (see schedule).
 */
#include "bench.h"

#include "ardnet.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define ACK_TIMEOUT_NS (5 * 1000000000LL)    /* a reader that stalls this long is broken */
#define READY_TIMEOUT_NS (30 * 1000000000LL) /* attach can be slow on a loaded machine */
#define ACK_POLL_NS 5000 /* writer's first poll of the ack word; doubles up to the max */
#define ACK_POLL_MAX_NS 1000000
#define SEND_WARMUP 1000

int64_t bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ volatile("yield" ::: "memory");
#endif
}

static void sleep_ns(int64_t ns)
{
    struct timespec ts = {.tv_sec = ns / 1000000000LL, .tv_nsec = ns % 1000000000LL};
    while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
        ;
}

/* Record a failure for the parent and tell the other side to stop. Returns 1 (exit status). */
static int fail(struct bench_shared *sh, char *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(struct bench_shared *sh, char *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, BENCH_ERR_LEN, fmt, ap);
    va_end(ap);
    atomic_store(&sh->abort, 1);
    return 1;
}

static bool aborted(struct bench_shared *sh)
{
    return atomic_load_explicit(&sh->abort, memory_order_relaxed) != 0;
}

/* Not the private futex ops: the word is shared between processes. */
static void futex_wait(_Atomic uint32_t *word, uint32_t val)
{
    syscall(SYS_futex, word, FUTEX_WAIT, val, NULL, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *word)
{
    syscall(SYS_futex, word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/* Pin to one CPU, optionally SCHED_FIFO, and a 1 ns timer slack so the writer's gaps are
 * not stretched by the default 50 us slack. */
static int place(struct bench_shared *sh, char *err, int cpu, int prio)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) < 0)
        return fail(sh, err, "sched_setaffinity(CPU %d): %s", cpu, strerror(errno));
    if (prio > 0) {
        struct sched_param sp = {.sched_priority = prio};
        if (sched_setscheduler(0, SCHED_FIFO, &sp) < 0)
            return fail(sh, err, "--fifo: sched_setscheduler(SCHED_FIFO, %d): %s", prio,
                        strerror(errno));
    }
    (void)prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
    return 0;
}

/* A packet buffer of the row's size, touched so that no page fault lands in a sample. */
static unsigned char *packet_buffer(size_t size)
{
    size_t len = (size + 63) & ~(size_t)63;
    unsigned char *p = aligned_alloc(64, len);
    if (p != NULL)
        memset(p, 0x5a, len);
    return p;
}

/* Attach ports through ard_init and the standard --ard option, as a block would.
 * out/in may be NULL when that direction is not wanted. */
static ard_port *waitset[BENCH_WAIT_MAX];

static int ard_open(struct bench_shared *sh, char *err, ard_port **out, ard_port **in)
{
    const struct bench_spec *sp = &sh->spec;
    /* Rows must not inherit a spin time from the environment: spin is what some rows vary. */
    unsetenv("ARD_SPIN_NS");
    if (ard_set_domain(sp->domain) < 0)
        return fail(sh, err, "ard_set_domain(%s): %s", sp->domain, ard_errdetail());
    char wire_out[96], wire_in[96];
    char arg0[] = "ardbench", opt1[] = "--ard", opt2[] = "--ard";
    char *av[6];
    int ac = 0;
    av[ac++] = arg0;
    if (out != NULL) {
        if ((*out = ard_create("out", ARD_OUT, sp->size, NULL)) == NULL)
            return fail(sh, err, "ard_create(out): %s", ard_errdetail());
        snprintf(wire_out, sizeof wire_out, "out=%s", sp->conn);
        av[ac++] = opt1;
        av[ac++] = wire_out;
    }
    if (in != NULL) {
        if ((*in = ard_create("in", ARD_IN, sp->size, NULL)) == NULL)
            return fail(sh, err, "ard_create(in): %s", ard_errdetail());
        snprintf(wire_in, sizeof wire_in, "in=%s", sp->conn);
        av[ac++] = opt2;
        av[ac++] = wire_in;
    }
    av[ac] = NULL;
    int rc = ard_init(&ac, av);
    if (rc < 0)
        return fail(sh, err, "ard_init: %s: %s", ard_strerror(rc), ard_errdetail());
    if (in != NULL && (rc = ard_port_set_spin(*in, 0)) < 0)
        return fail(sh, err, "ard_port_set_spin: %s", ard_errdetail());
    if (in != NULL && (sp->methods & (1u << BM_ARD_WAIT16))) {
        /* The wait rows wait on the measured port and idle connections of their own. */
        waitset[0] = *in;
        for (uint32_t i = 1; i < sp->wait_ports; i++) {
            char name[16], conn[96];
            snprintf(name, sizeof name, "idle%u", i);
            snprintf(conn, sizeof conn, "%s.idle%u", sp->conn, i);
            if ((waitset[i] = ard_create_on(name, conn, ARD_IN, sp->size, NULL)) == NULL)
                return fail(sh, err, "ard_create_on(%s): %s", conn, ard_errdetail());
        }
    }
    return 0;
}

/* ---- writer ----------------------------------------------------------------------------- */

static uint64_t rng_next(uint64_t *s)
{
    /* xorshift64: only spreads the gaps, so that sends do not phase-lock with timer ticks */
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Wait until the reader has timed packet `seq` (0: nothing to wait for). */
static int wait_ack(struct bench_shared *sh, uint64_t seq)
{
    int64_t deadline = 0, poll = ACK_POLL_NS;
    while (atomic_load_explicit(&sh->ack, memory_order_acquire) < seq) {
        if (aborted(sh))
            return 1;
        int64_t now = bench_now_ns();
        if (deadline == 0)
            deadline = now + ACK_TIMEOUT_NS;
        else if (now > deadline)
            return fail(sh, sh->err_w, "the reader did not take packet %llu within %lld s",
                        (unsigned long long)seq, ACK_TIMEOUT_NS / 1000000000LL);
        /* Back off: under --fifo on one CPU the writer outranks the reader, and polling
         * every few us (each wake-up costs us in a VM) would leave it no time to run. */
        sleep_ns(poll);
        if (poll < ACK_POLL_MAX_NS)
            poll *= 2;
    }
    return 0;
}

/* The order in which the row's methods take turns: rounds of one packet per method, each
 * round in a fresh random order. Writer and reader run the same generator from the same
 * seed, so the reader always knows how the next packet comes. Interleaving puts every
 * method under the same conditions, which on a shared machine drift from second to second. */
struct schedule {
    uint64_t rng;
    uint32_t k, pos;
    enum bench_method set[BM_LATENCY_COUNT];
    enum bench_method turn[BM_LATENCY_COUNT];
};

static void schedule_init(struct schedule *s, const struct bench_spec *sp)
{
    memset(s, 0, sizeof *s);
    s->rng = sp->seed | 1;
    for (int m = 0; m < BM_LATENCY_COUNT; m++)
        if (sp->methods & (1u << m))
            s->set[s->k++] = (enum bench_method)m;
    s->pos = s->k;
}

static enum bench_method schedule_next(struct schedule *s)
{
    if (s->pos == s->k) {
        memcpy(s->turn, s->set, sizeof s->turn);
        for (uint32_t i = s->k; i > 1; i--) { /* Fisher-Yates */
            uint32_t j = (uint32_t)(rng_next(&s->rng) % i);
            enum bench_method t = s->turn[i - 1];
            s->turn[i - 1] = s->turn[j];
            s->turn[j] = t;
        }
        s->pos = 0;
    }
    return s->turn[s->pos++];
}

/* Warm-up packets, rounded up to whole rounds so that every method gets nsamples. */
static uint64_t warm_packets(const struct bench_spec *sp, uint32_t k)
{
    return ((uint64_t)sp->nwarm + k - 1) / k * k;
}

static bool any_ard(const struct bench_spec *sp)
{
    return (sp->methods & ((1u << BM_ARD_REC) | (1u << BM_ARD_TRYREC) | (1u << BM_ARD_SPIN) |
                           (1u << BM_ARD_POLL) | (1u << BM_ARD_WAIT16) | (1u << BM_PP_TRYREC) |
                           (1u << BM_PP_POLL) | (1u << BM_PP_STAMPED) | (1u << BM_PP_HEAD) |
                           (1u << BM_PP_SEQ) | (1u << BM_PP_INFO))) != 0;
}

static size_t raw_area(const struct bench_spec *sp)
{
    return sp->raw_slots * ((sp->size + 63) & ~(size_t)63);
}

static int publish(struct bench_shared *sh, enum bench_method m, ard_port *out,
                   const unsigned char *buf, uint32_t *raw_count)
{
    const struct bench_spec *sp = &sh->spec;
    switch (m) {
    case BM_RAW_FUTEX:
        memcpy(bench_raw_slot(sh, *raw_count + 1), buf, sp->size);
        /* seq_cst store, then the flag load: pairs with the reader's flag store before its
         * FUTEX_WAIT, so either we see the flag or the kernel sees the new count. */
        atomic_store_explicit(&sh->raw_seq, ++*raw_count, memory_order_seq_cst);
        if (atomic_load_explicit(&sh->raw_waiters, memory_order_seq_cst) != 0)
            futex_wake(&sh->raw_seq);
        return 0;
    case BM_RAW_SPIN:
    case BM_PP_RAW:
        memcpy(bench_raw_slot(sh, *raw_count + 1), buf, sp->size);
        atomic_store_explicit(&sh->raw_seq, ++*raw_count, memory_order_release);
        return 0;
    case BM_PP_STAMPED:
    case BM_PP_HEAD:
    case BM_PP_SEQ:
    case BM_PP_INFO: {
        /* Times given, as a bridge gives them: the send reads no clock. */
        int rc = ard_send_stamped(out, buf, 1, 1);
        if (rc < 0)
            return fail(sh, sh->err_w, "ard_send_stamped: %s: %s", ard_strerror(rc),
                        ard_errdetail());
        return 0;
    }
    default: {
        int rc = ard_send(out, buf);
        if (rc < 0)
            return fail(sh, sh->err_w, "ard_send: %s: %s", ard_strerror(rc), ard_errdetail());
        return 0;
    }
    }
}

int bench_writer(struct bench_shared *sh)
{
    const struct bench_spec *sp = &sh->spec;
    if (place(sh, sh->err_w, sp->cpu_w, sp->prio_w) != 0)
        return 1;
    ard_port *out = NULL;
    if (any_ard(sp) && ard_open(sh, sh->err_w, &out, NULL) != 0)
        return 1;
    unsigned char *buf = packet_buffer(sp->size);
    if (buf == NULL)
        return fail(sh, sh->err_w, "out of memory");

    int64_t deadline = bench_now_ns() + READY_TIMEOUT_NS;
    while (atomic_load_explicit(&sh->reader_ready, memory_order_acquire) == 0) {
        if (aborted(sh))
            return 1;
        if (bench_now_ns() > deadline)
            return fail(sh, sh->err_w, "the reader was not ready within %lld s",
                        READY_TIMEOUT_NS / 1000000000LL);
        sleep_ns(100000);
    }
    memset(bench_payload(sh), 0, raw_area(sp));

    struct schedule sched;
    schedule_init(&sched, sp);
    uint64_t rng = sp->seed ^ 0x9e3779b97f4a7c15ull;
    uint64_t span = (uint64_t)(sp->pace_max_ns - sp->pace_min_ns) + 1;
    uint64_t warm = warm_packets(sp, sched.k);
    uint64_t total = warm + (uint64_t)sched.k * sp->nsamples;
    uint32_t raw_count = 0;
    int64_t start = bench_now_ns();
    enum bench_method m = BM_RAW_FUTEX;
    uint64_t seq;
    for (seq = 1; seq <= total; seq++) {
        m = schedule_next(&sched);
        /* The gap starts at once, so that the writer is asleep while the reader works (on
         * one CPU it must be); then, if the reader's ack came less than pace_min ago, wait
         * out the rest so that the reader is surely back in its wait. */
        sleep_ns(sp->pace_min_ns + (int64_t)(rng_next(&rng) % span));
        if (wait_ack(sh, seq - 1) != 0)
            return 1;
        int64_t since = bench_now_ns() - atomic_load_explicit(&sh->ack_t, memory_order_relaxed);
        if (seq > 1 && since < sp->pace_min_ns)
            sleep_ns(sp->pace_min_ns - since);
        /* Stop early only at the start of a round, so every method keeps the same count. */
        if (seq > warm && (seq - warm - 1) % sched.k == 0 &&
            bench_now_ns() - start > sp->row_limit_ns)
            break;
        struct bench_stamp st = {.seq = seq};
        st.t0 = bench_now_ns();
        memcpy(buf, &st, sizeof st);
        if (publish(sh, m, out, buf, &raw_count) != 0)
            return 1;
    }
    /* The end marker goes the way the reader expects the next packet. */
    if (seq > total)
        m = schedule_next(&sched);
    if (wait_ack(sh, seq - 1) != 0)
        return 1;
    struct bench_stamp last = {.t0 = 0, .seq = BENCH_LAST_SEQ};
    memcpy(buf, &last, sizeof last);
    if (publish(sh, m, out, buf, &raw_count) != 0)
        return 1;
    ard_fini();
    free(buf);
    return 0;
}

/* ---- reader ----------------------------------------------------------------------------- */

/* Receive the next packet, sent by method m, into buf. `raw_last` is the raw counter last
 * seen. */
static int receive(struct bench_shared *sh, enum bench_method m, ard_port *in, unsigned char *buf,
                   uint32_t *raw_last)
{
    const struct bench_spec *sp = &sh->spec;
    unsigned n = 0;
    int rc;
    switch (m) {
    case BM_RAW_FUTEX:
        for (;;) {
            uint32_t s = atomic_load_explicit(&sh->raw_seq, memory_order_acquire);
            if (s != *raw_last) {
                *raw_last = s;
                break;
            }
            atomic_store_explicit(&sh->raw_waiters, 1, memory_order_seq_cst);
            futex_wait(&sh->raw_seq, s); /* returns at once if the count moved meanwhile */
            atomic_store_explicit(&sh->raw_waiters, 0, memory_order_relaxed);
        }
        memcpy(buf, bench_raw_slot(sh, *raw_last), sp->size);
        return 0;
    case BM_RAW_SPIN:
    case BM_PP_RAW:
        for (;;) {
            uint32_t s = atomic_load_explicit(&sh->raw_seq, memory_order_acquire);
            if (s != *raw_last) {
                *raw_last = s;
                break;
            }
            cpu_relax();
            if ((++n & 1023) == 0 && aborted(sh))
                return 1;
        }
        memcpy(buf, bench_raw_slot(sh, *raw_last), sp->size);
        return 0;
    case BM_ARD_TRYREC:
    case BM_PP_TRYREC:
        /* Poll as an application would; the same relax as the raw spin reader. */
        while ((rc = ard_tryrec(in, buf)) != 1) {
            if (rc < 0 && rc != ARD_ENODATA)
                return fail(sh, sh->err_r, "ard_tryrec: %s: %s", ard_strerror(rc), ard_errdetail());
            cpu_relax();
            if ((++n & 1023) == 0 && aborted(sh))
                return 1;
        }
        return 0;
    case BM_ARD_POLL:
    case BM_PP_POLL:
    case BM_PP_STAMPED:
        /* Ask without copying; copy once there is something new. */
        while ((rc = ard_poll(in)) != 1) {
            if (rc < 0 && rc != ARD_ENODATA)
                return fail(sh, sh->err_r, "ard_poll: %s: %s", ard_strerror(rc), ard_errdetail());
            cpu_relax();
            if ((++n & 1023) == 0 && aborted(sh))
                return 1;
        }
        if ((rc = ard_tryrec(in, buf)) != 1)
            return fail(sh, sh->err_r, "ard_tryrec after ard_poll: %d %s", rc, ard_errdetail());
        return 0;
    case BM_PP_HEAD:
    case BM_PP_SEQ:
    case BM_PP_INFO:
        if (bench_step_receive(sh, m, in, buf) != 0)
            return aborted(sh) ? 1 : fail(sh, sh->err_r, "the newest slot never settled");
        return 0;
    case BM_ARD_WAIT16: {
        unsigned char ready[BENCH_WAIT_MAX];
        while ((rc = ard_wait(waitset, sh->spec.wait_ports, -1, ready)) == ARD_EINTR)
            ;
        if (rc < 0)
            return fail(sh, sh->err_r, "ard_wait: %s: %s", ard_strerror(rc), ard_errdetail());
        if (!ready[0] || (rc = ard_tryrec(in, buf)) != 1)
            return fail(sh, sh->err_r, "ard_wait reported %s",
                        ready[0] ? "a stale port" : "idle ports");
        return 0;
    }
    default:
        while ((rc = ard_rec(in, buf)) == ARD_EINTR)
            ;
        if (rc < 0)
            return fail(sh, sh->err_r, "ard_rec: %s: %s", ard_strerror(rc), ard_errdetail());
        return 0;
    }
}

/* Get ready for a packet sent by method m: only spin-rec spins in ard_rec. */
static int prepare(struct bench_shared *sh, ard_port *in, enum bench_method m)
{
    if (in == NULL)
        return 0;
    int rc = ard_port_set_spin(in, m == BM_ARD_SPIN ? sh->spec.spin_ns : 0);
    if (rc < 0)
        return fail(sh, sh->err_r, "ard_port_set_spin: %s", ard_errdetail());
    return 0;
}

int bench_reader(struct bench_shared *sh)
{
    const struct bench_spec *sp = &sh->spec;
    if (place(sh, sh->err_r, sp->cpu_r, sp->prio_r) != 0)
        return 1;
    ard_port *in = NULL;
    if (any_ard(sp) && ard_open(sh, sh->err_r, NULL, &in) != 0)
        return 1;
    unsigned char *buf = packet_buffer(sp->size);
    if (buf == NULL)
        return fail(sh, sh->err_r, "out of memory");
    struct schedule sched;
    schedule_init(&sched, sp);
    int64_t *samples[BM_LATENCY_COUNT];
    uint32_t n[BM_LATENCY_COUNT] = {0};
    for (int i = 0; i < BM_LATENCY_COUNT; i++) {
        samples[i] = bench_samples(sh, (enum bench_method)i);
        if (sp->methods & (1u << i))
            memset(samples[i], 0, (size_t)sp->nsamples * sizeof *samples[i]);
    }
    memset(bench_payload(sh), 0, raw_area(sp));

    uint32_t raw_last = atomic_load(&sh->raw_seq);
    uint64_t expect = 1, warm = warm_packets(sp, sched.k);
    enum bench_method m = schedule_next(&sched);
    if (prepare(sh, in, m) != 0)
        return 1;
    atomic_store_explicit(&sh->reader_ready, 1, memory_order_release);
    for (;;) {
        if (receive(sh, m, in, buf, &raw_last) != 0)
            return 1;
        int64_t t1 = bench_now_ns();
        struct bench_stamp st;
        memcpy(&st, buf, sizeof st);
        if (st.seq == BENCH_LAST_SEQ)
            break;
        if (st.seq != expect)
            sh->skipped[m] += st.seq > expect ? st.seq - expect : 0;
        expect = st.seq + 1;
        if (st.seq > warm && n[m] < sp->nsamples)
            samples[m][n[m]++] = t1 - st.t0;
        if (m >= BM_ARD_REC) {
            /* The library's own send time must lie between our two clock reads. */
            int64_t lib = ard_port_info(in).mono_ns;
            if (lib < st.t0 || lib > t1)
                sh->anomalies[m]++;
        }
        m = schedule_next(&sched);
        if (prepare(sh, in, m) != 0)
            return 1;
        atomic_store_explicit(&sh->ack_t, t1, memory_order_relaxed);
        atomic_store_explicit(&sh->ack, st.seq, memory_order_release);
    }
    for (int i = 0; i < BM_LATENCY_COUNT; i++)
        sh->nrec[i] = n[i];
    ard_fini();
    free(buf);
    return 0;
}

/* ---- back-to-back ping-pong ----------------------------------------------------------- */

/* Spin until the reader has answered packet `seq`; the clock is read only every 4096 turns,
 * to give up on a reader that died or broke. */
static int wait_pong(struct bench_shared *sh, uint64_t seq)
{
    int64_t deadline = 0;
    for (unsigned n = 1; atomic_load_explicit(&sh->pong, memory_order_acquire) != seq; n++) {
        cpu_relax();
        if ((n & 4095) != 0)
            continue;
        if (aborted(sh))
            return 1;
        int64_t now = bench_now_ns();
        if (deadline == 0)
            deadline = now + ACK_TIMEOUT_NS;
        else if (now > deadline)
            return fail(sh, sh->err_w, "the reader did not answer packet %llu within %lld s",
                        (unsigned long long)seq, ACK_TIMEOUT_NS / 1000000000LL);
    }
    return 0;
}

/* The writer of the ping-pong rows: sends at once after each answer and times the round
 * trip, send call to answer seen. It, not the reader, records the samples. */
int bench_pp_writer(struct bench_shared *sh)
{
    const struct bench_spec *sp = &sh->spec;
    if (place(sh, sh->err_w, sp->cpu_w, sp->prio_w) != 0)
        return 1;
    ard_port *out = NULL;
    if (any_ard(sp) && ard_open(sh, sh->err_w, &out, NULL) != 0)
        return 1;
    unsigned char *buf = packet_buffer(sp->size);
    if (buf == NULL)
        return fail(sh, sh->err_w, "out of memory");
    int64_t deadline = bench_now_ns() + READY_TIMEOUT_NS;
    while (atomic_load_explicit(&sh->reader_ready, memory_order_acquire) == 0) {
        if (aborted(sh))
            return 1;
        if (bench_now_ns() > deadline)
            return fail(sh, sh->err_w, "the reader was not ready within %lld s",
                        READY_TIMEOUT_NS / 1000000000LL);
        sleep_ns(100000);
    }
    memset(bench_payload(sh), 0, raw_area(sp));

    struct schedule sched;
    schedule_init(&sched, sp);
    int64_t *samples[BM_LATENCY_COUNT];
    uint32_t n[BM_LATENCY_COUNT] = {0};
    for (int i = 0; i < BM_LATENCY_COUNT; i++)
        samples[i] = bench_samples(sh, (enum bench_method)i);
    uint64_t warm = warm_packets(sp, sched.k);
    uint64_t total = warm + (uint64_t)sched.k * sp->nsamples;
    uint32_t raw_count = 0;
    int64_t start = bench_now_ns();
    enum bench_method m = BM_PP_RAW;
    uint64_t seq;
    for (seq = 1; seq <= total; seq++) {
        m = schedule_next(&sched);
        if (seq > warm && (seq - warm - 1) % sched.k == 0 &&
            bench_now_ns() - start > sp->row_limit_ns)
            break;
        struct bench_stamp st = {.t0 = 0, .seq = seq};
        memcpy(buf, &st, sizeof st);
        int64_t t0 = bench_now_ns();
        if (publish(sh, m, out, buf, &raw_count) != 0 || wait_pong(sh, seq) != 0)
            return 1;
        int64_t t1 = bench_now_ns();
        if (seq > warm && n[m] < sp->nsamples)
            samples[m][n[m]++] = t1 - t0;
    }
    if (seq > total)
        m = schedule_next(&sched);
    struct bench_stamp last = {.t0 = 0, .seq = BENCH_LAST_SEQ};
    memcpy(buf, &last, sizeof last);
    if (publish(sh, m, out, buf, &raw_count) != 0)
        return 1;
    for (int i = 0; i < BM_LATENCY_COUNT; i++)
        sh->nrec[i] = n[i];
    ard_fini();
    free(buf);
    return 0;
}

/* The reader of the ping-pong rows: polls back to back (no sleep, no pause but the spin's
 * relax) and answers with the sequence number found in the packet it copied, so a wrong or
 * stale copy stalls the writer instead of passing unnoticed. */
int bench_pp_reader(struct bench_shared *sh)
{
    const struct bench_spec *sp = &sh->spec;
    if (place(sh, sh->err_r, sp->cpu_r, sp->prio_r) != 0)
        return 1;
    ard_port *in = NULL;
    if (any_ard(sp) && ard_open(sh, sh->err_r, NULL, &in) != 0)
        return 1;
    unsigned char *buf = packet_buffer(sp->size);
    if (buf == NULL)
        return fail(sh, sh->err_r, "out of memory");
    struct schedule sched;
    schedule_init(&sched, sp);
    uint32_t raw_last = atomic_load(&sh->raw_seq);
    uint64_t expect = 1;
    atomic_store_explicit(&sh->reader_ready, 1, memory_order_release);
    for (;;) {
        enum bench_method m = schedule_next(&sched);
        if (receive(sh, m, in, buf, &raw_last) != 0)
            return 1;
        struct bench_stamp st;
        memcpy(&st, buf, sizeof st);
        if (st.seq == BENCH_LAST_SEQ)
            break;
        if (st.seq != expect)
            return fail(sh, sh->err_r, "%s: got packet %llu, expected %llu", "ping-pong",
                        (unsigned long long)st.seq, (unsigned long long)expect);
        expect++;
        atomic_store_explicit(&sh->pong, st.seq, memory_order_release);
    }
    ard_fini();
    free(buf);
    return 0;
}

/* ---- cost of a send --------------------------------------------------------------------- */

/* Times batches of sends in one process with no reader blocked. For ard, an IN port of the
 * same process is attached (a reader exists) but never waits. Samples are picoseconds per
 * send, one per batch. BM_CLOCK_READ times clock_gettime(CLOCK_MONOTONIC) in the same loop. */
int bench_send_cost(struct bench_shared *sh)
{
    const struct bench_spec *sp = &sh->spec;
    if (place(sh, sh->err_w, sp->cpu_w, sp->prio_w) != 0)
        return 1;
    ard_port *out = NULL, *in = NULL;
    bool ard = sp->method == BM_ARD_SEND || sp->method == BM_ARD_SEND_STAMPED;
    bool stamped = sp->method == BM_ARD_SEND_STAMPED;
    if (ard && ard_open(sh, sh->err_w, &out, &in) != 0)
        return 1;
    unsigned char *buf = packet_buffer(sp->size);
    if (buf == NULL)
        return fail(sh, sh->err_w, "out of memory");
    memset(bench_payload(sh), 0, raw_area(sp));
    int64_t *samples = bench_samples(sh, sp->method);
    memset(samples, 0, (size_t)sp->batches * sizeof *samples);

    uint64_t seq = 0;
    uint32_t raw_count = 0;
    for (uint32_t b = 0; b <= sp->batches; b++) {
        /* batch 0 is a warm-up of its own length */
        uint32_t len =
            b == 0 ? (sp->batch_len > SEND_WARMUP ? sp->batch_len : SEND_WARMUP) : sp->batch_len;
        int64_t t = bench_now_ns();
        for (uint32_t k = 0; k < len; k++) {
            ++seq;
            memcpy(buf + sizeof(int64_t), &seq, sizeof seq);
            if (sp->method == BM_CLOCK_READ) {
                /* the vDSO's clock_gettime, as ard_send reads it */
                (void)bench_now_ns();
            } else if (ard) {
                int rc = stamped ? ard_send_stamped(out, buf, 1, 1) : ard_send(out, buf);
                if (rc < 0)
                    return fail(sh, sh->err_w, "ard_send: %s: %s", ard_strerror(rc),
                                ard_errdetail());
            } else {
                /* exactly the raw futex writer's publish */
                memcpy(bench_raw_slot(sh, raw_count + 1), buf, sp->size);
                atomic_store_explicit(&sh->raw_seq, ++raw_count, memory_order_seq_cst);
                if (atomic_load_explicit(&sh->raw_waiters, memory_order_seq_cst) != 0)
                    futex_wake(&sh->raw_seq);
            }
        }
        t = bench_now_ns() - t;
        if (b > 0)
            samples[b - 1] = t * 1000 / (int64_t)len;
    }
    sh->nrec[sp->method] = sp->batches;
    ard_fini();
    free(buf);
    return 0;
}
