/*
 * test_packed.c - packed datagrams (docs/wire.md, "Packed datagram"): the exact bytes of one,
 * the framing checks of the parser (every count or length that does not fill the datagram
 * exactly is refused whole), and a listening address shared by three routes
 * (ardn_input_datagram): each entry goes to its route by connection id and is checked there
 * (size, type, order) on its own; an unknown id, a damaged datagram, a descriptor that would
 * change a live connection's type are refused and counted, never delivered or applied; the
 * receiving thread's delivery by reference (ardn_input_settle).
 *
 *   test_packed                      run the tests
 *   test_packed --write-corpus DIR   write seeds for the datagram fuzzer's shared mode
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

#define TYPE "u32 f64 u16" /* 24 bytes */
#define SIZE 24u

static const struct ardw_hdr entry_a = {.conn_id = 0x01020304u,
                                        .size = 4,
                                        .seq = 0x1112131415161718ull,
                                        .mono_ns = 0x2122232425262728ll,
                                        .real_ns = 0x3132333435363738ll,
                                        .type_hash = 0x4142434445464748ull};

/* A packed datagram of two entries of 4 and 1 bytes, epoch 0x0807060504030201. */
static const uint8_t known[] = {
    'A',  'R',  'D',  'N',  1,    4,    24,   0,    /* magic, version, flags, header length */
    2,    0,    0,    0,    0,    0,    0,    0,    /* count, reserved */
    0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, /* epoch */
    0x04, 0x03, 0x02, 0x01, 4,    0,    0,    0,    /* entry 1: conn id, size */
    0x18, 0x17, 0x16, 0x15, 0x14, 0x13, 0x12, 0x11, /* sequence */
    0x28, 0x27, 0x26, 0x25, 0x24, 0x23, 0x22, 0x21, /* monotonic */
    0x38, 0x37, 0x36, 0x35, 0x34, 0x33, 0x32, 0x31, /* realtime */
    0x48, 0x47, 0x46, 0x45, 0x44, 0x43, 0x42, 0x41, /* type hash */
    0xAA, 0xBB, 0xCC, 0xDD,                         /* payload */
    9,    0,    0,    0,    1,    0,    0,    0,    /* entry 2: conn id 9, size 1 */
    5,    0,    0,    0,    0,    0,    0,    0,
    0,    0,    0,    0,    0,    0,    0,    0, /* sequence 5, monotonic 0 */
    0,    0,    0,    0,    0,    0,    0,    0,
    0,    0,    0,    0,    0,    0,    0,    0, /* realtime 0, type hash 0 */
    0xEE};

static void test_packed_datagram_has_the_documented_bytes(void **state)
{
    (void)state;
    uint8_t d[sizeof known];
    const uint8_t pa[4] = {0xAA, 0xBB, 0xCC, 0xDD}, pb[1] = {0xEE};
    size_t n = ardw_pack_begin(d, 0x0807060504030201ull);
    n = ardw_pack_add(d, n, &entry_a, pa);
    struct ardw_hdr b = {.conn_id = 9, .size = 1, .seq = 5};
    n = ardw_pack_add(d, n, &b, pb);
    assert_int_equal(n, sizeof known);
    assert_memory_equal(d, known, sizeof known);

    uint64_t epoch;
    unsigned count;
    assert_int_equal(ardw_parse_packed(d, n, &epoch, &count), ARDW_OK);
    assert_int_equal(count, 2);
    assert_true(epoch == 0x0807060504030201ull);
    size_t off = ARDW_PACK_HDR_SIZE;
    struct ardw_hdr h;
    const uint8_t *p = ardw_pack_entry(d, &off, epoch, &h);
    assert_int_equal(h.conn_id, entry_a.conn_id);
    assert_int_equal(h.size, 4);
    assert_true(h.seq == entry_a.seq && h.mono_ns == entry_a.mono_ns &&
                h.real_ns == entry_a.real_ns && h.type_hash == entry_a.type_hash);
    assert_true(h.epoch == epoch && h.frag_count == 0 && h.flags == ARDW_FLAG_PACK);
    assert_memory_equal(p, pa, 4);
    p = ardw_pack_entry(d, &off, epoch, &h);
    assert_int_equal(h.conn_id, 9);
    assert_int_equal(p[0], 0xEE);
    assert_int_equal(off, n);
}

