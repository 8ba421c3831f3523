/*
 * auto_wire.h - the catalog's announcement datagram (ardnet --auto): what a host has and what
 * it wants, see docs/wire.md "Catalog announcements".
 *
 * Little-endian like the data datagrams. A 32-byte header, the sender's host name, then
 * entries back to back, filling the datagram exactly. One announcement (a snapshot of the
 * host's has/want lists) may take several datagrams: parts 0 .. nparts-1 of one snapshot
 * sequence number. Pure functions only (no I/O), for the unit tests and the fuzzer.
 */
#ifndef ARDNET_AUTO_WIRE_H
#define ARDNET_AUTO_WIRE_H
#include "ardnet.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ARDA_MAGIC_WORD 0x43445241u /* bytes 'A' 'R' 'D' 'C' */
#define ARDA_WIRE_VERSION 1u
#define ARDA_HDR_SIZE 32u
#define ARDA_ENTRY_HDR_SIZE 12u
#define ARDA_MAX_HOST 63u    /* longest host name carried */
#define ARDA_MAX_PARTS 64u   /* datagrams of one snapshot */
#define ARDA_MAX_DGRAM 4096u /* longest announcement datagram accepted */
/* Datagrams are filled up to this (one entry with a long type may need more, up to
 * ARDA_MAX_DGRAM): no IP fragmentation on Ethernet. */
#define ARDA_FILL_DGRAM 1400u
/* Most entries in one datagram: the smallest entry is 13 bytes. */
#define ARDA_MAX_ENTRIES ((ARDA_MAX_DGRAM - ARDA_HDR_SIZE) / (ARDA_ENTRY_HDR_SIZE + 1))

enum arda_kind { ARDA_HAS = 1, ARDA_WANT = 2 };
enum arda_order { ARDA_LITTLE = 0, ARDA_BIG = 1 };

/* One connection a host has (a live local writer) or wants (local readers, no writer). */
struct arda_entry {
    uint8_t kind;  /* enum arda_kind */
    uint8_t order; /* enum arda_order: the host's byte order */
    uint16_t port; /* WANT: the UDP port the host receives this connection on; HAS: 0 */
    uint32_t size; /* packet size, 1 .. ARDW_MAX_PAYLOAD */
    char name[ARD_MAX_NAME + 1];
    char type[ARD_MAX_TYPE + 1]; /* canonical descriptor, "" for opaque */
};

struct arda_msg {
    uint64_t host_id; /* the sending ardnet's random identity (new at each start), not 0 */
    uint32_t domain;  /* arda_domain_hash of the sender's domain */
    uint32_t seq;     /* snapshot number: every part of one snapshot has the same */
    uint16_t part;    /* 0 .. nparts-1 */
    uint16_t nparts;  /* 1 .. ARDA_MAX_PARTS */
    uint16_t count;   /* entries in this datagram */
    char host[ARDA_MAX_HOST + 1];
};

/* Why an announcement datagram was refused. */
enum arda_cause {
    ARDA_OK = 0,
    ARDA_TRUNCATED, /* shorter than its header, host name or an entry says */
    ARDA_OVERSIZED, /* longer than ARDA_MAX_DGRAM, or bytes after the last entry */
    ARDA_MAGIC,     /* not an announcement */
    ARDA_VERSION,   /* unknown version, flags or header length, reserved bytes not 0 */
    ARDA_PARTS,     /* part not below nparts, nparts 0 or above ARDA_MAX_PARTS, host id 0 */
    ARDA_HOST,      /* host name empty or with characters other than [A-Za-z0-9._-] */
    ARDA_ENTRY,     /* entry: unknown kind or order, size 0 or too large, port of a has,
                     * no port for a want, reserved byte not 0 */
    ARDA_NAME,      /* entry: not a valid connection name */
    ARDA_TYPE,      /* entry: type not a canonical descriptor, or not of the entry's size */
    ARDA_NCAUSES
};

const char *arda_cause_name(enum arda_cause c);
/* FNV-1a of a domain name: announcements of another domain are not this catalog's. */
uint32_t arda_domain_hash(const char *domain);
/* This machine's byte order. */
enum arda_order arda_host_order(void);

/* Bytes an entry takes on the wire. */
size_t arda_entry_len(const struct arda_entry *e);
/* Write the header and host name (count 0, part 0 of 1) into buf (ARDA_MAX_DGRAM bytes);
 * returns the length so far. */
size_t arda_put_hdr(uint8_t *buf, const struct arda_msg *m);
/* Append entry e at len (the caller checked that it fits: len + arda_entry_len(e) <=
 * ARDA_MAX_DGRAM); the header's count goes up by one. Returns the new length. */
size_t arda_put_entry(uint8_t *buf, size_t len, const struct arda_entry *e);
/* Set part and nparts of a datagram written by arda_put_hdr. */
void arda_set_part(uint8_t *buf, uint16_t part, uint16_t nparts);

/* Read and check an announcement datagram of len bytes: header, host name and every entry
 * (into e, room for max entries; more entries than max is ARDA_OVERSIZED). Nothing is
 * accepted unless all of it is valid. Never reads beyond len. */
enum arda_cause arda_parse(const uint8_t *buf, size_t len, struct arda_msg *m, struct arda_entry *e,
                           size_t max);

#endif /* ARDNET_AUTO_WIRE_H */
