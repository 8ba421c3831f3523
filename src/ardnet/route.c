/* route.c - one route: attach the endpoints, check what comes in, forward it. */
#include "ardn.h"
#include "ard_common.h"

#include <arpa/inet.h>
#include <errno.h>
#include <time.h>
#include <netinet/ip.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct ardn_global ardn_g = {.dscp = -1, .sock_prio = -1, .ros_domain = -1};
atomic_bool ardn_stop;

/* Fail with the library's convention: code, and a detail naming the route. */
int ardn_route_fail(const struct ardn_route *r, int code, const char *fmt, ...)
{
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return ardi_fail(code, "route '%s': %s", r->cfg.name, msg);
}

/* A running route's message on stderr (its thread cannot return an error). */
void ardn_route_warn(const struct ardn_route *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "ardnet: route '%s': ", r->cfg.name);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* A counter with one writer (the thread of its route or input; others only read it): a
 * relaxed load and store, no read-modify-write. On x86 a locked add waits for the store
 * buffer to drain, which after the copy of a packet into shared memory cost more than the
 * rest of the packet's forwarding (docs/performance.md, "ardnet at scale"). */
void ardn_bump(_Atomic uint64_t *c, uint64_t n)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
                          memory_order_relaxed);
}

void ardn_count(struct ardn_route *r, enum ardn_counter c, uint64_t n)
{
    ardn_bump(&r->cnt.c[c], n);
}

void ardn_count_drop(struct ardn_route *r, enum ardw_cause c)
{
    ardn_bump(&r->cnt.drop[c], 1);
}

void ardn_route_init(struct ardn_route *r)
{
    memset(r, 0, sizeof *r);
    r->fd_in = -1;
    for (int i = 0; i < ARDN_MAX_OUT; i++)
        r->out_fd[i] = -1;
}

/* Port names used in this process (attach_local runs in the main thread only). */
static char (*used_names)[ARD_MAX_NAME + 1];
static size_t nused;

static void port_name(char *name, const char *conn)
{
    for (unsigned k = 1;; k++) {
        if (k == 1)
            snprintf(name, ARD_MAX_NAME + 1, "%s", conn);
        else
            snprintf(name, ARD_MAX_NAME + 1, "%.*s-%u", ARD_MAX_NAME - 6, conn, k);
        size_t i = 0;
        while (i < nused && strcmp(used_names[i], name) != 0)
            i++;
        if (i == nused)
            break;
    }
    void *n = realloc(used_names, (nused + 1) * sizeof *used_names);
    if (n) { /* without memory the next name may collide: the library then says so */
        used_names = n;
        strcpy(used_names[nused++], name);
    }
}

/* Attach a local endpoint. The connection's own size and type win when it exists; the route's
 * --size/--type are needed only to create it, and must agree when both are known. */
static int attach_local(struct ardn_route *r, struct ardn_ep *ep, enum ard_dir dir)
{
    /* A port is named after its connection (the library's messages name it), with a suffix
     * when several routes of the process attach the same connection. */
    char name[ARD_MAX_NAME + 1];
    if (ep->port_name[0])
        snprintf(name, sizeof name, "%s", ep->port_name); /* (the catalog names its own) */
    else
        port_name(name, ep->conn);
    ard_port *p = ard_create_on(name, ep->conn, dir, 0, NULL);
    if (!p && ard_lasterror() == ARD_ENOENT) {
        if (r->size == 0)
            return ardn_route_fail(r, ARD_EINVAL,
                                   "connection '%s' does not exist and its size is unknown "
                                   "(give --size and --type, or start its writer first)",
                                   ep->conn);
        p = ard_create_on(name, ep->conn, dir, r->size, r->type[0] ? r->type : NULL);
    }
    if (!p) {
        /* A contradiction between the route and the connection is a configuration error;
         * permissions, a live writer elsewhere and the like are the system's. */
        int e = ard_lasterror();
        return ardn_route_fail(r, e, "%s", ard_errdetail()[0] ? ard_errdetail() : ard_strerror(e));
    }
    ep->port = p;
    /* An input attached before its first packet: the packets before the first one taken were
     * sent while the route was there, and count as skipped like those between two. */
    if (dir == ARD_IN)
        r->in_from_start = ard_poll(p) == ARD_ENODATA;
    const char *type = ard_port_type(p);
    if (r->size != 0 && r->size != ard_port_size(p))
        return ardn_route_fail(r, ARD_EINVAL, "connection '%s' has size %zu, the route says %zu",
                               ep->conn, ard_port_size(p), r->size);
    if (r->type_given) {
        char norm[ARD_MAX_TYPE + 1] = "";
        if (r->type[0] && ard_type_normalize(r->type, norm, sizeof norm) < 0)
            return ardn_route_fail(r, ARD_EINVAL, "%s", ard_errdetail());
        if (ard_type_hash(norm) != ard_type_hash(type)) /* names do not matter */
            return ardn_route_fail(r, ARD_EINVAL,
                                   "connection '%s' has type '%s', the route says '%s'", ep->conn,
                                   type[0] ? type : "(opaque)", norm[0] ? norm : "(opaque)");
    }
    r->size = ard_port_size(p);
    snprintf(r->type, sizeof r->type, "%s", type);
    r->type_given = true;
    return 0;
}

