/*
 * test_bad_datagrams.c - the hand-made corpus of bad datagrams, fed to a route's receive check
 * (ardn_route_take, what the UDP loop calls): each is dropped with its cause, nothing is
 * delivered and the order state is untouched. Also a good datagram goes through intact.
 *
 *   test_bad_datagrams                  run the tests
 *   test_bad_datagrams --write-corpus D [CONN_ID SIZE TYPE]
 *                                       write every case as a file into D (fuzzer seeds, and
 *                                       datagrams for a running ardnet with that route)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ardn.h"

/* The route under test; --write-corpus can set other values to match a running ardnet. */
static const char *TYPE = "u32 f64 u16"; /* 24 bytes with padding */
static unsigned SIZE = 24;
static uint32_t CONN = 0x00c0ffeeu;
#define EPOCH 1000u
#define MAX_SIZE 4096

static struct ardn_route route;
static int64_t now_ns; /* the receiver's clock, as the route sees it */
static struct sockaddr_storage peer, stranger;

static void make_route(void)
{
    ardn_route_init(&route);
    snprintf(route.cfg.name, sizeof route.cfg.name, "test");
    route.size = SIZE;
    snprintf(route.type, sizeof route.type, "%s", TYPE);
    static struct ard_field f[64];
    if (ard_type_parse(TYPE, f, 64, &route.nfields, NULL) < 0)
        abort();
    route.fields = f;
    route.type_hash = ard_type_hash(TYPE);
    route.conn_id = CONN;
    static uint8_t buf[MAX_SIZE], reasm[MAX_SIZE];
    route.buf = buf;
    route.reasm.data = reasm;
    route.reasm.cap = SIZE;
    if (ardn_route_option(&route, "from", "10.77.0.11") < 0)
        abort();
    struct sockaddr_in *p = (struct sockaddr_in *)&peer, *s = (struct sockaddr_in *)&stranger;
    p->sin_family = s->sin_family = AF_INET;
    p->sin_addr.s_addr = inet_addr("10.77.0.11");
    s->sin_addr.s_addr = inet_addr("10.77.0.99");
    p->sin_port = s->sin_port = htons(40000);
}

/* A valid datagram with seq, then tweaked by the case. */
static size_t good(uint8_t *d, uint64_t epoch, uint64_t seq)
{
    struct ardw_hdr h = {.conn_id = CONN,
                         .size = SIZE,
                         .epoch = epoch,
                         .seq = seq,
                         .mono_ns = 1,
                         .real_ns = 2,
                         .type_hash = ard_type_hash(TYPE)};
    ardw_put_hdr(d, &h);
    for (unsigned i = 0; i < SIZE; i++)
        d[ARDW_HDR_SIZE + i] = (uint8_t)(seq + i);
    return ARDW_HDR_SIZE + SIZE;
}

