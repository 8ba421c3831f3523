/*
 * plan.c - the process's sockets and threads. Routes that send to one UDP destination share
 * its socket; the local inputs are waited on together with ard_wait, one thread per
 * ARD_WAIT_SLEEP_MAX of them, and the packets a thread finds at one wake-up are packed into
 * as few datagrams as fit (docs/wire.md, "Packed datagram"), sent with one sendmmsg. Routes
 * that listen on one address share its socket and receiving thread, told apart by connection
 * id.
 */
#include "ard_common.h"
#include "ardn.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/ip.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define IDLE_NS 250000000LL       /* how often an idle thread looks at the stop flag */
#define ERROR_PAUSE_NS 100000000L /* pause after an error that would recur at once */
#define BATCH 16                  /* datagrams per receive call */
#define DRAIN_MAX 256             /* datagrams taken in before publishing, at most */
#define SWEEP_NS 10000000LL       /* how often every route of an input is looked at */
#define RCVBUF_CAP (256u << 10)   /* receiving socket's buffer, at most (see open_input) */
/* A receive slot holds any UDP datagram: a packed one is as long as its sender made it. */
#define RX_SLOT ((ARDW_MAX_DGRAM + 1 + 7) & ~7u)
#define PACK_WINDOW 16 /* first fit among the last datagrams opened */
/* --max-bandwidth: datagrams go out up to this far ahead of their paced time, in bursts of
 * about half of it (fewer wake-ups than one per datagram). */
#define PACE_AHEAD_NS 1000000LL
/* Without --max-bandwidth, a packet of more fragments goes out in rounds of this many, the
 * thread's other inputs looked at in between: another route's packet taken in meanwhile (1
 * kHz joint data next to camera frames) waits for one round, not for a whole frame's burst.
 * The packet itself is sent to its end (its route takes no newer one meanwhile), as in one
 * burst. */
#define FRAG_ROUND 64u

/* Best effort, room for a few packets in the socket: a fragmented packet is many datagrams
 * at once. Capped by net.core.[rw]mem_max; a failure leaves the default. */
static void grow_sockbuf(int fd, int opt, size_t want)
{
    int cur = 0;
    socklen_t len = sizeof cur;
    if (getsockopt(fd, SOL_SOCKET, opt, &cur, &len) == 0 && (size_t)cur / 2 >= want)
        return; /* the kernel reports twice the value set */
    int v = want > (size_t)(64 << 20) ? 64 << 20 : (int)want;
    /* Beyond net.core.[rw]mem_max only with CAP_NET_ADMIN (root): the FORCE options. */
    int force = opt == SO_RCVBUF ? SO_RCVBUFFORCE : SO_SNDBUFFORCE;
    if (setsockopt(fd, SOL_SOCKET, force, &v, sizeof v) < 0)
        (void)setsockopt(fd, SOL_SOCKET, opt, &v, sizeof v);
}

/* What the kernel granted (the usable half of what it reports), for the log. */
static size_t sockbuf_granted(int fd, int opt)
{
    int cur = 0;
    socklen_t len = sizeof cur;
    return getsockopt(fd, SOL_SOCKET, opt, &cur, &len) == 0 ? (size_t)cur / 2 : 0;
}

static int set_sockopts(const struct ardn_route *r, int fd, int family)
{
    if (ardn_g.dev[0] &&
        setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, ardn_g.dev, (socklen_t)strlen(ardn_g.dev)) < 0)
        return ardn_route_fail(r, ARD_ESYS, "--dev %s: %s", ardn_g.dev, strerror(errno));
    if (ardn_g.dscp >= 0) {
        int tos = ardn_g.dscp << 2;
        int rc = family == AF_INET6 ? setsockopt(fd, IPPROTO_IPV6, IPV6_TCLASS, &tos, sizeof tos)
                                    : setsockopt(fd, IPPROTO_IP, IP_TOS, &tos, sizeof tos);
        if (rc < 0)
            return ardn_route_fail(r, ARD_ESYS, "--dscp %d: %s", ardn_g.dscp, strerror(errno));
    }
    if (ardn_g.sock_prio >= 0 &&
        setsockopt(fd, SOL_SOCKET, SO_PRIORITY, &ardn_g.sock_prio, sizeof ardn_g.sock_prio) < 0)
        return ardn_route_fail(r, ARD_ESYS, "--sock-prio %d: %s", ardn_g.sock_prio,
                               strerror(errno));
    return 0;
}

static bool is_any(const struct sockaddr_storage *a)
{
    if (a->ss_family == AF_INET)
        return ((const struct sockaddr_in *)a)->sin_addr.s_addr == htonl(INADDR_ANY);
    if (a->ss_family == AF_INET6)
        return IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)a)->sin6_addr);
    return false;
}

/* The --bind address with the given port, if --bind was given and matches the family. */
static int bind_addr(const struct ardn_route *r, int family, uint16_t port_be,
                     struct sockaddr_storage *a, socklen_t *len, bool *have)
{
    *have = false;
    if (!ardn_g.bind[0])
        return 0;
    bool has_port;
    if (ardn_resolve(ardn_g.bind, a, len, &has_port) < 0)
        return ardn_route_fail(r, ARD_EINVAL, "--bind: %s", ard_errdetail());
    if (a->ss_family != family)
        return 0;
    if (family == AF_INET)
        ((struct sockaddr_in *)a)->sin_port = port_be;
    else
        ((struct sockaddr_in6 *)a)->sin6_port = port_be;
    *have = true;
    return 0;
}

static void pause_ns(int64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
    nanosleep(&ts, NULL);
}

/* ---- sending -------------------------------------------------------------------------------- */

enum txkind { TX_DESC, TX_PACK, TX_WHOLE, TX_FRAG };

struct txmsg {
    struct ardn_route *r; /* DESC, WHOLE, FRAG */
    int first, count;     /* PACK: its entries in order[] */
    unsigned frag;        /* FRAG: index */
    enum txkind kind;
};