/* Attach the local outputs, those that exist first (they tell the size). */
static int attach_outputs(struct ardn_route *r)
{
    int rc;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < r->cfg.nout; i++) {
            struct ardn_ep *ep = &r->cfg.out[i];
            struct ard_conn_stat st;
            if (ep->kind != ARDN_EP_LOCAL || ep->port ||
                (pass == 0 && ard_conn_stat(NULL, ep->conn, &st) < 0))
                continue;
            if ((rc = attach_local(r, ep, ARD_OUT)) != 0)
                return rc;
        }
    return 0;
}

/* With the size and type known: check them, parse the type, and allocate everything a
 * packet needs (none per packet). */
static int setup_packet(struct ardn_route *r)
{
    if (r->size == 0)
        return ardn_route_fail(r, ARD_EINVAL,
                               "the packet size is unknown: a route with no local connection "
                               "needs --size (and --type)");
    if (r->size > ARDW_MAX_PAYLOAD)
        return ardn_route_fail(
            r, ARD_EINVAL,
            "connection size %zu exceeds the largest packet ardnet carries (%zu bytes)", r->size,
            (size_t)ARDW_MAX_PAYLOAD);
    if (r->type[0]) {
        size_t n = 0, tsize = 0;
        if (ard_type_parse(r->type, NULL, 0, &n, &tsize) < 0)
            return ardn_route_fail(r, ARD_EINVAL, "%s", ard_errdetail());
        if (tsize != r->size)
            return ardn_route_fail(r, ARD_EINVAL, "type '%s' has size %zu, the route says %zu",
                                   r->type, tsize, r->size);
        r->fields = calloc(n, sizeof *r->fields);
        if (!r->fields)
            return ardn_route_fail(r, ARD_ENOMEM, "out of memory");
        if (ard_type_parse(r->type, r->fields, n, &r->nfields, NULL) < 0)
            return ardn_route_fail(r, ARD_EINVAL, "%s", ard_errdetail());
    }
    r->type_hash = r->type[0] ? ard_type_hash(r->type) : 0;
    for (int i = 0; i < r->cfg.nout && r->cfg.in.kind == ARDN_EP_UDP; i++) {
        struct ard_conn_stat st;
        if (r->cfg.out[i].kind == ARDN_EP_LOCAL &&
            ard_conn_stat(NULL, r->cfg.out[i].conn, &st) == 0 && st.seq > 0 &&
            (!r->track.floor || st.real_ns > r->track.floor_real_ns)) {
            r->track.floor = true;
            r->track.floor_real_ns = st.real_ns;
        }
    }
    /* At most ARDW_MAX_FRAGS: max_dgram >= ARDW_MIN_DGRAM (tests/ardnet/test_wire.c). */
    r->asm_loan = false;
    size_t overhead = ardn_seal.on ? ARDS_OVERHEAD : 0; /* (a sealed datagram is longer) */
    r->nfrag = ardw_frag_plan(r->size, r->cfg.max_dgram - overhead, &r->chunk);
    r->buf = calloc(1, r->size);
    r->held = calloc(1, r->size);
    r->tx = calloc(1, r->size);
    r->tx_hdr = calloc(r->nfrag, ARDW_LFRAG_HDR_SIZE);
    r->tx_msg = calloc(r->nfrag, sizeof *r->tx_msg);
    r->tx_iov = calloc(2 * (size_t)r->nfrag, sizeof *r->tx_iov);
    if (!r->buf || !r->held || !r->tx || !r->tx_hdr || !r->tx_msg || !r->tx_iov)
        return ardn_route_fail(r, ARD_ENOMEM, "out of memory");
    if (ardn_seal.on) {
        r->sslot = ARDW_LFRAG_HDR_SIZE + ARDS_OVERHEAD + (r->nfrag > 1 ? r->chunk : r->size);
        r->stx = malloc(r->nfrag * r->sslot);
        r->smsg = calloc(r->nfrag, sizeof *r->smsg);
        r->siov = calloc(r->nfrag, sizeof *r->siov);
        r->sdesc = malloc(ARDW_HDR_SIZE + ARD_MAX_TYPE + ARDS_OVERHEAD);
        if (!r->stx || !r->smsg || !r->siov || !r->sdesc)
            return ardn_route_fail(r, ARD_ENOMEM, "out of memory");
    }
    bool udp_out = false;
    for (int i = 0; i < r->cfg.nout; i++)
        udp_out |= r->cfg.out[i].kind == ARDN_EP_UDP;
    if (udp_out && r->conn_id != 0) { /* (a relay that passes any id on has no one type) */
        r->desc = malloc(ARDW_HDR_SIZE + ARD_MAX_TYPE);
        if (!r->desc)
            return ardn_route_fail(r, ARD_ENOMEM, "out of memory");
        struct ardw_hdr dh = {.conn_id = r->conn_id,
                              .size = (uint32_t)r->size,
                              .epoch = ardn_g.epoch,
                              .type_hash = r->type_hash};
        r->desc_len = ardw_put_desc(r->desc, &dh, r->type);
    }
    if (r->cfg.in.kind == ARDN_EP_UDP) {
        /* Any sender may fragment (its --max-datagram is its own): always ready to reassemble,
         * one packet at a time: a buffer of the packet's size (untouched when packets are
         * assembled in the output's slot) and a bit per fragment, allocated here. */
        size_t words = ardw_reasm_words(r->size);
        r->reasm_buf = malloc(r->size);
        r->reasm.bits = calloc(words, sizeof *r->reasm.bits);
        r->reasm.data = r->reasm_buf;
        r->reasm.cap = (uint32_t)r->size;
        r->reasm.max_count = (uint32_t)(words * 64);
        if (!r->reasm_buf || !r->reasm.bits)
            return ardn_route_fail(r, ARD_ENOMEM, "out of memory");
        r->asm_loan = r->cfg.nout == 1 && r->cfg.out[0].kind == ARDN_EP_LOCAL &&
                      r->cfg.every <= 1 && r->cfg.max_rate <= 0;
    }
    return 0;
}

