/*
 * ardnet_log.h - write and read ardnet recordings (MCAP files) without any running system.
 *
 * A recording is an MCAP file (https://mcap.dev/spec, profile "ros2"): one channel per
 * connection, whose schema is the connection's type descriptor as a ROS 2 .msg definition
 * ("float64[7] q"), messages in little-endian CDR, log time = the recorder's receive time,
 * publish time = the writer's CLOCK_REALTIME send stamp, chunked (optionally zstd-compressed)
 * and indexed. docs/recording.md draws the layout. `ard record` writes these files with this
 * API; `ard play`, `ard export` and `ard info` read them with it.
 *
 * The library libardnet_log (-lardnet_log -lardnet; pkg-config ardnet_log; CMake
 * ardnet::log), with the conventions of ardnet.h: functions returning int give 0 or a
 * documented non-negative value on success and a negative ARD_E* code on failure;
 * ard_errdetail() then names the file, the byte offset and the cause. Nothing here prints,
 * exits, or touches shared memory. A writer or reader object is used by one thread at a time
 * (the writer's optional background thread is internal to it).
 */
#ifndef ARDNET_LOG_H
#define ARDNET_LOG_H

#include "ardnet.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#pragma GCC visibility push(default)
#endif

/* ------------------------------------------------------------------------------------------
 * Writing
 * ---------------------------------------------------------------------------------------- */

typedef struct ard_logw ard_logw;

struct ard_logw_opts {
    const char *compression; /* NULL or "": none; "zstd" */
    int zstd_level;          /* 0: 1 (fast); 1..19 */
    size_t chunk_size;       /* uncompressed bytes that close a chunk; 0: 1 MiB */
    int64_t chunk_ns;        /* a chunk older than this (by log time) is closed; 0: 1 s */
    /* 0: chunks are compressed and written by the calling thread inside ard_logw_write.
     * > 0: a background thread of the writer does it, with at most this many bytes of closed
     * chunks waiting; ard_logw_write then never waits for the disk (see its return codes). */
    size_t queue_bytes;
    int background_nice; /* nice value of the background thread (0: leave alone) */
    const char *domain;  /* metadata "domain" (NULL: not recorded) */
    bool no_crc;         /* chunks without CRC32 (0 in the file: readers skip the check);
                          * saves one pass over every byte (about 1 GB/s of CPU) */
};

/* Create (truncate) `path` and write the MCAP magic, header and the "ardnet" metadata record
 * (host, domain, version, start time). `opts` may be NULL for the defaults.
 * Allocates. Returns NULL on error (ard_lasterror(): ARD_EINVAL bad option, ARD_ESYS). */
ard_logw *ard_logw_open(const char *path, const struct ard_logw_opts *opts);

/* Declare a connection: its name (the channel's topic), its type descriptor (NULL or "" for
 * opaque bytes, recorded as "uint8[size] data") and packet size. Writes its Schema and
 * Channel records (the original descriptor and size in the channel's metadata). Channels get
 * ids 1, 2, ... in order. Returns the channel index (>= 0, for ard_logw_write), ARD_ETYPE
 * (descriptor does not parse or does not match size), ARD_EINVAL, or a write error. */
ARD_NODISCARD int ard_logw_add(ard_logw *w, const char *conn, const char *type, size_t size);

/* Append one packet (the channel's size bytes) with its sequence number, log time (receive
 * time, ns since the Unix epoch) and publish time (the writer's realtime stamp). Log times
 * should not decrease. Encodes into the current chunk (one copy); closes the chunk when it is
 * full or old. Returns 0; ARD_EBUSY when the background queue is full (the packet is not
 * recorded and counted as missed: the disk is too slow); ARD_ESYS when writing failed (the
 * detail names the file and errno, e.g. no space left; the file stays readable up to its
 * last complete chunk and every later write fails the same way); ARD_EINVAL. */
ARD_NODISCARD int ard_logw_write(ard_logw *w, int ch, const void *packet, uint64_t seq,
                                 int64_t log_ns, int64_t real_ns);

