/*
 * ardi.h - internal declarations shared by the library's source files, the layout of a
 * connection's shared-memory object among them. Never installed, and included by nothing
 * outside src/lib (the programs share src/common/ard_common.h; tests/test_hostile.c forges
 * hostile headers with it). */
#ifndef ARDI_H
#define ARDI_H

#include "ard_common.h"
#include "ardnet.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

/* ---- segment.c: the shared-memory object of one connection ------------------------------ */

#define ARDI_MAGIC 0x31304e445241ull /* "ARDN01" read as little-endian bytes */
/* The first 8 bytes while a creator initialises the object; a creator that dies leaves this,
 * and the next creator (holding the init lock, so the first one is gone) starts afresh. */
#define ARDI_MAGIC_INIT 0x54494e494e445241ull /* "ARDNINIT" */
#define ARDI_VERSION 2u
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

/* Who is attached: one entry per attached port, owned through OFD locks (segment.c). The
 * owner writes it between two stores of `gen` (odd while writing). */
#define ARDI_MAX_PEERS 64
struct ardi_peer {
    _Atomic uint32_t gen;
    int32_t pid;
    uint32_t dir;
    uint32_t pad;
    int64_t attach_real_ns;
    char program[16];
    char port[ARD_MAX_NAME + 1];
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
    struct ardi_peer peers[ARDI_MAX_PEERS];

    _Alignas(ARDI_CACHELINE) uint8_t slots[]; /* nslots * stride */
};

/* The geometry of a connection, validated once at attach (ardi_seg_check) and kept privately
 * by every side: after that, nothing in the shared header is trusted (DESIGN §9). */
struct ardi_geom {
    uint32_t nslots;
    uint64_t stride;
    uint64_t size;
    uint64_t total;
    char type[ARD_MAX_TYPE + 1];
};

struct ardi_map {
    int fd;
    struct ardi_seg *seg;
    size_t len;
    /* Private copies of the geometry: the realtime paths use these, never the header's. */
    uint8_t *slots;
    uint64_t slot_mask; /* nslots - 1 (nslots is a power of two) */
    uint64_t stride;
};

struct ardi_attach_req {
    const char *domain;
    const char *conn;
    const char *port; /* for messages */
    size_t size;      /* 0: adopt existing */
    const char *type; /* canonical descriptor, "" for opaque */
    bool writer;
    unsigned mode;      /* for a newly created object, and the most an existing one may allow */
    bool allow_foreign; /* accept objects created by another uid */
};

/* The one validator of a connection header: reads each field of the header at `s` (an object
 * of `len` bytes) exactly once, checks magic, version and geometry against the layout rule and
 * the object's length, and fills *g. ARD_ESTALE naming `conn` and `shm` when anything is off. */
ARDI_HIDDEN int ardi_seg_check(const struct ardi_seg *s, size_t len, const char *conn,
                               const char *shm, struct ardi_geom *g);
/* Attach to (creating if needed) the object of rq; fills *m and the validated geometry *g. */
ARDI_HIDDEN int ardi_seg_attach(const struct ardi_attach_req *req, struct ardi_map *m,
                                struct ardi_geom *g);
ARDI_HIDDEN void ardi_seg_detach(struct ardi_map *m, bool writer, bool spinner);
/* Map object `name` of `domain` read-only for inspection (stat, peers), validated by
 * ardi_seg_check exactly as an attach is. The caller unmaps with ardi_seg_unmap. */
ARDI_HIDDEN int ardi_seg_inspect(const char *domain, const char *name, struct ardi_map *m,
                                 struct ardi_geom *g, unsigned *mode);
ARDI_HIDDEN void ardi_seg_unmap(struct ardi_map *m);
/* Live peers of an inspected object, writer first: fills up to `max` of out, returns how many
 * are listed; *unlisted = live ports without a listed entry (table full or entry unreadable),
 * *writer_listed = whether the live writer has an entry. */
ARDI_HIDDEN int ardi_seg_peers(const struct ardi_map *m, struct ard_peer *out, size_t max,
                               uint32_t *unlisted, bool *writer_listed);
/* Does a live process hold the writer lock / the attach marker of a mapped object? */
ARDI_HIDDEN bool ardi_seg_writer_live(const struct ardi_map *m);
ARDI_HIDDEN bool ardi_seg_attached(const struct ardi_map *m);
/* Fill *st (as ard_conn_stat) from a mapped object: 0, or ARD_ESTALE when the newest slot
 * never settles (*st filled but for the newest packet). */
ARDI_HIDDEN int ardi_conn_fill(const struct ardi_map *m, const struct ardi_geom *g, unsigned mode,
                               const char *name, struct ard_conn_stat *st);
