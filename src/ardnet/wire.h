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

/* Byte-wise little-endian access: independent of host order and alignment. */
static inline void ardw_put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static inline void ardw_put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline void ardw_put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint16_t ardw_get16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}

static inline uint32_t ardw_get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t ardw_get64(const uint8_t *p)
{
    return (uint64_t)ardw_get32(p) | (uint64_t)ardw_get32(p + 4) << 32;
}

#define ARDW_MAGIC_WORD 0x4e445241u /* bytes 'A' 'R' 'D' 'N' */
#define ARDW_WIRE_VERSION 1u
#define ARDW_HDR_SIZE 56u
#define ARDW_FRAG_HDR_SIZE 64u  /* a fragment of a packet of at most 64 KiB, 256 fragments */
#define ARDW_LFRAG_HDR_SIZE 72u /* a fragment of any other packet: u32 index and count */
#define ARDW_FLAG_FRAG 0x01u
#define ARDW_FLAG_DESC 0x02u /* a descriptor datagram: the sender's type descriptor as text */
#define ARDW_FLAG_PACK 0x04u /* a packed datagram: packets of several connections */
#define ARDW_DESC_EVERY_NS 1000000000LL /* a sender repeats its descriptor this often */
/* Largest UDP payload over IPv4 (65535 - 20 IP - 8 UDP). */
#define ARDW_MAX_DGRAM 65507u
#define ARDW_MIN_DGRAM 512u /* smallest --max-datagram */
/* Default --max-datagram: an Ethernet MTU of 1500 minus the IPv4 (20) or IPv6 (40) and UDP (8)
 * headers, so that the kernel never fragments at the IP level. */
#define ARDW_DEFAULT_DGRAM 1472u
#define ARDW_DEFAULT_DGRAM6 1452u
#define ARDW_MAX_PAYLOAD ARD_MAX_PACKET /* 64 MiB: the library's largest packet */
/* A fragment with the 64-byte header: a packet of at most ARDW_SHORT_PAYLOAD bytes in at most
 * ARDW_SHORT_FRAGS fragments (what every ardnet reads); any other fragmented packet has the
 * 72-byte header. */
#define ARDW_SHORT_PAYLOAD 65536u
#define ARDW_SHORT_FRAGS 256u
/* The smallest fragment chunk a sender cuts: ARDW_MIN_DGRAM less a sealed long header. */
#define ARDW_MIN_CHUNK (ARDW_MIN_DGRAM - ARDW_LFRAG_HDR_SIZE - 32u)
/* Fragments of one packet at most (64 MiB in chunks of ARDW_MIN_CHUNK). */
#define ARDW_MAX_FRAGS ((ARDW_MAX_PAYLOAD + ARDW_MIN_CHUNK - 1) / ARDW_MIN_CHUNK)
/* A packed datagram: a 24-byte header, then `count` entries of a 40-byte entry header and
 * its payload, back to back, filling the datagram exactly (docs/wire.md). */
#define ARDW_PACK_HDR_SIZE 24u
#define ARDW_ENTRY_HDR_SIZE 40u
#define ARDW_MAX_ENTRIES ((ARDW_MAX_DGRAM - ARDW_PACK_HDR_SIZE) / (ARDW_ENTRY_HDR_SIZE + 1))

