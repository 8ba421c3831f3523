/* tmcapgen.c - MCAP files that ardnet does not write itself but must read (what MCAP allows),
 * built byte by byte here from the specification (https://mcap.dev/spec), without the
 * project's writer:
 *   tmcapgen FILE foreign    another program's file: a JSON schema and a binary (protobuf)
 *                            schema holding zero bytes and bytes that are not UTF-8; two
 *                            channels with the topic "/pose" (3 and 2 messages), "/cam"
 *                            (2 messages); both chunks lz4-compressed (LZ4 frames); log and
 *                            publish times of 2^63 and more on the second "/pose"; an
 *                            attachment with its CRC; the data section CRC in Data End
 *   tmcapgen FILE foreign-plain   the same with uncompressed chunks
 *   tmcapgen FILE ardnet     one ardnet channel "arm.x" ("x:f64 n:u32", 16 bytes) in an lz4
 *                            chunk: message i (0..49) holds x = i / 2, n = i, publish time
 *                            1.7e18 + i ms (i < 25) or 2^63 + i ms, log time publish + 1000
 *   tmcapgen FILE lz4-two-frames | lz4-cut | lz4-bigger
 *                            the ardnet file with its records as two LZ4 frames one after
 *                            the other (valid), its frame cut short, or an uncompressed size
 *                            recorded 16 bytes smaller than the frame holds
 *   tmcapgen FILE bad-data-crc | bad-attachment-crc
 *                            the foreign file with a wrong data section or attachment CRC
 * Exit 0, or 1 with a message. */
#include <lz4frame.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

struct buf {
    uint8_t *p;
    size_t len, cap;
};

static void put(struct buf *b, const void *p, size_t n)
{
    if (b->len + n > b->cap) {
        b->cap = (b->len + n) * 2 + 256;
        b->p = realloc(b->p, b->cap);
        if (!b->p) {
            perror("tmcapgen");
            exit(1);
        }
    }
    if (n)
        memcpy(b->p + b->len, p, n);
    b->len += n;
}

static void le(struct buf *b, uint64_t v, int bytes)
{
    uint8_t x[8];
    for (int i = 0; i < bytes; i++)
        x[i] = (uint8_t)(v >> (8 * i));
    put(b, x, (size_t)bytes);
}

static void str(struct buf *b, const char *s)
{
    le(b, strlen(s), 4);
    put(b, s, strlen(s));
}

/* A record: opcode, u64 length, body. */
static void rec(struct buf *b, uint8_t op, const struct buf *body)
{
    le(b, op, 1);
    le(b, body->len, 8);
    put(b, body->p, body->len);
}

static uint32_t crc(const void *p, size_t n)
{
    return (uint32_t)crc32(crc32(0, Z_NULL, 0), p, (uInt)n);
}

static void schema(struct buf *f, uint16_t id, const char *name, const char *enc, const void *data,
                   size_t n)
{
    struct buf r = {0};
    le(&r, id, 2);
    str(&r, name);
    str(&r, enc);
    le(&r, n, 4);
    put(&r, data, n);
    rec(f, 0x03, &r);
    free(r.p);
}

/* meta: NULL-terminated key, value, ... */
static void channel(struct buf *f, uint16_t id, uint16_t sid, const char *topic, const char *enc,
                    const char *const *meta)
{
    struct buf r = {0}, m = {0};
    le(&r, id, 2);
    le(&r, sid, 2);
    str(&r, topic);
    str(&r, enc);
    for (int i = 0; meta && meta[i]; i += 2) {
        str(&m, meta[i]);
        str(&m, meta[i + 1]);
    }
    le(&r, m.len, 4);
    put(&r, m.p, m.len);
    rec(f, 0x04, &r);
    free(r.p);
    free(m.p);
}

static void message(struct buf *c, uint16_t ch, uint32_t seq, uint64_t log, uint64_t pub,
                    const void *data, size_t n)
{
    struct buf r = {0};
    le(&r, ch, 2);
    le(&r, seq, 4);
    le(&r, log, 8);
    le(&r, pub, 8);
    put(&r, data, n);
    rec(c, 0x05, &r);
    free(r.p);
}

