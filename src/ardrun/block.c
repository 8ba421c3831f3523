/*
 * block.c - one block instance: parameters, context, and the step with its inputs, outputs
 * and timing. Shared by a group and by single-block mode.
 */
#include "ardrun.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *type_name(enum ard_param_type t)
{
    return t == ARD_PARAM_I64    ? "i64"
           : t == ARD_PARAM_F64  ? "f64"
           : t == ARD_PARAM_BOOL ? "bool"
                                 : "str";
}

int ardr_block_params(struct ardr_block *b)
{
    const struct ard_block_desc *d = b->pl.d;
    char what[80];
    snprintf(what, sizeof what, "block '%s' (%s):", b->name, d->name);
    for (int k = 0; k < b->nparams; k++) {
        uint32_t i = 0;
        while (i < d->nparams && strcmp(d->params[i].name, b->params[k].key))
            i++;
        if (i == d->nparams)
            return ardi_fail(ARD_EINVAL, "%s no parameter '%s' (the plugin has %u parameter%s)",
                             what, b->params[k].key, d->nparams, d->nparams == 1 ? "" : "s");
    }
    for (uint32_t i = 0; i < d->nparams; i++) {
        const struct ard_block_param *p = &d->params[i];
        const char *text = p->def;
        for (int k = 0; k < b->nparams; k++)
            if (!strcmp(b->params[k].key, p->name))
                text = b->params[k].val;
        if (text == NULL)
            return ardi_fail(ARD_EINVAL, "%s parameter '%s' (%s) has no default and is not given",
                             what, p->name, type_name(p->type));
        if (ardr_param_parse(what, p->name, p->type, text, &b->pv[i]) < 0)
            return ARD_EINVAL;
    }
    return 0;
}

static int host_param(ard_block_ctx *ctx, const char *name, enum ard_param_type type, void *out)
{
    struct ardr_block *b = (struct ardr_block *)((char *)ctx - offsetof(struct ardr_block, ctx));
    const struct ard_block_desc *d = b->pl.d;
    for (uint32_t i = 0; name && i < d->nparams; i++) {
        if (strcmp(d->params[i].name, name))
            continue;
        if (d->params[i].type != type)
            return ardi_fail(ARD_EINVAL, "block '%s': parameter '%s' is %s, read as %s", b->name,
                             name, type_name(d->params[i].type), type_name(type));
        switch (type) {
        case ARD_PARAM_I64:
            *(int64_t *)out = b->pv[i].i;
            break;
        case ARD_PARAM_F64:
            *(double *)out = b->pv[i].f;
            break;
        case ARD_PARAM_BOOL:
            *(int *)out = b->pv[i].b;
            break;
        case ARD_PARAM_STR:
            *(const char **)out = b->pv[i].s;
            break;
        }
        return 0;
    }
    return ardi_fail(ARD_EINVAL, "block '%s': no parameter '%s'", b->name, name ? name : "(null)");
}

static int host_fail(ard_block_ctx *ctx, int code, const char *fmt, va_list ap)
{
    struct ardr_block *b = (struct ardr_block *)((char *)ctx - offsetof(struct ardr_block, ctx));
    vsnprintf(b->why, sizeof b->why, fmt, ap);
    b->said = true;
    return code < 0 ? code : ARD_EINVAL;
}

static const struct ard_block_host host = {host_param, host_fail};

/* a tick reads and writes only the first cache line of a hand-off's header */
_Static_assert(offsetof(struct ardr_handoff, watched) < 64, "hand-off: hot fields in line 0");

struct ardr_cold {
    char path[ARDR_PATH_MAX];
    struct ardr_kv wires[ARD_BLOCK_MAX_PORTS];
    struct ardr_kv params[ARD_BLOCK_MAX_PARAMS];
    struct ardr_pval pv[ARD_BLOCK_MAX_PARAMS];
    char conn[ARD_BLOCK_MAX_PORTS][ARD_MAX_NAME + 1];
};

int ardr_block_new(struct ardr_block *b)
{
    memset(b, 0, sizeof *b);
    struct ardr_cold *c = calloc(1, sizeof *c);
    if (c == NULL)
        return ardi_fail(ARD_ENOMEM, "out of memory");
    b->cold = c;
    b->path = c->path;
    b->wires = c->wires;
    b->params = c->params;
    b->pv = c->pv;
    b->conn = c->conn;
    return 0;
}

/* One allocation for the per-port arrays, in the order a tick reads them: for a block of a
 * few ports, what a tick of private hand-offs reads (bufs, ho, hsrc, the flags, info) is in
 * the first two cache lines. */