struct ardw_hdr {
    uint8_t version;
    uint8_t flags; /* 0, or ARDW_FLAG_FRAG */
    uint32_t conn_id;
    uint32_t size;      /* payload bytes of the whole packet */
    uint64_t epoch;     /* the sending ardnet's random 64-bit identity, new at each start */
    uint64_t seq;       /* writer's sequence number of the packet */
    int64_t mono_ns;    /* writer's send time, CLOCK_MONOTONIC (writer's host) */
    int64_t real_ns;    /* writer's send time, CLOCK_REALTIME */
    uint64_t type_hash; /* ard_type_hash of the connection's type, 0 for opaque */
    /* Fragments only; frag_count 0 means a whole packet in one datagram. */
    uint32_t frag_index; /* 0 .. frag_count-1 */
    uint32_t frag_count; /* 2 .. ARDW_MAX_FRAGS */
    uint32_t frag_off;   /* payload offset of this fragment: frag_index * frag_chunk */
    uint32_t frag_len;   /* payload bytes in this fragment (datagram length - 64) */
    uint32_t frag_chunk; /* payload bytes of every fragment but the last (derived) */
    /* Sealed datagrams only (0 otherwise): the seal's counter (the sender's time of sending,
     * ns since its start) and when the receiver saw the sender's epoch prove it holds the
     * key (docs/wire.md, "Sealed datagrams"). */
    uint64_t seal_ctr;
    int64_t proven_ns;
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
    ARDW_EPOCH,          /* another epoch than the last delivered, within the hold-off (a late
                          * datagram of a restarted sender, or a second sender) */
    ARDW_STALE,          /* after a receiver restart: written no later than the packet the
                          * local connection already holds (see struct ardw_track) */
    ARDW_FRAG_INVALID,   /* fragment fields inconsistent on their own (offset, length, index,
                          * count against the payload size) */
    ARDW_FRAG_CONFLICT,  /* fragment disagrees with the others of its packet (count, chunk,
                          * timestamps, connection, type) */
    ARDW_FRAG_DUPLICATE, /* fragment already held for the packet in progress */
    ARDW_FRAG_OLD,       /* fragment of a packet older than the one in progress */
    ARDW_PARTIAL,        /* a packet abandoned with fragments missing (counted per packet,
                          * when a newer packet's fragment or a newer packet arrives) */
    ARDW_UNKNOWN,        /* a route that learns size and type from the sender has not yet
                          * received its descriptor */
    ARDW_PACK_INVALID,   /* a packed datagram whose entry count and lengths do not fill it
                          * exactly (nothing of it is delivered) */
    ARDW_AUTH,           /* with a key: not sealed, sealed with another key, damaged or
                          * forged (the tag is checked before anything else) */
    ARDW_NCAUSES,
    ARDW_PENDING = -1, /* not a drop: a fragment was kept, its packet is not complete yet */
    ARDW_DESC = -2     /* not a drop: a valid descriptor datagram (never delivered) */
};

/* Short name of a cause, e.g. "truncated" (used in counters). */
const char *ardw_cause_name(enum ardw_cause c);

/* What the receiver expects; conn_id 0 accepts any connection id. */
struct ardw_expect {
    uint32_t conn_id;
    uint32_t size;
    uint64_t type_hash;
};

/* The header length of a fragment of a packet of `size` bytes in `count` fragments:
 * ARDW_FRAG_HDR_SIZE for size <= ARDW_SHORT_PAYLOAD and count <= ARDW_SHORT_FRAGS, else
 * ARDW_LFRAG_HDR_SIZE. */
static inline size_t ardw_frag_hlen(uint32_t size, uint32_t count)
{
    return size <= ARDW_SHORT_PAYLOAD && count <= ARDW_SHORT_FRAGS ? ARDW_FRAG_HDR_SIZE
                                                                   : ARDW_LFRAG_HDR_SIZE;
}

/* Write the header into buf and return its length: ARDW_HDR_SIZE, or for a fragment
 * (h->frag_count != 0) ardw_frag_hlen (then frag_index, frag_count and frag_off are written
 * too). Version and flags are set here. */
size_t ardw_put_hdr(uint8_t *buf, const struct ardw_hdr *h);

/* Write a descriptor datagram for the connection of h (conn_id, size, epoch, type_hash)
 * whose canonical descriptor is `type` ("" for opaque) into buf (ARDW_HDR_SIZE +
 * ARD_MAX_TYPE bytes); returns its length. */
size_t ardw_put_desc(uint8_t *buf, const struct ardw_hdr *h, const char *type);

/* Read a descriptor datagram (flags ARDW_FLAG_DESC): magic, version, header length, connection
 * id (e->conn_id, unless 0), and a descriptor text that is a valid canonical descriptor (or
 * empty) whose hash and size are the header's. On ARDW_OK, *h has conn_id, size, epoch and
 * type_hash and type[] (ARD_MAX_TYPE + 1 bytes) the text; anything else is a drop cause. */
enum ardw_cause ardw_parse_desc(const uint8_t *buf, size_t len, const struct ardw_expect *e,
                                struct ardw_hdr *h, char *type);

