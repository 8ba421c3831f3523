/* test_auto_wire.c - unit tests of src/ardnet/auto_wire.c: the catalog announcement, exact
 * bytes both ways and every refusal.
 *
 *   test_auto_wire --write-corpus DIR   write seeds for the announcement fuzzer
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "auto_wire.h"

static uint8_t buf[ARDC_MAX_DGRAM];
static struct ardc_entry rx[ARDC_MAX_ENTRIES];

static const struct ardc_msg msg = {
    .host_id = 0x1122334455667788ull, .domain = 0xa1a2a3a4u, .seq = 0x01020304u, .host = "hostA"};

static size_t two_entries(void)
{
    struct ardc_entry has = {
        .kind = ARDC_HAS, .order = ARDC_LITTLE, .size = 16, .name = "arm.state", .type = "u64 u64"};
    struct ardc_entry want = {
        .kind = ARDC_WANT, .order = ARDC_BIG, .port = 0x1234, .size = 3, .name = "x", .type = ""};
    size_t len = ardc_put_hdr(buf, &msg);
    len = ardc_put_entry(buf, len, &has);
    return ardc_put_entry(buf, len, &want);
}

static void test_announcement_has_the_documented_bytes(void **state)
{
    (void)state;
    size_t len = two_entries();
    static const uint8_t hdr[ARDC_HDR_SIZE] = {
        'A',  'R',  'D',  'C',  0x01, 0x00, 0x20, 0x00, /* magic version flags hlen */
        0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, /* host id */
        0xa4, 0xa3, 0xa2, 0xa1, 0x04, 0x03, 0x02, 0x01, /* domain, seq */
        0x00, 0x00, 0x01, 0x00, 0x02, 0x00, 0x05, 0x00, /* part, nparts, count, host len */
    };
    assert_memory_equal(buf, hdr, sizeof hdr);
    assert_memory_equal(buf + 32, "hostA", 5);
    static const uint8_t e1[12] = {1, 0, 0, 0, 16, 0, 0, 0, 9, 0, 7, 0};
    assert_memory_equal(buf + 37, e1, sizeof e1);
    assert_memory_equal(buf + 49, "arm.stateu64 u64", 16);
    static const uint8_t e2[12] = {2, 1, 0x34, 0x12, 3, 0, 0, 0, 1, 0, 0, 0};
    assert_memory_equal(buf + 65, e2, sizeof e2);
    assert_int_equal(buf[77], 'x');
    assert_int_equal(len, 78);

    ardc_set_part(buf, 2, 3);
    struct ardc_msg m;
    assert_int_equal(ardc_parse(buf, len, &m, rx, ARDC_MAX_ENTRIES), ARDC_OK);
    assert_int_equal(m.host_id, msg.host_id);
    assert_int_equal(m.domain, msg.domain);
    assert_int_equal(m.seq, msg.seq);
    assert_int_equal(m.part, 2);
    assert_int_equal(m.nparts, 3);
    assert_int_equal(m.count, 2);
    assert_string_equal(m.host, "hostA");
    assert_int_equal(rx[0].kind, ARDC_HAS);
    assert_int_equal(rx[0].size, 16);
    assert_string_equal(rx[0].name, "arm.state");
    assert_string_equal(rx[0].type, "u64 u64");
    assert_int_equal(rx[1].kind, ARDC_WANT);
    assert_int_equal(rx[1].order, ARDC_BIG);
    assert_int_equal(rx[1].port, 0x1234);
    assert_string_equal(rx[1].type, "");
    assert_int_equal(ardc_entry_len(&rx[0]), 28);
}

/* Change the byte at off of a valid two-entry announcement to v: the cause expected. */
static enum ardc_cause with_byte(size_t off, uint8_t v)
{
    size_t len = two_entries();
    buf[off] = v;
    struct ardc_msg m;
    return ardc_parse(buf, len, &m, rx, ARDC_MAX_ENTRIES);
}

