/*
 * test_types.c - type descriptors (DESIGN §3): parser, natural-alignment layout checked
 * against the matching C structs, canonical form, hash, malformed descriptors rejected with
 * a detail pointing at the bad token, and the size check at ard_create. Named fields (DESIGN
 * §6): names parsed and kept in the canonical form, bad names rejected at their column, and
 * the layout alone deciding whether two sides of a connection match.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ardnet.h"
#include "testutil.h"

/* ---- layout equals the C struct ------------------------------------------------------- */

struct s1 {
    double a[7];
    double b[7];
    uint32_t c;
    uint8_t d[4];
};
struct s2 {
    uint8_t a;
    uint16_t b;
    uint8_t c;
    uint32_t d;
    uint8_t e;
    uint64_t f;
    uint8_t g;
};
struct s3 {
    int16_t a;
    uint8_t b;
};
struct s4 {
    uint8_t a[3];
};
struct s5 {
    float a;
    double b;
    int8_t c;
};
struct s6 {
    int32_t a[3];
    int64_t b;
    uint16_t c[5];
};
struct s7 {
    uint8_t a;
    float b[2];
    uint16_t c;
};
struct s8 {
    int8_t a;
    int64_t b;
};
struct s9 {
    uint16_t a;
    uint8_t b[3];
    uint32_t c;
};

struct layout_case {
    const char *desc;
    size_t size;
    size_t nfields;
    size_t offsets[8];
};

#define OFF(s, f) offsetof(struct s, f)

static void test_layout_matches_c_structs(void **state)
{
    (void)state;
    const struct layout_case cases[] = {
        {"f64[7] f64[7] u32 u8[4]",
         sizeof(struct s1),
         4,
         {OFF(s1, a), OFF(s1, b), OFF(s1, c), OFF(s1, d)}},
        {"u8 u16 u8 u32 u8 u64 u8",
         sizeof(struct s2),
         7,
         {OFF(s2, a), OFF(s2, b), OFF(s2, c), OFF(s2, d), OFF(s2, e), OFF(s2, f), OFF(s2, g)}},
        {"i16 u8", sizeof(struct s3), 2, {OFF(s3, a), OFF(s3, b)}},
        {"u8[3]", sizeof(struct s4), 1, {OFF(s4, a)}},
        {"f32 f64 i8", sizeof(struct s5), 3, {OFF(s5, a), OFF(s5, b), OFF(s5, c)}},
        {"i32[3] i64 u16[5]", sizeof(struct s6), 3, {OFF(s6, a), OFF(s6, b), OFF(s6, c)}},
        {"u8 f32[2] u16", sizeof(struct s7), 3, {OFF(s7, a), OFF(s7, b), OFF(s7, c)}},
        {"i8 i64", sizeof(struct s8), 2, {OFF(s8, a), OFF(s8, b)}},
        {"u16 u8[3] u32", sizeof(struct s9), 3, {OFF(s9, a), OFF(s9, b), OFF(s9, c)}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct layout_case *c = &cases[i];
        struct ard_field f[8];
        size_t n = 0, size = 0;
        int rc = ard_type_parse(c->desc, f, 8, &n, &size);
        if (rc != 0)
            fail_msg("'%s': rc %d: %s", c->desc, rc, ard_errdetail());
        if (size != c->size)
            fail_msg("'%s': size %zu, C struct has %zu", c->desc, size, c->size);
        assert_int_equal(n, c->nfields);
        for (size_t k = 0; k < n; k++)
            if (f[k].offset != c->offsets[k])
                fail_msg("'%s': field %zu at offset %u, C struct has it at %zu", c->desc, k,
                         f[k].offset, c->offsets[k]);
    }
}

static void test_parse_reports_kinds_and_counts(void **state)
{
    (void)state;
    struct ard_field f[10];
    size_t n = 0, size = 0;
    assert_int_equal(ard_type_parse("i8 u8 i16 u16 i32 u32 i64 u64 f32 f64[3]", f, 10, &n, &size),
                     0);
    assert_int_equal(n, 10);
    const enum ard_basic kinds[] = {ARD_I8,  ARD_U8,  ARD_I16, ARD_U16, ARD_I32,
                                    ARD_U32, ARD_I64, ARD_U64, ARD_F32, ARD_F64};
    for (size_t k = 0; k < 10; k++) {
        assert_int_equal(f[k].kind, kinds[k]);
        assert_int_equal(f[k].count, k == 9 ? 3 : 1);
    }
    /* 1+1+2+2+4+4 = 14 -> 16, +8+8 = 32, +4 = 36 -> 40, +24 = 64 */
    assert_int_equal(f[9].offset, 40);
    assert_int_equal(size, 64);
}

static void test_parse_accepts_spaces_tabs_commas(void **state)
{
    (void)state;
    const char *forms[] = {"u32 u8", "u32,u8", "u32\tu8", "  u32 ,\t u8  ", "u32, u8,"};
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        size_t n = 0, size = 0;
        int rc = ard_type_parse(forms[i], NULL, 0, &n, &size);
        if (rc != 0)
            fail_msg("'%s' rejected: %s", forms[i], ard_errdetail());
        assert_int_equal(n, 2);
        assert_int_equal(size, 8);
    }
}

