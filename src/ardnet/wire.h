/*
 * wire.h - the ardnet datagram: header layout, parsing, payload byte order (see docs/wire.md).
 *
 * Everything on the wire is little-endian. A datagram is a 56-byte header followed by exactly
 * `size` payload bytes, or, for a packet that does not fit one datagram, a fragment: a 64-byte
 * header (flag ARDW_FLAG_FRAG; the 56 bytes plus offset, index and count) followed by one
 * piece of the payload. Pure functions only (no I/O), so that unit tests and the fuzzer can
 * drive them directly.
 */
#ifndef ARDNET_WIRE_H
#define ARDNET_WIRE_H

#include "ardnet.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ARDW_MAGIC_WORD 0x4e445241u /* bytes 'A' 'R' 'D' 'N' */
#define ARDW_WIRE_VERSION 1u
#define ARDW_HDR_SIZE 56u
#define ARDW_FRAG_HDR_SIZE 64u
#define ARDW_FLAG_FRAG 0x01u
/* Largest UDP payload over IPv4 (65535 - 20 IP - 8 UDP). */
#define ARDW_MAX_DGRAM 65507u
#define ARDW_MIN_DGRAM 512u /* smallest --max-datagram: keeps a packet within ARDW_MAX_FRAGS */
/* Default --max-datagram: an Ethernet MTU of 1500 minus the IPv4 (20) or IPv6 (40) and UDP (8)
 * headers, so that the kernel never fragments at the IP level. */
#define ARDW_DEFAULT_DGRAM 1472u
#define ARDW_DEFAULT_DGRAM6 1452u
#define ARDW_MAX_PAYLOAD 65536u /* 64 KiB */
#define ARDW_MAX_FRAGS 256u     /* fragments of one packet (a 65536-byte packet needs <= 147) */

struct ardw_hdr {
    uint8_t version;
    uint8_t flags; /* 0, or ARDW_FLAG_FRAG */
    uint32_t conn_id;
    uint32_t size;      /* payload bytes of the whole packet */
    uint64_t epoch;     /* sender's start time, CLOCK_REALTIME ns: grows with each restart */
    uint64_t seq;       /* writer's sequence number of the packet */
    int64_t mono_ns;    /* writer's send time, CLOCK_MONOTONIC (writer's host) */
    int64_t real_ns;    /* writer's send time, CLOCK_REALTIME */
    uint64_t type_hash; /* ard_type_hash of the connection's type, 0 for opaque */
    /* Fragments only; frag_count 0 means a whole packet in one datagram. */
    uint16_t frag_index; /* 0 .. frag_count-1 */
    uint16_t frag_count; /* 2 .. ARDW_MAX_FRAGS */
    uint32_t frag_off;   /* payload offset of this fragment: frag_index * frag_chunk */
    uint32_t frag_len;   /* payload bytes in this fragment (datagram length - 64) */
    uint32_t frag_chunk; /* payload bytes of every fragment but the last (derived) */
};

/* Why a datagram was not delivered. The order is the order of the checks. */
enum ardw_cause {
    ARDW_OK = 0,
    ARDW_TRUNCATED, /* shorter than the header, or than header + declared size */
    ARDW_OVERSIZED, /* longer than header + declared size, or than the receive buffer */
    ARDW_MAGIC,
    ARDW_VERSION,        /* unknown version or non-zero flags */
    ARDW_CONN,           /* connection id is not the route's */
    ARDW_SIZE,           /* payload size is not the connection's */
    ARDW_TYPE,           /* type hash is not the connection's */
    ARDW_PEER,           /* source address is not the configured peer */
    ARDW_DUPLICATE,      /* same epoch and sequence as the last delivered */
    ARDW_OLD,            /* same epoch, older sequence (reordered) */
    ARDW_OLD_EPOCH,      /* from an older epoch than the last delivered (sender was restarted) */
    ARDW_STALE,          /* after a receiver restart: written before the packet the local
                          * connection already holds (see ardn_route_take) */
    ARDW_FRAG_INVALID,   /* fragment fields inconsistent on their own (offset, length, index,
                          * count against the payload size) */
    ARDW_FRAG_CONFLICT,  /* fragment disagrees with the others of its packet (count, chunk,
                          * timestamps, connection, type) */
    ARDW_FRAG_DUPLICATE, /* fragment already held for the packet in progress */
    ARDW_FRAG_OLD,       /* fragment of a packet older than the one in progress */
    ARDW_INCOMPLETE,     /* a packet abandoned with fragments missing (counted per packet,
                          * when a newer packet's fragment or a newer packet arrives) */
    ARDW_NCAUSES,
    ARDW_PENDING = -1 /* not a drop: a fragment was kept, its packet is not complete yet */
};

/* Short name of a cause, e.g. "truncated" (used in counters). */
const char *ardw_cause_name(enum ardw_cause c);

