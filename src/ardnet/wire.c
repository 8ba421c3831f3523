/* wire.c - datagram header encoding/parsing and payload byte order. */
#include "wire.h"

#include <string.h>

static const char *const cause_names[ARDW_NCAUSES] = {
    [ARDW_OK] = "ok",
    [ARDW_TRUNCATED] = "truncated",
    [ARDW_OVERSIZED] = "oversized",
    [ARDW_MAGIC] = "magic",
    [ARDW_VERSION] = "version",
    [ARDW_CONN] = "conn",
    [ARDW_SIZE] = "size",
    [ARDW_TYPE] = "type",
    [ARDW_PEER] = "peer",
    [ARDW_DUPLICATE] = "duplicate",
    [ARDW_OLD] = "old",
    [ARDW_EPOCH] = "epoch",
    [ARDW_STALE] = "stale",
    [ARDW_FRAG_INVALID] = "frag_invalid",
    [ARDW_FRAG_CONFLICT] = "frag_conflict",
    [ARDW_FRAG_DUPLICATE] = "frag_duplicate",
    [ARDW_FRAG_OLD] = "frag_old",
    [ARDW_PARTIAL] = "partial",
    [ARDW_UNKNOWN] = "unknown",
    [ARDW_PACK_INVALID] = "pack_invalid",
    [ARDW_AUTH] = "auth",
};

const char *ardw_cause_name(enum ardw_cause c)
{
    if (c == ARDW_PENDING)
        return "pending";
    if (c == ARDW_DESC)
        return "descriptor";
    return (unsigned)c < ARDW_NCAUSES ? cause_names[c] : "?";
}

size_t ardw_put_hdr(uint8_t *b, const struct ardw_hdr *h)
{
    bool frag = h->frag_count != 0;
    size_t hlen = frag ? ardw_frag_hlen(h->size, h->frag_count) : ARDW_HDR_SIZE;
    ardw_put32(b + 0, ARDW_MAGIC_WORD);
    b[4] = ARDW_WIRE_VERSION;
    b[5] = frag ? ARDW_FLAG_FRAG : 0;
    ardw_put16(b + 6, (uint16_t)hlen);
    ardw_put32(b + 8, h->conn_id);
    ardw_put32(b + 12, h->size);
    ardw_put64(b + 16, h->epoch);
    ardw_put64(b + 24, h->seq);
    ardw_put64(b + 32, (uint64_t)h->mono_ns);
    ardw_put64(b + 40, (uint64_t)h->real_ns);
    ardw_put64(b + 48, h->type_hash);
    if (frag && hlen == ARDW_FRAG_HDR_SIZE) {
        ardw_put32(b + 56, h->frag_off);
        ardw_put16(b + 60, (uint16_t)h->frag_index);
        ardw_put16(b + 62, (uint16_t)h->frag_count);
    } else if (frag) {
        ardw_put32(b + 56, h->frag_off);
        ardw_put32(b + 60, h->frag_index);
        ardw_put32(b + 64, h->frag_count);
        ardw_put32(b + 68, 0);
    }
    return hlen;
}

size_t ardw_put_desc(uint8_t *b, const struct ardw_hdr *h, const char *type)
{
    struct ardw_hdr d = *h;
    d.frag_count = 0;
    d.seq = 0;
    d.mono_ns = d.real_ns = 0;
    ardw_put_hdr(b, &d);
    b[5] = ARDW_FLAG_DESC;
    size_t n = strlen(type);
    if (n > ARD_MAX_TYPE)
        n = ARD_MAX_TYPE;
    memcpy(b + ARDW_HDR_SIZE, type, n);
    return ARDW_HDR_SIZE + n;
}