static enum ardw_cause parse_modified(size_t at, uint8_t val, size_t len)
{
    uint8_t d[sizeof known + 8] = {0};
    memcpy(d, known, sizeof known);
    if (at < sizeof d)
        d[at] = val;
    uint64_t e;
    unsigned c;
    return ardw_parse_packed(d, len, &e, &c);
}

static void test_framing_that_does_not_fill_the_datagram_is_refused_whole(void **state)
{
    (void)state;
    size_t n = sizeof known;
    assert_int_equal(parse_modified(99, 0, n), ARDW_OK);
    assert_int_equal(parse_modified(8, 0, n), ARDW_PACK_INVALID);  /* count 0 */
    assert_int_equal(parse_modified(8, 1, n), ARDW_PACK_INVALID);  /* one entry: bytes left */
    assert_int_equal(parse_modified(8, 3, n), ARDW_PACK_INVALID);  /* three: the third is missing */
    assert_int_equal(parse_modified(9, 1, n), ARDW_PACK_INVALID);  /* count 258 */
    assert_int_equal(parse_modified(28, 5, n), ARDW_PACK_INVALID); /* size 5: shifts entry 2 */
    assert_int_equal(parse_modified(28, 3, n), ARDW_PACK_INVALID);
    assert_int_equal(parse_modified(31, 0x80, n), ARDW_PACK_INVALID);  /* size 2^31 + 4 */
    assert_int_equal(parse_modified(72, 0, n), ARDW_PACK_INVALID);     /* entry 2 of size 0 */
    assert_int_equal(parse_modified(72, 2, n), ARDW_PACK_INVALID);     /* beyond the end */
    assert_int_equal(parse_modified(99, 0, n + 1), ARDW_PACK_INVALID); /* a byte too many */
    assert_int_equal(parse_modified(99, 0, n - 1), ARDW_PACK_INVALID); /* a byte short */
    assert_int_equal(parse_modified(99, 0, 30), ARDW_PACK_INVALID);    /* entry header cut */
    assert_int_equal(parse_modified(99, 0, 23), ARDW_TRUNCATED);
    assert_int_equal(parse_modified(0, 'X', n), ARDW_MAGIC);
    assert_int_equal(parse_modified(4, 2, n), ARDW_VERSION);
    assert_int_equal(parse_modified(5, 5, n), ARDW_VERSION); /* packed and fragment */
    assert_int_equal(parse_modified(6, 56, n), ARDW_VERSION);
    assert_int_equal(parse_modified(10, 1, n), ARDW_VERSION); /* reserved bytes */
    assert_int_equal(parse_modified(13, 1, n), ARDW_VERSION);
    /* A packed datagram is no whole packet: the single-packet parser refuses it. */
    struct ardw_hdr h;
    struct ardw_expect e = {0, 4, 0};
    assert_int_equal(ardw_parse(known, n, &e, &h), ARDW_VERSION);
}

/* ---- three routes on one listening address ------------------------------------------------ */

static struct ardn_route routes[3];
static struct ardn_route *sorted[3], *touched[3];
static struct ardn_input input;
static uint8_t bufs[3][SIZE], reasm[3][SIZE];
static struct ard_field fields[8];
static size_t nfields;
static struct sockaddr_storage peer;

static int setup(void **state)
{
    (void)state;
    assert_int_equal(ard_type_parse(TYPE, fields, 8, &nfields, NULL), 0);
    for (int i = 0; i < 3; i++) {
        struct ardn_route *r = &routes[i];
        ardn_route_init(r);
        snprintf(r->cfg.name, sizeof r->cfg.name, "r%d", i);
        r->size = SIZE;
        snprintf(r->type, sizeof r->type, "%s", TYPE);
        r->fields = fields;
        r->nfields = nfields;
        r->type_hash = ard_type_hash(TYPE);
        r->conn_id = 100u + (uint32_t)i;
        r->buf = bufs[i];
        r->reasm.data = reasm[i];
        r->reasm.cap = SIZE;
        assert_int_equal(ardn_route_option(r, "from", "10.77.0.11"), 0);
        sorted[i] = r;
    }
    memset(&input, 0, sizeof input);
    input.routes = sorted;
    input.nroutes = 3;
    input.touched = touched;
    struct sockaddr_in *p = (struct sockaddr_in *)&peer;
    p->sin_family = AF_INET;
    p->sin_addr.s_addr = inet_addr("10.77.0.11");
    return 0;
}

static uint64_t drops(const struct ardn_route *r, enum ardw_cause c)
{
    return atomic_load(&r->cnt.drop[c]);
}