/* Undo setup_packet: the route's packet buffers, descriptor and field table. */
static void free_packet(struct ardn_route *r)
{
    free(r->fields);
    free(r->buf);
    free(r->held);
    free(r->tx);
    free(r->tx_hdr);
    free(r->tx_msg);
    free(r->tx_iov);
    free(r->reasm_buf);
    free(r->reasm.bits);
    r->reasm_buf = NULL;
    r->reasm.bits = NULL;
    free(r->desc);
    free(r->stx);
    free(r->smsg);
    free(r->siov);
    free(r->sdesc);
    r->stx = r->sdesc = NULL;
    r->smsg = NULL;
    r->siov = NULL;
    r->fields = NULL;
    r->nfields = 0;
    r->buf = r->held = r->tx = r->tx_hdr = r->reasm.data = r->desc = NULL;
    r->asm_loan = r->loaned = false;
    r->tx_msg = NULL;
    r->tx_iov = NULL;
}

int ardn_route_open(struct ardn_route *r)
{
    int rc;
    /* What the configuration gives; the connections and the sender may tell the rest. */
    r->size = r->cfg.size;
    snprintf(r->type, sizeof r->type, "%s", r->cfg.type);
    r->type_given = r->cfg.type_given;
    r->conn_id = r->cfg.conn_id;
    if (r->cfg.nout == 0)
        return ardn_route_fail(r, ARD_EINVAL, "no output (--out)");
    if (r->type_given && r->type[0]) {
        size_t tsize;
        if (ard_type_parse(r->type, NULL, 0, NULL, &tsize) < 0)
            return ardn_route_fail(r, ARD_EINVAL, "%s", ard_errdetail());
        if (r->size != 0 && r->size != tsize)
            return ardn_route_fail(r, ARD_EINVAL, "type '%s' has size %zu, the route says %zu",
                                   r->type, tsize, r->size);
        r->size = tsize;
    }
    if (r->cfg.in.kind == ARDN_EP_LOCAL && (rc = attach_local(r, &r->cfg.in, ARD_IN)) != 0)
        return rc;
    /* A UDP input whose local outputs do not exist yet, with no --size or --type: the size
     * and type come from the sender's descriptor datagram (start order is free). */
    bool any_local = false, any_exists = false;
    for (int i = 0; i < r->cfg.nout; i++) {
        struct ard_conn_stat st;
        if (r->cfg.out[i].kind != ARDN_EP_LOCAL)
            continue;
        any_local = true;
        any_exists |= ard_conn_stat(NULL, r->cfg.out[i].conn, &st) == 0;
    }
    r->learning =
        r->cfg.in.kind == ARDN_EP_UDP && r->size == 0 && !r->type_given && any_local && !any_exists;
    if (!r->learning && (rc = attach_outputs(r)) != 0)
        return rc;
    if (!r->cfg.conn_id_given) {
        if (r->cfg.in.kind == ARDN_EP_LOCAL)
            r->conn_id = ardw_conn_id(r->cfg.in.conn);
        for (int i = 0; i < r->cfg.nout && r->conn_id == 0; i++)
            if (r->cfg.out[i].kind == ARDN_EP_LOCAL)
                r->conn_id = ardw_conn_id(r->cfg.out[i].conn);
    }
    if (r->cfg.max_dgram == 0) {
        r->cfg.max_dgram = ARDW_DEFAULT_DGRAM;
        for (int i = 0; i < r->cfg.nout; i++)
            if (r->cfg.out[i].kind == ARDN_EP_UDP && r->cfg.out[i].addr.ss_family == AF_INET6)
                r->cfg.max_dgram = ARDW_DEFAULT_DGRAM6;
    }
    if (r->cfg.max_bw > 0 && r->cfg.in.kind != ARDN_EP_LOCAL)
        return ardn_route_fail(r, ARD_EINVAL,
                               "--max-bandwidth paces a route with a local input (its sending "
                               "thread); this one's input is %s",
                               r->cfg.in.text);
    if (!r->learning && (rc = setup_packet(r)) != 0)
        return rc;
    ardn_reducer_init(&r->red, r->cfg.every, r->cfg.max_rate);
    return 0;
}

