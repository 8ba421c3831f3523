/*
 * test_fragments.c - reassembly of fragmented packets on a route's receive path
 * (ardn_route_take): in order, reordered, duplicated, missing and conflicting fragments,
 * two packets interleaved, a whole packet overtaking one in progress. Whatever arrives, a
 * delivered packet is complete, of one (epoch, seq) only, and newer than the one before.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "ardn.h"

#define SIZE 1000u /* cut into chunks of 300: 300 300 300 100 */
#define CHUNK 300u
#define COUNT 4u
#define CONN 0x00c0ffeeu
#define EPOCH 1000u

static struct ardn_route route;
static int64_t now_ns; /* the receiver's clock, as the route sees it */
static uint8_t buf[SIZE], reasm_data[SIZE];
static uint8_t dgram[ARDW_FRAG_HDR_SIZE + SIZE];

static int setup(void **state)
{
    (void)state;
    ardn_route_init(&route);
    snprintf(route.cfg.name, sizeof route.cfg.name, "frag");
    route.size = SIZE;
    route.conn_id = CONN;
    route.buf = buf;
    route.reasm.data = reasm_data;
    route.reasm.cap = SIZE;
    now_ns = 0;
    return 0;
}

static uint8_t pattern(uint64_t seq, size_t i)
{
    return (uint8_t)(seq * 131 + i * 7 + (i >> 8));
}

static struct ardw_hdr hdr(uint64_t epoch, uint64_t seq)
{
    return (struct ardw_hdr){.conn_id = CONN,
                             .size = SIZE,
                             .epoch = epoch,
                             .seq = seq,
                             .mono_ns = (int64_t)seq * 10,
                             .real_ns = (int64_t)seq * 10 + 1};
}

/* Fragment idx of packet (epoch, seq) cut into chunks of `chunk`, payload pattern(seq). */
static size_t frag_of(struct ardw_hdr h, unsigned idx, unsigned chunk)
{
    unsigned count = (SIZE + chunk - 1) / chunk;
    size_t off = (size_t)idx * chunk, len = SIZE - off < chunk ? SIZE - off : chunk;
    h.frag_index = (uint16_t)idx;
    h.frag_count = (uint16_t)count;
    h.frag_off = (uint32_t)off;
    size_t hl = ardw_put_hdr(dgram, &h);
    for (size_t i = 0; i < len; i++)
        dgram[hl + i] = pattern(h.seq, off + i);
    return hl + len;
}

static enum ardw_cause feed_hdr(struct ardw_hdr h, unsigned idx, unsigned chunk)
{
    size_t n = frag_of(h, idx, chunk);
    struct ardw_hdr out;
    return ardn_route_take(&route, dgram, n, NULL, &out, now_ns);
}

static enum ardw_cause feed(uint64_t seq, unsigned idx)
{
    return feed_hdr(hdr(EPOCH, seq), idx, CHUNK);
}

static uint64_t drops(enum ardw_cause c)
{
    return atomic_load(&route.cnt.drop[c]);
}

static void assert_delivered(uint64_t seq)
{
    for (size_t i = 0; i < SIZE; i++)
        if (buf[i] != pattern(seq, i))
            fail_msg("byte %zu is not packet %llu's", i, (unsigned long long)seq);
    assert_true(route.track.have && route.track.seq == seq);
}

static void test_fragments_in_order_deliver_the_packet_once_complete(void **state)
{
    (void)state;
    memset(buf, 0, sizeof buf);
    for (unsigned i = 0; i < COUNT - 1; i++) {
        assert_int_equal(feed(1, i), ARDW_PENDING);
        assert_false(route.track.have); /* nothing delivered before the last fragment */
    }
    assert_int_equal(feed(1, COUNT - 1), ARDW_OK);
    assert_delivered(1);
    /* a late copy of any of its fragments is a duplicate of the delivered packet */
    assert_int_equal(feed(1, 2), ARDW_DUPLICATE);
    assert_delivered(1);
}

static void test_reordered_fragments_are_reassembled(void **state)
{
    (void)state;
    const unsigned order[COUNT] = {3, 1, 0, 2};
    for (unsigned k = 0; k < COUNT; k++)
        assert_int_equal(feed(7, order[k]), k + 1 < COUNT ? ARDW_PENDING : ARDW_OK);
    assert_delivered(7);
}

