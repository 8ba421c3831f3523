/*
 * segment.c - the shared-memory object of one connection: create, check, attach, detach.
 *
 * Coordination between processes uses open-file-description (OFD) record locks on three
 * bytes of the object; the kernel drops them when a process dies, so nothing needs manual
 * clean-up after a kill -9:
 *   byte 0  init lock, held exclusively while one side creates or checks the header;
 *   byte 1  attach marker, held shared by every attached port (exclusive = nobody attached);
 *   byte 2  writer lock, held exclusively by the one live writer.
 * None of them is touched by send/rec/tryrec.
 */
#include "ardi.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { LOCK_INIT = 0, LOCK_ATTACHED = 1, LOCK_WRITER = 2 };

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

/* Bounded wait for the init lock: a creator holds it for microseconds; a process of ours
 * that is stopped (SIGSTOP, debugger) while holding it must not hang us forever. */
static int take_init_lock(int fd, const struct ardi_attach_req *rq)
{
    for (int i = 0; i < 5000; i++) {
        if (ofd_lock(fd, LOCK_INIT, F_WRLCK, false) == 0)
            return 0;
        if (errno != EAGAIN && errno != EACCES)
            return ardi_fail_errno(ARD_ESYS, errno, "connection '%s': fcntl(F_OFD_SETLK)",
                                   rq->conn);
        sleep_ms(1);
    }
    return ardi_fail(ARD_ESTALE,
                     "connection '%s': another process has held the object's init "
                     "lock for over 5 s (stopped while attaching?)",
                     rq->conn);
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

/* Write a fresh header into an object of the right length (under the init lock). */
static int init_header(int fd, const struct ardi_attach_req *rq, size_t size, const char *type)
{
    uint32_t nslots;
    uint64_t stride, total;
    layout(size, &nslots, &stride, &total);
    /* Shrinking to 0 first zeroes every slot, also when re-initialising a stale object. */
    if (ftruncate(fd, 0) < 0 || ftruncate(fd, (off_t)total) < 0)
        return ardi_fail_errno(ARD_ESYS, errno, "connection '%s': ftruncate to %llu bytes",
                               rq->conn, (unsigned long long)total);
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

static int check_header(const struct ardi_seg *s, size_t len, const struct ardi_attach_req *rq,
                        const char *shm)
{
    if (atomic_load_explicit(&s->magic, memory_order_acquire) != ARDI_MAGIC)
        return ardi_fail(ARD_ESTALE,
                         "connection '%s': /dev/shm%s is not an ardnet object "
                         "(bad magic); remove it if it is stale",
                         rq->conn, shm);
    if (s->version != ARDI_VERSION)
        return ardi_fail(ARD_ESTALE,
                         "connection '%s': /dev/shm%s has layout version %u, this "
                         "library uses %u",
                         rq->conn, shm, s->version, ARDI_VERSION);
    uint32_t nslots;
    uint64_t stride, total;
    layout(s->size, &nslots, &stride, &total);
    if (s->size == 0 || s->size > ARD_MAX_PACKET || s->nslots != nslots || s->stride != stride ||
        s->total != total || total != len || memchr(s->type, '\0', sizeof s->type) == NULL)
        return ardi_fail(ARD_ESTALE,
                         "connection '%s': /dev/shm%s is damaged (header does not "
                         "match its %zu bytes)",
                         rq->conn, shm, len);
    return 0;
}

/* Does an existing, valid header agree with the request? 0 or ARD_ETYPE. */
static int check_layout(const struct ardi_seg *s, const struct ardi_attach_req *rq)
{
    bool size_ok = rq->size == 0 || rq->size == s->size;
    /* An opaque side accepts any type; two typed sides must agree. */
    bool type_ok =
        rq->type[0] == '\0' || s->type[0] == '\0' || ardi_type_same_layout(rq->type, s->type);
    if (size_ok && type_ok)
        return 0;
    return ardi_fail(ARD_ETYPE,
                     "port '%s': connection '%s' exists with size %llu type '%s', "
                     "this port declares size %zu type '%s'",
                     rq->port, rq->conn, (unsigned long long)s->size,
                     s->type[0] ? s->type : "(opaque)", rq->size,
                     rq->type[0] ? rq->type : "(opaque)");
}

/* Under the init lock: make sure the object has a valid header matching the request. */
static int prepare(int fd, const struct ardi_attach_req *rq, const char *shm)
{
    struct stat st;
    if (fstat(fd, &st) < 0)
        return ardi_fail_errno(ARD_ESYS, errno, "connection '%s': fstat", rq->conn);
    if (st.st_size == 0) {
        if (rq->size == 0)
            return ardi_fail(ARD_ENOENT,
                             "port '%s': connection '%s' does not exist yet and the "
                             "port declares no size",
                             rq->port, rq->conn);
        return init_header(fd, rq, rq->size, rq->type);
    }
    if ((size_t)st.st_size < sizeof(struct ardi_seg))
        return ardi_fail(ARD_ESTALE,
                         "connection '%s': /dev/shm%s is %lld bytes, too small to "
                         "be an ardnet object; remove it if it is stale",
                         rq->conn, shm, (long long)st.st_size);
    struct ardi_seg *s = mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (s == MAP_FAILED)
        return ardi_fail_errno(ARD_ESYS, errno, "connection '%s': mmap", rq->conn);
    int rc = check_header(s, (size_t)st.st_size, rq, shm);
    if (rc == 0)
        rc = check_layout(s, rq);
    if (rc == 0 && rq->type[0] != '\0' && s->type[0] == '\0') {
        /* An opaque creator left the type open: record it so tools can decode. */
        snprintf(s->type, sizeof s->type, "%s", rq->type);
        s->type_hash = ard_type_hash(rq->type);
    }
    munmap(s, sizeof *s);
    if (rc == ARD_ETYPE && rq->size != 0 && ofd_lock(fd, LOCK_ATTACHED, F_WRLCK, false) == 0) {
        /* Nobody is attached: the object is left over from an earlier run with another
         * layout. Its last value is meaningless to the new layout, so start afresh. */
        ofd_lock(fd, LOCK_ATTACHED, F_UNLCK, false);
        rc = init_header(fd, rq, rq->size, rq->type);
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

int ardi_seg_attach(const struct ardi_attach_req *rq, struct ardi_map *m)
{
    char shm[ARDI_SHM_NAME_MAX];
    ardi_shm_name(shm, rq->domain, rq->conn);
    m->fd = -1;
    m->seg = NULL;

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
            return ardi_fail(ARD_EACCES,
                             "port '%s': connection '%s': permission denied on "
                             "/dev/shm%s (owned by another user?)",
                             rq->port, rq->conn, shm);
        return ardi_fail_errno(ARD_ESYS, e, "port '%s': shm_open(%s)", rq->port, shm);
    }
    /* Apply the mode exactly (the umask may have narrowed it); only an object we just
     * created has size 0 and our uid, and fchmod on someone else's object fails harmlessly. */
    struct stat st;
    if (fstat(fd, &st) == 0 && st.st_size == 0 && st.st_uid == geteuid())
        (void)fchmod(fd, rq->mode);

    int rc = take_init_lock(fd, rq);
    if (rc == 0) {
        rc = prepare(fd, rq, shm);
        if (rc == 0 && ofd_lock(fd, LOCK_ATTACHED, F_RDLCK, false) < 0)
            rc = ardi_fail_errno(ARD_ESYS, errno, "connection '%s': attach lock", rq->conn);
        ofd_lock(fd, LOCK_INIT, F_UNLCK, false);
    }
    if (rc < 0) {
        close(fd);
        return rc;
    }

    if (fstat(fd, &st) < 0) {
        rc = ardi_fail_errno(ARD_ESYS, errno, "connection '%s': fstat", rq->conn);
        close(fd);
        return rc;
    }
    struct ardi_seg *s = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (s == MAP_FAILED) {
        rc = ardi_fail_errno(ARD_ESYS, errno, "connection '%s': mmap of %lld bytes", rq->conn,
                             (long long)st.st_size);
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
            munmap(s, (size_t)st.st_size);
            close(fd);
            return rc;
        }
        atomic_store(&s->writer_pid, (int32_t)getpid());
    } else {
        atomic_fetch_add(&s->readers, 1);
    }
    m->fd = fd;
    m->seg = s;
    m->len = (size_t)st.st_size;
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
