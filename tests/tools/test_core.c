/*
 * test_core.c - the shared core of the ard subcommands (src/tools/core.c, write.c): field
 * paths against named and unnamed fields, values parsed into every basic type with range
 * checks, printing that reads back exactly, assignments to elements and whole arrays, the
 * other host read from the name of an `ardnet --auto` port.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "ard.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static struct ardt_type t;

static int setup(void **state)
{
    (void)state;
    ardt_g.domain = "default";
    return ardt_type_init(&t, "q:f64[3] u8 tick:u32 i64 f32[2] s:i8", 56) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    ardt_type_free(&t);
    return 0;
}

static char *put(const struct ard_field *f, const void *pkt, uint32_t idx, bool json)
{
    static char buf[64];
    FILE *m = fmemopen(buf, sizeof buf, "w");
    ardt_put_value(m, f, pkt, idx, json);
    fclose(m);
    return buf;
}

static void test_paths_by_name_index_and_position(void **state)
{
    (void)state;
    struct ardt_sel s;
    assert_int_equal(ardt_sel_parse(&t, "q", &s), 0);
    assert_int_equal(s.field, 0);
    assert_int_equal(s.count, 3);
    assert_true(s.whole);
    assert_int_equal(ardt_sel_parse(&t, "q[2]", &s), 0);
    assert_int_equal(s.first, 2);
    assert_int_equal(s.count, 1);
    assert_false(s.whole);
    assert_int_equal(ardt_sel_parse(&t, "f1", &s), 0); /* unnamed field 1 */
    assert_int_equal(s.field, 1);
    assert_int_equal(ardt_sel_parse(&t, "f4[1]", &s), 0);
    assert_int_equal(s.field, 4);
    assert_int_equal(s.first, 1);
    assert_int_equal(ardt_sel_parse(&t, "tick", &s), 0);
    assert_int_equal(s.field, 2);
    /* A named field is not reachable by its position name. */
    const char *bad[] = {"f0", "q[3]", "q[", "q[1]x", "q[-1]", "q[]", "", "qq", "tick[0", "f7"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (ardt_sel_parse(&t, bad[i], &s) != ARD_EOPTION)
            fail_msg("path '%s' accepted", bad[i]);
    char b[24];
    assert_string_equal(ardt_field_name(&t, 3, b, sizeof b), "f3");
    assert_string_equal(ardt_field_name(&t, 5, b, sizeof b), "s");
}

