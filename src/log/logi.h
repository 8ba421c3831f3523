/*
 * logi.h - internal declarations of the recording code (src/log/), never installed.
 *
 * mcap.c    MCAP primitives: growable buffers, bounds-checked cursors, record framing, CRC
 * chunk.c   building a chunk (message records + message indexes) and compressing it
 * writer.c  ard_logw_*: the file writer, its background thread, summary and footer
 * reader.c  ard_logr_*: checking and reading a file
 *
 * What a channel holds (its topic, schema name, .msg text and CDR bytes) is the ROS 2
 * representation of src/ros2 (ardros2.h), compiled into this library.
 */
#ifndef ARDL_H
#define ARDL_H

#include "ard_common.h"
#include "ardc_buf.h"
#include "ardnet_log.h"
#include "ardros2.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- mcap.c ------------------------------------------------------------------------------- */

#define ARDL_MAGIC "\x89MCAP0\r\n"
#define ARDL_MAGIC_LEN 8

enum ardl_op {
    ARDL_OP_HEADER = 0x01,
    ARDL_OP_FOOTER = 0x02,
    ARDL_OP_SCHEMA = 0x03,
    ARDL_OP_CHANNEL = 0x04,
    ARDL_OP_MESSAGE = 0x05,
    ARDL_OP_CHUNK = 0x06,
    ARDL_OP_MESSAGE_INDEX = 0x07,
    ARDL_OP_CHUNK_INDEX = 0x08,
    ARDL_OP_ATTACHMENT = 0x09,
    ARDL_OP_ATTACHMENT_INDEX = 0x0a,
    ARDL_OP_STATISTICS = 0x0b,
    ARDL_OP_METADATA = 0x0c,
    ARDL_OP_METADATA_INDEX = 0x0d,
    ARDL_OP_SUMMARY_OFFSET = 0x0e,
    ARDL_OP_DATA_END = 0x0f,
};

/* Little-endian values and MCAP strings appended to the shared growable buffer (ardc_buf.h). */
ARDI_HIDDEN void ardl_u8(struct ardc_buf *b, uint8_t v);
ARDI_HIDDEN void ardl_u16(struct ardc_buf *b, uint16_t v);
ARDI_HIDDEN void ardl_u32(struct ardc_buf *b, uint32_t v);
ARDI_HIDDEN void ardl_u64(struct ardc_buf *b, uint64_t v);
ARDI_HIDDEN void ardl_str(struct ardc_buf *b, const char *s);
/* Start a record: opcode and a length placeholder; returns the position to end it at. */
ARDI_HIDDEN size_t ardl_rec_begin(struct ardc_buf *b, uint8_t op);
ARDI_HIDDEN void ardl_rec_end(struct ardc_buf *b, size_t at);
/* Start a uint32-length-prefixed map or array; ardl_len32_end fills in its byte length. */
ARDI_HIDDEN size_t ardl_len32_begin(struct ardc_buf *b);
ARDI_HIDDEN void ardl_len32_end(struct ardc_buf *b, size_t at);
/* Store little-endian values at p. */
ARDI_HIDDEN void ardl_st64(uint8_t *p, uint64_t v);
ARDI_HIDDEN void ardl_st32(uint8_t *p, uint32_t v);
ARDI_HIDDEN void ardl_st16(uint8_t *p, uint16_t v);

/* A bounds-checked reading cursor over [p, end), `base` the file offset of p for messages.
 * The first failure is kept (err, at which offset, what) and every later read yields zeros. */
struct ardl_cur {
    const uint8_t *p, *end;
    uint64_t base; /* file offset of the byte at `start` */
    const uint8_t *start;
    const char *err; /* NULL while fine */
    uint64_t err_off;
};

