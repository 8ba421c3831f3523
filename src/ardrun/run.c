/*
 * run.c - running a checked group: one SCHED_FIFO thread per rate group, lifecycle commands
 * from the control connection, statistics on the stats connection, readiness for ardstart.
 */
#include "ardrun.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop_signal;
static _Atomic int quit; /* tells the rate threads to stop */

/* The block whose callback the control thread runs (init, reload, close), for the crash
 * handler and the stop signal. */
static struct ardr_block *_Atomic ctl_current;

static void on_signal(int sig)
{
    /* a callback of the control thread (a reload's init) that hangs is named after 1 s */
    if (!stop_signal && atomic_load_explicit(&ctl_current, memory_order_relaxed) != NULL)
        ardr_grace_start();
    stop_signal = sig;
}

struct rate_arg {
    struct ardr_group *g;
    int r;
    int64_t t0;
};

/* Lifecycle requests are applied by the block's own thread between ticks, so a callback
 * never runs concurrently with the block's step. */
static void apply_request(struct ardr_block *b)
{
    int req = atomic_load_explicit(&b->req, memory_order_acquire);
    if (req == ARDR_REQ_NONE)
        return;
    int st = atomic_load(&b->state);
    if (req == ARDR_REQ_STOP && st == ARDR_RUNNING) {
        int rc = ardr_block_call(b, b->pl.d->stop, "stop");
        ardr_block_flush(b); /* readers outside the group get its last packets */
        atomic_store(&b->state, rc < 0 ? ARDR_FAILED : ARDR_STOPPED);
    } else if (req == ARDR_REQ_START && st != ARDR_RUNNING) {
        int rc = ardr_block_call(b, b->pl.d->start, "start");
        if (rc < 0)
            atomic_fetch_add(&b->fails, 1);
        atomic_store(&b->reported, 0);
        atomic_store(&b->state, rc < 0 ? ARDR_FAILED : ARDR_RUNNING);
    }
    atomic_store_explicit(&b->req, ARDR_REQ_NONE, memory_order_release);
}

static void *rate_thread(void *arg)
{
    struct rate_arg *a = arg;
    struct ardr_group *g = a->g;
    struct ardr_rate *rt = &g->rates[a->r];
    int64_t period = g->period_ns * rt->divide;
    ardr_crash_thread(&rt->current); /* a crash names the block in rt->current */
    atomic_store_explicit(&rt->tid, (int)gettid(), memory_order_relaxed);
    if (rt->prio || rt->cpus[0]) {
        if (ard_realtime(rt->cpus[0] ? rt->cpus : NULL, 0, rt->prio) < 0) {
            char why[sizeof rt->why];
            snprintf(why, sizeof why, "rate '%s': %.200s", rt->name, ard_errdetail());
            memcpy(rt->why, why, sizeof why);
            rt->error = ARD_ERTREFUSED;
            atomic_store(&rt->first_done, 1);
            ardr_crash_thread(NULL);
            return NULL;
        }
    }
    ard_period p;
    if (ard_period_init(&p, period) < 0) {
        memcpy(rt->why, "bad period", sizeof "bad period");
        rt->error = ARD_EINVAL;
        atomic_store(&rt->first_done, 1);
        ardr_crash_thread(NULL);
        return NULL;
    }
    /* the blocks' records in tick order, in one array */
    struct ardr_rec *recs = aligned_alloc(64, ((size_t)rt->n * sizeof *recs + 64) & ~(size_t)63);
    if (recs == NULL) {
        memcpy(rt->why, "out of memory", sizeof "out of memory");
        rt->error = ARD_ENOMEM;
        atomic_store(&rt->first_done, 1);
        ardr_crash_thread(NULL);
        return NULL;
    }
    for (int k = 0; k < rt->n; k++)
        ardr_rec_init(&recs[k], &g->blocks[rt->order[k]]);
    /* every rate starts on the same instant, so that slower rates tick with the base */
    p.next_ns = a->t0;
    (void)ard_period_wait(&p);
    uint64_t limit = g->ticks > 0 ? (uint64_t)(g->ticks / rt->divide) : 0;
    /* Private outputs not watched from outside are published every `every` ticks (about
     * 100 ms), block k of the tick in tick k mod `every`, so that no tick pays for all. */
    int64_t every = ARDR_REFRESH_NS / period < 1 ? 1 : ARDR_REFRESH_NS / period;
    for (int k = 0; k < rt->n; k++)
        g->blocks[rt->order[k]].stagger = (int)(k % every);
    int64_t phase = 0;
    rt->delay_min = INT64_MAX;
    while (!atomic_load_explicit(&quit, memory_order_relaxed)) {
        struct ardr_tick tick;
        ardr_tick_start(&tick, period);
        int64_t now = tick.tick_ns, delay = now - (p.next_ns - p.period_ns);
        int64_t bin = delay / 1000;
        rt->delay_hist[bin < 0 ? 0 : bin >= ARDR_DELAY_BINS ? ARDR_DELAY_BINS - 1 : bin]++;
        rt->delay_min = delay < rt->delay_min ? delay : rt->delay_min;
        rt->delay_max = delay > rt->delay_max ? delay : rt->delay_max;
        /* the first block's time starts here, after the tick's own book-keeping */
        tick.clock_ns = tick.tick_ns + ardr_clock_ns(tick.raw, ardr_clock_raw());
        for (int k = 0; k < rt->n; k++) {
            const struct ardr_rec *r = &recs[k];
            struct ardr_block *b = r->b;
            /* for the watchdog and the crash handler: one store, no system call */
            atomic_store_explicit(&rt->current, b, memory_order_relaxed);
            apply_request(b);
            if (atomic_load_explicit(&b->state, memory_order_relaxed) != ARDR_RUNNING)
                continue;
            tick.refresh = b->stagger == phase;
            if ((r->private ? ardr_rec_step(r, &tick) : ardr_block_step(b, &tick, -1)) < 0) {
                atomic_fetch_add(&b->fails, 1);
                ardr_block_flush(b);
                atomic_store(&b->state, ARDR_FAILED);
            }
        }
        atomic_store_explicit(&rt->current, NULL, memory_order_relaxed);
        phase = phase + 1 == every ? 0 : phase + 1;
        uint64_t c = atomic_load_explicit(&rt->cycles, memory_order_relaxed) + 1;
        atomic_store_explicit(&rt->cycles, c, memory_order_relaxed);
        atomic_store_explicit(&rt->first_done, 1, memory_order_release);
        if (limit && c >= limit)
            break;
        int missed = ard_period_wait(&p);
        if (missed > 0)
            atomic_fetch_add_explicit(&rt->overruns, (uint64_t)missed, memory_order_relaxed);
    }
    free(recs);
    /* the last packets of private connections, for whoever looks at them afterwards */
    for (int k = 0; k < rt->n; k++) {
        atomic_store_explicit(&rt->current, &g->blocks[rt->order[k]], memory_order_relaxed);
        ardr_block_flush(&g->blocks[rt->order[k]]);
    }
    atomic_store_explicit(&rt->current, NULL, memory_order_relaxed);
    ardr_crash_thread(NULL);
    /* a block stopped or started after this thread ended still gets its request applied */
    return NULL;
}

