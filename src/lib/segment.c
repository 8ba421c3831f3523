/*
 * segment.c - the shared-memory object of one connection: create, check, attach, detach.
 *
 * Coordination between processes uses open-file-description (OFD) record locks on three
 * bytes of the object; the kernel drops them when a process dies, so nothing needs manual
 * clean-up after a kill -9:
 *   byte 0  init lock, held exclusively while one side creates or checks the header;
 *   byte 1  attach marker, held shared by every attached port (exclusive = nobody attached);
 *   byte 2  writer lock, held exclusively by the one live writer;
 * and, for the table of who is attached (ARDI_MAX_PEERS entries in the header):
 *   byte PEER_CLAIM + i  held exclusively by the port that owns entry i (taken first);
 *   byte PEER_LIVE + i   held exclusively once that port has written entry i: a lister shows
 *                        entry i only while this lock is held, so never a dead port's entry;
 *   byte OVERFLOW + j    held by a port that found every entry taken (counted, not listed).
 * None of them is touched by send/rec/tryrec.
 */
#include "ardi.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

enum { LOCK_INIT = 0, LOCK_ATTACHED = 1, LOCK_WRITER = 2 };
enum { PEER_CLAIM = 64, PEER_LIVE = PEER_CLAIM + ARDI_MAX_PEERS, OVERFLOW = 4096 };
#define OVERFLOW_N 1024

void ardi_shm_name(char *buf, const char *domain, const char *conn)
{
    snprintf(buf, ARDI_SHM_NAME_MAX, "/" ARDI_SHM_PREFIX "%s.%s", domain, conn);
}

static int ofd_lock(int fd, int byte, short type, bool wait)
{
    struct flock fl = {.l_type = type, .l_whence = SEEK_SET, .l_start = byte, .l_len = 1};
    int rc;
    do
        rc = fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &fl);
    while (rc < 0 && errno == EINTR);
    return rc;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}

/* Bounded wait for the init lock (exclusive to create or check a header, shared to inspect
 * one): a creator holds it for microseconds; a process of ours that is stopped (SIGSTOP,
 * debugger) while holding it must not hang us forever. */
static int take_init_lock(int fd, const char *conn, short type, int max_ms)
{
    for (int i = 0; i < max_ms; i++) {
        if (ofd_lock(fd, LOCK_INIT, type, false) == 0)
            return 0;
        if (errno != EAGAIN && errno != EACCES)
            return ardi_fail_errno(ARD_ESYS, errno, "connection '%s': fcntl(F_OFD_SETLK)", conn);
        sleep_ms(1);
    }
    return ardi_fail(ARD_ESTALE,
                     "connection '%s': another process has held the object's init "
                     "lock for over %d ms (stopped while attaching?)",
                     conn, max_ms);
}

static bool in_my_groups(gid_t gid)
{
    if (getegid() == gid)
        return true;
    int n = getgroups(0, NULL);
    gid_t *v = n > 0 ? malloc((size_t)n * sizeof *v) : NULL;
    bool found = false;
    if (v != NULL && (n = getgroups(n, v)) > 0)
        for (int i = 0; i < n && !found; i++)
            found = v[i] == gid;
    free(v);
    return found;
}

int ardi_check_owner(const struct stat *st, const char *conn, unsigned mode, bool allow_foreign)
{
    uid_t me = geteuid();
    unsigned have = st->st_mode & 07777;
    const char *why = NULL;
    if (have & ~mode & 07777)
        why = "its mode gives group or others more than the configured mode allows";
    else if (st->st_uid != me && !allow_foreign) {
        /* With a group mode configured, the object's group members are trusted peers; root
         * trusts nobody else's objects unless told to (for root no permission bit protects). */
        bool peer = me != 0 && (mode & 0070) != 0 && in_my_groups(st->st_gid);
        if (!peer)
            why = "created by another user; --ard-allow-foreign or ARD_ALLOW_FOREIGN=1 accepts "
                  "that";
    }
    if (why == NULL)
        return 0;
    return ardi_fail(ARD_EACCES,
                     "connection '%s' is owned by uid %u with mode %04o: refusing (%s; "
                     "configured mode %04o)",
                     conn, (unsigned)st->st_uid, have, why, mode);
}

