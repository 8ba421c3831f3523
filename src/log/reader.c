/* reader.c - ard_logr_*: check an MCAP recording from end to end, then read its messages.
 * The file is mapped read-only; every length is checked against what is left before use. */
#include "logi.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>
#ifdef ARD_HAVE_LZ4
#include <lz4frame.h>
#endif

#define MAX_CHUNK (256u << 20) /* largest uncompressed chunk accepted */

struct rconn {
    struct ard_log_conn pub;
    uint16_t schema_id;
    char *name, *topic, *type, *schema, *encoding;
    struct ardr2_layout lay;
};

struct rschema {
    uint16_t id;
    char *name, *encoding, *data; /* data: dl bytes (and a terminating zero) */
    size_t dl;
};

struct rmeta {
    char *name;
    char **kv; /* key, value, ... */
    size_t n;
};

struct rattach {
    struct ard_log_attachment a;
    char *name, *media_type;
};

struct rchunk {
    uint64_t off;
    uint64_t start_ns, end_ns;
};

struct ard_logr {
    const char *what; /* file name for messages */
    char *path;
    const uint8_t *p;
    size_t len;
    bool mapped;
    struct rconn *c;
    size_t nc;
    struct rschema *s;
    size_t ns;
    struct rmeta *m;
    size_t nm;
    struct rattach *at;
    size_t nat;
    struct rchunk *ch;
    size_t nch;
    struct ard_log_summary sum;
    char cut[256];
    char compression[8];
    uint64_t data_end; /* offset where records of the data section stop */
    /* iteration */
    uint64_t pos;
    uint64_t min_ns;
    struct ardc_buf dec;
    const uint8_t *in;
    size_t in_len, in_pos;
    uint64_t in_off;
    uint8_t *pkt;
    size_t pkt_cap;
};

static int bad(struct ard_logr *r, uint64_t off, const char *cause)
{
    return ardi_fail(ARD_ESTALE, "%s: at offset %llu: %s", r->what, (unsigned long long)off, cause);
}

