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
    struct ard_field f = {ARD_F64, 4, 0}; /* claims 32 bytes */
    uint8_t src[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, dst[12];
    ardw_payload_swap(dst, src, sizeof src, &f, 1);
    const uint8_t want[12] = {8, 7, 6, 5, 4, 3, 2, 1, 9, 10, 11, 12};
    assert_memory_equal(dst, want, sizeof want);
}

static void test_accept_drops_duplicates_and_older(void **state)
{
    (void)state;
    struct ardw_track t = {0};
    assert_int_equal(ardw_accept(&t, 100, 5), ARDW_OK);
    assert_int_equal(ardw_accept(&t, 100, 5), ARDW_DUPLICATE);
    assert_int_equal(ardw_accept(&t, 100, 4), ARDW_OLD);
    assert_int_equal(ardw_accept(&t, 100, 7), ARDW_OK);
    assert_int_equal(ardw_accept(&t, 100, 6), ARDW_OLD);
    assert_true(t.seq == 7);
}

static void test_accept_takes_a_new_epoch_and_refuses_an_old_one(void **state)
{
    (void)state;
    struct ardw_track t = {0};
    assert_int_equal(ardw_accept(&t, 100, 50), ARDW_OK);
    assert_int_equal(ardw_accept(&t, 200, 1), ARDW_OK); /* restarted sender */
    assert_int_equal(ardw_accept(&t, 100, 51), ARDW_OLD_EPOCH);
    assert_int_equal(ardw_accept(&t, 200, 2), ARDW_OK);
    /* restart re-sending the newest already delivered packet: dropped, then it goes on */
    assert_int_equal(ardw_accept(&t, 300, 2), ARDW_DUPLICATE);
    assert_int_equal(ardw_accept(&t, 300, 3), ARDW_OK);
    /* a recreated connection starts its sequence again */
    assert_int_equal(ardw_accept(&t, 400, 1), ARDW_OK);
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
        cmocka_unit_test(test_accept_takes_a_new_epoch_and_refuses_an_old_one),
        cmocka_unit_test(test_conn_id_is_stable_and_never_zero),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
