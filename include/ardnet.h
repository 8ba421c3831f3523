/*
 * ardnet.h - the whole public API of libardnet.
 *
 * A block is an ordinary process with input and output ports. A port is wired to a named
 * connection (by default its own name, or --ard PORT=CONNECTION on the command line). Blocks
 * on one host exchange fixed-size packets through one POSIX shared-memory object per
 * connection, with latest-value semantics: a send never blocks and never fails because of a
 * reader, a reader gets the newest packet and can learn how many it skipped.
 *
 * Only this header is supported; everything under src/ is internal.
 *
 * Return convention: functions that return int return 0 (or a documented non-negative value)
 * on success and a negative ARD_E* code on failure. After a failure, ard_errdetail() gives a
 * thread-local text that names the port, connection, option or file and the cause. The
 * library never prints and never exits (except ard_init for --ard-help, documented there).
 */
#ifndef ARDNET_H
#define ARDNET_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library is built with hidden visibility; everything declared here is exported. */
#if defined(__GNUC__) || defined(__clang__)
#pragma GCC visibility push(default)
#endif

#define ARD_VERSION_MAJOR 0
#define ARD_VERSION_MINOR 1
#define ARD_VERSION_PATCH 0

#if defined(__GNUC__) || defined(__clang__)
#define ARD_NODISCARD __attribute__((warn_unused_result))
#else
#define ARD_NODISCARD
#endif

/* Error codes: always negative. */
enum ard_err {
    ARD_OK = 0,
    ARD_EINVAL = -1,      /* bad argument: NULL, wrong direction, malformed name or value */
    ARD_ENOMEM = -2,      /* out of memory, or no room in /dev/shm (ard_init / ard_create) */
    ARD_ESYS = -3,        /* a system call failed; the detail text names it and errno */
    ARD_EOPTION = -4,     /* a --ard* command-line option is unknown or malformed */
    ARD_ETYPE = -5,       /* bad type descriptor, or size/type differ from the connection's */
    ARD_EBUSY = -6,       /* the connection already has a live writer (detail names its pid) */
    ARD_ENODATA = -7,     /* ard_tryrec: nothing was ever sent on the connection */
    ARD_ETIMEDOUT = -8,   /* ard_rec_timed: no new packet before the deadline */
    ARD_EACCES = -9,      /* permission denied, or the object is another user's or too open */
    ARD_ENOENT = -10,     /* connection does not exist (and the port cannot create it) */
    ARD_ESTALE = -11,     /* shared-memory object is foreign, of another version, or damaged */
    ARD_ERTREFUSED = -12, /* a realtime request (priority, affinity, memory lock) was refused */
    ARD_ESTATE = -13,     /* call not valid in this state (e.g. send before ard_init) */
    ARD_EINTR = -14,      /* a blocking call was interrupted by a signal handler */
    ARD_EAGAIN = -15,     /* a view's packet was overwritten while read: try again */
};

/* Text for an error code ("connection busy: it has a live writer"); never NULL. */
const char *ard_strerror(int code);

/* Thread-local detail of the last failure in this thread, e.g.
 * "port 'state' (connection 'arm.state'): connection exists with size 1024, this port
 * declares 512". Empty string if there was none. Valid until the next failing call. */
const char *ard_errdetail(void);

enum ard_dir { ARD_IN = 0, ARD_OUT = 1 };

typedef struct ard_port ard_port;

/* ------------------------------------------------------------------------------------------
 * The five functions
 * ---------------------------------------------------------------------------------------- */

/* Declare a port. `name` is the port's name within the block ([A-Za-z0-9_.-], at most 63
 * characters). `size` is the packet size in bytes (1 .. ARD_MAX_PACKET); 0 together with
 * type NULL means "adopt the size and type of the existing connection" (for generic tools;
 * the connection must exist at attach time). `type` is a type descriptor (see below) or NULL
 * for opaque bytes; when given, its computed size must equal `size`.
 *
 * Before ard_init the port is only declared; ard_init wires and attaches it. After ard_init,
 * ard_create attaches at once, to the connection of the port's own name (--ard may only
 * name ports declared before ard_init).
 * Allocates. Does not block (except briefly on a connection being created concurrently).
 * Returns NULL on error (ard_errdetail says why; ard_lasterror() gives the code). */