/* A learning route got the sender's descriptor (h, type): create its outputs and set up as
 * if --size and --type had been given. In the route's thread, once; a failure (say, a block
 * created the connection with another size meanwhile) is reported and the route keeps
 * learning. */
static void learn(struct ardn_route *r, const struct ardw_hdr *h, const char *type)
{
    r->size = h->size;
    snprintf(r->type, sizeof r->type, "%s", type);
    r->type_given = true;
    int rc = attach_outputs(r);
    if (rc == 0)
        rc = setup_packet(r);
    if (rc == 0) {
        r->learning = false;
        ardn_learnt_sockbuf(r);
        return;
    }
    if (!r->learn_reported)
        ardn_route_warn(r, "cannot take the sender's size %u and type '%s': %s", h->size, type,
                        ard_errdetail());
    r->learn_reported = true;
    for (int i = 0; i < r->cfg.nout; i++) {
        ard_close(r->cfg.out[i].port);
        r->cfg.out[i].port = NULL;
    }
    free_packet(r);
    r->size = 0;
    r->type[0] = '\0';
    r->type_given = false;
}

static void settle(struct ardn_route *r);

/* ---- forwarding ---------------------------------------------------------------------------- */

/* Put the packet in r->held (header h) into r->tx and the datagram list r->tx_msg: one
 * datagram, or r->nfrag fragments of r->chunk payload bytes (the last one shorter). */
static void encode(struct ardn_route *r, const struct ardw_hdr *h)
{
    r->tx_h = *h;
    /* Latest value: a packet still being paced out is abandoned for this one. */
    for (int i = 0; i < r->cfg.nout; i++)
        if (r->pace_busy & (1u << i))
            ardn_count(r, ARDN_C_PACED, 1);
    r->pace_busy = 0;
    for (int i = 0; i < ARDN_MAX_OUT; i++)
        r->pace_next[i] = 0;
    /* In wire order: the packet as it is on a little-endian host (sent from r->held, which
     * stays untouched until the next packet replaces it), else converted into r->tx. */
    uint16_t one = 1;
    if (*(const uint8_t *)&one == 1 || r->nfields == 0) {
        r->txp = r->held;
    } else {
        ardw_payload_to_wire(r->tx, r->held, r->size, r->fields, r->nfields);
        r->txp = r->tx;
    }
    for (unsigned i = 0; i < r->nfrag; i++) {
        struct ardw_hdr fh = *h; /* (a relayed header may come from a received fragment) */
        fh.frag_index = fh.frag_count = 0;
        fh.frag_off = 0;
        size_t off = 0, len = r->size;
        if (r->nfrag > 1) {
            off = i * r->chunk;
            len = r->size - off < r->chunk ? r->size - off : r->chunk;
            fh.frag_index = i;
            fh.frag_count = r->nfrag;
            fh.frag_off = (uint32_t)off;
        }
        uint8_t *hb = r->tx_hdr + (size_t)i * ARDW_LFRAG_HDR_SIZE;
        size_t hlen = ardw_put_hdr(hb, &fh);
        r->tx_iov[2 * i] = (struct iovec){hb, hlen};
        r->tx_iov[2 * i + 1] = (struct iovec){(uint8_t *)(uintptr_t)r->txp + off, len};
        r->tx_msg[i] = (struct mmsghdr){.msg_hdr = {.msg_iov = &r->tx_iov[2 * i], .msg_iovlen = 2}};
    }
    r->sealed_now = false;
}

/* Publish the packet at r->wire (wire order) on port p: converted into a loaned slot. */
static int send_wire(struct ardn_route *r, ard_port *p, int64_t mono, int64_t real)
{
    void *slot = ard_send_loan(p);
    if (!slot)
        return ard_lasterror();
    /* (a packet assembled in this slot is r->wire itself: converted in place) */
    ardw_payload_from_wire(slot, r->wire, r->size, r->fields, r->nfields);
    r->loaned = false;
    return ard_send_commit_stamped(p, mono, real);
}

void ardn_send_error(struct ardn_route *r, struct ardn_dest *d, int e)
{
    /* A full buffer or an unreachable peer is the network's business (counted); anything
     * else is a fault worth one message per destination. */
    if (e && e != EAGAIN && e != EWOULDBLOCK && e != ENOBUFS && e != ECONNREFUSED &&
        e != EHOSTUNREACH && e != ENETUNREACH && !atomic_exchange(&d->reported, true))
        ardn_route_warn(r, "send to %s: %s", d->text, strerror(e));
}

/* Send the packet in r->held (host order) with header h to every output; every
 * ARDW_DESC_EVERY_NS, the UDP outputs get the descriptor datagram first. A route of a
 * sending thread (s) queues its UDP packets there, to be packed with the other routes'. */
