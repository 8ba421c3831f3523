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

static uint8_t buf[ARDA_MAX_DGRAM];
static struct arda_entry rx[ARDA_MAX_ENTRIES];

static const struct arda_msg msg = {
    .host_id = 0x1122334455667788ull, .domain = 0xa1a2a3a4u, .seq = 0x01020304u, .host = "hostA"};

static size_t two_entries(void)
{
    struct arda_entry has = {
        .kind = ARDA_HAS, .order = ARDA_LITTLE, .size = 16, .name = "arm.state", .type = "u64 u64"};
    struct arda_entry want = {
        .kind = ARDA_WANT, .order = ARDA_BIG, .port = 0x1234, .size = 3, .name = "x", .type = ""};
    size_t len = arda_put_hdr(buf, &msg);
    len = arda_put_entry(buf, len, &has);
    return arda_put_entry(buf, len, &want);
}

static void test_announcement_has_the_documented_bytes(void **state)
{
    (void)state;
    size_t len = two_entries();
    static const uint8_t hdr[ARDA_HDR_SIZE] = {
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

    arda_set_part(buf, 2, 3);
    struct arda_msg m;
    assert_int_equal(arda_parse(buf, len, &m, rx, ARDA_MAX_ENTRIES), ARDA_OK);
    assert_int_equal(m.host_id, msg.host_id);
    assert_int_equal(m.domain, msg.domain);
    assert_int_equal(m.seq, msg.seq);
    assert_int_equal(m.part, 2);
    assert_int_equal(m.nparts, 3);
    assert_int_equal(m.count, 2);
    assert_string_equal(m.host, "hostA");
    assert_int_equal(rx[0].kind, ARDA_HAS);
    assert_int_equal(rx[0].size, 16);
    assert_string_equal(rx[0].name, "arm.state");
    assert_string_equal(rx[0].type, "u64 u64");
    assert_int_equal(rx[1].kind, ARDA_WANT);
    assert_int_equal(rx[1].order, ARDA_BIG);
    assert_int_equal(rx[1].port, 0x1234);
    assert_string_equal(rx[1].type, "");
    assert_int_equal(arda_entry_len(&rx[0]), 28);
}

/* Change the byte at off of a valid two-entry announcement to v: the cause expected. */
static enum arda_cause with_byte(size_t off, uint8_t v)
{
    size_t len = two_entries();
    buf[off] = v;
    struct arda_msg m;
    return arda_parse(buf, len, &m, rx, ARDA_MAX_ENTRIES);
}

static void test_every_field_is_checked(void **state)
{
    (void)state;
    assert_int_equal(with_byte(0, 'X'), ARDA_MAGIC);
    assert_int_equal(with_byte(4, 2), ARDA_VERSION);
    assert_int_equal(with_byte(5, 1), ARDA_VERSION);
    assert_int_equal(with_byte(6, 33), ARDA_VERSION);
    assert_int_equal(with_byte(31, 1), ARDA_VERSION);
    assert_int_equal(with_byte(24, 1), ARDA_PARTS); /* part 1 of 1 */
    assert_int_equal(with_byte(26, 0), ARDA_PARTS); /* 0 parts */
    assert_int_equal(with_byte(26, ARDA_MAX_PARTS + 1), ARDA_PARTS);
    assert_int_equal(with_byte(28, 3), ARDA_TRUNCATED); /* three entries announced */
    assert_int_equal(with_byte(28, 1), ARDA_OVERSIZED); /* bytes after the last entry */
    assert_int_equal(with_byte(30, 0), ARDA_HOST);
    assert_int_equal(with_byte(30, 64), ARDA_HOST);
    assert_int_equal(with_byte(33, ' '), ARDA_HOST);
    assert_int_equal(with_byte(37, 3), ARDA_ENTRY);          /* kind */
    assert_int_equal(with_byte(38, 2), ARDA_ENTRY);          /* order */
    assert_int_equal(with_byte(39, 1), ARDA_ENTRY);          /* port of a has */
    assert_int_equal(with_byte(41, 0), ARDA_ENTRY);          /* size 0x00000010 -> 0 */
    assert_int_equal(with_byte(44, 4), ARDA_ENTRY);          /* size > 64 MiB */
    assert_int_equal(with_byte(46, 1), ARDA_ENTRY);          /* reserved */
    assert_int_equal(with_byte(45, 0), ARDA_NAME);           /* name length 0 */
    assert_int_equal(with_byte(45, 64), ARDA_NAME);          /* name length > 63 */
    assert_int_equal(with_byte(49, '/'), ARDA_NAME);         /* "/rm.state" */
    assert_int_equal(with_byte(50, 0), ARDA_NAME);           /* NUL inside */
    assert_int_equal(with_byte(58, 'Q'), ARDA_TYPE);         /* "Q64 u64" */
    assert_int_equal(with_byte(59, '3'), ARDA_TYPE);         /* "u34 u64": not a type */
    assert_int_equal(with_byte(41, 24), ARDA_TYPE);          /* "u64 u64" is not 24 bytes */
    assert_int_equal(with_byte(65 + 2, 0), ARDA_OK);         /* port 0x1200 */
    assert_int_equal(with_byte(65 + 10, 1), ARDA_TRUNCATED); /* type beyond the end */
    assert_int_equal(with_byte(8, 0), ARDA_OK);
    /* a want without a port */
    size_t len = two_entries();
    buf[67] = buf[68] = 0;
    struct arda_msg m;
    assert_int_equal(arda_parse(buf, len, &m, rx, ARDA_MAX_ENTRIES), ARDA_ENTRY);
    /* host id 0 */
    len = two_entries();
    memset(buf + 8, 0, 8);
    assert_int_equal(arda_parse(buf, len, &m, rx, ARDA_MAX_ENTRIES), ARDA_PARTS);
    /* a non-canonical type ("u64  u64") */
    struct arda_entry e = {.kind = ARDA_HAS, .size = 16, .name = "a", .type = "u64  u64"};
    len = arda_put_entry(buf, arda_put_hdr(buf, &msg), &e);
    assert_int_equal(arda_parse(buf, len, &m, rx, ARDA_MAX_ENTRIES), ARDA_TYPE);
    /* more entries than the caller has room for */
    len = two_entries();
    assert_int_equal(arda_parse(buf, len, &m, rx, 1), ARDA_OVERSIZED);
}

static void test_every_cut_is_refused(void **state)
{
    (void)state;
    size_t len = two_entries();
    struct arda_msg m;
    for (size_t cut = 0; cut < len; cut++) {
        enum arda_cause c = arda_parse(buf, cut, &m, rx, ARDA_MAX_ENTRIES);
        assert_int_not_equal(c, ARDA_OK);
    }
    uint8_t big[ARDA_MAX_DGRAM + 8];
    memcpy(big, buf, len);
    assert_int_equal(arda_parse(big, ARDA_MAX_DGRAM + 1, &m, rx, ARDA_MAX_ENTRIES), ARDA_OVERSIZED);
}

static void test_domain_hash_and_names(void **state)
{
    (void)state;
    assert_int_equal(arda_domain_hash(""), 2166136261u);
    assert_int_equal(arda_domain_hash("a"), 0xe40c292cu); /* FNV-1a 32 */
    assert_int_not_equal(arda_domain_hash("robot1"), arda_domain_hash("robot2"));
    for (int c = 0; c < ARDA_NCAUSES; c++)
        assert_string_not_equal(arda_cause_name((enum arda_cause)c), "?");
}

static int write_corpus(const char *dir)
{
    char path[1024];
    size_t len = two_entries();
    snprintf(path, sizeof path, "%s/auto-two", dir);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(buf, 1, len, f) != len || fclose(f) != 0)
        return 1;
    struct arda_entry e = {
        .kind = ARDA_HAS, .size = 1036, .name = "arm.state", .type = "u64 u64 i64 u32[250]"};
    len = arda_put_entry(buf, arda_put_hdr(buf, &msg), &e);
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