static void test_duplicated_fragment_is_dropped_and_counted(void **state)
{
    (void)state;
    assert_int_equal(feed(3, 0), ARDW_PENDING);
    assert_int_equal(feed(3, 1), ARDW_PENDING);
    assert_int_equal(feed(3, 1), ARDW_FRAG_DUPLICATE);
    assert_int_equal(feed(3, 0), ARDW_FRAG_DUPLICATE);
    assert_int_equal(feed(3, 3), ARDW_PENDING);
    assert_int_equal(feed(3, 2), ARDW_OK);
    assert_delivered(3);
}

static void test_missing_fragment_abandons_the_packet_for_the_next(void **state)
{
    (void)state;
    assert_int_equal(feed(5, 0), ARDW_PENDING);
    assert_int_equal(feed(5, 1), ARDW_PENDING);
    assert_int_equal(feed(5, 3), ARDW_PENDING); /* 2 is lost */
    assert_int_equal(drops(ARDW_PARTIAL), 0);
    assert_int_equal(feed(6, 1), ARDW_PENDING); /* a newer packet: 5 is given up */
    assert_int_equal(drops(ARDW_PARTIAL), 1);
    assert_int_equal(feed(5, 2), ARDW_FRAG_OLD); /* too late */
    assert_false(route.track.have);
    assert_int_equal(feed(6, 0), ARDW_PENDING);
    assert_int_equal(feed(6, 2), ARDW_PENDING);
    assert_int_equal(feed(6, 3), ARDW_OK);
    assert_delivered(6);
    assert_int_equal(feed(5, 0), ARDW_OLD); /* older than the delivered one */
    assert_int_equal(drops(ARDW_PARTIAL), 1);
}

static void test_conflicting_fragments_are_dropped(void **state)
{
    (void)state;
    assert_int_equal(feed(9, 0), ARDW_PENDING);
    /* same packet cut differently (a sender with another --max-datagram): chunk 250 */
    assert_int_equal(feed_hdr(hdr(EPOCH, 9), 1, 250), ARDW_FRAG_CONFLICT);
    assert_int_equal(feed_hdr(hdr(EPOCH, 9), 2, 400), ARDW_FRAG_CONFLICT); /* count 3 */
    struct ardw_hdr h = hdr(EPOCH, 9);
    h.real_ns++; /* another send time: not the same packet */
    assert_int_equal(feed_hdr(h, 1, CHUNK), ARDW_FRAG_CONFLICT);
    h = hdr(EPOCH, 9);
    h.mono_ns--;
    assert_int_equal(feed_hdr(h, 2, CHUNK), ARDW_FRAG_CONFLICT);
    assert_int_equal(drops(ARDW_PARTIAL), 0);
    assert_false(route.track.have);
    /* the genuine ones still complete it */
    assert_int_equal(feed(9, 1), ARDW_PENDING);
    assert_int_equal(feed(9, 2), ARDW_PENDING);
    assert_int_equal(feed(9, 3), ARDW_OK);
    assert_delivered(9);
}

static void test_conflicting_connection_is_dropped_on_a_route_that_accepts_any(void **state)
{
    (void)state;
    route.conn_id = 0;
    assert_int_equal(feed(4, 0), ARDW_PENDING);
    struct ardw_hdr h = hdr(EPOCH, 4);
    h.conn_id = CONN + 1;
    assert_int_equal(feed_hdr(h, 1, CHUNK), ARDW_FRAG_CONFLICT);
    assert_false(route.track.have);
}

static void test_two_interleaved_packets_never_mix(void **state)
{
    (void)state;
    /* A = seq 20, B = seq 21, fragments alternate: B takes over, A never completes */
    assert_int_equal(feed(20, 0), ARDW_PENDING);
    assert_int_equal(feed(21, 0), ARDW_PENDING);
    assert_int_equal(drops(ARDW_PARTIAL), 1);
    assert_int_equal(feed(20, 1), ARDW_FRAG_OLD);
    assert_int_equal(feed(21, 1), ARDW_PENDING);
    assert_int_equal(feed(20, 2), ARDW_FRAG_OLD);
    assert_int_equal(feed(21, 2), ARDW_PENDING);
    assert_int_equal(feed(20, 3), ARDW_FRAG_OLD);
    assert_false(route.track.have);
    assert_int_equal(feed(21, 3), ARDW_OK);
    assert_delivered(21);
    assert_int_equal(drops(ARDW_PARTIAL), 1);
}