static void forward(struct ardn_route *r, const struct ardw_hdr *h, int64_t now,
                    struct ardn_sender *s)
{
    bool encoded = false, desc = r->desc && now >= r->desc_next_ns;
    if (desc)
        r->desc_next_ns = now + ARDW_DESC_EVERY_NS;
    for (int i = 0; i < r->cfg.nout; i++) {
        struct ardn_ep *ep = &r->cfg.out[i];
        if (ep->kind == ARDN_EP_LOCAL) {
            /* Republish with the writer's CLOCK_REALTIME so that logs on both hosts line up;
             * its CLOCK_MONOTONIC is meaningful only on the writer's own host: a received
             * packet carries the time of the wake-up that took it in (now). */
            int64_t mono = r->cfg.in.kind == ARDN_EP_LOCAL ? h->mono_ns : now;
            if (r->wire ? send_wire(r, ep->port, mono, h->real_ns) == 0
                        : ard_send_stamped(ep->port, r->held, mono, h->real_ns) == 0)
                ardn_count(r, ARDN_C_SENT, 1);
            else
                ardn_count(r, ARDN_C_SEND_ERRORS, 1);
            continue;
        }
        if (ep->kind == ARDN_EP_ROS2) {
            ardn_count(r, ardn_dds_write(r, ep, r->held, h) == 0 ? ARDN_C_SENT : ARDN_C_SEND_ERRORS,
                       1);
            continue;
        }
        if (!encoded) {
            encode(r, h);
            encoded = true;
        }
        if (s) {
            r->desc_due |= desc;
            ardn_txq_add(s, r, i);
            continue;
        }
        struct ardn_dest *d = r->dest[i];
        if (desc && ardn_seal.on) /* best effort, like everything on UDP: counted nowhere */
            (void)send(d->fd, r->sdesc, ardn_sealed_desc(r), MSG_DONTWAIT);
        else if (desc)
            (void)send(d->fd, r->desc, r->desc_len, MSG_DONTWAIT);
        /* Non-blocking, all fragments back to back in one call: a full socket buffer drops
         * the rest of this packet rather than queueing it (the receiver gives it up when the
         * next packet comes). */
        struct mmsghdr *msgs = ardn_seal.on ? ardn_sealed_packet(r) : r->tx_msg;
        int n = 0, e = 0;
        while (n < (int)r->nfrag) { /* (a call takes at most UIO_MAXIOV messages) */
            int k = sendmmsg(d->fd, msgs + n, r->nfrag - (unsigned)n, 0);
            if (k <= 0) {
                e = k < 0 ? errno : 0;
                break;
            }
            n += k;
        }
        if (n > 0) {
            atomic_fetch_add_explicit(&d->datagrams, (uint64_t)n, memory_order_relaxed);
            if (r->nfrag > 1)
                ardn_count(r, ARDN_C_FRAGMENTS, (uint64_t)n);
        }
        if (n == (int)r->nfrag) {
            ardn_count(r, ARDN_C_SENT, 1);
            atomic_fetch_add_explicit(&d->packets, 1, memory_order_relaxed);
            continue;
        }
        ardn_count(r, ARDN_C_SEND_ERRORS, 1);
        atomic_fetch_add_explicit(&d->send_errors, 1, memory_order_relaxed);
        ardn_send_error(r, d, e);
    }
}

void ardn_offer(struct ardn_route *r, const struct ardw_hdr *h, int64_t now, struct ardn_sender *s)
{
    bool replaced;
    enum ardn_red_action a = ardn_reducer_offer(&r->red, now, &replaced);
    if (a == ARDN_RED_DROP || replaced)
        ardn_count(r, ARDN_C_REDUCED, 1);
    if (a == ARDN_RED_DROP) {
        r->wire = NULL;
        return;
    }
    if (r->wire) {
        bool local = true;
        for (int i = 0; i < r->cfg.nout; i++)
            local &= r->cfg.out[i].kind == ARDN_EP_LOCAL;
        if (a == ARDN_RED_SEND && local) {
            /* Published from the receive buffer, converted straight into the connection's
             * slot: one copy of the payload (r->held keeps what it had; nothing is held). */
            forward(r, h, now, s);
            r->wire = NULL;
            ardn_reducer_sent(&r->red, now);
            return;
        }
        settle(r);
    }
    /* A packet to forward or hold moves to r->held (the buffers are swapped), so that the
     * packets taken in while one is held never touch it. */
    uint8_t *t = r->held;
    r->held = r->buf;
    r->buf = t;
    r->held_hdr = *h;
    if (a == ARDN_RED_SEND) {
        forward(r, &r->held_hdr, now, s);
        ardn_reducer_sent(&r->red, now);
    }
}

int ardn_take_local(struct ardn_route *r, int64_t now, struct ardn_sender *s)
{
    int rc = ard_tryrec(r->cfg.in.port, r->buf);
    if (rc == 1) {
        struct ard_info info = ard_port_info(r->cfg.in.port);
        ardn_count(r, ARDN_C_RECEIVED, 1);
        ardn_count(r, ARDN_C_SKIPPED, r->in_from_start ? info.seq - 1 : info.skipped);
        r->in_from_start = false;
        struct ardw_hdr h = {.conn_id = r->conn_id,
                             .size = (uint32_t)r->size,
                             .epoch = ardn_g.epoch,
                             .seq = info.seq,
                             .mono_ns = info.mono_ns,
                             .real_ns = info.real_ns,
                             .type_hash = r->type_hash};
        ardn_offer(r, &h, now, s);
        return 0;
    }
    if (rc == 0 || rc == ARD_ENODATA)
        return 0;
    if (!r->in_reported)
        ardn_route_warn(r, "receive from '%s': %s", r->cfg.in.conn, ard_strerror(rc));
    r->in_reported = true;
    return rc;
}