ard_port *ard_create(const char *name, enum ard_dir dir, size_t size, const char *type);

/* ard_create with a default connection other than the port's name (NULL: the name). For
 * programs that create ports at run time, e.g. a bridge with many routes, where several ports
 * of one process use one connection. An --ard PORT=CONNECTION given for the port before
 * ard_init still wins: the command line has the last word. */
ard_port *ard_create_on(const char *name, const char *connection, enum ard_dir dir, size_t size,
                        const char *type);

/* Apply and remove the standard options from argv (argc updated, argv[argc] stays NULL),
 * then attach every created port. Options:
 *   --ard PORT=CONNECTION   wire a port (repeatable; a port named twice is an error)
 *   --ard-domain NAME       domain (default: $ARD_DOMAIN, else "default")
 *   --ard-prio N            SCHED_FIFO priority 1..99
 *   --ard-cpu LIST          CPU affinity, e.g. "1", "0,2-3"
 *   --ard-lock              mlockall(MCL_CURRENT | MCL_FUTURE)
 *   --ard-spin NS           spin up to NS nanoseconds before sleeping in rec (all IN ports)
 *   --ard-mode OCTAL        mode of created shared memory: 0600 (default) or 0640/0660;
 *                           an existing object whose mode allows more is refused
 *   --ard-allow-foreign     accept objects created by another uid (refused by default,
 *                           also for root; see docs/options.md)
 *   --ard-help              print the ports (name, direction, size, type, connection) to
 *                           stdout and exit(0)
 * Both "--ard-x VALUE" and "--ard-x=VALUE" are accepted. Anything after "--" is left alone.
 * An invalid $ARD_DOMAIN is an ARD_EOPTION error naming the variable.
 * Also honours $ARD_SPIN_NS, $ARD_SHM_MODE and $ARD_ALLOW_FOREIGN (1 or 0) as defaults. When
 * $ARD_READY_FD names the starter's readiness pipe (set by ardstart --wait), a readiness line is
 * written to it after all ports are attached (see ard_ready). Call once. Allocates; may block
 * briefly like ard_create. Returns 0, ARD_EOPTION (detail names the option), ARD_ERTREFUSED,
 * ARD_EINVAL (a malformed $ARD_READY_FD, named in the detail), or any attach error. */
ARD_NODISCARD int ard_init(int *argc, char **argv);

/* Publish one packet (port->size bytes from `packet`) as the connection's newest.
 * Never blocks, never waits for a reader, allocates nothing. Makes no system call unless a
 * reader is blocked in rec, then exactly one futex wake. Stamps it, once copied, with
 * CLOCK_MONOTONIC and with CLOCK_REALTIME derived from it (one clock read; exact unless the
 * clock is stepped during the send: docs/api.md, "Send times").
 * Returns 0, ARD_EINVAL (not an OUT port), ARD_ESTATE (port not attached). */
ARD_NODISCARD int ard_send(ard_port *out, const void *packet);

/* ard_send with the send times given by the caller instead of read from the clocks: for a
 * bridge or a replayer that republishes a packet with its writer's times (CLOCK_REALTIME from
 * another host lines up; CLOCK_MONOTONIC does not, so a bridge passes its own). Otherwise
 * exactly like ard_send; the sequence number is still the connection's own. */
ARD_NODISCARD int ard_send_stamped(ard_port *out, const void *packet, int64_t mono_ns,
                                   int64_t real_ns);

