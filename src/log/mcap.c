/* mcap.c - MCAP primitives: little-endian buffers, bounds-checked cursors, record framing. */
#include "logi.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

void ardl_st16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

void ardl_st32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

void ardl_st64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

uint16_t ardl_ld16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

uint32_t ardl_ld32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

uint64_t ardl_ld64(const uint8_t *p)
{
    return (uint64_t)ardl_ld32(p) | (uint64_t)ardl_ld32(p + 4) << 32;
}

void ardl_u8(struct ardc_buf *b, uint8_t v)
{
    ardc_put(b, &v, 1);
}

void ardl_u16(struct ardc_buf *b, uint16_t v)
{
    uint8_t t[2];
    ardl_st16(t, v);
    ardc_put(b, t, 2);
}

void ardl_u32(struct ardc_buf *b, uint32_t v)
{
    uint8_t t[4];
    ardl_st32(t, v);
    ardc_put(b, t, 4);
}

void ardl_u64(struct ardc_buf *b, uint64_t v)
{
    uint8_t t[8];
    ardl_st64(t, v);
    ardc_put(b, t, 8);
}

void ardl_str(struct ardc_buf *b, const char *s)
{
    size_t n = strlen(s);
    ardl_u32(b, (uint32_t)n);
    ardc_put(b, s, n);
}

size_t ardl_rec_begin(struct ardc_buf *b, uint8_t op)
{
    ardl_u8(b, op);
    size_t at = b->len;
    ardl_u64(b, 0);
    return at;
}

void ardl_rec_end(struct ardc_buf *b, size_t at)
{
    if (!b->oom)
        ardl_st64(b->p + at, (uint64_t)(b->len - at - 8));
}

size_t ardl_len32_begin(struct ardc_buf *b)
{
    size_t at = b->len;
    ardl_u32(b, 0);
    return at;
}

void ardl_len32_end(struct ardc_buf *b, size_t at)
{
    if (!b->oom)
        ardl_st32(b->p + at, (uint32_t)(b->len - at - 4));
}

uint32_t ardl_crc32(uint32_t crc, const void *p, size_t n)
{
    /* zlib's crc32 is the MCAP one (IEEE, reflected); fed in pieces below 4 GiB. */
    const uint8_t *q = p;
    while (n) {
        uInt k = n > (1u << 30) ? (1u << 30) : (uInt)n;
        crc = (uint32_t)crc32(crc, q, k);
        q += k;
        n -= k;
    }
    return crc;
}

/* ---- cursors ------------------------------------------------------------------------------- */

void ardl_cur_init(struct ardl_cur *c, const void *p, size_t n, uint64_t base)
{
    c->p = c->start = p;
    c->end = c->p + n;
    c->base = base;
    c->err = NULL;
    c->err_off = 0;
}

uint64_t ardl_cur_off(const struct ardl_cur *c)
{
    return c->base + (uint64_t)(c->p - c->start);
}

size_t ardl_cur_left(const struct ardl_cur *c)
{
    return c->err ? 0 : (size_t)(c->end - c->p);
}

void ardl_cur_fail(struct ardl_cur *c, const char *what)
{
    if (c->err)
        return;
    c->err = what;
    c->err_off = ardl_cur_off(c);
}

const uint8_t *ardl_getn(struct ardl_cur *c, size_t n, const char *what)
{
    if (c->err)
        return NULL;
    if ((size_t)(c->end - c->p) < n) {
        ardl_cur_fail(c, what);
        return NULL;
    }
    const uint8_t *r = c->p;
    c->p += n;
    return r;
}

uint16_t ardl_get16(struct ardl_cur *c, const char *what)
{
    const uint8_t *p = ardl_getn(c, 2, what);
    return p ? ardl_ld16(p) : 0;
}

uint32_t ardl_get32(struct ardl_cur *c, const char *what)
{
    const uint8_t *p = ardl_getn(c, 4, what);
    return p ? ardl_ld32(p) : 0;
}

uint64_t ardl_get64(struct ardl_cur *c, const char *what)
{
    const uint8_t *p = ardl_getn(c, 8, what);
    return p ? ardl_ld64(p) : 0;
}

const char *ardl_getstr(struct ardl_cur *c, uint32_t *len, const char *what)
{
    uint32_t n = ardl_get32(c, what);
    const uint8_t *p = ardl_getn(c, n, what);
    *len = p ? n : 0;
    return (const char *)p;
}

bool ardl_getsub(struct ardl_cur *c, struct ardl_cur *sub, const char *what)
{
    uint32_t n = ardl_get32(c, what);
    uint64_t off = ardl_cur_off(c);
    const uint8_t *p = ardl_getn(c, n, what);
    if (!p)
        return false;
    ardl_cur_init(sub, p, n, off);
    return true;
}