static void test_a_whole_newer_packet_supersedes_the_one_in_progress(void **state)
{
    (void)state;
    assert_int_equal(feed(30, 0), ARDW_PENDING);
    assert_int_equal(feed(30, 1), ARDW_PENDING);
    /* seq 31 in one datagram (its sender allows large datagrams) */
    struct ardw_hdr h = hdr(EPOCH, 31), out;
    size_t hl = ardw_put_hdr(dgram, &h);
    for (size_t i = 0; i < SIZE; i++)
        dgram[hl + i] = pattern(31, i);
    assert_int_equal(ardn_route_take(&route, dgram, hl + SIZE, NULL, &out, now_ns), ARDW_OK);
    assert_delivered(31);
    assert_int_equal(drops(ARDW_PARTIAL), 1);
    assert_int_equal(feed(30, 2), ARDW_OLD);
    assert_int_equal(feed(30, 3), ARDW_OLD);
    assert_delivered(31);
}

static void test_new_epoch_takes_over_and_old_epoch_fragments_are_dropped(void **state)
{
    (void)state;
    now_ns = 0;
    assert_int_equal(feed(39, 0), ARDW_PENDING);
    for (unsigned i = 1; i < COUNT; i++)
        feed(39, i);
    assert_delivered(39);
    assert_int_equal(feed(40, 0), ARDW_PENDING);
    /* restarted sender (new epoch, its connection restarted too: lower seq): refused while
     * the old epoch is within the hold-off */
    assert_int_equal(feed_hdr(hdr(EPOCH + 1, 2), 0, CHUNK), ARDW_EPOCH);
    now_ns += ARDW_HOLDOFF_NS;
    /* then it takes over; the old epoch's packet in progress, stuck for as long, is given up */
    assert_int_equal(feed_hdr(hdr(EPOCH + 1, 2), 0, CHUNK), ARDW_PENDING);
    assert_int_equal(drops(ARDW_PARTIAL), 1);
    for (unsigned i = 1; i < COUNT; i++)
        assert_int_equal(feed_hdr(hdr(EPOCH + 1, 2), i, CHUNK),
                         i + 1 < COUNT ? ARDW_PENDING : ARDW_OK);
    assert_delivered(2);
    assert_int_equal(feed(41, 0), ARDW_EPOCH);
    /* a packet of the current epoch replaces one in progress from another epoch at once */
    now_ns += ARDW_HOLDOFF_NS;
    assert_int_equal(feed(42, 0), ARDW_PENDING); /* old epoch again, after the hold-off */
    assert_int_equal(feed_hdr(hdr(EPOCH + 1, 4), 0, CHUNK), ARDW_PENDING);
    assert_int_equal(drops(ARDW_PARTIAL), 2);
    /* while a fragment of another epoch does not replace one of the current epoch */
    assert_int_equal(feed(43, 1), ARDW_FRAG_OLD);
}

static void test_a_stuck_packet_in_progress_does_not_block_the_route(void **state)
{
    (void)state;
    /* One fragment with a far-future sequence (say, damaged): it never completes. */
    assert_int_equal(feed(1000000, 0), ARDW_PENDING);
    unsigned delivered = 0, old = 0;
    for (uint64_t seq = 50; seq < 80; seq++)
        for (unsigned i = 0; i < COUNT; i++) {
            enum ardw_cause c = feed(seq, i);
            delivered += c == ARDW_OK;
            old += c == ARDW_FRAG_OLD;
        }
    assert_true(old > 0);       /* dropped at first, as older than the one in progress */
    assert_true(delivered > 5); /* then the stuck one is given up */
    assert_delivered(79);
}

/* Random loss, duplication and reordering of many packets: whatever is delivered is one
 * packet, complete, and newer than the one delivered before. */
static void test_random_impairment_delivers_only_whole_newer_packets(void **state)
{
    (void)state;
    enum { NPKT = 3000, WINDOW = 6 };
    static uint32_t q[NPKT * COUNT * 2]; /* (seq << 8) | idx, in send order */
    size_t nq = 0;
    uint64_t x = 0x9e3779b97f4a7c15ull;
#define RND() (x ^= x << 13, x ^= x >> 7, x ^= x << 17, x)
    for (uint32_t seq = 1; seq <= NPKT; seq++)
        for (uint32_t i = 0; i < COUNT; i++) {
            if (RND() % 100 < 10)
                continue; /* lost */
            q[nq++] = seq << 8 | i;
            if (RND() % 100 < 10)
                q[nq++] = seq << 8 | i; /* duplicated */
        }
    for (size_t k = 0; k + 1 < nq; k++) /* reorder within a small window */
        if (RND() % 100 < 20) {
            size_t j = k + 1 + RND() % WINDOW;
            if (j < nq) {
                uint32_t t = q[k];
                q[k] = q[j];
                q[j] = t;
            }
        }
    uint64_t last = 0, delivered = 0, causes[ARDW_NCAUSES] = {0};
    for (size_t k = 0; k < nq; k++) {
        enum ardw_cause c = feed(q[k] >> 8, q[k] & 0xff);
        if (c != ARDW_OK) {
            if (c != ARDW_PENDING)
                causes[c]++;
            continue;
        }
        assert_true(route.track.seq > last);
        last = route.track.seq;
        assert_delivered(last);
        delivered++;
    }
    print_message("delivered %llu of %d packets\n", (unsigned long long)delivered, NPKT);
    assert_true(delivered > NPKT / 10);
    assert_true(drops(ARDW_PARTIAL) > 0);
    assert_true(causes[ARDW_FRAG_DUPLICATE] > 0);
    assert_true(causes[ARDW_FRAG_OLD] > 0 && causes[ARDW_OLD] + causes[ARDW_DUPLICATE] > 0);
#undef RND
}

