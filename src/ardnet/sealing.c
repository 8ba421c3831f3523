/*
 * sealing.c - ardnet with a key: sealing what the routes send, opening what the inputs take
 * in, and the one round trip per sender epoch that proves it holds the key now (docs/wire.md,
 * "Sealed datagrams"; the cryptography is seal.c's).
 */
#include "ard_common.h"
#include "ardn.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

struct ardn_seal ardn_seal;

#define WARN_EVERY_NS 10000000000LL /* a refused peer is named at most this often per input */
#define FLOOR_SLACK_NS 1000000u     /* see answered() */

int ardn_seal_open(void)
{
    if (!ardn_g.key[0])
        return 0;
    if (ards_init() < 0)
        return ardi_fail(ARD_ESYS, "libsodium cannot start");
    int rc = ards_key_load(ardn_g.key, &ardn_seal.key);
    if (rc < 0)
        return rc;
    ards_subkey(&ardn_seal.key, ardn_g.epoch, &ardn_seal.sub);
    ardn_seal.start_ns = ard_now_ns();
    ardn_seal.on = true;
    return 0;
}

/* The calling thread's nonces: a lane of its own (drawn once), and a counter that is the time
 * since the start in ns, strictly increasing (two datagrams of one thread never share one). */
static _Atomic uint32_t lanes;
static _Thread_local uint32_t my_lane;
static _Thread_local uint64_t my_ctr;

static void next_nonce(uint32_t *lane, uint64_t *ctr)
{
    if (my_lane == 0)
        my_lane = atomic_fetch_add(&lanes, 1) + 1;
    uint64_t t = (uint64_t)(ard_now_ns() - ardn_seal.start_ns);
    my_ctr = t > my_ctr ? t : my_ctr + 1;
    *lane = my_lane;
    *ctr = my_ctr;
}

static size_t seal_alg(const struct ards_sub *sub, unsigned alg, const uint8_t *hdr, size_t hlen,
                       const uint8_t *body, size_t blen, uint8_t *out)
{
    uint32_t lane;
    uint64_t ctr;
    next_nonce(&lane, &ctr);
    return ards_seal(sub, ardn_seal.key.id, lane | (uint32_t)alg << 24, ctr, hdr, hlen, body, blen,
                     out);
}

size_t ardn_seal_with(const struct ards_sub *sub, const uint8_t *hdr, size_t hlen,
                      const uint8_t *body, size_t blen, uint8_t *out)
{
    return seal_alg(sub, ARDS_ALG_CHACHA, hdr, hlen, body, blen, out);
}

size_t ardn_seal_dgram_alg(unsigned alg, const uint8_t *hdr, size_t hlen, const uint8_t *body,
                           size_t blen, uint8_t *out)
{
    return seal_alg(&ardn_seal.sub, alg, hdr, hlen, body, blen, out);
}

size_t ardn_seal_dgram(const uint8_t *hdr, size_t hlen, const uint8_t *body, size_t blen,
                       uint8_t *out)
{
    return seal_alg(&ardn_seal.sub, ARDS_ALG_CHACHA, hdr, hlen, body, blen, out);
}

unsigned ardn_seal_alg(const struct ardn_dest *d)
{
    return atomic_load_explicit(&d->aes, memory_order_relaxed) ? ARDS_ALG_AES : ARDS_ALG_CHACHA;
}

uint64_t ardn_seal_clock(void)
{
    return (uint64_t)(ard_now_ns() - ardn_seal.start_ns);
}

struct mmsghdr *ardn_sealed_packet(struct ardn_route *r)
{
    if (r->sealed_now)
        return r->smsg;
    /* AES-256-GCM only if every UDP output's receiver said it has it (the same datagrams go to
     * each of them) */
    unsigned alg = ARDS_ALG_AES;
    for (int o = 0; o < r->cfg.nout; o++)
        if (r->dest[o] && ardn_seal_alg(r->dest[o]) != ARDS_ALG_AES)
            alg = ARDS_ALG_CHACHA;
    for (unsigned i = 0; i < r->nfrag; i++) {
        const struct iovec *h = &r->tx_iov[2 * i], *b = &r->tx_iov[2 * i + 1];
        uint8_t *out = r->stx + (size_t)i * r->sslot;
        size_t len =
            ardn_seal_dgram_alg(alg, h->iov_base, h->iov_len, b->iov_base, b->iov_len, out);
        r->siov[i] = (struct iovec){out, len};
        r->smsg[i] = (struct mmsghdr){.msg_hdr = {.msg_iov = &r->siov[i], .msg_iovlen = 1}};
    }
    r->sealed_now = true;
    return r->smsg;
}

size_t ardn_sealed_desc(struct ardn_route *r)
{
    r->sdesc_len = ardn_seal_dgram(r->desc, ARDW_HDR_SIZE, r->desc + ARDW_HDR_SIZE,
                                   r->desc_len - ARDW_HDR_SIZE, r->sdesc);
    return r->sdesc_len;
}