/* Take one datagram, then end the batch as the receiving thread does. */
static void feed(const uint8_t *d, size_t len)
{
    input.ntouched = 0;
    for (int i = 0; i < 3; i++)
        routes[i].fresh = false;
    ardn_input_datagram(&input, d, len, &peer, 1000);
}

/* A packed datagram, epoch 7, of (conn id, seq) pairs; payload byte i of an entry is
 * seq + i. */
static size_t packed(uint8_t *d, const uint32_t *ids, const uint64_t *seqs, int n, uint32_t size,
                     uint64_t hash)
{
    size_t len = ardw_pack_begin(d, 7);
    for (int k = 0; k < n; k++) {
        uint8_t p[64];
        for (unsigned i = 0; i < size; i++)
            p[i] = (uint8_t)(seqs[k] + i);
        struct ardw_hdr h = {.conn_id = ids[k], .size = size, .seq = seqs[k], .type_hash = hash};
        len = ardw_pack_add(d, len, &h, p);
    }
    return len;
}

static void assert_holds(const struct ardn_route *r, uint64_t seq)
{
    uint8_t wire[SIZE], want[SIZE];
    for (unsigned i = 0; i < SIZE; i++)
        wire[i] = (uint8_t)(seq + i);
    ardw_payload_from_wire(want, wire, SIZE, fields, nfields);
    assert_memory_equal(r->buf, want, SIZE);
    assert_true(r->track.seq == seq);
}

static void test_each_entry_goes_to_its_route_and_is_checked_there(void **state)
{
    (void)state;
    uint8_t d[1024];
    uint64_t hash = ard_type_hash(TYPE);
    const uint32_t ids[3] = {102, 100, 101};
    const uint64_t s1[3] = {10, 20, 30};
    feed(d, packed(d, ids, s1, 3, SIZE, hash));
    assert_int_equal(input.ntouched, 3);
    assert_holds(&routes[2], 10);
    assert_holds(&routes[0], 20);
    assert_holds(&routes[1], 30);
    assert_int_equal(atomic_load(&routes[0].cnt.c[ARDN_C_PACKED]), 1);

    /* Route 0 gets an older packet, route 1 the same one again, route 2 a newer one: only
     * route 2 delivers; an unknown id is the input's drop. */
    const uint32_t ids2[4] = {100, 101, 102, 555};
    const uint64_t s2[4] = {19, 30, 11, 1};
    feed(d, packed(d, ids2, s2, 4, SIZE, hash));
    assert_int_equal(input.ntouched, 1);
    assert_ptr_equal(input.touched[0], &routes[2]);
    assert_holds(&routes[0], 20);
    assert_holds(&routes[1], 30);
    assert_holds(&routes[2], 11);
    assert_int_equal(drops(&routes[0], ARDW_OLD), 1);
    assert_int_equal(drops(&routes[1], ARDW_DUPLICATE), 1);
    assert_int_equal(atomic_load(&input.drop[ARDW_CONN]), 1);

    /* Another type or size in one entry: dropped on its route alone. */
    const uint64_t s3[2] = {21, 31};
    feed(d, packed(d, ids2, s3, 2, SIZE, hash ^ 1));
    assert_int_equal(drops(&routes[0], ARDW_TYPE), 1);
    assert_int_equal(drops(&routes[1], ARDW_TYPE), 1);
    assert_holds(&routes[0], 20);
    size_t len = ardw_pack_begin(d, 7);
    uint8_t p[SIZE + 8] = {0};
    struct ardw_hdr h = {.conn_id = 100, .size = SIZE + 8, .seq = 22, .type_hash = hash};
    len = ardw_pack_add(d, len, &h, p);
    h = (struct ardw_hdr){.conn_id = 101, .size = SIZE, .seq = 32, .type_hash = hash};
    for (unsigned i = 0; i < SIZE; i++)
        p[i] = (uint8_t)(32 + i);
    len = ardw_pack_add(d, len, &h, p);
    feed(d, len);
    assert_int_equal(drops(&routes[0], ARDW_SIZE), 1);
    assert_holds(&routes[0], 20);
    assert_holds(&routes[1], 32);

    /* From another address: every entry is drop_peer. */
    struct sockaddr_in *sp = (struct sockaddr_in *)&peer;
    sp->sin_addr.s_addr = inet_addr("10.77.0.99");
    const uint64_t s5[3] = {40, 40, 40};
    feed(d, packed(d, ids, s5, 3, SIZE, hash));
    assert_int_equal(input.ntouched, 0);
    for (int i = 0; i < 3; i++)
        assert_int_equal(drops(&routes[i], ARDW_PEER), 1);
    sp->sin_addr.s_addr = inet_addr("10.77.0.11");
}