/* ---- packets above 64 KiB: the 72-byte header, a bitmap of many words ------------------- */

#define BIG 100003u /* chunks of 1000: 101 fragments, the last 3 bytes */
static struct ardn_route big;
static uint8_t big_buf[BIG], big_reasm[BIG], big_dgram[ARDW_LFRAG_HDR_SIZE + BIG];
static uint64_t *big_bits;

static int setup_big(void **state)
{
    (void)state;
    ardn_route_init(&big);
    snprintf(big.cfg.name, sizeof big.cfg.name, "big");
    big.size = BIG;
    big.conn_id = CONN;
    big.buf = big_buf;
    size_t words = ardw_reasm_words(BIG);
    big_bits = calloc(words, sizeof *big_bits);
    big.reasm.data = big_reasm;
    big.reasm.bits = big_bits;
    big.reasm.cap = BIG;
    big.reasm.max_count = (uint32_t)(words * 64);
    now_ns = 0;
    return 0;
}

static int teardown_big(void **state)
{
    (void)state;
    free(big_bits);
    return 0;
}

/* Fragment idx of packet seq of BIG bytes in chunks of `chunk` (count as it follows, or
 * `count` when not 0: a forged one). */
static enum ardw_cause feed_big(uint64_t seq, uint32_t idx, uint32_t chunk, uint32_t count)
{
    struct ardw_hdr h = hdr(EPOCH, seq);
    h.size = BIG;
    h.frag_count = count ? count : (BIG + chunk - 1) / chunk;
    h.frag_index = idx;
    h.frag_off = idx * chunk;
    size_t len = BIG - h.frag_off < chunk ? BIG - h.frag_off : chunk;
    size_t hl = ardw_put_hdr(big_dgram, &h);
    assert_int_equal(hl, ARDW_LFRAG_HDR_SIZE);
    for (size_t i = 0; i < len; i++)
        big_dgram[hl + i] = pattern(seq, h.frag_off + i);
    struct ardw_hdr out;
    return ardn_route_take(&big, big_dgram, hl + len, NULL, &out, now_ns);
}

static void assert_big(uint64_t seq)
{
    for (size_t i = 0; i < BIG; i++)
        if (big_buf[i] != pattern(seq, i))
            fail_msg("byte %zu is not packet %llu's", i, (unsigned long long)seq);
    assert_true(big.track.have && big.track.seq == seq);
}

static uint64_t big_drops(enum ardw_cause c)
{
    return atomic_load(&big.cnt.drop[c]);
}

static void test_large_packet_in_any_order_is_exact(void **state)
{
    (void)state;
    const uint32_t n = 101;
    /* every index once, in a scrambled order (a stride prime to n), the last one completes */
    for (uint32_t k = 0; k < n; k++) {
        uint32_t idx = (k * 37u + 5u) % n;
        assert_int_equal(feed_big(1, idx, 1000, 0), k + 1 < n ? ARDW_PENDING : ARDW_OK);
        if (k + 1 < n)
            assert_false(big.track.have);
    }
    assert_big(1);
    /* the next packet, in order, with one duplicate on the way */
    for (uint32_t i = 0; i < n; i++) {
        assert_int_equal(feed_big(2, i, 1000, 0), i + 1 < n ? ARDW_PENDING : ARDW_OK);
        if (i == 64) /* (the second word of the bitmap) */
            assert_int_equal(feed_big(2, i, 1000, 0), ARDW_FRAG_DUPLICATE);
    }
    assert_big(2);
    assert_int_equal(big_drops(ARDW_FRAG_DUPLICATE), 0); /* (returned; counted by the input) */
}