/* ard_logw_write for a recorder that copies straight from shared memory (one copy): reserves
 * the message, then calls copy(dst, arg) to write the channel's size bytes of packet at dst.
 * copy returns false when the packet could not be taken (e.g. overwritten meanwhile): nothing
 * is recorded. Returns 1 recorded, 0 copy declined, or the errors of ard_logw_write. */
ARD_NODISCARD int ard_logw_write_with(ard_logw *w, int ch, uint64_t seq, int64_t log_ns,
                                      int64_t real_ns, bool (*copy)(void *dst, void *arg),
                                      void *arg);

/* Count `n` packets of channel `ch` that were not recorded (sequence gaps, queue full).
 * The totals go into the file's "ardnet.connections" metadata at close. */
void ard_logw_missed(ard_logw *w, int ch, uint64_t n);

/* Close the current chunk now (it is written, or queued for the background thread).
 * Returns 0 or the first write error. */
ARD_NODISCARD int ard_logw_flush(ard_logw *w);

/* Finish the current file (like ard_logw_close, in the background thread when there is one)
 * and continue in `path`, which gets every channel declared so far. Missed counts restart
 * from zero in the new file. Returns 0 or an error (the old file was finished if possible). */
ARD_NODISCARD int ard_logw_rotate(ard_logw *w, const char *path);

/* Messages and bytes written to the current file so far (after compression), for rotation. */
uint64_t ard_logw_bytes(const ard_logw *w);

/* The first write error of the background thread (0 if none). Non-blocking. */
int ard_logw_error(const ard_logw *w);

/* Messages of channel `ch` in complete chunks written to disk so far, over every file of this
 * writer (a rotation does not reset it). After ard_logw_finish: what the file(s) hold, even
 * when writing failed (e.g. a full disk) and packets taken were lost. */
uint64_t ard_logw_written(const ard_logw *w, int ch);

/* Everything ard_logw_close does except freeing the writer: afterwards only
 * ard_logw_written, ard_logw_error and ard_logw_close may be called (others: ARD_EINVAL).
 * Returns what ard_logw_close would; a later ard_logw_close returns the same. */
ARD_NODISCARD int ard_logw_finish(ard_logw *w);

/* Write the last chunk, the "ardnet.connections" metadata (per connection: descriptor, size,
 * recorded and missed counts), the Data End record, the summary (schemas, channels,
 * statistics, chunk and metadata indexes), summary offsets and the footer; close the file and
 * free everything. Waits for the background thread. Returns 0 or the first error met while
 * writing (the file is then readable up to its last complete chunk). NULL is fine. */
int ard_logw_close(ard_logw *w);

/* ------------------------------------------------------------------------------------------
 * Reading
 * ---------------------------------------------------------------------------------------- */

typedef struct ard_logr ard_logr;

/* One connection (channel) of a recording. */
struct ard_log_conn {
    uint16_t channel_id;
    const char *name;   /* ardnet name (metadata "ardnet.name"; else the topic) */
    const char *type;   /* original ardnet descriptor, "" for opaque */
    size_t size;        /* packet size; 0 when the channel is not an ardnet one */
    bool ardnet;        /* written by ardnet (packets can be decoded) */
    const char *schema; /* schema data (the .msg definition), "" if none; binary
                         * schemas may hold zero bytes: schema_len is its length */
    size_t schema_len;
    const char *schema_name;     /* "" if none */
    const char *schema_encoding; /* "ros2msg", ...; "" if none */
    const char *encoding;        /* message encoding ("cdr") */
    uint64_t count;              /* messages in the file */
    uint64_t missed;             /* from the "ardnet.connections" metadata (0 if absent) */
    uint64_t first_ns, last_ns;  /* log time of its first and last message */
    const char *topic;           /* the channel's topic ("/arm/state" for arm.state) */
};