enum ardw_cause ardw_parse_desc(const uint8_t *b, size_t len, const struct ardw_expect *e,
                                struct ardw_hdr *h, char *type)
{
    if (len < ARDW_HDR_SIZE)
        return ARDW_TRUNCATED;
    if (ardw_get32(b) != ARDW_MAGIC_WORD)
        return ARDW_MAGIC;
    if (b[4] != ARDW_WIRE_VERSION || b[5] != ARDW_FLAG_DESC || ardw_get16(b + 6) != ARDW_HDR_SIZE)
        return ARDW_VERSION;
    size_t n = len - ARDW_HDR_SIZE;
    if (n > ARD_MAX_TYPE)
        return ARDW_OVERSIZED;
    *h = (struct ardw_hdr){.version = b[4],
                           .flags = b[5],
                           .conn_id = ardw_get32(b + 8),
                           .size = ardw_get32(b + 12),
                           .epoch = ardw_get64(b + 16),
                           .type_hash = ardw_get64(b + 48)};
    if (e->conn_id != 0 && h->conn_id != e->conn_id)
        return ARDW_CONN;
    memcpy(type, b + ARDW_HDR_SIZE, n);
    type[n] = '\0';
    if (strlen(type) != n)
        return ARDW_TYPE; /* a NUL inside */
    char norm[ARD_MAX_TYPE + 1];
    size_t tsize = 0;
    if (n == 0) {
        if (h->type_hash != 0)
            return ARDW_TYPE;
        return ARDW_OK;
    }
    if (ard_type_normalize(type, norm, sizeof norm) < 0 || strcmp(norm, type) != 0 ||
        ard_type_hash(type) != h->type_hash || ard_type_parse(type, NULL, 0, NULL, &tsize) < 0)
        return ARDW_TYPE;
    if (tsize != h->size)
        return ARDW_SIZE;
    return ARDW_OK;
}

/* A fragment on its own: one piece of a payload of h->size bytes cut into chunks of equal
 * length, the last one 1..chunk bytes. Sets h->frag_chunk. */
static bool frag_geometry_ok(struct ardw_hdr *h, size_t hlen)
{
    uint64_t n = h->frag_count, i = h->frag_index, off = h->frag_off, len = h->frag_len;
    uint64_t size = h->size;
    uint64_t max = hlen == ARDW_FRAG_HDR_SIZE ? ARDW_SHORT_FRAGS : ARDW_MAX_FRAGS;
    if (hlen == ARDW_FRAG_HDR_SIZE && size > ARDW_SHORT_PAYLOAD)
        return false;
    if (n < 2 || n > max || size > ARDW_MAX_PAYLOAD || i >= n || len == 0 || off > size ||
        len > size - off)
        return false;
    uint64_t chunk;
    if (i < n - 1) {
        chunk = len;
        if (off != i * chunk || (n - 1) * chunk >= size || size > n * chunk)
            return false;
    } else {
        if (off + len != size || off % i != 0)
            return false;
        chunk = off / i;
        if (len > chunk)
            return false;
    }
    h->frag_chunk = (uint32_t)chunk;
    return true;
}

enum ardw_cause ardw_parse(const uint8_t *b, size_t len, const struct ardw_expect *e,
                           struct ardw_hdr *h)
{
    if (len < ARDW_HDR_SIZE)
        return len >= 4 && ardw_get32(b) != ARDW_MAGIC_WORD ? ARDW_MAGIC : ARDW_TRUNCATED;
    if (len > ARDW_MAX_DGRAM)
        return ARDW_OVERSIZED;
    if (ardw_get32(b) != ARDW_MAGIC_WORD)
        return ARDW_MAGIC;
    bool frag = b[5] == ARDW_FLAG_FRAG;
    size_t hlen = ardw_get16(b + 6);
    if (b[4] != ARDW_WIRE_VERSION || (b[5] != 0 && !frag) ||
        (frag ? hlen != ARDW_FRAG_HDR_SIZE && hlen != ARDW_LFRAG_HDR_SIZE : hlen != ARDW_HDR_SIZE))
        return ARDW_VERSION;
    if (frag && len < hlen)
        return ARDW_TRUNCATED;
    h->version = b[4];
    h->flags = b[5];
    h->conn_id = ardw_get32(b + 8);
    h->size = ardw_get32(b + 12);
    h->epoch = ardw_get64(b + 16);
    h->seq = ardw_get64(b + 24);
    h->mono_ns = (int64_t)ardw_get64(b + 32);
    h->real_ns = (int64_t)ardw_get64(b + 40);
    h->type_hash = ardw_get64(b + 48);
    h->frag_index = h->frag_count = 0;
    h->frag_off = h->frag_len = h->frag_chunk = 0;
    if (frag) {
        h->frag_off = ardw_get32(b + 56);
        if (hlen == ARDW_FRAG_HDR_SIZE) {
            h->frag_index = ardw_get16(b + 60);
            h->frag_count = ardw_get16(b + 62);
        } else {
            h->frag_index = ardw_get32(b + 60);
            h->frag_count = ardw_get32(b + 64);
            if (ardw_get32(b + 68) != 0)
                return ARDW_FRAG_INVALID;
        }
        h->frag_len = (uint32_t)(len - hlen);
        if (!frag_geometry_ok(h, hlen))
            return ARDW_FRAG_INVALID;
    } else {
        /* Length against the declared size first: a damaged size field is a framing error. */
        if ((uint64_t)len - ARDW_HDR_SIZE < h->size)
            return ARDW_TRUNCATED;
        if ((uint64_t)len - ARDW_HDR_SIZE > h->size)
            return ARDW_OVERSIZED;
    }
    return e ? ardw_check(h, e) : ARDW_OK;
}

