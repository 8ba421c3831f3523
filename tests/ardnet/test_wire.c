/* test_wire.c - unit tests of src/ardnet/wire.c: exact bytes both ways, order tracking. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "wire.h"

static const struct ardw_hdr known_hdr = {
    .conn_id = 0x01020304u,
    .size = 24,
    .epoch = 0x1122334455667788ull,
    .seq = 0x0102030405060708ull,
    .mono_ns = -2,
    .real_ns = 0x7fffffffffffffffll,
    .type_hash = 0xa1a2a3a4a5a6a7a8ull,
};

static const uint8_t known_hdr_bytes[ARDW_HDR_SIZE] = {
    'A',  'R',  'D',  'N',  0x01, 0x00, 0x38, 0x00, /* magic ver flags hlen */
    0x04, 0x03, 0x02, 0x01, 0x18, 0x00, 0x00, 0x00, /* conn id, size */
    0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, /* epoch */
    0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, /* seq */
    0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, /* mono -2 */
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, /* real */
    0xa8, 0xa7, 0xa6, 0xa5, 0xa4, 0xa3, 0xa2, 0xa1, /* type hash */
};

/* "u8 u16 u32 f64 i8[3]": offsets 0, 2, 4, 8, 16; size 24 with padding. */
struct known {
    uint8_t a;
    uint16_t b;
    uint32_t c;
    double d;
    int8_t e[3];
};
#define KNOWN_TYPE "u8 u16 u32 f64 i8[3]"

static struct known known_value(void)
{
    struct known k;
    memset(&k, 0, sizeof k); /* padding bytes too */
    k.a = 0xab;
    k.b = 0x1234;
    k.c = 0xdeadbeefu;
    k.d = 1.0;
    k.e[0] = 1;
    k.e[1] = -1;
    k.e[2] = 2;
    return k;
}

static const uint8_t known_le[24] = {0xab, 0, 0x34, 0x12, 0xef, 0xbe, 0xad, 0xde, 0, 0, 0, 0,
                                     0,    0, 0xf0, 0x3f, 0x01, 0xff, 0x02, 0,    0, 0, 0, 0};
static const uint8_t known_be[24] = {0xab, 0, 0x12, 0x34, 0xde, 0xad, 0xbe, 0xef, 0x3f, 0xf0, 0, 0,
                                     0,    0, 0,    0,    0x01, 0xff, 0x02, 0,    0,    0,    0, 0};

static size_t known_fields(struct ard_field *f, size_t max)
{
    size_t n = 0, size = 0;
    assert_int_equal(ard_type_parse(KNOWN_TYPE, f, max, &n, &size), 0);
    assert_int_equal(size, sizeof(struct known));
    return n;
}

static void test_header_encodes_to_exact_little_endian_bytes(void **state)
{
    (void)state;
    uint8_t b[ARDW_HDR_SIZE];
    ardw_put_hdr(b, &known_hdr);
    assert_memory_equal(b, known_hdr_bytes, sizeof b);
}

static void test_header_decodes_from_exact_bytes(void **state)
{
    (void)state;
    uint8_t d[ARDW_HDR_SIZE + 24] = {0};
    memcpy(d, known_hdr_bytes, ARDW_HDR_SIZE);
    struct ardw_expect e = {0x01020304u, 24, 0xa1a2a3a4a5a6a7a8ull};
    struct ardw_hdr h;
    assert_int_equal(ardw_parse(d, sizeof d, &e, &h), ARDW_OK);
    assert_int_equal(h.conn_id, known_hdr.conn_id);
    assert_int_equal(h.size, 24);
    assert_true(h.epoch == known_hdr.epoch);
    assert_true(h.seq == known_hdr.seq);
    assert_true(h.mono_ns == -2);
    assert_true(h.real_ns == known_hdr.real_ns);
    assert_true(h.type_hash == known_hdr.type_hash);
}

static void test_typed_payload_to_wire_is_little_endian(void **state)
{
    (void)state;
    struct ard_field f[8];
    size_t n = known_fields(f, 8);
    struct known k = known_value();
    uint8_t w[24];
    ardw_payload_to_wire(w, &k, sizeof k, f, n);
    assert_memory_equal(w, known_le, 24); /* this host is little-endian */
    struct known back;
    memset(&back, 0x55, sizeof back);
    ardw_payload_from_wire(&back, known_le, sizeof back, f, n);
    assert_memory_equal(&back, &k, sizeof k);
}

