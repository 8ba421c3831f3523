/* types.c - type descriptors: parsing, field names, natural-alignment layout, canonical form,
 * layout form and hash. */
#include "ardi.h"

#include <stdio.h>
#include <string.h>

static const struct {
    const char *name;
    size_t size;
} basics[] = {
    [ARD_I8] = {"i8", 1},   [ARD_U8] = {"u8", 1},   [ARD_I16] = {"i16", 2}, [ARD_U16] = {"u16", 2},
    [ARD_I32] = {"i32", 4}, [ARD_U32] = {"u32", 4}, [ARD_I64] = {"i64", 8}, [ARD_U64] = {"u64", 8},
    [ARD_F32] = {"f32", 4}, [ARD_F64] = {"f64", 8},
};
#define NBASICS (sizeof basics / sizeof basics[0])

size_t ard_basic_size(enum ard_basic kind)
{
    return (unsigned)kind < NBASICS ? basics[kind].size : 0;
}

const char *ard_basic_name(enum ard_basic kind)
{
    return (unsigned)kind < NBASICS ? basics[kind].name : "?";
}

static bool is_sep(char c)
{
    return c == ' ' || c == '\t' || c == ',' || c == '\n';
}

static bool is_name_start(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_name_char(char c)
{
    return is_name_start(c) || (c >= '0' && c <= '9');
}

/* One field as written: [name:]type[[N]]. */
struct token {
    const char *name; /* NULL when unnamed */
    size_t namelen;
    enum ard_basic kind;
    uint32_t count;
};

/* "fN" is the name tools give unnamed field N; a field may carry it only at position N, so
 * that a path like "f1" never means two fields. */
static bool is_fallback_name(const char *s, size_t len, size_t *index)
{
    if (len < 2 || s[0] != 'f' || len > 12)
        return false;
    size_t v = 0;
    for (size_t i = 1; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (size_t)(s[i] - '0');
    }
    *index = v;
    return true;
}

static int check_field_name(const char *desc, const char *name, size_t len, size_t index)
{
    size_t col = (size_t)(name - desc) + 1;
    if (len == 0)
        return ardi_fail(ARD_ETYPE, "type '%s': at column %zu: empty field name before ':'", desc,
                         col);
    if (len > ARD_MAX_FIELD_NAME)
        return ardi_fail(ARD_ETYPE,
                         "type '%s': at column %zu: field name '%.*s...' longer than %d "
                         "characters",
                         desc, col, 20, name, ARD_MAX_FIELD_NAME);
    if (!is_name_start(name[0]))
        return ardi_fail(ARD_ETYPE,
                         "type '%s': at column %zu: field name '%.*s' must start with a "
                         "letter or '_'",
                         desc, col, (int)len, name);
    for (size_t i = 1; i < len; i++)
        if (!is_name_char(name[i]))
            return ardi_fail(ARD_ETYPE,
                             "type '%s': at column %zu: field name '%.*s' may contain only "
                             "letters, digits and '_'",
                             desc, col + i, (int)len, name);
    size_t fi;
    if (is_fallback_name(name, len, &fi) && fi != index)
        return ardi_fail(ARD_ETYPE,
                         "type '%s': at column %zu: field name '%.*s' is reserved for field "
                         "%zu (this is field %zu)",
                         desc, col, (int)len, name, fi, index);
    return 0;
}

/* Parse one field starting at *pp (not at a separator); advances past it. */
static int parse_token(const char *desc, const char **pp, size_t index, struct token *t)
{
    const char *p = *pp;
    t->name = NULL;
    t->namelen = 0;
    size_t tl = 0;
    while (p[tl] && !is_sep(p[tl]) && p[tl] != ':' && p[tl] != '[')
        tl++;
    if (p[tl] == ':') {
        int rc = check_field_name(desc, p, tl, index);
        if (rc < 0)
            return rc;
        t->name = p;
        t->namelen = tl;
        p += tl + 1;
    }
    const char *tok = p;
    size_t len = 0;
    while (p[len] && !is_sep(p[len]) && p[len] != '[')
        len++;
    size_t k;
    for (k = 0; k < NBASICS; k++)
        if (strlen(basics[k].name) == len && memcmp(basics[k].name, p, len) == 0)
            break;
    if (k == NBASICS) {
        size_t el = len;
        while (p[el] && !is_sep(p[el]))
            el++;
        if (el == 0)
            return ardi_fail(ARD_ETYPE, "type '%s': at column %zu: field '%.*s' has no type", desc,
                             (size_t)(tok - desc) + 1, (int)t->namelen, t->name);
        return ardi_fail(ARD_ETYPE,
                         "type '%s': at column %zu: '%.*s' is not a basic type "
                         "(i8 u8 i16 u16 i32 u32 i64 u64 f32 f64)",
                         desc, (size_t)(tok - desc) + 1, (int)(el > 40 ? 40 : el), tok);
    }
    p += len;
    uint64_t n = 1;
    if (*p == '[') {
        const char *lb = p++;
        if (*p < '0' || *p > '9')
            return ardi_fail(ARD_ETYPE,
                             "type '%s': at column %zu: '[' must be followed by a "
                             "count",
                             desc, (size_t)(lb - desc) + 1);
        n = 0;
        while (*p >= '0' && *p <= '9') {
            n = n * 10 + (uint64_t)(*p++ - '0');
            if (n > ARD_MAX_PACKET)
                return ardi_fail(ARD_ETYPE, "type '%s': at column %zu: array count too large", desc,
                                 (size_t)(lb - desc) + 2);
        }
        if (*p != ']')
            return ardi_fail(ARD_ETYPE, "type '%s': at column %zu: expected ']'", desc,
                             (size_t)(p - desc) + 1);
        p++;
        if (n == 0)
            return ardi_fail(ARD_ETYPE, "type '%s': at column %zu: array count must be >= 1", desc,
                             (size_t)(lb - desc) + 2);
    }
    if (*p && !is_sep(*p))
        return ardi_fail(ARD_ETYPE, "type '%s': at column %zu: unexpected '%c' after field", desc,
                         (size_t)(p - desc) + 1, *p);
    t->kind = (enum ard_basic)k;
    t->count = (uint32_t)n;
    *pp = p;
    return 0;
}

/* Has a field before `upto` the same name as t? Scans the text again: no storage needed. */
static int check_duplicate(const char *desc, const char *upto, const struct token *t)
{
    const char *p = desc;
    size_t i = 0;
    for (;;) {
        while (is_sep(*p))
            p++;
        if (p >= upto || *p == '\0')
            return 0;
        struct token o;
        if (parse_token(desc, &p, i, &o) < 0)
            return 0; /* cannot happen: this part was parsed already */
        if (o.name && o.namelen == t->namelen && memcmp(o.name, t->name, t->namelen) == 0)
            return ardi_fail(ARD_ETYPE,
                             "type '%s': at column %zu: field name '%.*s' used twice (also "
                             "field %zu)",
                             desc, (size_t)(t->name - desc) + 1, (int)t->namelen, t->name, i);
        i++;
    }
}

int ard_type_parse(const char *desc, struct ard_field *fields, size_t max, size_t *nfields,
                   size_t *size)
{
    if (desc == NULL)
        return ardi_fail(ARD_EINVAL, "type descriptor is NULL");
    size_t n = 0;
    uint64_t off = 0, align = 1;
    const char *p = desc;
    for (;;) {
        while (is_sep(*p))
            p++;
        if (*p == '\0')
            break;
        const char *start = p;
        struct token t;
        int rc = parse_token(desc, &p, n, &t);
        if (rc == 0 && t.name)
            rc = check_duplicate(desc, start, &t);
        if (rc < 0)
            return rc;
        uint64_t es = basics[t.kind].size;
        off = (off + es - 1) / es * es;
        if (n < max && fields != NULL) {
            fields[n] = (struct ard_field){t.kind, t.count, (uint32_t)off, ""};
            if (t.name)
                memcpy(fields[n].name, t.name, t.namelen);
        }
        off += es * t.count;
        if (off > ARD_MAX_PACKET)
            return ardi_fail(ARD_ETYPE, "type '%.60s...': larger than %u bytes", desc,
                             ARD_MAX_PACKET);
        if (es > align)
            align = es;
        n++;
    }
    if (n == 0)
        return ardi_fail(ARD_ETYPE, "type '%s': no fields", desc);
    off = (off + align - 1) / align * align;
    if (nfields)
        *nfields = n;
    if (size)
        *size = (size_t)off;
    return 0;
}

/* Canonical text, with the names (keep_names) or the layout alone. */
static int canonical(const char *desc, char *buf, size_t buflen, bool keep_names)
{
    if (desc == NULL || buf == NULL || buflen == 0)
        return ardi_fail(ARD_EINVAL, "type normalisation: NULL argument");
    int rc = ard_type_parse(desc, NULL, 0, NULL, NULL); /* names, duplicates, size limit */
    if (rc < 0)
        return rc;
    size_t len = 0, i = 0;
    const char *p = desc;
    for (;;) {
        while (is_sep(*p))
            p++;
        if (*p == '\0')
            break;
        struct token t;
        if ((rc = parse_token(desc, &p, i++, &t)) < 0)
            return rc;
        char tok[ARD_MAX_FIELD_NAME + 40];
        int nl = keep_names && t.name ? (int)t.namelen : 0;
        const char *colon = nl ? ":" : "";
        int tl = t.count == 1 ? snprintf(tok, sizeof tok, "%s%.*s%s%s", len ? " " : "", nl,
                                         t.name ? t.name : "", colon, basics[t.kind].name)
                              : snprintf(tok, sizeof tok, "%s%.*s%s%s[%u]", len ? " " : "", nl,
                                         t.name ? t.name : "", colon, basics[t.kind].name, t.count);
        if (len + (size_t)tl + 1 > buflen)
            return ardi_fail(ARD_EINVAL, "type '%.60s': canonical form longer than %zu bytes", desc,
                             buflen - 1);
        memcpy(buf + len, tok, (size_t)tl + 1);
        len += (size_t)tl;
    }
    if (len == 0)
        return ardi_fail(ARD_ETYPE, "type '%s': no fields", desc);
    return (int)len;
}

int ard_type_normalize(const char *desc, char *buf, size_t buflen)
{
    return canonical(desc, buf, buflen, true);
}

int ardi_type_layout(const char *desc, char *buf, size_t buflen)
{
    return canonical(desc, buf, buflen, false);
}

bool ardi_type_same_layout(const char *a, const char *b)
{
    char la[ARD_MAX_TYPE + 1], lb[ARD_MAX_TYPE + 1];
    if (ardi_type_layout(a, la, sizeof la) < 0 || ardi_type_layout(b, lb, sizeof lb) < 0)
        return strcmp(a, b) == 0;
    return strcmp(la, lb) == 0;
}

uint64_t ard_type_hash(const char *desc)
{
    if (desc == NULL || *desc == '\0')
        return 0;
    char canon[ARD_MAX_TYPE + 1];
    const char *s = desc;
    if (ardi_type_layout(desc, canon, sizeof canon) >= 0)
        s = canon;
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++) {
        h ^= (uint8_t)*s;
        h *= 0x100000001b3ull;
    }
    return h;
}
