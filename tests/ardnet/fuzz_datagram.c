/*
 * fuzz_datagram.c - libFuzzer target for the receive path of a route: header parsing, order
 * tracking, fragment reassembly and payload conversion (ardn_route_take). The first input byte
 * picks the route's type (typed or opaque, bits 0-1) and whether the datagrams come from the
 * configured peer (bit 2). Bit 3 selects the multi-datagram mode: the rest of the input is a
 * sequence of [u16 little-endian length][datagram], fed in order to one fresh route, so that
 * reassembly sees reordered, duplicated, conflicting and interleaved fragments. With bit 4
 * too, each record starts with a byte T and the receiver's clock advances by T * 10 ms before
 * the datagram, so that changes of epoch and recoveries (after the 250 ms hold-off) happen.
 * Invariants checked: a datagram is only delivered when its framing and header are right; a
 * delivered packet is newer than the one before in its epoch, and another epoch or an older
 * packet is delivered only after the hold-off without deliveries; a delivered packet is
 * exactly the bytes its datagram(s) carried (a whole packet: its payload; a reassembled one:
 * the bytes of fragments of its own (epoch, seq) only, each at its offset), converted.
 * Bit 5 selects the shared mode: the records go to a listening address shared by three
 * routes (ardn_input_datagram), so packed datagrams (flags 4) are unpacked to them; checked
 * per route as above (order, and the delivered bytes are those of the first entry, or the
 * whole packet, of its connection and sequence), and a packed datagram whose framing is
 * refused delivers nothing to any route. The shared mode delivers by reference, as the
 * receiving thread does (each datagram's packets converted by ardn_input_settle).
 */
#include "ardn.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

static const char *const types[] = {"u32 f64 u16", "", "u8[24]", "i16 i64 f32"};
static struct ardn_route routes[4];
static struct ard_field fields[4][8];
static uint8_t bufs[4][24], reasm[4][24];