static void test_values_checked_against_their_type(void **state)
{
    (void)state;
    uint8_t pkt[56] = {0};
    const struct ard_field *q = &t.fields[0], *u8 = &t.fields[1], *tick = &t.fields[2],
                           *i64 = &t.fields[3], *f32 = &t.fields[4], *s = &t.fields[5];
    assert_int_equal(ardt_set_text(u8, pkt, 0, "f1", "255"), 0);
    assert_string_equal(put(u8, pkt, 0, false), "255");
    assert_int_equal(ardt_set_text(u8, pkt, 0, "f1", "256"), ARD_EOPTION);
    /* A helper fails with the detail (the subcommand prints it), naming the path and value. */
    assert_string_equal(ard_errdetail(), "f1=256: out of range for u8 (0..255)");
    assert_int_equal(ardt_set_text(u8, pkt, 0, "f1", "-1"), ARD_EOPTION);
    assert_int_equal(ardt_set_text(u8, pkt, 0, "f1", "0x10"), 0);
    assert_string_equal(put(u8, pkt, 0, false), "16");
    assert_int_equal(ardt_set_text(tick, pkt, 0, "tick", "4294967295"), 0);
    assert_string_equal(put(tick, pkt, 0, false), "4294967295");
    assert_int_equal(ardt_set_text(tick, pkt, 0, "tick", "1.5"), ARD_EOPTION);
    assert_int_equal(ardt_set_text(tick, pkt, 0, "tick", " 1"), ARD_EOPTION);
    assert_int_equal(ardt_set_text(tick, pkt, 0, "tick", ""), ARD_EOPTION);
    assert_int_equal(ardt_set_text(i64, pkt, 0, "f3", "-9223372036854775808"), 0);
    assert_string_equal(put(i64, pkt, 0, false), "-9223372036854775808");
    assert_int_equal(ardt_set_text(i64, pkt, 0, "f3", "9223372036854775807"), 0);
    assert_string_equal(put(i64, pkt, 0, false), "9223372036854775807");
    assert_int_equal(ardt_set_text(s, pkt, 0, "s", "-128"), 0);
    assert_int_equal(ardt_set_text(s, pkt, 0, "s", "-129"), ARD_EOPTION);
    assert_string_equal(put(s, pkt, 0, false), "-128");
    /* Floats: shortest text that reads back; NaN/inf as text, null in JSON. */
    assert_int_equal(ardt_set_text(q, pkt, 1, "q[1]", "0.1"), 0);
    assert_string_equal(put(q, pkt, 1, false), "0.1");
    assert_int_equal(ardt_set_text(q, pkt, 2, "q[2]", "1e-300"), 0);
    assert_true(strtod(put(q, pkt, 2, false), NULL) == 1e-300);
    assert_int_equal(ardt_set_text(f32, pkt, 1, "f4[1]", "0.1"), 0);
    assert_string_equal(put(f32, pkt, 1, false), "0.1");
    assert_int_equal(ardt_set_text(f32, pkt, 1, "f4[1]", "1e39"), ARD_EOPTION);
    /* beyond the range of the type: refused, never written as inf (f64 as f32) */
    assert_int_equal(ardt_set_text(f32, pkt, 1, "f4[1]", "1e400"), ARD_EOPTION);
    assert_int_equal(ardt_set_text(q, pkt, 1, "q[1]", "1e400"), ARD_EOPTION);
    assert_int_equal(ardt_set_text(q, pkt, 1, "q[1]", "-1e400"), ARD_EOPTION);
    assert_string_equal(put(q, pkt, 1, false), "0.1");
    assert_int_equal(ardt_set_text(q, pkt, 1, "q[1]", "1.7976931348623157e308"), 0);
    assert_int_equal(ardt_set_text(q, pkt, 1, "q[1]", "-inf"), 0);
    assert_string_equal(put(q, pkt, 1, false), "-inf");
    assert_int_equal(ardt_set_text(q, pkt, 1, "q[1]", "1e-400"), 0); /* rounds to 0 */
    assert_string_equal(put(q, pkt, 1, false), "0");
    /* integers: decimal or 0x hex, never octal */
    assert_int_equal(ardt_set_text(u8, pkt, 0, "f1", "010"), 0);
    assert_string_equal(put(u8, pkt, 0, false), "10");
    assert_int_equal(ardt_set_text(s, pkt, 0, "s", "-010"), 0);
    assert_string_equal(put(s, pkt, 0, false), "-10");
    assert_int_equal(ardt_set_text(s, pkt, 0, "s", "-0x10"), 0);
    assert_string_equal(put(s, pkt, 0, false), "-16");
    assert_int_equal(ardt_set_text(u8, pkt, 0, "f1", "09"), 0);
    assert_string_equal(put(u8, pkt, 0, false), "9");
    assert_int_equal(ardt_set_text(q, pkt, 0, "q[0]", "nan"), 0);
    assert_string_equal(put(q, pkt, 0, false), "nan");
    assert_string_equal(put(q, pkt, 0, true), "null");
    assert_int_equal(ardt_set_text(q, pkt, 0, "q[0]", "abc"), ARD_EOPTION);
    /* Doubles into integers: rounded and clamped (siggen). */
    ardt_set_f(u8, pkt, 0, 300.7);
    assert_string_equal(put(u8, pkt, 0, false), "255");
    ardt_set_f(s, pkt, 0, -3.6);
    assert_string_equal(put(s, pkt, 0, false), "-4");
    ardt_set_f(tick, pkt, 0, NAN);
    assert_string_equal(put(tick, pkt, 0, false), "0");
}

static void test_assign_elements_and_arrays(void **state)
{
    (void)state;
    uint8_t pkt[56] = {0};
    assert_int_equal(ardt_assign(&t, pkt, "q=2.5"), 0); /* every element */
    for (uint32_t k = 0; k < 3; k++)
        assert_true(ardt_get_f(&t.fields[0], pkt, k) == 2.5);
    assert_int_equal(ardt_assign(&t, pkt, "q=1,2,3"), 0);
    assert_true(ardt_get_f(&t.fields[0], pkt, 2) == 3);
    assert_int_equal(ardt_assign(&t, pkt, "q[1]=-7"), 0);
    assert_true(ardt_get_f(&t.fields[0], pkt, 1) == -7);
    assert_true(ardt_get_f(&t.fields[0], pkt, 0) == 1); /* others untouched */
    assert_int_equal(ardt_assign(&t, pkt, "q=1,2"), ARD_EOPTION);
    assert_string_equal(ard_errdetail(), "q=1,2: 2 values given, the field has 3 elements");
    assert_int_equal(ardt_assign(&t, pkt, "q=1,,3"), ARD_EOPTION);
    assert_int_equal(ardt_assign(&t, pkt, "q"), ARD_EOPTION);
    assert_int_equal(ardt_assign(&t, pkt, "=1"), ARD_EOPTION);
    assert_int_equal(ardt_assign(&t, pkt, "tick="), ARD_EOPTION);
    assert_int_equal(ardt_assign(&t, pkt, "f4=0.5,0.25"), 0);
    assert_true(ardt_get_f(&t.fields[4], pkt, 1) == 0.25);
}