static void put32le(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* Fragment idx (0..2) of a valid packet cut into three. */
#define FCHUNK ((SIZE + 2) / 3)
static size_t frag(uint8_t *d, uint64_t epoch, uint64_t seq, unsigned idx)
{
    struct ardw_hdr h = {.conn_id = CONN,
                         .size = SIZE,
                         .epoch = epoch,
                         .seq = seq,
                         .mono_ns = 1,
                         .real_ns = 2,
                         .type_hash = ard_type_hash(TYPE),
                         .frag_index = (uint16_t)idx,
                         .frag_count = 3,
                         .frag_off = idx * FCHUNK};
    size_t hl = ardw_put_hdr(d, &h);
    size_t len = idx < 2 ? FCHUNK : SIZE - 2 * FCHUNK;
    for (size_t i = 0; i < len; i++)
        d[hl + i] = (uint8_t)(seq + idx * FCHUNK + i);
    return hl + len;
}

struct bad_case {
    const char *name;
    enum ardw_cause want;
    bool stranger;
    size_t (*make)(uint8_t *d);
};

static size_t c_empty(uint8_t *d)
{
    (void)d;
    return 0;
}
static size_t c_three_bytes(uint8_t *d)
{
    good(d, EPOCH, 50);
    return 3;
}
static size_t c_header_minus_one(uint8_t *d)
{
    good(d, EPOCH, 50);
    return ARDW_HDR_SIZE - 1;
}
static size_t c_header_only(uint8_t *d)
{
    good(d, EPOCH, 50);
    return ARDW_HDR_SIZE;
}
static size_t c_payload_short(uint8_t *d)
{
    return good(d, EPOCH, 50) - 1;
}
static size_t c_payload_long(uint8_t *d)
{
    return good(d, EPOCH, 50) + 1;
}
static size_t c_short_bad_magic(uint8_t *d)
{
    memcpy(d, "XXXXYYYY", 8);
    return 8;
}
static size_t c_zeros(uint8_t *d)
{
    memset(d, 0, 80);
    return ARDW_HDR_SIZE + SIZE;
}
static size_t c_bad_magic(uint8_t *d)
{
    size_t n = good(d, EPOCH, 50);
    d[3] = 'X';
    return n;
}
static size_t c_version2(uint8_t *d)
{
    size_t n = good(d, EPOCH, 50);
    d[4] = 2;
    return n;
}
static size_t c_version0(uint8_t *d)
{
    size_t n = good(d, EPOCH, 50);
    d[4] = 0;
    return n;
}
static size_t c_flags(uint8_t *d)
{
    size_t n = good(d, EPOCH, 50);
    d[5] = 1;
    return n;
}
static size_t c_hdr_len(uint8_t *d)
{
    size_t n = good(d, EPOCH, 50);
    d[6] = 64;
    return n;
}
static size_t c_conn(uint8_t *d)
{
    size_t n = good(d, EPOCH, 50);
    d[8] ^= 1;
    return n;
}
static size_t c_size_huge(uint8_t *d)
{
    size_t n = good(d, EPOCH, 50);
    put32le(d + 12, 0xffffffffu);
    return n;
}
static size_t c_size_smaller(uint8_t *d)
{
    size_t n = good(d, EPOCH, 50);
    put32le(d + 12, SIZE - 8);
    return n;
}
static size_t c_size_other_consistent(uint8_t *d)
{
    good(d, EPOCH, 50);
    put32le(d + 12, SIZE - 8); /* framing fine, but not the connection's size */
    return ARDW_HDR_SIZE + SIZE - 8;
}
static size_t c_size_zero(uint8_t *d)
{
    good(d, EPOCH, 50);
    put32le(d + 12, 0);
    return ARDW_HDR_SIZE;
}
static size_t c_type(uint8_t *d)
{
    size_t n = good(d, EPOCH, 50);
    d[48] ^= 0x80;
    return n;
}
static size_t c_oversized(uint8_t *d)
{
    good(d, EPOCH, 50);
    return ARDW_MAX_DGRAM + 1;
}
static size_t c_stranger(uint8_t *d)
{
    return good(d, EPOCH, 50);
}
static size_t c_duplicate(uint8_t *d)
{
    return good(d, EPOCH, 10);
} /* last is (EPOCH,10) */
static size_t c_reordered(uint8_t *d)
{
    return good(d, EPOCH, 9);
}
static size_t c_old_epoch(uint8_t *d)
{
    return good(d, EPOCH - 1, 1000000);
}

static size_t c_frag_count_one(uint8_t *d)
{
    size_t n = frag(d, EPOCH, 50, 0);
    d[62] = 1;
    return n;
}
static size_t c_frag_index_too_big(uint8_t *d)
{
    size_t n = frag(d, EPOCH, 50, 2);
    d[60] = 3;
    return n;
}
static size_t c_frag_offset_wrong(uint8_t *d)
{
    size_t n = frag(d, EPOCH, 50, 1);
    put32le(d + 56, FCHUNK + 1);
    return n;
}
static size_t c_frag_empty(uint8_t *d)
{
    frag(d, EPOCH, 50, 1);
    return ARDW_FRAG_HDR_SIZE;
}
static size_t c_frag_past_end(uint8_t *d)
{
    return frag(d, EPOCH, 50, 2) + 1;
}
static size_t c_frag_short_middle(uint8_t *d)
{
    return frag(d, EPOCH, 50, 1) - 1;
}
static size_t c_frag_size_field(uint8_t *d)
{
    size_t n = frag(d, EPOCH, 50, 2);
    put32le(d + 12, 0xffffffffu);
    return n;
}
static size_t c_frag_header_cut(uint8_t *d)
{
    frag(d, EPOCH, 50, 0);
    return ARDW_FRAG_HDR_SIZE - 2;
}
static size_t c_frag_short_header_length(uint8_t *d)
{
    size_t n = frag(d, EPOCH, 50, 0);
    d[6] = ARDW_HDR_SIZE;
    return n;
}
static size_t c_frag_unknown_flag(uint8_t *d)
{
    size_t n = frag(d, EPOCH, 50, 0);
    d[5] = 0x81;
    return n;
}
static size_t c_frag_conn(uint8_t *d)
{
    size_t n = frag(d, EPOCH, 50, 1);
    d[9] ^= 1;
    return n;
}
static size_t c_frag_type(uint8_t *d)
{
    size_t n = frag(d, EPOCH, 50, 1);
    d[50] ^= 1;
    return n;
}
static size_t c_frag_duplicate(uint8_t *d)
{
    return frag(d, EPOCH, 10, 1);
}
static size_t c_frag_reordered(uint8_t *d)
{
    return frag(d, EPOCH, 9, 2);
}
static size_t c_frag_old_epoch(uint8_t *d)
{
    return frag(d, EPOCH - 1, 1000000, 0);
}

/* Valid in every field, with all-ones epoch and sequence (damaged, forged or from a stray
 * sender): on a route that delivers, refused as another epoch within the hold-off. */
static size_t c_all_ones(uint8_t *d)
{
    return good(d, UINT64_MAX, UINT64_MAX);
}
static size_t c_all_ones_frag0(uint8_t *d)
{
    return frag(d, UINT64_MAX, UINT64_MAX, 0);
}
static size_t c_all_ones_frag1(uint8_t *d)
{
    return frag(d, UINT64_MAX, UINT64_MAX, 1);
}
static size_t c_all_ones_frag2(uint8_t *d)
{
    return frag(d, UINT64_MAX, UINT64_MAX, 2);
}

static const struct bad_case cases[] = {
    {"empty", ARDW_TRUNCATED, false, c_empty},
    {"three_bytes", ARDW_TRUNCATED, false, c_three_bytes},
    {"header_minus_one", ARDW_TRUNCATED, false, c_header_minus_one},
    {"header_only", ARDW_TRUNCATED, false, c_header_only},
    {"payload_short", ARDW_TRUNCATED, false, c_payload_short},
    {"payload_long", ARDW_OVERSIZED, false, c_payload_long},
    {"short_bad_magic", ARDW_MAGIC, false, c_short_bad_magic},
    {"zeros", ARDW_MAGIC, false, c_zeros},
    {"bad_magic", ARDW_MAGIC, false, c_bad_magic},
    {"version2", ARDW_VERSION, false, c_version2},
    {"version0", ARDW_VERSION, false, c_version0},
    {"flags", ARDW_VERSION, false, c_flags},
    {"header_length", ARDW_VERSION, false, c_hdr_len},
    {"wrong_connection", ARDW_CONN, false, c_conn},
    {"size_field_huge", ARDW_TRUNCATED, false, c_size_huge},
    {"size_field_smaller", ARDW_OVERSIZED, false, c_size_smaller},
    {"other_size", ARDW_SIZE, false, c_size_other_consistent},
    {"size_zero", ARDW_SIZE, false, c_size_zero},
    {"wrong_type", ARDW_TYPE, false, c_type},
    {"oversized", ARDW_OVERSIZED, false, c_oversized},
    {"other_peer", ARDW_PEER, true, c_stranger},
    {"duplicate", ARDW_DUPLICATE, false, c_duplicate},
    {"reordered", ARDW_OLD, false, c_reordered},
    {"other_epoch", ARDW_EPOCH, false, c_old_epoch},
    {"frag_count_one", ARDW_FRAG_INVALID, false, c_frag_count_one},
    {"frag_index_too_big", ARDW_FRAG_INVALID, false, c_frag_index_too_big},
    {"frag_offset_wrong", ARDW_FRAG_INVALID, false, c_frag_offset_wrong},
    {"frag_empty", ARDW_FRAG_INVALID, false, c_frag_empty},
    {"frag_past_end", ARDW_FRAG_INVALID, false, c_frag_past_end},
    {"frag_short_middle", ARDW_FRAG_INVALID, false, c_frag_short_middle},
    {"frag_size_field", ARDW_FRAG_INVALID, false, c_frag_size_field},
    {"frag_header_cut", ARDW_TRUNCATED, false, c_frag_header_cut},
    {"frag_short_header_length", ARDW_VERSION, false, c_frag_short_header_length},
    {"frag_unknown_flag", ARDW_VERSION, false, c_frag_unknown_flag},
    {"frag_wrong_connection", ARDW_CONN, false, c_frag_conn},
    {"frag_wrong_type", ARDW_TYPE, false, c_frag_type},
    {"frag_other_peer", ARDW_PEER, true, c_frag_duplicate},
    {"frag_duplicate", ARDW_DUPLICATE, false, c_frag_duplicate},
    {"frag_reordered", ARDW_OLD, false, c_frag_reordered},
    {"frag_other_epoch", ARDW_EPOCH, false, c_frag_old_epoch},
    {"all_ones", ARDW_EPOCH, false, c_all_ones},
    {"all_ones_frag0", ARDW_EPOCH, false, c_all_ones_frag0},
    {"all_ones_frag1", ARDW_EPOCH, false, c_all_ones_frag1},
    {"all_ones_frag2", ARDW_EPOCH, false, c_all_ones_frag2},
};

static uint8_t dgram[ARDW_MAX_DGRAM + 16];

/* Deliver (EPOCH, 10) first, so that duplicate/reordered/old-epoch have something to lose to. */
static int setup(void **state)
{
    (void)state;
    make_route();
    now_ns = 0;
    struct ardw_hdr h;
    size_t n = good(dgram, EPOCH, 10);
    assert_int_equal(ardn_route_take(&route, dgram, n, &peer, &h, now_ns), ARDW_OK);
    return 0;
}

static void test_every_bad_datagram_is_dropped_with_its_cause(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        memset(dgram, 0, sizeof dgram);
        size_t n = cases[i].make(dgram);
        memset(route.buf, 0x5a, SIZE);
        struct ardw_track before = route.track;
        struct ardw_hdr h;
        enum ardw_cause c =
            ardn_route_take(&route, dgram, n, cases[i].stranger ? &stranger : &peer, &h, now_ns);
        if (c != cases[i].want)
            fail_msg("case %s: cause %s, expected %s", cases[i].name, ardw_cause_name(c),
                     ardw_cause_name(cases[i].want));
        for (unsigned k = 0; k < SIZE; k++)
            if (route.buf[k] != 0x5a)
                fail_msg("case %s: payload was delivered", cases[i].name);
        assert_true(before.have == route.track.have && before.epoch == route.track.epoch &&
                    before.seq == route.track.seq && before.last_ns == route.track.last_ns);
        assert_false(route.reasm.busy); /* nothing was kept for reassembly either */
    }
}