int ardr_block_alloc(struct ardr_block *b)
{
    uint32_t n = b->pl.d->nports;
    size_t ptrs = 3 * n * sizeof(void *), bytes = (4 * n + 7) & ~(size_t)7;
    size_t infos = n * sizeof(struct ard_info);
    size_t total = ptrs + bytes + infos + 3 * n * sizeof(void *) + n * sizeof(bool);
    total = (total + 63) & ~(size_t)63;
    /* next to the context when they fit (a block of a few ports): the same few cache lines */
    uint8_t *m = total <= sizeof b->inl ? b->inl : aligned_alloc(64, total);
    if (m == NULL)
        return ardi_fail(ARD_ENOMEM, "block '%s': out of memory", b->name);
    memset(m, 0, total);
    b->hot = m;
    b->nports = n;
    b->bufs = (void **)m;
    b->ho = (struct ardr_handoff **)(m + n * sizeof(void *));
    b->hsrc = (const struct ardr_handoff **)(m + 2 * n * sizeof(void *));
    b->dir = m + ptrs;
    b->fresh = (int8_t *)(m + ptrs + n);
    b->send = m + ptrs + 2 * n;
    b->whole = m + ptrs + 3 * n;
    b->info = (struct ard_info *)(m + ptrs + bytes);
    uint8_t *rest = m + ptrs + bytes + infos;
    b->src = (ard_port **)rest;
    b->port = (ard_port **)(rest + n * sizeof(void *));
    b->own = (void **)(rest + 2 * n * sizeof(void *));
    b->delayed = (bool *)(rest + 3 * n * sizeof(void *));
    for (uint32_t i = 0; i < n; i++)
        b->dir[i] = (uint8_t)b->pl.d->ports[i].dir;
    return 0;
}

int ardr_block_prepare(struct ardr_block *b)
{
    const struct ard_block_desc *d = b->pl.d;
    b->step = d->step;
    for (uint32_t i = 0; i < d->nports; i++) {
        bool first = b->own[i] == NULL;
        if (first) {
            /* cache-line aligned, so that a packet never shares a line with another's */
            size_t n = (d->ports[i].size + 63) & ~(size_t)63;
            b->own[i] = aligned_alloc(64, n);
            if (b->own[i] == NULL)
                return ardi_fail(ARD_ENOMEM, "block '%s': out of memory", b->name);
            memset(b->own[i], 0, n);
        }
        b->bufs[i] = b->own[i];
        b->whole[i] = d->ports[i].dir == ARD_OUT && (d->ports[i].flags & ARD_PORT_WHOLE);
        if (d->ports[i].dir == ARD_OUT && b->ho[i] != NULL && b->whole[i]) {
            /* private, whole: the step writes into the hand-off's other buffer (not `pub`,
             * which the readers read), swapped with `pub` after a successful step */
            struct ardr_handoff *h = b->ho[i];
            b->bufs[i] = h->pub == h->pkt[0] ? h->pkt[1] : h->pkt[0];
        } else if (d->ports[i].dir == ARD_OUT && b->ho[i] != NULL) {
            /* private to the thread: the step writes into the block's own buffer, which
             * keeps its contents (a reload keeps them too) */
        } else if (d->ports[i].dir == ARD_OUT && b->port[i] != NULL) {
            /* The step writes straight into the connection's next slot. A loan still open
             * (a reload) is the same slot with the contents the block left. */
            void *slot = ard_send_loan(b->port[i]);
            if (slot == NULL)
                return ardi_fail(ard_lasterror(), "block '%s' port '%s': %s", b->name,
                                 d->ports[i].name, ard_errdetail());
            if (first)
                memset(slot, 0, d->ports[i].size);
            b->bufs[i] = slot;
        }
        b->fresh[i] = -1;
        b->send[i] = 0;
    }
    memset(&b->ctx, 0, sizeof b->ctx);
    b->ctx.api = ARD_BLOCK_API;
    b->ctx.nports = d->nports;
    b->ctx.instance = b->name;
    b->ctx.buf = b->bufs;
    b->ctx.fresh = b->fresh;
    b->ctx.send = b->send;
    b->ctx.info = b->info;
    b->ctx.host = &host;
    return 0;
}

