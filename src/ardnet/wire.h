/*
 * wire.h - the ardnet datagram: header layout, parsing, payload byte order (see docs/wire.md).
 *
 * Everything on the wire is little-endian. A datagram is a 56-byte header followed by exactly
 * `size` payload bytes. Pure functions only (no I/O), so that unit tests and the fuzzer can
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
/* Largest UDP payload over IPv4 (65535 - 20 IP - 8 UDP) minus our header. */
#define ARDW_MAX_DGRAM 65507u
#define ARDW_MAX_PAYLOAD (ARDW_MAX_DGRAM - ARDW_HDR_SIZE)

struct ardw_hdr {
    uint8_t version;
    uint8_t flags; /* must be 0 in version 1 */
    uint32_t conn_id;
    uint32_t size;      /* payload bytes */
    uint64_t epoch;     /* sender's start time, CLOCK_REALTIME ns: grows with each restart */
    uint64_t seq;       /* writer's sequence number of the packet */
    int64_t mono_ns;    /* writer's send time, CLOCK_MONOTONIC (writer's host) */
    int64_t real_ns;    /* writer's send time, CLOCK_REALTIME */
    uint64_t type_hash; /* ard_type_hash of the connection's type, 0 for opaque */
};

/* Why a datagram was not delivered. The order is the order of the checks. */
enum ardw_cause {
    ARDW_OK = 0,
    ARDW_TRUNCATED, /* shorter than the header, or than header + declared size */
    ARDW_OVERSIZED, /* longer than header + declared size, or than the receive buffer */
    ARDW_MAGIC,
    ARDW_VERSION,   /* unknown version or non-zero flags */
    ARDW_CONN,      /* connection id is not the route's */
    ARDW_SIZE,      /* payload size is not the connection's */
    ARDW_TYPE,      /* type hash is not the connection's */
    ARDW_PEER,      /* source address is not the configured peer */
    ARDW_DUPLICATE, /* same epoch and sequence as the last delivered */
    ARDW_OLD,       /* same epoch, older sequence (reordered) */
    ARDW_OLD_EPOCH, /* from an older epoch than the last delivered (sender was restarted) */
    ARDW_STALE,     /* after a receiver restart: written before the packet the local
                     * connection already holds (see ardn_route_take) */
    ARDW_NCAUSES
};

/* Short name of a cause, e.g. "truncated" (used in counters). */
const char *ardw_cause_name(enum ardw_cause c);

/* What the receiver expects; conn_id 0 accepts any connection id. */
struct ardw_expect {
    uint32_t conn_id;
    uint32_t size;
    uint64_t type_hash;
};

/* Write the header into buf[0..ARDW_HDR_SIZE) (version and flags are set here). */
void ardw_put_hdr(uint8_t *buf, const struct ardw_hdr *h);

/* Read and check the header of a datagram of `len` bytes. On ARDW_OK, *h is filled and the
 * payload is buf[ARDW_HDR_SIZE .. ARDW_HDR_SIZE + h->size). Never reads beyond len. */
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