/* ---- statistics ------------------------------------------------------------------------ */

struct statsbuf {
    ard_port *port;
    size_t size;
    uint8_t *buf;
};

/* Struct of arrays, so that the descriptor stays short for any number of blocks:
 * "u64 u32 u32 u64[R] u64[R] u64[B] u64[B] i64[B] i64[B] i32[B] i32[B]", with field names
 * (which leave the layout and its hash as they were). */
static int stats_open(struct ardr_group *g, struct statsbuf *s)
{
    char type[320];
    int R = g->nrates, B = g->nblocks;
    snprintf(type, sizeof type,
             "tick:u64 nblocks:u32 nrates:u32 cycles:u64[%d] overruns:u64[%d] steps:u64[%d] "
             "fails:u64[%d] mean_ns:i64[%d] max_ns:i64[%d] state:i32[%d] rate:i32[%d]",
             R, R, B, B, B, B, B, B);
    s->size = 16 + (size_t)R * 16 + (size_t)B * 40;
    s->buf = calloc(1, s->size);
    char conn[ARD_MAX_NAME + 1];
    snprintf(conn, sizeof conn, "%s.stats", g->name);
    s->port = s->buf ? ardr_ctl_open("ardrun.stats", conn, ARD_OUT, s->size, type) : NULL;
    if (s->port == NULL) {
        if (ard_lasterror() == ARD_EBUSY)
            return ardi_fail(ARD_EBUSY, "group '%s' already runs in domain '%s': %s", g->name,
                             ard_domain(), ard_errdetail());
        return ard_lasterror();
    }
    return 0;
}

static void stats_publish(struct ardr_group *g, struct statsbuf *s)
{
    uint8_t *p = s->buf;
    int R = g->nrates, B = g->nblocks;
    uint64_t tick = atomic_load(&g->rates[0].cycles) * (uint64_t)g->rates[0].divide;
    uint32_t nb = (uint32_t)B, nr = (uint32_t)R;
    memcpy(p, &tick, 8);
    memcpy(p + 8, &nb, 4);
    memcpy(p + 12, &nr, 4);
    uint8_t *cyc = p + 16, *ovr = cyc + 8 * R, *steps = ovr + 8 * R, *fails = steps + 8 * B,
            *mean = fails + 8 * B, *max = mean + 8 * B, *state = max + 8 * B, *rate = state + 4 * B;
    for (int r = 0; r < R; r++) {
        uint64_t c = atomic_load(&g->rates[r].cycles), o = atomic_load(&g->rates[r].overruns);
        memcpy(cyc + 8 * r, &c, 8);
        memcpy(ovr + 8 * r, &o, 8);
    }
    for (int i = 0; i < B; i++) {
        struct ardr_block *b = &g->blocks[i];
        uint64_t st = atomic_load(&b->steps), fl = atomic_load(&b->fails);
        int64_t sum = atomic_load(&b->sum_ns), mx = atomic_load(&b->max_ns);
        int64_t mn = st ? sum / (int64_t)st : 0;
        int32_t state_v = atomic_load(&b->state), rate_v = b->rate;
        memcpy(steps + 8 * i, &st, 8);
        memcpy(fails + 8 * i, &fl, 8);
        memcpy(mean + 8 * i, &mn, 8);
        memcpy(max + 8 * i, &mx, 8);
        memcpy(state + 4 * i, &state_v, 4);
        memcpy(rate + 4 * i, &rate_v, 4);
    }
    (void)!ard_send(s->port, s->buf);
}