static void test_every_field_is_checked(void **state)
{
    (void)state;
    assert_int_equal(with_byte(0, 'X'), ARDC_MAGIC);
    assert_int_equal(with_byte(4, 2), ARDC_VERSION);
    assert_int_equal(with_byte(5, 1), ARDC_VERSION);
    assert_int_equal(with_byte(6, 33), ARDC_VERSION);
    assert_int_equal(with_byte(31, 1), ARDC_VERSION);
    assert_int_equal(with_byte(24, 1), ARDC_PARTS); /* part 1 of 1 */
    assert_int_equal(with_byte(26, 0), ARDC_PARTS); /* 0 parts */
    assert_int_equal(with_byte(26, ARDC_MAX_PARTS + 1), ARDC_PARTS);
    assert_int_equal(with_byte(28, 3), ARDC_TRUNCATED); /* three entries announced */
    assert_int_equal(with_byte(28, 1), ARDC_OVERSIZED); /* bytes after the last entry */
    assert_int_equal(with_byte(30, 0), ARDC_HOST);
    assert_int_equal(with_byte(30, 64), ARDC_HOST);
    assert_int_equal(with_byte(33, ' '), ARDC_HOST);
    assert_int_equal(with_byte(37, 3), ARDC_ENTRY);          /* kind */
    assert_int_equal(with_byte(38, 2), ARDC_ENTRY);          /* order */
    assert_int_equal(with_byte(39, 1), ARDC_ENTRY);          /* port of a has */
    assert_int_equal(with_byte(41, 0), ARDC_ENTRY);          /* size 0x00000010 -> 0 */
    assert_int_equal(with_byte(44, 4), ARDC_ENTRY);          /* size > 64 MiB */
    assert_int_equal(with_byte(46, 1), ARDC_ENTRY);          /* reserved */
    assert_int_equal(with_byte(45, 0), ARDC_NAME);           /* name length 0 */
    assert_int_equal(with_byte(45, 64), ARDC_NAME);          /* name length > 63 */
    assert_int_equal(with_byte(49, '/'), ARDC_NAME);         /* "/rm.state" */
    assert_int_equal(with_byte(50, 0), ARDC_NAME);           /* NUL inside */
    assert_int_equal(with_byte(58, 'Q'), ARDC_TYPE);         /* "Q64 u64" */
    assert_int_equal(with_byte(59, '3'), ARDC_TYPE);         /* "u34 u64": not a type */
    assert_int_equal(with_byte(41, 24), ARDC_TYPE);          /* "u64 u64" is not 24 bytes */
    assert_int_equal(with_byte(65 + 2, 0), ARDC_OK);         /* port 0x1200 */
    assert_int_equal(with_byte(65 + 10, 1), ARDC_TRUNCATED); /* type beyond the end */
    assert_int_equal(with_byte(8, 0), ARDC_OK);
    /* a want without a port */
    size_t len = two_entries();
    buf[67] = buf[68] = 0;
    struct ardc_msg m;
    assert_int_equal(ardc_parse(buf, len, &m, rx, ARDC_MAX_ENTRIES), ARDC_ENTRY);
    /* host id 0 */
    len = two_entries();
    memset(buf + 8, 0, 8);
    assert_int_equal(ardc_parse(buf, len, &m, rx, ARDC_MAX_ENTRIES), ARDC_PARTS);
    /* a non-canonical type ("u64  u64") */
    struct ardc_entry e = {.kind = ARDC_HAS, .size = 16, .name = "a", .type = "u64  u64"};
    len = ardc_put_entry(buf, ardc_put_hdr(buf, &msg), &e);
    assert_int_equal(ardc_parse(buf, len, &m, rx, ARDC_MAX_ENTRIES), ARDC_TYPE);
    /* more entries than the caller has room for */
    len = two_entries();
    assert_int_equal(ardc_parse(buf, len, &m, rx, 1), ARDC_OVERSIZED);
}

static void test_every_cut_is_refused(void **state)
{
    (void)state;
    size_t len = two_entries();
    struct ardc_msg m;
    for (size_t cut = 0; cut < len; cut++) {
        enum ardc_cause c = ardc_parse(buf, cut, &m, rx, ARDC_MAX_ENTRIES);
        assert_int_not_equal(c, ARDC_OK);
    }
    uint8_t big[ARDC_MAX_DGRAM + 8];
    memcpy(big, buf, len);
    assert_int_equal(ardc_parse(big, ARDC_MAX_DGRAM + 1, &m, rx, ARDC_MAX_ENTRIES), ARDC_OVERSIZED);
}

static void test_domain_hash_and_names(void **state)
{
    (void)state;
    assert_int_equal(ardc_domain_hash(""), 2166136261u);
    assert_int_equal(ardc_domain_hash("a"), 0xe40c292cu); /* FNV-1a 32 */
    assert_int_not_equal(ardc_domain_hash("robot1"), ardc_domain_hash("robot2"));
    for (int c = 0; c < ARDC_NCAUSES; c++)
        assert_string_not_equal(ardc_cause_name((enum ardc_cause)c), "?");
}

static int write_corpus(const char *dir)
{
    char path[1024];
    size_t len = two_entries();
    snprintf(path, sizeof path, "%s/auto-two", dir);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(buf, 1, len, f) != len || fclose(f) != 0)
        return 1;
    struct ardc_entry e = {
        .kind = ARDC_HAS, .size = 1036, .name = "arm.state", .type = "u64 u64 i64 u32[250]"};
    len = ardc_put_entry(buf, ardc_put_hdr(buf, &msg), &e);
    snprintf(path, sizeof path, "%s/auto-one", dir);
    f = fopen(path, "wb");
    if (!f || fwrite(buf, 1, len, f) != len || fclose(f) != 0)
        return 1;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--write-corpus") == 0)
        return write_corpus(argv[2]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_announcement_has_the_documented_bytes),
        cmocka_unit_test(test_every_field_is_checked),
        cmocka_unit_test(test_every_cut_is_refused),
        cmocka_unit_test(test_domain_hash_and_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