/* ---- the sender's side of the handshake ------------------------------------------------------ */

int ardn_seal_answer(int fd, uint8_t *d, size_t len)
{
    return ardn_seal_answer_as(fd, d, len, ardn_g.epoch, &ardn_seal.sub, NULL, 0);
}

int ardn_seal_answer_as(int fd, uint8_t *d, size_t len, uint64_t my_epoch,
                        const struct ards_sub *my_sub, const struct sockaddr *to, socklen_t tolen)
{
    /* The subkeys of the last few receivers that challenged this run (one per thread that
     * answers: the plan's answering thread). */
    static _Thread_local struct {
        uint64_t epoch;
        bool used;
        struct ards_sub sub;
    } cache[4];
    static _Thread_local unsigned next;
    struct ards_info i;
    if (!ards_peek(d, len, &i) || i.magic != ARDW_MAGIC_WORD || d[5] != ARDS_FLAG_CHALLENGE)
        return -1;
    int k = 0;
    while (k < 4 && !(cache[k].used && cache[k].epoch == i.epoch))
        k++;
    if (k == 4) {
        k = (int)(next++ % 4);
        cache[k].used = true;
        cache[k].epoch = i.epoch;
        ards_sub_wipe(&cache[k].sub); /* (the epoch it held is given up) */
        ards_subkey(&ardn_seal.key, i.epoch, &cache[k].sub);
    }
    size_t plen;
    uint8_t *p = ards_open(&cache[k].sub, d, len, &i, &plen);
    unsigned flags;
    uint64_t theirs, t;
    uint8_t nonce[ARDS_NONCE_BYTES];
    if (!p || !ards_get_handshake(p, plen, &flags, &theirs, nonce, &t) ||
        flags != ARDS_FLAG_CHALLENGE || theirs != my_epoch)
        return -1; /* not for this run: an earlier run's epoch, a recording, a forgery */
    uint64_t caps = t;
    uint8_t plain[ARDS_HS_HDR + ARDS_NONCE_BYTES + 8], out[ARDS_ANSWER_LEN];
    size_t n = ards_put_answer(plain, my_epoch, i.epoch, nonce, ardn_seal_clock());
    n = ardn_seal_with(my_sub, plain, ARDS_HS_HDR, plain + ARDS_HS_HDR, n - ARDS_HS_HDR, out);
    /* lost: the receiver asks again */
    (void)sendto(fd, out, n, MSG_DONTWAIT, to, to ? tolen : 0);
    return (int)(caps & 0x7fffffff);
}

/* ---- the receiver's side --------------------------------------------------------------------- */

static void warn_peer(struct ardn_input *in, int cause, const struct sockaddr_storage *src,
                      int64_t now, const char *what)
{
    int64_t *last = &in->auth_warn_ns[cause];
    if (!src || (*last && now - *last < WARN_EVERY_NS))
        return;
    *last = now;
    char from[128];
    ardn_addr_str(src, from, sizeof from);
    fprintf(stderr, "ardnet: input %s: datagrams from %s %s: refused (drop_auth)\n", in->text, from,
            what);
}

void ardn_seal_challenge(int fd, struct ards_peer *p, uint64_t my_epoch,
                         const struct ards_sub *my_sub, const struct sockaddr_storage *src,
                         int64_t now)
{
    p->chal_ns = now;
    if (!src)
        return;
    ards_random(p->nonce, sizeof p->nonce);
    uint8_t plain[ARDS_HS_HDR + ARDS_NONCE_BYTES + 8], out[ARDS_CHALLENGE_LEN];
    size_t n = ards_put_challenge(plain, my_epoch, p->epoch, p->nonce,
                                  ards_aes_available() ? ARDS_CAP_AES : 0);
    n = ardn_seal_with(my_sub, plain, ARDS_HS_HDR, plain + ARDS_HS_HDR, n - ARDS_HS_HDR, out);
    socklen_t alen =
        src->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
    (void)sendto(fd, out, n, MSG_DONTWAIT, (const struct sockaddr *)src, alen);
}

static void challenge(struct ardn_input *in, struct ards_peer *p,
                      const struct sockaddr_storage *src, int64_t now)
{
    ardn_seal_challenge(in->fd, p, ardn_g.epoch, &ardn_seal.sub, src, now);
}

/* What the epoch sent from one way before the challenge went out on is fresh (the datagram
 * held: it set off the challenge); earlier ones are recordings. In the sender's time t: its
 * answer, less the round trip, less the way here once more (at most a round trip) and
 * FLOOR_SLACK_NS. */
void ardn_seal_proven(struct ards_peer *p, uint64_t t, int64_t now)
{
    uint64_t back = 2 * (uint64_t)(now - p->chal_ns) + FLOOR_SLACK_NS;
    p->proven = true;
    p->proven_ns = now;
    p->floor = t > back ? t - back : 0;
}