/* What one sending thread has for one destination at a wake-up, and the room to pack and send
 * it (allocated at start-up for every route of the thread that sends there). */
struct ardn_txq {
    struct ardn_dest *d;
    struct ardn_route **pend;
    int npend, cap;
    int *place, *order; /* per packet: its datagram; packets by datagram */
    size_t *dg_len;     /* per packed datagram */
    int *dg_n, *dg_first, *dg_fill;
    uint8_t *buf; /* the packed datagrams, back to back */
    size_t bytes; /* its size: every packet packed alone */
    struct mmsghdr *msg;
    struct iovec *iov;
    struct txmsg *own;
    int cap_msg;
};

void ardn_txq_add(struct ardn_sender *s, struct ardn_route *r, int i)
{
    if (r->queued & (1u << i))
        return;
    r->queued |= 1u << i;
    struct ardn_txq *q = &s->q[r->txq[i]];
    if (q->npend < q->cap)
        q->pend[q->npend++] = r;
}

/* Assign the packets that can share a datagram (header + entry fit the destination's limit)
 * to packed datagrams, first fit; returns their number. place[k] = -1: alone. */
static int pack_plan(struct ardn_txq *q)
{
    int ndg = 0;
    size_t limit = q->d->limit - (ardn_seal.on ? ARDS_OVERHEAD : 0);
    for (int k = 0; k < q->npend; k++) {
        size_t need = ARDW_ENTRY_HDR_SIZE + q->pend[k]->size;
        q->place[k] = -1;
        if (ARDW_PACK_HDR_SIZE + need > limit)
            continue;
        int g = ndg > PACK_WINDOW ? ndg - PACK_WINDOW : 0;
        while (g < ndg && (q->dg_len[g] + need > limit || q->dg_n[g] >= (int)ARDW_MAX_ENTRIES))
            g++;
        if (g == ndg) {
            q->dg_len[ndg] = ARDW_PACK_HDR_SIZE;
            q->dg_n[ndg++] = 0;
        }
        q->dg_len[g] += need;
        q->dg_n[g]++;
        q->place[k] = g;
    }
    int pos = 0;
    for (int g = 0; g < ndg; g++) {
        q->dg_first[g] = q->dg_fill[g] = pos;
        pos += q->dg_n[g];
    }
    for (int k = 0; k < q->npend; k++)
        if (q->place[k] >= 0)
            q->order[q->dg_fill[q->place[k]]++] = k;
    return ndg;
}

static void add_msg(struct ardn_txq *q, int *nm, struct mmsghdr m, struct txmsg own)
{
    q->msg[*nm] = m;
    q->own[*nm] = own;
    (*nm)++;
}

/* Build the datagrams of the queued packets: descriptors first, then packed datagrams (a
 * packed datagram of one packet goes as a whole packet), then the packets too big to share. */
/* Output index of r for destination d. */
static int out_of(const struct ardn_route *r, const struct ardn_dest *d)
{
    for (int i = 0; i < r->cfg.nout; i++)
        if (r->dest[i] == d)
            return i;
    return 0;
}

/* The fragments [*f0, *f1) of r's packet that may go to output i now. --max-bandwidth: each
 * datagram (with its IP and UDP headers) moves the output's paced time on by its bytes over
 * the rate; a datagram goes when that time is at most PACE_AHEAD_NS ahead of now. Else the
 * next FRAG_ROUND of them. */
static void pace_window(struct ardn_route *r, int i, int64_t now, unsigned *f0, unsigned *f1)
{
    bool busy = r->pace_busy & (1u << i);
    if (r->cfg.max_bw <= 0) { /* not paced: the next round (see FRAG_ROUND) */
        unsigned f = busy ? r->pace_next[i] : 0;
        *f0 = f;
        *f1 = r->nfrag - f > FRAG_ROUND ? f + FRAG_ROUND : r->nfrag;
        r->pace_next[i] = *f1;
        if (*f1 < r->nfrag)
            r->pace_busy |= 1u << i;
        else
            r->pace_busy &= ~(1u << i);
        return;
    }
    if (!busy) {
        r->pace_next[i] = 0;
        if (r->pace_t[i] < now)
            r->pace_t[i] = now; /* (idle time is not saved up for a burst) */
    }
    size_t dgram = ARDW_LFRAG_HDR_SIZE + r->chunk + 28 + (ardn_seal.on ? ARDS_OVERHEAD : 0);
    int64_t step = (int64_t)((double)dgram * 1e9 / r->cfg.max_bw);
    unsigned f = r->pace_next[i];
    *f0 = f;
    while (f < r->nfrag && r->pace_t[i] <= now + PACE_AHEAD_NS) {
        r->pace_t[i] += step;
        f++;
    }
    *f1 = f;
    r->pace_next[i] = f;
    if (f < r->nfrag)
        r->pace_busy |= 1u << i;
    else
        r->pace_busy &= ~(1u << i);
}