static char *dupn(const char *s, uint32_t n)
{
    char *d = malloc((size_t)n + 1);
    if (d) {
        if (n)
            memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

static int conn_by_id(const struct ard_logr *r, uint16_t id)
{
    for (size_t i = 0; i < r->nc; i++)
        if (r->c[i].pub.channel_id == id)
            return (int)i;
    return -1;
}

static int on_schema(struct ard_logr *r, struct ardl_cur *c, uint64_t off)
{
    uint32_t nl, el, dl;
    uint16_t id = ardl_get16(c, "schema id");
    const char *name = ardl_getstr(c, &nl, "schema name");
    const char *enc = ardl_getstr(c, &el, "schema encoding");
    const char *data = ardl_getstr(c, &dl, "schema data");
    if (c->err)
        return bad(r, c->err_off, c->err);
    if (id == 0)
        return 0; /* invalid by the spec: ignored */
    for (size_t i = 0; i < r->ns; i++)
        if (r->s[i].id == id)
            return 0;
    struct rschema *ns = realloc(r->s, (r->ns + 1) * sizeof *ns);
    if (!ns)
        return ardi_fail(ARD_ENOMEM, "out of memory");
    r->s = ns;
    struct rschema *s = &r->s[r->ns];
    s->id = id;
    s->name = dupn(name, nl);
    s->encoding = dupn(enc, el);
    s->data = dupn(data, dl);
    s->dl = dl;
    r->ns++;
    if (!s->name || !s->encoding || !s->data)
        return ardi_fail(ARD_ENOMEM, "out of memory");
    (void)off;
    return 0;
}

static int on_channel(struct ard_logr *r, struct ardl_cur *c, uint64_t off)
{
    uint32_t tl, el;
    uint16_t id = ardl_get16(c, "channel id");
    uint16_t sid = ardl_get16(c, "channel schema id");
    const char *topic = ardl_getstr(c, &tl, "channel topic");
    const char *enc = ardl_getstr(c, &el, "channel message encoding");
    struct ardl_cur m;
    ardl_getsub(c, &m, "channel metadata");
    if (c->err)
        return bad(r, c->err_off, c->err);
    if (conn_by_id(r, id) >= 0)
        return 0;
    const char *type = NULL, *size = NULL, *aname = NULL;
    uint32_t tyl = 0, szl = 0, anl = 0;
    while (ardl_cur_left(&m)) {
        uint32_t kl, vl;
        const char *k = ardl_getstr(&m, &kl, "channel metadata key");
        const char *v = ardl_getstr(&m, &vl, "channel metadata value");
        if (m.err)
            return bad(r, m.err_off, m.err);
        if (kl == 11 && memcmp(k, "ardnet.type", 11) == 0)
            type = v, tyl = vl;
        if (kl == 11 && memcmp(k, "ardnet.size", 11) == 0)
            size = v, szl = vl;
        if (kl == 11 && memcmp(k, "ardnet.name", 11) == 0)
            aname = v, anl = vl;
    }
    struct rconn *nc = realloc(r->c, (r->nc + 1) * sizeof *nc);
    if (!nc)
        return ardi_fail(ARD_ENOMEM, "out of memory");
    r->c = nc;
    struct rconn *k = &r->c[r->nc];
    memset(k, 0, sizeof *k);
    k->pub.channel_id = id;
    k->schema_id = sid;
    /* The ardnet name: kept in the metadata since topics are "/a/b" (names.c); the topic
     * itself in files written before. */
    k->topic = dupn(topic, tl);
    k->name = aname && anl ? dupn(aname, anl) : dupn(topic, tl);
    k->type = dupn(type ? type : "", tyl);
    k->encoding = dupn(enc, el);
    r->nc++;
    if (!k->name || !k->topic || !k->type || !k->encoding)
        return ardi_fail(ARD_ENOMEM, "out of memory");
    if (type && size) {
        char num[24];
        if (szl == 0 || szl >= sizeof num)
            return bad(r, off, "channel metadata ardnet.size is not a number");
        memcpy(num, size, szl);
        num[szl] = '\0';
        char *end;
        unsigned long long n = strtoull(num, &end, 10);
        if (*end || n == 0 || n > ARD_MAX_PACKET)
            return bad(r, off, "channel metadata ardnet.size is not a packet size");
        if (ardr2_layout_init(&k->lay, k->type, (size_t)n) < 0) {
            char why[300];
            snprintf(why, sizeof why, "channel '%s': %s", k->name, ard_errdetail());
            return bad(r, off, why);
        }
        if (strcmp(k->encoding, "cdr") != 0)
            return bad(r, off, "ardnet channel with a message encoding other than cdr");
        k->pub.size = (size_t)n;
        k->pub.ardnet = true;
    }
    return 0;
}

static int on_message(struct ard_logr *r, struct ardl_cur *c, uint64_t off, size_t len)
{
    uint16_t id = ardl_get16(c, "message channel id");
    ardl_get32(c, "message sequence");
    uint64_t t = ardl_get64(c, "message log time");
    ardl_get64(c, "message publish time");
    if (c->err)
        return bad(r, c->err_off, c->err);
    int i = conn_by_id(r, id);
    if (i < 0)
        return bad(r, off, "message on a channel not declared before it");
    struct rconn *k = &r->c[i];
    size_t dl = len - 22;
    if (k->pub.ardnet) {
        const uint8_t *d = c->p;
        if (dl < ARDR2_CDR_HDR || d[0] != 0 || d[1] != 1)
            return bad(r, off, "message is not little-endian CDR (header 00 01 00 00)");
        if (dl - ARDR2_CDR_HDR < k->lay.body)
            return bad(r, off, "message shorter than its connection's fields");
    }
    if (k->pub.count == 0 || t < k->pub.first_ns)
        k->pub.first_ns = t;
    if (k->pub.count == 0 || t > k->pub.last_ns)
        k->pub.last_ns = t;
    k->pub.count++;
    if (r->sum.messages == 0 || t < r->sum.start_ns)
        r->sum.start_ns = t;
    if (r->sum.messages == 0 || t > r->sum.end_ns)
        r->sum.end_ns = t;
    r->sum.messages++;
    return 0;
}

static int on_metadata(struct ard_logr *r, struct ardl_cur *c)
{
    uint32_t nl;
    const char *name = ardl_getstr(c, &nl, "metadata name");
    struct ardl_cur m;
    ardl_getsub(c, &m, "metadata map");
    if (c->err)
        return bad(r, c->err_off, c->err);
    struct rmeta *nm = realloc(r->m, (r->nm + 1) * sizeof *nm);
    if (!nm)
        return ardi_fail(ARD_ENOMEM, "out of memory");
    r->m = nm;
    struct rmeta *e = &r->m[r->nm++];
    memset(e, 0, sizeof *e);
    e->name = dupn(name, nl);
    if (!e->name)
        return ardi_fail(ARD_ENOMEM, "out of memory");
    while (ardl_cur_left(&m)) {
        uint32_t kl, vl;
        const char *k = ardl_getstr(&m, &kl, "metadata key");
        const char *v = ardl_getstr(&m, &vl, "metadata value");
        if (m.err)
            return bad(r, m.err_off, m.err);
        char **kv = realloc(e->kv, (e->n + 2) * sizeof *kv);
        if (!kv)
            return ardi_fail(ARD_ENOMEM, "out of memory");
        e->kv = kv;
        e->kv[e->n] = dupn(k, kl);
        e->kv[e->n + 1] = dupn(v, vl);
        e->n += 2;
        if (!e->kv[e->n - 2] || !e->kv[e->n - 1])
            return ardi_fail(ARD_ENOMEM, "out of memory");
    }
    return 0;
}
/* An attachment: its fields, and its CRC (of every byte of the record before the CRC) when
 * not zero. `rec` is the record's first byte after its opcode and length. */
static int on_attachment(struct ard_logr *r, struct ardl_cur *c, uint64_t off, const uint8_t *rec)
{
    uint32_t nl, ml;
    uint64_t log_ns = ardl_get64(c, "attachment log time");
    uint64_t create_ns = ardl_get64(c, "attachment create time");
    const char *name = ardl_getstr(c, &nl, "attachment name");
    const char *media = ardl_getstr(c, &ml, "attachment media type");
    uint64_t dl = ardl_get64(c, "attachment data length");
    if (!c->err && dl > ardl_cur_left(c))
        ardl_cur_fail(c, "attachment data runs past its record");
    else
        ardl_getn(c, (size_t)dl, "attachment data");
    size_t covered = (size_t)(c->p - rec);
    uint32_t crc = ardl_get32(c, "attachment CRC");
    if (c->err)
        return bad(r, c->err_off, c->err);
    if (crc && ardl_crc32(0, rec, covered) != crc)
        return bad(r, off, "attachment CRC does not match");
    struct rattach *na = realloc(r->at, (r->nat + 1) * sizeof *na);
    if (!na)
        return ardi_fail(ARD_ENOMEM, "out of memory");
    r->at = na;
    struct rattach *e = &r->at[r->nat];
    e->name = dupn(name, nl);
    e->media_type = dupn(media, ml);
    if (!e->name || !e->media_type) {
        free(e->name);
        free(e->media_type);
        return ardi_fail(ARD_ENOMEM, "out of memory");
    }
    e->a = (struct ard_log_attachment){e->name, e->media_type, log_ns, create_ns, dl};
    r->nat++;
    return 0;
}

/* Parse a chunk record; on success the uncompressed records are at data, dlen (in r->dec
 * or in the file). */
#ifdef ARD_HAVE_LZ4
/* An lz4 chunk (one LZ4 frame, or several one after the other) into dst, exactly usize
 * bytes; NULL or why not. */
static const char *lz4_chunk(const uint8_t *src, size_t n, uint8_t *dst, size_t usize)
{
    LZ4F_dctx *dc = NULL;
    if (LZ4F_isError(LZ4F_createDecompressionContext(&dc, LZ4F_VERSION)))
        return "lz4: no decompression context";
    const char *why = NULL;
    size_t in = 0, out = 0, hint = 1;
    while (!why) {
        if (in == n) { /* every byte given: the last frame must be complete */
            if (hint != 0)
                why = "lz4 chunk ends inside its frame";
            else if (out != usize)
                why = "lz4 chunk decompresses to another size than recorded";
            break;
        }
        /* Output beyond usize goes to one spare byte: a frame that holds more is found out. */
        uint8_t spare;
        bool full = out == usize;
        size_t sn = n - in, dn = full ? 1 : usize - out;
        hint = LZ4F_decompress(dc, full ? &spare : dst + out, &dn, src + in, &sn, NULL);
        if (LZ4F_isError(hint))
            why = "lz4 chunk does not decompress (damaged LZ4 frame)";
        else if (full && dn)
            why = "lz4 chunk decompresses to more than its recorded size";
        else if (sn == 0 && dn == 0)
            why = "lz4 chunk: its frame does not progress";
        in += sn;
        out += full ? 0 : dn;
    }
    LZ4F_freeDecompressionContext(dc);
    return why;
}
#endif

static int open_chunk(struct ard_logr *r, struct ardl_cur *c, uint64_t off, uint64_t *t0,
                      uint64_t *t1, const uint8_t **data, size_t *dlen, bool check)
{
    *t0 = ardl_get64(c, "chunk start time");
    *t1 = ardl_get64(c, "chunk end time");
    uint64_t usize = ardl_get64(c, "chunk uncompressed size");
    uint32_t crc = ardl_get32(c, "chunk CRC");
    uint32_t cl;
    const char *comp = ardl_getstr(c, &cl, "chunk compression");
    uint64_t clen = ardl_get64(c, "chunk records length");
    if (c->err)
        return bad(r, c->err_off, c->err);
    if (clen != ardl_cur_left(c))
        return bad(r, off, "chunk records length disagrees with the record length");
    const uint8_t *src = ardl_getn(c, (size_t)clen, "chunk records");
    if (usize > MAX_CHUNK)
        return bad(r, off, "chunk uncompressed size above 256 MiB");
    if (cl == 0) {
        if (usize != clen)
            return bad(r, off, "uncompressed chunk whose sizes disagree");
        *data = src;
        *dlen = (size_t)clen;
    } else if (cl == 4 && memcmp(comp, "zstd", 4) == 0) {
        r->dec.len = 0;
        if (!ardc_reserve(&r->dec, (size_t)usize + 1))
            return ardi_fail(ARD_ENOMEM, "out of memory for a chunk of %llu bytes",
                             (unsigned long long)usize);
        size_t n = ZSTD_decompress(r->dec.p, (size_t)usize + 1, src, (size_t)clen);
        if (ZSTD_isError(n)) {
            char why[128];
            snprintf(why, sizeof why, "zstd chunk does not decompress: %s", ZSTD_getErrorName(n));
            return bad(r, off, why);
        }
        if (n != usize)
            return bad(r, off, "zstd chunk decompresses to another size than recorded");
        *data = r->dec.p;
        *dlen = n;
        if (check && strcmp(r->compression, "zstd") != 0)
            snprintf(r->compression, sizeof r->compression, "%s",
                     r->compression[0] || r->sum.chunks ? "mixed" : "zstd");
    } else if (cl == 3 && memcmp(comp, "lz4", 3) == 0) {
#ifdef ARD_HAVE_LZ4
        r->dec.len = 0;
        if (!ardc_reserve(&r->dec, (size_t)usize + 1))
            return ardi_fail(ARD_ENOMEM, "out of memory for a chunk of %llu bytes",
                             (unsigned long long)usize);
        const char *why = lz4_chunk(src, (size_t)clen, r->dec.p, (size_t)usize);
        if (why)
            return bad(r, off, why);
        *data = r->dec.p;
        *dlen = (size_t)usize;
        if (check && strcmp(r->compression, "lz4") != 0)
            snprintf(r->compression, sizeof r->compression, "%s",
                     r->compression[0] || r->sum.chunks ? "mixed" : "lz4");
#else
        return bad(r, off, "lz4 chunk: this libardnet was built without liblz4");
#endif
    } else {
        char why[96];
        snprintf(why, sizeof why, "chunk compression '%.*s' is none of none, zstd, lz4",
                 (int)(cl > 32 ? 32 : cl), comp);
        return bad(r, off, why);
    }
    if (check && crc && ardl_crc32(0, *data, *dlen) != crc)
        return bad(r, off, "chunk CRC does not match its records");
    return 0;
}

/* Walk records in [p, p+n) at file offset base. Top level: a record past the end is a cut
 * file (accepted) unless the file ends with the magic (then it is damage). */
static int scan(struct ard_logr *r, const uint8_t *p, size_t n, uint64_t base, bool top)
{
    size_t i = 0;
    while (i < n) {
        uint64_t off = base + i;
        if (n - i < 9) {
            if (!top)
                return bad(r, off, "chunk ends inside a record header");
            snprintf(r->cut, sizeof r->cut, "file ends inside a record header at offset %llu",
                     (unsigned long long)off);
            r->sum.valid_end = off;
            return 0;
        }
        uint8_t op = p[i];
        uint64_t len = ardl_ld64(p + i + 1);
        if (len > n - i - 9) {
            if (!top)
                return bad(r, off, "record inside a chunk runs past the chunk's end");
            if (r->len >= 16 && memcmp(r->p + r->len - 8, ARDL_MAGIC, 8) == 0)
                return bad(r, off, "record length runs past the end of the file");
            snprintf(r->cut, sizeof r->cut,
                     "record at offset %llu (opcode 0x%02x, %llu bytes) runs past the end of "
                     "the file (%zu bytes): recording cut short",
                     (unsigned long long)off, op, (unsigned long long)len, r->len);
            r->sum.valid_end = off;
            return 0;
        }
        struct ardl_cur c;
        ardl_cur_init(&c, p + i + 9, (size_t)len, off + 9);
        int rc = 0;
        switch (op) {
        case ARDL_OP_SCHEMA:
            rc = on_schema(r, &c, off);
            break;
        case ARDL_OP_CHANNEL:
            rc = on_channel(r, &c, off);
            break;
        case ARDL_OP_MESSAGE:
            if (len < 22)
                return bad(r, off, "message record shorter than its fixed fields");
            rc = on_message(r, &c, off, (size_t)len);
            break;
        case ARDL_OP_CHUNK: {
            if (!top)
                return bad(r, off, "chunk inside a chunk");
            uint64_t t0, t1;
            const uint8_t *d;
            size_t dl;
            rc = open_chunk(r, &c, off, &t0, &t1, &d, &dl, true);
            if (rc == 0) {
                uint64_t before = r->sum.messages;
                rc = scan(r, d, dl, 0, false);
                if (rc < 0) {
                    /* Offsets inside a chunk are of its records: name the chunk too. */
                    char inner[400];
                    snprintf(inner, sizeof inner, "%s", ard_errdetail());
                    return ardi_fail(rc, "%s (in the chunk at offset %llu)", inner,
                                     (unsigned long long)off);
                }
                struct rchunk *nc = realloc(r->ch, (r->nch + 1) * sizeof *nc);
                if (!nc)
                    return ardi_fail(ARD_ENOMEM, "out of memory");
                r->ch = nc;
                r->ch[r->nch++] = (struct rchunk){off, t0, t1};
                r->sum.chunks++;
                (void)before;
            }
            break;
        }
        case ARDL_OP_METADATA:
            rc = on_metadata(r, &c);
            break;
        case ARDL_OP_ATTACHMENT:
            rc = on_attachment(r, &c, off, p + i + 9);
            break;
        case ARDL_OP_HEADER:
        case ARDL_OP_FOOTER:
            return bad(r, off,
                       op == ARDL_OP_HEADER ? "second header record"
                                            : "footer inside "
                                              "the data");
        case ARDL_OP_DATA_END: {
            if (!top)
                return bad(r, off, "data end inside a chunk");
            /* The data section CRC covers the file from its start up to this record. */
            uint32_t crc = ardl_get32(&c, "data end CRC");
            if (c.err)
                return bad(r, c.err_off, c.err);
            if (crc && ardl_crc32(0, r->p, (size_t)off) != crc)
                return bad(r, off, "data section CRC (data end record) does not match");
            r->data_end = off;
            return 1;
        }
        default:
            break; /* indexes, attachments, private records: skipped */
        }
        if (rc < 0)
            return rc;
        i += 9 + (size_t)len;
    }
    if (top) {
        snprintf(r->cut, sizeof r->cut,
                 "file ends after the record at offset %llu without a footer: recording cut "
                 "short",
                 (unsigned long long)(base + n));
        r->sum.valid_end = base + n;
    }
    return 0;
}

/* The summary after Data End: records up to the footer, then the magic. */
static int check_tail(struct ard_logr *r, uint64_t at)
{
    size_t i = (size_t)at;
    while (i < r->len) {
        if (r->len - i < 9)
            return bad(r, i, "file ends inside a summary record");
        uint8_t op = r->p[i];
        uint64_t len = ardl_ld64(r->p + i + 1);
        if (len > r->len - i - 9)
            return bad(r, i, "summary record runs past the end of the file");
        if (op == ARDL_OP_FOOTER) {
            if (len < 20)
                return bad(r, i, "footer shorter than its fields");
            size_t e = i + 9 + (size_t)len;
            if (r->len - e != 8 || memcmp(r->p + e, ARDL_MAGIC, 8) != 0)
                return bad(r, e, "no MCAP magic right after the footer");
            uint64_t ss = ardl_ld64(r->p + i + 9);
            uint32_t crc = ardl_ld32(r->p + i + 25);
            if (ss && crc) {
                if (ss > i)
                    return bad(r, i, "footer's summary start lies after the footer");
                if (ardl_crc32(0, r->p + ss, i + 25 - (size_t)ss) != crc)
                    return bad(r, i, "footer's summary CRC does not match");
            }
            r->sum.complete = true;
            r->sum.valid_end = r->len;
            return 0;
        }
        i += 9 + (size_t)len;
    }
    return bad(r, r->len, "file ends without a footer after its data end record");
}

static int check(struct ard_logr *r)
{
    if (r->len < ARDL_MAGIC_LEN || memcmp(r->p, ARDL_MAGIC, ARDL_MAGIC_LEN) != 0)
        return bad(r, 0, "not an MCAP file (no magic 89 4d 43 41 50 30 0d 0a)");
    if (r->len < ARDL_MAGIC_LEN + 9 || r->p[8] != ARDL_OP_HEADER)
        return bad(r, 8, "no header record after the magic");
    uint64_t hl = ardl_ld64(r->p + 9);
    if (hl > r->len - 17)
        return bad(r, 8, "header record runs past the end of the file");
    struct ardl_cur c;
    ardl_cur_init(&c, r->p + 17, (size_t)hl, 17);
    uint32_t pl, ll;
    ardl_getstr(&c, &pl, "header profile");
    ardl_getstr(&c, &ll, "header library");
    if (c.err)
        return bad(r, c.err_off, c.err);
    uint64_t start = 17 + hl;
    int rc = scan(r, r->p + start, r->len - (size_t)start, start, true);
    if (rc < 0)
        return rc;
    if (rc == 1) {
        size_t de = (size_t)r->data_end;
        uint64_t dl = ardl_ld64(r->p + de + 1);
        rc = check_tail(r, de + 9 + dl);
        bool magic = r->len >= 16 && memcmp(r->p + r->len - 8, ARDL_MAGIC, 8) == 0;
        if (rc < 0 && (magic || rc != ARD_ESTALE))
            return rc;
        if (rc < 0) { /* every message is there; the summary was cut */
            snprintf(r->cut, sizeof r->cut, "%s: recording cut short in its summary",
                     ard_errdetail());
            r->sum.valid_end = r->data_end;
        }
    } else {
        r->data_end = r->sum.valid_end;
    }
    /* Missed counts from the closing metadata. */
    for (size_t i = 0; i < r->nc; i++) {
        char key[ARD_MAX_NAME + 16];
        snprintf(key, sizeof key, "%s.missed", r->c[i].name);
        const char *v = ard_logr_meta(r, "ardnet.connections", key);
        r->c[i].pub.missed = v ? strtoull(v, NULL, 10) : 0;
        r->c[i].pub.schema = "";
        r->c[i].pub.schema_name = "";
        r->c[i].pub.schema_encoding = "";
        for (size_t k = 0; k < r->ns; k++)
            if (r->s[k].id == r->c[i].schema_id) {
                r->c[i].pub.schema = r->s[k].data;
                r->c[i].pub.schema_len = r->s[k].dl;
                r->c[i].pub.schema_name = r->s[k].name;
                r->c[i].pub.schema_encoding = r->s[k].encoding;
            }
        r->c[i].pub.name = r->c[i].name;
        r->c[i].pub.topic = r->c[i].topic;
        r->c[i].pub.type = r->c[i].type;
        r->c[i].pub.encoding = r->c[i].encoding;
    }
    r->sum.file_size = r->len;
    r->sum.compression = r->compression;
    r->sum.cut = r->cut;
    return 0;
}

static void free_reader(struct ard_logr *r)
{
    for (size_t i = 0; i < r->nc; i++) {
        free(r->c[i].name);
        free(r->c[i].topic);
        free(r->c[i].type);
        free(r->c[i].encoding);
        ardr2_layout_free(&r->c[i].lay);
    }
    for (size_t i = 0; i < r->ns; i++) {
        free(r->s[i].name);
        free(r->s[i].encoding);
        free(r->s[i].data);
    }
    for (size_t i = 0; i < r->nm; i++) {
        for (size_t k = 0; k < r->m[i].n; k++)
            free(r->m[i].kv[k]);
        free(r->m[i].kv);
        free(r->m[i].name);
    }
    for (size_t i = 0; i < r->nat; i++) {
        free(r->at[i].name);
        free(r->at[i].media_type);
    }
    free(r->at);
    free(r->c);
    free(r->s);
    free(r->m);
    free(r->ch);
    ardc_free(&r->dec);
    free(r->pkt);
    if (r->mapped && r->len)
        munmap((void *)r->p, r->len);
    free(r->path);
    free(r);
}

int ard_log_check(const void *buf, size_t len)
{
    struct ard_logr *r = calloc(1, sizeof *r);
    if (!r)
        return ardi_fail(ARD_ENOMEM, "out of memory");
    r->what = "buffer";
    r->p = buf;
    r->len = len;
    int rc = check(r);
    free_reader(r);
    return rc;
}

ard_logr *ard_logr_open(const char *path)
{
    struct ard_logr *r = calloc(1, sizeof *r);
    if (!r || !(r->path = strdup(path))) {
        free(r);
        ardi_fail(ARD_ENOMEM, "out of memory");
        return NULL;
    }
    r->what = r->path;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        ardi_fail_errno(errno == EACCES   ? ARD_EACCES
                        : errno == ENOENT ? ARD_ENOENT
                                          : ARD_ESYS,
                        errno, "cannot open '%s'", path);
        if (fd >= 0)
            close(fd);
        free_reader(r);
        return NULL;
    }
    r->len = (size_t)st.st_size;
    if (r->len) {
        void *m = mmap(NULL, r->len, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED) {
            ardi_fail_errno(ARD_ESYS, errno, "cannot map '%s'", path);
            close(fd);
            r->len = 0;
            free_reader(r);
            return NULL;
        }
        r->p = m;
        r->mapped = true;
    }
    close(fd);
    if (check(r) < 0) {
        free_reader(r);
        return NULL;
    }
    r->pos = 0;
    return r;
}

void ard_logr_close(ard_logr *r)
{
    if (r)
        free_reader(r);
}

size_t ard_logr_nconns(const ard_logr *r)
{
    return r->nc;
}

const struct ard_log_conn *ard_logr_conn(const ard_logr *r, size_t i)
{
    return i < r->nc ? &r->c[i].pub : NULL;
}

int ard_logr_find(const ard_logr *r, const char *name)
{
    for (size_t i = 0; i < r->nc; i++)
        if (strcmp(r->c[i].name, name) == 0)
            return (int)i;
    return -1;
}

void ard_logr_summary(const ard_logr *r, struct ard_log_summary *s)
{
    *s = r->sum;
}

const char *ard_logr_meta(const ard_logr *r, const char *name, const char *key)
{
    for (size_t i = 0; i < r->nm; i++) {
        if (strcmp(r->m[i].name, name) != 0)
            continue;
        for (size_t k = 0; k + 1 < r->m[i].n; k += 2)
            if (strcmp(r->m[i].kv[k], key) == 0)
                return r->m[i].kv[k + 1];
    }
    return NULL;
}

size_t ard_logr_nmeta(const ard_logr *r)
{
    return r->nm;
}

const char *ard_logr_meta_at(const ard_logr *r, size_t i, const char *const **kv, size_t *npairs)
{
    if (i >= r->nm)
        return NULL;
    *kv = (const char *const *)r->m[i].kv;
    *npairs = r->m[i].n / 2;
    return r->m[i].name;
}

size_t ard_logr_nattachments(const ard_logr *r)
{
    return r->nat;
}

const struct ard_log_attachment *ard_logr_attachment(const ard_logr *r, size_t i)
{
    return i < r->nat ? &r->at[i].a : NULL;
}

int ard_logr_seek(ard_logr *r, uint64_t log_ns)
{
    r->min_ns = log_ns;
    r->in = NULL;
    r->pos = 0;
    return 0;
}

int ard_logr_next(ard_logr *r, struct ard_log_msg *m)
{
    uint64_t hl = ardl_ld64(r->p + 9);
    if (r->pos == 0)
        r->pos = 17 + hl;
    for (;;) {
        const uint8_t *p;
        size_t n, i;
        uint64_t base;
        if (r->in) {
            p = r->in;
            n = r->in_len;
            i = r->in_pos;
            base = r->in_off;
            if (i >= n) {
                r->in = NULL;
                continue;
            }
        } else {
            if (r->pos >= r->data_end)
                return 0;
            p = r->p;
            n = (size_t)r->data_end;
            i = (size_t)r->pos;
            base = 0;
        }
        uint8_t op = p[i];
        uint64_t len = ardl_ld64(p + i + 1);
        const uint8_t *body = p + i + 9;
        uint64_t off = r->in ? r->in_off : i;
        if (r->in)
            r->in_pos = i + 9 + (size_t)len;
        else
            r->pos = i + 9 + len;
        (void)base;
        (void)n;
        if (op == ARDL_OP_CHUNK && !r->in) {
            uint64_t t1 = ardl_ld64(body + 8);
            if (r->min_ns && t1 < r->min_ns && r->ch)
                continue; /* the whole chunk is before the start: not decompressed */
            struct ardl_cur c;
            ardl_cur_init(&c, body, (size_t)len, off + 9);
            uint64_t a, b;
            const uint8_t *d;
            size_t dl;
            if (open_chunk(r, &c, off, &a, &b, &d, &dl, false) < 0)
                return ARD_ESTALE;
            r->in = d;
            r->in_len = dl;
            r->in_pos = 0;
            r->in_off = off;
            continue;
        }
        if (op != ARDL_OP_MESSAGE)
            continue;
        uint16_t id = ardl_ld16(body);
        uint64_t t = ardl_ld64(body + 6);
        if (t < r->min_ns)
            continue;
        int ci = conn_by_id(r, id);
        if (ci < 0)
            continue;
        struct rconn *k = &r->c[ci];
        m->conn = (size_t)ci;
        m->seq = ardl_ld32(body + 2);
        m->log_ns = t;
        m->real_ns = ardl_ld64(body + 14);
        m->data = body + 22;
        m->data_len = (size_t)len - 22;
        m->offset = off;
        m->packet = NULL;
        if (k->pub.ardnet) {
            if (r->pkt_cap < k->pub.size) {
                uint8_t *np = realloc(r->pkt, k->pub.size);
                if (!np)
                    return ardi_fail(ARD_ENOMEM, "out of memory");
                r->pkt = np;
                r->pkt_cap = k->pub.size;
            }
            const char *why = ardr2_cdr_decode(&k->lay, m->data, m->data_len, r->pkt);
            if (why)
                return bad(r, off, why);
            m->packet = r->pkt;
        }
        return 1;
    }
}