/* Zero-copy send, first half: the payload (port->size bytes) of the slot the next packet goes
 * into, for the caller to fill in place; ard_send_commit publishes it. The slot is marked as
 * being written exactly as ard_send marks it before its copy, so the loan only stretches the
 * writer's copy: readers keep getting the previous packet (the head's slot, which a loan never
 * touches) until the commit, and never see the loaned slot's contents torn or half written.
 * The contents are whatever the slot last held (an older packet, or zeroes): write every byte
 * you mean to send. Only the writer's thread may touch the payload, and only until the commit.
 * A second loan before the commit returns the same slot with the contents as left (nothing is
 * marked again). While a loan is open, ard_send and ard_send_stamped are refused (ARD_ESTATE).
 * Closing the port (or the process dying, kill -9 included) with a loan open abandons it: the
 * previous packet stays the newest, and the next writer continues the sequence and reuses the
 * slot. Never blocks, allocates nothing, makes no system call.
 * Returns the payload, or NULL with ard_lasterror() ARD_EINVAL (NULL or not an OUT port) or
 * ARD_ESTATE (port not attached). */
ARD_NODISCARD void *ard_send_loan(ard_port *out);

/* Zero-copy send, second half: publish the loaned slot as the connection's newest packet,
 * stamped now, exactly as ard_send does after its copy (times, unlock, head, one futex wake
 * only if a reader is blocked in rec). The loan ends: the payload pointer must not be written
 * again. Never blocks, allocates nothing. Returns 0, ARD_EINVAL (NULL or not an OUT port),
 * ARD_ESTATE (not attached, or no loan open). */
ARD_NODISCARD int ard_send_commit(ard_port *out);

/* ard_send_commit with the send times given by the caller (see ard_send_stamped). */
ARD_NODISCARD int ard_send_commit_stamped(ard_port *out, int64_t mono_ns, int64_t real_ns);

/* Copy the newest packet into `packet` (port->size bytes). Blocks until a packet newer than
 * the last one this port returned exists; returns at once if there already is one.
 * Sleeps in the kernel (futex) only when there is nothing new; with spinning enabled it
 * first polls for up to the spin time when the writer last ran on another CPU.
 * Returns 0, ARD_EINTR (a signal handler ran; nothing copied), ARD_EINVAL, ARD_ESTATE (not
 * attached, or closed by another thread while the call waited: see ard_close), ARD_ESTALE
 * (the connection's shared header was rewritten by another process so that its data can no
 * longer be trusted; the detail names port and connection). */
ARD_NODISCARD int ard_rec(ard_port *in, void *packet);

/* Copy the newest packet at once, without waiting.
 * Returns 1 when the packet is newer than the last one this port returned, 0 when it is the
 * same packet again, ARD_ENODATA when nothing was ever sent (nothing copied), or an error
 * (ARD_ESTALE as for ard_rec). Never makes a system call. */
ARD_NODISCARD int ard_tryrec(ard_port *in, void *packet);

/* Is there a packet newer than the last one this port returned? Looks without copying
 * anything and without changing the port's state (its last packet and ard_port_info stay as
 * they were), so a busy-polling reader pays a copy only when there is something to copy.
 * Returns 1 when a newer packet has been published (the next ard_tryrec returns 1 with it or
 * a still newer one, unless the connection's header was rewritten: then that ard_tryrec
 * reports ARD_ESTALE), 0 when the newest is still the one last returned, ARD_ENODATA when
 * nothing was ever sent, or ARD_EINVAL / ARD_ESTATE. One atomic load; never a system call,
 * never a lock, never a copy. */
ARD_NODISCARD int ard_poll(const ard_port *in);