static int build(struct ardn_txq *q, int64_t now)
{
    int nm = 0;
    for (int k = 0; k < q->npend; k++) {
        struct ardn_route *r = q->pend[k];
        if (!r->desc_due)
            continue;
        q->iov[nm] = ardn_seal.on ? (struct iovec){r->sdesc, ardn_sealed_desc(r)}
                                  : (struct iovec){r->desc, r->desc_len};
        add_msg(q, &nm, (struct mmsghdr){.msg_hdr = {.msg_iov = &q->iov[nm], .msg_iovlen = 1}},
                (struct txmsg){.r = r, .kind = TX_DESC});
    }
    int ndg = pack_plan(q);
    size_t at = 0;
    for (int g = 0; g < ndg; g++) {
        int first = q->dg_first[g];
        if (q->dg_n[g] == 1) {
            struct ardn_route *r = q->pend[q->order[first]];
            add_msg(q, &nm, ardn_seal.on ? ardn_sealed_packet(r)[0] : r->tx_msg[0],
                    (struct txmsg){.r = r, .kind = TX_WHOLE});
            continue;
        }
        /* Sealed: written ARDS_SEAL_BYTES further on, then sealed in place (the header moves
         * back over that room, the seal block follows it, the tag the entries). */
        uint8_t *b = q->buf + at, *pb = b + (ardn_seal.on ? ARDS_SEAL_BYTES : 0);
        size_t len = ardw_pack_begin(pb, ardn_g.epoch);
        for (int j = 0; j < q->dg_n[g]; j++) {
            struct ardn_route *r = q->pend[q->order[first + j]];
            len = ardw_pack_add(pb, len, &r->tx_h, r->txp);
        }
        if (ardn_seal.on)
            len = ardn_seal_dgram_alg(ardn_seal_alg(q->d), pb, ARDW_PACK_HDR_SIZE,
                                      pb + ARDW_PACK_HDR_SIZE, len - ARDW_PACK_HDR_SIZE, b);
        at += len;
        q->iov[nm] = (struct iovec){b, len};
        add_msg(q, &nm, (struct mmsghdr){.msg_hdr = {.msg_iov = &q->iov[nm], .msg_iovlen = 1}},
                (struct txmsg){.first = first, .count = q->dg_n[g], .kind = TX_PACK});
    }
    for (int k = 0; k < q->npend; k++) {
        struct ardn_route *r = q->pend[k];
        if (q->place[k] >= 0)
            continue;
        struct mmsghdr *msgs = ardn_seal.on ? ardn_sealed_packet(r) : r->tx_msg;
        unsigned f0 = 0, f1 = r->nfrag;
        if (r->nfrag > 1 && (r->cfg.max_bw > 0 || r->nfrag > FRAG_ROUND))
            pace_window(r, out_of(r, q->d), now, &f0, &f1);
        for (unsigned f = f0; f < f1; f++)
            add_msg(q, &nm, msgs[f],
                    (struct txmsg){.r = r, .frag = f, .kind = r->nfrag > 1 ? TX_FRAG : TX_WHOLE});
    }
    return nm;
}

static void add(_Atomic uint64_t *c, uint64_t n)
{
    atomic_fetch_add_explicit(c, n, memory_order_relaxed);
}

/* Count what went out (the first `sent` messages) and what did not. */
static void account(struct ardn_txq *q, int nm, int sent)
{
    struct ardn_dest *d = q->d;
    uint64_t dgrams = 0, packed = 0, packets = 0, errors = 0;
    for (int m = 0; m < nm; m++) {
        const struct txmsg *o = &q->own[m];
        bool ok = m < sent;
        dgrams += ok && o->kind != TX_DESC;
        switch (o->kind) {
        case TX_DESC:
            break;
        case TX_PACK:
            packed += ok;
            for (int j = 0; j < o->count; j++) {
                struct ardn_route *r = q->pend[q->order[o->first + j]];
                ardn_count(r, ok ? ARDN_C_SENT : ARDN_C_SEND_ERRORS, 1);
                if (ok)
                    ardn_count(r, ARDN_C_PACKED, 1);
            }
            packets += ok ? (uint64_t)o->count : 0;
            errors += ok ? 0 : (uint64_t)o->count;
            break;
        case TX_FRAG:
            if (ok)
                ardn_count(o->r, ARDN_C_FRAGMENTS, 1);
            if (o->frag + 1 < o->r->nfrag)
                break; /* the packet went out if its last fragment did (sent is a prefix) */
            /* fall through */
        case TX_WHOLE:
            ardn_count(o->r, ok ? ARDN_C_SENT : ARDN_C_SEND_ERRORS, 1);
            packets += ok;
            errors += !ok;
            break;
        }
    }
    add(&d->datagrams, dgrams);
    add(&d->packed, packed);
    add(&d->packets, packets);
    add(&d->send_errors, errors);
}

/* Send everything queued for one destination: one sendmmsg on the non-blocking socket. A
 * full buffer drops the rest (counted); nothing is queued for later. */
static void flush(struct ardn_txq *q, int64_t now)
{
    if (q->npend == 0)
        return;
    int nm = build(q, now), sent = 0, err = 0, retries = 0;
    while (sent < nm) {
        int n = sendmmsg(q->d->fd, q->msg + sent, (unsigned)(nm - sent), 0);
        if (n > 0) {
            sent += n;
            continue;
        }
        err = errno;
        /* A connected socket reports an earlier datagram's ICMP error on the next call, once:
         * that is no reason to drop this wake-up's datagrams. */
        if ((err == ECONNREFUSED || err == EINTR) && retries++ < 2)
            continue;
        break;
    }
    account(q, nm, sent);
    if (sent < nm)
        ardn_send_error(q->pend[0], q->d, err);
    /* A packet being paced out stays queued for the next wake-up (a failed send ends it:
     * the rest of it is dropped, as without pacing). */
    int keep = 0;
    for (int k = 0; k < q->npend; k++) {
        struct ardn_route *r = q->pend[k];
        uint32_t bit = 1u << out_of(r, q->d);
        if ((r->pace_busy & bit) && sent < nm) {
            r->pace_busy &= ~bit;
            ardn_count(r, ARDN_C_SEND_ERRORS, 1);
        }
        if (r->pace_busy & bit)
            q->pend[keep++] = r;
        else
            r->queued = 0;
    }
    q->npend = keep;
}