static void test_good_fragments_survive_bad_ones_between_them(void **state)
{
    (void)state;
    struct ardw_hdr h;
    static uint8_t want[MAX_SIZE];
    size_t n = frag(dgram, EPOCH, 12, 2);
    assert_int_equal(ardn_route_take(&route, dgram, n, &peer, &h, now_ns), ARDW_PENDING);
    memcpy(want + 2 * FCHUNK, dgram + ARDW_FRAG_HDR_SIZE, n - ARDW_FRAG_HDR_SIZE);
    /* every bad case between the fragments: none is delivered, none spoils the packet */
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t bad[ARDW_FRAG_HDR_SIZE + MAX_SIZE + 16];
        size_t bn = cases[i].make(bad);
        if (bn > sizeof bad)
            continue;
        assert_int_not_equal(
            ardn_route_take(&route, bad, bn, cases[i].stranger ? &stranger : &peer, &h, now_ns),
            ARDW_OK);
    }
    n = frag(dgram, EPOCH, 12, 0);
    assert_int_equal(ardn_route_take(&route, dgram, n, &peer, &h, now_ns), ARDW_PENDING);
    memcpy(want, dgram + ARDW_FRAG_HDR_SIZE, n - ARDW_FRAG_HDR_SIZE);
    n = frag(dgram, EPOCH, 12, 1);
    memcpy(want + FCHUNK, dgram + ARDW_FRAG_HDR_SIZE, n - ARDW_FRAG_HDR_SIZE);
    assert_int_equal(ardn_route_take(&route, dgram, n, &peer, &h, now_ns), ARDW_OK);
    assert_memory_equal(route.buf, want, SIZE);
    assert_true(h.seq == 12 && h.epoch == EPOCH && h.real_ns == 2);
}