static void test_parse_counts_beyond_max(void **state)
{
    (void)state;
    struct ard_field f[3];
    memset(f, 0xAA, sizeof f);
    size_t n = 0, size = 0;
    assert_int_equal(ard_type_parse("u8 u16 u32 u64", f, 2, &n, &size), 0);
    assert_int_equal(n, 4);
    assert_int_equal(size, 16);
    assert_int_equal(f[0].kind, ARD_U8);
    assert_int_equal(f[1].kind, ARD_U16);
    assert_int_equal(f[1].offset, 2);
    /* Only `max` fields written: the third entry is untouched. */
    assert_int_equal(f[2].count, 0xAAAAAAAAu);
    /* Count only. */
    n = 0;
    assert_int_equal(ard_type_parse("u8 u16 u32 u64", NULL, 0, &n, NULL), 0);
    assert_int_equal(n, 4);
}

static void test_basic_sizes_and_names(void **state)
{
    (void)state;
    const struct {
        enum ard_basic k;
        size_t size;
        const char *name;
    } b[] = {{ARD_I8, 1, "i8"},   {ARD_U8, 1, "u8"},   {ARD_I16, 2, "i16"}, {ARD_U16, 2, "u16"},
             {ARD_I32, 4, "i32"}, {ARD_U32, 4, "u32"}, {ARD_I64, 8, "i64"}, {ARD_U64, 8, "u64"},
             {ARD_F32, 4, "f32"}, {ARD_F64, 8, "f64"}};
    for (size_t i = 0; i < sizeof b / sizeof b[0]; i++) {
        assert_int_equal(ard_basic_size(b[i].k), b[i].size);
        assert_string_equal(ard_basic_name(b[i].k), b[i].name);
    }
    /* The descriptor's f32/f64 are the platform's float/double. */
    assert_int_equal(sizeof(float), 4);
    assert_int_equal(sizeof(double), 8);
}

/* ---- canonical form and hash ---------------------------------------------------------- */

static void test_normalize_gives_canonical_form(void **state)
{
    (void)state;
    const struct {
        const char *in, *out;
    } c[] = {
        {"u8", "u8"},
        {"  u8[1] ,\tf64[2]  ", "u8 f64[2]"},
        {"f64[7],f64[7],u32,u8[4]", "f64[7] f64[7] u32 u8[4]"},
        {"i32[01]", "i32"},
        {"u16[010]", "u16[10]"},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        char buf[64];
        int n = ard_type_normalize(c[i].in, buf, sizeof buf);
        if (n < 0)
            fail_msg("'%s' rejected: %s", c[i].in, ard_errdetail());
        assert_string_equal(buf, c[i].out);
        assert_int_equal(n, strlen(c[i].out));
    }
}

static void test_normalize_checks_buffer_size(void **state)
{
    (void)state;
    char buf[16];
    /* "u8 f64[2]" is 9 characters: needs 10 bytes. */
    assert_int_equal(ard_type_normalize("u8 f64[2]", buf, 10), 9);
    assert_string_equal(buf, "u8 f64[2]");
    assert_int_equal(ard_type_normalize("u8 f64[2]", buf, 9), ARD_EINVAL);
    assert_int_equal(ard_type_normalize("u8 f65", buf, sizeof buf), ARD_ETYPE);
    ASSERT_CONTAINS(ard_errdetail(), "'f65'");
}