/* An answer to this input's challenge: the epoch is proven; what it sent before is taken in
 * now if it was sent after the challenge could have been seen (within the round trip). */
static void answered(struct ardn_input *in, struct ards_peer *p, const uint8_t *d, size_t len,
                     const struct sockaddr_storage *src, int64_t now)
{
    unsigned flags;
    uint64_t theirs, t;
    uint8_t nonce[ARDS_NONCE_BYTES];
    if (!p || p->proven || !ards_get_handshake(d, len, &flags, &theirs, nonce, &t) ||
        flags != ARDS_FLAG_ANSWER || theirs != ardn_g.epoch ||
        memcmp(nonce, p->nonce, sizeof nonce) != 0) {
        ardn_input_drop(in, ARDW_EPOCH); /* a late, repeated or recorded answer */
        return;
    }
    ardn_seal_proven(p, t, now);
    for (int k = 0; k < 2; k++) {
        if (!p->hold_len[k])
            continue;
        size_t n = p->hold_len[k];
        p->hold_len[k] = 0;
        if (p->hold_ctr[k] < p->floor) {
            ardn_input_drop(in, ARDW_OLD);
            continue;
        }
        in->seal_ctr = p->hold_ctr[k];
        in->proven_ns = p->proven_ns;
        /* (copied, not delivered by reference: the slot may take another epoch's datagram
         * before this batch is published) */
        bool ref = in->by_reference;
        in->by_reference = false;
        ardn_input_plain(in, p->hold[k], n, src, now);
        in->by_reference = ref;
    }
}

const uint8_t *ardn_unseal(struct ardn_input *in, uint8_t *d, size_t *len,
                           const struct sockaddr_storage *src, int64_t now)
{
    struct ards_info i;
    if (!ards_peek(d, *len, &i) || i.magic != ARDW_MAGIC_WORD) {
        ardn_input_drop(in, ARDW_AUTH);
        warn_peer(in, 0, src, now,
                  *len > 4 && d[4] == ARDW_WIRE_VERSION
                      ? "are not sealed (give the sender the same --key)"
                      : "are not sealed ardnet datagrams");
        return NULL;
    }
    struct ards_peer *p = ards_find(in->peers, i.epoch);
    struct ards_sub sub; /* (an epoch not in the table yet) */
    if (!p)
        ards_subkey(&ardn_seal.key, i.epoch, &sub);
    size_t plen;
    uint8_t *pd = ards_open(p ? &p->sub : &sub, d, *len, &i, &plen);
    if (!pd) {
        if (!p)
            ards_sub_wipe(&sub);
        ardn_input_drop(in, ARDW_AUTH);
        char what[160];
        if (i.key_id != ardn_seal.key.id)
            snprintf(what, sizeof what,
                     "are sealed with another key (key id %08x; this ardnet's is %08x)", i.key_id,
                     ardn_seal.key.id);
        else
            snprintf(what, sizeof what, "fail authentication (damaged, or forged)");
        warn_peer(in, i.key_id != ardn_seal.key.id ? 1 : 2, src, now, what);
        return NULL;
    }
    if (pd[5] == ARDS_FLAG_ANSWER || pd[5] == ARDS_FLAG_CHALLENGE) {
        if (!p)
            ards_sub_wipe(&sub);
        if (pd[5] == ARDS_FLAG_ANSWER)
            answered(in, p, pd, plen, src, now);
        else /* (challenges go to senders' sockets) */
            ardn_input_drop(in, ARDW_VERSION);
        return NULL;
    }
    if (!p) {
        unsigned given_up;
        p = ards_take_slot(in->peers, &given_up);
        for (unsigned k = 0; k < given_up; k++)
            ardn_input_drop(in, ARDW_EPOCH);
        p->used = true;
        p->epoch = i.epoch;
        p->sub = sub;
        ards_sub_wipe(&sub);
        challenge(in, p, src, now);
    }
    p->used_ns = now;
    if (!p->proven) {
        /* Held until the answer comes (the newest of each kind), then taken in if fresh. */
        if (now - p->chal_ns >= ARDS_RECHALLENGE_NS)
            challenge(in, p, src, now);
        int k = plen >= 6 && pd[5] == ARDW_FLAG_DESC ? 0 : 1;
        if (p->hold_len[k] || plen > ARDS_HOLD_MAX)
            ardn_input_drop(in, ARDW_EPOCH);
        if (plen <= ARDS_HOLD_MAX) {
            memcpy(p->hold[k], pd, plen);
            p->hold_len[k] = plen;
            p->hold_ctr[k] = i.ctr;
        }
        return NULL;
    }
    if (i.ctr < p->floor) { /* recorded before the epoch proved itself to this run */
        ardn_input_drop(in, ARDW_OLD);
        return NULL;
    }
    in->seal_ctr = i.ctr;
    in->proven_ns = p->proven_ns;
    *len = plen;
    return pd;
}