/* Packed datagrams (flags ARDW_FLAG_PACK). The sender writes the 24-byte header with
 * ardw_pack_begin, then appends entries with ardw_pack_add (the entry count is updated in
 * the header); buf must have room for every entry. h gives conn_id, size, seq, mono_ns,
 * real_ns and type_hash; payload is in wire order. Both return the datagram's length. */
size_t ardw_pack_begin(uint8_t *buf, uint64_t epoch);
size_t ardw_pack_add(uint8_t *buf, size_t len, const struct ardw_hdr *h, const void *payload);

/* Check the framing of a packed datagram of `len` bytes: magic, version, flags, header
 * length, reserved bytes 0, an entry count of at least 1, and entries whose sizes (each at
 * least 1) fill the datagram exactly. On ARDW_OK, *epoch and *count are set and the entries
 * can be read with ardw_pack_entry; otherwise nothing of the datagram may be delivered
 * (ARDW_TRUNCATED, ARDW_MAGIC, ARDW_VERSION, ARDW_OVERSIZED, ARDW_PACK_INVALID). Never reads
 * beyond len. */
enum ardw_cause ardw_parse_packed(const uint8_t *buf, size_t len, uint64_t *epoch, unsigned *count);

/* Read the entry at *off of a packed datagram that ardw_parse_packed accepted (start with
 * *off = ARDW_PACK_HDR_SIZE): *h as ardw_parse fills it for a whole packet (flags
 * ARDW_FLAG_PACK, the datagram's epoch); returns its payload (h->size bytes) and moves *off
 * to the next entry. */
const uint8_t *ardw_pack_entry(const uint8_t *buf, size_t *off, uint64_t epoch, struct ardw_hdr *h);

/* The route's expectations on a parsed header: connection id (unless e->conn_id is 0), then
 * size, then type hash. ARDW_OK, ARDW_CONN, ARDW_SIZE or ARDW_TYPE. */
enum ardw_cause ardw_check(const struct ardw_hdr *h, const struct ardw_expect *e);

/* Read and check the header of a datagram of `len` bytes. On ARDW_OK, *h is filled and the
 * payload is buf[ARDW_HDR_SIZE .. ARDW_HDR_SIZE + h->size), or for a fragment (frag_count != 0)
 * its last frag_len bytes, buf[len - frag_len .. len) (after a 64- or 72-byte header), to be
 * placed at payload offset frag_off. A fragment is
 * checked on its own: its offset, length, index and count must describe one piece of a
 * payload of `size` bytes cut into equal chunks (the last one shorter or equal). Never reads
 * beyond len. With e NULL, only the framing is checked (not connection, size, type). */
enum ardw_cause ardw_parse(const uint8_t *buf, size_t len, const struct ardw_expect *e,
                           struct ardw_hdr *h);

/* A change of epoch is accepted once the current epoch has delivered nothing for this long,
 * and a route whose sender is refused as older for this long (while it makes progress)
 * recovers: the bound on how long one bad datagram can stop a route (docs/wire.md). */
#define ARDW_HOLDOFF_NS 250000000LL
/* Packets of a sender, each newer than the one before, refused before a recovery. */
#define ARDW_RECOVER_COUNT 4u

/* Receiver order state of one route (docs/wire.md, "Receiver rules", 6-7). Epochs are random
 * identities, not ordered: within an epoch a larger sequence is newer; another epoch takes
 * over only after the hold-off. Refusals of a sender that keeps making progress end after
 * the hold-off too, so that a damaged or forged sequence number cannot stop a route. */
struct ardw_track {
    bool have;           /* something was delivered */
    uint64_t epoch, seq; /* the last delivered */
    bool have_prev;      /* prev_seq: the one delivered before it, in the same epoch */
    uint64_t prev_seq;
    int64_t last_ns;       /* receiver's CLOCK_MONOTONIC at the last delivery */
    int64_t epoch_ns;      /* ... at the first delivery of the current epoch */
    uint64_t last_ctr;     /* sealed: the seal counter of the last delivery */
    bool floor;            /* until the first delivery: refuse real_ns <= floor_real_ns */
    int64_t floor_real_ns; /* (a restarted receiver: the packet its output already holds) */
    /* Refusals (old, stale) since the last delivery. */
    bool refusing;
    int64_t refuse_ns;           /* time of the first */
    uint64_t ref_epoch, ref_seq; /* epoch of the refused sender, newest sequence refused */
    uint32_t ref_count;          /* refused packets of it, each newer than the one before */
    /* Recovery under way: (arm_epoch, seq >= arm_seq) is accepted until the next delivery. */
    bool armed;
    uint64_t arm_epoch, arm_seq;
    uint64_t recoveries; /* how often the refusals were ended by recovery */
};