/* The hash is part of the wire format: it must be FNV-1a 64 of the canonical text. */
static uint64_t fnv1a(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++) {
        h ^= (uint8_t)*s;
        h *= 0x100000001b3ull;
    }
    return h;
}

static void test_hash_is_fnv1a_of_canonical_form(void **state)
{
    (void)state;
    assert_int_equal(ard_type_hash(NULL), 0);
    assert_int_equal(ard_type_hash(""), 0);
    assert_int_equal(ard_type_hash("f64[7] f64[7] u32 u8[4]"), fnv1a("f64[7] f64[7] u32 u8[4]"));
    /* Pinned value: changing it breaks the wire between versions. */
    assert_int_equal(ard_type_hash("u8"), 0x08c48207b56753d8ull);
    assert_int_equal(fnv1a("u8"), 0x08c48207b56753d8ull);
    /* Spelling does not matter, the layout does. */
    assert_int_equal(ard_type_hash(" u8[1],\tf64[2] "), ard_type_hash("u8 f64[2]"));
    assert_true(ard_type_hash("u8 f64[2]") != ard_type_hash("u8 f64[3]"));
    assert_true(ard_type_hash("u64") != ard_type_hash("f64"));
    assert_true(ard_type_hash("u32 u8") != ard_type_hash("u8 u32"));
}

/* ---- malformed descriptors -------------------------------------------------------------- */

struct bad_case {
    const char *desc;
    int column;        /* 1-based column the detail must name; 0: no column expected */
    const char *token; /* text the detail must quote, or NULL */
};

static void check_bad(const struct bad_case *c)
{
    size_t n = 12345, size = 12345;
    int rc = ard_type_parse(c->desc, NULL, 0, &n, &size);
    if (rc != ARD_ETYPE)
        fail_msg("'%s' accepted or wrong code: rc %d (size %zu)", c->desc, rc, size);
    const char *d = ard_errdetail();
    if (c->column > 0) {
        char col[32];
        snprintf(col, sizeof col, "column %d", c->column);
        ASSERT_CONTAINS(d, col);
    }
    if (c->token)
        ASSERT_CONTAINS(d, c->token);
    char buf[ARD_MAX_TYPE + 1];
    rc = ard_type_normalize(c->desc, buf, sizeof buf);
    if (rc != ARD_ETYPE)
        fail_msg("normalize('%s') gave %d, want ARD_ETYPE", c->desc, rc);
}