static void *sender_main(void *arg)
{
    struct ardn_sender *s = arg;
    while (!atomic_load_explicit(&ardn_stop, memory_order_relaxed) &&
           !atomic_load_explicit(&s->halt, memory_order_relaxed)) {
        int64_t now = ard_now_ns(), timeout = IDLE_NS;
        int nw = 0;
        for (int k = 0; k < s->n; k++) {
            struct ardn_route *r = s->routes[k];
            timeout = ardn_reducer_timeout(&r->red, now, timeout);
            for (int i = 0; r->pace_busy && i < r->cfg.nout; i++)
                if (r->pace_busy & (1u << i)) { /* the next burst or round of a packet */
                    int64_t t = r->cfg.max_bw > 0 ? r->pace_t[i] - PACE_AHEAD_NS / 2 - now : 0;
                    timeout = t < 0 ? 0 : t < timeout ? t : timeout;
                }
            /* A packet going out in rounds is finished first: its route's input waits (a
             * newer packet stays in the connection, latest value, taken after). */
            if (r->pace_busy && r->cfg.max_bw <= 0)
                continue;
            if (r->bad_until <= now) {
                s->ports[nw] = r->cfg.in.port;
                s->wait_r[nw++] = r;
            } else if (r->bad_until - now < timeout) {
                timeout = r->bad_until - now;
            }
        }
        int rc = ARD_ETIMEDOUT;
        if (nw > 0)
            rc = ard_wait(s->ports, (size_t)nw, timeout, s->ready);
        else if (timeout > 0) /* (0: the next round of a packet, at once) */
            pause_ns(timeout);
        now = ard_now_ns();
        if (rc > 0) {
            for (int j = 0; j < nw; j++)
                if (s->ready[j] && ardn_take_local(s->wait_r[j], now, s) < 0)
                    s->wait_r[j]->bad_until = now + ERROR_PAUSE_NS;
        } else if (rc != ARD_ETIMEDOUT && rc != ARD_EINTR) {
            /* One port's error fails the whole wait: find it, and leave it out for a while. */
            bool found = false;
            for (int j = 0; j < nw; j++)
                if (ardn_take_local(s->wait_r[j], now, s) < 0) {
                    s->wait_r[j]->bad_until = now + ERROR_PAUSE_NS;
                    found = true;
                }
            if (!found)
                pause_ns(ERROR_PAUSE_NS / 100);
        }
        for (int k = 0; k < s->n; k++)
            ardn_tick(s->routes[k], now, s);
        for (int i = 0; i < s->nq; i++)
            flush(&s->q[i], now);
        for (int k = 0; k < s->n; k++)
            s->routes[k]->desc_due = false;
    }
    return NULL;
}

/* ---- receiving ------------------------------------------------------------------------------ */

static void set_rcvtimeo(int fd, int64_t ns, int64_t *current)
{
    if (ns == *current)
        return;
    struct timeval tv = {(time_t)(ns / 1000000000), (suseconds_t)(ns % 1000000000 / 1000)};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    *current = ns;
}

/* Point the receive messages at the slots again (recvmmsg rewrites names and lengths). */
static void prepare_rx(struct ardn_input *in, struct mmsghdr *msgs, struct iovec *iov,
                       struct sockaddr_storage *src)
{
    for (int k = 0; k < BATCH; k++) {
        iov[k] = (struct iovec){in->rx + (size_t)k * RX_SLOT, RX_SLOT};
        msgs[k].msg_hdr = (struct msghdr){
            .msg_name = &src[k], .msg_namelen = sizeof src[k], .msg_iov = &iov[k], .msg_iovlen = 1};
        msgs[k].msg_len = 0;
    }
}

static void *input_main(void *arg)
{
    struct ardn_input *in = arg;
    struct mmsghdr msgs[BATCH];
    struct iovec iov[BATCH];
    struct sockaddr_storage src[BATCH];
    int64_t rcvtimeo = -1, sweep_ns = 0;
    bool recv_reported = false;
    /* A whole packet is published from in->rx, converted straight into its connection. */
    in->by_reference = true;
    /* The routes that hold packets for a slot (--max-rate) are looked at on every wake-up;
     * the others have nothing timed but a mismatch report, seen to every SWEEP_NS. (Without
     * memory for the list, every route is looked at every time, as the list would be.) */
    struct ardn_route **timed = calloc((size_t)in->nroutes, sizeof *timed), **tick = in->routes;
    int ntimed = in->nroutes;
    if (timed) {
        ntimed = 0;
        for (int k = 0; k < in->nroutes; k++)
            if (in->routes[k]->red.period_ns)
                timed[ntimed++] = in->routes[k];
        tick = timed;
    }
    while (!atomic_load_explicit(&ardn_stop, memory_order_relaxed) &&
           !atomic_load_explicit(&in->halt, memory_order_relaxed)) {
        int64_t now = ard_now_ns(), timeout = IDLE_NS;
        for (int k = 0; k < ntimed; k++)
            timeout = ardn_reducer_timeout(&tick[k]->red, now, timeout);
        int flags = MSG_WAITFORONE | MSG_TRUNC;
        if (timeout < 1000)
            flags |= MSG_DONTWAIT; /* SO_RCVTIMEO 0 would mean "forever" */
        else
            set_rcvtimeo(in->fd, timeout, &rcvtimeo);
        prepare_rx(in, msgs, iov, src);
        /* One system call per wake-up in the common case: blocks for the first datagram,
         * then takes whatever else is already queued. */
        int n = recvmmsg(in->fd, msgs, BATCH, flags, NULL);
        now = ard_now_ns();
        if (n <= 0 && !(n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))) {
            /* A hard error (or end of input on a shut-down socket) would recur at once: say
             * so once, count it, and retry at a pace that costs nothing. */
            for (int k = 0; k < in->nroutes; k++)
                ardn_count(in->routes[k], ARDN_C_RECV_ERRORS, 1);
            if (!recv_reported)
                ardn_route_warn(in->routes[0], "receive on %s: %s", in->text,
                                n == 0 ? "socket shut down" : strerror(errno));
            recv_reported = true;
            pause_ns(ERROR_PAUSE_NS);
            continue;
        }
        /* Latest value under overload: a full batch says that more may be queued; take it
         * all (up to DRAIN_MAX datagrams) before publishing, so that a backlog costs each
         * route one publication, of its newest packet, not one per datagram queued. */
        for (int got = 0; n > 0;) {
            for (int k = 0; k < n; k++) {
                size_t len = msgs[k].msg_len > RX_SLOT ? RX_SLOT : msgs[k].msg_len;
                ardn_input_datagram(in, in->rx + (size_t)k * RX_SLOT, len, &src[k], now);
            }
            got += n;
            if (n < BATCH || got >= DRAIN_MAX)
                break;
            ardn_input_settle(in); /* (the packets delivered by reference are in in->rx) */
            prepare_rx(in, msgs, iov, src);
            n = recvmmsg(in->fd, msgs, BATCH, MSG_DONTWAIT | MSG_TRUNC, NULL);
            now = ard_now_ns();
        }
        /* Each route publishes the newest of what it took in. */
        for (int t = 0; t < in->ntouched; t++) {
            struct ardn_route *r = in->touched[t];
            r->fresh = false;
            if (r->skip_offer) { /* (a newer one was published from a loan) */
                r->skip_offer = false;
                r->wire = NULL;
                continue;
            }
            if (r->conn_id != 0)
                r->newest.conn_id = r->conn_id;
            ardn_offer(r, &r->newest, now, NULL);
        }
        in->ntouched = 0;
        for (int k = 0; k < ntimed; k++)
            ardn_tick(tick[k], now, NULL);
        if (now >= sweep_ns) {
            for (int k = 0; k < in->nroutes; k++)
                ardn_tick(in->routes[k], now, NULL);
            sweep_ns = now + SWEEP_NS;
        }
    }
    free(timed);
    return NULL;
}

