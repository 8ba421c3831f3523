/* types.c - type descriptors: parsing, natural-alignment layout, canonical form, hash. */
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

/* Parse one token starting at *pp; fills kind/count and advances. */
static int parse_token(const char *desc, const char **pp, enum ard_basic *kind, uint32_t *count)
{
    const char *p = *pp, *tok = p;
    size_t len = 0;
    while (p[len] && !is_sep(p[len]) && p[len] != '[')
        len++;
    size_t k;
    for (k = 0; k < NBASICS; k++)
        if (strlen(basics[k].name) == len && memcmp(basics[k].name, p, len) == 0)
            break;
    if (k == NBASICS) {
        size_t tl = len;
        while (p[tl] && !is_sep(p[tl]))
            tl++;
        return ardi_fail(ARD_ETYPE,
                         "type '%s': at column %zu: '%.*s' is not a basic type "
                         "(i8 u8 i16 u16 i32 u32 i64 u64 f32 f64)",
                         desc, (size_t)(tok - desc) + 1, (int)(tl > 40 ? 40 : tl), tok);
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
    *kind = (enum ard_basic)k;
    *count = (uint32_t)n;
    *pp = p;
    return 0;
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
        enum ard_basic kind;
        uint32_t count;
        int rc = parse_token(desc, &p, &kind, &count);
        if (rc < 0)
            return rc;
        uint64_t es = basics[kind].size;
        off = (off + es - 1) / es * es;
        if (n < max && fields != NULL)
            fields[n] = (struct ard_field){kind, count, (uint32_t)off};
        off += es * count;
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

int ard_type_normalize(const char *desc, char *buf, size_t buflen)
{
    if (desc == NULL || buf == NULL || buflen == 0)
        return ardi_fail(ARD_EINVAL, "type normalisation: NULL argument");
    int rc = ard_type_parse(desc, NULL, 0, NULL, NULL); /* also the size limit */
    if (rc < 0)
        return rc;
    size_t len = 0;
    const char *p = desc;
    for (;;) {
        while (is_sep(*p))
            p++;
        if (*p == '\0')
            break;
        enum ard_basic kind;
        uint32_t count;
        if ((rc = parse_token(desc, &p, &kind, &count)) < 0)
            return rc;
        char tok[32];
        int tl = count == 1 ? snprintf(tok, sizeof tok, "%s%s", len ? " " : "", basics[kind].name)
                            : snprintf(tok, sizeof tok, "%s%s[%u]", len ? " " : "",
                                       basics[kind].name, count);
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

uint64_t ard_type_hash(const char *desc)
{
    if (desc == NULL || *desc == '\0')
        return 0;
    char canon[ARD_MAX_TYPE + 1];
    const char *s = desc;
    if (ard_type_normalize(desc, canon, sizeof canon) >= 0)
        s = canon;
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++) {
        h ^= (uint8_t)*s;
        h *= 0x100000001b3ull;
    }
    return h;
}