/* Wait on many IN ports at once: block until at least one of ports[0..n-1] has a packet
 * newer than the last one it returned, then say which: ready[i] is set to 1 for each such
 * port and 0 for the others (ready may be NULL). Copies nothing; take the packets with
 * ard_tryrec. `timeout_ns` < 0 waits without limit, 0 only looks, > 0 is relative.
 * Sleeps in one futex_waitv system call on the ports' futex words when nothing is new, with
 * the same no-lost-wake-up protocol as ard_rec (also across a writer killed and replaced).
 * Up to ARD_WAIT_SLEEP_MAX ports sleep in the kernel; with more ports, or on a kernel without
 * futex_waitv (before 5.16), the call also wakes every millisecond to look at the others, so
 * those are noticed within about 1 ms. Allocates nothing, takes no lock. Another thread may
 * close one of the ports while the call waits (see ard_close): the call then returns
 * ARD_ESTATE naming it; otherwise the ports must not be used by another thread meanwhile.
 * Returns the number of ready ports (>= 1), ARD_ETIMEDOUT, ARD_EINTR, ARD_EINVAL (n 0, NULL,
 * an OUT port), ARD_ESTATE (a port not attached, or closed by another thread during the
 * wait), ARD_ESTALE (as for ard_rec). */
#define ARD_WAIT_SLEEP_MAX 128
ARD_NODISCARD int ard_wait(ard_port *const *ports, size_t n, int64_t timeout_ns,
                           unsigned char *ready);

/* ard_rec with a relative timeout in nanoseconds (<= 0: do not wait, like ard_tryrec but
 * returning ARD_ETIMEDOUT instead of 0 when there is nothing new).
 * Returns 0, ARD_ETIMEDOUT (nothing copied), ARD_EINTR, ARD_EINVAL, ARD_ESTATE, ARD_ESTALE. */
ARD_NODISCARD int ard_rec_timed(ard_port *in, void *packet, int64_t timeout_ns);

/* ------------------------------------------------------------------------------------------
 * Per-packet info, port properties, closing
 * ---------------------------------------------------------------------------------------- */

struct ard_info {
    uint64_t seq;     /* sequence number, 1 for the first packet ever sent, never reused */
    int64_t mono_ns;  /* writer's CLOCK_MONOTONIC at send, ns */
    int64_t real_ns;  /* writer's CLOCK_REALTIME at send, ns (at the moment of mono_ns) */
    uint64_t skipped; /* packets sent between the previous one this port returned and
                       * this one (0 for the first; 0 when the same packet is re-read) */
};

/* Info about the packet last returned by rec/tryrec/rec_timed on this port (for an OUT port:
 * the packet last sent). Zeroes before the first. Never fails for a valid port. */
struct ard_info ard_port_info(const ard_port *port);

/* In-place read, for the writer's own thread: the payload of the newest packet on this OUT
 * port's connection (the last one this port sent, or, before its first send, the one the
 * previous writer left), without copying; *info (if not NULL) gets its sequence number and
 * times (skipped 0). The writer is the connection's only writer, so the packet cannot change
 * while the writer's thread reads it: the pointer stays valid and its contents unchanged until
 * this port's next send or commit (a loan opened meanwhile uses another slot). Other threads
 * and processes must use an IN port and ard_tryrec/ard_rec. Never blocks, allocates nothing,
 * makes no system call. Returns the payload, or NULL with ard_lasterror() ARD_ENODATA
 * (nothing was ever sent on the connection), ARD_EINVAL (NULL or not an OUT port), ARD_ESTATE
 * (not attached) or ARD_ESTALE (the previous writer's packet is not complete: the header was
 * damaged). */
ARD_NODISCARD const void *ard_sent(const ard_port *out, struct ard_info *info);

const char *ard_port_name(const ard_port *port);
const char *ard_port_connection(const ard_port *port); /* after attach; before: the wiring */
const char *ard_port_type(const ard_port *port);       /* normalised descriptor or "" */
size_t ard_port_size(const ard_port *port);
enum ard_dir ard_port_dir(const ard_port *port);

/* Spin before sleeping in rec: up to `spin_ns` (0 disables, the default). Spinning happens
 * only when the writer's last send ran on a CPU other than the reader's, so that on a shared
 * CPU the reader never steals the writer's time. IN ports only. */
ARD_NODISCARD int ard_port_set_spin(ard_port *in, int64_t spin_ns);

