/* chunk.c - building one chunk (Message records and their index) and sealing it: compression,
 * CRC, the Chunk record's head and the Message Index records that follow it. */
#include "logi.h"

#include <stdlib.h>
#include <string.h>
#include <zstd.h>

void ardl_chunk_reset(struct ardl_chunk *c)
{
    c->recs.len = 0;
    c->start_ns = c->end_ns = 0;
    c->messages = 0;
    for (size_t i = 0; i < c->nidx; i++) {
        c->idx[i].entries.len = 0;
        c->per_channel[i] = 0;
    }
}

void ardl_chunk_free(struct ardl_chunk *c)
{
    ardc_free(&c->recs);
    for (size_t i = 0; i < c->nidx; i++)
        ardc_free(&c->idx[i].entries);
    free(c->idx);
    free(c->per_channel);
    memset(c, 0, sizeof *c);
}

bool ardl_chunk_channels(struct ardl_chunk *c, size_t nch)
{
    if (nch <= c->nidx)
        return true;
    struct ardl_mindex *idx = realloc(c->idx, nch * sizeof *idx);
    if (!idx)
        return false;
    c->idx = idx;
    uint64_t *pc = realloc(c->per_channel, nch * sizeof *pc);
    if (!pc)
        return false;
    c->per_channel = pc;
    for (size_t i = c->nidx; i < nch; i++) {
        memset(&c->idx[i], 0, sizeof c->idx[i]);
        c->idx[i].channel_id = (uint16_t)(i + 1);
        c->per_channel[i] = 0;
    }
    c->nidx = nch;
    return true;
}

uint8_t *ardl_chunk_msg(struct ardl_chunk *c, size_t ch, uint16_t id, uint32_t seq, int64_t log_ns,
                        int64_t pub_ns, size_t data_len)
{
    const size_t head = 1 + 8 + 2 + 4 + 8 + 8;
    struct ardl_mindex *mi = &c->idx[ch];
    if (!ardc_reserve(&c->recs, head + data_len) || !ardc_reserve(&mi->entries, 16))
        return NULL;
    uint64_t off = c->recs.len;
    c->last_at = c->recs.len;
    uint8_t *p = c->recs.p + c->recs.len;
    p[0] = ARDL_OP_MESSAGE;
    ardl_st64(p + 1, (uint64_t)(head - 9 + data_len));
    ardl_st16(p + 9, id);
    ardl_st32(p + 11, seq);
    ardl_st64(p + 15, (uint64_t)log_ns);
    ardl_st64(p + 23, (uint64_t)pub_ns);
    c->recs.len += head + data_len;
    uint8_t *e = mi->entries.p + mi->entries.len;
    ardl_st64(e, (uint64_t)log_ns);
    ardl_st64(e + 8, off);
    mi->entries.len += 16;
    if (c->messages == 0 || log_ns < c->start_ns)
        c->start_ns = log_ns;
    if (c->messages == 0 || log_ns > c->end_ns)
        c->end_ns = log_ns;
    c->messages++;
    c->per_channel[ch]++;
    return p + head;
}

/* The last message (of channel ch) was not filled after all: forget it. */
void ardl_chunk_unmsg(struct ardl_chunk *c, size_t ch)
{
    struct ardl_mindex *mi = &c->idx[ch];
    mi->entries.len -= 16;
    c->recs.len = (size_t)ardl_ld64(mi->entries.p + mi->entries.len + 8);
    c->messages--;
    c->per_channel[ch]--;
    /* start/end times stay as they were widened: at worst a chunk claims a little more. */
}

/* Shorten the last message by `n` bytes (the packet's trailing padding). */
void ardl_chunk_trim(struct ardl_chunk *c, size_t n)
{
    if (n == 0)
        return;
    uint8_t *rec = c->recs.p + c->last_at;
    ardl_st64(rec + 1, ardl_ld64(rec + 1) - n);
    c->recs.len -= n;
}

void ardl_sealed_free(struct ardl_sealed *s)
{
    ardc_free(&s->head);
    ardc_free(&s->body);
    ardc_free(&s->tail);
    free(s->mi_ids);
    free(s->mi_off);
    free(s->per_channel);
    memset(s, 0, sizeof *s);
}

int ardl_chunk_seal(struct ardl_chunk *c, int level, bool with_crc, struct ardl_sealed *s)
{
    memset(s, 0, sizeof *s);
    s->start_ns = c->start_ns;
    s->end_ns = c->end_ns;
    s->messages = c->messages;
    s->uncompressed = c->recs.len;
    s->compression = level > 0 ? "zstd" : "";
    uint32_t crc = with_crc ? ardl_crc32(0, c->recs.p, c->recs.len) : 0;
    if (level > 0) {
        size_t bound = ZSTD_compressBound(c->recs.len);
        if (!ardc_reserve(&s->body, bound))
            return ardi_fail(ARD_ENOMEM, "out of memory for a compressed chunk");
        size_t n = ZSTD_compress(s->body.p, bound, c->recs.p, c->recs.len, level);
        if (ZSTD_isError(n))
            return ardi_fail(ARD_ESYS, "zstd: %s", ZSTD_getErrorName(n));
        s->body.len = n;
    } else {
        /* Hand the records over without copying; the chunk starts a new buffer. */
        s->body = c->recs;
        memset(&c->recs, 0, sizeof c->recs);
        ardc_reserve(&c->recs, s->body.cap);
    }
    struct ardc_buf *h = &s->head;
    ardl_u8(h, ARDL_OP_CHUNK);
    ardl_u64(h, 8 + 8 + 8 + 4 + 4 + strlen(s->compression) + 8 + s->body.len);
    ardl_u64(h, (uint64_t)s->start_ns);
    ardl_u64(h, (uint64_t)s->end_ns);
    ardl_u64(h, s->uncompressed);
    ardl_u32(h, crc);
    ardl_str(h, s->compression);
    ardl_u64(h, s->body.len);

    size_t nmi = 0;
    for (size_t i = 0; i < c->nidx; i++)
        nmi += c->per_channel[i] != 0;
    s->mi_ids = calloc(nmi ? nmi : 1, sizeof *s->mi_ids);
    s->mi_off = calloc(nmi ? nmi : 1, sizeof *s->mi_off);
    s->per_channel = calloc(c->nidx ? c->nidx : 1, sizeof *s->per_channel);
    if (!s->mi_ids || !s->mi_off || !s->per_channel)
        return ardi_fail(ARD_ENOMEM, "out of memory");
    s->nch = c->nidx;
    for (size_t i = 0; i < c->nidx; i++) {
        s->per_channel[i] = c->per_channel[i];
        if (!c->per_channel[i])
            continue;
        s->mi_ids[s->nmi] = c->idx[i].channel_id;
        s->mi_off[s->nmi++] = s->tail.len;
        size_t at = ardl_rec_begin(&s->tail, ARDL_OP_MESSAGE_INDEX);
        ardl_u16(&s->tail, c->idx[i].channel_id);
        ardl_u32(&s->tail, (uint32_t)c->idx[i].entries.len);
        ardc_put(&s->tail, c->idx[i].entries.p, c->idx[i].entries.len);
        ardl_rec_end(&s->tail, at);
    }
    if (h->oom || s->tail.oom || c->recs.oom)
        return ardi_fail(ARD_ENOMEM, "out of memory");
    ardl_chunk_reset(c);
    return 0;
}