/* ---- the answers to challenges (with a key) ----------------------------------------------------
 */

/* Receivers challenge an epoch they do not know yet on the socket it came from: the
 * destinations' sockets. This thread reads them and answers (docs/wire.md, "Sealed
 * datagrams"); the sending threads only send on them. */
static void *answer_main(void *arg)
{
    struct ardn_plan *p = arg;
    struct pollfd *fds = calloc((size_t)p->ndests, sizeof *fds);
    uint8_t buf[256];
    if (!fds)
        return NULL;
    for (int k = 0; k < p->ndests; k++)
        fds[k] = (struct pollfd){.fd = p->dests[k].fd, .events = POLLIN};
    while (!atomic_load_explicit(&ardn_stop, memory_order_relaxed) &&
           !atomic_load_explicit(&p->answer_halt, memory_order_relaxed)) {
        if (poll(fds, (nfds_t)p->ndests, (int)(IDLE_NS / 1000000)) <= 0)
            continue;
        for (int k = 0; k < p->ndests; k++) {
            if (!fds[k].revents)
                continue;
            for (int n = 0; n < BATCH; n++) {
                /* (an error is a peer's ICMP report, taken here instead of by the sender) */
                ssize_t len = recv(fds[k].fd, buf, sizeof buf, MSG_DONTWAIT);
                if (len < 0 && errno != ECONNREFUSED && errno != EINTR)
                    break;
                int caps = len > 0 ? ardn_seal_answer(fds[k].fd, buf, (size_t)len) : -1;
                if (caps >= 0) /* (the receiver's, as of its latest challenge) */
                    atomic_store_explicit(&p->dests[k].aes,
                                          (caps & ARDS_CAP_AES) && ards_aes_available(),
                                          memory_order_relaxed);
            }
        }
    }
    free(fds);
    return NULL;
}

/* ---- the plan ---------------------------------------------------------------------------------
 */

static bool same_addr(const struct sockaddr_storage *a, socklen_t alen,
                      const struct sockaddr_storage *b, socklen_t blen)
{
    return alen == blen && memcmp(a, b, alen) == 0;
}

static int by_conn_id(const void *a, const void *b)
{
    uint32_t x = (*(struct ardn_route *const *)a)->conn_id;
    uint32_t y = (*(struct ardn_route *const *)b)->conn_id;
    return x < y ? -1 : x > y;
}

/* Room for a few packets of every route in a socket's buffer (best effort). */
static size_t sockbuf_for(size_t sz)
{
    return sz > ARDW_DEFAULT_DGRAM ? 4 * (sz + sz / 8) : 2 * (sz + 512);
}

static size_t sockbuf_want(struct ardn_route *const *routes, int n)
{
    size_t want = 0;
    for (int k = 0; k < n; k++)
        want += sockbuf_for(routes[k]->size);
    return want;
}

static int open_input(struct ardn_input *in)
{
    struct ardn_route *r = in->routes[0];
    int family = in->addr.ss_family;
    in->fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (in->fd < 0)
        return ardn_route_fail(r, ARD_ESYS, "socket: %s", strerror(errno));
    int rc = set_sockopts(r, in->fd, family);
    if (rc)
        return rc;
    struct sockaddr_storage a = in->addr;
    socklen_t alen = in->addrlen;
    if (is_any(&in->addr)) {
        uint16_t port = family == AF_INET ? ((struct sockaddr_in *)&in->addr)->sin_port
                                          : ((struct sockaddr_in6 *)&in->addr)->sin6_port;
        bool have;
        struct sockaddr_storage b;
        socklen_t blen;
        if ((rc = bind_addr(r, family, port, &b, &blen, &have)) != 0)
            return rc;
        if (have) {
            a = b;
            alen = blen;
        }
    }
    if (bind(in->fd, (struct sockaddr *)&a, alen) < 0) {
        char s[128];
        ardn_addr_str(&a, s, sizeof s);
        return ardn_route_fail(r, ARD_ESYS, "cannot listen on %s (%s): %s", s, in->text,
                               strerror(errno));
    }
    /* Latest value: the socket queues at most RCVBUF_CAP (or room for the largest packet of
     * one route), however many routes share it: a receiver that falls behind then finds
     * datagrams a few ms old at most, the kernel dropping what does not fit, instead of a
     * queue of tens of ms (docs/ardnet.md, "Overload"). */
    size_t want = sockbuf_want(in->routes, in->nroutes), cap = RCVBUF_CAP;
    for (int k = 0; k < in->nroutes; k++) {
        size_t one = sockbuf_want(&in->routes[k], 1);
        cap = one > cap ? one : cap;
    }
    if (in->nroutes > 1 || in->routes[0]->size > ARDW_DEFAULT_DGRAM) {
        size_t asked = want < cap ? want : cap;
        grow_sockbuf(in->fd, SO_RCVBUF, asked);
        size_t got = sockbuf_granted(in->fd, SO_RCVBUF);
        /* A packet of many fragments arrives as a burst: say when it cannot fit. */
        if (in->routes[0]->size > ARDW_SHORT_PAYLOAD || got < asked)
            fprintf(stderr, "ardnet: %s: receive buffer %zu bytes (asked %zu)%s\n", in->text, got,
                    asked,
                    got < asked ? ": limited by net.core.rmem_max (run as root, or raise it)" : "");
    }
    return 0;
}

