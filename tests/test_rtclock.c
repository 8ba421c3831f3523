/*
 * test_rtclock.c - the realtime stamp of a send (ardi_rt_stamp, ardi.h), derived from its
 * CLOCK_MONOTONIC stamp and the offset the coarse clocks show.
 *
 * Without arguments: the derivation's own code driven by a model of the kernel's timekeeping
 * (a counter, a tick that accumulates it into the coarse clocks, a realtime offset that only
 * steps change, a rate that slewing changes for both clocks alike): slewed at the kernel's
 * largest rate (500 ppm frequency, 500 ppm adjtime, ADJ_TICK 10%), stepped forwards and
 * backwards, and a tick or a step put between any two of a send's clock reads. Every stamp is
 * checked against realtime reads of the model just before and just after the send: within
 * them and exactly the model's realtime at the monotonic stamp when no step falls inside;
 * never after the later one by more than a backward step inside, nor before the earlier one
 * by more than a backward step inside. A send after the step is exact again.
 *
 * "test_rtclock root": the same on the real clock (needs CAP_SYS_TIME; exit 77 without): a
 * stream of ard_send on a real connection, each packet's realtime stamp compared with direct
 * CLOCK_REALTIME reads bracketing the send, while adjtimex slews the clock at the kernel's
 * largest rates, while the clock is stepped 50 ms forwards (clock_settime, as date -s does)
 * and back (ADJ_SETOFFSET), and while another thread steps it at random moments. The work
 * runs in a child; the parent puts the frequency, tick and pending adjtime back and steps the
 * clock back by whatever the steps left, however the child ended.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/timex.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ardi.h"

/* ---- a model of the kernel's timekeeping ------------------------------------------------ */

#define TICK_NS 4000000 /* HZ=250 */
#define READ_NS 20      /* a fine clock read */
#define COARSE_NS 4     /* a coarse one */

struct kmodel {
    int64_t counter;  /* the clock source, in ns of true time */
    int64_t base_cnt; /* counter at the last accumulation */
    int64_t base_mono;
    int64_t off;  /* CLOCK_REALTIME - CLOCK_MONOTONIC */
    double rate;  /* clock ns per counter ns: 1 + the slew */
    int64_t tick; /* counter of the next tick */
    /* a send's reads: the event is applied just before read number `at` (0: none) */
    int reads;
    int at;
    void (*event)(struct kmodel *);
    int64_t event_arg;
    int64_t stepped; /* signed sum of the steps applied by events */
    int64_t real_at_mono;
};

static int64_t fine_mono(const struct kmodel *k)
{
    return k->base_mono + (int64_t)((double)(k->counter - k->base_cnt) * k->rate);
}

/* What the kernel does at a tick, before a step and before a new rate: accumulate. */
static void accumulate(struct kmodel *k)
{
    k->base_mono = fine_mono(k);
    k->base_cnt = k->counter;
}

static void ev_tick(struct kmodel *k)
{
    accumulate(k);
}

/* A step: the kernel accumulates the time since its last update, then moves the offset. Its
 * updates are serialised by the timekeeper's lock, so at least a ns has passed since the
 * last one: the coarse monotonic clock moves. */
static void ev_step(struct kmodel *k)
{
    k->counter += 1;
    accumulate(k);
    k->off += k->event_arg;
    k->stepped += k->event_arg;
}

static void ev_tick_and_step(struct kmodel *k)
{
    ev_tick(k);
    ev_step(k);
}

static void advance(struct kmodel *k, int64_t ns)
{
    k->counter += ns;
    while (k->counter >= k->tick) {
        int64_t now = k->counter;
        k->counter = k->tick;
        accumulate(k);
        k->counter = now;
        k->tick += TICK_NS;
    }
}

static int64_t model_read(void *ctx, clockid_t id)
{
    struct kmodel *k = ctx;
    if (++k->reads == k->at && k->event != NULL)
        k->event(k);
    bool coarse = id == CLOCK_REALTIME_COARSE || id == CLOCK_MONOTONIC_COARSE;
    advance(k, coarse ? COARSE_NS : READ_NS);
    int64_t mono = coarse ? k->base_mono : fine_mono(k);
    if (id == CLOCK_MONOTONIC)
        k->real_at_mono = mono + k->off;
    return id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE ? mono + k->off : mono;
}