static void test_malformed_descriptors_rejected_at_bad_token(void **state)
{
    (void)state;
    const struct bad_case cases[] = {
        {"f64[7] f65", 8, "'f65'"},
        {"U8", 1, "'U8'"},
        {"u8 int u16", 4, "'int'"},
        {"u8;u16", 1, "u8;u16"},
        {"u8]", 1, "u8]"},
        {"u8 u16 [3]", 8, NULL},
        {"u8[]", 3, NULL},
        {"i32[-1]", 4, NULL},
        {"u8[x]", 3, NULL},
        {"f64[", 4, NULL},
        {"u8[3", 5, NULL},
        {"u8[3]x", 6, "'x'"},
        {"u8[3]u8", 6, "'u'"},
        {"u32 u8[0]", 8, NULL},
        {"u8[99999999999999999999]", 4, NULL},
        {"u64[8388609]", 0, NULL}, /* 64 MiB + 8: larger than ARD_MAX_PACKET */
        {"", 0, NULL},
        {" ,\t, ", 0, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_bad(&cases[i]);
}

static void test_parse_rejects_null(void **state)
{
    (void)state;
    assert_int_equal(ard_type_parse(NULL, NULL, 0, NULL, NULL), ARD_EINVAL);
}

static void test_largest_packet_accepted(void **state)
{
    (void)state;
    size_t size = 0;
    assert_int_equal(ard_type_parse("u64[8388608]", NULL, 0, NULL, &size), 0);
    assert_int_equal(size, ARD_MAX_PACKET);
}

/* ---- ard_create checks the descriptor against the declared size ------------------------- */

static void test_create_refuses_size_mismatch_naming_both(void **state)
{
    (void)state;
    ard_port *p = ard_create("pose", ARD_OUT, 12, "u64");
    assert_null(p);
    assert_int_equal(ard_lasterror(), ARD_ETYPE);
    const char *d = ard_errdetail();
    ASSERT_CONTAINS(d, "'pose'");
    ASSERT_CONTAINS(d, "12");
    ASSERT_CONTAINS(d, "8");
    ASSERT_CONTAINS(d, "u64");

    /* Padding counts: "u64 u8" is 16 bytes like its C struct, not 9. */
    p = ard_create("pose", ARD_IN, 9, "u64 u8");
    assert_null(p);
    assert_int_equal(ard_lasterror(), ARD_ETYPE);
    ASSERT_CONTAINS(ard_errdetail(), "16");
    ard_fini();
}

static void test_create_refuses_bad_descriptor_at_token(void **state)
{
    (void)state;
    ard_port *p = ard_create("cmd", ARD_IN, 8, "u32 u3");
    assert_null(p);
    assert_int_equal(ard_lasterror(), ARD_ETYPE);
    ASSERT_CONTAINS(ard_errdetail(), "'cmd'");
    ASSERT_CONTAINS(ard_errdetail(), "column 5");
    ASSERT_CONTAINS(ard_errdetail(), "'u3'");
    ard_fini();
}

static void test_create_stores_canonical_type(void **state)
{
    (void)state;
    ard_port *p = ard_create("joints", ARD_OUT, 64, " f64[7],u32 , u8[4] ");
    if (p == NULL)
        fail_msg("ard_create: %s", ard_errdetail());
    assert_string_equal(ard_port_type(p), "f64[7] u32 u8[4]");
    assert_int_equal(ard_port_size(p), 64);
    ard_port *q = ard_create("raw", ARD_IN, 5, NULL);
    assert_non_null(q);
    assert_string_equal(ard_port_type(q), "");
    ard_fini();
}

/* ---- named fields --------------------------------------------------------------------------- */

static void test_named_fields_parse_with_names_and_same_layout(void **state)
{
    (void)state;
    struct ard_field f[4], u[4];
    size_t n = 0, size = 0, un = 0, usize = 0;
    assert_int_equal(ard_type_parse("q:f64[7] dq:f64[7] tick:u32 flags:u8[4]", f, 4, &n, &size), 0);
    assert_int_equal(ard_type_parse("f64[7] f64[7] u32 u8[4]", u, 4, &un, &usize), 0);
    assert_int_equal(n, 4);
    assert_int_equal(size, sizeof(struct s1));
    assert_int_equal(size, usize);
    const char *names[] = {"q", "dq", "tick", "flags"};
    for (size_t k = 0; k < 4; k++) {
        assert_string_equal(f[k].name, names[k]);
        assert_string_equal(u[k].name, "");
        assert_int_equal(f[k].kind, u[k].kind);
        assert_int_equal(f[k].count, u[k].count);
        assert_int_equal(f[k].offset, u[k].offset);
    }
}

static void test_names_are_optional_per_field(void **state)
{
    (void)state;
    struct ard_field f[3];
    size_t n = 0;
    assert_int_equal(ard_type_parse("u8 speed:f32 u16", f, 3, &n, NULL), 0);
    assert_int_equal(n, 3);
    assert_string_equal(f[0].name, "");
    assert_string_equal(f[1].name, "speed");
    assert_int_equal(f[1].offset, 4);
    assert_string_equal(f[2].name, "");
    /* A field may carry the name tools would give it anyway. */
    assert_int_equal(ard_type_parse("f0:u8 f1:u8 x:u8 f3:u8", NULL, 0, &n, NULL), 0);
    assert_int_equal(ard_type_parse("_a9_Z:u8", f, 1, &n, NULL), 0);
    assert_string_equal(f[0].name, "_a9_Z");
    /* The longest name fits in the struct, terminated. */
    char desc[64];
    snprintf(desc, sizeof desc, "%.*s:u8", ARD_MAX_FIELD_NAME,
             "abcdefghijklmnopqrstuvwxyzabcdefghij");
    assert_int_equal(ard_type_parse(desc, f, 1, &n, NULL), 0);
    assert_int_equal(strlen(f[0].name), ARD_MAX_FIELD_NAME);
}

static void test_normalize_keeps_names(void **state)
{
    (void)state;
    const struct {
        const char *in, *out;
    } c[] = {
        {"q:f64[7], dq:f64[7],tick:u32[1]\tflags:u8[4]", "q:f64[7] dq:f64[7] tick:u32 flags:u8[4]"},
        {" u8  x:i16[02] ", "u8 x:i16[2]"},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        char buf[64];
        int n = ard_type_normalize(c[i].in, buf, sizeof buf);
        if (n < 0)
            fail_msg("'%s' rejected: %s", c[i].in, ard_errdetail());
        assert_string_equal(buf, c[i].out);
        assert_int_equal(n, strlen(c[i].out));
    }
    /* The canonical form of a canonical form is itself. */
    char a[64], b[64];
    assert_true(ard_type_normalize("q:f64[7] tick:u32", a, sizeof a) > 0);
    assert_true(ard_type_normalize(a, b, sizeof b) > 0);
    assert_string_equal(a, b);
}

static void test_hash_ignores_names(void **state)
{
    (void)state;
    assert_int_equal(ard_type_hash("q:f64[7] dq:f64[7] tick:u32 flags:u8[4]"),
                     fnv1a("f64[7] f64[7] u32 u8[4]"));
    assert_int_equal(ard_type_hash("a:u8"), ard_type_hash("b:u8"));
    assert_int_equal(ard_type_hash("a:u8"), 0x08c48207b56753d8ull);
    assert_true(ard_type_hash("a:u8 b:u16") != ard_type_hash("a:u16 b:u8"));
}

static void test_bad_field_names_rejected_at_column(void **state)
{
    (void)state;
    const struct bad_case cases[] = {
        {"3q:f64", 1, "'3q'"},
        {"u8 q-x:u16", 5, "'q-x'"},
        {":u8", 1, "empty field name"},
        {"u8 q:", 6, "'q' has no type"},
        {"q:u8 dq:u8 q:u16", 12, "'q' used twice"},
        {"q:f65", 3, "'f65'"},
        {"q:u8:u8", 3, "'u8:u8'"},
        {"f1:u8", 1, "'f1' is reserved for field 1"},
        {"u8 f0:u8", 4, "'f0' is reserved for field 0"},
        {"abcdefghijklmnopqrstuvwxyzabcdefg:u8", 1, "longer than 31"},
        {"q:u8[", 5, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_bad(&cases[i]);
}

/* Layout alone decides: a named and an unnamed side of one layout share a connection, which
 * keeps the names of the side that created it; another layout is still refused. */
static void test_named_and_unnamed_sides_match(void **state)
{
    (void)state;
    char dom[32];
    snprintf(dom, sizeof dom, "tt%d", (int)getpid());
    assert_int_equal(ard_set_domain(dom), 0);
    ard_port *w = ard_create("js", ARD_OUT, 64, "q:f64[7] tick:u32 flags:u8[4]");
    ard_port *r = ard_create_on("plain", "js", ARD_IN, 64, "f64[7] u32 u8[4]");
    ard_port *r2 = ard_create_on("other", "js", ARD_IN, 64, "pos:f64[7] t:u32 fl:u8[4]");
    if (w == NULL || r == NULL || r2 == NULL)
        fail_msg("declare: %s", ard_errdetail());
    char *argv[] = {"test", NULL};
    int argc = 1;
    if (ard_init(&argc, argv) != 0)
        fail_msg("attach: %s", ard_errdetail());
    struct ard_conn_stat st;
    assert_int_equal(ard_conn_stat(dom, "js", &st), 0);
    assert_string_equal(st.type, "q:f64[7] tick:u32 flags:u8[4]");
    double pkt[8] = {1.5};
    assert_int_equal(ard_send(w, pkt), 0);
    double got[8] = {0};
    assert_int_equal(ard_tryrec(r, got), 1);
    assert_true(got[0] == 1.5);
    ard_port *bad = ard_create_on("bad", "js", ARD_IN, 64, "q:f64[7] tick:i32 flags:u8[4]");
    assert_null(bad);
    assert_int_equal(ard_lasterror(), ARD_ETYPE);
    ASSERT_CONTAINS(ard_errdetail(), "tick:i32");
    ard_fini();
    assert_true(ard_domain_unlink(dom) >= 0);
}

/* Random descriptors from the characters that matter: none crashes or reads out of bounds
 * (ASan build), and every accepted one has a canonical form that parses to the same fields,
 * is its own canonical form, and hashes like its layout without names. */
static void test_random_descriptors_parse_consistently(void **state)
{
    (void)state;
    /* Descriptors assembled from valid and invalid pieces, so that both kinds are common. */
    static const char *const names[] = {
        "", "", "q:", "dq:", "t_1:", "f0:", "f1:", "3q:", ":", "q-:", "Q:", "_:"};
    static const char *const kinds[] = {"u8", "i16", "f32", "f64", "u64", "i8", "u9", "", "f64:"};
    static const char *const counts[] = {"", "", "[1]", "[7]", "[03]", "[0]", "[", "[x]", "]"};
    static const char *const seps[] = {" ", ",", "\t", " , ", "", "  "};
    uint64_t x = 88172645463325252ull;
    int accepted = 0, refused = 0;
    for (int round = 0; round < 100000; round++) {
        char d[128] = "";
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        int nf = 1 + (int)(x % 5);
        for (int k = 0; k < nf; k++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            strcat(d, names[x % (sizeof names / sizeof *names)]);
            strcat(d, kinds[(x >> 8) % (sizeof kinds / sizeof *kinds)]);
            strcat(d, counts[(x >> 16) % (sizeof counts / sizeof *counts)]);
            strcat(d, seps[(x >> 24) % (sizeof seps / sizeof *seps)]);
        }
        struct ard_field f[40], g[40];
        size_t n = 0, size = 0, n2 = 0, size2 = 0;
        if (ard_type_parse(d, f, 40, &n, &size) != 0) {
            refused++;
            continue;
        }
        accepted++;
        char c1[256], c2[256];
        assert_true(ard_type_normalize(d, c1, sizeof c1) > 0);
        assert_true(ard_type_normalize(c1, c2, sizeof c2) > 0);
        assert_string_equal(c1, c2);
        assert_int_equal(ard_type_parse(c1, g, 40, &n2, &size2), 0);
        assert_int_equal(n, n2);
        assert_int_equal(size, size2);
        for (size_t k = 0; k < n && k < 40; k++) {
            assert_int_equal(f[k].kind, g[k].kind);
            assert_int_equal(f[k].count, g[k].count);
            assert_int_equal(f[k].offset, g[k].offset);
            assert_string_equal(f[k].name, g[k].name);
        }
        /* The layout alone: the same descriptor with every "name:" removed. */
        char bare[64];
        size_t b = 0;
        for (const char *p = c1; *p; p++) {
            const char *colon = strchr(p, ':'), *space = strchr(p, ' ');
            if (colon && (!space || colon < space))
                p = colon + 1;
            while (*p && *p != ' ')
                bare[b++] = *p++;
            if (!*p)
                break;
            bare[b++] = ' ';
        }
        bare[b] = '\0';
        assert_int_equal(ard_type_hash(d), fnv1a(bare));
    }
    assert_true(accepted > 1000 && refused > 1000); /* both kinds were exercised */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layout_matches_c_structs),
        cmocka_unit_test(test_parse_reports_kinds_and_counts),
        cmocka_unit_test(test_parse_accepts_spaces_tabs_commas),
        cmocka_unit_test(test_parse_counts_beyond_max),
        cmocka_unit_test(test_basic_sizes_and_names),
        cmocka_unit_test(test_normalize_gives_canonical_form),
        cmocka_unit_test(test_normalize_checks_buffer_size),
        cmocka_unit_test(test_hash_is_fnv1a_of_canonical_form),
        cmocka_unit_test(test_malformed_descriptors_rejected_at_bad_token),
        cmocka_unit_test(test_parse_rejects_null),
        cmocka_unit_test(test_largest_packet_accepted),
        cmocka_unit_test(test_create_refuses_size_mismatch_naming_both),
        cmocka_unit_test(test_create_refuses_bad_descriptor_at_token),
        cmocka_unit_test(test_create_stores_canonical_type),
        cmocka_unit_test(test_named_fields_parse_with_names_and_same_layout),
        cmocka_unit_test(test_names_are_optional_per_field),
        cmocka_unit_test(test_normalize_keeps_names),
        cmocka_unit_test(test_hash_ignores_names),
        cmocka_unit_test(test_bad_field_names_rejected_at_column),
        cmocka_unit_test(test_named_and_unnamed_sides_match),
        cmocka_unit_test(test_random_descriptors_parse_consistently),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