enum ardw_cause ardw_check(const struct ardw_hdr *h, const struct ardw_expect *e)
{
    if (e->conn_id != 0 && h->conn_id != e->conn_id)
        return ARDW_CONN;
    if (h->size != e->size)
        return ARDW_SIZE;
    if (h->type_hash != e->type_hash)
        return ARDW_TYPE;
    return ARDW_OK;
}

size_t ardw_pack_begin(uint8_t *b, uint64_t epoch)
{
    memset(b, 0, ARDW_PACK_HDR_SIZE);
    ardw_put32(b + 0, ARDW_MAGIC_WORD);
    b[4] = ARDW_WIRE_VERSION;
    b[5] = ARDW_FLAG_PACK;
    ardw_put16(b + 6, ARDW_PACK_HDR_SIZE);
    ardw_put64(b + 16, epoch);
    return ARDW_PACK_HDR_SIZE;
}

size_t ardw_pack_add(uint8_t *b, size_t len, const struct ardw_hdr *h, const void *payload)
{
    uint8_t *e = b + len;
    ardw_put32(e + 0, h->conn_id);
    ardw_put32(e + 4, h->size);
    ardw_put64(e + 8, h->seq);
    ardw_put64(e + 16, (uint64_t)h->mono_ns);
    ardw_put64(e + 24, (uint64_t)h->real_ns);
    ardw_put64(e + 32, h->type_hash);
    memcpy(e + ARDW_ENTRY_HDR_SIZE, payload, h->size);
    ardw_put16(b + 8, (uint16_t)(ardw_get16(b + 8) + 1));
    return len + ARDW_ENTRY_HDR_SIZE + h->size;
}

enum ardw_cause ardw_parse_packed(const uint8_t *b, size_t len, uint64_t *epoch, unsigned *count)
{
    if (len < ARDW_PACK_HDR_SIZE)
        return len >= 4 && ardw_get32(b) != ARDW_MAGIC_WORD ? ARDW_MAGIC : ARDW_TRUNCATED;
    if (len > ARDW_MAX_DGRAM)
        return ARDW_OVERSIZED;
    if (ardw_get32(b) != ARDW_MAGIC_WORD)
        return ARDW_MAGIC;
    if (b[4] != ARDW_WIRE_VERSION || b[5] != ARDW_FLAG_PACK ||
        ardw_get16(b + 6) != ARDW_PACK_HDR_SIZE || ardw_get16(b + 10) != 0 ||
        ardw_get32(b + 12) != 0)
        return ARDW_VERSION;
    unsigned n = ardw_get16(b + 8);
    if (n == 0)
        return ARDW_PACK_INVALID;
    /* The entries must fill the datagram exactly: a count or a size that is off by anything
     * is damage, and then no entry of it can be trusted. */
    size_t off = ARDW_PACK_HDR_SIZE;
    for (unsigned i = 0; i < n; i++) {
        if (len - off < ARDW_ENTRY_HDR_SIZE)
            return ARDW_PACK_INVALID;
        uint32_t size = ardw_get32(b + off + 4);
        if (size == 0 || size > len - off - ARDW_ENTRY_HDR_SIZE)
            return ARDW_PACK_INVALID;
        off += ARDW_ENTRY_HDR_SIZE + size;
    }
    if (off != len)
        return ARDW_PACK_INVALID;
    *epoch = ardw_get64(b + 16);
    *count = n;
    return ARDW_OK;
}

const uint8_t *ardw_pack_entry(const uint8_t *b, size_t *off, uint64_t epoch, struct ardw_hdr *h)
{
    const uint8_t *e = b + *off;
    *h = (struct ardw_hdr){.version = ARDW_WIRE_VERSION,
                           .flags = ARDW_FLAG_PACK,
                           .conn_id = ardw_get32(e + 0),
                           .size = ardw_get32(e + 4),
                           .epoch = epoch,
                           .seq = ardw_get64(e + 8),
                           .mono_ns = (int64_t)ardw_get64(e + 16),
                           .real_ns = (int64_t)ardw_get64(e + 24),
                           .type_hash = ardw_get64(e + 32)};
    *off += ARDW_ENTRY_HDR_SIZE + h->size;
    return e + ARDW_ENTRY_HDR_SIZE;
}