static void model_init(struct kmodel *k, double rate)
{
    *k = (struct kmodel){.counter = 1000000000,
                         .base_cnt = 1000000000,
                         .base_mono = 5000000000,
                         .off = 1764000000000000000,
                         .rate = rate,
                         .tick = 1000000000 + TICK_NS};
}

struct bracket {
    int64_t r0, stamp, r1, exact;
};

/* One send's stamps as port.c takes them, between two direct realtime reads. */
static struct bracket model_send(struct kmodel *k, struct ardi_rtcache *cache)
{
    struct bracket b;
    int64_t mono;
    b.r0 = model_read(k, CLOCK_REALTIME);
    ardi_send_stamps(model_read, k, cache, &mono, &b.stamp);
    b.exact = k->real_at_mono;
    b.r1 = model_read(k, CLOCK_REALTIME);
    return b;
}

/* The documented bounds: with no step inside the send, the stamp is what CLOCK_REALTIME read
 * at the monotonic stamp; a step inside moves it by at most the step, towards the earlier
 * time where that is what a backward step does. */
static void check_bracket(const struct bracket *b, int64_t step_inside, const char *what)
{
    int64_t back = step_inside < 0 ? -step_inside : 0;
    if (step_inside == 0) {
        if (b->stamp != b->exact || b->stamp < b->r0 || b->stamp > b->r1)
            fail_msg("%s: stamp %lld, realtime at the monotonic stamp %lld, bracket [%lld, %lld]",
                     what, (long long)b->stamp, (long long)b->exact, (long long)b->r0,
                     (long long)b->r1);
        return;
    }
    if (b->stamp > b->r1 + back || b->stamp < b->r0 - back)
        fail_msg("%s: stamp %lld outside [%lld - %lld, %lld + %lld] with a step of %lld inside",
                 what, (long long)b->stamp, (long long)b->r0, (long long)back, (long long)b->r1,
                 (long long)back, (long long)step_inside);
}

/* The kernel's largest rates: adjtimex frequency 500 ppm, adjtime's slew 500 ppm on top, and
 * ADJ_TICK's 10%, faster and slower. */
static const double rates[] = {1.0, 1.0 + 1000e-6, 1.0 - 1000e-6, 1.1 + 1000e-6, 0.9 - 1000e-6};

static void test_slewed_stream_is_exact(void **state)
{
    (void)state;
    uint64_t rng = 0x9e3779b97f4a7c15ull;
    for (size_t r = 0; r < sizeof rates / sizeof *rates; r++) {
        struct kmodel k;
        model_init(&k, rates[r]);
        struct ardi_rtcache cache = {ARDI_RT_UNKNOWN, 0};
        for (int i = 0; i < 200000; i++) {
            rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
            advance(&k, (int64_t)(rng % 50000)); /* sends 0-50 us apart: many ticks inside */
            if (i % 1000 == 999) {               /* the slew changes, as adjtimex does */
                accumulate(&k);
                k.rate = rates[(r + (size_t)i / 1000) % (sizeof rates / sizeof *rates)];
            }
            struct bracket b = model_send(&k, &cache);
            check_bracket(&b, 0, "slewed stream");
        }
    }
}

/* A send's reads: r0, mono, one coarse read, up to 2 * ARDI_RT_TRIES coarse reads of the
 * offset, r1. An event before each of them in turn, and before the next send's r0. */
#define SEND_READS (3 + 2 * ARDI_RT_TRIES + 1)