static bool plain;              /* chunks uncompressed */
static const char *lz4how = ""; /* "", "lz4-two-frames", "lz4-cut", "lz4-bigger" */

/* The records in `recs` as an lz4 chunk (uncompressed when `plain`). */
static void chunk_lz4(struct buf *f, const struct buf *recs, uint64_t t0, uint64_t t1)
{
    size_t cap = LZ4F_compressFrameBound(recs->len, NULL);
    uint8_t *z = malloc(cap);
    size_t n = z ? LZ4F_compressFrame(z, cap, recs->p, recs->len, NULL) : 0;
    if (!z || LZ4F_isError(n)) {
        fprintf(stderr, "tmcapgen: lz4 compression failed\n");
        exit(1);
    }
    if (plain) {
        memcpy(z, recs->p, recs->len < cap ? recs->len : cap);
        n = recs->len;
    }
    size_t usize = recs->len;
    if (strcmp(lz4how, "lz4-two-frames") == 0) { /* the first half, then the rest */
        size_t h = recs->len / 2;
        uint8_t *z2 = malloc(2 * cap);
        size_t n1 = z2 ? LZ4F_compressFrame(z2, cap, recs->p, h, NULL) : 0;
        size_t n2 = z2 ? LZ4F_compressFrame(z2 + n1, cap, recs->p + h, recs->len - h, NULL) : 0;
        if (!z2 || LZ4F_isError(n1) || LZ4F_isError(n2)) {
            fprintf(stderr, "tmcapgen: lz4 compression failed\n");
            exit(1);
        }
        free(z);
        z = z2;
        n = n1 + n2;
    } else if (strcmp(lz4how, "lz4-cut") == 0) {
        n -= 6; /* the end mark and part of the last block */
    } else if (strcmp(lz4how, "lz4-bigger") == 0) {
        usize -= 16;
    }
    struct buf r = {0};
    le(&r, t0, 8);
    le(&r, t1, 8);
    le(&r, usize, 8);
    le(&r, crc(recs->p, recs->len), 4);
    str(&r, plain ? "" : "lz4");
    le(&r, n, 8);
    put(&r, z, n);
    rec(f, 0x06, &r);
    free(r.p);
    free(z);
}

static void start(struct buf *f)
{
    put(f, "\x89MCAP0\r\n", 8);
    struct buf r = {0};
    str(&r, "");
    str(&r, "tmcapgen");
    rec(f, 0x01, &r);
    free(r.p);
}

static void finish(struct buf *f, bool bad_crc)
{
    struct buf r = {0};
    le(&r, crc(f->p, f->len) ^ (bad_crc ? 1u : 0u), 4); /* data section: file start to here */
    rec(f, 0x0f, &r);
    r.len = 0;
    le(&r, 0, 8); /* no summary */
    le(&r, 0, 8);
    le(&r, 0, 4);
    rec(f, 0x02, &r);
    put(f, "\x89MCAP0\r\n", 8);
    free(r.p);
}

#define T63 (UINT64_C(1) << 63)