/* The decision without recovery. */
static enum ardw_cause order_rule(const struct ardw_track *t, const struct ardw_hdr *h,
                                  int64_t now_ns)
{
    if (!t->have)
        return t->floor && h->real_ns <= t->floor_real_ns ? ARDW_STALE : ARDW_OK;
    if (h->epoch == t->epoch)
        return h->seq == t->seq ? ARDW_DUPLICATE : h->seq > t->seq ? ARDW_OK : ARDW_OLD;
    if (now_ns - t->last_ns < ARDW_HOLDOFF_NS)
        return ARDW_EPOCH;
    /* Sealed: an epoch that proved itself before the current one was first delivered is an
     * earlier run's (its datagrams are recordings): never taken back. */
    if (h->proven_ns != 0 && h->proven_ns <= t->epoch_ns)
        return ARDW_EPOCH;
    /* A restarted sender first re-sends the connection's newest packet, which its previous
     * run may already have delivered: same seq is the same packet. Any other sequence is
     * accepted (a lower one means the sender's connection was re-created). */
    return h->seq == t->seq ? ARDW_DUPLICATE : ARDW_OK;
}

enum ardw_cause ardw_order(struct ardw_track *t, const struct ardw_hdr *h, int64_t now_ns)
{
    if (t->armed && h->epoch == t->arm_epoch && h->seq >= t->arm_seq)
        return ARDW_OK;
    enum ardw_cause c = order_rule(t, h, now_ns);
    if (c != ARDW_OLD && c != ARDW_STALE)
        return c;
    /* Refused as older. Transient for reordered and duplicated datagrams; but a sender that
     * keeps sending newer packets, all refused, for the hold-off means the state itself is
     * wrong (a damaged or forged sequence number was delivered, or the writer's clock went
     * back across a receiver restart): then the next of its packets newer than everything
     * refused is accepted, provided there were ARDW_RECOVER_COUNT such packets over the
     * hold-off. No bound taken from what was delivered is kept: forged datagrams could set it
     * (two of them with high sequences would jam the route for good). Sealed datagrams count
     * only when sent after the last delivery (their seal counter is the sender's time): a
     * recording of earlier ones never adds up to a recovery. */
    bool later = h->seal_ctr == 0 || !t->have || h->seal_ctr > t->last_ctr;
    if (!later)
        return c;
    if (!t->refusing || h->epoch != t->ref_epoch) {
        t->refusing = true;
        t->refuse_ns = now_ns;
        t->ref_epoch = h->epoch;
        t->ref_seq = h->seq;
        t->ref_count = 1;
        return c;
    }
    if (h->seq <= t->ref_seq)
        return c;
    t->ref_seq = h->seq;
    if (++t->ref_count >= ARDW_RECOVER_COUNT && now_ns - t->refuse_ns >= ARDW_HOLDOFF_NS) {
        t->armed = true;
        t->arm_epoch = h->epoch;
        t->arm_seq = h->seq;
        t->recoveries++;
        return ARDW_OK;
    }
    return c;
}

void ardw_delivered(struct ardw_track *t, const struct ardw_hdr *h, int64_t now_ns)
{
    /* After a recovery the packet before is not a bound any more (it was the bad one). */
    t->have_prev = t->have && h->epoch == t->epoch && !t->armed;
    t->prev_seq = t->seq;
    if (!t->have || h->epoch != t->epoch)
        t->epoch_ns = now_ns;
    t->last_ctr = h->seal_ctr;
    t->have = true;
    t->epoch = h->epoch;
    t->seq = h->seq;
    t->last_ns = now_ns;
    t->floor = false;
    t->refusing = false;
    t->armed = false;
}

unsigned ardw_frag_plan(size_t size, size_t max_dgram, size_t *chunk)
{
    *chunk = 0;
    if (ARDW_HDR_SIZE + size <= max_dgram)
        return 1;
    *chunk = max_dgram - ARDW_FRAG_HDR_SIZE;
    size_t n = (size + *chunk - 1) / *chunk;
    if (ardw_frag_hlen((uint32_t)size, (uint32_t)n) == ARDW_FRAG_HDR_SIZE)
        return (unsigned)n;
    *chunk = max_dgram - ARDW_LFRAG_HDR_SIZE;
    return (unsigned)((size + *chunk - 1) / *chunk);
}