static void test_a_damaged_packed_datagram_delivers_nothing(void **state)
{
    (void)state;
    uint8_t d[1024];
    uint64_t hash = ard_type_hash(TYPE);
    const uint32_t ids[3] = {100, 101, 102};
    const uint64_t s[3] = {50, 50, 50};
    size_t len = packed(d, ids, s, 3, SIZE, hash);
    /* Every single-byte change of the framing (count, sizes) and every cut is refused whole. */
    const size_t framing[] = {8, 9, 28, 29, 30, 31, 24 + 64 + 4, 24 + 64 + 7};
    for (size_t k = 0; k < sizeof framing / sizeof framing[0]; k++)
        for (unsigned v = 1; v < 256; v <<= 1) {
            uint8_t x[1024];
            memcpy(x, d, len);
            x[framing[k]] ^= (uint8_t)v;
            feed(x, len);
            assert_int_equal(input.ntouched, 0);
        }
    for (size_t cut = 1; cut < len; cut++) {
        feed(d, cut);
        assert_int_equal(input.ntouched, 0);
    }
    for (int i = 0; i < 3; i++)
        assert_false(routes[i].track.have);
    assert_true(atomic_load(&input.drop[ARDW_PACK_INVALID]) > 0);
    feed(d, len); /* and the intact one still goes through */
    assert_int_equal(input.ntouched, 3);
}

static void test_a_descriptor_that_changes_a_live_type_is_refused_and_counted(void **state)
{
    (void)state;
    uint8_t d[ARDW_HDR_SIZE + ARD_MAX_TYPE];
    const char *other = "u64 u64 i64";
    struct ardw_hdr h = {.conn_id = 101, .size = 24, .epoch = 7, .type_hash = ard_type_hash(other)};
    size_t len = ardw_put_desc(d, &h, other);
    feed(d, len);
    assert_int_equal(drops(&routes[1], ARDW_TYPE), 1);
    assert_string_equal(routes[1].type, TYPE); /* never applied */
    assert_true(routes[1].type_hash == ard_type_hash(TYPE));
    /* its own descriptor is no drop */
    h.type_hash = ard_type_hash("u32 f64 u16");
    len = ardw_put_desc(d, &h, "u32 f64 u16");
    feed(d, len);
    assert_int_equal(drops(&routes[1], ARDW_TYPE), 1);
    /* a whole packet of an unknown id, and a bad one, are the input's drops */
    struct ardw_hdr w = {.conn_id = 999, .size = 24, .epoch = 7, .seq = 1};
    uint8_t p[ARDW_HDR_SIZE + 24] = {0};
    ardw_put_hdr(p, &w);
    feed(p, sizeof p);
    assert_int_equal(atomic_load(&input.drop[ARDW_CONN]), 1);
    p[0] = 'X';
    feed(p, sizeof p);
    assert_int_equal(atomic_load(&input.drop[ARDW_MAGIC]), 1);
}

/* Fuzzer seeds for its shared mode (tests/ardnet/fuzz_datagram.c): mode byte 0x20 (0x30:
 * with a clock byte per record), then records [u16 length][datagram] for the connections
 * 0x00c0ffee + 0..2 of type "u32 f64 u16". */
static int write_corpus(const char *dir)
{
    uint64_t hash = ard_type_hash(TYPE);
    for (int timed = 0; timed < 2; timed++) {
        uint8_t seed[4096];
        size_t n = 0;
        seed[n++] = timed ? 0x30 : 0x20;
        for (int rec = 0; rec < 4; rec++) {
            uint8_t d[1024];
            const uint32_t ids[3] = {0x00c0ffeeu, 0x00c0ffefu, 0x00c0fff0u};
            const uint64_t seqs[3] = {(uint64_t)(10 + rec), (uint64_t)(20 - rec), 30};
            size_t len = packed(d, ids, seqs, rec == 3 ? 1 : 3, SIZE, hash);
            if (timed)
                seed[n++] = (uint8_t)(rec * 7);
            seed[n++] = (uint8_t)len;
            seed[n++] = (uint8_t)(len >> 8);
            memcpy(seed + n, d, len);
            n += len;
        }
        char path[4096];
        snprintf(path, sizeof path, "%s/packed_%d", dir, timed);
        FILE *f = fopen(path, "wb");
        if (!f || fwrite(seed, 1, n, f) != n || fclose(f) != 0)
            return 1;
    }
    return 0;
}