static void test_good_datagram_is_delivered_intact(void **state)
{
    (void)state;
    struct ardw_hdr h;
    size_t n = good(dgram, EPOCH, 11);
    assert_int_equal(ardn_route_take(&route, dgram, n, &peer, &h, now_ns), ARDW_OK);
    assert_memory_equal(route.buf, dgram + ARDW_HDR_SIZE, SIZE);
    assert_true(h.seq == 11 && h.epoch == EPOCH && h.mono_ns == 1 && h.real_ns == 2);
}

static void test_restarted_sender_is_accepted(void **state)
{
    (void)state;
    struct ardw_hdr h;
    size_t n = good(dgram, EPOCH + 1, 1);
    assert_int_equal(ardn_route_take(&route, dgram, n, &peer, &h, now_ns), ARDW_EPOCH);
    now_ns += ARDW_HOLDOFF_NS; /* the old epoch fell silent: the restarted sender takes over */
    assert_int_equal(ardn_route_take(&route, dgram, n, &peer, &h, now_ns), ARDW_OK);
    n = good(dgram, EPOCH, 500);
    assert_int_equal(ardn_route_take(&route, dgram, n, &peer, &h, now_ns), ARDW_EPOCH);
}

static void test_peer_port_is_checked_when_given(void **state)
{
    (void)state;
    assert_int_equal(ardn_route_option(&route, "from", "10.77.0.11:40001"), 0);
    struct ardw_hdr h;
    size_t n = good(dgram, EPOCH, 20);
    assert_int_equal(ardn_route_take(&route, dgram, n, &peer, &h, now_ns), ARDW_PEER);
    ((struct sockaddr_in *)&peer)->sin_port = htons(40001);
    assert_int_equal(ardn_route_take(&route, dgram, n, &peer, &h, now_ns), ARDW_OK);
    ((struct sockaddr_in *)&peer)->sin_port = htons(40000);
}

