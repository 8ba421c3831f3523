/*
 * ardc_buf.h - the one growable byte buffer of the programs and the recording library, and the
 * one JSON string writer. Header-only (static inline): the library's parts, ard and its web
 * server each compile it in without linking one another.
 *
 * A failed allocation sets `oom` and every later write does nothing, so a writer checks once at
 * the end. The text in `s` is NUL-terminated after every ardc_put or ardc_printf that succeeded
 * (not after bytes stored by hand after ardc_reserve).
 */
#ifndef ARDC_BUF_H
#define ARDC_BUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ardc_buf {
    union {
        uint8_t *p; /* bytes (MCAP records) */
        char *s;    /* text (JSON, command lines) */
    };
    size_t len, cap;
    bool oom;
};

/* Room for `more` bytes: true, or false (and oom) when it cannot grow. */
static inline bool ardc_reserve(struct ardc_buf *b, size_t more)
{
    if (b->oom)
        return false;
    if (b->cap - b->len >= more)
        return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap - b->len < more) {
        if (cap > SIZE_MAX / 2) {
            b->oom = true;
            return false;
        }
        cap *= 2;
    }
    uint8_t *p = (uint8_t *)realloc(b->p, cap);
    if (!p) {
        b->oom = true;
        return false;
    }
    b->p = p;
    b->cap = cap;
    return true;
}

/* Append n bytes, and a NUL after them that len does not count. */
static inline void ardc_put(struct ardc_buf *b, const void *p, size_t n)
{
    if (n == SIZE_MAX || !ardc_reserve(b, n + 1))
        return;
    if (n)
        memcpy(b->p + b->len, p, n);
    b->len += n;
    b->p[b->len] = 0;
}

static inline void ardc_vprintf(struct ardc_buf *b, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0 || !ardc_reserve(b, (size_t)n + 1))
        return;
    vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
    b->len += (size_t)n;
}

__attribute__((format(printf, 2, 3))) static inline void ardc_printf(struct ardc_buf *b,
                                                                     const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ardc_vprintf(b, fmt, ap);
    va_end(ap);
}

static inline void ardc_free(struct ardc_buf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

/* Length of the well-formed UTF-8 sequence at s (1 to 4), 0 when it is not one (overlong,
 * beyond Unicode, a surrogate, cut short by len). */
static inline size_t ardc_utf8_seq(const unsigned char *s, size_t len)
{
    unsigned char c = s[0];
    if (c < 0x80)
        return 1;
    size_t n;
    uint32_t cp;
    if (c >= 0xc2 && c <= 0xdf)
        n = 2, cp = c & 0x1f;
    else if (c >= 0xe0 && c <= 0xef)
        n = 3, cp = c & 0x0f;
    else if (c >= 0xf0 && c <= 0xf4)
        n = 4, cp = c & 0x07;
    else
        return 0;
    if (len < n)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

/* `s` as a JSON string literal: '"' and '\' escaped, control bytes and DEL as \u00XX, and bytes
 * that are not UTF-8 (a name made by hand in /dev/shm, a message quoting what a client sent)
 * as the text \xNN, so that the output stays valid UTF-8. */
static inline void ardc_json_str(struct ardc_buf *b, const char *s)
{
    size_t len = strlen(s);
    ardc_put(b, "\"", 1);
    for (size_t i = 0; i < len;) {
        unsigned char c = (unsigned char)s[i];
        size_t k = ardc_utf8_seq((const unsigned char *)s + i, len - i);
        if (c == '"' || c == '\\')
            ardc_printf(b, "\\%c", c);
        else if (c < 0x20 || c == 0x7f)
            ardc_printf(b, "\\u%04x", c);
        else if (k == 0)
            ardc_printf(b, "\\\\x%02x", c);
        else
            ardc_put(b, s + i, k);
        i += k ? k : 1;
    }
    ardc_put(b, "\"", 1);
}

#endif /* ARDC_BUF_H */