static bool from_peer(const struct ardn_route *r, const struct sockaddr_storage *src)
{
    if (!r->cfg.from[0])
        return true;
    if (src->ss_family != r->cfg.from_addr.ss_family)
        return false;
    if (src->ss_family == AF_INET) {
        const struct sockaddr_in *a = (const struct sockaddr_in *)src;
        const struct sockaddr_in *b = (const struct sockaddr_in *)&r->cfg.from_addr;
        return a->sin_addr.s_addr == b->sin_addr.s_addr &&
               (!r->cfg.from_port || a->sin_port == b->sin_port);
    }
    const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)src;
    const struct sockaddr_in6 *b = (const struct sockaddr_in6 *)&r->cfg.from_addr;
    return memcmp(&a->sin6_addr, &b->sin6_addr, sizeof a->sin6_addr) == 0 &&
           (!r->cfg.from_port || a->sin6_port == b->sin6_port);
}

/* Record the delivery of a whole packet (h, payload in wire order) and convert it into
 * r->buf, or with `ref` only point r->wire at it (the payload stays where it is until the
 * route publishes it or ardn_input_settle runs). */
static void deliver(struct ardn_route *r, const struct ardw_hdr *h, const uint8_t *payload,
                    int64_t now_ns, bool ref)
{
    ardw_delivered(&r->track, h, now_ns);
    r->wire = ref ? payload : NULL;
    if (!ref)
        ardw_payload_from_wire(r->buf, payload, r->size, r->fields, r->nfields);
}

/* Convert a packet delivered by reference into r->buf. */
static void settle(struct ardn_route *r)
{
    if (r->loaned)
        return; /* (assembled in the output's slot: stays there until published) */
    if (r->wire)
        ardw_payload_from_wire(r->buf, r->wire, r->size, r->fields, r->nfields);
    r->wire = NULL;
}

void ardn_input_settle(struct ardn_input *in)
{
    for (int t = 0; t < in->ntouched; t++)
        settle(in->touched[t]);
}

/* The seal of the datagram being taken in (0 without a key) into its packet's header. */
static void sealed_hdr(const struct ardn_route *r, struct ardw_hdr *h)
{
    h->seal_ctr = r->input && ardn_seal.on ? r->input->seal_ctr : 0;
    h->proven_ns = r->input && ardn_seal.on ? r->input->proven_ns : 0;
}

/* A whole packet is published through the output's loaned slot, where a packet in progress
 * is being assembled: that one cannot go on (its fragments so far are overwritten), even when
 * it is newer. Returns true if one was given up. */
static bool drop_loaned(struct ardn_route *r)
{
    if (!r->asm_loan || !r->reasm.busy)
        return false;
    r->reasm.busy = false;
    return true;
}

/* ardn_route_take; a whole datagram's payload is delivered by reference with `ref`. */
static enum ardw_cause take(struct ardn_route *r, const uint8_t *d, size_t len,
                            const struct sockaddr_storage *src, struct ardw_hdr *h, int64_t now_ns,
                            bool ref)
{
    if (src && !from_peer(r, src))
        return ARDW_PEER;
    struct ardw_expect e = {
        .conn_id = r->conn_id, .size = (uint32_t)r->size, .type_hash = r->type_hash};
    if (len >= ARDW_HDR_SIZE && d[5] == ARDW_FLAG_DESC) {
        enum ardw_cause c = ardw_parse_desc(d, len, &e, h, r->peer_type);
        return c == ARDW_OK ? ARDW_DESC : c;
    }
    if (r->learning)
        return ARDW_UNKNOWN;
    enum ardw_cause c = ardw_parse(d, len, &e, h);
    sealed_hdr(r, h);
    if (c == ARDW_OK)
        c = ardw_order(&r->track, h, now_ns);
    if (c != ARDW_OK)
        return c;
    const uint8_t *payload = d + ARDW_HDR_SIZE;
    if (h->frag_count != 0) {
        bool abandoned, current = r->track.have && h->epoch == r->track.epoch;
        if (r->asm_loan) {
            /* Into the output's next slot (the same one while the loan is open: a packet
             * abandoned there is simply overwritten; readers never see a loaned slot). */
            uint8_t *slot = ard_send_loan(r->cfg.out[0].port);
            if (!slot)
                return ARDW_FRAG_INVALID; /* (an attached output always lends one) */
            r->reasm.data = slot;
        }
        c = ardw_reasm_add(&r->reasm, h, d + len - h->frag_len, current, now_ns, &abandoned);
        if (abandoned)
            ardn_count_drop(r, ARDW_PARTIAL);
        if (c != ARDW_OK)
            return c;
        payload = r->reasm.data;
        /* (the next fragment may overwrite the route's own buffer; a loaned slot is published
         * before the next fragment is taken in: see result) */
        ref = r->asm_loan;
        r->loaned = r->asm_loan;
    } else if (ardw_reasm_supersede(&r->reasm, h->epoch, h->seq) || drop_loaned(r)) {
        ardn_count_drop(r, ARDW_PARTIAL); /* a whole newer packet overtook it */
    }
    deliver(r, h, payload, now_ns, ref);
    return ARDW_OK;
}