int ardr_block_call(struct ardr_block *b, int (*cb)(ard_block_ctx *), const char *what)
{
    if (cb == NULL)
        return 0;
    b->why[0] = '\0';
    /* a crash in the callback names the block (guard.c) */
    struct ardr_block *_Atomic *slot = ardr_crash_slot();
    struct ardr_block *was = slot ? atomic_load_explicit(slot, memory_order_relaxed) : NULL;
    if (slot)
        atomic_store_explicit(slot, b, memory_order_relaxed);
    int rc = cb(&b->ctx);
    if (slot)
        atomic_store_explicit(slot, was, memory_order_relaxed);
    if (rc > 0) {
        snprintf(b->why, sizeof b->why,
                 "%s returned %d, a positive value (a callback returns 0 or a negative ARD_E* "
                 "code)",
                 what, rc);
        rc = ARD_EINVAL;
    } else if (rc < 0 && b->why[0] == '\0')
        snprintf(b->why, sizeof b->why, "%s returned %d (%s)", what, rc, ard_strerror(rc));
    else if (rc < 0) {
        char tmp[sizeof b->why];
        snprintf(tmp, sizeof tmp, "%s", b->why);
        snprintf(b->why, sizeof b->why, "%s failed: %.200s", what, tmp);
    }
    return rc < 0 ? rc : 0;
}

int ardr_block_init(struct ardr_block *b)
{
    b->inited = true; /* close() follows init() even when init fails: it frees what init made */
    int rc = ardr_block_call(b, b->pl.d->init, "init");
    if (rc < 0)
        return rc;
    rc = ardr_block_call(b, b->pl.d->start, "start");
    if (rc < 0)
        return rc;
    atomic_store(&b->state, ARDR_RUNNING);
    return 0;
}

void ardr_block_close_cb(struct ardr_block *b)
{
    struct ardr_block *_Atomic *slot = ardr_crash_slot();
    struct ardr_block *was = slot ? atomic_load_explicit(slot, memory_order_relaxed) : NULL;
    if (slot)
        atomic_store_explicit(slot, b, memory_order_relaxed);
    b->pl.d->close(&b->ctx);
    if (slot)
        atomic_store_explicit(slot, was, memory_order_relaxed);
}

void ardr_block_close(struct ardr_block *b)
{
    if (b->inited && b->pl.d) {
        if (atomic_load(&b->state) == ARDR_RUNNING && b->pl.d->stop)
            (void)ardr_block_call(b, b->pl.d->stop, "stop");
        ardr_block_close_cb(b);
    }
    b->inited = false;
}

void ardr_block_free(struct ardr_block *b)
{
    ardr_block_close(b);
    for (uint32_t i = 0; b->hot != NULL && i < b->nports; i++) {
        ard_close(b->port[i]); /* an open loan is abandoned: the last packet stays newest */
        b->port[i] = NULL;
        b->bufs[i] = NULL;
        b->src[i] = NULL;
        b->hsrc[i] = NULL;
        free(b->ho[i]); /* its packet buffer is part of it */
        b->ho[i] = NULL;
        free(b->own[i]);
        b->own[i] = NULL;
    }
    if (b->hot != b->inl)
        free(b->hot);
    b->hot = NULL;
    b->nports = 0;
    ardr_plugin_unload(&b->pl);
    free(b->cold);
    b->cold = NULL;
}

/* IN port i of a block whose writer steps in the same thread: the writer's newest packet in
 * place. It cannot change during this step (only the writer's next commit moves it, and the
 * writer's open loan is another slot); a reader ordered before its writer (a broken cycle)
 * gets the previous tick's packet, as ard_tryrec would give it. Fresh and info as ard_tryrec
 * sets them. */
static int take_in_place(struct ardr_block *b, uint32_t i)
{
    struct ard_info in;
    const void *pkt = ard_sent(b->src[i], &in);
    if (pkt == NULL) {
        if (ard_lasterror() == ARD_ENODATA) {
            b->fresh[i] = -1;
            return 0;
        }
        snprintf(b->why, sizeof b->why, "receive on port '%s': %s", b->pl.d->ports[i].name,
                 ard_errdetail());
        return ard_lasterror();
    }
    b->bufs[i] = (void *)pkt;
    uint64_t last = b->info[i].seq;
    if (in.seq == last) {
        b->fresh[i] = 0;
        b->info[i].skipped = 0;
        return 0;
    }
    in.skipped = last ? in.seq - last - 1 : 0;
    b->info[i] = in;
    b->fresh[i] = 1;
    return 0;
}

/* IN port i of a connection private to the thread: its writer's last packet in place, with
 * fresh and info as ard_tryrec would give them (the writer counts the sequence). */