static void test_swap_path_gives_big_endian_bytes_and_back(void **state)
{
    (void)state;
    struct ard_field f[8];
    size_t n = known_fields(f, 8);
    uint8_t be[24], le[24];
    ardw_payload_swap(be, known_le, 24, f, n);
    assert_memory_equal(be, known_be, 24); /* what a big-endian host holds in memory */
    ardw_payload_swap(le, be, 24, f, n);
    assert_memory_equal(le, known_le, 24);
    /* in place */
    memcpy(le, known_le, 24);
    ardw_payload_swap(le, le, 24, f, n);
    assert_memory_equal(le, known_be, 24);
}

static void test_opaque_payload_is_untouched(void **state)
{
    (void)state;
    uint8_t src[37], w[37], back[37];
    for (size_t i = 0; i < sizeof src; i++)
        src[i] = (uint8_t)(i * 7 + 1);
    ardw_payload_to_wire(w, src, sizeof src, NULL, 0);
    assert_memory_equal(w, src, sizeof src);
    ardw_payload_from_wire(back, w, sizeof w, NULL, 0);
    assert_memory_equal(back, src, sizeof src);
    ardw_payload_swap(back, src, sizeof src, NULL, 0);
    assert_memory_equal(back, src, sizeof src);
}

static void test_swap_stays_in_bounds_of_a_short_buffer(void **state)
{
    (void)state;
    struct ard_field f = {.kind = ARD_F64, .count = 4}; /* claims 32 bytes */
    uint8_t src[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, dst[12];
    ardw_payload_swap(dst, src, sizeof src, &f, 1);
    const uint8_t want[12] = {8, 7, 6, 5, 4, 3, 2, 1, 9, 10, 11, 12};
    assert_memory_equal(dst, want, sizeof want);
}

/* Order check then, if accepted, delivery: what a route does with a whole packet. */
static enum ardw_cause acc(struct ardw_track *t, uint64_t epoch, uint64_t seq, int64_t now)
{
    struct ardw_hdr h = {.epoch = epoch, .seq = seq, .real_ns = (int64_t)seq};
    enum ardw_cause c = ardw_order(t, &h, now);
    if (c == ARDW_OK)
        ardw_delivered(t, &h, now);
    return c;
}

#define MS 1000000LL
#define HOLD ARDW_HOLDOFF_NS

static void test_accept_drops_duplicates_and_older(void **state)
{
    (void)state;
    struct ardw_track t = {0};
    assert_int_equal(acc(&t, 100, 5, 0), ARDW_OK);
    assert_int_equal(acc(&t, 100, 5, 1), ARDW_DUPLICATE);
    assert_int_equal(acc(&t, 100, 4, 2), ARDW_OLD);
    assert_int_equal(acc(&t, 100, 7, 3), ARDW_OK);
    assert_int_equal(acc(&t, 100, 6, 4), ARDW_OLD);
    assert_true(t.seq == 7);
    /* late copies stay refused however long they take: nothing newer is among them */
    assert_int_equal(acc(&t, 100, 6, 10 * HOLD), ARDW_OLD);
    assert_int_equal(acc(&t, 100, 7, 20 * HOLD), ARDW_DUPLICATE);
}

static void test_another_epoch_takes_over_only_after_the_hold_off(void **state)
{
    (void)state;
    struct ardw_track t = {0};
    assert_int_equal(acc(&t, 100, 50, 0), ARDW_OK);
    /* epochs are not ordered: a restarted sender, larger or smaller, waits for the hold-off */
    assert_int_equal(acc(&t, 200, 51, 1 * MS), ARDW_EPOCH);
    assert_int_equal(acc(&t, 7, 51, 2 * MS), ARDW_EPOCH);
    assert_int_equal(acc(&t, 100, 51, 3 * MS), ARDW_OK); /* the current one goes on */
    assert_int_equal(acc(&t, 7, 52, 3 * MS + HOLD - 1), ARDW_EPOCH);
    assert_int_equal(acc(&t, 7, 52, 3 * MS + HOLD), ARDW_OK);      /* 100 silent: 7 takes over */
    assert_int_equal(acc(&t, 100, 53, 4 * MS + HOLD), ARDW_EPOCH); /* a late one of 100 */
    /* restart re-sending the newest already delivered packet: dropped, then it goes on */
    assert_int_equal(acc(&t, 300, 52, 5 * MS + 2 * HOLD), ARDW_DUPLICATE);
    assert_int_equal(acc(&t, 300, 53, 6 * MS + 2 * HOLD), ARDW_OK);
    /* a recreated connection starts its sequence again */
    assert_int_equal(acc(&t, 400, 1, 7 * MS + 3 * HOLD), ARDW_OK);
}

/* One datagram with all-ones epoch and sequence, delivered on an idle route (it passes every
 * check: there is no authentication): the sender's next packets are refused only until the
 * hold-off has passed since it. */
static void test_an_all_ones_datagram_stops_a_route_for_the_hold_off_at_most(void **state)
{
    (void)state;
    struct ardw_track t = {0};
    assert_int_equal(acc(&t, 100, 10, 0), ARDW_OK);
    assert_int_equal(acc(&t, UINT64_MAX, UINT64_MAX, 1 * HOLD), ARDW_OK);
    int64_t now = 1 * HOLD, first = -1;
    for (uint64_t seq = 11; seq < 1000 && first < 0; seq++) {
        now += MS; /* 1 kHz */
        enum ardw_cause c = acc(&t, 100, seq, now);
        if (c == ARDW_OK)
            first = now;
        else
            assert_int_equal(c, ARDW_EPOCH);
    }
    assert_true(first == 1 * HOLD + HOLD);
    /* while the genuine sender goes on, the forged epoch is refused again */
    assert_int_equal(acc(&t, UINT64_MAX, UINT64_MAX, now + 1), ARDW_EPOCH);
}

/* A sequence number that jumped ahead in the current epoch (damaged, yet passing every check):
 * the sender's packets are refused as old until they have been, with progress, for the
 * hold-off; then its next one is delivered, and late copies of older ones stay refused. */
static void test_a_sequence_jump_is_recovered_after_the_hold_off(void **state)
{
    (void)state;
    struct ardw_track t = {0};
    assert_int_equal(acc(&t, 100, 10, 0), ARDW_OK);
    assert_int_equal(acc(&t, 100, UINT64_MAX, 1 * MS), ARDW_OK);
    int64_t now = 1 * MS, first_refused = 2 * MS;
    uint64_t seq = 11;
    enum ardw_cause c;
    while ((c = acc(&t, 100, seq, now += MS)) == ARDW_OLD) {
        assert_true(now - first_refused < HOLD);
        seq++;
    }
    assert_int_equal(c, ARDW_OK);
    assert_true(now - first_refused == HOLD);
    assert_true(t.seq == seq && t.recoveries == 1);
    /* nothing refused or delivered before is delivered now */
    assert_int_equal(acc(&t, 100, seq - 1, now + 1), ARDW_OLD);
    assert_int_equal(acc(&t, 100, 10, now + 2), ARDW_OLD);
    assert_int_equal(acc(&t, 100, seq, now + 3), ARDW_DUPLICATE);
    assert_int_equal(acc(&t, 100, seq + 1, now + 4), ARDW_OK);
    /* and a second jump recovers the same way */
    assert_int_equal(acc(&t, 100, UINT64_MAX - 1, now + 5), ARDW_OK);
    now += 5;
    seq += 2;
    int64_t t0 = now + MS;
    while ((c = acc(&t, 100, seq, now += MS)) == ARDW_OLD)
        seq++;
    assert_int_equal(c, ARDW_OK);
    assert_true(now - t0 == HOLD && t.recoveries == 2);
}

/* Reordered and duplicated datagrams within the hold-off never trigger a recovery: it takes
 * refusals spread over the hold-off. */
static void test_late_copies_never_trigger_a_recovery(void **state)
{
    (void)state;
    struct ardw_track t = {0};
    for (uint64_t s = 1; s <= 41; s += 2)
        assert_int_equal(acc(&t, 100, s, (int64_t)s), ARDW_OK); /* 1 3 5 ... 41 delivered */
    /* every skipped one arrives late, in order, all within the hold-off */
    for (uint64_t s = 2; s < 41; s += 2)
        assert_int_equal(acc(&t, 100, s, 100 + (int64_t)s * (HOLD / 50)), ARDW_OLD);
    assert_true(t.recoveries == 0 && t.seq == 41);
}

/* A sealed datagram (seal_ctr: the sender's time of sending) counts towards a recovery only
 * when sent after the last delivery: a recording of earlier ones, replayed in order and spread
 * over any time, is refused whole, while the sender's own later packets recover as usual. */
static enum ardw_cause acc_sealed(struct ardw_track *t, uint64_t seq, uint64_t ctr, int64_t now)
{
    struct ardw_hdr h = {
        .epoch = 100, .seq = seq, .real_ns = (int64_t)seq, .seal_ctr = ctr, .proven_ns = 1};
    enum ardw_cause c = ardw_order(t, &h, now);
    if (c == ARDW_OK)
        ardw_delivered(t, &h, now);
    return c;
}

static void test_sealed_recordings_never_trigger_a_recovery(void **state)
{
    (void)state;
    struct ardw_track t = {0};
    for (uint64_t s = 1; s <= 20; s++)
        assert_int_equal(acc_sealed(&t, s, s * 1000, (int64_t)s * MS), ARDW_OK);
    /* the recording of 1..19, replayed one per hold-off: each refused, never a recovery */
    for (uint64_t s = 1; s < 20; s++)
        assert_int_equal(acc_sealed(&t, s, s * 1000, (int64_t)(s + 1) * HOLD), ARDW_OLD);
    assert_true(t.recoveries == 0 && t.seq == 20);
    /* a sender that was restarted (sequence re-created lower) in the same epoch is sent
     * later: it recovers after the hold-off */
    int64_t now = 30 * HOLD, t0 = now + 20 * MS;
    uint64_t seq = 1;
    enum ardw_cause c;
    while ((c = acc_sealed(&t, seq, 1000000 + seq, now += 20 * MS)) == ARDW_OLD)
        seq++;
    assert_int_equal(c, ARDW_OK);
    assert_true(now - t0 >= HOLD && now - t0 < HOLD + 20 * MS && t.recoveries == 1);
}

/* The jam: any number of forged datagrams with high sequence numbers (plain, no key) stop a
 * sender at 1 kHz for at most the hold-off plus ARDW_RECOVER_COUNT packets after the last. */
static void test_forged_sequences_stop_a_route_for_at_most_the_hold_off(void **state)
{
    (void)state;
    static const int nforged[] = {1, 2, 3, 100};
    for (size_t k = 0; k < sizeof nforged / sizeof nforged[0]; k++) {
        struct ardw_track t = {0};
        int64_t now = 0;
        uint64_t seq = 1;
        for (; seq <= 10; seq++)
            assert_int_equal(acc(&t, 100, seq, now += MS), ARDW_OK);
        for (int f = 0; f < nforged[k]; f++)
            assert_int_equal(acc(&t, 100, UINT64_MAX / 2 + (uint64_t)f, now + 1 + f), ARDW_OK);
        int64_t t0 = now + MS;
        enum ardw_cause c;
        while ((c = acc(&t, 100, seq, now += MS)) == ARDW_OLD) {
            assert_true(now - t0 <= HOLD);
            seq++;
        }
        assert_int_equal(c, ARDW_OK);
        assert_true(t.seq == seq);
        assert_int_equal(acc(&t, 100, seq + 1, now + MS), ARDW_OK);
    }
}

/* A restarted receiver refuses what its output already holds (written no later than floor),
 * until a sender refused that way for the hold-off makes progress: a writer whose clock was
 * set back. */
static void test_stale_floor_is_lifted_for_a_writer_whose_clock_went_back(void **state)
{
    (void)state;
    struct ardw_track t = {.floor = true, .floor_real_ns = 1000};
    assert_int_equal(acc(&t, 5, 1000, 0), ARDW_STALE);        /* the held packet again */
    assert_int_equal(acc(&t, 5, 999, 1), ARDW_STALE);         /* an older one */
    assert_int_equal(acc(&t, 5, 1000, HOLD + 5), ARDW_STALE); /* no progress: still refused */
    assert_int_equal(acc(&t, 5, 1001, HOLD + 6), ARDW_OK);    /* written later */

    struct ardw_track u = {.floor = true, .floor_real_ns = 1000000};
    int64_t now = 0;
    uint64_t seq = 1; /* real_ns = seq: far behind the floor */
    enum ardw_cause c;
    while ((c = acc(&u, 9, seq, now += MS)) == ARDW_STALE)
        seq++;
    assert_int_equal(c, ARDW_OK);
    assert_true(now - MS == HOLD && u.recoveries == 1);
}

static void test_fragment_header_encodes_to_exact_bytes(void **state)
{
    (void)state;
    struct ardw_hdr h = known_hdr;
    h.size = 1000;
    h.frag_off = 600;
    h.frag_index = 2;
    h.frag_count = 4;
    uint8_t b[ARDW_FRAG_HDR_SIZE];
    assert_int_equal(ardw_put_hdr(b, &h), ARDW_FRAG_HDR_SIZE);
    uint8_t want[ARDW_FRAG_HDR_SIZE];
    memcpy(want, known_hdr_bytes, ARDW_HDR_SIZE);
    want[5] = 0x01;                                                     /* flags: fragment */
    want[6] = 0x40;                                                     /* header length 64 */
    want[12] = 0xe8, want[13] = 0x03;                                   /* size 1000 */
    const uint8_t tail[8] = {0x58, 0x02, 0, 0, 0x02, 0x00, 0x04, 0x00}; /* 600, 2, 4 */
    memcpy(want + ARDW_HDR_SIZE, tail, 8);
    assert_memory_equal(b, want, sizeof want);
    /* and a whole packet keeps the 56-byte version 1 header */
    assert_int_equal(ardw_put_hdr(b, &known_hdr), ARDW_HDR_SIZE);
    assert_memory_equal(b, known_hdr_bytes, ARDW_HDR_SIZE);
}

/* A fragment of a 1000-byte payload cut into chunks of 300: 300 300 300 100. */
static enum ardw_cause parse_frag(uint32_t size, uint32_t off, uint16_t idx, uint16_t cnt,
                                  size_t len, struct ardw_hdr *out)
{
    static uint8_t d[ARDW_FRAG_HDR_SIZE + 2000];
    struct ardw_hdr h = known_hdr;
    h.size = size;
    h.frag_off = off;
    h.frag_count = 2;
    ardw_put_hdr(d, &h);
    d[60] = (uint8_t)idx, d[61] = (uint8_t)(idx >> 8); /* any values, 0 included */
    d[62] = (uint8_t)cnt, d[63] = (uint8_t)(cnt >> 8);
    struct ardw_expect e = {known_hdr.conn_id, size, known_hdr.type_hash};
    return ardw_parse(d, ARDW_FRAG_HDR_SIZE + len, &e, out);
}

static void test_fragment_fields_decode_and_are_checked_on_their_own(void **state)
{
    (void)state;
    struct ardw_hdr h;
    assert_int_equal(parse_frag(1000, 0, 0, 4, 300, &h), ARDW_OK);
    assert_int_equal(h.frag_count, 4);
    assert_int_equal(h.frag_chunk, 300);
    assert_int_equal(h.frag_len, 300);
    assert_int_equal(parse_frag(1000, 600, 2, 4, 300, &h), ARDW_OK);
    assert_int_equal(h.frag_off, 600);
    assert_int_equal(h.frag_index, 2);
    assert_int_equal(parse_frag(1000, 900, 3, 4, 100, &h), ARDW_OK);
    assert_int_equal(h.frag_chunk, 300); /* the last one tells the chunk by its offset */
    assert_int_equal(parse_frag(1000, 500, 1, 2, 500, &h), ARDW_OK); /* two equal halves */
    /* each inconsistency on its own */
    assert_int_equal(parse_frag(1000, 0, 0, 1, 1000, &h), ARDW_FRAG_INVALID); /* count 1 */
    assert_int_equal(parse_frag(1000, 0, 0, 0, 300, &h), ARDW_FRAG_INVALID);  /* count 0 */
    assert_int_equal(parse_frag(1000, 0, 0, ARDW_SHORT_FRAGS + 1, 300, &h), ARDW_FRAG_INVALID);
    assert_int_equal(parse_frag(1000, 900, 4, 4, 100, &h), ARDW_FRAG_INVALID); /* index */
    assert_int_equal(parse_frag(1000, 301, 1, 4, 300, &h), ARDW_FRAG_INVALID); /* offset */
    assert_int_equal(parse_frag(1000, 900, 3, 4, 99, &h), ARDW_FRAG_INVALID);  /* short end */
    assert_int_equal(parse_frag(1000, 900, 3, 4, 101, &h), ARDW_FRAG_INVALID); /* past end */
    assert_int_equal(parse_frag(1000, 600, 2, 3, 400, &h), ARDW_FRAG_INVALID); /* last > chunk */
    assert_int_equal(parse_frag(1000, 0, 0, 4, 200, &h), ARDW_FRAG_INVALID);   /* 4 too few */
    assert_int_equal(parse_frag(1000, 0, 0, 4, 400, &h), ARDW_FRAG_INVALID);   /* 3 would do */
    assert_int_equal(parse_frag(1000, 0, 0, 4, 0, &h), ARDW_FRAG_INVALID);     /* empty */
    assert_int_equal(parse_frag(1000, 1000, 3, 4, 0, &h), ARDW_FRAG_INVALID);
    assert_int_equal(parse_frag(1000, 0xfffffff0u, 3, 4, 100, &h), ARDW_FRAG_INVALID);
    /* framing of the flags and header length */
    uint8_t d[ARDW_FRAG_HDR_SIZE + 300];
    struct ardw_hdr fh = known_hdr;
    fh.size = 1000;
    fh.frag_count = 4;
    ardw_put_hdr(d, &fh);
    struct ardw_expect e = {known_hdr.conn_id, 1000, known_hdr.type_hash};
    assert_int_equal(ardw_parse(d, ARDW_FRAG_HDR_SIZE - 1, &e, &h), ARDW_TRUNCATED);
    d[6] = ARDW_HDR_SIZE; /* fragment flag with the short header length */
    assert_int_equal(ardw_parse(d, sizeof d, &e, &h), ARDW_VERSION);
    d[6] = ARDW_FRAG_HDR_SIZE;
    d[5] = 0x02; /* unknown flag */
    assert_int_equal(ardw_parse(d, sizeof d, &e, &h), ARDW_VERSION);
    d[5] = 0x03;
    assert_int_equal(ardw_parse(d, sizeof d, &e, &h), ARDW_VERSION);
    d[5] = 0x00; /* no flag with the long header length */
    assert_int_equal(ardw_parse(d, sizeof d, &e, &h), ARDW_VERSION);
}

static void test_fragment_plan_keeps_datagrams_within_the_maximum(void **state)
{
    (void)state;
    size_t chunk;
    assert_int_equal(ardw_frag_plan(1416, 1472, &chunk), 1); /* 56 + 1416 = 1472 */
    assert_int_equal(chunk, 0);
    assert_int_equal(ardw_frag_plan(1417, 1472, &chunk), 2);
    assert_int_equal(chunk, 1408); /* 1472 - 64 */
    assert_int_equal(ardw_frag_plan(65536, 1472, &chunk), 47);
    assert_int_equal(ardw_frag_plan(65451, ARDW_MAX_DGRAM, &chunk), 1);
    assert_int_equal(ardw_frag_plan(65536, ARDW_MAX_DGRAM, &chunk), 2);
    assert_int_equal(chunk, ARDW_MAX_DGRAM - ARDW_FRAG_HDR_SIZE);
    assert_true(ardw_frag_plan(ARDW_MAX_PAYLOAD, ARDW_MIN_DGRAM, &chunk) <= ARDW_MAX_FRAGS);
    assert_true(ardw_frag_plan(ARDW_MAX_PAYLOAD, ARDW_MIN_DGRAM - 32, &chunk) <= ARDW_MAX_FRAGS);
    assert_int_equal(chunk, ARDW_MIN_CHUNK); /* sealed, the smallest datagram */
    /* Up to 64 KiB the 64-byte header (what every ardnet reads), beyond it the 72-byte one. */
    assert_true(ardw_frag_plan(65536, ARDW_MIN_DGRAM, &chunk) <= ARDW_SHORT_FRAGS);
    assert_int_equal(chunk, ARDW_MIN_DGRAM - ARDW_FRAG_HDR_SIZE);
    assert_int_equal(ardw_frag_plan(65537, 1472, &chunk), 47);
    assert_int_equal(chunk, 1400); /* 1472 - 72 */
    assert_int_equal(ardw_frag_plan(1u << 20, 1472, &chunk), 749);
    assert_int_equal(ardw_frag_plan(4u << 20, 1472, &chunk), 2996);
    assert_int_equal(ardw_frag_plan(64u << 20, 1472, &chunk), 47935);
}

/* A fragment with the 72-byte header: u32 index and count, any packet size up to 64 MiB. */
static enum ardw_cause parse_long(uint32_t size, uint32_t off, uint32_t idx, uint32_t cnt,
                                  size_t len, struct ardw_hdr *out, uint8_t *d)
{
    struct ardw_hdr h = known_hdr;
    h.size = size;
    h.frag_off = off;
    h.frag_index = idx;
    h.frag_count = cnt;
    size_t hl = ardw_put_hdr(d, &h);
    assert_int_equal(hl, ardw_frag_hlen(size, cnt));
    struct ardw_expect e = {known_hdr.conn_id, size, known_hdr.type_hash};
    return ardw_parse(d, hl + len, &e, out);
}

static void test_long_fragment_header(void **state)
{
    (void)state;
    static uint8_t d[ARDW_LFRAG_HDR_SIZE + 2000];
    struct ardw_hdr h;
    /* 4 MiB in chunks of 1400: 2996 fragments, the last 1504 bytes short of a chunk... */
    uint32_t size = 4u << 20, n = 2996, last = size - (n - 1) * 1400;
    assert_int_equal(parse_long(size, 1400u * 700, 700, n, 1400, &h, d), ARDW_OK);
    assert_int_equal(d[6], ARDW_LFRAG_HDR_SIZE);
    assert_int_equal(h.frag_index, 700);
    assert_int_equal(h.frag_count, n);
    assert_int_equal(h.frag_off, 1400u * 700);
    assert_int_equal(h.frag_chunk, 1400);
    assert_int_equal(h.frag_len, 1400);
    /* the fields, byte by byte, little-endian */
    assert_int_equal(d[60] | d[61] << 8 | d[62] << 16 | d[63] << 24, 700);
    assert_int_equal(d[64] | d[65] << 8 | d[66] << 16 | d[67] << 24, (int)n);
    assert_int_equal(parse_long(size, 1400u * (n - 1), n - 1, n, last, &h, d), ARDW_OK);
    assert_int_equal(h.frag_chunk, 1400);
    /* index and count above 16 bits are read whole: 64 MiB in chunks of 408 */
    uint32_t big = ARDW_MAX_PAYLOAD, bn = (big + ARDW_MIN_CHUNK - 1) / ARDW_MIN_CHUNK;
    assert_int_equal(bn, ARDW_MAX_FRAGS);
    assert_int_equal(parse_long(big, ARDW_MIN_CHUNK * 70000u, 70000, bn, ARDW_MIN_CHUNK, &h, d),
                     ARDW_OK);
    assert_int_equal(h.frag_index, 70000);
    /* refused: a count above ARDW_MAX_FRAGS, a size above 64 MiB, reserved bytes not 0, a
     * 64-byte header for a packet above 64 KiB, a count changed under the same bytes */
    assert_int_equal(parse_long(size, 0, 0, ARDW_MAX_FRAGS + 1, 1400, &h, d), ARDW_FRAG_INVALID);
    assert_int_equal(parse_long(big + 1, 0, 0, bn + 1, ARDW_MIN_CHUNK, &h, d), ARDW_FRAG_INVALID);
    assert_int_equal(parse_long(size, 1400, 1, n, 1400, &h, d), ARDW_OK);
    d[68] = 1;
    assert_int_equal(ardw_parse(d, ARDW_LFRAG_HDR_SIZE + 1400, NULL, &h), ARDW_FRAG_INVALID);
    d[68] = 0;
    d[64] = (uint8_t)(n + 1); /* count + 1: the chunk no longer fits it */
    assert_int_equal(ardw_parse(d, ARDW_LFRAG_HDR_SIZE + 1400, NULL, &h), ARDW_FRAG_INVALID);
    d[64] = (uint8_t)n;
    d[6] = ARDW_FRAG_HDR_SIZE; /* the short layout for a 4 MiB packet */
    assert_int_equal(ardw_parse(d, ARDW_FRAG_HDR_SIZE + 1400, NULL, &h), ARDW_FRAG_INVALID);
    d[6] = 80; /* another header length */
    assert_int_equal(ardw_parse(d, ARDW_LFRAG_HDR_SIZE + 1400, NULL, &h), ARDW_VERSION);
    d[6] = ARDW_LFRAG_HDR_SIZE;
    assert_int_equal(ardw_parse(d, ARDW_LFRAG_HDR_SIZE - 1, NULL, &h), ARDW_TRUNCATED);
    assert_int_equal(ardw_parse(d, ARDW_LFRAG_HDR_SIZE + 1400, NULL, &h), ARDW_OK);
}

static void test_order_decides_without_recording(void **state)
{
    (void)state;
    struct ardw_track t = {0};
    struct ardw_hdr h = {.epoch = 100, .seq = 5};
    assert_int_equal(ardw_order(&t, &h, 0), ARDW_OK);
    assert_false(t.have);
    assert_int_equal(acc(&t, 100, 5, 0), ARDW_OK);
    assert_int_equal(ardw_order(&t, &h, 1), ARDW_DUPLICATE);
    h.seq = 6;
    assert_int_equal(ardw_order(&t, &h, 2), ARDW_OK);
    h.epoch = 99;
    assert_int_equal(ardw_order(&t, &h, 3), ARDW_EPOCH);
    assert_true(t.seq == 5 && t.epoch == 100);
}

/* The descriptor datagram: its text names the sender's type; one whose text does not match
 * its own hash or size, or is no canonical descriptor, is refused. */
static void test_descriptor_datagram_round_trip_and_checks(void **state)
{
    (void)state;
    uint8_t b[ARDW_HDR_SIZE + ARD_MAX_TYPE];
    char type[ARD_MAX_TYPE + 1];
    struct ardw_hdr h = {.conn_id = 7,
                         .size = 64,
                         .epoch = 9,
                         .type_hash = ard_type_hash("f64[7] u32")},
                    out;
    struct ardw_expect e = {.conn_id = 7};
    size_t n = ardw_put_desc(b, &h, "f64[7] u32");
    assert_int_equal(n, ARDW_HDR_SIZE + 10);
    assert_int_equal(b[5], ARDW_FLAG_DESC);
    assert_int_equal(ardw_parse_desc(b, n, &e, &out, type), ARDW_OK);
    assert_string_equal(type, "f64[7] u32");
    assert_true(out.size == 64 && out.epoch == 9 && out.type_hash == h.type_hash);
    /* a data parser drops it: an older receiver counts it as an unknown flag */
    struct ardw_expect ed = {.conn_id = 7, .size = 64, .type_hash = h.type_hash};
    assert_int_equal(ardw_parse(b, n, &ed, &out), ARDW_VERSION);
    e.conn_id = 8;
    assert_int_equal(ardw_parse_desc(b, n, &e, &out, type), ARDW_CONN);
    e.conn_id = 0;
    b[ARDW_HDR_SIZE + 1] = '3'; /* "f34[7] u32": no type */
    assert_int_equal(ardw_parse_desc(b, n, &e, &out, type), ARDW_TYPE);
    n = ardw_put_desc(b, &h, "f64[7]  u32"); /* not canonical */
    assert_int_equal(ardw_parse_desc(b, n, &e, &out, type), ARDW_TYPE);
    h.size = 60;
    n = ardw_put_desc(b, &h, "f64[7] u32"); /* size disagrees (the type's is 64, padded) */
    assert_int_equal(ardw_parse_desc(b, n, &e, &out, type), ARDW_SIZE);
    h.type_hash = 0;
    n = ardw_put_desc(b, &h, ""); /* opaque */
    assert_int_equal(ardw_parse_desc(b, n, &e, &out, type), ARDW_OK);
    assert_string_equal(type, "");
    assert_int_equal(ardw_parse_desc(b, ARDW_HDR_SIZE - 1, &e, &out, type), ARDW_TRUNCATED);
    memset(b + ARDW_HDR_SIZE, 'x', ARD_MAX_TYPE);
    b[ARDW_HDR_SIZE + 3] = '\0'; /* a NUL inside */
    assert_int_equal(ardw_parse_desc(b, ARDW_HDR_SIZE + 8, &e, &out, type), ARDW_TYPE);
}

static void test_conn_id_is_stable_and_never_zero(void **state)
{
    (void)state;
    assert_int_equal(ardw_conn_id("arm.state"), ardw_conn_id("arm.state"));
    assert_int_not_equal(ardw_conn_id("arm.state"), ardw_conn_id("arm.cmd"));
    assert_int_not_equal(ardw_conn_id(""), 0);
    assert_int_equal(ardw_conn_id(""), 2166136261u); /* FNV-1a offset basis */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_header_encodes_to_exact_little_endian_bytes),
        cmocka_unit_test(test_header_decodes_from_exact_bytes),
        cmocka_unit_test(test_typed_payload_to_wire_is_little_endian),
        cmocka_unit_test(test_swap_path_gives_big_endian_bytes_and_back),
        cmocka_unit_test(test_opaque_payload_is_untouched),
        cmocka_unit_test(test_swap_stays_in_bounds_of_a_short_buffer),
        cmocka_unit_test(test_accept_drops_duplicates_and_older),
        cmocka_unit_test(test_another_epoch_takes_over_only_after_the_hold_off),
        cmocka_unit_test(test_an_all_ones_datagram_stops_a_route_for_the_hold_off_at_most),
        cmocka_unit_test(test_a_sequence_jump_is_recovered_after_the_hold_off),
        cmocka_unit_test(test_late_copies_never_trigger_a_recovery),
        cmocka_unit_test(test_sealed_recordings_never_trigger_a_recovery),
        cmocka_unit_test(test_forged_sequences_stop_a_route_for_at_most_the_hold_off),
        cmocka_unit_test(test_stale_floor_is_lifted_for_a_writer_whose_clock_went_back),
        cmocka_unit_test(test_conn_id_is_stable_and_never_zero),
        cmocka_unit_test(test_descriptor_datagram_round_trip_and_checks),
        cmocka_unit_test(test_fragment_header_encodes_to_exact_bytes),
        cmocka_unit_test(test_fragment_fields_decode_and_are_checked_on_their_own),
        cmocka_unit_test(test_fragment_plan_keeps_datagrams_within_the_maximum),
        cmocka_unit_test(test_long_fragment_header),
        cmocka_unit_test(test_order_decides_without_recording),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