static void run_event_positions(void (*event)(struct kmodel *), int64_t arg, const char *what)
{
    /* Sends within a tick of the previous one (the cached offset holds) and a tick later (it
     * is found afresh), an event before each read in turn. */
    static const int64_t gaps[] = {123457, TICK_NS + 123457};
    for (size_t r = 0; r < sizeof rates / sizeof *rates; r++)
        for (int g = 0; g < 2; g++)
            for (int at = 1; at <= SEND_READS + 1; at++) {
                struct kmodel k;
                model_init(&k, rates[r]);
                struct ardi_rtcache cache = {ARDI_RT_UNKNOWN, 0};
                struct bracket b = model_send(&k, &cache); /* establishes the offset */
                check_bracket(&b, 0, "first send");
                advance(&k, gaps[g]);
                k.reads = 0;
                k.at = at;
                k.event = event;
                k.event_arg = arg;
                b = model_send(&k, &cache);
                int after_r1 = k.reads;
                char msg[160];
                snprintf(msg, sizeof msg, "%s (%lld ns) before read %d, rate %.4f, gap %lld", what,
                         (long long)arg, at, rates[r], (long long)gaps[g]);
                /* The step is inside the bracket unless it came before r0 or after r1. */
                bool inside = k.stepped != 0 && at > 1 && at <= after_r1;
                check_bracket(&b, inside ? k.stepped : 0, msg);
                /* Made before the monotonic stamp (read 2), it is in the stamp; made after, the
                 * stamp is the realtime of that moment on one side of the step or the other. */
                if (at <= 2 && b.stamp != b.exact)
                    fail_msg("%s: stamp %lld, not the stepped clock's %lld", msg,
                             (long long)b.stamp, (long long)b.exact);
                if (at > 2 && b.stamp != b.exact && b.stamp != b.exact + k.stepped)
                    fail_msg("%s: stamp %lld is neither %lld nor %lld", msg, (long long)b.stamp,
                             (long long)b.exact, (long long)(b.exact + k.stepped));
                /* The next send, with no event, is exact: a step is picked up at once. */
                advance(&k, 1000);
                k.event = NULL;
                b = model_send(&k, &cache);
                snprintf(msg, sizeof msg, "the send after %s (%lld ns) before read %d", what,
                         (long long)arg, at);
                check_bracket(&b, 0, msg);
            }
}

static void test_tick_between_any_reads(void **state)
{
    (void)state;
    run_event_positions(ev_tick, 0, "a tick");
}

static const int64_t steps[] = {50000000, -50000000, 1000000000, -1000000000,
                                1,        -1,        TICK_NS,    -TICK_NS};

static void test_step_between_any_reads(void **state)
{
    (void)state;
    for (size_t s = 0; s < sizeof steps / sizeof *steps; s++)
        run_event_positions(ev_step, steps[s], "a step");
}

static void test_tick_and_step_between_any_reads(void **state)
{
    (void)state;
    for (size_t s = 0; s < sizeof steps / sizeof *steps; s++)
        run_event_positions(ev_tick_and_step, steps[s], "a tick and a step");
}

/* A stream across steps that come between sends: every send exact, none late. */
static void test_steps_between_sends(void **state)
{
    (void)state;
    struct kmodel k;
    model_init(&k, 1.0 + 1000e-6);
    struct ardi_rtcache cache = {ARDI_RT_UNKNOWN, 0};
    int64_t prev = 0;
    for (int i = 0; i < 20000; i++) {
        advance(&k, 10000 + i % 7);
        if (i % 100 == 50) {
            k.event_arg = (i / 100) % 2 ? -50000000 : 50000000;
            ev_step(&k);
        }
        struct bracket b = model_send(&k, &cache);
        check_bracket(&b, 0, "stream with steps between sends");
        if (i % 100 == 50 && i > 100)
            assert_true(k.event_arg > 0 ? b.stamp > prev + 40000000 : b.stamp < prev - 40000000);
        prev = b.stamp;
    }
}

/* A clock whose tick falls between every coarse pair (it cannot: ticks are milliseconds
 * apart, but the fallback must still err towards the earlier time by at most one tick). */
static int64_t straddle_read(void *ctx, clockid_t id)
{
    struct kmodel *k = ctx;
    if (id == CLOCK_MONOTONIC_COARSE) {
        advance(k, 1);
        accumulate(k);
        k->counter += 1000;
    }
    return model_read(ctx, id);
}

static void test_ticks_between_every_pair(void **state)
{
    (void)state;
    struct kmodel k;
    model_init(&k, 1.0);
    struct ardi_rtcache cache = {ARDI_RT_UNKNOWN, 0};
    for (int i = 0; i < 100; i++) {
        int64_t r0 = model_read(&k, CLOCK_REALTIME), mono, stamp;
        ardi_send_stamps(straddle_read, &k, &cache, &mono, &stamp);
        int64_t r1 = model_read(&k, CLOCK_REALTIME);
        assert_true(stamp <= r1);
        assert_true(stamp >= r0 - 2000);
        assert_int_equal(cache.mono_c, ARDI_RT_UNKNOWN); /* the next send looks again */
    }
}

/* ---- the real clock (root) -------------------------------------------------------------- */