static const char *state_name(int st)
{
    static const char *n[] = {"init", "running", "stopped", "failed"};
    return st >= 0 && st <= 3 ? n[st] : "?";
}

/* The bin where the q-quantile of the wake-up delays falls, in us (upper edge). */
static long delay_quantile(const struct ardr_rate *rt, double q)
{
    uint64_t total = 0, seen = 0;
    for (int i = 0; i < ARDR_DELAY_BINS; i++)
        total += rt->delay_hist[i];
    for (int i = 0; i < ARDR_DELAY_BINS; i++) {
        seen += rt->delay_hist[i];
        if (total && (double)seen >= q * (double)total)
            return i + 1;
    }
    return 0;
}

/* After the rate threads ended (their histograms are no longer written). */
static void summary(struct ardr_group *g)
{
    for (int r = 0; r < g->nrates; r++) {
        const struct ardr_rate *rt = &g->rates[r];
        fprintf(stderr,
                "ardrun: %s: rate '%s' (%d): cycles %llu overruns %llu wake-up delay min %.1f "
                "median <%ld p99 <%ld max %.1f us\n",
                g->name, rt->name, rt->divide, (unsigned long long)atomic_load(&rt->cycles),
                (unsigned long long)atomic_load(&rt->overruns),
                rt->delay_max ? (double)rt->delay_min / 1e3 : 0.0, delay_quantile(rt, 0.5),
                delay_quantile(rt, 0.99), (double)rt->delay_max / 1e3);
    }
    for (int i = 0; i < g->nblocks; i++) {
        struct ardr_block *b = &g->blocks[i];
        uint64_t steps = atomic_load(&b->steps);
        fprintf(stderr,
                "ardrun: %s: block '%s': steps %llu fails %llu mean %lld ns max %lld ns "
                "state %s\n",
                g->name, b->name, (unsigned long long)steps,
                (unsigned long long)atomic_load(&b->fails),
                (long long)(steps ? atomic_load(&b->sum_ns) / (int64_t)steps : 0),
                (long long)atomic_load(&b->max_ns), state_name(atomic_load(&b->state)));
    }
}

/* ---- lifecycle commands ---------------------------------------------------------------- */