static void test_stats_mean_and_spread(void **state)
{
    (void)state;
    struct ardt_stats s = {0};
    const double v[] = {2, 4, 4, 4, 5, 5, 7, 9};
    for (size_t i = 0; i < 8; i++)
        ardt_stats_add(&s, v[i] + 1e9); /* large offset: Welford stays exact enough */
    assert_true(fabs(s.mean - (5 + 1e9)) < 1e-6);
    assert_true(fabs(ardt_stats_std(&s) - sqrt(32.0 / 7)) < 1e-6);
    assert_true(s.min == 2 + 1e9 && s.max == 9 + 1e9);
}
/* The one JSON string writer (ardc_json_str, through ardt_put_json_str): quotes, backslashes,
 * control bytes and DEL escaped, UTF-8 kept, bytes that are not UTF-8 as the text \xNN. */
static void test_json_strings(void **state)
{
    (void)state;
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"arm.state", "\"arm.state\""},
        {"a\"b\\c", "\"a\\\"b\\\\c\""},
        {"t\tn\n\x7f", "\"t\\u0009n\\u000a\\u007f\""},
        {"\xc3\xa9t\xc3\xa9", "\"\xc3\xa9t\xc3\xa9\""},
        {"x\xffy\xc3", "\"x\\\\xffy\\\\xc3\""},
        {"\xed\xa0\x80", "\"\\\\xed\\\\xa0\\\\x80\""}, /* a surrogate is no UTF-8 */
        {"", "\"\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *text = NULL;
        size_t len = 0;
        FILE *o = open_memstream(&text, &len);
        assert_non_null(o);
        ardt_put_json_str(o, cases[i].in);
        fclose(o);
        assert_string_equal(text, cases[i].out);
        free(text);
    }
    struct ardc_buf b = {0};
    for (int i = 0; i < 1000; i++)
        ardc_printf(&b, "%d,", i);
    assert_false(b.oom);
    assert_int_equal(b.len, strlen(b.s));
    assert_memory_equal(b.s + b.len - 4, "999,", 4);
    ardc_free(&b);
}

/* The ports of `ardnet --auto` name the other host: "auto-N-from-HOST" on a writer,
 * "auto-N-to-HOST" on a reader; any other port, or another program's, names none. */
static void test_auto_hosts(void **state)
{
    (void)state;
    static const struct {
        const char *program, *port;
        enum ard_dir dir;
        const char *host; /* NULL: none */
        bool to;
    } cases[] = {
        {"ardnet", "auto-3-from-hostA", ARD_OUT, "hostA", false},
        {"ardnet", "auto-12-to-robot-2.lan", ARD_IN, "robot-2.lan", true},
        {"ardnet", "auto-7-to-auto-1-from-x", ARD_IN, "auto-1-from-x", true},
        {"ardnet", "auto-3-from-hostA", ARD_IN, NULL, false}, /* a reader receives nothing */
        {"ardnet", "auto-3-to-hostA", ARD_OUT, NULL, false},
        {"ardnet", "auto-from-hostA", ARD_OUT, NULL, false}, /* no number */
        {"ardnet", "auto-3-from-", ARD_OUT, NULL, false},    /* no host */
        {"ardnet", "arm.state", ARD_OUT, NULL, false},
        {"arm_ctrl", "auto-3-from-hostA", ARD_OUT, NULL, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct ard_peer pe = {.dir = cases[i].dir};
        snprintf(pe.program, sizeof pe.program, "%s", cases[i].program);
        snprintf(pe.port, sizeof pe.port, "%s", cases[i].port);
        bool to = !cases[i].to;
        const char *h = ardt_auto_host(&pe, &to);
        if (!cases[i].host) {
            assert_null(h);
            continue;
        }
        assert_non_null(h);
        assert_string_equal(h, cases[i].host);
        assert_int_equal(to, cases[i].to);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_paths_by_name_index_and_position),
        cmocka_unit_test(test_values_checked_against_their_type),
        cmocka_unit_test(test_assign_elements_and_arrays),
        cmocka_unit_test(test_stats_mean_and_spread),
        cmocka_unit_test(test_json_strings),
        cmocka_unit_test(test_auto_hosts),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