/* Detach and free one port (an OUT port releases the writer role at once). NULL is fine.
 * Threads of this process blocked in ard_rec, ard_rec_timed or ard_wait on this IN port are
 * woken and return ARD_ESTATE ("port 'x' ... was closed by another thread while waited on");
 * ard_close returns once they have left the call (it wakes them every 50 us until then, for
 * a waiter that was between its last look and its sleep; other processes' readers of the
 * connection see a spurious wake and sleep on). What stays the caller's duty: no call on the
 * port may *begin* once ard_close has begun (the port is freed), and no ard_tryrec, ard_poll
 * or ard_send on it may be running in another thread. */
void ard_close(ard_port *port);

/* Close every port (as ard_close: threads blocked on one are woken and return ARD_ESTATE)
 * and forget the options; ard_init may be called again afterwards. */
void ard_fini(void);

/* Code of the last failure in this thread (for ard_create, which returns NULL). */
int ard_lasterror(void);

/* Apply realtime requests to the calling thread, exactly as --ard-cpu, --ard-lock and
 * --ard-prio do, for programs whose settings come from elsewhere (a configuration file).
 * `cpus`: NULL or a CPU list like "1" or "0,2-3"; `lock`: nonzero for mlockall(MCL_CURRENT |
 * MCL_FUTURE); `prio`: 0 to leave the policy alone, else SCHED_FIFO priority 1..99. Call it
 * before creating threads: they inherit affinity and policy.
 * Returns 0, ARD_EINVAL (malformed request, detail points at it), ARD_ERTREFUSED (the system
 * said no; detail names the call and errno). */
ARD_NODISCARD int ard_realtime(const char *cpus, int lock, int prio);

/* ------------------------------------------------------------------------------------------
 * Readiness (used by ardstart)
 * ---------------------------------------------------------------------------------------- */

/* Tell the starter that this block is ready. ardstart --wait sets $ARD_READY_FD to
 * "FD:DEV:INO": a descriptor of its readiness pipe and that pipe's st_dev and st_ino. The line
 * "ready PID\n" is written only if FD is open, is a FIFO and has that device and inode; then FD
 * is closed. In every case the variable is unset, and a descriptor that is not the pipe (closed
 * and reused for another file, say) is neither written nor closed. ard_init calls this after
 * attaching every port; a program that does not use ard_init may call it itself.
 * Returns 1 if a starter was told, 0 if there was none (no variable, or FD is not the pipe),
 * ARD_EINVAL if the variable is malformed (detail names it; nothing is written), or ARD_ESYS. */
ARD_NODISCARD int ard_ready(void);

/* ------------------------------------------------------------------------------------------
 * Domains and connections (for tools: introspection, ardkill, ardnet)
 * ---------------------------------------------------------------------------------------- */

#define ARD_MAX_NAME 63            /* longest port, connection or domain name */
#define ARD_MAX_TYPE 1023          /* longest type descriptor */
#define ARD_MAX_PACKET (64u << 20) /* largest packet: 64 MiB */

/* The domain in force: set by --ard-domain, else $ARD_DOMAIN, else "default". */
const char *ard_domain(void);

/* Set the domain before ard_init/ard_create (tools that have their own option parsing). */
ARD_NODISCARD int ard_set_domain(const char *domain);

struct ard_conn_stat {
    char name[ARD_MAX_NAME + 1];
    char type[ARD_MAX_TYPE + 1];
    size_t size;
    int32_t writer_pid; /* live writer's pid, 0 if none */
    uint32_t readers;   /* attached IN ports of live processes (exact; see ard_conn_peers) */
    uint64_t seq;       /* newest sequence number, 0 if nothing sent */
    int64_t mono_ns;    /* send time of the newest packet */
    int64_t real_ns;
    uint32_t mode;     /* permission bits of the object */
    uint32_t unlisted; /* attached ports missing from ard_conn_peers' list (table full) */
};