/* Decide whether the datagram (h's epoch, seq and real_ns), received at now_ns, may be
 * delivered (or kept as a fragment). Records refusals (for recovery), never a delivery. */
enum ardw_cause ardw_order(struct ardw_track *t, const struct ardw_hdr *h, int64_t now_ns);
/* Record the delivery of h's packet at now_ns. */
void ardw_delivered(struct ardw_track *t, const struct ardw_hdr *h, int64_t now_ns);

/* Number of datagrams a packet of `size` bytes needs with datagrams of at most max_dgram
 * bytes (1: not fragmented), and the payload bytes per fragment (*chunk, 0 if 1): chunks of
 * max_dgram - 64 when that makes at most ARDW_SHORT_FRAGS of a packet of at most 64 KiB,
 * else of max_dgram - 72. */
unsigned ardw_frag_plan(size_t size, size_t max_dgram, size_t *chunk);

/* Reassembly of the one packet in progress of a route (latest value: never more than one).
 * `data` (cap bytes, wire order) is provided by the owner: allocated at start-up, or the
 * connection's loaned slot; `bits` (one bit per fragment, ardw_reasm_words(cap) words) too.
 * Nothing is allocated per packet. */
struct ardw_reasm {
    uint8_t *data;
    uint32_t cap;
    uint64_t *bits;     /* NULL: `small` (at most ARDW_SHORT_FRAGS fragments) */
    uint32_t max_count; /* with bits: fragments a packet may have, 64 per word of bits */
    bool busy;          /* a packet is in progress */
    bool current;       /* its epoch was the one last delivered when it started */
    uint64_t epoch, seq;
    int64_t mono_ns, real_ns;
    uint32_t conn_id, size, chunk;
    uint64_t type_hash;
    uint32_t count, got;
    uint32_t stall;      /* fragments of other packets since the last progress */
    int64_t progress_ns; /* receiver time of the last fragment kept */
    uint64_t small[ARDW_SHORT_FRAGS / 64];
};

/* Words of bits a reassembly of packets of up to `cap` bytes needs: room for the most
 * fragments such a packet can validly have (chunks of ARDW_MIN_CHUNK, or 256). */
static inline size_t ardw_reasm_words(size_t cap)
{
    size_t n = (cap + ARDW_MIN_CHUNK - 1) / ARDW_MIN_CHUNK;
    if (n < ARDW_SHORT_FRAGS)
        n = ARDW_SHORT_FRAGS;
    return (n + 63) / 64;
}

/* Add a fragment (h from ardw_parse with frag_count != 0, frag = its frag_len bytes) that
 * ardw_order accepted, received at now_ns; `current` says that its epoch is the one last
 * delivered. Returns ARDW_PENDING (kept), ARDW_OK (the packet is complete in data[0..h->size);
 * no packet is in progress any more) or a drop cause: ARDW_FRAG_OLD, ARDW_FRAG_CONFLICT,
 * ARDW_FRAG_DUPLICATE, ARDW_FRAG_INVALID (larger than cap, or more fragments than
 * max_count). *abandoned is set when an
 * incomplete packet was given up for this one. A fragment of the packet in progress's epoch
 * with a larger sequence, or of the current epoch when the one in progress is not, replaces
 * it; any other fragment is refused as FRAG_OLD until the packet in progress has made no
 * progress for ARDW_HOLDOFF_NS or 4 * count + 16 fragments, so that one bad fragment cannot
 * block a route. */
enum ardw_cause ardw_reasm_add(struct ardw_reasm *a, const struct ardw_hdr *h, const uint8_t *frag,
                               bool current, int64_t now_ns, bool *abandoned);

/* Give up the packet in progress unless it is of `epoch` with a larger sequence than `seq`
 * (just delivered whole); returns true if one was given up. */
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