/* Remove object `name` of `domain` unless a port is attached to it (ARD_EBUSY). */
ARDI_HIDDEN int ardi_seg_remove(const char *domain, const char *name);
/* Refuse an object (fd open, `st` its fstat) that another uid created or whose mode gives
 * group or others more than `mode` allows: ARD_EACCES naming owner and mode. */
ARDI_HIDDEN int ardi_check_owner(const struct stat *st, const char *conn, unsigned mode,
                                 bool allow_foreign);
/* The trust settings in force: after ard_init its options; before, $ARD_SHM_MODE and
 * $ARD_ALLOW_FOREIGN (for tools that inspect connections without ard_init). */
ARDI_HIDDEN void ardi_trust(unsigned *mode, bool *allow_foreign);
ARDI_HIDDEN void ardi_map_geom(struct ardi_map *m, const struct ardi_geom *g);

#if defined(__x86_64__) || defined(__i386__)
#define ardi_cpu_relax() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define ardi_cpu_relax() __asm__ __volatile__("yield" ::: "memory")
#else
#define ardi_cpu_relax() atomic_signal_fence(memory_order_seq_cst)
#endif

static inline struct ardi_slot *ardi_slot_at(const struct ardi_map *m, uint64_t seq)
{
    return (struct ardi_slot *)(m->slots + (seq & m->slot_mask) * m->stride);
}

/* The one read of a slot: copy packet `seq` (`size` bytes into dst) and its send times. False
 * if the slot does not hold `seq` complete or the writer began to reuse it during the copy. */
static inline bool ardi_slot_read(const struct ardi_map *m, uint64_t seq, void *dst, size_t size,
                                  int64_t *mono, int64_t *real)
{
    struct ardi_slot *slot = ardi_slot_at(m, seq);
    uint64_t v1 = atomic_load_explicit(&slot->lock, memory_order_acquire);
    if (v1 != 2 * seq)
        return false;
    if (size)
        memcpy(dst, slot + 1, size);
    *mono = atomic_load_explicit(&slot->mono_ns, memory_order_relaxed);
    *real = atomic_load_explicit(&slot->real_ns, memory_order_relaxed);
    atomic_thread_fence(memory_order_acquire);
    return atomic_load_explicit(&slot->lock, memory_order_relaxed) == v1;
}

/* Bounds of ardi_read_newest's retries. A writer laps a reader only by writing nslots - 1
 * packets during one copy, and then the head moves: a head that stays put while its slot
 * never settles was rewritten. A head that keeps moving while every copy fails is bounded in
 * time, counted from the 64th failure so that a reader stopped mid-copy is not blamed. */
#define ARDI_STUCK_TRIES 4096
#define ARDI_LAPPED_NS 1000000000LL

/* Copy the newest complete packet: 1 (seq, times set), 0 (nothing was ever sent), or
 * ARD_ESTALE (the header's head names a slot that never settles; no detail set). */
static inline int ardi_read_newest(const struct ardi_map *m, void *dst, size_t size, uint64_t *seq,
                                   int64_t *mono, int64_t *real)
{
    uint64_t prev = 0;
    unsigned stuck = 0, failed = 0;
    int64_t since = 0;
    for (;;) {
        uint64_t h = atomic_load_explicit(&m->seg->head, memory_order_acquire);
        if (h == 0)
            return 0;
        if (ardi_slot_read(m, h, dst, size, mono, real)) {
            *seq = h;
            return 1;
        }
        stuck = h == prev ? stuck + 1 : 0;
        prev = h;
        if (stuck >= ARDI_STUCK_TRIES)
            return ARD_ESTALE;
        if (++failed == 64)
            since = ard_now_ns();
        else if (failed > 64 && (failed & 63) == 0 && ard_now_ns() - since > ARDI_LAPPED_NS)
            return ARD_ESTALE;
        ardi_cpu_relax();
    }
}

/* ---- port.c: the realtime stamp of a send, derived from its monotonic one ------------------
 * Linux keeps CLOCK_REALTIME as CLOCK_MONOTONIC plus an offset that changes only when the
 * clock is stepped (clock_settime, settimeofday, adjtimex ADJ_SETOFFSET, a leap second, a
 * resume from suspend). NTP's slewing (adjtimex frequency up to 500 ppm, adjtime's 500 ppm,
 * ADJ_TICK's 10%) changes the rate of both clocks alike and leaves the offset alone. The
 * coarse clocks are the same two clocks as of the kernel's last update of its timekeeping (a
 * tick; a step makes one too), read from the vDSO without the clock source: their difference
 * is the offset exactly, unless an update falls between the two reads.
 *
 * Each writer port keeps the offset with the CLOCK_MONOTONIC_COARSE at which it was found to
 * hold (struct ardi_rtcache). A send reads CLOCK_MONOTONIC, then CLOCK_MONOTONIC_COARSE: the
 * same value as cached means the kernel has not touched its clocks since, so the offset still
 * holds, and the realtime stamp is the monotonic one plus it: to the ns what CLOCK_REALTIME
 * would have read at that moment. Otherwise (a tick, a step, the first send) the offset is
 * found afresh (ardi_rt_find). Reading the offset after the monotonic stamp puts a step made
 * before the monotonic read into the stamp. The clocks are read through `rd` so that tests
 * can drive this code with a model of the kernel's timekeeping; port.c passes a function
 * that inlines clock_gettime. */