struct ard_log_summary {
    uint64_t messages, chunks, file_size;
    uint64_t start_ns, end_ns; /* log times of the first and last message (0: none) */
    const char *compression;   /* of the chunks: "", "zstd", "lz4", "mixed" */
    bool complete;             /* the file has its summary and footer */
    /* A file cut short (recorder killed): complete is false, valid_end is the offset up to
     * which records were read, and cut says what was found there. */
    uint64_t valid_end;
    const char *cut; /* "" when not cut */
};

/* One message, valid until the next call on the reader. */
struct ard_log_msg {
    size_t conn;        /* index in the connection list */
    uint64_t seq;       /* MCAP sequence (the writer's sequence number, low 32 bits) */
    uint64_t log_ns;    /* receive time (ns; MCAP times are unsigned: 2^63 and more kept) */
    uint64_t real_ns;   /* writer's realtime stamp (publish time) */
    const void *packet; /* decoded packet (conn's size bytes); NULL for a foreign channel */
    const void *data;   /* the message bytes as stored (CDR) */
    size_t data_len;
    uint64_t offset; /* file offset of the chunk (or record) holding it */
};

/* Open a recording and check it from end to end: magic, header, every record's length,
 * every chunk's size and CRC and decompression (none, zstd, and lz4 when libardnet was built
 * with liblz4), the data section CRC of the Data End record and every attachment's CRC
 * (when not zero), every message's channel and CDR size.
 * A file that ends inside a record (a recorder killed) is accepted up to its last complete
 * record (see ard_log_summary.cut). Anything else wrong is refused: NULL with
 * ard_lasterror() ARD_ESTALE (not MCAP, or damaged) or ARD_ESYS, and a detail naming the
 * file, the byte offset and the cause. Allocates; reads the whole file once. */
ard_logr *ard_logr_open(const char *path);

size_t ard_logr_nconns(const ard_logr *r);
const struct ard_log_conn *ard_logr_conn(const ard_logr *r, size_t i);
/* Index of the first connection named `name` (MCAP allows several channels with one topic:
 * look through ard_logr_conn for the others), or -1. */
int ard_logr_find(const ard_logr *r, const char *name);
void ard_logr_summary(const ard_logr *r, struct ard_log_summary *s);
/* Value of `key` in metadata record `name` ("ardnet": host, domain, version, start_ns), or
 * NULL. */
const char *ard_logr_meta(const ard_logr *r, const char *name, const char *key);
/* Every metadata record of the file (any writer's), in file order: record i's name, and its
 * npairs key/value pairs in kv[0], kv[1], ... (key, value, key, value, ...); NULL when i is
 * out of range. The strings live as long as the reader. */
size_t ard_logr_nmeta(const ard_logr *r);
const char *ard_logr_meta_at(const ard_logr *r, size_t i, const char *const **kv, size_t *npairs);

/* An attachment record (its data is not kept: `ard info` lists them). */
struct ard_log_attachment {
    const char *name, *media_type;
    uint64_t log_ns, create_ns; /* as the writer put them */
    uint64_t size;              /* bytes of data */
};
size_t ard_logr_nattachments(const ard_logr *r);
const struct ard_log_attachment *ard_logr_attachment(const ard_logr *r, size_t i);

/* Position before the first message whose log time is >= log_ns (chunks that end earlier
 * are skipped by their index, not decompressed). ard_logr_seek(r, 0) rewinds. Returns 0. */
ARD_NODISCARD int ard_logr_seek(ard_logr *r, uint64_t log_ns);

/* The next message in file order (log time order for files written by ardnet).
 * Returns 1 with *m filled, 0 at the end, or a negative error (ARD_ESTALE if the file
 * changed since it was opened, ARD_ESYS). */
ARD_NODISCARD int ard_logr_next(ard_logr *r, struct ard_log_msg *m);

void ard_logr_close(ard_logr *r);

/* Check a file given as bytes in memory (what ard_logr_open does after reading it).
 * Returns 0 or ARD_ESTALE with the detail; for the fuzzer and for tools that hold a copy. */
ARD_NODISCARD int ard_log_check(const void *buf, size_t len);

#if defined(__GNUC__) || defined(__clang__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif

#endif /* ARDNET_LOG_H */