/* What the receiver expects; conn_id 0 accepts any connection id. */
struct ardw_expect {
    uint32_t conn_id;
    uint32_t size;
    uint64_t type_hash;
};

/* Write the header into buf and return its length: ARDW_HDR_SIZE, or ARDW_FRAG_HDR_SIZE when
 * h->frag_count != 0 (then frag_index, frag_count and frag_off are written too). Version and
 * flags are set here. */
size_t ardw_put_hdr(uint8_t *buf, const struct ardw_hdr *h);

/* Read and check the header of a datagram of `len` bytes. On ARDW_OK, *h is filled and the
 * payload is buf[ARDW_HDR_SIZE .. ARDW_HDR_SIZE + h->size), or for a fragment (frag_count != 0)
 * buf[ARDW_FRAG_HDR_SIZE .. len), to be placed at payload offset frag_off. A fragment is
 * checked on its own: its offset, length, index and count must describe one piece of a
 * payload of `size` bytes cut into equal chunks (the last one shorter or equal). Never reads
 * beyond len. */
enum ardw_cause ardw_parse(const uint8_t *buf, size_t len, const struct ardw_expect *e,
                           struct ardw_hdr *h);

/* Receiver state of one route: the newest delivered (epoch, seq). */
struct ardw_track {
    bool have;
    uint64_t epoch;
    uint64_t seq;
};

/* Decide whether (epoch, seq) is newer than what was delivered; on ARDW_OK, records it.
 * A larger epoch is a restarted sender: accepted with any sequence except the last delivered
 * one (the restarted sender re-sending the packet its previous run already delivered). */
enum ardw_cause ardw_accept(struct ardw_track *t, uint64_t epoch, uint64_t seq);
/* The same decision without recording it. */
enum ardw_cause ardw_order(const struct ardw_track *t, uint64_t epoch, uint64_t seq);

/* Number of datagrams a packet of `size` bytes needs with datagrams of at most max_dgram
 * bytes (1: not fragmented), and the payload bytes per fragment (*chunk, 0 if 1). */
unsigned ardw_frag_plan(size_t size, size_t max_dgram, size_t *chunk);

/* Reassembly of the one packet in progress of a route (latest value: never more than one).
 * `data` (cap bytes, wire order) is provided by the owner, allocated at start-up. */
struct ardw_reasm {
    uint8_t *data;
    uint32_t cap;
    bool busy; /* a packet is in progress */
    uint64_t epoch, seq;
    int64_t mono_ns, real_ns;
    uint32_t conn_id, size, chunk;
    uint64_t type_hash;
    uint16_t count, got;
    uint32_t stall; /* fragments of older packets since the last progress */
    uint64_t bits[ARDW_MAX_FRAGS / 64];
};

/* Add a fragment (h from ardw_parse with frag_count != 0, frag = its frag_len bytes) whose
 * (epoch, seq) the caller already found newer than what was delivered. Returns ARDW_PENDING
 * (kept), ARDW_OK (the packet is complete in data[0..h->size); no packet is in progress
 * any more) or a drop cause: ARDW_FRAG_OLD, ARDW_FRAG_CONFLICT, ARDW_FRAG_DUPLICATE,
 * ARDW_FRAG_INVALID (larger than cap). *abandoned is set when an incomplete older packet was
 * given up for this one. A packet in progress that makes no progress while many fragments of
 * older packets arrive (a damaged sequence number, say) is given up for them too, so that
 * one bad fragment cannot block a route. */
enum ardw_cause ardw_reasm_add(struct ardw_reasm *a, const struct ardw_hdr *h, const uint8_t *frag,
                               bool *abandoned);

/* Give up the packet in progress if it is not newer than (epoch, seq) (just delivered whole);
 * returns true if one was given up. */
bool ardw_reasm_supersede(struct ardw_reasm *a, uint64_t epoch, uint64_t seq);

/* Payload conversion. `fields` is a parsed type descriptor (nfields 0: opaque bytes, copied
 * untouched). Host to wire and wire to host; on a little-endian host a copy. */
void ardw_payload_to_wire(uint8_t *dst, const void *src, size_t size,
                          const struct ard_field *fields, size_t nfields);
void ardw_payload_from_wire(void *dst, const uint8_t *src, size_t size,
                            const struct ard_field *fields, size_t nfields);

/* Reverse the bytes of every element of every field (the conversion a big-endian host does).
 * Bytes not covered by a field (padding) are copied. Exposed for tests. */
void ardw_payload_swap(uint8_t *dst, const uint8_t *src, size_t size,
                       const struct ard_field *fields, size_t nfields);

/* 32-bit FNV-1a of a connection name: the default connection id. Never 0. */
uint32_t ardw_conn_id(const char *name);

#endif /* ARDNET_WIRE_H */