static void test_large_forged_fragments_are_refused(void **state)
{
    (void)state;
    for (uint32_t i = 0; i < 60; i++)
        assert_int_equal(feed_big(3, i, 1000, 0), ARDW_PENDING);
    /* the count changes mid-packet (same size cut in chunks of 2000: 51 fragments) */
    assert_int_equal(feed_big(3, 30, 2000, 0), ARDW_FRAG_CONFLICT);
    /* overlapping offsets: a chunk of 1500 puts index 1 at 1500, over fragments 1 and 2 */
    assert_int_equal(feed_big(3, 1, 1500, 0), ARDW_FRAG_CONFLICT);
    /* a count that is not the one the chunk gives: refused on its own */
    assert_int_equal(feed_big(3, 70, 1000, 150), ARDW_FRAG_INVALID);
    /* more fragments than the route keeps bits for (chunks of 100 bytes: 1001 fragments): never
     * a larger bitmap, refused */
    assert_int_equal(feed_big(3, 5, 100, 0), ARDW_FRAG_INVALID);
    assert_true((BIG + 99) / 100 > big.reasm.max_count);
    /* garbage in the long header's reserved bytes */
    struct ardw_hdr h = hdr(EPOCH, 3), out;
    h.size = BIG;
    h.frag_count = 101;
    h.frag_index = 61;
    h.frag_off = 61000;
    size_t hl = ardw_put_hdr(big_dgram, &h);
    big_dgram[70] = 0xee;
    assert_int_equal(ardn_route_take(&big, big_dgram, hl + 1000, NULL, &out, now_ns),
                     ARDW_FRAG_INVALID);
    /* none of it touched the packet in progress: the rest completes it, exact */
    for (uint32_t i = 60; i < 101; i++)
        assert_int_equal(feed_big(3, i, 1000, 0), i + 1 < 101 ? ARDW_PENDING : ARDW_OK);
    assert_big(3);
    assert_int_equal(big_drops(ARDW_PARTIAL), 0);
}

static void test_large_newer_first_fragment_abandons_the_older(void **state)
{
    (void)state;
    for (uint32_t i = 0; i < 100; i++) /* the last one lost */
        assert_int_equal(feed_big(4, i, 1000, 0), ARDW_PENDING);
    assert_int_equal(feed_big(5, 0, 1000, 0), ARDW_PENDING);
    assert_int_equal(big_drops(ARDW_PARTIAL), 1);
    /* the late last fragment of 4 can never complete it: older than the one in progress */
    assert_int_equal(feed_big(4, 100, 1000, 0), ARDW_FRAG_OLD);
    for (uint32_t i = 1; i < 101; i++)
        assert_int_equal(feed_big(5, i, 1000, 0), i + 1 < 101 ? ARDW_PENDING : ARDW_OK);
    assert_big(5); /* 5 only: not a byte of 4 (the patterns differ at every byte) */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_fragments_in_order_deliver_the_packet_once_complete, setup),
        cmocka_unit_test_setup(test_reordered_fragments_are_reassembled, setup),
        cmocka_unit_test_setup(test_duplicated_fragment_is_dropped_and_counted, setup),
        cmocka_unit_test_setup(test_missing_fragment_abandons_the_packet_for_the_next, setup),
        cmocka_unit_test_setup(test_conflicting_fragments_are_dropped, setup),
        cmocka_unit_test_setup(test_conflicting_connection_is_dropped_on_a_route_that_accepts_any,
                               setup),
        cmocka_unit_test_setup(test_two_interleaved_packets_never_mix, setup),
        cmocka_unit_test_setup(test_a_whole_newer_packet_supersedes_the_one_in_progress, setup),
        cmocka_unit_test_setup(test_new_epoch_takes_over_and_old_epoch_fragments_are_dropped,
                               setup),
        cmocka_unit_test_setup(test_a_stuck_packet_in_progress_does_not_block_the_route, setup),
        cmocka_unit_test_setup(test_random_impairment_delivers_only_whole_newer_packets, setup),
        cmocka_unit_test_setup_teardown(test_large_packet_in_any_order_is_exact, setup_big,
                                        teardown_big),
        cmocka_unit_test_setup_teardown(test_large_forged_fragments_are_refused, setup_big,
                                        teardown_big),
        cmocka_unit_test_setup_teardown(test_large_newer_first_fragment_abandons_the_older,
                                        setup_big, teardown_big),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