static void reasm_start(struct ardw_reasm *a, const struct ardw_hdr *h, bool current)
{
    a->current = current;
    a->busy = true;
    a->epoch = h->epoch;
    a->seq = h->seq;
    a->mono_ns = h->mono_ns;
    a->real_ns = h->real_ns;
    a->conn_id = h->conn_id;
    a->size = h->size;
    a->chunk = h->frag_chunk;
    a->type_hash = h->type_hash;
    a->count = h->frag_count;
    a->got = 0;
    a->stall = 0;
    memset(a->bits ? a->bits : a->small, 0, ((size_t)h->frag_count + 63) / 64 * sizeof *a->small);
}

enum ardw_cause ardw_reasm_add(struct ardw_reasm *a, const struct ardw_hdr *h, const uint8_t *frag,
                               bool current, int64_t now_ns, bool *abandoned)
{
    *abandoned = false;
    uint64_t *bits = a->bits ? a->bits : a->small;
    if (!a->data || h->size > a->cap ||
        h->frag_count > (a->bits ? a->max_count : ARDW_SHORT_FRAGS) ||
        h->frag_index >= h->frag_count)
        return ARDW_FRAG_INVALID; /* parse guarantees the rest of the geometry */
    if (a->busy && (h->epoch != a->epoch || h->seq != a->seq)) {
        bool newer = h->epoch == a->epoch ? h->seq > a->seq : current && !a->current;
        bool stuck = ++a->stall > 4u * a->count + 16u || now_ns - a->progress_ns >= ARDW_HOLDOFF_NS;
        if (!newer && !stuck)
            return ARDW_FRAG_OLD;
        *abandoned = true;
        a->busy = false;
    }
    if (!a->busy) {
        reasm_start(a, h, current);
    } else {
        if (h->frag_count != a->count || h->frag_chunk != a->chunk || h->size != a->size ||
            h->mono_ns != a->mono_ns || h->real_ns != a->real_ns || h->conn_id != a->conn_id ||
            h->type_hash != a->type_hash)
            return ARDW_FRAG_CONFLICT;
        if (bits[h->frag_index / 64] >> (h->frag_index % 64) & 1u)
            return ARDW_FRAG_DUPLICATE;
    }
    memcpy(a->data + h->frag_off, frag, h->frag_len);
    bits[h->frag_index / 64] |= (uint64_t)1 << (h->frag_index % 64);
    a->got++;
    a->stall = 0;
    a->progress_ns = now_ns;
    if (a->got < a->count)
        return ARDW_PENDING;
    a->busy = false;
    return ARDW_OK;
}

bool ardw_reasm_supersede(struct ardw_reasm *a, uint64_t epoch, uint64_t seq)
{
    if (!a->busy || (a->epoch == epoch && a->seq > seq))
        return false;
    a->busy = false;
    return true;
}

static bool host_is_little(void)
{
    const uint16_t one = 1;
    uint8_t b;
    memcpy(&b, &one, 1);
    return b == 1;
}

void ardw_payload_swap(uint8_t *dst, const uint8_t *src, size_t size,
                       const struct ard_field *fields, size_t nfields)
{
    if (dst != src)
        memcpy(dst, src, size); /* padding and 1-byte fields */
    for (size_t f = 0; f < nfields; f++) {
        size_t es = ard_basic_size(fields[f].kind);
        if (es <= 1)
            continue;
        for (size_t k = 0; k < fields[f].count; k++) {
            size_t off = (size_t)fields[f].offset + k * es;
            if (off > size || size - off < es)
                return; /* a descriptor never exceeds its size; stay in bounds regardless */
            uint8_t tmp[8];
            memcpy(tmp, src + off, es);
            for (size_t i = 0; i < es; i++)
                dst[off + i] = tmp[es - 1 - i];
        }
    }
}

void ardw_payload_to_wire(uint8_t *dst, const void *src, size_t size,
                          const struct ard_field *fields, size_t nfields)
{
    if (host_is_little() || nfields == 0)
        memcpy(dst, src, size);
    else
        ardw_payload_swap(dst, src, size, fields, nfields);
}

void ardw_payload_from_wire(void *dst, const uint8_t *src, size_t size,
                            const struct ard_field *fields, size_t nfields)
{
    if (host_is_little() || nfields == 0) {
        if (dst != src) /* (a packet assembled in its slot is converted in place) */
            memcpy(dst, src, size);
    } else {
        ardw_payload_swap(dst, src, size, fields, nfields);
    }
}

uint32_t ardw_conn_id(const char *name)
{
    uint32_t h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = (h ^ *p) * 16777619u;
    return h ? h : 1;
}