#define STEP_NS 50000000
#define ROOT_DEADLINE_S 40

struct shared {
    _Atomic uint32_t stepping; /* odd while a step is being made */
    _Atomic uint64_t checked, inside;
    _Atomic int64_t worst_late, worst_early;
    char err[512];
};
static struct shared *sh;

static int64_t clock_now(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t sys_read(void *ctx, clockid_t id)
{
    (void)ctx;
    return clock_now(id);
}

/* CLOCK_REALTIME - CLOCK_MONOTONIC as the kernel keeps it, exactly. */
static int64_t offset_now(void)
{
    struct ardi_rtcache c;
    ardi_rt_find(sys_read, NULL, sys_read(NULL, CLOCK_MONOTONIC_COARSE), &c);
    return c.off;
}

/* Step by `ns` at once (ADJ_SETOFFSET, as an NTP daemon's step does). */
static int step_by(int64_t ns)
{
    struct timex tx = {.modes = ADJ_SETOFFSET | ADJ_NANO};
    int64_t sec = ns / 1000000000, rest = ns % 1000000000;
    if (rest < 0)
        rest += 1000000000, sec--;
    tx.time.tv_sec = (time_t)sec;
    tx.time.tv_usec = (suseconds_t)rest;
    return adjtimex(&tx) < 0 ? -1 : 0;
}

/* Step to now + ns with clock_settime, as date -s does. */
static int settime_by(int64_t ns)
{
    int64_t t = clock_now(CLOCK_REALTIME) + ns;
    struct timespec ts = {(time_t)(t / 1000000000), (long)(t % 1000000000)};
    return clock_settime(CLOCK_REALTIME, &ts);
}

static void record(int64_t late, int64_t early)
{
    int64_t w = atomic_load(&sh->worst_late);
    while (late > w && !atomic_compare_exchange_weak(&sh->worst_late, &w, late))
        ;
    w = atomic_load(&sh->worst_early);
    while (early > w && !atomic_compare_exchange_weak(&sh->worst_early, &w, early))
        ;
}

/* `n` sends, each bracketed by direct realtime reads; a bracket with no step inside must hold
 * the stamp exactly; one with a step inside (the stepping word moved) within the step. */
static int stream(ard_port *out, unsigned char *buf, int n, const char *phase)
{
    for (int i = 0; i < n; i++) {
        memcpy(buf, &i, sizeof i);
        uint32_t s0 = atomic_load(&sh->stepping);
        int64_t r0 = clock_now(CLOCK_REALTIME);
        int rc = ard_send(out, buf);
        int64_t r1 = clock_now(CLOCK_REALTIME);
        uint32_t s1 = atomic_load(&sh->stepping);
        if (rc < 0) {
            snprintf(sh->err, sizeof sh->err, "%s: ard_send: %s", phase, ard_errdetail());
            return -1;
        }
        int64_t stamp = ard_port_info(out).real_ns;
        bool inside = s0 != s1 || (s0 & 1u);
        int64_t slack = inside ? STEP_NS : 0;
        atomic_fetch_add(&sh->checked, 1);
        if (inside)
            atomic_fetch_add(&sh->inside, 1);
        else
            record(stamp - r1, r0 - stamp);
        if (stamp > r1 + slack || stamp < r0 - slack) {
            snprintf(sh->err, sizeof sh->err,
                     "%s: packet %d: realtime stamp %lld outside the bracket [%lld, %lld]%s", phase,
                     i, (long long)stamp, (long long)r0, (long long)r1,
                     inside ? " widened by a step made during the send" : "");
            return -1;
        }
    }
    return 0;
}

static int adjust(unsigned modes, long freq, long tick, long offset)
{
    struct timex tx = {.modes = modes, .freq = freq, .tick = tick, .offset = offset};
    return adjtimex(&tx) < 0 ? -1 : 0;
}

static void *stepper(void *arg)
{
    int *n = arg;
    for (int i = 0; i < *n; i++) {
        struct timespec ts = {0, 3000000 + (i % 5) * 700000};
        nanosleep(&ts, NULL);
        atomic_fetch_add(&sh->stepping, 1);
        int rc = step_by(i % 2 ? -STEP_NS : STEP_NS);
        atomic_fetch_add(&sh->stepping, 1);
        if (rc < 0)
            snprintf(sh->err, sizeof sh->err, "ADJ_SETOFFSET: %s", strerror(errno));
    }
    return NULL;
}

static int root_work(void)
{
    char domain[64];
    snprintf(domain, sizeof domain, "rtclock%d", (int)getpid());
    ard_port *out = NULL;
    if (ard_set_domain(domain) < 0 || (out = ard_create("out", ARD_OUT, 64, NULL)) == NULL) {
        snprintf(sh->err, sizeof sh->err, "ard_create: %s", ard_errdetail());
        return 1;
    }
    int ac = 1;
    char arg0[] = "test_rtclock", *av[] = {arg0, NULL};
    if (ard_init(&ac, av) < 0) {
        snprintf(sh->err, sizeof sh->err, "ard_init: %s", ard_errdetail());
        return 1;
    }
    unsigned char buf[64] = {0};
    int rc = stream(out, buf, 20000, "steady");

    /* Slewing: the frequency at its limit, then the tick at its limit, then adjtime's
     * 500 ppm; the kernel's offset between the two clocks must not move meanwhile. */
    int64_t off0 = offset_now();
    struct timex max = {0};
    adjtimex(&max);
    if (rc == 0 && adjust(ADJ_FREQUENCY, max.tolerance, 0, 0) < 0)
        snprintf(sh->err, sizeof sh->err, "ADJ_FREQUENCY: %s", strerror(errno)), rc = -1;
    if (rc == 0)
        rc = stream(out, buf, 20000, "frequency +500 ppm");
    if (rc == 0 && adjust(ADJ_FREQUENCY, -max.tolerance, 0, 0) < 0)
        rc = -1;
    if (rc == 0)
        rc = stream(out, buf, 20000, "frequency -500 ppm");
    if (rc == 0 &&
        adjust(ADJ_FREQUENCY | ADJ_TICK, max.freq, 1100000 / sysconf(_SC_CLK_TCK), 0) < 0)
        snprintf(sh->err, sizeof sh->err, "ADJ_TICK: %s", strerror(errno)), rc = -1;
    if (rc == 0)
        rc = stream(out, buf, 5000, "tick +10%");
    if (rc == 0 && adjust(ADJ_TICK, 0, max.tick, 0) < 0)
        rc = -1;
    if (rc == 0 && adjust(ADJ_OFFSET_SINGLESHOT, 0, 0, 20000) < 0)
        snprintf(sh->err, sizeof sh->err, "adjtime: %s", strerror(errno)), rc = -1;
    if (rc == 0)
        rc = stream(out, buf, 20000, "adjtime slewing 20 ms at 500 ppm");
    (void)adjust(ADJ_OFFSET_SINGLESHOT, 0, 0, 0);
    int64_t off1 = offset_now();
    if (rc == 0 && off1 != off0) {
        snprintf(sh->err, sizeof sh->err,
                 "slewing moved CLOCK_REALTIME - CLOCK_MONOTONIC by %lld ns: the derivation's "
                 "premise does not hold on this kernel",
                 (long long)(off1 - off0));
        rc = -1;
    }

    /* Steps between sends: the next send has the new time, exactly. */
    for (int i = 0; rc == 0 && i < 4; i++) {
        int64_t before = ard_port_info(out).real_ns;
        int r = i % 2 ? step_by(-STEP_NS) : settime_by(STEP_NS);
        if (r < 0) {
            snprintf(sh->err, sizeof sh->err, "%s: %s", i % 2 ? "ADJ_SETOFFSET" : "clock_settime",
                     strerror(errno));
            rc = -1;
            break;
        }
        rc = stream(out, buf, 1,
                    i % 2 ? "first send after a step back"
                          : "first send after a "
                            "step forward");
        int64_t d = ard_port_info(out).real_ns - before;
        if (rc == 0 && (i % 2 ? d > -STEP_NS / 2 : d < STEP_NS / 2)) {
            snprintf(sh->err, sizeof sh->err, "a step of %s50 ms moved the stamps by %lld ns",
                     i % 2 ? "-" : "+", (long long)d);
            rc = -1;
        }
        if (rc == 0)
            rc = stream(out, buf, 2000, "after a step");
    }

    /* Steps at random moments during a stream, from another thread. */
    if (rc == 0) {
        int nsteps = 20;
        pthread_t t;
        pthread_create(&t, NULL, stepper, &nsteps);
        while (rc == 0 && atomic_load(&sh->stepping) < 2u * (unsigned)nsteps)
            rc = stream(out, buf, 1000, "steps from another thread");
        pthread_join(t, NULL);
        if (sh->err[0] != '\0')
            rc = -1;
    }
    ard_fini();
    if (ard_domain_unlink(domain) < 0 && rc == 0)
        snprintf(sh->err, sizeof sh->err, "ard_domain_unlink: %s", ard_errdetail()), rc = -1;
    return rc == 0 ? 0 : 1;
}

/* Undo whatever the child left: frequency, tick and status as they were, no adjtime slew in
 * progress, and the offset between the two clocks as it was (a step back by the difference). */
static int restore(const struct timex *saved, int64_t off0)
{
    int bad = 0;
    (void)adjust(ADJ_OFFSET_SINGLESHOT, 0, 0, 0);
    int64_t d = off0 - offset_now();
    if (d != 0 && step_by(d) < 0)
        bad = fprintf(stderr, "restore: step back by %lld ns: %s\n", (long long)d, strerror(errno));
    /* Last: the step's ADJ_NANO sets STA_NANO, which follows the unit of the last call. */
    unsigned unit = saved->status & STA_NANO ? ADJ_NANO : ADJ_MICRO;
    struct timex tx = {.modes = ADJ_FREQUENCY | ADJ_TICK | ADJ_STATUS | unit,
                       .freq = saved->freq,
                       .tick = saved->tick,
                       .status = saved->status};
    if (adjtimex(&tx) < 0)
        bad = fprintf(stderr, "restore: adjtimex: %s\n", strerror(errno));
    int64_t left = off0 - offset_now();
    struct timex now = {0};
    adjtimex(&now);
    if (left != 0)
        bad = fprintf(stderr, "restore: the clock is %lld ns off where it was\n", (long long)left);
    if (now.freq != saved->freq || now.tick != saved->tick || now.status != saved->status)
        bad = fprintf(stderr, "restore: frequency %ld tick %ld status 0x%x, were %ld, %ld, 0x%x\n",
                      now.freq, now.tick, (unsigned)now.status, saved->freq, saved->tick,
                      (unsigned)saved->status);
    return bad ? -1 : 0;
}

static pid_t child;
static void on_signal(int sig)
{
    (void)sig;
    if (child > 0)
        kill(child, SIGKILL);
}

static int root_main(void)
{
    struct timex saved = {0};
    if (geteuid() != 0 || adjtimex(&saved) < 0) {
        printf("SKIP: needs root (CAP_SYS_TIME) to slew and step the clock\n");
        return 77;
    }
    /* A harmless probe: a step of 0 ns. */
    if (step_by(0) < 0) {
        printf("SKIP: adjtimex(ADJ_SETOFFSET): %s\n", strerror(errno));
        return 77;
    }
    sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED)
        return 1;
    int64_t off0 = offset_now();
    atomic_store(&sh->worst_late, INT64_MIN);
    atomic_store(&sh->worst_early, INT64_MIN);
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGALRM, &sa, NULL);
    child = fork();
    if (child == 0)
        _exit(root_work());
    alarm(ROOT_DEADLINE_S);
    int status = 0;
    while (child > 0 && waitpid(child, &status, 0) < 0 && errno == EINTR)
        ;
    alarm(0);
    int restored = restore(&saved, off0);
    bool ok = child > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    printf("%llu sends checked (%llu with a step inside); outside the steps: latest stamp %lld ns "
           "after the read just after the send, earliest %lld ns before the read just before\n",
           (unsigned long long)sh->checked, (unsigned long long)sh->inside,
           (long long)sh->worst_late, (long long)sh->worst_early);
    if (!ok)
        printf("FAIL: %s\n", sh->err[0] ? sh->err : "the child did not finish");
    if (restored < 0)
        printf("FAIL: the clock was not restored\n");
    return ok && restored == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "root") == 0)
        return root_main();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slewed_stream_is_exact),
        cmocka_unit_test(test_tick_between_any_reads),
        cmocka_unit_test(test_step_between_any_reads),
        cmocka_unit_test(test_tick_and_step_between_any_reads),
        cmocka_unit_test(test_steps_between_sends),
        cmocka_unit_test(test_ticks_between_every_pair),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