static void take_private(const struct ardr_handoff *h, void **bufs, int8_t *fresh,
                         struct ard_info *info, uint32_t i)
{
    if (h->info.seq == 0) {
        fresh[i] = -1;
        return;
    }
    bufs[i] = h->pub;
    uint64_t last = info[i].seq;
    if (h->info.seq == last) {
        fresh[i] = 0;
        info[i].skipped = 0;
        return;
    }
    info[i] = h->info;
    info[i].skipped = last ? h->info.seq - last - 1 : 0;
    fresh[i] = 1;
}

/* Publish a private connection's last packet on its shared connection, with its own times. */
static int publish(struct ardr_block *b, uint32_t i)
{
    struct ardr_handoff *h = b->ho[i];
    int e = ard_send_stamped(b->port[i], h->pub, h->info.mono_ns, h->info.real_ns);
    if (e < 0)
        return e;
    h->dirty = false;
    return 0;
}

void ardr_block_flush(struct ardr_block *b)
{
    for (uint32_t i = 0; b->hot != NULL && i < b->nports; i++)
        if (b->ho[i] != NULL && b->ho[i]->dirty)
            (void)publish(b, i);
}

void ardr_tick_start(struct ardr_tick *t, int64_t period_ns)
{
    t->raw = ardr_clock_raw();
    t->tick_ns = ard_now_ns();
    t->period_ns = period_ns;
    t->clock_ns = t->tick_ns;
    t->real_off_ns = ard_realtime_ns() - t->tick_ns;
    t->refresh = false;
}

/* The step itself, with the tick's times in the context; on failure b->why says why and no
 * OUT port is sent. */
static int call_step(struct ardr_block *b, const struct ardr_tick *t, uint8_t *send, uint32_t n)
{
    b->ctx.now_ns = t->tick_ns;
    b->ctx.period_ns = t->period_ns;
    b->ctx.steps = atomic_load_explicit(&b->steps, memory_order_relaxed);
    b->said = false;
    int rc = b->step(&b->ctx);
    if (rc == 0)
        return 0;
    if (rc > 0) {
        snprintf(b->why, sizeof b->why,
                 "step returned %d, a positive value (a step returns 0 or a negative "
                 "ARD_E* code)",
                 rc);
        rc = ARD_EINVAL;
    } else if (!b->said)
        snprintf(b->why, sizeof b->why, "step returned %d (%s)", rc, ard_strerror(rc));
    for (uint32_t i = 0; i < n; i++)
        send[i] = 0;
    return rc;
}

/* OUT port i's packet to its private hand-off h, stamped with the step's start t0: the
 * readers of this thread read `pub`. A whole port's packet becomes `pub` and the step writes
 * the old one next time; else the block keeps its buffer and `pub` gets a copy. Either way a
 * failed step never reaches `pub`. */
static int send_private(struct ardr_block *b, uint32_t i, struct ardr_handoff *h, void **bufs,
                        bool whole, struct ard_info *info, const struct ardr_tick *t, int64_t t0)
{
    if (whole) {
        void *w = bufs[i];
        bufs[i] = h->pub;
        h->pub = w;
    } else {
        memcpy(h->pub, bufs[i], h->size);
    }
    struct ard_info in = {h->info.seq + 1, t0, t0 + t->real_off_ns, 0};
    h->info = in;
    info[i] = in;
    h->dirty = true;
    if (atomic_load_explicit(&h->watched, memory_order_relaxed) || t->refresh) {
        int e = publish(b, i);
        if (e < 0) {
            snprintf(b->why, sizeof b->why, "send on port '%s': %s", b->pl.d->ports[i].name,
                     ard_errdetail());
            return e;
        }
    }
    return 0;
}

/* The step's end: this block's end is the next one's start (one clock reading per block),
 * and its statistics. */
static int step_end(struct ardr_block *b, struct ardr_tick *t, int64_t t0, int rc)
{
    t->clock_ns = t->tick_ns + ardr_clock_ns(t->raw, ardr_clock_raw());
    if (rc < 0)
        return rc;
    int64_t dt = t->clock_ns - t0;
    atomic_store_explicit(&b->steps, b->ctx.steps + 1, memory_order_relaxed);
    atomic_store_explicit(&b->sum_ns, atomic_load_explicit(&b->sum_ns, memory_order_relaxed) + dt,
                          memory_order_relaxed);
    if (dt > atomic_load_explicit(&b->max_ns, memory_order_relaxed))
        atomic_store_explicit(&b->max_ns, dt, memory_order_relaxed);
    return 0;
}