static void test_restarted_receiver_drops_what_its_connection_already_holds(void **state)
{
    (void)state;
    make_route();             /* fresh receiver, nothing delivered yet */
    route.track.floor = true; /* the output's newest packet was published at t = 2 */
    route.track.floor_real_ns = 2;
    struct ardw_hdr h;
    size_t n = good(dgram, EPOCH, 10); /* written at real_ns 2: that packet again */
    assert_int_equal(ardn_route_take(&route, dgram, n, &peer, &h, now_ns), ARDW_STALE);
    n = good(dgram, EPOCH, 11);
    dgram[40] = 3; /* real_ns 3: written later */
    assert_int_equal(ardn_route_take(&route, dgram, n, &peer, &h, now_ns), ARDW_OK);
}

static void test_random_garbage_is_never_delivered(void **state)
{
    (void)state;
    uint64_t x = 88172645463325252ull;
    for (int i = 0; i < 20000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        size_t n = (size_t)(x % (ARDW_HDR_SIZE + SIZE + 8));
        for (size_t k = 0; k < n; k++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            dgram[k] = (uint8_t)x;
        }
        /* a quarter each with a valid whole-packet or fragment header start, to get past
         * the first checks */
        if (i % 4 == 1)
            memcpy(dgram, "ARDN\x01\x00\x38\x00", n < 8 ? n : 8);
        if (i % 4 == 2)
            memcpy(dgram, "ARDN\x01\x01\x40\x00", n < 8 ? n : 8);
        struct ardw_hdr h;
        enum ardw_cause c = ardn_route_take(&route, dgram, n, &peer, &h, now_ns);
        assert_int_not_equal(c, ARDW_OK);
        assert_int_not_equal(c, ARDW_PENDING);
    }
}