void ardn_learnt_sockbuf(const struct ardn_route *r)
{
    if (r->fd_in < 0 || r->size <= ARDW_DEFAULT_DGRAM)
        return;
    size_t asked = sockbuf_for(r->size);
    grow_sockbuf(r->fd_in, SO_RCVBUF, asked);
    size_t got = sockbuf_granted(r->fd_in, SO_RCVBUF);
    if (got < asked || r->size > ARDW_SHORT_PAYLOAD)
        fprintf(stderr,
                "ardnet: %s: receive buffer %zu bytes (asked %zu) for the sender's %zu-byte "
                "packets%s\n",
                r->cfg.in.text, got, asked, (size_t)r->size,
                got < asked ? ": limited by net.core.rmem_max (run as root, or raise it)" : "");
}

static int open_dest(struct ardn_dest *d, struct ardn_route *r, size_t want)
{
    int family = d->addr.ss_family;
    d->fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (d->fd < 0)
        return ardn_route_fail(r, ARD_ESYS, "socket: %s", strerror(errno));
    int rc = set_sockopts(r, d->fd, family);
    if (rc)
        return rc;
    struct sockaddr_storage b;
    socklen_t blen;
    bool have;
    if ((rc = bind_addr(r, family, 0, &b, &blen, &have)) != 0)
        return rc;
    if (have && bind(d->fd, (struct sockaddr *)&b, blen) < 0)
        return ardn_route_fail(r, ARD_ESYS, "--bind %s: %s", ardn_g.bind, strerror(errno));
    /* Connected: no route lookup per send. */
    if (connect(d->fd, (struct sockaddr *)&d->addr, d->addrlen) < 0)
        return ardn_route_fail(r, ARD_ESYS, "cannot send to %s: %s", d->text, strerror(errno));
    if (want) {
        grow_sockbuf(d->fd, SO_SNDBUF, want);
        size_t got = sockbuf_granted(d->fd, SO_SNDBUF);
        if (want > ARDW_SHORT_PAYLOAD || got < want)
            fprintf(stderr, "ardnet: %s: send buffer %zu bytes (asked %zu)%s\n", d->text, got, want,
                    got < want ? ": limited by net.core.wmem_max (run as root, or raise it)" : "");
    }
    return 0;
}

/* Group the UDP outputs by destination and the UDP inputs by listening address. */
static int group(struct ardn_plan *p)
{
    int nout = 0;
    for (int i = 0; i < p->nroutes; i++)
        nout += p->routes[i].cfg.nout;
    p->dests = calloc((size_t)nout + 1, sizeof *p->dests);
    p->inputs = calloc((size_t)p->nroutes + 1, sizeof *p->inputs);
    if (!p->dests || !p->inputs)
        return ardi_fail(ARD_ENOMEM, "out of memory");
    for (int i = 0; i < p->nroutes; i++) {
        struct ardn_route *r = &p->routes[i];
        for (int o = 0; o < r->cfg.nout; o++) {
            struct ardn_ep *ep = &r->cfg.out[o];
            if (ep->kind != ARDN_EP_UDP)
                continue;
            int k = 0;
            while (k < p->ndests &&
                   !same_addr(&p->dests[k].addr, p->dests[k].addrlen, &ep->addr, ep->addrlen))
                k++;
            struct ardn_dest *d = &p->dests[k];
            if (k == p->ndests) {
                p->ndests++;
                d->addr = ep->addr;
                d->addrlen = ep->addrlen;
                snprintf(d->text, sizeof d->text, "%s", ep->text);
                d->fd = -1;
                d->limit = ARDW_MAX_DGRAM;
            }
            if (r->cfg.max_dgram < d->limit)
                d->limit = r->cfg.max_dgram;
            d->nroutes++;
            r->dest[o] = d;
        }
        if (r->cfg.in.kind != ARDN_EP_UDP)
            continue;
        int k = 0;
        while (k < p->ninputs && !same_addr(&p->inputs[k].addr, p->inputs[k].addrlen,
                                            &r->cfg.in.addr, r->cfg.in.addrlen))
            k++;
        struct ardn_input *in = &p->inputs[k];
        if (k == p->ninputs) {
            p->ninputs++;
            in->addr = r->cfg.in.addr;
            in->addrlen = r->cfg.in.addrlen;
            snprintf(in->text, sizeof in->text, "%s", r->cfg.in.text);
            in->fd = -1;
        }
        in->nroutes++;
        r->input = in;
    }
    for (int k = 0; k < p->ninputs; k++) {
        struct ardn_input *in = &p->inputs[k];
        in->routes = calloc((size_t)in->nroutes, sizeof *in->routes);
        in->touched = calloc((size_t)in->nroutes, sizeof *in->touched);
        if (!in->routes || !in->touched)
            return ardi_fail(ARD_ENOMEM, "out of memory");
        in->nroutes = 0;
    }
    for (int i = 0; i < p->nroutes; i++)
        if (p->routes[i].input)
            p->routes[i].input->routes[p->routes[i].input->nroutes++] = &p->routes[i];
    for (int k = 0; k < p->ninputs; k++) {
        struct ardn_input *in = &p->inputs[k];
        if (in->nroutes < 2)
            continue;
        qsort(in->routes, (size_t)in->nroutes, sizeof *in->routes, by_conn_id);
        /* The ids side by side: the search per datagram reads a few cache lines, not one
         * line of each route it passes. */
        if (!(in->ids = malloc((size_t)in->nroutes * sizeof *in->ids)))
            return ardi_fail(ARD_ENOMEM, "out of memory");
        for (int j = 0; j < in->nroutes; j++)
            in->ids[j] = in->routes[j]->conn_id;
        struct ardn_route **rr = in->routes;
        if (rr[0]->conn_id == 0)
            return ardi_fail(ARD_EINVAL,
                             "route '%s' takes any connection id (a relay without --conn-id), "
                             "so it cannot share %s with route '%s': give it --conn-id",
                             rr[0]->cfg.name, in->text, rr[1]->cfg.name);
        for (int j = 1; j < in->nroutes; j++)
            if (rr[j]->conn_id == rr[j - 1]->conn_id)
                return ardi_fail(ARD_EINVAL,
                                 "routes '%s' and '%s' both listen on %s with connection id "
                                 "%u: give one of them another --conn-id (the same on the "
                                 "sending side)",
                                 rr[j - 1]->cfg.name, rr[j]->cfg.name, in->text, rr[j]->conn_id);
    }
    return 0;
}