/* Ask the block's thread to apply `req` and wait until it did (bounded). */
static int request(struct ardr_group *g, struct ardr_block *b, int req, bool *running)
{
    atomic_store_explicit(&b->req, req, memory_order_release);
    int64_t period = g->period_ns * g->rates[b->rate].divide;
    int64_t deadline = ard_now_ns() + 2000000000 + 4 * period;
    while (atomic_load_explicit(&b->req, memory_order_acquire) != ARDR_REQ_NONE) {
        if (!running[b->rate]) {
            apply_request(b); /* its thread has ended: nobody else touches the block */
            break;
        }
        if (ard_now_ns() > deadline)
            return ardi_fail(ARD_ETIMEDOUT, "block '%s': its thread did not take the command",
                             b->name);
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    return 0;
}

static int cmd_reload(struct ardr_group *g, struct ardr_block *b, bool *running)
{
    struct ardr_plugin np;
    char what[64];
    snprintf(what, sizeof what, "reload of block '%s'", b->name);
    int rc = ardr_plugin_load_new(&np, b->path, what);
    if (rc < 0)
        return rc;
    if ((rc = ardr_plugin_same_ports(b->pl.d, np.d, what)) < 0) {
        ardr_plugin_unload(&np);
        return rc;
    }
    /* parameters of the new build, checked before the running one is touched */
    struct ardr_pval *pv = calloc(ARD_BLOCK_MAX_PARAMS, sizeof *pv);
    if (pv == NULL) {
        ardr_plugin_unload(&np);
        return ardi_fail(ARD_ENOMEM, "out of memory");
    }
    struct ardr_block tmp;
    memset(&tmp, 0, sizeof tmp);
    memcpy(tmp.name, b->name, sizeof tmp.name);
    tmp.params = b->params;
    tmp.nparams = b->nparams;
    tmp.pv = pv;
    tmp.pl = np;
    if ((rc = ardr_block_params(&tmp)) < 0 || (rc = request(g, b, ARDR_REQ_STOP, running)) < 0) {
        free(pv);
        ardr_plugin_unload(&np);
        return rc;
    }
    if (b->inited)
        ardr_block_close_cb(b);
    b->inited = false;
    ardr_plugin_unload(&b->pl);
    b->pl = np;
    ardr_label(b, g->rates[b->rate].name); /* the block is stopped: nothing reads it now */
    memcpy(b->pv, pv, ARD_BLOCK_MAX_PARAMS * sizeof *pv);
    free(pv);
    if ((rc = ardr_block_prepare(b)) < 0)
        return rc;
    atomic_store(&b->state, ARDR_STOPPED);
    b->inited = true;
    if ((rc = ardr_block_call(b, b->pl.d->init, "init")) < 0) {
        atomic_store(&b->state, ARDR_FAILED);
        return ardi_fail(rc, "block '%s': new build: %s", b->name, b->why);
    }
    if ((rc = request(g, b, ARDR_REQ_START, running)) < 0)
        return rc;
    if (atomic_load(&b->state) != ARDR_RUNNING)
        return ardi_fail(ARD_EINVAL, "block '%s': new build: %s", b->name, b->why);
    return 0;
}

static void handle_ctl(struct ardr_group *g, const struct ardr_ctl *c, struct ardr_ctl_reply *rep,
                       bool *running)
{
    char name[sizeof c->block + 1];
    memcpy(name, c->block, sizeof c->block);
    name[sizeof c->block] = '\0';
    rep->id = c->id;
    rep->result = 0;
    struct ardr_block *b = NULL;
    for (int i = 0; i < g->nblocks; i++)
        if (!strcmp(g->blocks[i].name, name))
            b = &g->blocks[i];
    int rc;
    if (b == NULL) {
        rc = ardi_fail(ARD_ENOENT, "group '%s' has no block '%s'", g->name, name);
    } else if (c->cmd == ARDR_CMD_STOP) {
        rc = request(g, b, ARDR_REQ_STOP, running);
        if (rc == 0)
            snprintf(rep->text, sizeof rep->text, "block '%s' %s", name,
                     state_name(atomic_load(&b->state)));
    } else if (c->cmd == ARDR_CMD_START) {
        if (!b->inited) {
            rc = ardi_fail(ARD_ESTATE, "block '%s' has no running build (reload it)", name);
        } else {
            rc = request(g, b, ARDR_REQ_START, running);
            if (rc == 0 && atomic_load(&b->state) != ARDR_RUNNING)
                rc = ardi_fail(ARD_EINVAL, "block '%s': %s", name, b->why);
            if (rc == 0)
                snprintf(rep->text, sizeof rep->text, "block '%s' running", name);
        }
    } else if (c->cmd == ARDR_CMD_RELOAD) {
        rc = cmd_reload(g, b, running);
        if (rc == 0)
            snprintf(rep->text, sizeof rep->text,
                     "block '%s' reloaded from '%.120s' (version %.40s)", name, b->path,
                     b->pl.d->version);
    } else {
        rc = ardi_fail(ARD_EINVAL, "unknown command %u", c->cmd);
    }
    if (rc < 0) {
        rep->result = rc;
        snprintf(rep->text, sizeof rep->text, "%s", ard_errdetail());
    }
    fprintf(stderr, "ardrun: %s: command %u '%s': %s\n", g->name, c->cmd, name, rep->text);
}

/* The names of the rates and blocks, for readers of the statistics: connection
 * "<group>.names", u8[32 * (R + B)], each name NUL-padded, rates first, in YAML order. Sent
 * once. */
static ard_port *names_open(struct ardr_group *g)
{
    size_t n = (size_t)(g->nrates + g->nblocks), size = 32 * n;
    char type[32], conn[ARD_MAX_NAME + 1];
    snprintf(type, sizeof type, "u8[%zu]", size);
    snprintf(conn, sizeof conn, "%s.names", g->name);
    char *buf = calloc(1, size);
    ard_port *p = buf ? ardr_ctl_open("ardrun.names", conn, ARD_OUT, size, type) : NULL;
    if (p) {
        for (int r = 0; r < g->nrates; r++)
            memcpy(buf + 32 * r, g->rates[r].name, strlen(g->rates[r].name));
        for (int i = 0; i < g->nblocks; i++)
            memcpy(buf + 32 * (g->nrates + i), g->blocks[i].name, strlen(g->blocks[i].name));
        if (ard_send(p, buf) < 0) {
            ard_close(p);
            p = NULL;
        }
    }
    free(buf);
    return p;
}

/* ---- readers outside the group --------------------------------------------------------- */

/* IN ports attached to an OUT port's connection as its header counts them (ard_port_readers:
 * one load, no system call). The count goes up when a port attaches and down when it is
 * closed, so it can only be too high (a reader killed with kill -9 stays counted), never too
 * low. A port that cannot be asked counts as read. */
static uint32_t readers_hint(const ard_port *out)
{
    int n = ard_port_readers(out);
    return n < 0 ? UINT32_MAX : (uint32_t)n;
}

/* Mark each private connection watched while a reader outside the group is attached to it,
 * so that its writer publishes every packet. The header's count says at once when no other
 * reader can be there; when it counts more IN ports than the group's own, the connection's
 * table of live peers decides exactly (ard_conn_stat: system calls, so only when the count
 * changed or once a second). A connection that cannot be looked at counts as watched. Called
 * before the rate threads start (exact = true) and every 20 ms by the control thread. */
static void watch(struct ardr_group *g, bool exact)
{
    int64_t now = ard_now_ns();
    for (int i = 0; i < g->nblocks; i++) {
        struct ardr_block *b = &g->blocks[i];
        for (uint32_t p = 0; b->pl.d && p < b->pl.d->nports; p++) {
            struct ardr_handoff *h = b->ho[p];
            if (h == NULL)
                continue;
            uint32_t hint = readers_hint(b->port[p]);
            bool w;
            if (hint <= (uint32_t)h->readers) {
                w = false;
            } else if (exact || hint != h->hint || now - h->checked_ns >= 1000000000) {
                struct ard_conn_stat st;
                w = ard_conn_stat(NULL, b->conn[p], &st) < 0 || st.readers > (uint32_t)h->readers;
                h->checked_ns = now;
            } else {
                continue;
            }
            h->hint = hint;
            atomic_store_explicit(&h->watched, w, memory_order_relaxed);
        }
    }
}

/* ---- the watchdog ----------------------------------------------------------------------- */

/* What the control thread knows of each rate thread's progress: only what the rate thread
 * writes anyway (its cycle count, and the block it runs), read every 20 ms or less. */
struct watchdog {
    int64_t t0;                      /* the instant of the first tick of every rate */
    int64_t stop_ns;                 /* when a stop signal was seen, 0: none */
    uint64_t cycles[ARDR_MAX_RATES]; /* the count last seen */
    int64_t seen_ns[ARDR_MAX_RATES]; /* when it was seen to change (or the start) */
    int64_t cpu_ns[ARDR_MAX_RATES];  /* the thread's CPU time then (INT64_MIN: not yet read) */
    int64_t suspect_ns[ARDR_MAX_RATES];
};

/* CPU time of rate r's thread (ns), -1 if unknown. */
static int64_t thread_cpu(struct ardr_group *g, int r)
{
    clockid_t id;
    struct timespec ts;
    if (pthread_getcpuclockid(g->rates[r].thread, &id) != 0 || clock_gettime(id, &ts) != 0)
        return -1;
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The scheduler state of rate r's thread ('R' running or waiting for a CPU, 'S' or 'D'
 * asleep in a system call, 'T' stopped, ...), '?' if unknown. */
static char thread_state(struct ardr_group *g, int r)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat",
             atomic_load_explicit(&g->rates[r].tid, memory_order_relaxed));
    FILE *f = fopen(path, "re");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = '\0';
    const char *e = strrchr(buf, ')'); /* after the command name, which may hold anything */
    return e && e[1] == ' ' && e[2] ? e[2] : '?';
}