/* Describe connection `name` of `domain` (NULL: the domain in force) without attaching.
 * The object is checked exactly as an attach checks it: owner and mode (after ard_init with
 * its options, before with $ARD_SHM_MODE and $ARD_ALLOW_FOREIGN), then the header.
 * Returns 0, ARD_ENOENT, ARD_EACCES (foreign or too open: detail names owner and mode),
 * ARD_ESTALE (not an ardnet object, or damaged). */
ARD_NODISCARD int ard_conn_stat(const char *domain, const char *name, struct ard_conn_stat *st);

/* One attached port of a connection, as recorded in the connection's object. */
struct ard_peer {
    int32_t pid;
    enum ard_dir dir;            /* ARD_OUT: the writer */
    char program[16];            /* the process's name (comm), NUL-terminated */
    char port[ARD_MAX_NAME + 1]; /* the port's name in that process */
    int64_t attach_real_ns;      /* CLOCK_REALTIME when it attached */
};

/* Live peers of connection `name` in `domain` (NULL: the domain in force), writer first.
 * Fills at most `max` entries; returns how many live peers are listed in the object
 * (may exceed max), or a negative ARD_E* code.
 *
 * Every attached port (IN and OUT) has an entry, written when it attaches (never by send or
 * receive) and held through a lock that the kernel drops when its process dies: a port of a
 * process killed with kill -9 is never listed, without any clean-up. The table has 64
 * entries; a port attaching when all are taken still attaches, unlisted, and
 * ard_conn_stat's `unlisted` counts such ports. Entries are checked like the header (strings
 * cut at their field, nonsense not listed). Does not attach; checks owner, mode and header
 * exactly as ard_conn_stat. Returns ARD_ENOENT, ARD_EACCES, ARD_ESTALE, ARD_EINVAL too. */
ARD_NODISCARD int ard_conn_peers(const char *domain, const char *name, struct ard_peer *out,
                                 size_t max);

/* Call fn for every connection of `domain` (NULL: the domain in force), in name order.
 * fn returns 0 to continue, anything else to stop (that value is returned).
 * Returns the count of connections visited (>= 0) or an error. */
ARD_NODISCARD int ard_conn_list(const char *domain, int (*fn)(const char *name, void *arg),
                                void *arg);

/* Remove connection `name` of `domain` (NULL: the domain in force), but only when no port of
 * any process is attached to it (decided with the object's attach lock, which the kernel
 * drops when a process dies, so a kill -9'd block does not keep an object alive). An attach
 * racing with the removal either finishes first (then ARD_EBUSY) or creates a new object.
 * Returns 0, ARD_ENOENT, ARD_EBUSY (still attached; detail names it), ARD_EACCES, ARD_ESYS. */
ARD_NODISCARD int ard_conn_unlink(const char *domain, const char *name);

/* Remove every connection object of `domain` to which no port is attached (as
 * ard_conn_unlink). Returns the count removed, or ARD_EBUSY when some objects were still
 * attached and left in place (the detail names them and says how many were removed; every
 * other object is removed all the same), or another error. */
ARD_NODISCARD int ard_domain_unlink(const char *domain);

/* ------------------------------------------------------------------------------------------
 * Type descriptors
 *
 * A descriptor lists fields in basic types: "f64[7] f64[7] u32 u8[4]". Basic types: i8 u8
 * i16 u16 i32 u32 i64 u64 f32 f64; an optional [N] (N >= 1) makes an array. Fields are laid
 * out with C's natural alignment (each field aligned to its element size) and the total is
 * padded to the largest alignment, exactly like the matching C struct on Linux x86_64 and
 * aarch64. Separators are spaces, tabs or commas.
 *
 * A field may be named: "q:f64[7] dq:f64[7] tick:u32 flags:u8[4]". Names are optional per
 * field, [A-Za-z_][A-Za-z0-9_]*, at most ARD_MAX_FIELD_NAME characters, unique within the
 * descriptor; "fN" (what tools call unnamed field N) may only name field N. Names are
 * documentation and addresses for tools: the layout alone (types and counts, in order)
 * decides whether two sides of a connection match, so "q:f64[7]" and "f64[7]" attach to one
 * connection, which keeps the descriptor of the side that created it.
 * ---------------------------------------------------------------------------------------- */