/* Check one datagram; on success it is the newest, converted into r->buf. */
enum ardw_cause ardn_route_take(struct ardn_route *r, const uint8_t *d, size_t len,
                                const struct sockaddr_storage *src, struct ardw_hdr *h,
                                int64_t now_ns)
{
    return take(r, d, len, src, h, now_ns, false);
}

/* One entry of a packed datagram (h from ardw_pack_entry): the same checks as a whole
 * packet's after the framing. */
static enum ardw_cause take_entry(struct ardn_route *r, struct ardw_hdr *h, const uint8_t *payload,
                                  const struct sockaddr_storage *src, int64_t now_ns, bool ref)
{
    sealed_hdr(r, h);
    if (src && !from_peer(r, src))
        return ARDW_PEER;
    if (r->learning)
        return ARDW_UNKNOWN;
    struct ardw_expect e = {
        .conn_id = r->conn_id, .size = (uint32_t)r->size, .type_hash = r->type_hash};
    enum ardw_cause c = ardw_check(h, &e);
    if (c == ARDW_OK)
        c = ardw_order(&r->track, h, now_ns);
    if (c != ARDW_OK)
        return c;
    if (ardw_reasm_supersede(&r->reasm, h->epoch, h->seq) || drop_loaned(r))
        ardn_count_drop(r, ARDW_PARTIAL);
    deliver(r, h, payload, now_ns, ref);
    return ARDW_OK;
}

/* A sender whose packets this route can never deliver (another size or type) is reported
 * once per route, besides the drop counters. Its descriptor datagram (sent every second)
 * names its type; a sender that sends none (an older ardnet) is reported by hash after
 * ARDW_DESC_EVERY_NS * 2 without one. */
static void describe(char *buf, size_t len, const char *type, uint64_t hash, size_t size)
{
    if (type && type[0])
        snprintf(buf, len, "type '%s' (%zu bytes)", type, size);
    else if (type || hash == 0)
        snprintf(buf, len, "an opaque connection (no type) of %zu bytes", size);
    else
        snprintf(buf, len, "type hash %016llx (%zu bytes)", (unsigned long long)hash, size);
}

static void report_mismatch(struct ardn_route *r, const struct ardw_hdr *h, const char *type,
                            const struct sockaddr_storage *src)
{
    if (r->mismatch_reported)
        return;
    r->mismatch_reported = true;
    char from[128], theirs[ARD_MAX_TYPE + 64], ours[ARD_MAX_TYPE + 64];
    ardn_addr_str(src, from, sizeof from);
    describe(theirs, sizeof theirs, type, h->type_hash, h->size);
    describe(ours, sizeof ours, r->type, r->type_hash, r->size);
    bool size = h->size != r->size;
    ardn_route_warn(r,
                    "%s sends %s, this route expects %s: nothing from it can be delivered (%s "
                    "counts the datagrams); give this side %s%s%s",
                    from, theirs, ours, size ? "drop_size" : "drop_type",
                    size ? "the sender's --size and --type" : "--type '",
                    size ? "" : (type ? type : "?"), size ? "" : "'");
}

void ardn_tick(struct ardn_route *r, int64_t now, struct ardn_sender *s)
{
    if (r->mismatch_ns && now - r->mismatch_ns >= 2 * ARDW_DESC_EVERY_NS)
        report_mismatch(r, &r->mismatch_hdr, NULL, &r->mismatch_src);
    if (ardn_reducer_due(&r->red, now)) {
        forward(r, &r->held_hdr, now, s);
        ardn_reducer_sent(&r->red, now);
    }
}

/* What came of one datagram or packed entry for route r. */
static void result(struct ardn_input *in, struct ardn_route *r, enum ardw_cause c,
                   const struct ardw_hdr *h, const struct sockaddr_storage *src, int64_t now)
{
    if (c == ARDW_PENDING || (c == ARDW_OK && h->frag_count != 0))
        ardn_count(r, ARDN_C_FRAGMENTS, 1);
    if (c == ARDW_PENDING)
        return;
    if (c == ARDW_DESC) {
        if (r->learning) {
            learn(r, h, r->peer_type);
        } else if (h->type_hash != r->type_hash || h->size != r->size) {
            /* Refused and counted, never applied: a live connection keeps its type. */
            ardn_count_drop(r, h->size != r->size ? ARDW_SIZE : ARDW_TYPE);
            if (src)
                report_mismatch(r, h, r->peer_type, src);
        }
        return;
    }
    if (c != ARDW_OK) {
        ardn_count_drop(r, c);
        if ((c == ARDW_TYPE || c == ARDW_SIZE) && !r->mismatch_ns) {
            r->mismatch_ns = now;
            r->mismatch_hdr = *h;
            if (src)
                r->mismatch_src = *src;
        }
        return;
    }
    ardn_count(r, ARDN_C_RECEIVED, 1);
    if (h->flags == ARDW_FLAG_PACK)
        ardn_count(r, ARDN_C_PACKED, 1);
    if (r->fresh)
        ardn_count(r, ARDN_C_SUPERSEDED, 1);
    if (r->loaned) {
        /* Assembled in the output's slot: published now, before a fragment of the next
         * packet can go there; a whole packet of this batch still waiting is older. */
        r->skip_offer = r->fresh;
        r->newest = *h;
        if (r->conn_id != 0)
            r->newest.conn_id = r->conn_id;
        ardn_offer(r, &r->newest, now, NULL);
        r->loaned = false;
        return;
    }
    if (!r->fresh)
        in->touched[in->ntouched++] = r;
    r->skip_offer = false;
    r->fresh = true;
    r->newest = *h;
}

