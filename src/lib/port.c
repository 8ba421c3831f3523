/*
 * port.c - ports: declaration, attachment, and the realtime paths send / rec / tryrec.
 *
 * The realtime paths allocate nothing, take no lock, and make no system call except one
 * futex wake in send when a reader sleeps, and one futex wait in rec when nothing is new.
 */
#include "ardi.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* ---- clocks ----------------------------------------------------------------------------- */

static inline int64_t clock_ns(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t ard_now_ns(void)
{
    return clock_ns(CLOCK_MONOTONIC);
}

int64_t ard_realtime_ns(void)
{
    return clock_ns(CLOCK_REALTIME);
}

static inline int64_t sys_clock(void *ctx, clockid_t c)
{
    (void)ctx;
    return clock_ns(c);
}

/* A send's stamps: one full clock read, CLOCK_MONOTONIC, and CLOCK_REALTIME derived from it
 * with the port's cached offset at the cost of one coarse read (ardi.h, ardi_rt_stamp). */
static inline void send_stamps(ard_port *p, int64_t *mono, int64_t *real)
{
    ardi_send_stamps(sys_clock, NULL, &p->rt, mono, real);
}

static long futex(_Atomic uint32_t *uaddr, int op, uint32_t val, const struct timespec *ts)
{
    return syscall(SYS_futex, uaddr, op, val, ts, NULL, FUTEX_BITSET_MATCH_ANY);
}

static int check_out(ard_port *p, const char *fn)
{
    if (p == NULL || p->dir != ARD_OUT)
        return ardi_fail(ARD_EINVAL, "%s: %s", fn, p == NULL ? "port is NULL" : "not an OUT port");
    if (p->map.seg == NULL)
        return ardi_fail(ARD_ESTATE,
                         "port '%s': %s before the port is attached (call ard_init first)", p->name,
                         fn);
    return 0;
}

/* The first half of a send: mark the next slot as being written (readers that meet it retry
 * or read the head's slot, which this does not touch). */
static inline struct ardi_slot *begin(ard_port *p, uint64_t seq)
{
    struct ardi_slot *slot = ardi_slot_at(&p->map, seq);
    atomic_store_explicit(&slot->lock, 2 * seq + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    return slot;
}

/* The second half: times, unlock, head, wake. */
static inline void finish(ard_port *p, struct ardi_slot *slot, uint64_t seq, int64_t mono,
                          int64_t real)
{
    struct ardi_seg *s = p->map.seg;
    atomic_store_explicit(&slot->mono_ns, mono, memory_order_relaxed);
    atomic_store_explicit(&slot->real_ns, real, memory_order_relaxed);
    atomic_store_explicit(&slot->lock, 2 * seq, memory_order_release);
    atomic_store_explicit(&s->head, seq, memory_order_release);
    if (atomic_load_explicit(&s->spinners, memory_order_relaxed) != 0)
        atomic_store_explicit(&s->writer_cpu, (uint32_t)sched_getcpu(), memory_order_relaxed);

    /* Swap in the new futex value; wake only if some reader announced it sleeps. A reader
     * killed while asleep leaves the bit set: it costs one needless wake, then it is gone. */
    uint32_t old = atomic_exchange_explicit(&s->wake, (uint32_t)(seq << 2), memory_order_seq_cst);
    if (old & 1u)
        futex(&s->wake, FUTEX_WAKE, INT_MAX, NULL);

    p->last_seq = seq;
    p->info = (struct ard_info){.seq = seq, .mono_ns = mono, .real_ns = real, .skipped = 0};
}

/* stamped: the caller's times; else the clock is read after the copy, so that the copy's
 * stores, whose cache lines a reader on another CPU may hold, complete while it is read
 * (docs/performance.md, ardbench). */
static inline int publish(ard_port *p, const void *packet, bool stamped, int64_t mono, int64_t real)
{
    if (packet == NULL && p != NULL && p->dir == ARD_OUT)
        return ardi_fail(ARD_EINVAL, "ard_send: packet is NULL");
    int rc = check_out(p, "ard_send");
    if (rc < 0)
        return rc;
    if (p->loan_seq != 0)
        return ardi_fail(ARD_ESTATE,
                         "port '%s': ard_send while a loaned slot is open (ard_send_commit it)",
                         p->name);
    uint64_t seq = p->last_seq + 1;
    struct ardi_slot *slot = begin(p, seq);
    memcpy(slot + 1, packet, p->size);
    if (!stamped)
        send_stamps(p, &mono, &real);
    finish(p, slot, seq, mono, real);
    return 0;
}

int ard_send(ard_port *p, const void *packet)
{
    return publish(p, packet, false, 0, 0);
}

int ard_send_stamped(ard_port *p, const void *packet, int64_t mono_ns, int64_t real_ns)
{
    return publish(p, packet, true, mono_ns, real_ns);
}

/* ---- zero-copy send: a loaned slot --------------------------------------------------- */

void *ard_send_loan(ard_port *p)
{
    if (check_out(p, "ard_send_loan") < 0)
        return NULL;
    uint64_t seq = p->loan_seq ? p->loan_seq : p->last_seq + 1;
    struct ardi_slot *slot = p->loan_seq ? ardi_slot_at(&p->map, seq) : begin(p, seq);
    p->loan_seq = seq;
    return slot + 1;
}

static inline int commit(ard_port *p, bool stamped, int64_t mono, int64_t real, const char *fn)
{
    int rc = check_out(p, fn);
    if (rc < 0)
        return rc;
    uint64_t seq = p->loan_seq;
    if (seq == 0)
        return ardi_fail(ARD_ESTATE, "port '%s': %s without a loaned slot (ard_send_loan first)",
                         p->name, fn);
    p->loan_seq = 0;
    if (!stamped)
        send_stamps(p, &mono, &real);
    /* The writer's own stores to the payload are ordered before the unlock by its release. */
    finish(p, ardi_slot_at(&p->map, seq), seq, mono, real);
    return 0;
}

int ard_send_commit(ard_port *p)
{
    return commit(p, false, 0, 0, "ard_send_commit");
}

int ard_send_commit_stamped(ard_port *p, int64_t mono_ns, int64_t real_ns)
{
    return commit(p, true, mono_ns, real_ns, "ard_send_commit_stamped");
}

const void *ard_sent(const ard_port *p, struct ard_info *info)
{
    if (p == NULL || p->dir != ARD_OUT || p->map.seg == NULL) {
        ardi_fail(p == NULL || p->dir != ARD_OUT ? ARD_EINVAL : ARD_ESTATE, "ard_sent: %s",
                  p == NULL           ? "port is NULL"
                  : p->dir != ARD_OUT ? "not an OUT port"
                                      : "port not attached");
        return NULL;
    }
    uint64_t seq = p->last_seq;
    if (seq == 0) {
        ardi_fail(ARD_ENODATA, "port '%s': nothing was sent on connection '%s' yet", p->name,
                  p->conn);
        return NULL;
    }
    struct ardi_slot *slot = ardi_slot_at(&p->map, seq);
    /* Our own packet needs no check; one a previous writer left (seq from the attach) is
     * shared input: it must be complete and stay so while we copy its times. */
    if (seq != p->info.seq) {
        int64_t mono, real;
        if (!ardi_slot_read(&p->map, seq, NULL, 0, &mono, &real)) {
            ardi_fail(ARD_ESTALE,
                      "port '%s' (connection '%s'): the newest packet's slot is not complete: "
                      "the object's header was damaged or rewritten",
                      p->name, p->conn);
            return NULL;
        }
        if (info)
            *info = (struct ard_info){.seq = seq, .mono_ns = mono, .real_ns = real};
    } else if (info) {
        *info = p->info;
    }
    return slot + 1;
}

static int check_in(ard_port *p, const void *packet, const char *fn)
{
    if (p == NULL || packet == NULL || p->dir != ARD_IN)
        return ardi_fail(ARD_EINVAL, "%s: %s", fn,
                         p == NULL        ? "port is NULL"
                         : packet == NULL ? "packet is NULL"
                                          : "not an IN port");
    if (p->map.seg == NULL)
        return ardi_fail(ARD_ESTATE,
                         "port '%s': %s before the port is attached (call ard_init "
                         "first)",
                         p->name, fn);
    return 0;
}

/* Copy the newest packet. Returns 1 (newer than last returned), 0 (same again), ARD_ENODATA,
 * or ARD_ESTALE when the shared header can no longer be trusted (detail set). */
static int take_newest(ard_port *p, void *packet)
{
    uint64_t h;
    int64_t mono, real;
    int rc = ardi_read_newest(&p->map, packet, p->size, &h, &mono, &real);
    if (rc == 0 && p->last_seq == 0)
        return ARD_ENODATA;
    if (rc <= 0 || h < p->last_seq)
        return ardi_fail(ARD_ESTALE,
                         "port '%s' (connection '%s'): %s: the object's header was "
                         "damaged or rewritten",
                         p->name, p->conn,
                         rc < 0 ? "the newest packet's slot never settles"
                                : "the sequence number went backwards");
    if (h == p->last_seq) {
        p->info.skipped = 0;
        return 0;
    }
    p->info = (struct ard_info){.seq = h,
                                .mono_ns = mono,
                                .real_ns = real,
                                .skipped = p->last_seq ? h - p->last_seq - 1 : 0};
    p->last_seq = h;
    return 1;
}

int ard_tryrec(ard_port *p, void *packet)
{
    int rc = check_in(p, packet, "ard_tryrec");
    if (rc < 0)
        return rc;
    return take_newest(p, packet);
}

int ard_poll(const ard_port *p)
{
    if (p == NULL || p->dir != ARD_IN)
        return ardi_fail(ARD_EINVAL, "ard_poll: %s", p == NULL ? "port is NULL" : "not an IN port");
    if (p->map.seg == NULL)
        return ardi_fail(ARD_ESTATE,
                         "port '%s': ard_poll before the port is attached (call ard_init first)",
                         p->name);
    uint64_t h = atomic_load_explicit(&p->map.seg->head, memory_order_acquire);
    if (h == p->last_seq)
        return h == 0 ? ARD_ENODATA : 0;
    /* Any other head, also one that went backwards (rewritten), is news for ard_tryrec to
     * copy or to report. */
    return 1;
}

/* ---- closing a waited-on port ------------------------------------------------------------
 * The blocking calls count themselves in on each port (a counter private to the process) and
 * look at `closing` before every sleep. ard_close sets it and wakes the port's futex word
 * until the count is zero: a waiter that looked just before the flag was set and then went to
 * sleep is woken by the next round. The shared word itself is not changed, so the wake
 * protocol between processes stays as the model has it; another process's sleepers see a
 * spurious wake and sleep again. */

static inline void wait_enter(ard_port *p)
{
    atomic_fetch_add_explicit(&p->waiters, 1, memory_order_seq_cst);
}

/* The last touch of p by a waiter: ard_close may free it right after. */
static inline void wait_leave(ard_port *p)
{
    atomic_fetch_sub_explicit(&p->waiters, 1, memory_order_release);
}

static inline bool is_closing(const ard_port *p)
{
    return atomic_load_explicit(&p->closing, memory_order_seq_cst);
}

#define CLOSE_REWAKE_NS 50000

/* A child of fork has only the thread that forked, which is in no call: nobody waits on any
 * port there, whatever the parent's threads were doing. Without this, a child's ard_close or
 * ard_fini would wait for ever for the parent's waiters. The port list is held across the
 * fork so that the child finds it whole. */
static void fork_prepare(void)
{
    ardi_lock();
}

static void fork_parent(void)
{
    ardi_unlock();
}

static void fork_child(void)
{
    for (ard_port *p = ardi_g.ports; p != NULL; p = p->next)
        atomic_store_explicit(&p->waiters, 0, memory_order_relaxed);
    ardi_unlock();
}

static void register_fork_handlers(void)
{
    (void)pthread_atfork(fork_prepare, fork_parent, fork_child);
}

void ardi_port_free(ard_port *p)
{
    if (p->dir == ARD_IN && p->map.seg != NULL) {
        atomic_store_explicit(&p->closing, true, memory_order_seq_cst);
        while (atomic_load_explicit(&p->waiters, memory_order_acquire) != 0) {
            futex(&p->map.seg->wake, FUTEX_WAKE, INT_MAX, NULL);
            struct timespec ts = {0, CLOSE_REWAKE_NS};
            nanosleep(&ts, NULL);
        }
    }
    ardi_seg_detach(&p->map, p->dir == ARD_OUT, p->dir == ARD_IN && p->spin_ns > 0);
    free(p);
}

static bool has_new(const ard_port *p)
{
    uint64_t h = atomic_load_explicit(&p->map.seg->head, memory_order_acquire);
    return h != 0 && h != p->last_seq;
}

/* Poll for up to p->spin_ns, but only while the writer last ran on another CPU: on a shared
 * CPU spinning would only steal the writer's time. */
static bool spin_for_new(const ard_port *p, int64_t deadline)
{
    struct ardi_seg *s = p->map.seg;
    uint32_t wcpu = atomic_load_explicit(&s->writer_cpu, memory_order_relaxed);
    if (wcpu == (uint32_t)sched_getcpu())
        return false;
    int64_t end = ard_now_ns() + p->spin_ns;
    if (deadline >= 0 && deadline < end)
        end = deadline;
    for (unsigned i = 1;; i++) {
        if (has_new(p))
            return true;
        ardi_cpu_relax();
        if ((i & 63) == 0 && (ard_now_ns() >= end || is_closing(p)))
            return false;
    }
}

/* Every change of the futex word by a well-behaved side comes with a new head (a send), or
 * happens once per attach (a writer taking over, a reader announcing itself). A word that
 * keeps changing without anything new was rewritten: give up after this many rounds in a row
 * that did not sleep. */
#define WAKE_ROUNDS 1000

/* Sleep until head moves past last_seq or the absolute deadline passes (deadline < 0: none).
 * Returns 0, ARD_ETIMEDOUT, ARD_EINTR, ARD_ESTALE, or ARD_ESTATE (the port is being closed). */
static int wait_new(ard_port *p, int64_t deadline)
{
    struct ardi_seg *s = p->map.seg;
    if (p->spin_ns > 0 && spin_for_new(p, deadline))
        return 0;
    for (unsigned rounds = 0; rounds < WAKE_ROUNDS; rounds++) {
        if (is_closing(p))
            return ARD_ESTATE;
        uint32_t w = atomic_load_explicit(&s->wake, memory_order_seq_cst);
        if (has_new(p))
            return 0;
        struct timespec ts, *tsp = NULL;
        if (deadline >= 0) {
            /* Before announcing a sleeper: a poll that times out must not cost the writer a
             * needless wake. */
            if (ard_now_ns() >= deadline)
                return ARD_ETIMEDOUT;
            ts.tv_sec = deadline / 1000000000;
            ts.tv_nsec = deadline % 1000000000;
            tsp = &ts;
        }
        if (!(w & 1u)) {
            /* Announce the sleeper; fails if the writer swapped the word meanwhile. */
            if (!atomic_compare_exchange_strong(&s->wake, &w, w | 1u))
                continue;
            w |= 1u;
        }
        /* FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC deadline. Not the private
         * variant: the word is shared between processes. */
        if (futex(&s->wake, FUTEX_WAIT_BITSET, w, tsp) == 0)
            rounds = 0; /* slept and was woken */
        else if (errno == ETIMEDOUT)
            return has_new(p) ? 0 : ARD_ETIMEDOUT;
        else if (errno == EINTR)
            return has_new(p) ? 0 : ARD_EINTR;
        /* else EAGAIN: the word changed before we slept; loop and look again. */
    }
    return ARD_ESTALE;
}

/* ---- waiting on many ports ------------------------------------------------------------ */

#ifndef SYS_futex_waitv
#define SYS_futex_waitv 449
#endif
struct waitv { /* struct futex_waitv of linux/futex.h (kernel 5.16) */
    uint64_t val;
    uint64_t uaddr;
    uint32_t flags;
    uint32_t reserved;
};
#define WAITV_FUTEX_32 2u
/* Ports beyond the kernel's limit, or no futex_waitv: look at every port each millisecond. */
#define WAIT_LOOK_NS 1000000

static _Atomic int waitv_missing; /* the kernel said ENOSYS once */

static int ready_count(ard_port *const *ports, size_t n, unsigned char *ready)
{
    int k = 0;
    for (size_t i = 0; i < n; i++) {
        bool r = has_new(ports[i]);
        if (ready)
            ready[i] = r;
        k += r;
    }
    return k;
}

static int wait_many(ard_port *const *ports, size_t n, int64_t timeout_ns, unsigned char *ready);

int ard_wait(ard_port *const *ports, size_t n, int64_t timeout_ns, unsigned char *ready)
{
    if (ports == NULL || n == 0)
        return ardi_fail(ARD_EINVAL, "ard_wait: %s", ports == NULL ? "ports is NULL" : "no ports");
    for (size_t i = 0; i < n; i++) {
        ard_port *p = ports[i];
        if (p == NULL || p->dir != ARD_IN)
            return ardi_fail(ARD_EINVAL, "ard_wait: port %zu %s", i,
                             p == NULL ? "is NULL" : "is not an IN port");
        if (p->map.seg == NULL)
            return ardi_fail(ARD_ESTATE, "port '%s': ard_wait before the port is attached",
                             p->name);
    }
    for (size_t i = 0; i < n; i++)
        wait_enter(ports[i]);
    int rc = wait_many(ports, n, timeout_ns, ready);
    for (size_t i = 0; i < n; i++)
        wait_leave(ports[i]);
    return rc;
}

static int wait_many(ard_port *const *ports, size_t n, int64_t timeout_ns, unsigned char *ready)
{
    int64_t deadline = timeout_ns < 0 ? -1 : ard_now_ns() + timeout_ns;
    size_t nsleep = n < ARD_WAIT_SLEEP_MAX ? n : ARD_WAIT_SLEEP_MAX;
    struct waitv wv[ARD_WAIT_SLEEP_MAX];
    for (unsigned rounds = 0; rounds < WAKE_ROUNDS; rounds++) {
        for (size_t i = 0; i < n; i++)
            if (is_closing(ports[i]))
                return ardi_fail(ARD_ESTATE,
                                 "port '%s' (connection '%s') was closed by another thread "
                                 "while ard_wait waited on it",
                                 ports[i]->name, ports[i]->conn);
        /* Load every word, then look at every head: a send after our look changes its word. */
        for (size_t i = 0; i < nsleep; i++)
            wv[i] = (struct waitv){
                .val = atomic_load_explicit(&ports[i]->map.seg->wake, memory_order_seq_cst),
                .uaddr = (uint64_t)(uintptr_t)&ports[i]->map.seg->wake,
                .flags = WAITV_FUTEX_32};
        int k = ready_count(ports, n, ready);
        if (k > 0)
            return k;
        int64_t now = ard_now_ns();
        if (deadline >= 0 && now >= deadline)
            return ardi_fail(ARD_ETIMEDOUT, "ard_wait on %zu ports: nothing new within the timeout",
                             n);
        /* Announce a sleeper on every word; one that moved meanwhile means news or a new
         * writer: look again. */
        bool moved = false;
        for (size_t i = 0; i < nsleep && !moved; i++) {
            uint32_t w = (uint32_t)wv[i].val;
            if (!(w & 1u)) {
                moved = !atomic_compare_exchange_strong(&ports[i]->map.seg->wake, &w, w | 1u);
                wv[i].val = w | 1u;
            }
        }
        if (moved)
            continue;
        bool look = n > nsleep || atomic_load_explicit(&waitv_missing, memory_order_relaxed);
        int64_t until = deadline;
        if (look && (until < 0 || until > now + WAIT_LOOK_NS))
            until = now + WAIT_LOOK_NS;
        struct timespec ts = {until / 1000000000, until % 1000000000},
                        *tsp = until < 0 ? NULL : &ts;
        long r;
        if (!atomic_load_explicit(&waitv_missing, memory_order_relaxed)) {
            r = syscall(SYS_futex_waitv, wv, (unsigned)nsleep, 0u, tsp, CLOCK_MONOTONIC);
            if (r < 0 && errno == ENOSYS) {
                atomic_store(&waitv_missing, 1);
                continue;
            }
        } else {
            /* Old kernel: sleep on the first port, look at all every millisecond. */
            r = futex(&ports[0]->map.seg->wake, FUTEX_WAIT_BITSET, (uint32_t)wv[0].val, tsp);
        }
        if (r >= 0 || (r < 0 && errno == ETIMEDOUT && look && until != deadline))
            rounds = 0; /* slept: woken, or a look-around */
        else if (errno == ETIMEDOUT)
            continue; /* the next round finds news or reports the timeout */
        else if (errno == EINTR) {
            k = ready_count(ports, n, ready);
            return k > 0 ? k : ardi_fail(ARD_EINTR, "ard_wait: interrupted by a signal");
        }
        /* else EAGAIN: a word changed before we slept: look again. */
    }
    return ardi_fail(ARD_ESTALE,
                     "ard_wait on %zu ports: a futex word keeps changing without a new packet: "
                     "a connection's header was damaged or rewritten",
                     n);
}

static int rec_wait(ard_port *p, void *packet, int64_t deadline);

static int rec_until(ard_port *p, void *packet, int64_t deadline, const char *fn)
{
    int rc = check_in(p, packet, fn);
    if (rc < 0)
        return rc;
    wait_enter(p);
    rc = rec_wait(p, packet, deadline);
    wait_leave(p);
    return rc;
}

static int rec_wait(ard_port *p, void *packet, int64_t deadline)
{
    int rc;
    /* has_new and take_newest read the head apart; only a rewritten head makes them disagree
     * again and again. */
    for (unsigned false_alarms = 0; false_alarms < WAKE_ROUNDS; false_alarms++) {
        if (has_new(p)) {
            rc = take_newest(p, packet);
            if (rc == 1)
                return 0;
            if (rc == ARD_ESTALE)
                return rc;
        }
        rc = wait_new(p, deadline);
        if (rc == ARD_ETIMEDOUT)
            return ardi_fail(rc, "port '%s' (connection '%s'): no new packet within the timeout",
                             p->name, p->conn);
        if (rc == ARD_EINTR)
            return ardi_fail(rc, "port '%s': interrupted by a signal", p->name);
        if (rc == ARD_ESTATE)
            return ardi_fail(rc,
                             "port '%s' (connection '%s') was closed by another thread while "
                             "waited on",
                             p->name, p->conn);
        if (rc == ARD_ESTALE)
            break;
    }
    return ardi_fail(ARD_ESTALE,
                     "port '%s' (connection '%s'): the futex word or head keeps changing "
                     "without a new packet: the object's header was damaged or rewritten",
                     p->name, p->conn);
}

int ard_rec(ard_port *p, void *packet)
{
    return rec_until(p, packet, -1, "ard_rec");
}

int ard_rec_timed(ard_port *p, void *packet, int64_t timeout_ns)
{
    int64_t deadline = ard_now_ns() + (timeout_ns > 0 ? timeout_ns : 0);
    return rec_until(p, packet, deadline, "ard_rec_timed");
}

/* ---- declaration and attachment --------------------------------------------------------- */

int ardi_check_name(const char *what, const char *s, bool dots)
{
    if (s == NULL || *s == '\0')
        return ardi_fail(ARD_EINVAL, "%s name is empty", what);
    size_t n = strlen(s);
    if (n > ARD_MAX_NAME)
        return ardi_fail(ARD_EINVAL, "%s name '%.20s...' is longer than %d characters", what, s,
                         ARD_MAX_NAME);
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '-' || (c == '.' && dots);
        if (!ok)
            return ardi_fail(ARD_EINVAL,
                             "%s name '%s': character '%c' at %zu is not allowed "
                             "(use A-Z a-z 0-9 _ -%s)",
                             what, s, c, i + 1, dots ? " ." : "");
    }
    if (strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
        return ardi_fail(ARD_EINVAL, "%s name '%s' is not allowed", what, s);
    return 0;
}

/* A new writer moves the futex word to a value no send ever stores and wakes every sleeper:
 * its predecessor may have died between publishing a packet and waking them, and a reader
 * that was about to sleep on the old value now finds it changed (tests/model/ardnet.pml). */
static void writer_takeover(struct ardi_seg *s)
{
    uint32_t w = atomic_load(&s->wake), moved = 0;
    /* Bounded: a word that another process keeps rewriting gets a plain store at the end. */
    for (int i = 0; i < 1000; i++) {
        moved = (((w >> 2) + 1) << 2) | 2u;
        if (atomic_compare_exchange_weak(&s->wake, &w, moved))
            break;
        if (i == 999)
            atomic_store(&s->wake, moved);
    }
    futex(&s->wake, FUTEX_WAKE, INT_MAX, NULL);
}

int ardi_port_attach(ard_port *p)
{
    struct ardi_attach_req rq = {
        .domain = ardi_g.domain,
        .conn = p->conn,
        .port = p->name,
        .size = p->size,
        .type = p->type,
        .writer = p->dir == ARD_OUT,
        .mode = ardi_g.mode,
        .allow_foreign = ardi_g.allow_foreign,
    };
    struct ardi_geom g;
    int rc = ardi_seg_attach(&rq, &p->map, &g);
    if (rc < 0)
        return rc;
    struct ardi_seg *s = p->map.seg;
    /* From the validated private copy, never from the header again. */
    if (p->size == 0) {
        p->size = (size_t)g.size;
        memcpy(p->type, g.type, sizeof p->type);
    } else if (p->type[0] == '\0') {
        memcpy(p->type, g.type, sizeof p->type);
    }
    /* A writer continues the sequence; a reader starts as if it had read nothing. */
    p->last_seq = p->dir == ARD_OUT ? atomic_load(&s->head) : 0;
    if (p->dir == ARD_OUT)
        writer_takeover(s);
    p->attached = true;
    if (p->dir == ARD_IN && p->spin_ns > 0)
        atomic_fetch_add(&s->spinners, 1);
    return 0;
}

ard_port *ard_create(const char *name, enum ard_dir dir, size_t size, const char *type)
{
    return ard_create_on(name, NULL, dir, size, type);
}

ard_port *ard_create_on(const char *name, const char *connection, enum ard_dir dir, size_t size,
                        const char *type)
{
    if (ardi_check_name("port", name, true) < 0)
        return NULL;
    if (connection != NULL && ardi_check_name("connection", connection, true) < 0)
        return NULL;
    if (dir != ARD_IN && dir != ARD_OUT) {
        ardi_fail(ARD_EINVAL, "port '%s': direction must be ARD_IN or ARD_OUT", name);
        return NULL;
    }
    if (size > ARD_MAX_PACKET) {
        ardi_fail(ARD_EINVAL, "port '%s': size %zu is larger than %u bytes", name, size,
                  ARD_MAX_PACKET);
        return NULL;
    }
    if (size == 0 && type != NULL) {
        ardi_fail(ARD_EINVAL, "port '%s': size 0 (adopt the connection's) needs type NULL", name);
        return NULL;
    }
    static pthread_once_t fork_once = PTHREAD_ONCE_INIT;
    pthread_once(&fork_once, register_fork_handlers);
    ard_port *p = calloc(1, sizeof *p);
    if (p == NULL) {
        ardi_fail(ARD_ENOMEM, "port '%s': out of memory", name);
        return NULL;
    }
    snprintf(p->name, sizeof p->name, "%s", name);
    snprintf(p->conn, sizeof p->conn, "%s", connection ? connection : name);
    p->dir = dir;
    p->size = size;
    p->map.fd = -1;
    p->rt.mono_c = ARDI_RT_UNKNOWN;
    if (type != NULL) {
        size_t tsize;
        if (ard_type_normalize(type, p->type, sizeof p->type) < 0 ||
            ard_type_parse(type, NULL, 0, NULL, &tsize) < 0) {
            char why[600];
            snprintf(why, sizeof why, "%s", ard_errdetail());
            ardi_fail(ARD_ETYPE, "port '%s': %s", name, why);
            free(p);
            return NULL;
        }
        if (tsize != size) {
            ardi_fail(ARD_ETYPE, "port '%s': type '%s' has size %zu, the port declares %zu", name,
                      p->type, tsize, size);
            free(p);
            return NULL;
        }
    }

    ardi_lock();
    int rc = 0;
    for (ard_port *q = ardi_g.ports; q; q = q->next)
        if (strcmp(q->name, name) == 0)
            rc = ardi_fail(ARD_EINVAL, "port '%s' is already declared by this block", name);
    if (rc == 0 && ardi_g.initialized) {
        for (size_t i = 0; i < ardi_g.nwires; i++)
            if (strcmp(ardi_g.wires[i].port, name) == 0) {
                snprintf(p->conn, sizeof p->conn, "%s", ardi_g.wires[i].conn);
                p->wired = ardi_g.wires[i].used = true;
            }
        p->spin_ns = dir == ARD_IN ? ardi_g.spin_ns : 0;
        rc = ardi_port_attach(p);
    }
    if (rc == 0) {
        ard_port **tail = &ardi_g.ports;
        while (*tail)
            tail = &(*tail)->next;
        *tail = p;
    }
    ardi_unlock();
    if (rc < 0) {
        free(p);
        return NULL;
    }
    return p;
}

static void unlink_port(ard_port *p)
{
    for (ard_port **pp = &ardi_g.ports; *pp; pp = &(*pp)->next)
        if (*pp == p) {
            *pp = p->next;
            return;
        }
}

void ard_close(ard_port *p)
{
    if (p == NULL)
        return;
    ardi_lock();
    unlink_port(p);
    ardi_unlock();
    ardi_port_free(p);
}

int ard_port_set_spin(ard_port *p, int64_t spin_ns)
{
    if (p == NULL || p->dir != ARD_IN || spin_ns < 0)
        return ardi_fail(ARD_EINVAL, "ard_port_set_spin: %s",
                         p == NULL          ? "port is NULL"
                         : p->dir != ARD_IN ? "not an IN port"
                                            : "negative spin time");
    if (p->map.seg != NULL && (p->spin_ns > 0) != (spin_ns > 0))
        atomic_fetch_add(&p->map.seg->spinners, spin_ns > 0 ? 1u : (uint32_t)-1);
    p->spin_ns = spin_ns;
    return 0;
}

struct ard_info ard_port_info(const ard_port *p)
{
    return p ? p->info : (struct ard_info){0};
}

const char *ard_port_name(const ard_port *p)
{
    return p ? p->name : "";
}

const char *ard_port_connection(const ard_port *p)
{
    return p ? p->conn : "";
}

const char *ard_port_type(const ard_port *p)
{
    return p ? p->type : "";
}

size_t ard_port_size(const ard_port *p)
{
    return p ? p->size : 0;
}

enum ard_dir ard_port_dir(const ard_port *p)
{
    return p ? p->dir : ARD_IN;
}