typedef int64_t (*ardi_clock_read)(void *ctx, clockid_t id);

#define ARDI_RT_UNKNOWN INT64_MIN /* never a CLOCK_MONOTONIC_COARSE reading */
#define ARDI_RT_TRIES 8

struct ardi_rtcache {
    int64_t mono_c; /* CLOCK_MONOTONIC_COARSE at which `off` held; ARDI_RT_UNKNOWN: none */
    int64_t off;    /* CLOCK_REALTIME - CLOCK_MONOTONIC */
};

/* Find the offset from coarse reads, given a CLOCK_MONOTONIC_COARSE `m1` just read: realtime,
 * monotonic, until the monotonic read equals the one before it (no update between them).
 * After ARDI_RT_TRIES updates in a row between reads (never seen: ticks are milliseconds
 * apart), the last realtime read minus the monotonic read after it, which errs by at most one
 * tick towards the earlier time, and kept as unknown so that the next send looks again. */
static inline void ardi_rt_find(ardi_clock_read rd, void *ctx, int64_t m1, struct ardi_rtcache *c)
{
    int64_t r = 0, m2 = m1;
    for (int i = 0; i < ARDI_RT_TRIES; i++) {
        r = rd(ctx, CLOCK_REALTIME_COARSE);
        m2 = rd(ctx, CLOCK_MONOTONIC_COARSE);
        if (m2 == m1) {
            *c = (struct ardi_rtcache){.mono_c = m1, .off = r - m1};
            return;
        }
        m1 = m2;
    }
    *c = (struct ardi_rtcache){.mono_c = ARDI_RT_UNKNOWN, .off = r - m2};
}

/* The realtime stamp of a send whose CLOCK_MONOTONIC stamp is `mono` (read just before). */
static inline int64_t ardi_rt_stamp(int64_t mono, ardi_clock_read rd, void *ctx,
                                    struct ardi_rtcache *c)
{
    int64_t mc = rd(ctx, CLOCK_MONOTONIC_COARSE);
    if (mc != c->mono_c)
        ardi_rt_find(rd, ctx, mc, c);
    return mono + c->off;
}

/* A send's two stamps, as ard_send and ard_send_commit take them: CLOCK_MONOTONIC, then the
 * realtime one from it. */
static inline void ardi_send_stamps(ardi_clock_read rd, void *ctx, struct ardi_rtcache *c,
                                    int64_t *mono, int64_t *real)
{
    *mono = rd(ctx, CLOCK_MONOTONIC);
    *real = ardi_rt_stamp(*mono, rd, ctx, c);
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
    uint64_t last_seq;      /* IN: seq last returned; OUT: seq last sent */
    uint64_t loan_seq;      /* OUT: seq of the slot loaned by ard_send_loan, 0: no loan open */
    struct ardi_rtcache rt; /* OUT: the clocks' offset for the send's realtime stamp */
    struct ard_info info;
    /* IN: threads of this process inside ard_rec / ard_rec_timed / ard_wait on this port,
     * and ard_close's request that they leave (port.c, "closing a waited-on port"). */
    _Atomic uint32_t waiters;
    _Atomic bool closing;
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
    bool allow_foreign;
    int64_t spin_ns;
    struct ardi_wire *wires;
    size_t nwires;
    ard_port *ports; /* in creation order */
};

ARDI_HIDDEN extern struct ardi_state ardi_g;
ARDI_HIDDEN void ardi_lock(void);
ARDI_HIDDEN void ardi_unlock(void);
ARDI_HIDDEN int ardi_port_attach(ard_port *p);
/* Make the threads waiting on p leave, detach and free it (p is unlinked already). */
ARDI_HIDDEN void ardi_port_free(ard_port *p);
ARDI_HIDDEN int ardi_parse_mode(const char *what, const char *s, unsigned *mode);
ARDI_HIDDEN int ardi_parse_i64(const char *s, int64_t min, int64_t max, int64_t *out);

#endif /* ARDI_H */