static int64_t watchdog_limit(const struct ardr_group *g, int r)
{
    int64_t period = g->period_ns * g->rates[r].divide;
    int64_t lim = period > ARDR_WATCHDOG_NS / ARDR_WATCHDOG_PERIODS ? ARDR_WATCHDOG_PERIODS * period
                                                                    : ARDR_WATCHDOG_NS;
    return lim;
}

/* The rate whose tick has run too long, or -1. A tick is due at the first instant of the
 * rate's grid (t0 + k periods) at or after the moment its previous tick was seen to end, and
 * runs from then on; it is hung when it has run for the watchdog time (max(100 ms, 20
 * periods)), or, after a stop signal, for 1 s if that is less. To be named, a tick must be
 * seen running too long at two looks at least 10 ms apart: a control thread that was itself
 * not running (the process was stopped, the machine overloaded) first gives the rate thread
 * time to show its progress. *ran_ns and *lim_ns say how long and what the limit is. */
static int watchdog_check(struct ardr_group *g, struct watchdog *w, const bool *running,
                          int64_t *ran_ns, int64_t *lim_ns)
{
    int64_t now = ard_now_ns();
    for (int r = 0; r < g->nrates; r++) {
        if (!running[r])
            continue;
        /* Between ticks (in its period wait) a rate runs no block's code: waking late is the
         * machine's delay (a stalled vCPU, an overloaded host), counted as an overrun, not a
         * hang. After a stop signal the grace below still bounds the end. */
        if (!w->stop_ns &&
            atomic_load_explicit(&g->rates[r].current, memory_order_relaxed) == NULL) {
            w->suspect_ns[r] = 0;
            continue;
        }
        uint64_t c = atomic_load_explicit(&g->rates[r].cycles, memory_order_relaxed);
        if (c != w->cycles[r] || w->cpu_ns[r] == INT64_MIN) {
            w->cycles[r] = c;
            w->seen_ns[r] = now;
            w->cpu_ns[r] = thread_cpu(g, r);
            w->suspect_ns[r] = 0;
            continue;
        }
        int64_t period = g->period_ns * g->rates[r].divide;
        int64_t since = w->seen_ns[r] - w->t0;
        int64_t due = w->t0 + (since <= 0 ? 0 : (since + period - 1) / period * period);
        int64_t lim = watchdog_limit(g, r);
        if (w->stop_ns && lim > ARDR_STOP_GRACE_NS)
            lim = ARDR_STOP_GRACE_NS;
        if (now - due <= lim) {
            w->suspect_ns[r] = 0;
            continue;
        }
        if (w->suspect_ns[r] == 0) {
            w->suspect_ns[r] = now;
            continue;
        }
        if (now - w->suspect_ns[r] < 10000000)
            continue;
        /* A thread that only waited for a CPU (an overloaded machine) is not hung: in the
         * tick it spent half the limit on a CPU, or it sleeps in a system call (a step must
         * not block). */
        int64_t cpu = thread_cpu(g, r);
        char st = thread_state(g, r);
        bool spins = cpu >= 0 && w->cpu_ns[r] >= 0 && cpu - w->cpu_ns[r] >= lim / 2;
        if (!spins && st != 'S' && st != 'D')
            continue;
        *ran_ns = now - due;
        *lim_ns = lim;
        return r;
    }
    return -1;
}