ARDI_HIDDEN void ardl_cur_init(struct ardl_cur *c, const void *p, size_t n, uint64_t base);
ARDI_HIDDEN uint64_t ardl_cur_off(const struct ardl_cur *c);
ARDI_HIDDEN size_t ardl_cur_left(const struct ardl_cur *c);
ARDI_HIDDEN void ardl_cur_fail(struct ardl_cur *c, const char *what);
ARDI_HIDDEN uint16_t ardl_get16(struct ardl_cur *c, const char *what);
ARDI_HIDDEN uint32_t ardl_get32(struct ardl_cur *c, const char *what);
ARDI_HIDDEN uint64_t ardl_get64(struct ardl_cur *c, const char *what);
/* n bytes (NULL on failure). */
ARDI_HIDDEN const uint8_t *ardl_getn(struct ardl_cur *c, size_t n, const char *what);
/* A String: pointer and length (not terminated); NULL on failure. */
ARDI_HIDDEN const char *ardl_getstr(struct ardl_cur *c, uint32_t *len, const char *what);
/* A uint32-length-prefixed block (map, array, schema data) as a sub-cursor. */
ARDI_HIDDEN bool ardl_getsub(struct ardl_cur *c, struct ardl_cur *sub, const char *what);

ARDI_HIDDEN uint32_t ardl_crc32(uint32_t crc, const void *p, size_t n);
ARDI_HIDDEN uint64_t ardl_ld64(const uint8_t *p);
ARDI_HIDDEN uint32_t ardl_ld32(const uint8_t *p);
ARDI_HIDDEN uint16_t ardl_ld16(const uint8_t *p);

/* ---- chunk.c ------------------------------------------------------------------------------- */

/* Message index entries of one channel within the chunk being built. */
struct ardl_mindex {
    uint16_t channel_id;
    struct ardc_buf entries; /* (u64 log_time, u64 offset) pairs */
};

struct ardl_chunk {
    struct ardc_buf recs; /* uncompressed records */
    int64_t start_ns, end_ns;
    uint64_t messages;
    struct ardl_mindex *idx; /* by channel index */
    size_t nidx;
    uint64_t *per_channel; /* messages per channel index in this chunk */
    size_t last_at;        /* where the newest message record starts */
};

ARDI_HIDDEN void ardl_chunk_reset(struct ardl_chunk *c);
ARDI_HIDDEN void ardl_chunk_free(struct ardl_chunk *c);
/* Make room for channel index ch (returns false on allocation failure). */
ARDI_HIDDEN bool ardl_chunk_channels(struct ardl_chunk *c, size_t nch);
/* Reserve a Message record for channel `ch` (id `id`) with `data_len` bytes of data and
 * return a pointer to its data, to be filled by the caller; NULL on allocation failure. */
ARDI_HIDDEN void ardl_chunk_unmsg(struct ardl_chunk *c, size_t ch);
ARDI_HIDDEN void ardl_chunk_trim(struct ardl_chunk *c, size_t n);
ARDI_HIDDEN uint8_t *ardl_chunk_msg(struct ardl_chunk *c, size_t ch, uint16_t id, uint32_t seq,
                                    int64_t log_ns, int64_t pub_ns, size_t data_len);

/* A finished chunk, ready for the file: Chunk record then its Message Index records. */
struct ardl_sealed {
    struct ardc_buf head; /* chunk record up to (and including) the records length */
    struct ardc_buf body; /* the (compressed) records; may alias nothing */
    struct ardc_buf tail; /* message index records */
    int64_t start_ns, end_ns;
    uint64_t messages, uncompressed;
    const char *compression;
    uint16_t *mi_ids; /* channel id of each message index record */
    uint64_t *mi_off; /* offset of each within tail */
    size_t nmi;
    uint64_t *per_channel; /* copied counts by channel index */
    size_t nch;
};

/* Seal chunk c into s (compressing with zstd at `level` when level > 0, CRC of the
 * uncompressed records unless !crc), then reset c. Returns 0 or ARD_ENOMEM / ARD_ESYS
 * (compression). */
ARDI_HIDDEN int ardl_chunk_seal(struct ardl_chunk *c, int level, bool crc, struct ardl_sealed *s);
ARDI_HIDDEN void ardl_sealed_free(struct ardl_sealed *s);

#endif /* ARDL_H */