/* A valid packet (whole, or its three fragments) with one header field of one datagram
 * corrupted: a field the receiver must check (framing, connection, size, type, fragment
 * geometry, datagram length). Whatever the order of its datagrams, the packet is never
 * delivered, and nothing else is. With a payload byte corrupted instead, the packet is
 * delivered with exactly that byte changed (payload bytes are carried as they are: the UDP
 * checksum, not ardnet, guards them). Each trial starts a fresh receiver. */
enum corrupt_field {
    CF_MAGIC,
    CF_VERSION,
    CF_FLAGS,
    CF_HDR_LEN,
    CF_CONN,
    CF_SIZE,
    CF_TYPE,
    CF_FRAG_OFF,
    CF_FRAG_INDEX,
    CF_FRAG_COUNT,
    CF_LENGTH,
    CF_PAYLOAD, /* last: the one corruption that is delivered */
    CF_N
};

static uint64_t rng = 0x2545f4914f6cdd1dull;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* A value other than old (in bits bits). */
static uint32_t other(uint32_t old, unsigned bits)
{
    uint32_t mask = bits >= 32 ? 0xffffffffu : (1u << bits) - 1, v;
    do {
        switch (rnd() % 4) {
        case 0:
            v = old ^ (1u << (rnd() % bits)); /* one bit flipped */
            break;
        case 1:
            v = old + 1 + (uint32_t)(rnd() % 3);
            break;
        case 2:
            v = old - 1 - (uint32_t)(rnd() % 3);
            break;
        default:
            v = (uint32_t)rnd();
        }
        v &= mask;
    } while (v == old);
    return v;
}