/* A rate thread hangs: name the block and its rate, end the others, close their blocks and
 * end the process at once (the hung thread still runs in its block: nothing it uses may be
 * freed, so the process ends with _exit). */
static _Noreturn void watchdog_fire(struct ardr_group *g, struct watchdog *w, int r, int64_t ran,
                                    int64_t lim, bool *running, struct statsbuf *s)
{
    struct ardr_rate *rt = &g->rates[r];
    struct ardr_block *b = atomic_load_explicit(&rt->current, memory_order_relaxed);
    double hz = 1e9 / (double)(g->period_ns * rt->divide);
    if (b != NULL)
        fprintf(stderr,
                "ardrun: %s: %s (%.6g Hz) hangs: its tick has run for %.3f s (the watchdog "
                "allows %.3f s%s); ending the group (exit %d)\n",
                g->name, b->label, hz, (double)ran / 1e9, (double)lim / 1e9,
                w->stop_ns ? " after a stop signal" : "", ARDR_EXIT_HUNG);
    else
        fprintf(stderr,
                "ardrun: %s: rate '%s' (%.6g Hz) hangs outside any block: its tick has run for "
                "%.3f s (the watchdog allows %.3f s%s); ending the group (exit %d)\n",
                g->name, rt->name, hz, (double)ran / 1e9, (double)lim / 1e9,
                w->stop_ns ? " after a stop signal" : "", ARDR_EXIT_HUNG);
    if (b != NULL) /* readers of the statistics see it failed */
        atomic_store(&b->state, ARDR_FAILED);
    atomic_store(&quit, 1);
    running[r] = false;
    /* the other rates end after their current tick; a second hung one is left as it is */
    int64_t deadline = ard_now_ns() + ARDR_STOP_GRACE_NS;
    bool ended[ARDR_MAX_RATES] = {false};
    for (int q = 0; q < g->nrates; q++) {
        if (!running[q])
            continue;
        /* pthread_timedjoin_np measures CLOCK_REALTIME */
        int64_t real = ard_realtime_ns() + (deadline - ard_now_ns());
        struct timespec ts = {real / 1000000000, real % 1000000000};
        ended[q] = pthread_timedjoin_np(g->rates[q].thread, NULL, &ts) == 0;
    }
    stats_publish(g, s);
    for (int i = 0; i < g->nblocks; i++) {
        struct ardr_block *x = &g->blocks[i];
        if (ended[x->rate])
            ardr_block_close(x);
    }
    fflush(stderr);
    _exit(ARDR_EXIT_HUNG);
}

/* ---- the group -------------------------------------------------------------------------- */

/* The group ends without crashing (--ticks, a stop signal, `ardrun ctl stop`, or nothing was
 * started): its service objects (GROUP.ctl, .ctl-reply, .names, .stats) go, so that `ard list`
 * does not fill with orphans (only those this group opened: never another user's). One another
 * process still has open (`ard show -f GROUP.stats`)
 * stays, as the library removes only objects nobody is attached to. After a crash they stay,
 * listed as orphaned, for a look at the last stats. */
static void service_remove(struct ardr_group *g, ard_port *ctl, ard_port *reply, ard_port *names,
                           struct statsbuf *s)
{
    static const char *const sfx[] = {"ctl", "ctl-reply", "names", "stats"};
    ard_port *ports[] = {ctl, reply, names, s->port}; /* only those this group opened */
    s->port = NULL;
    for (size_t i = 0; i < sizeof sfx / sizeof sfx[0]; i++) {
        if (ports[i] == NULL)
            continue;
        ard_close(ports[i]);
        char conn[ARD_MAX_NAME + 16];
        snprintf(conn, sizeof conn, "%s.%s", g->name, sfx[i]);
        (void)!ard_conn_unlink(NULL, conn);
    }
}

/* A running group's context: its service connections, statistics, rate threads and
 * watchdog. */
struct grun {
    struct ardr_group *g;
    struct statsbuf s;
    ard_port *ctl, *reply, *names;
    struct rate_arg args[ARDR_MAX_RATES];
    bool running[ARDR_MAX_RATES];
    struct watchdog wd;
    int64_t ran, lim;
};

/* Opens the group's statistics and control connections; 0 or the exit code (the statistics'
 * buffer freed). */