enum ard_basic {
    ARD_I8,
    ARD_U8,
    ARD_I16,
    ARD_U16,
    ARD_I32,
    ARD_U32,
    ARD_I64,
    ARD_U64,
    ARD_F32,
    ARD_F64
};

#define ARD_MAX_FIELD_NAME 31 /* longest field name in a descriptor */

/* One field of a parsed descriptor. Pre-1.0 ABI note: `name` was added in 0.1 (the struct grew
 * from 12 to 44 bytes); code that allocates arrays of it must be rebuilt. */
struct ard_field {
    enum ard_basic kind;
    uint32_t count;                    /* array length, 1 for a scalar */
    uint32_t offset;                   /* byte offset in the packet */
    char name[ARD_MAX_FIELD_NAME + 1]; /* "" when the descriptor does not name it */
};

/* Parse `desc`. Writes up to `max` fields (fields may be NULL with max 0 to only count),
 * the field count to *nfields and the packed size to *size (either may be NULL).
 * Returns 0, or ARD_ETYPE with a detail pointing at the bad token ("at column 9: 'f65'").
 * If there are more than `max` fields, the first `max` are written and *nfields says how
 * many there are. */
ARD_NODISCARD int ard_type_parse(const char *desc, struct ard_field *fields, size_t max,
                                 size_t *nfields, size_t *size);

/* Size in bytes of one element of a basic type, and its name ("f64"). */
size_t ard_basic_size(enum ard_basic kind);
const char *ard_basic_name(enum ard_basic kind);

/* Canonical form of a descriptor (single spaces, "[1]" dropped, names kept:
 * "q:f64[7] tick:u32") into buf. Returns its length, or ARD_ETYPE / ARD_EINVAL (buffer too
 * small). */
ARD_NODISCARD int ard_type_normalize(const char *desc, char *buf, size_t buflen);

/* 64-bit FNV-1a hash of the canonical layout, names stripped ("f64[7] u32" for
 * "q:f64[7] tick:u32"; 0 for NULL or ""), so that equal layouts hash equal. Used on the wire. */
uint64_t ard_type_hash(const char *desc);

/* ------------------------------------------------------------------------------------------
 * Periodic loop helper
 *
 *     ard_period p;
 *     if (ard_period_init(&p, 1000000) < 0) ...     // 1 kHz
 *     for (;;) { ...; int missed = ard_period_wait(&p); }
 * ---------------------------------------------------------------------------------------- */

typedef struct ard_period {
    int64_t period_ns;
    int64_t next_ns;   /* absolute CLOCK_MONOTONIC deadline of the next wake-up */
    uint64_t overruns; /* periods missed in total */
    uint64_t cycles;   /* completed waits */
} ard_period;

/* Start a periodic schedule: the first deadline is one period from now. Sets the thread's
 * timer slack to 1 ns (prctl) so the wake-ups are not batched. Returns 0 or ARD_EINVAL. */
ARD_NODISCARD int ard_period_init(ard_period *p, int64_t period_ns);

/* Sleep until the next absolute deadline (clock_nanosleep TIMER_ABSTIME, restarted after a
 * signal). If one or more deadlines have already passed, they are skipped rather than caught
 * up in a burst: it sleeps until the next future deadline and returns the number of periods
 * missed (also added to p->overruns). Returns >= 0. */
int ard_period_wait(ard_period *p);

/* CLOCK_MONOTONIC and CLOCK_REALTIME now, in ns (vDSO, no system call). */
int64_t ard_now_ns(void);
int64_t ard_realtime_ns(void);

#if defined(__GNUC__) || defined(__clang__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif

#endif /* ARDNET_H */