static void put16le(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static void test_valid_datagrams_with_a_corrupted_field_are_never_delivered(void **state)
{
    (void)state;
    static uint8_t d[3][ARDW_FRAG_HDR_SIZE + MAX_SIZE + 16];
    uint64_t delivered_payload = 0, corrupted_fields = 0;
    for (int trial = 0; trial < 30000; trial++) {
        make_route();
        now_ns = 0;
        bool fragmented = rnd() % 2;
        uint64_t seq = 100 + rnd() % 1000;
        size_t len[3];
        unsigned n = fragmented ? 3 : 1;
        for (unsigned i = 0; i < n; i++)
            len[i] = fragmented ? frag(d[i], EPOCH, seq, i) : good(d[i], EPOCH, seq);
        uint8_t want[MAX_SIZE]; /* the payload as sent */
        for (unsigned i = 0; i < n; i++) {
            size_t hl = fragmented ? ARDW_FRAG_HDR_SIZE : ARDW_HDR_SIZE;
            memcpy(want + (fragmented ? i * FCHUNK : 0), d[i] + hl, len[i] - hl);
        }
        unsigned victim = (unsigned)(rnd() % n);
        enum corrupt_field f = (enum corrupt_field)(rnd() % CF_N);
        if (!fragmented && f >= CF_FRAG_OFF && f <= CF_FRAG_COUNT)
            f = CF_FLAGS; /* a whole packet has no fragment fields */
        uint8_t *b = d[victim];
        switch (f) {
        case CF_MAGIC:
            b[rnd() % 4] = (uint8_t)other(b[0], 8);
            if (memcmp(b, "ARDN", 4) == 0)
                b[0] = 'X';
            break;
        case CF_VERSION:
            b[4] = (uint8_t)other(b[4], 8);
            break;
        case CF_FLAGS:
            b[5] = (uint8_t)other(b[5], 8);
            break;
        case CF_HDR_LEN:
            put16le(b + 6, (uint16_t)other(b[6], 16));
            break;
        case CF_CONN:
            put32le(b + 8, other(CONN, 32));
            break;
        case CF_SIZE:
            put32le(b + 12, other(SIZE, 32));
            break;
        case CF_TYPE:
            b[48 + rnd() % 8] ^= (uint8_t)(1u << (rnd() % 8));
            break;
        case CF_FRAG_OFF:
            put32le(b + 56, other(victim * FCHUNK, 32));
            break;
        case CF_FRAG_INDEX:
            put16le(b + 60, (uint16_t)other(victim, 16));
            break;
        case CF_FRAG_COUNT:
            put16le(b + 62, (uint16_t)other(3, 16));
            break;
        case CF_LENGTH:
            len[victim] = other((uint32_t)len[victim], 12) % (ARDW_FRAG_HDR_SIZE + MAX_SIZE);
            break;
        case CF_PAYLOAD: {
            size_t hl = fragmented ? ARDW_FRAG_HDR_SIZE : ARDW_HDR_SIZE;
            size_t k = rnd() % (len[victim] - hl);
            b[hl + k] ^= (uint8_t)(1u + rnd() % 255);
            want[(fragmented ? victim * FCHUNK : 0) + k] = b[hl + k];
            break;
        }
        case CF_N:
            break;
        }
        unsigned order[3] = {0, 1, 2};
        for (unsigned i = n; i > 1; i--) {
            unsigned j = (unsigned)(rnd() % i), t = order[i - 1];
            order[i - 1] = order[j];
            order[j] = t;
        }
        memset(route.buf, 0x5a, SIZE);
        int delivered = 0;
        for (unsigned i = 0; i < n; i++) {
            struct ardw_hdr h;
            enum ardw_cause c =
                ardn_route_take(&route, d[order[i]], len[order[i]], &peer, &h, now_ns);
            if (c == ARDW_OK) {
                delivered++;
                if (f != CF_PAYLOAD)
                    fail_msg("trial %d: field %d of datagram %u corrupted, yet delivered", trial,
                             (int)f, victim);
                if (memcmp(route.buf, want, SIZE) != 0)
                    fail_msg("trial %d: delivered bytes differ from those sent", trial);
            }
        }
        if (f == CF_PAYLOAD) {
            assert_int_equal(delivered, 1);
            delivered_payload++;
        } else {
            assert_int_equal(delivered, 0);
            corrupted_fields++;
        }
    }
    print_message("%llu trials with a corrupted field, none delivered; %llu with a corrupted "
                  "payload byte, each delivered as sent\n",
                  (unsigned long long)corrupted_fields, (unsigned long long)delivered_payload);
}

static int write_corpus(const char *dir)
{
    make_route();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        memset(dgram, 0, sizeof dgram);
        size_t n = cases[i].make(dgram);
        if (n > 70000)
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s.bin", dir, cases[i].name);
        FILE *f = fopen(path, "wb");
        if (!f || fwrite(dgram, 1, n, f) != n) {
            perror(path);
            return 1;
        }
        fclose(f);
    }
    char path[1024];
    snprintf(path, sizeof path, "%s/good.bin", dir);
    FILE *f = fopen(path, "wb");
    size_t n = good(dgram, EPOCH, 11);
    if (!f || fwrite(dgram, 1, n, f) != n)
        return 1;
    fclose(f);
    /* Fuzzer seed of its multi-datagram mode (see fuzz_datagram.c): selector 0x08, then
     * [u16 length][datagram]...: a packet's fragments reordered and duplicated, a newer one. */
    snprintf(path, sizeof path, "%s/fragments.fuzz", dir);
    f = fopen(path, "wb");
    if (!f)
        return 1;
    fputc(0x08, f);
    const unsigned order[][2] = {{11, 2}, {11, 0}, {11, 0}, {12, 1}, {11, 1},
                                 {12, 0}, {12, 2}, {12, 2}, {13, 0}};
    for (size_t k = 0; k < sizeof order / sizeof order[0]; k++) {
        n = frag(dgram, EPOCH, order[k][0], order[k][1]);
        fputc((int)(n & 0xff), f);
        fputc((int)(n >> 8), f);
        fwrite(dgram, 1, n, f);
    }
    fclose(f);
    /* Seed of the timed multi-datagram mode (selector 0x18, records [T][u16 length][datagram],
     * the clock advancing T * 10 ms): a packet, an all-ones one after a quiet spell (taken),
     * the sender within the hold-off (refused) and after it (taken), then a sequence jump and
     * the sender refused, then recovered. */
    snprintf(path, sizeof path, "%s/timed.fuzz", dir);
    f = fopen(path, "wb");
    if (!f)
        return 1;
    fputc(0x18, f);
    const struct {
        unsigned t;
        uint64_t epoch, seq;
    } timed[] = {{0, EPOCH, 10},   {30, UINT64_MAX, UINT64_MAX},
                 {1, EPOCH, 11},   {30, EPOCH, 12},
                 {1, EPOCH, 5000}, {1, EPOCH, 13},
                 {10, EPOCH, 14},  {10, EPOCH, 15},
                 {10, EPOCH, 16},  {10, EPOCH, 17}};
    for (size_t k = 0; k < sizeof timed / sizeof timed[0]; k++) {
        n = good(dgram, timed[k].epoch, timed[k].seq);
        fputc((int)timed[k].t, f);
        fputc((int)(n & 0xff), f);
        fputc((int)(n >> 8), f);
        fwrite(dgram, 1, n, f);
    }
    fclose(f);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "--write-corpus") == 0) {
        if (argc == 6) { /* CONN_ID SIZE TYPE of the route the corpus will be sent to */
            CONN = (uint32_t)strtoul(argv[3], NULL, 0);
            SIZE = (unsigned)strtoul(argv[4], NULL, 0);
            TYPE = argv[5];
            if (SIZE < 16 || SIZE > MAX_SIZE)
                return 2;
        }
        return write_corpus(argv[2]);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_every_bad_datagram_is_dropped_with_its_cause, setup),
        cmocka_unit_test_setup(test_good_datagram_is_delivered_intact, setup),
        cmocka_unit_test_setup(test_good_fragments_survive_bad_ones_between_them, setup),
        cmocka_unit_test_setup(test_restarted_sender_is_accepted, setup),
        cmocka_unit_test_setup(test_peer_port_is_checked_when_given, setup),
        cmocka_unit_test(test_restarted_receiver_drops_what_its_connection_already_holds),
        cmocka_unit_test_setup(test_random_garbage_is_never_delivered, setup),
        cmocka_unit_test(test_valid_datagrams_with_a_corrupted_field_are_never_delivered),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