static int open_ctl(struct grun *u)
{
    struct ardr_group *g = u->g;
    int rc = stats_open(g, &u->s);
    char conn[ARD_MAX_NAME + 1];
    if (rc == 0) {
        snprintf(conn, sizeof conn, "%s.ctl", g->name);
        u->ctl = ardr_ctl_open("ardrun.ctl", conn, ARD_IN, sizeof(struct ardr_ctl), ARDR_CTL_TYPE);
        snprintf(conn, sizeof conn, "%s.ctl-reply", g->name);
        u->reply = u->ctl ? ardr_ctl_open("ardrun.ctl-reply", conn, ARD_OUT,
                                          sizeof(struct ardr_ctl_reply), ARDR_CTL_REPLY_TYPE)
                          : NULL;
        if (u->reply == NULL)
            rc = ard_lasterror();
    }
    if (rc < 0) {
        fprintf(stderr, "ardrun: %s: %s\n", g->name, ard_errdetail());
        free(u->s.buf);
        return rc == ARD_EBUSY || rc == ARD_EACCES ? ARDR_EXIT_SCHEME : ARDR_EXIT_SYS;
    }
    return 0;
}

/* The scheme checked and ordered, the blocks initialised, memory locked; 0 or the exit code
 * after saying why (nothing was started). */
static int prepare_group(struct ardr_group *g)
{
    int errors = ardr_scheme_check(g);
    if (errors != 0) {
        fprintf(stderr, "ardrun: %s: %d error%s: nothing was started\n", g->name, abs(errors),
                abs(errors) == 1 ? "" : "s");
        return errors < 0 ? ARDR_EXIT_PLUGIN : ARDR_EXIT_SCHEME;
    }
    for (int i = 0; i < g->nblocks; i++)
        ardr_label(&g->blocks[i], g->rates[g->blocks[i].rate].name);
    ardr_scheme_order(g);
    if ((errors = ardr_scheme_handoff(g)) != 0) {
        fprintf(stderr, "ardrun: %s: %d error%s: nothing was started\n", g->name, errors,
                errors == 1 ? "" : "s");
        return ARDR_EXIT_SCHEME;
    }
    ardr_clock_init();
    watch(g, true);
    for (int i = 0; i < g->nblocks; i++) {
        struct ardr_block *b = &g->blocks[i];
        if (ardr_block_init(b) < 0) {
            fprintf(stderr, "ardrun: %s: block '%s' (%s): %s\n", g->name, b->name, b->pl.d->name,
                    b->why);
            return ARDR_EXIT_INIT;
        }
    }
    if (g->lock && ard_realtime(NULL, 1, 0) < 0) {
        fprintf(stderr, "ardrun: %s: %s\n", g->name, ard_errdetail());
        return ARDR_EXIT_SYS;
    }
    return 0;
}

/* A rate whose tick runs on too long is named, and the process ends (watchdog_fire). */
static void check_watchdog(struct grun *u)
{
    int hung = watchdog_check(u->g, &u->wd, u->running, &u->ran, &u->lim);
    if (hung >= 0)
        watchdog_fire(u->g, &u->wd, hung, u->ran, u->lim, u->running, &u->s);
}

/* Starts one thread per rate, all on one first instant, with every signal left to this
 * thread; 0 or ARDR_EXIT_SYS (the threads started are told to quit). */