static void setup(void)
{
    static bool done;
    if (done)
        return;
    done = true;
    for (int i = 0; i < 4; i++) {
        struct ardn_route *r = &routes[i];
        ardn_route_init(r);
        r->size = 24;
        size_t size = 24;
        if (types[i][0] && ard_type_parse(types[i], fields[i], 8, &r->nfields, &size) < 0)
            abort();
        if (size != 24)
            abort();
        r->fields = fields[i];
        r->type_hash = types[i][0] ? ard_type_hash(types[i]) : 0;
        r->conn_id = i == 3 ? 0 : 0x00c0ffeeu; /* 0: any connection id */
        r->buf = bufs[i];
        r->reasm.data = reasm[i];
        r->reasm.cap = 24;
        if (ardn_route_option(r, "from", "10.77.0.11") < 0)
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Which (epoch, seq) wrote each byte of the reassembly buffer, and the byte. */
static struct owner {
    uint64_t epoch, seq;
} owner[24];
static uint8_t shadow[24];

static void multi(struct ardn_route *r, const struct sockaddr_storage *src, const uint8_t *p,
                  size_t n, bool timed)
{
    r->track = (struct ardw_track){0};
    r->reasm.busy = false;
    r->reasm.stall = 0;
    r->reasm.progress_ns = 0;
    bool have = false;
    uint64_t last_epoch = 0, last_seq = 0;
    int64_t now = 0, last_ns = 0;
    while (n >= (timed ? 3u : 2u)) {
        if (timed) {
            now += (int64_t)p[0] * 10000000;
            p++;
            n--;
        }
        size_t len = (size_t)(p[0] | p[1] << 8);
        p += 2;
        n -= 2;
        if (len > n)
            len = n;
        uint8_t *d = malloc(len ? len : 1);
        if (!d)
            return;
        memcpy(d, p, len);
        p += len;
        n -= len;
        struct ardw_hdr h;
        enum ardw_cause c = ardn_route_take(r, d, len, src, &h, now);
        if (c == ARDW_PENDING || (c == ARDW_OK && h.frag_count != 0)) {
            if (h.frag_off > 24 || h.frag_len > 24 - h.frag_off || len != 64u + h.frag_len)
                abort(); /* kept a fragment outside the packet, or not the datagram's bytes */
            for (uint32_t i = h.frag_off; i < h.frag_off + h.frag_len; i++) {
                owner[i] = (struct owner){h.epoch, h.seq};
                shadow[i] = d[64 + i - h.frag_off];
            }
        }
        uint8_t want[24];
        if (c == ARDW_OK)
            ardw_payload_from_wire(want, h.frag_count ? shadow : d + ARDW_HDR_SIZE, 24, r->fields,
                                   r->nfields);
        free(d);
        if (c != ARDW_OK)
            continue;
        if (have && (h.epoch != last_epoch || h.seq <= last_seq) && now - last_ns < ARDW_HOLDOFF_NS)
            abort(); /* an older packet, or another epoch, within the hold-off */
        have = true;
        last_epoch = h.epoch;
        last_seq = h.seq;
        last_ns = now;
        for (size_t i = 0; h.frag_count != 0 && i < 24; i++)
            if (owner[i].epoch != h.epoch || owner[i].seq != h.seq)
                abort(); /* a mix of two packets */
        if (memcmp(r->buf, want, 24) != 0)
            abort(); /* delivered other bytes than those received */
    }
}

/* ---- shared mode --------------------------------------------------------------------------- */

static struct ardn_route shared[3];
static struct ardn_route *shared_sorted[3], *shared_touched[3];
static uint8_t shared_bufs[3][24], shared_reasm[3][24];
static struct ardn_input input;

static void setup_shared(void)
{
    for (int i = 0; i < 3; i++) {
        struct ardn_route *r = &shared[i];
        ardn_route_init(r);
        r->size = 24;
        r->fields = fields[0];
        r->nfields = routes[0].nfields;
        r->type_hash = ard_type_hash(types[0]);
        r->conn_id = 0x00c0ffeeu + (uint32_t)i;
        r->buf = shared_bufs[i];
        r->reasm.data = shared_reasm[i];
        r->reasm.cap = 24;
        if (ardn_route_option(r, "from", "10.77.0.11") < 0)
            abort();
        shared_sorted[i] = r;
    }
    input.routes = shared_sorted;
    input.nroutes = 3;
    input.touched = shared_touched;
    input.by_reference = true;
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The wire bytes route r should hold after datagram d delivered (conn, h->seq) to it, or
 * NULL for a fragment (checked by the other modes). */
static const uint8_t *delivered_bytes(const uint8_t *d, size_t len, const struct ardn_route *r,
                                      const struct ardw_hdr *h)
{
    if (d[5] != ARDW_FLAG_PACK)
        return h->frag_count ? NULL : d + ARDW_HDR_SIZE;
    uint64_t epoch;
    unsigned count;
    if (ardw_parse_packed(d, len, &epoch, &count) != ARDW_OK)
        abort(); /* delivered from a datagram whose framing is refused */
    size_t off = ARDW_PACK_HDR_SIZE;
    for (unsigned i = 0; i < count; i++) {
        struct ardw_hdr e;
        const uint8_t *p = ardw_pack_entry(d, &off, epoch, &e);
        if (e.conn_id == r->conn_id && e.seq == h->seq && e.size == 24 &&
            e.type_hash == r->type_hash)
            return p;
    }
    abort(); /* no entry of that connection and sequence */
}

static void shared_mode(const struct sockaddr_storage *src, const uint8_t *p, size_t n, bool timed)
{
    static bool done;
    if (!done)
        setup_shared();
    done = true;
    struct {
        bool have;
        uint64_t epoch, seq;
        int64_t ns;
    } last[3] = {{0}};
    for (int i = 0; i < 3; i++) {
        shared[i].track = (struct ardw_track){0};
        shared[i].reasm.busy = false;
        shared[i].reasm.stall = 0;
        shared[i].reasm.progress_ns = 0;
    }
    int64_t now = 0;
    while (n >= (timed ? 3u : 2u)) {
        if (timed) {
            now += (int64_t)p[0] * 10000000;
            p++;
            n--;
        }
        size_t len = (size_t)(p[0] | p[1] << 8);
        p += 2;
        n -= 2;
        if (len > n)
            len = n;
        uint8_t *d = malloc(len ? len : 1);
        if (!d)
            return;
        memcpy(d, p, len);
        p += len;
        n -= len;
        input.ntouched = 0;
        for (int i = 0; i < 3; i++)
            shared[i].fresh = false;
        ardn_input_datagram(&input, d, len, src, now);
        ardn_input_settle(&input); /* (the receiving thread's delivery by reference) */
        if (input.ntouched > 0 && (len < 8 || le32(d) != ARDW_MAGIC_WORD))
            abort(); /* delivered something that is no ardnet datagram */
        for (int t = 0; t < input.ntouched; t++) {
            struct ardn_route *r = input.touched[t];
            int i = (int)(r - shared);
            const struct ardw_hdr *h = &r->newest;
            if (last[i].have && (h->epoch != last[i].epoch || h->seq <= last[i].seq) &&
                now - last[i].ns < ARDW_HOLDOFF_NS)
                abort(); /* an older packet, or another epoch, within the hold-off */
            last[i].have = true;
            last[i].epoch = h->epoch;
            last[i].seq = h->seq;
            last[i].ns = now;
            const uint8_t *w = delivered_bytes(d, len, r, h);
            uint8_t want[24];
            if (w) {
                ardw_payload_from_wire(want, w, 24, r->fields, r->nfields);
                if (memcmp(r->buf, want, 24) != 0)
                    abort(); /* delivered other bytes than those received */
            }
        }
        free(d);
    }
}

/* ---- large mode ------------------------------------------------------------------------------ */

#define LARGE 70000u
static struct ardn_route large;
static uint8_t *large_buf, *large_reasm, *large_shadow;
static struct owner *large_owner;

static void large_mode(const struct sockaddr_storage *src, const uint8_t *p, size_t n, bool timed)
{
    static bool done;
    struct ardn_route *r = &large;
    if (!done) {
        done = true;
        ardn_route_init(r);
        r->size = LARGE;
        r->conn_id = 0x00c0ffeeu;
        large_buf = calloc(1, LARGE);
        large_reasm = calloc(1, LARGE);
        large_shadow = calloc(1, LARGE);
        large_owner = calloc(LARGE, sizeof *large_owner);
        size_t words = ardw_reasm_words(LARGE);
        r->reasm.bits = calloc(words, sizeof *r->reasm.bits);
        if (!large_buf || !large_reasm || !large_shadow || !large_owner || !r->reasm.bits)
            abort();
        r->buf = large_buf;
        r->reasm.data = large_reasm;
        r->reasm.cap = LARGE;
        r->reasm.max_count = (uint32_t)(words * 64);
    }
    r->track = (struct ardw_track){0};
    r->reasm.busy = false;
    r->reasm.stall = 0;
    r->reasm.progress_ns = 0;
    int64_t now = 0;
    while (n >= (timed ? 3u : 2u)) {
        if (timed) {
            now += (int64_t)p[0] * 10000000;
            p++;
            n--;
        }
        size_t len = (size_t)(p[0] | p[1] << 8);
        p += 2;
        n -= 2;
        if (len > n)
            len = n;
        uint8_t *d = malloc(len ? len : 1);
        if (!d)
            return;
        memcpy(d, p, len);
        p += len;
        n -= len;
        struct ardw_hdr h;
        enum ardw_cause c = ardn_route_take(r, d, len, src, &h, now);
        if (c == ARDW_OK && h.frag_count == 0 && memcmp(r->buf, d + ARDW_HDR_SIZE, LARGE) != 0)
            abort(); /* a whole packet (a datagram of 70056 bytes cannot be: never) */
        if (c == ARDW_PENDING || (c == ARDW_OK && h.frag_count != 0)) {
            size_t hl = len - h.frag_len;
            if (h.frag_off > LARGE || h.frag_len > LARGE - h.frag_off ||
                (hl != ARDW_FRAG_HDR_SIZE && hl != ARDW_LFRAG_HDR_SIZE) ||
                hl != ardw_get16(d + 6) || h.frag_count > r->reasm.max_count)
                abort(); /* kept a fragment outside the packet, or not the datagram's bytes */
            for (uint32_t i = h.frag_off; i < h.frag_off + h.frag_len; i++) {
                large_owner[i] = (struct owner){h.epoch, h.seq};
                large_shadow[i] = d[hl + i - h.frag_off];
            }
        }
        free(d);
        if (c != ARDW_OK || h.frag_count == 0)
            continue;
        for (size_t i = 0; i < LARGE; i++)
            if (large_owner[i].epoch != h.epoch || large_owner[i].seq != h.seq)
                abort(); /* a mix of two packets */
        if (memcmp(r->buf, large_shadow, LARGE) != 0)
            abort(); /* delivered other bytes than those received */
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    setup();
    if (size < 1)
        return 0;
    struct ardn_route *r = &routes[data[0] & 3];
    struct sockaddr_storage src = {0};
    struct sockaddr_in *s = (struct sockaddr_in *)&src;
    s->sin_family = AF_INET;
    s->sin_addr.s_addr = (data[0] & 4) ? inet_addr("10.77.0.12") : inet_addr("10.77.0.11");
    if (data[0] & 64) {
        large_mode(&src, data + 1, size - 1, data[0] & 16);
        return 0;
    }
    if (data[0] & 32) {
        shared_mode(&src, data + 1, size - 1, data[0] & 16);
        return 0;
    }
    if (data[0] & 8) {
        multi(r, &src, data + 1, size - 1, data[0] & 16);
        return 0;
    }
    /* Copy so that reading past the end is caught by ASan exactly at `size`. */
    size_t n = size - 1;
    uint8_t *d = malloc(n ? n : 1);
    if (!d)
        return 0;
    memcpy(d, data + 1, n);
    struct ardw_hdr h;
    r->track = (struct ardw_track){0};
    r->reasm.busy = false;
    enum ardw_cause c = ardn_route_take(r, d, n, &src, &h, 0);
    if ((c == ARDW_OK || c == ARDW_PENDING) && ((h.frag_count == 0 && n != ARDW_HDR_SIZE + 24) ||
                                                (data[0] & 4) || memcmp(d, "ARDN", 4) != 0))
        abort();
    if (c == ARDW_OK && h.frag_count == 0) {
        uint8_t want[24];
        ardw_payload_from_wire(want, d + ARDW_HDR_SIZE, 24, r->fields, r->nfields);
        if (memcmp(r->buf, want, 24) != 0)
            abort(); /* delivered other bytes than the datagram's payload */
    }
    free(d);
    return 0;
}