static int by_first_dest(const void *a, const void *b)
{
    const struct ardn_route *x = *(struct ardn_route *const *)a;
    const struct ardn_route *y = *(struct ardn_route *const *)b;
    uintptr_t dx = 0, dy = 0;
    for (int o = x->cfg.nout - 1; o >= 0; o--)
        dx = x->dest[o] ? (uintptr_t)x->dest[o] : dx;
    for (int o = y->cfg.nout - 1; o >= 0; o--)
        dy = y->dest[o] ? (uintptr_t)y->dest[o] : dy;
    return dx < dy ? -1 : dx > dy;
}

static struct ardn_dest *first_dest(const struct ardn_route *r)
{
    for (int o = 0; o < r->cfg.nout; o++)
        if (r->dest[o])
            return r->dest[o];
    return NULL;
}

/* The queues of a sending thread: one per destination its routes send to. */
static int plan_queues(struct ardn_sender *s)
{
    s->q = calloc((size_t)s->n * ARDN_MAX_OUT + 1, sizeof *s->q);
    if (!s->q)
        return ardi_fail(ARD_ENOMEM, "out of memory");
    for (int k = 0; k < s->n; k++) {
        struct ardn_route *r = s->routes[k];
        for (int o = 0; o < r->cfg.nout; o++) {
            if (!r->dest[o])
                continue;
            int i = 0;
            while (i < s->nq && s->q[i].d != r->dest[o])
                i++;
            if (i == s->nq)
                s->q[s->nq++].d = r->dest[o];
            struct ardn_txq *q = &s->q[i];
            r->txq[o] = i;
            q->cap++;
            q->cap_msg += (int)r->nfrag + 1;
            q->bytes += ARDW_PACK_HDR_SIZE + ARDW_ENTRY_HDR_SIZE + r->size + ARDS_OVERHEAD;
        }
    }
    for (int i = 0; i < s->nq; i++) {
        struct ardn_txq *q = &s->q[i];
        size_t n = (size_t)q->cap;
        q->pend = calloc(n, sizeof *q->pend);
        q->place = calloc(n, sizeof *q->place);
        q->order = calloc(n, sizeof *q->order);
        q->dg_len = calloc(n, sizeof *q->dg_len);
        q->dg_n = calloc(n, sizeof *q->dg_n);
        q->dg_first = calloc(n, sizeof *q->dg_first);
        q->dg_fill = calloc(n, sizeof *q->dg_fill);
        q->buf = malloc(q->bytes);
        q->msg = calloc((size_t)q->cap_msg, sizeof *q->msg);
        q->iov = calloc((size_t)q->cap_msg, sizeof *q->iov);
        q->own = calloc((size_t)q->cap_msg, sizeof *q->own);
        if (!q->pend || !q->place || !q->order || !q->dg_len || !q->dg_n || !q->dg_first ||
            !q->dg_fill || !q->buf || !q->msg || !q->iov || !q->own)
            return ardi_fail(ARD_ENOMEM, "out of memory");
    }
    return 0;
}

/* Local inputs, grouped by first destination, in threads of at most ARD_WAIT_SLEEP_MAX (all
 * of them sleep in the kernel in one ard_wait). */
static int plan_senders(struct ardn_plan *p)
{
    int nlocal = 0;
    for (int i = 0; i < p->nroutes; i++)
        nlocal += p->routes[i].cfg.in.kind == ARDN_EP_LOCAL;
    struct ardn_route **loc = calloc((size_t)nlocal + 1, sizeof *loc);
    p->senders = calloc((size_t)nlocal + 1, sizeof *p->senders);
    if (!loc || !p->senders) {
        free(loc);
        return ardi_fail(ARD_ENOMEM, "out of memory");
    }
    int n = 0;
    for (int i = 0; i < p->nroutes; i++)
        if (p->routes[i].cfg.in.kind == ARDN_EP_LOCAL)
            loc[n++] = &p->routes[i];
    qsort(loc, (size_t)n, sizeof *loc, by_first_dest);
    int rc = 0;
    for (int k = 0; k < n && rc == 0;) {
        struct ardn_sender *s = &p->senders[p->nsenders++];
        /* A thread takes whole destination groups while they fit (fewer threads, fewer
         * wake-ups); a group larger than a thread is cut into threads of its own. */
        int j = k;
        while (j < n) {
            int g = j;
            while (g < n && first_dest(loc[g]) == first_dest(loc[j]))
                g++;
            if (g - k <= ARD_WAIT_SLEEP_MAX) {
                j = g;
                continue;
            }
            if (j == k)
                j = k + ARD_WAIT_SLEEP_MAX;
            break;
        }
        s->n = j - k;
        s->routes = calloc((size_t)s->n, sizeof *s->routes);
        s->wait_r = calloc((size_t)s->n, sizeof *s->wait_r);
        s->ports = calloc((size_t)s->n, sizeof *s->ports);
        s->ready = calloc((size_t)s->n, 1);
        if (!s->routes || !s->wait_r || !s->ports || !s->ready) {
            rc = ardi_fail(ARD_ENOMEM, "out of memory");
            break;
        }
        memcpy(s->routes, loc + k, (size_t)s->n * sizeof *loc);
        rc = plan_queues(s);
        k = j;
    }
    free(loc);
    return rc;
}