static int start_rates(struct grun *u)
{
    struct ardr_group *g = u->g;
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sigset_t all, old;
    sigfillset(&all);
    ardr_crash_sigdel(&all);                /* a fault in a rate thread is named there */
    pthread_sigmask(SIG_BLOCK, &all, &old); /* the rate threads inherit: signals come here */
    int64_t t0 = ard_now_ns() + 2000000;    /* all rates start on one instant */
    int exitcode = 0;
    u->wd.t0 = t0;
    for (int r = 0; r < g->nrates; r++)
        u->wd.seen_ns[r] = t0, u->wd.cpu_ns[r] = INT64_MIN; /* its CPU time: at the first look */
    for (int r = 0; r < g->nrates; r++) {
        u->args[r] = (struct rate_arg){g, r, t0};
        if (g->rates[r].n == 0)
            continue;
        int e = pthread_create(&g->rates[r].thread, NULL, rate_thread, &u->args[r]);
        if (e) {
            fprintf(stderr, "ardrun: %s: rate '%s': pthread_create: %s\n", g->name,
                    g->rates[r].name, strerror(e));
            atomic_store(&quit, 1);
            exitcode = ARDR_EXIT_SYS;
            break;
        }
        u->running[r] = true;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return exitcode;
}

/* Ready: the scheme is checked and every rate ran its first tick. Returns exitcode, or
 * ARDR_EXIT_SYS when a rate failed to start. */
static int await_first_ticks(struct grun *u, int exitcode)
{
    struct ardr_group *g = u->g;
    for (bool done = false; !done && !stop_signal;) {
        done = true;
        for (int r = 0; r < g->nrates; r++)
            if (u->running[r] &&
                !atomic_load_explicit(&g->rates[r].first_done, memory_order_acquire))
                done = false;
        check_watchdog(u);
        if (!done)
            usleep(200);
    }
    for (int r = 0; r < g->nrates; r++)
        if (g->rates[r].error) {
            fprintf(stderr, "ardrun: %s: %s\n", g->name, g->rates[r].why);
            exitcode = ARDR_EXIT_SYS;
            atomic_store(&quit, 1);
        }
    return exitcode;
}

/* While the group runs: failed blocks named, the watchdog, statistics every 100 ms and the
 * commands of `ardrun ctl`, until a stop signal or every rate ended (--ticks). */
static void serve(struct grun *u)
{
    struct ardr_group *g = u->g;
    struct ardr_ctl c;
    int64_t next_stats = ard_now_ns();
    while (!stop_signal) {
        for (int r = 0; r < g->nrates; r++)
            if (u->running[r] && pthread_tryjoin_np(g->rates[r].thread, NULL) == 0)
                u->running[r] = false;
        bool alive = false;
        for (int r = 0; r < g->nrates; r++)
            alive = alive || u->running[r];
        for (int i = 0; i < g->nblocks; i++) {
            struct ardr_block *b = &g->blocks[i];
            if (atomic_load(&b->state) == ARDR_FAILED && !atomic_exchange(&b->reported, 1))
                fprintf(stderr,
                        "ardrun: %s: block '%s' (%s) failed and is stopped, the others "
                        "continue: %s\n",
                        g->name, b->name, b->pl.d->name, b->why);
        }
        watch(g, false);
        check_watchdog(u);
        if (ard_now_ns() >= next_stats) {
            stats_publish(g, &u->s);
            next_stats += 100000000;
        }
        if (!alive)
            break; /* --ticks reached */
        int r = ard_rec_timed(u->ctl, &c, 20000000);
        if (r == 0) {
            struct ardr_ctl_reply rep = {0};
            handle_ctl(g, &c, &rep, u->running);
            if (stop_signal) /* the command ended: the rate threads' watchdog takes over */
                ardr_grace_end();
            stats_publish(g, &u->s); /* the state after the command, before the reply */
            (void)!ard_send(u->reply, &rep);
        }
    }
}

/* Each rate thread ends after its tick (or at its next tick instant): a tick that runs on
 * is named by the watchdog, at most 1 s after a stop signal. Then the failed blocks are
 * named. */
static void stop_rates(struct grun *u)
{
    struct ardr_group *g = u->g;
    atomic_store(&quit, 1);
    if (stop_signal)
        u->wd.stop_ns = ard_now_ns();
    for (bool alive = true; alive;) {
        alive = false;
        for (int r = 0; r < g->nrates; r++) {
            if (u->running[r] && pthread_tryjoin_np(g->rates[r].thread, NULL) == 0)
                u->running[r] = false;
            alive = alive || u->running[r];
        }
        check_watchdog(u);
        if (alive)
            usleep(1000);
    }
    for (int i = 0; i < g->nblocks; i++) {
        struct ardr_block *b = &g->blocks[i];
        if (atomic_load(&b->state) == ARDR_FAILED && !atomic_exchange(&b->reported, 1))
            fprintf(stderr, "ardrun: %s: block '%s' (%s) failed and is stopped: %s\n", g->name,
                    b->name, b->pl.d->name, b->why);
    }
}

int ardr_run_group(struct ardr_group *g)
{
    /* a block that crashes is named: in its rate thread (rates[].current) or here (init,
     * reload, close) */
    char pfx[ARDR_NAME_MAX + 16];
    snprintf(pfx, sizeof pfx, "ardrun: %s: ", g->name);
    ardr_crash_init(pfx);
    ardr_crash_thread(&ctl_current);
    ardr_grace_init();
    struct grun u = {.g = g};
    int rc = open_ctl(&u);
    if (rc)
        return rc;
    struct ardr_ctl c;
    (void)!ard_tryrec(u.ctl, &c); /* a command left from before this group is not for it */
    u.names = names_open(g);
    if (u.names == NULL) {
        fprintf(stderr, "ardrun: %s: %s\n", g->name, ard_errdetail());
        int e = ard_lasterror();
        service_remove(g, u.ctl, u.reply, NULL, &u.s);
        free(u.s.buf);
        return e == ARD_EACCES ? ARDR_EXIT_SCHEME : ARDR_EXIT_SYS;
    }
    if ((rc = prepare_group(g)) != 0) {
        service_remove(g, u.ctl, u.reply, u.names, &u.s);
        free(u.s.buf);
        return rc;
    }
    int exitcode = await_first_ticks(&u, start_rates(&u));
    if (exitcode == 0 && !stop_signal) {
        stats_publish(g, &u.s);
        (void)!ard_ready();
        fprintf(stderr,
                "ardrun: %s: running %d block%s in %d rate%s, base %.6g Hz (step times from "
                "the %s)\n",
                g->name, g->nblocks, g->nblocks == 1 ? "" : "s", g->nrates,
                g->nrates == 1 ? "" : "s", 1e9 / (double)g->period_ns, ardr_clock_name());
        serve(&u);
    }
    stop_rates(&u);
    stats_publish(g, &u.s);
    summary(g);
    for (int i = 0; i < g->nblocks; i++)
        ardr_block_close(&g->blocks[i]);
    service_remove(g, u.ctl, u.reply, u.names, &u.s);
    free(u.s.buf);
    return exitcode;
}