/* The route of a connection id: by binary search (routes sorted, ids distinct); a lone route
 * takes everything (it counts what is not its own). */
static struct ardn_route *route_of(const struct ardn_input *in, uint32_t id)
{
    if (in->nroutes == 1)
        return in->routes[0];
    int lo = 0, hi = in->nroutes;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if ((in->ids ? in->ids[mid] : in->routes[mid]->conn_id) < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < in->nroutes && in->routes[lo]->conn_id == id ? in->routes[lo] : NULL;
}

/* A datagram that no single route can be blamed for: counted on the lone route, or on the
 * shared input. */
void ardn_input_drop(struct ardn_input *in, enum ardw_cause c)
{
    if (in->nroutes == 1)
        ardn_count_drop(in->routes[0], c);
    else
        ardn_bump(&in->drop[c], 1);
}

static uint32_t get32le(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void ardn_input_datagram(struct ardn_input *in, const uint8_t *d, size_t len,
                         const struct sockaddr_storage *src, int64_t now)
{
    if (in->nroutes > 1)
        ardn_bump(&in->datagrams, 1);
    if (ardn_seal.on) {
        /* (the receive buffer is the input's own: opened in place) */
        d = ardn_unseal(in, (uint8_t *)(uintptr_t)d, &len, src, now);
        if (!d)
            return;
    }
    ardn_input_plain(in, d, len, src, now);
}

void ardn_input_plain(struct ardn_input *in, const uint8_t *d, size_t len,
                      const struct sockaddr_storage *src, int64_t now)
{
    struct ardw_hdr h = {0};
    if (len >= ARDW_HDR_SIZE && d[5] == ARDW_FLAG_PACK) {
        uint64_t epoch;
        unsigned count;
        enum ardw_cause c = ardw_parse_packed(d, len, &epoch, &count);
        if (c != ARDW_OK) {
            ardn_input_drop(in, c);
            return;
        }
        if (in->nroutes > 1)
            ardn_bump(&in->packed, 1);
        size_t off = ARDW_PACK_HDR_SIZE;
        for (unsigned i = 0; i < count; i++) {
            const uint8_t *payload = ardw_pack_entry(d, &off, epoch, &h);
            struct ardn_route *r = route_of(in, h.conn_id);
            if (!r)
                ardn_input_drop(in, ARDW_CONN);
            else
                result(in, r, take_entry(r, &h, payload, src, now, in->by_reference), &h, src, now);
        }
        return;
    }
    struct ardn_route *r = route_of(in, len >= 12 ? get32le(d + 8) : 0);
    if (!r) { /* the framing's fault if it has one, else an unknown connection */
        enum ardw_cause c = ARDW_CONN;
        if (len < ARDW_HDR_SIZE || d[5] != ARDW_FLAG_DESC)
            c = ardw_parse(d, len, NULL, &h);
        ardn_input_drop(in, c == ARDW_OK ? ARDW_CONN : c);
        return;
    }
    enum ardw_cause c;
    if (src && !from_peer(r, src))
        c = ARDW_PEER;
    else if (len > ardn_rx_slot(r)) /* longer than anything valid for this route */
        c = r->learning ? ARDW_UNKNOWN : ARDW_OVERSIZED;
    else
        c = take(r, d, len, NULL, &h, now, in->by_reference);
    result(in, r, c, &h, src, now);
}

size_t ardn_rx_slot(const struct ardn_route *r)
{
    /* The largest valid datagram is a fragment header with the whole payload but one byte, or
     * a descriptor datagram with the longest descriptor. */
    size_t data = ARDW_LFRAG_HDR_SIZE + r->size + 1, desc = ARDW_HDR_SIZE + ARD_MAX_TYPE + 1;
    return data > desc ? data : desc;
}

void ardn_route_close(struct ardn_route *r)
{
    r->fd_in = -1; /* (the sockets are the plan's) */
    for (int i = 0; i < r->cfg.nout; i++) {
        r->out_fd[i] = -1;
        ard_close(r->cfg.out[i].port);
        r->cfg.out[i].port = NULL;
    }
    ard_close(r->cfg.in.port);
    r->cfg.in.port = NULL;
    free_packet(r);
}
