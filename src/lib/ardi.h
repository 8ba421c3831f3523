/*
 * ardi.h - internal declarations shared by the library's source files. Never installed.
 */
#ifndef ARDI_H
#define ARDI_H

#include "ardnet.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define ARDI_HIDDEN __attribute__((visibility("hidden")))
#define ARDI_PRINTF(a, b) __attribute__((format(printf, a, b)))

/* ---- error.c ---------------------------------------------------------------------------- */

/* Record `code` and a formatted detail for this thread; returns `code`. */
ARDI_HIDDEN int ardi_fail(int code, const char *fmt, ...) ARDI_PRINTF(2, 3);
/* Like ardi_fail, appending ": strerror(err)". */
ARDI_HIDDEN int ardi_fail_errno(int code, int err, const char *fmt, ...) ARDI_PRINTF(3, 4);

/* ---- names ------------------------------------------------------------------------------ */

/* 0 if `s` is a valid name ([A-Za-z0-9_.-], 1..ARD_MAX_NAME; no '.' when !dots). */
ARDI_HIDDEN int ardi_check_name(const char *what, const char *s, bool dots);
/* "/ard.<domain>.<conn>" into buf (size >= ARDI_SHM_NAME_MAX). */
#define ARDI_SHM_NAME_MAX (2 * ARD_MAX_NAME + 8)
ARDI_HIDDEN void ardi_shm_name(char *buf, const char *domain, const char *conn);
#define ARDI_SHM_DIR "/dev/shm"
#define ARDI_SHM_PREFIX "ard."

/* ---- types.c ---------------------------------------------------------------------------- */

/* Canonical form without field names ("f64[7] u32"): the layout alone. Like
 * ard_type_normalize. */
ARDI_HIDDEN int ardi_type_layout(const char *desc, char *buf, size_t buflen);
/* Do two descriptors describe the same layout (names ignored)? Unparsable ones compare as
 * text. */
ARDI_HIDDEN bool ardi_type_same_layout(const char *a, const char *b);

/* ---- segment.c: the shared-memory object of one connection ------------------------------ */

#define ARDI_MAGIC 0x31304e445241ull /* "ARDN01" read as little-endian bytes */
#define ARDI_VERSION 1u
#define ARDI_CACHELINE 64

/* One slot holds one packet. `lock` is a per-slot sequence lock: 2*seq+1 while the writer
 * fills it with packet `seq`, 2*seq once complete. */
struct ardi_slot {
    _Atomic uint64_t lock;
    _Atomic int64_t mono_ns; /* relaxed: protected by `lock` like the payload */
    _Atomic int64_t real_ns;
    uint8_t pad[ARDI_CACHELINE - 24];
    /* packet bytes follow, `stride - sizeof(struct ardi_slot)` of them */
};

struct ardi_seg {
    /* Immutable once magic is set (changed only under the init lock with nobody attached). */
    _Atomic uint64_t magic;
    uint32_t version;
    uint32_t nslots;
    uint64_t size;   /* packet size */
    uint64_t stride; /* bytes per slot including its header */
    uint64_t total;  /* bytes of the whole object */
    uint64_t type_hash;
    char conn[ARD_MAX_NAME + 1];
    char type[ARD_MAX_TYPE + 1];

    /* Written by the writer on every send. */
    _Alignas(ARDI_CACHELINE) _Atomic uint64_t head; /* newest complete seq, 0: none yet */
    /* Futex word. A send swaps in seq << 2 and wakes only if the old value had bit 0, which
     * readers set before sleeping; a new writer stores (n << 2) | 2 and wakes all. */
    _Atomic uint32_t wake;
    _Atomic uint32_t writer_cpu;

    /* Written rarely (attach, close). */
    _Alignas(ARDI_CACHELINE) _Atomic int32_t writer_pid;
    _Atomic uint32_t readers;
    _Atomic uint32_t spinners; /* IN ports with spinning enabled: writer publishes its CPU */

    _Alignas(ARDI_CACHELINE) uint8_t slots[]; /* nslots * stride */
};

struct ardi_map {
    int fd;
    struct ardi_seg *seg;
    size_t len;
};

struct ardi_attach_req {
    const char *domain;
    const char *conn;
    const char *port; /* for messages */
    size_t size;      /* 0: adopt existing */
    const char *type; /* canonical descriptor, "" for opaque */
    bool writer;
    unsigned mode; /* for a newly created object */
};

ARDI_HIDDEN int ardi_seg_attach(const struct ardi_attach_req *req, struct ardi_map *m);
ARDI_HIDDEN void ardi_seg_detach(struct ardi_map *m, bool writer, bool spinner);

static inline struct ardi_slot *ardi_slot_at(struct ardi_seg *s, uint64_t seq)
{
    return (struct ardi_slot *)(s->slots + (seq % s->nslots) * s->stride);
}

/* ---- options.c / port.c ----------------------------------------------------------------- */

struct ard_port {
    struct ard_port *next;
    char name[ARD_MAX_NAME + 1];
    char conn[ARD_MAX_NAME + 1];
    char type[ARD_MAX_TYPE + 1];
    enum ard_dir dir;
    size_t size;
    bool attached;
    bool wired; /* connection given by --ard */
    int64_t spin_ns;
    struct ardi_map map;
    uint64_t last_seq; /* IN: seq last returned; OUT: seq last sent */
    struct ard_info info;
};

struct ardi_wire {
    char port[ARD_MAX_NAME + 1];
    char conn[ARD_MAX_NAME + 1];
    bool used;
};

struct ardi_state {
    bool initialized;
    char domain[ARD_MAX_NAME + 1];
    bool domain_set;
    unsigned mode;
    int64_t spin_ns;
    struct ardi_wire *wires;
    size_t nwires;
    ard_port *ports; /* in creation order */
};

ARDI_HIDDEN extern struct ardi_state ardi_g;
ARDI_HIDDEN void ardi_lock(void);
ARDI_HIDDEN void ardi_unlock(void);
ARDI_HIDDEN int ardi_port_attach(ard_port *p);
/* Parse options out of argv into ardi_g (wiring, domain, ...) and apply realtime requests. */
ARDI_HIDDEN int ardi_parse_options(int *argc, char **argv, bool *help);
ARDI_HIDDEN int ardi_parse_mode(const char *what, const char *s, unsigned *mode);
ARDI_HIDDEN int ardi_parse_i64(const char *s, int64_t min, int64_t max, int64_t *out);

#endif /* ARDI_H */