int ardr_block_step(struct ardr_block *b, struct ardr_tick *t, int skip)
{
    int64_t t0 = t->clock_ns;
    uint32_t n = b->nports;
    int rc = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (b->dir[i] != ARD_IN)
            continue;
        if ((int)i == skip) { /* received by the caller (trigger port) */
            b->fresh[i] = 1;
            continue;
        }
        if (b->hsrc[i] != NULL) {
            take_private(b->hsrc[i], b->bufs, b->fresh, b->info, i);
            continue;
        }
        if (b->src[i] != NULL) {
            rc = take_in_place(b, i);
            if (rc < 0)
                goto out;
            continue;
        }
        rc = ard_tryrec(b->port[i], b->bufs[i]);
        if (rc >= 0) {
            b->fresh[i] = (int8_t)rc;
            b->info[i] = ard_port_info(b->port[i]);
        } else if (rc == ARD_ENODATA) {
            b->fresh[i] = -1;
        } else {
            snprintf(b->why, sizeof b->why, "receive on port '%s': %s", b->pl.d->ports[i].name,
                     ard_errdetail());
            goto out;
        }
    }
    if ((rc = call_step(b, t, b->send, n)) < 0)
        goto out;
    for (uint32_t i = 0; i < n; i++) {
        if (!b->send[i])
            continue;
        b->send[i] = 0;
        if (b->ho[i] != NULL) {
            if ((rc = send_private(b, i, b->ho[i], b->bufs, b->whole[i], b->info, t, t0)) < 0)
                goto out;
            continue;
        }
        /* stamped with the step's start, read once for the timing anyway: two clock reads
         * less per packet than ard_send */
        void *sent = b->bufs[i];
        int e = ard_send_commit_stamped(b->port[i], t0, t0 + t->real_off_ns);
        void *next = e < 0 ? NULL : ard_send_loan(b->port[i]);
        if (next == NULL) {
            snprintf(b->why, sizeof b->why, "send on port '%s': %s", b->pl.d->ports[i].name,
                     ard_errdetail());
            rc = e < 0 ? e : ard_lasterror();
            goto out;
        }
        /* The buffer keeps its contents between steps (ardnet_block.h): the next slot starts
         * as the packet just sent, which is still in the cache. Not for a whole port: the
         * step writes all of it. */
        if (!b->whole[i])
            memcpy(next, sent, ard_port_size(b->port[i]));
        b->bufs[i] = next;
        b->info[i] = ard_port_info(b->port[i]);
    }
    if (t->refresh) /* outputs sent earlier and not published yet */
        ardr_block_flush(b);
out:
    return step_end(b, t, t0, rc);
}

void ardr_rec_init(struct ardr_rec *r, struct ardr_block *b)
{
    memset(r, 0, sizeof *r);
    r->b = b;
    r->hot = (uint8_t *)b->hot;
    r->nports = (uint16_t)b->nports;
    r->info = b->hot ? (uint32_t)((uint8_t *)b->info - r->hot) : 0;
    r->private = b->hot != NULL;
    for (uint32_t i = 0; i < b->nports; i++) {
        if (b->dir[i] == ARD_IN ? b->hsrc[i] == NULL : b->ho[i] == NULL)
            r->private = false;
    }
}

int ardr_rec_step(const struct ardr_rec *r, struct ardr_tick *t)
{
    /* the arrays as ardr_block_alloc lays them out */
    uint32_t n = r->nports;
    void **bufs = (void **)r->hot;
    struct ardr_handoff **ho = (struct ardr_handoff **)(r->hot + n * sizeof(void *));
    const struct ardr_handoff **hsrc =
        (const struct ardr_handoff **)(r->hot + 2 * n * sizeof(void *));
    uint8_t *dir = r->hot + 3 * n * sizeof(void *);
    int8_t *fresh = (int8_t *)dir + n;
    uint8_t *send = dir + 2 * n, *whole = dir + 3 * n;
    struct ard_info *info = (struct ard_info *)(r->hot + r->info);
    struct ardr_block *b = r->b;
    int64_t t0 = t->clock_ns;
    for (uint32_t i = 0; i < n; i++)
        if (dir[i] == ARD_IN)
            take_private(hsrc[i], bufs, fresh, info, i);
    int rc = call_step(b, t, send, n);
    for (uint32_t i = 0; rc == 0 && i < n; i++) {
        if (!send[i])
            continue;
        send[i] = 0;
        rc = send_private(b, i, ho[i], bufs, whole[i], info, t, t0);
    }
    if (rc == 0 && t->refresh)
        ardr_block_flush(b);
    return step_end(b, t, t0, rc);
}