/* shm_open said EACCES: name the owner and mode of what we may not open. */
static int denied(const char *conn, const char *shm)
{
    char path[ARDI_SHM_NAME_MAX + sizeof ARDI_SHM_DIR];
    snprintf(path, sizeof path, ARDI_SHM_DIR "%s", shm);
    struct stat st;
    if (stat(path, &st) == 0)
        return ardi_fail(ARD_EACCES,
                         "connection '%s' is owned by uid %u with mode %04o: permission "
                         "denied",
                         conn, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
    return ardi_fail(ARD_EACCES, "connection '%s': permission denied on /dev/shm%s", conn, shm);
}

/* shm_open said EMFILE: every attached connection keeps a descriptor; name the limit. */
static int no_descriptor(const char *conn, const char *shm)
{
    struct rlimit rl = {0, 0};
    (void)getrlimit(RLIMIT_NOFILE, &rl);
    return ardi_fail(ARD_ESYS,
                     "connection '%s': shm_open(%s): %s: every attached connection keeps one "
                     "descriptor and RLIMIT_NOFILE is %llu (raise it: ulimit -n)",
                     conn, shm, strerror(EMFILE), (unsigned long long)rl.rlim_cur);
}

static size_t round_up(size_t v, size_t a)
{
    return (v + a - 1) / a * a;
}

static void layout(size_t size, uint32_t *nslots, uint64_t *stride, uint64_t *total)
{
    /* Enough slots that a reader copying one packet is rarely lapped by the writer. */
    *nslots = size <= 65536 ? 8 : 4;
    *stride = sizeof(struct ardi_slot) + round_up(size, ARDI_CACHELINE);
    *total = round_up(sizeof(struct ardi_seg) + *nslots * *stride, 4096);
}

size_t ardi_object_bytes(size_t packet_size)
{
    uint32_t nslots;
    uint64_t stride, total;
    layout(packet_size, &nslots, &stride, &total);
    return (size_t)total;
}

/* Bytes free in /dev/shm for an unprivileged user, or -1 when statvfs fails. */
static long long shm_free_bytes(void)
{
    struct statvfs vfs;
    if (statvfs(ARDI_SHM_DIR, &vfs) < 0)
        return -1;
    return (long long)vfs.f_bavail * (long long)vfs.f_frsize;
}

/* Allocate every page of [0, len) of the object now (tmpfs grants ftruncate sparsely, and the
 * first touch of a page it cannot back raises SIGBUS). Pages already there keep their data.
 * The raw fallocate(2), not posix_fallocate: glibc's emulation of the latter reads and
 * rewrites a byte of every block, which could undo a concurrent writer's store. Returns 0 or
 * an errno; EOPNOTSUPP where the file system has no fallocate. */
static int reserve(int fd, size_t len)
{
    /* tmpfs gives up with EINTR when a signal arrives during a large allocation. */
    for (int tries = 0;; tries++) {
        if (fallocate(fd, 0, 0, (off_t)len) == 0)
            return 0;
        if (errno != EINTR || tries >= 100)
            return errno;
    }
}

/* The object was just emptied (8 bytes of ARDI_MAGIC_INIT): give it `total` bytes, every page
 * backed. Where the file system has no fallocate, write zeros: write(2) fails with ENOSPC
 * where a store through a mapping would raise SIGBUS. */
static int grow_reserved(int fd, uint64_t total)
{
    int e = reserve(fd, (size_t)total);
    if (e != EOPNOTSUPP)
        return e;
    static const char zeros[65536];
    for (uint64_t off = 8; off < total;) {
        size_t n = total - off < sizeof zeros ? (size_t)(total - off) : sizeof zeros;
        ssize_t w = pwrite(fd, zeros, n, (off_t)off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return w < 0 ? errno : ENOSPC;
        off += (uint64_t)w;
    }
    return 0;
}

/* The error of an object that /dev/shm cannot back: names the bytes needed and free. */
static int no_space(const char *conn, const char *what, uint64_t need, int e)
{
    long long avail = shm_free_bytes();
    char freetxt[64] = "unknown";
    if (avail >= 0)
        snprintf(freetxt, sizeof freetxt, "%lld", avail);
    if (e == ENOSPC || e == ENOMEM || e == EFBIG)
        return ardi_fail(ARD_ENOMEM,
                         "connection '%s': %s needs %llu bytes of " ARDI_SHM_DIR
                         " and %s bytes are free (%s): free space there or make it larger",
                         conn, what, (unsigned long long)need, freetxt, strerror(e));
    return ardi_fail_errno(ARD_ESYS, e, "connection '%s': reserving %llu bytes for %s", conn,
                           (unsigned long long)need, what);
}

/* Write a fresh header into the object (under the init lock, nobody attached). The object
 * carries ARDI_MAGIC_INIT from before it has its length until the header is complete, so a
 * creator killed at any step leaves either an empty object or one marked as abandoned; a
 * create that fails is removed by the caller (discard). */
static int init_header(int fd, const struct ardi_attach_req *rq, size_t size, const char *type)
{
    uint32_t nslots;
    uint64_t stride, total;
    layout(size, &nslots, &stride, &total);
    const uint64_t init_magic = ARDI_MAGIC_INIT;
    /* Shrinking to 0 first zeroes every slot, also when re-initialising a stale object. */
    if (ftruncate(fd, 0) < 0)
        return ardi_fail_errno(ARD_ESYS, errno, "connection '%s': ftruncate to 0 bytes", rq->conn);
    ssize_t w = pwrite(fd, &init_magic, sizeof init_magic, 0);
    if (w != 8)
        return no_space(rq->conn, "its new object", total, w < 0 ? errno : ENOSPC);
    int e = grow_reserved(fd, total);
    if (e != 0)
        return no_space(rq->conn, "its new object", total, e);
    struct ardi_seg *s = mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (s == MAP_FAILED)
        return ardi_fail_errno(ARD_ESYS, errno, "connection '%s': mmap", rq->conn);
    s->version = ARDI_VERSION;
    s->nslots = nslots;
    s->size = size;
    s->stride = stride;
    s->total = total;
    s->type_hash = ard_type_hash(type);
    snprintf(s->conn, sizeof s->conn, "%s", rq->conn);
    snprintf(s->type, sizeof s->type, "%s", type);
    atomic_store_explicit(&s->magic, ARDI_MAGIC, memory_order_release);
    munmap(s, sizeof *s);
    return 0;
}

/* A create or re-create that failed half-way: under the init lock and with nobody attached,
 * unlink the object and release its pages, so that nothing is left behind. An attach waiting
 * for the init lock then finds it unlinked and opens anew. */
static void discard(int fd, const char *shm)
{
    if (ofd_lock(fd, LOCK_ATTACHED, F_WRLCK, false) < 0)
        return;
    ofd_lock(fd, LOCK_ATTACHED, F_UNLCK, false);
    shm_unlink(shm);
    if (ftruncate(fd, 0) < 0) {
        /* nothing more to do: the object is unlinked, its pages go with its last descriptor */
    }
}

int ardi_seg_check(const struct ardi_seg *s, size_t len, const char *conn, const char *shm,
                   struct ardi_geom *g)
{
    if (len < sizeof *s)
        return ardi_fail(ARD_ESTALE,
                         "connection '%s': /dev/shm%s is %zu bytes, too small to be an "
                         "ardnet object; remove it if it is stale",
                         conn, shm, len);
    /* One snapshot of the immutable part: every check below and the caller's private copy
     * see the same values, whatever another process writes meanwhile. */
    uint64_t magic = atomic_load_explicit(&s->magic, memory_order_acquire);
    struct ardi_seg h;
    memcpy((char *)&h + sizeof h.magic, (const char *)s + sizeof h.magic,
           offsetof(struct ardi_seg, head) - sizeof h.magic);
    if (magic == ARDI_MAGIC_INIT)
        return ardi_fail(ARD_ESTALE,
                         "connection '%s': /dev/shm%s is being created, or its creator died "
                         "while creating it (the next port that declares a size re-creates it)",
                         conn, shm);
    if (magic != ARDI_MAGIC)
        return ardi_fail(ARD_ESTALE,
                         "connection '%s': /dev/shm%s is not an ardnet object "
                         "(bad magic); remove it if it is stale",
                         conn, shm);
    if (h.version != ARDI_VERSION)
        return ardi_fail(ARD_ESTALE,
                         "connection '%s': /dev/shm%s has layout version %u, this "
                         "library uses %u",
                         conn, shm, h.version, ARDI_VERSION);
    uint32_t nslots;
    uint64_t stride, total;
    layout(h.size, &nslots, &stride, &total);
    const char *bad = NULL;
    if (h.size == 0 || h.size > ARD_MAX_PACKET)
        bad = "packet size";
    else if (h.nslots != nslots || (nslots & (nslots - 1)) != 0)
        bad = "slot count";
    else if (h.stride != stride)
        bad = "slot stride";
    else if (h.total != total || total != len)
        bad = "object size";
    else if (memchr(h.type, '\0', sizeof h.type) == NULL)
        bad = "type descriptor";
    if (bad == NULL && h.type[0] != '\0') {
        size_t tsize;
        if (ard_type_parse(h.type, NULL, 0, NULL, &tsize) < 0 || tsize != h.size)
            bad = "type descriptor";
    }
    if (bad != NULL)
        return ardi_fail(ARD_ESTALE,
                         "connection '%s': /dev/shm%s is damaged (%s in the header does "
                         "not match its %zu bytes)",
                         conn, shm, bad, len);
    g->nslots = h.nslots;
    g->stride = h.stride;
    g->size = h.size;
    g->total = h.total;
    memcpy(g->type, h.type, sizeof g->type);
    return 0;
}

void ardi_map_geom(struct ardi_map *m, const struct ardi_geom *g)
{
    m->slots = m->seg->slots;
    m->slot_mask = g->nslots - 1;
    m->stride = g->stride;
}

/* Does the validated geometry agree with the request? 0 or ARD_ETYPE. */
static int check_layout(const struct ardi_geom *g, const struct ardi_attach_req *rq)
{
    bool size_ok = rq->size == 0 || rq->size == g->size;
    /* An opaque side accepts any type; two typed sides must agree. */
    bool type_ok =
        rq->type[0] == '\0' || g->type[0] == '\0' || ardi_type_same_layout(rq->type, g->type);
    if (size_ok && type_ok)
        return 0;
    return ardi_fail(ARD_ETYPE,
                     "port '%s': connection '%s' exists with size %llu type '%s', "
                     "this port declares size %zu type '%s'",
                     rq->port, rq->conn, (unsigned long long)g->size,
                     g->type[0] ? g->type : "(opaque)", rq->size,
                     rq->type[0] ? rq->type : "(opaque)");
}

/* An object sized sparsely by someone else (an older ardnet, `truncate` by hand) has pages that
 * tmpfs allocates only when first touched, through a mapping too, read or write: on a full
 * /dev/shm that touch raises SIGBUS. The object's allocated size (st_blocks, which counts
 * pages reserved by fallocate too; SEEK_HOLE does not: tmpfs reports a reserved page that was
 * never written as a hole) tells a whole object from a sparse one. A sparse one has its header
 * checked from a copy read with pread (which reads a hole as zeros without allocating), then
 * its missing pages allocated; a read-only side does that through a second, read-write
 * descriptor of the same object when it may write it. Where that is impossible the object is
 * refused, named, before any page of it is mapped. */
static int check_backed(int fd, const struct stat *st, const char *conn, const char *shm, int prot,
                        struct ardi_geom *g)
{
    size_t len = (size_t)st->st_size;
    uint64_t have = (uint64_t)st->st_blocks * 512u;
    if (have >= len)
        return 0;
    uint64_t missing = len - have;
    struct ardi_seg h;
    ssize_t got = pread(fd, &h, sizeof h, 0);
    if (got != (ssize_t)sizeof h)
        return ardi_fail_errno(ARD_ESYS, got < 0 ? errno : EIO,
                               "connection '%s': reading the header of /dev/shm%s", conn, shm);
    int rc = ardi_seg_check(&h, len, conn, shm, g);
    if (rc < 0)
        return rc;
    int wfd = fd, e;
    if (!(prot & PROT_WRITE)) {
        char self[64];
        snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
        wfd = open(self, O_RDWR | O_CLOEXEC);
        if (wfd < 0) {
            e = errno;
            return ardi_fail(ARD_ESTALE,
                             "connection '%s': /dev/shm%s is sparse (%llu of its %zu bytes are "
                             "not backed by memory yet) and this read-only side may not "
                             "reserve them (%s): refused, since touching such a page on a full "
                             "/dev/shm raises SIGBUS; the next read-write attach reserves them",
                             conn, shm, (unsigned long long)missing, len, strerror(e));
        }
    }
    e = reserve(wfd, len);
    if (wfd != fd)
        close(wfd);
    if (e == 0)
        return 0;
    if (e == EOPNOTSUPP)
        return ardi_fail(ARD_ESTALE,
                         "connection '%s': /dev/shm%s is sparse (%llu of its %zu bytes are not "
                         "backed) and its file system cannot reserve them: refused",
                         conn, shm, (unsigned long long)missing, len);
    return no_space(conn, "reserving its sparse object", missing, e);
}

/* Map the whole object behind fd and validate it. On success *sp and *lenp hold the mapping. */
static int map_checked(int fd, const char *conn, const char *shm, int prot, struct ardi_seg **sp,
                       size_t *lenp, struct ardi_geom *g)
{
    struct stat st;
    if (fstat(fd, &st) < 0)
        return ardi_fail_errno(ARD_ESYS, errno, "connection '%s': fstat", conn);
    size_t len = (size_t)st.st_size;
    if (len < sizeof(struct ardi_seg))
        return ardi_seg_check(NULL, len, conn, shm, g); /* names the size; reads nothing */
    int rc = check_backed(fd, &st, conn, shm, prot, g);
    if (rc < 0)
        return rc;
    struct ardi_seg *s = mmap(NULL, len, prot, MAP_SHARED, fd, 0);
    if (s == MAP_FAILED)
        return ardi_fail_errno(ARD_ESYS, errno, "connection '%s': mmap of %zu bytes", conn, len);
    rc = ardi_seg_check(s, len, conn, shm, g);
    if (rc < 0) {
        munmap(s, len);
        return rc;
    }
    *sp = s;
    *lenp = len;
    return 0;
}

/* Under the init lock: make sure the object has a valid header matching the request, and map
 * it. Its geometry is validated once, here, on the mapping the port keeps. */
static int prepare(int fd, const struct ardi_attach_req *rq, const char *shm, struct ardi_seg **sp,
                   size_t *lenp, struct ardi_geom *g)
{
    struct stat st;
    if (fstat(fd, &st) < 0)
        return ardi_fail_errno(ARD_ESYS, errno, "connection '%s': fstat", rq->conn);
    /* An object whose creator died half-way (it held the init lock we hold now), or one of
     * an earlier layout version, to which nobody is attached, is re-created. */
    struct {
        uint64_t magic;
        uint32_t version;
    } id = {0, 0};
    ssize_t got = st.st_size >= 8 ? pread(fd, &id, sizeof id, 0) : 0;
    bool redo = got >= 8 &&
                (id.magic == ARDI_MAGIC_INIT || (id.magic == ARDI_MAGIC && got >= 12 &&
                                                 id.version >= 1 && id.version < ARDI_VERSION)) &&
                ofd_lock(fd, LOCK_ATTACHED, F_WRLCK, false) == 0;
    if (redo)
        ofd_lock(fd, LOCK_ATTACHED, F_UNLCK, false);
    if (st.st_size == 0 || redo) {
        if (rq->size == 0)
            return ardi_fail(ARD_ENOENT,
                             "port '%s': connection '%s' does not exist yet and the "
                             "port declares no size",
                             rq->port, rq->conn);
        int rc = init_header(fd, rq, rq->size, rq->type);
        if (rc < 0) {
            discard(fd, shm);
            return rc;
        }
    }
    int rc = map_checked(fd, rq->conn, shm, PROT_READ | PROT_WRITE, sp, lenp, g);
    if (rc == 0)
        rc = check_layout(g, rq);
    if (rc == 0 && rq->type[0] != '\0' && g->type[0] == '\0') {
        /* An opaque creator left the type open: record it so tools can decode. */
        struct ardi_seg *s = *sp;
        snprintf(s->type, sizeof s->type, "%s", rq->type);
        s->type_hash = ard_type_hash(rq->type);
        snprintf(g->type, sizeof g->type, "%s", rq->type);
    }
    if (rc == ARD_ETYPE) {
        munmap(*sp, *lenp);
        if (rq->size != 0 && ofd_lock(fd, LOCK_ATTACHED, F_WRLCK, false) == 0) {
            /* Nobody is attached: the object is left over from an earlier run with another
             * layout. Its last value is meaningless to the new layout, so start afresh. */
            ofd_lock(fd, LOCK_ATTACHED, F_UNLCK, false);
            rc = init_header(fd, rq, rq->size, rq->type);
            if (rc == 0)
                rc = map_checked(fd, rq->conn, shm, PROT_READ | PROT_WRITE, sp, lenp, g);
            else
                discard(fd, shm);
        }
    }
    return rc;
}

static int writer_pid_of(const struct ardi_seg *s)
{
    /* The live writer stores its pid right after taking the lock; give it a moment. */
    for (int i = 0; i < 100; i++) {
        int pid = atomic_load(&s->writer_pid);
        if (pid > 0)
            return pid;
        sleep_ms(1);
    }
    return 0;
}

/* Enter this port in the table of who is attached: claim a free entry, write it, then mark
 * it live. With every entry taken, hold an overflow byte so that the port is counted. */
static void register_peer(int fd, struct ardi_seg *s, const struct ardi_attach_req *rq)
{
    for (int i = 0; i < ARDI_MAX_PEERS; i++) {
        if (ofd_lock(fd, PEER_CLAIM + i, F_WRLCK, false) < 0)
            continue;
        struct ardi_peer *e = &s->peers[i];
        uint32_t gen = atomic_load_explicit(&e->gen, memory_order_relaxed);
        gen += gen & 1u;
        atomic_store_explicit(&e->gen, gen + 1, memory_order_relaxed);
        atomic_thread_fence(memory_order_release);
        e->pid = (int32_t)getpid();
        e->dir = rq->writer ? ARD_OUT : ARD_IN;
        e->pad = 0;
        e->attach_real_ns = ard_realtime_ns();
        char comm[16] = "";
        prctl(PR_GET_NAME, comm, 0, 0, 0);
        memcpy(e->program, comm, sizeof e->program);
        e->program[sizeof e->program - 1] = '\0';
        snprintf(e->port, sizeof e->port, "%s", rq->port);
        atomic_store_explicit(&e->gen, gen + 2, memory_order_release);
        if (ofd_lock(fd, PEER_LIVE + i, F_WRLCK, false) == 0)
            return;
        /* Someone holds our live byte (only a hostile process can): counted as unlisted. */
        ofd_lock(fd, PEER_CLAIM + i, F_UNLCK, false);
        break;
    }
    for (int j = 0; j < OVERFLOW_N; j++)
        if (ofd_lock(fd, OVERFLOW + j, F_WRLCK, false) == 0)
            return;
}

/* Is any byte of [from, from + n) locked by another open file description? (F_OFD_GETLK reports
 * one conflicting lock, not the lowest, so a range answers only "any?"; callers then test
 * byte by byte.) */
static bool locked(int fd, long from, long n)
{
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = from, .l_len = n};
    return fcntl(fd, F_OFD_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
}

bool ardi_seg_writer_live(const struct ardi_map *m)
{
    return locked(m->fd, LOCK_WRITER, 1);
}

bool ardi_seg_attached(const struct ardi_map *m)
{
    return locked(m->fd, LOCK_ATTACHED, 1);
}

/* Count the bytes base + [from, from + n) locked by others, storing their offsets (if `out`)
 * in order from out[k] on; returns k plus the count. A range nobody holds costs one call, so
 * the range is searched by halves: a few calls per held byte instead of one per byte. */
static int held_bytes(int fd, long base, int from, int n, int *out, int k)
{
    if (!locked(fd, base + from, n))
        return k;
    if (n == 1) {
        if (out)
            out[k] = from;
        return k + 1;
    }
    k = held_bytes(fd, base, from, n / 2, out, k);
    return held_bytes(fd, base, from + n / 2, n - n / 2, out, k);
}

int ardi_seg_peers(const struct ardi_map *m, struct ard_peer *out, size_t max, uint32_t *unlisted,
                   bool *writer_listed)
{
    struct ard_peer found[ARDI_MAX_PEERS];
    int n = 0;
    uint32_t bad = 0;
    int live[ARDI_MAX_PEERS];
    int nlive = held_bytes(m->fd, PEER_LIVE, 0, ARDI_MAX_PEERS, live, 0);
    for (int li = 0; li < nlive; li++) {
        int i = live[li];
        const struct ardi_peer *e = &m->seg->peers[i];
        struct ardi_peer c;
        bool ok = false;
        /* The owner writes its entry before it takes the live lock; a newer owner may be
         * rewriting it now: read under its generation count, a bounded number of times. */
        for (int tries = 0; tries < 100 && !ok; tries++) {
            uint32_t g1 = atomic_load_explicit(&e->gen, memory_order_acquire);
            memcpy((char *)&c + sizeof c.gen, (const char *)e + sizeof c.gen,
                   sizeof c - sizeof c.gen);
            atomic_thread_fence(memory_order_acquire);
            ok = (g1 & 1u) == 0 && atomic_load_explicit(&e->gen, memory_order_relaxed) == g1;
            if (!ok)
                sched_yield();
        }
        c.program[sizeof c.program - 1] = '\0';
        c.port[sizeof c.port - 1] = '\0';
        bool name_ok = c.port[0] != '\0';
        for (const char *q = c.port; *q && name_ok; q++)
            name_ok = (*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') ||
                      (*q >= '0' && *q <= '9') || *q == '_' || *q == '-' || *q == '.';
        if (!ok || !name_ok || c.pid <= 0 || (c.dir != ARD_IN && c.dir != ARD_OUT)) {
            bad++; /* live, but its entry cannot be trusted: counted, not listed */
            continue;
        }
        struct ard_peer *p = &found[n++];
        memset(p, 0, sizeof *p);
        p->pid = c.pid;
        p->dir = c.dir == ARD_OUT ? ARD_OUT : ARD_IN;
        memcpy(p->program, c.program, sizeof p->program);
        memcpy(p->port, c.port, sizeof p->port);
        p->attach_real_ns = c.attach_real_ns;
    }
    bad += (uint32_t)held_bytes(m->fd, OVERFLOW, 0, OVERFLOW_N, NULL, 0);
    /* Writer first, then the readers in table order. */
    size_t k = 0;
    *writer_listed = false;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < n; i++)
            if ((found[i].dir == ARD_OUT) == (pass == 0)) {
                if (pass == 0)
                    *writer_listed = true;
                if (k < max)
                    out[k] = found[i];
                k++;
            }
    *unlisted = bad;
    return n;
}

/* Open (creating if the port declares a size) and check owner and mode. */
static int open_checked(const struct ardi_attach_req *rq, const char *shm, int *fdp)
{
    int flags = O_RDWR | O_CLOEXEC | (rq->size ? O_CREAT : 0);
    int fd = shm_open(shm, flags, rq->mode);
    if (fd < 0) {
        int e = errno;
        if (e == ENOENT)
            return ardi_fail(ARD_ENOENT,
                             "port '%s': connection '%s' does not exist in domain "
                             "'%s' and the port declares no size",
                             rq->port, rq->conn, rq->domain);
        if (e == EACCES)
            return denied(rq->conn, shm);
        if (e == EMFILE)
            return no_descriptor(rq->conn, shm);
        return ardi_fail_errno(ARD_ESYS, e, "port '%s': shm_open(%s)", rq->port, shm);
    }
    /* Apply the mode exactly (the umask may have narrowed it); only an object we just
     * created has size 0 and our uid, and fchmod on someone else's object fails harmlessly. */
    struct stat st;
    int rc = 0;
    if (fstat(fd, &st) < 0)
        rc = ardi_fail_errno(ARD_ESYS, errno, "connection '%s': fstat", rq->conn);
    else if (st.st_size == 0 && st.st_uid == geteuid() && fchmod(fd, rq->mode) == 0)
        st.st_mode = (st.st_mode & ~07777u) | rq->mode;
    if (rc == 0)
        rc = ardi_check_owner(&st, rq->conn, rq->mode, rq->allow_foreign);
    if (rc < 0) {
        close(fd);
        return rc;
    }
    *fdp = fd;
    return 0;
}

int ardi_seg_attach(const struct ardi_attach_req *rq, struct ardi_map *m, struct ardi_geom *g)
{
    char shm[ARDI_SHM_NAME_MAX];
    ardi_shm_name(shm, rq->domain, rq->conn);
    m->fd = -1;
    m->seg = NULL;

    int fd = -1, rc = 0;
    struct ardi_seg *s = NULL;
    size_t len = 0;
    /* A remover may unlink the object while we wait for its init lock: then open anew. */
    for (int tries = 0;; tries++) {
        rc = open_checked(rq, shm, &fd);
        if (rc < 0)
            return rc;
        rc = take_init_lock(fd, rq->conn, F_WRLCK, 5000);
        if (rc < 0) {
            close(fd);
            return rc;
        }
        struct stat st;
        if (fstat(fd, &st) == 0 && st.st_nlink == 0 && tries < 100) {
            ofd_lock(fd, LOCK_INIT, F_UNLCK, false);
            close(fd);
            continue;
        }
        rc = prepare(fd, rq, shm, &s, &len, g);
        if (rc == 0 && ofd_lock(fd, LOCK_ATTACHED, F_RDLCK, false) < 0) {
            rc = ardi_fail_errno(ARD_ESYS, errno, "connection '%s': attach lock", rq->conn);
            munmap(s, len);
        }
        ofd_lock(fd, LOCK_INIT, F_UNLCK, false);
        break;
    }
    if (rc < 0) {
        close(fd);
        return rc;
    }
    if (rq->writer) {
        if (ofd_lock(fd, LOCK_WRITER, F_WRLCK, false) < 0) {
            int e = errno;
            if (e == EAGAIN || e == EACCES)
                rc = ardi_fail(ARD_EBUSY,
                               "port '%s': connection '%s' already has a live writer "
                               "(pid %d)",
                               rq->port, rq->conn, writer_pid_of(s));
            else
                rc = ardi_fail_errno(ARD_ESYS, e, "connection '%s': writer lock", rq->conn);
            munmap(s, len);
            close(fd);
            return rc;
        }
        atomic_store(&s->writer_pid, (int32_t)getpid());
    } else {
        atomic_fetch_add(&s->readers, 1);
    }
    register_peer(fd, s, rq);
    m->fd = fd;
    m->seg = s;
    m->len = len;
    ardi_map_geom(m, g);
    return 0;
}

void ardi_seg_detach(struct ardi_map *m, bool writer, bool spinner)
{
    if (m->seg == NULL)
        return;
    if (writer) {
        /* Only our own pid: a forked child closing an inherited port must not erase it. */
        int32_t me = (int32_t)getpid();
        atomic_compare_exchange_strong(&m->seg->writer_pid, &me, 0);
    } else
        atomic_fetch_sub(&m->seg->readers, 1);
    if (spinner)
        atomic_fetch_sub(&m->seg->spinners, 1);
    munmap(m->seg, m->len);
    close(m->fd); /* drops this port's locks */
    m->seg = NULL;
    m->fd = -1;
}

int ardi_seg_inspect(const char *domain, const char *name, struct ardi_map *m, struct ardi_geom *g,
                     unsigned *mode)
{
    char shm[ARDI_SHM_NAME_MAX];
    ardi_shm_name(shm, domain, name);
    m->fd = -1;
    m->seg = NULL;
    int fd = shm_open(shm, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0) {
        int e = errno;
        if (e == ENOENT)
            return ardi_fail(ARD_ENOENT, "connection '%s' does not exist in domain '%s'", name,
                             domain);
        if (e == EACCES)
            return denied(name, shm);
        if (e == EMFILE)
            return no_descriptor(name, shm);
        return ardi_fail_errno(ARD_ESYS, e, "connection '%s': shm_open(%s)", name, shm);
    }
    struct stat st;
    unsigned trust_mode;
    bool foreign;
    ardi_trust(&trust_mode, &foreign);
    int rc = 0;
    if (fstat(fd, &st) < 0)
        rc = ardi_fail_errno(ARD_ESYS, errno, "connection '%s': fstat", name);
    else
        rc = ardi_check_owner(&st, name, trust_mode, foreign);
    if (rc < 0) {
        close(fd);
        return rc;
    }
    if (mode)
        *mode = st.st_mode & 07777;
    /* Shared init lock, so that no attach is half-way through the header while we read it;
     * a process stopped while holding it delays us only briefly (the validator trusts
     * nothing anyway). */
    struct ardi_seg *s = NULL;
    size_t len = 0;
    bool locked = take_init_lock(fd, name, F_RDLCK, 200) == 0;
    rc = map_checked(fd, name, shm, PROT_READ, &s, &len, g);
    if (locked)
        ofd_lock(fd, LOCK_INIT, F_UNLCK, false);
    if (rc < 0) {
        close(fd);
        return rc;
    }
    m->fd = fd;
    m->seg = s;
    m->len = len;
    ardi_map_geom(m, g);
    return 0;
}

void ardi_seg_unmap(struct ardi_map *m)
{
    if (m->seg != NULL)
        munmap(m->seg, m->len);
    if (m->fd >= 0)
        close(m->fd);
    m->seg = NULL;
    m->fd = -1;
}

int ardi_seg_remove(const char *domain, const char *name)
{
    char shm[ARDI_SHM_NAME_MAX];
    ardi_shm_name(shm, domain, name);
    int fd = shm_open(shm, O_RDWR | O_CLOEXEC, 0);
    if (fd < 0) {
        int e = errno;
        if (e == ENOENT)
            return ardi_fail(ARD_ENOENT, "connection '%s' does not exist in domain '%s'", name,
                             domain);
        if (e == EACCES)
            return denied(name, shm);
        return ardi_fail_errno(ARD_ESYS, e, "connection '%s': shm_open(%s)", name, shm);
    }
    /* Under the init lock no attach is half-way; an attach that waits for it sees the object
     * unlinked afterwards and opens anew. The attach marker is free only if nobody is
     * attached. */
    int rc = take_init_lock(fd, name, F_WRLCK, 5000);
    if (rc == 0) {
        if (ofd_lock(fd, LOCK_ATTACHED, F_WRLCK, false) < 0)
            rc = ardi_fail(ARD_EBUSY,
                           "connection '%s' of domain '%s' is still attached by a live "
                           "process: not removed",
                           name, domain);
        else if (shm_unlink(shm) < 0 && errno != ENOENT)
            rc = ardi_fail_errno(errno == EACCES || errno == EPERM ? ARD_EACCES : ARD_ESYS, errno,
                                 "connection '%s': shm_unlink(%s)", name, shm);
    }
    close(fd); /* drops our locks */
    return rc;
}