int ardn_plan_open(struct ardn_plan *p, struct ardn_route *routes, int n)
{
    memset(p, 0, sizeof *p);
    p->routes = routes;
    p->nroutes = n;
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++)
        rc = ardn_route_open(&routes[i]);
    if (rc == 0)
        rc = group(p);
    for (int k = 0; k < p->ninputs && rc == 0; k++) {
        struct ardn_input *in = &p->inputs[k];
        if (!(in->rx = malloc((size_t)BATCH * RX_SLOT)))
            return ardi_fail(ARD_ENOMEM, "out of memory");
        if (ardn_seal.on && !(in->peers = ards_table_alloc(sizeof *in->peers)))
            return ardi_fail(ARD_ENOMEM, "out of memory");
        rc = open_input(in);
        for (int j = 0; j < in->nroutes; j++)
            in->routes[j]->fd_in = in->fd;
    }
    for (int k = 0; k < p->ndests && rc == 0; k++) {
        struct ardn_dest *d = &p->dests[k];
        struct ardn_route *first = NULL;
        size_t want = 0;
        bool grow = d->nroutes > 1;
        for (int i = 0; i < n; i++)
            for (int o = 0; o < routes[i].cfg.nout; o++)
                if (routes[i].dest[o] == d) {
                    first = first ? first : &routes[i];
                    struct ardn_route *rp = &routes[i];
                    want += sockbuf_want(&rp, 1);
                    grow |= rp->nfrag > 1;
                }
        rc = open_dest(d, first, grow ? want : 0);
        for (int i = 0; i < n; i++)
            for (int o = 0; o < routes[i].cfg.nout; o++)
                if (routes[i].dest[o] == d)
                    routes[i].out_fd[o] = d->fd;
    }
    if (rc == 0)
        rc = plan_senders(p);
    if (rc == 0)
        rc = ardn_dds_open(p);
    return rc;
}

int ardn_plan_start(struct ardn_plan *p)
{
    for (int k = 0; k < p->ninputs; k++) {
        int rc = pthread_create(&p->inputs[k].thread, NULL, input_main, &p->inputs[k]);
        if (rc != 0)
            return ardn_route_fail(p->inputs[k].routes[0], ARD_ESYS, "cannot start thread: %s",
                                   strerror(rc));
        p->inputs[k].started = true;
    }
    for (int k = 0; k < p->nsenders; k++) {
        int rc = pthread_create(&p->senders[k].thread, NULL, sender_main, &p->senders[k]);
        if (rc != 0)
            return ardn_route_fail(p->senders[k].routes[0], ARD_ESYS, "cannot start thread: %s",
                                   strerror(rc));
        p->senders[k].started = true;
    }
    if (ardn_seal.on && p->ndests > 0) {
        int rc = pthread_create(&p->answerer, NULL, answer_main, p);
        if (rc != 0)
            return ardi_fail(ARD_ESYS, "cannot start thread: %s", strerror(rc));
        p->answer_started = true;
    }
    return ardn_dds_start(p);
}

void ardn_plan_halt(struct ardn_plan *p)
{
    for (int k = 0; k < p->ninputs; k++)
        atomic_store(&p->inputs[k].halt, true);
    for (int k = 0; k < p->nsenders; k++)
        atomic_store(&p->senders[k].halt, true);
    atomic_store(&p->answer_halt, true);
}

void ardn_plan_join(struct ardn_plan *p)
{
    for (int k = 0; k < p->ninputs; k++)
        if (p->inputs[k].started)
            pthread_join(p->inputs[k].thread, NULL);
    for (int k = 0; k < p->nsenders; k++)
        if (p->senders[k].started)
            pthread_join(p->senders[k].thread, NULL);
    ardn_dds_join(p);
    if (p->answer_started)
        pthread_join(p->answerer, NULL);
    p->answer_started = false;
    for (int k = 0; k < p->ninputs; k++)
        p->inputs[k].started = false;
    for (int k = 0; k < p->nsenders; k++)
        p->senders[k].started = false;
}

void ardn_plan_close(struct ardn_plan *p)
{
    ardn_dds_close(p);
    for (int i = 0; i < p->nroutes; i++)
        ardn_route_close(&p->routes[i]);
    for (int k = 0; k < p->ninputs; k++) {
        struct ardn_input *in = &p->inputs[k];
        if (in->fd >= 0)
            close(in->fd);
        free(in->routes);
        free(in->touched);
        free(in->ids);
        free(in->rx);
        free(in->peers);
    }
    for (int k = 0; k < p->ndests; k++)
        if (p->dests[k].fd >= 0)
            close(p->dests[k].fd);
    for (int k = 0; k < p->nsenders; k++) {
        struct ardn_sender *s = &p->senders[k];
        for (int i = 0; i < s->nq; i++) {
            struct ardn_txq *q = &s->q[i];
            free(q->pend);
            free(q->place);
            free(q->order);
            free(q->dg_len);
            free(q->dg_n);
            free(q->dg_first);
            free(q->dg_fill);
            free(q->buf);
            free(q->msg);
            free(q->iov);
            free(q->own);
        }
        free(s->q);
        free(s->routes);
        free(s->wait_r);
        free(s->ports);
        free(s->ready);
    }
    free(p->dests);
    free(p->inputs);
    free(p->senders);
    memset(p, 0, sizeof *p);
}