/* The receiving thread delivers by reference: a whole packet's payload stays in the receive
 * buffer (its route's wire points at it) until published, or converted into the route's buf
 * by ardn_input_settle before the buffer is reused; a reassembled packet is always copied
 * (the next fragment may overwrite the reassembly buffer). Newest wins either way. */
static void test_by_reference_until_settled(void **state)
{
    (void)state;
    uint64_t hash = ard_type_hash(TYPE);
    uint8_t d1[1024], d2[1024], d3[ARDW_HDR_SIZE + SIZE], f[2][ARDW_FRAG_HDR_SIZE + SIZE / 2];
    input.by_reference = true;
    for (int i = 0; i < 3; i++)
        memset(bufs[i], 0x5a, SIZE);
    input.ntouched = 0;
    const uint32_t ids[2] = {100, 101};
    const uint64_t s1[2] = {10, 20}, s2[1] = {11};
    ardn_input_datagram(&input, d1, packed(d1, ids, s1, 2, SIZE, hash), &peer, 1000);
    /* A whole datagram for route 102, in the same batch. */
    struct ardw_hdr h = {.conn_id = 102, .size = SIZE, .epoch = 7, .seq = 30, .type_hash = hash};
    ardw_put_hdr(d3, &h);
    for (unsigned i = 0; i < SIZE; i++)
        d3[ARDW_HDR_SIZE + i] = (uint8_t)(30 + i);
    ardn_input_datagram(&input, d3, sizeof d3, &peer, 1000);
    /* Route 100 again, newer, from another buffer: it points there now. */
    ardn_input_datagram(&input, d2, packed(d2, ids, s2, 1, SIZE, hash), &peer, 1000);
    assert_int_equal(input.ntouched, 3);
    assert_true(routes[0].wire > d2 && routes[0].wire < d2 + sizeof d2);
    assert_true(routes[1].wire > d1 && routes[1].wire < d1 + sizeof d1);
    assert_ptr_equal(routes[2].wire, d3 + ARDW_HDR_SIZE);
    assert_int_equal(atomic_load(&routes[0].cnt.c[ARDN_C_SUPERSEDED]), 1);
    for (int i = 0; i < 3; i++)
        for (unsigned k = 0; k < SIZE; k++)
            assert_int_equal(bufs[i][k], 0x5a); /* nothing copied yet */
    ardn_input_settle(&input);
    for (int i = 0; i < 3; i++)
        assert_null(routes[i].wire);
    assert_holds(&routes[0], 11);
    assert_holds(&routes[1], 20);
    assert_holds(&routes[2], 30);

    /* A packet of two fragments for route 101: copied into buf when complete. */
    input.ntouched = 0;
    routes[1].fresh = false;
    memset(bufs[1], 0x5a, SIZE);
    for (uint16_t k = 0; k < 2; k++) {
        struct ardw_hdr fh = {.conn_id = 101,
                              .size = SIZE,
                              .epoch = 7,
                              .seq = 21,
                              .type_hash = hash,
                              .frag_index = k,
                              .frag_count = 2,
                              .frag_off = k * (SIZE / 2)};
        ardw_put_hdr(f[k], &fh);
        for (unsigned i = 0; i < SIZE / 2; i++)
            f[k][ARDW_FRAG_HDR_SIZE + i] = (uint8_t)(21 + k * (SIZE / 2) + i);
        ardn_input_datagram(&input, f[k], sizeof f[k], &peer, 1000);
    }
    assert_int_equal(input.ntouched, 1);
    assert_null(routes[1].wire);
    assert_holds(&routes[1], 21);
    input.by_reference = false;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--write-corpus") == 0)
        return write_corpus(argv[2]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_packed_datagram_has_the_documented_bytes),
        cmocka_unit_test(test_framing_that_does_not_fill_the_datagram_is_refused_whole),
        cmocka_unit_test_setup(test_each_entry_goes_to_its_route_and_is_checked_there, setup),
        cmocka_unit_test_setup(test_a_damaged_packed_datagram_delivers_nothing, setup),
        cmocka_unit_test_setup(test_a_descriptor_that_changes_a_live_type_is_refused_and_counted,
                               setup),
        cmocka_unit_test_setup(test_by_reference_until_settled, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