static void foreign(struct buf *f, const char *kind)
{
    static const uint8_t proto[] = {0x0a, 0x05, 'h',  'e',  'l', 'l', 'o', 0x00,
                                    0x12, 0x00, 0xff, 0xfe, 'b', 'i', 'n', 0x00};
    start(f);
    const char *js = "{\"type\":\"object\"}";
    schema(f, 1, "foxglove.Pose", "jsonschema", js, strlen(js));
    schema(f, 2, "pkg.Image", "protobuf", proto, sizeof proto);
    channel(f, 1, 1, "/pose", "json", NULL);
    channel(f, 2, 1, "/pose", "json", NULL);
    const char *const cm[] = {"k", "v", NULL};
    channel(f, 3, 2, "/cam", "protobuf", cm);
    struct buf c = {0};
    uint64_t b = 1700000000000000000u;
    message(&c, 1, 1, b + 1, b, "{\"x\":1}", 7);
    message(&c, 3, 1, b + 2, b + 1, "\x08\x01", 2);
    message(&c, 2, 1, T63, T63 - 5, "{\"y\":1}", 7);
    message(&c, 1, 2, b + 3, b + 2, "{\"x\":2}", 7);
    chunk_lz4(f, &c, b + 1, T63);
    c.len = 0;
    message(&c, 2, 2, UINT64_MAX, UINT64_MAX - 1, "{\"y\":2}", 7);
    message(&c, 3, 2, b + 5, b + 4, "\x08\x02", 2);
    message(&c, 1, 3, b + 6, b + 5, "{\"x\":3}", 7);
    chunk_lz4(f, &c, b + 5, UINT64_MAX);
    free(c.p);
    struct buf a = {0};
    le(&a, b + 7, 8);
    le(&a, b + 7, 8);
    str(&a, "calib.yaml");
    str(&a, "text/yaml");
    le(&a, 5, 8);
    put(&a, "k: 1\n", 5);
    le(&a, crc(a.p, a.len) ^ (strcmp(kind, "bad-attachment-crc") == 0 ? 1u : 0u), 4);
    rec(f, 0x09, &a);
    free(a.p);
    finish(f, strcmp(kind, "bad-data-crc") == 0);
}

static void ardnet(struct buf *f)
{
    start(f);
    const char *def = "float64 x\nuint32 n\n";
    schema(f, 1, "ardnet/msg/ArmX", "ros2msg", def, strlen(def));
    const char *const meta[] = {"ardnet.type", "x:f64 n:u32", "ardnet.size", "16", NULL};
    channel(f, 1, 1, "arm.x", "cdr", meta);
    struct buf c = {0};
    uint64_t t0 = UINT64_MAX, t1 = 0;
    for (uint32_t i = 0; i < 50; i++) {
        uint64_t pub =
            i < 25 ? 1700000000000000000u + i * UINT64_C(1000000) : T63 + i * UINT64_C(1000000);
        uint64_t log = pub + 1000;
        uint8_t d[16] = {0x00, 0x01, 0x00, 0x00}; /* CDR, little-endian */
        double x = i / 2.0;
        uint64_t xb;
        memcpy(&xb, &x, 8);
        for (int k = 0; k < 8; k++)
            d[4 + k] = (uint8_t)(xb >> (8 * k));
        for (int k = 0; k < 4; k++)
            d[12 + k] = (uint8_t)(i >> (8 * k));
        message(&c, 1, i + 1, log, pub, d, sizeof d);
        t0 = log < t0 ? log : t0;
        t1 = log > t1 ? log : t1;
    }
    chunk_lz4(f, &c, t0, t1);
    free(c.p);
    finish(f, false);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: tmcapgen FILE foreign|foreign-plain|ardnet|bad-data-crc|"
                        "bad-attachment-crc\n");
        return 1;
    }
    struct buf f = {0};
    if (strcmp(argv[2], "ardnet") == 0)
        ardnet(&f);
    else if (strncmp(argv[2], "lz4-", 4) == 0) {
        lz4how = argv[2];
        ardnet(&f);
    } else if (strcmp(argv[2], "foreign-plain") == 0) {
        plain = true;
        foreign(&f, argv[2]);
    } else if (strcmp(argv[2], "foreign") == 0 || strcmp(argv[2], "bad-data-crc") == 0 ||
               strcmp(argv[2], "bad-attachment-crc") == 0)
        foreign(&f, argv[2]);
    else {
        fprintf(stderr, "tmcapgen: unknown kind '%s'\n", argv[2]);
        return 1;
    }
    FILE *o = fopen(argv[1], "wb");
    if (!o || fwrite(f.p, 1, f.len, o) != f.len || fclose(o) != 0) {
        perror(argv[1]);
        return 1;
    }
    free(f.p);
    return 0;
}
