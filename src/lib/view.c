/*
 * view.c - a read-only view of a connection (include/ardnet_view.h): the object mapped
 * read-only and validated by the one validator (ardi_seg_inspect), read through the one slot
 * read (ardi_slot_read), never attached. Everything after ard_view_open works on the view's
 * private geometry and allocates nothing.
 */
#include "ardi.h"
#include "ardnet_view.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Copies of a packet tried before ard_view_latest gives up with ARD_EAGAIN: a writer laps a
 * copy only by writing a whole ring during it, so a few tries settle but for a runaway writer
 * (and the view never spins for long: it is not a realtime call, but must not block). */
#define VIEW_TRIES 100

struct ard_view {
    struct ardi_map map;
    struct ardi_geom geom;
    unsigned mode;
    uint32_t uid;
    dev_t dev;
    ino_t ino;
    uint64_t last_seq; /* newest seq returned, for ard_info.skipped */
    char name[ARD_MAX_NAME + 1];
    char path[ARDI_SHM_NAME_MAX + sizeof ARDI_SHM_DIR]; /* the name's object under /dev/shm */
};

/* Does `path` now lead to another object than (dev, ino)? False when it leads nowhere: a
 * removed object is followed once a new one appears under its name. */
static bool other_object(const char *path, dev_t dev, ino_t ino)
{
    struct stat st;
    if (stat(path, &st) < 0)
        return false;
    return st.st_ino != ino || st.st_dev != dev;
}

static void object_path(char *path, size_t len, const char *domain, const char *name)
{
    char shm[ARDI_SHM_NAME_MAX];
    ardi_shm_name(shm, domain, name);
    snprintf(path, len, ARDI_SHM_DIR "%s", shm);
}

int ard_view_open(const char *domain, const char *name, ard_view **view)
{
    if (view == NULL)
        return ardi_fail(ARD_EINVAL, "ard_view_open: view is NULL");
    *view = NULL;
    if (domain == NULL)
        domain = ard_domain();
    int rc = ardi_check_name("domain", domain, false);
    if (rc < 0 || (rc = ardi_check_name("connection", name, true)) < 0)
        return rc;
    ard_view *v = calloc(1, sizeof *v);
    if (v == NULL)
        return ardi_fail(ARD_ENOMEM, "connection '%s': out of memory for a view", name);
    rc = ardi_seg_inspect(domain, name, &v->map, &v->geom, &v->mode);
    if (rc < 0) {
        free(v);
        return rc;
    }
    struct stat st;
    if (fstat(v->map.fd, &st) < 0) {
        rc = ardi_fail_errno(ARD_ESYS, errno, "connection '%s': fstat", name);
        ardi_seg_unmap(&v->map);
        free(v);
        return rc;
    }
    v->uid = (uint32_t)st.st_uid;
    v->dev = st.st_dev;
    v->ino = st.st_ino;
    snprintf(v->name, sizeof v->name, "%s", name);
    object_path(v->path, sizeof v->path, domain, name);
    *view = v;
    return 0;
}

void ard_view_close(ard_view *view)
{
    if (view == NULL)
        return;
    ardi_seg_unmap(&view->map);
    free(view);
}

void ard_view_stat(const ard_view *view, struct ard_conn_stat *st)
{
    /* A slot that never settles leaves the newest packet out (seq 0): the view's reads say
     * ARD_EAGAIN for it. */
    (void)ardi_conn_fill(&view->map, &view->geom, view->mode, view->name, st);
}

uint32_t ard_view_uid(const ard_view *view)
{
    return view->uid;
}

uint64_t ard_view_inode(const ard_view *view)
{
    return (uint64_t)view->ino;
}

uint32_t ard_view_slots(const ard_view *view)
{
    return view->geom.nslots;
}

uint64_t ard_view_head(const ard_view *view)
{
    return atomic_load_explicit(&view->map.seg->head, memory_order_acquire);
}

static void fill_info(ard_view *view, uint64_t seq, int64_t mono, int64_t real,
                      struct ard_info *info)
{
    if (info != NULL) {
        info->seq = seq;
        info->mono_ns = mono;
        info->real_ns = real;
        info->skipped = view->last_seq != 0 && seq > view->last_seq ? seq - view->last_seq - 1 : 0;
    }
    view->last_seq = seq;
}

int ard_view_latest(ard_view *view, void *buf, struct ard_info *info)
{
    for (int tries = 0; tries < VIEW_TRIES; tries++) {
        uint64_t h = ard_view_head(view);
        if (h == 0)
            return ardi_fail(ARD_ENODATA, "connection '%s': nothing was sent yet", view->name);
        int64_t mono, real;
        if (ardi_slot_read(&view->map, h, buf, view->geom.size, &mono, &real)) {
            fill_info(view, h, mono, real, info);
            return 0;
        }
        ardi_cpu_relax();
    }
    return ardi_fail(ARD_EAGAIN,
                     "connection '%s': the newest packet was overwritten during each of %d "
                     "copies (a very fast writer, or a damaged header)",
                     view->name, VIEW_TRIES);
}

/* Is packet `seq` complete in its slot now? 0, or ARD_ENODATA (not sent yet, being written,
 * or overwritten). */
static int held(const ard_view *view, uint64_t seq)
{
    if (seq != 0) {
        const struct ardi_slot *slot = ardi_slot_at(&view->map, seq);
        if (atomic_load_explicit(&slot->lock, memory_order_acquire) == 2 * seq)
            return 0;
    }
    return ardi_fail(ARD_ENODATA, "connection '%s': packet %llu is not in the ring", view->name,
                     (unsigned long long)seq);
}

int ard_view_read(ard_view *view, uint64_t seq, void *buf, struct ard_info *info)
{
    int rc = held(view, seq);
    if (rc < 0)
        return rc;
    int64_t mono, real;
    if (!ardi_slot_read(&view->map, seq, buf, view->geom.size, &mono, &real))
        return ardi_fail(ARD_EAGAIN, "connection '%s': packet %llu was overwritten while read",
                         view->name, (unsigned long long)seq);
    fill_info(view, seq, mono, real, info);
    return 0;
}

const void *ard_view_take(ard_view *view, uint64_t seq, struct ard_info *info, int *code)
{
    int rc = held(view, seq);
    if (code != NULL)
        *code = rc;
    if (rc < 0)
        return NULL;
    const struct ardi_slot *slot = ardi_slot_at(&view->map, seq);
    int64_t mono = atomic_load_explicit(&slot->mono_ns, memory_order_relaxed);
    int64_t real = atomic_load_explicit(&slot->real_ns, memory_order_relaxed);
    fill_info(view, seq, mono, real, info);
    return slot + 1;
}

int ard_view_done(const ard_view *view, uint64_t seq)
{
    /* Everything read from the slot since ard_view_take is ordered before this load. */
    atomic_thread_fence(memory_order_acquire);
    const struct ardi_slot *slot = ardi_slot_at(&view->map, seq);
    if (seq != 0 && atomic_load_explicit(&slot->lock, memory_order_relaxed) == 2 * seq)
        return 0;
    return ardi_fail(ARD_EAGAIN, "connection '%s': packet %llu was overwritten while taken",
                     view->name, (unsigned long long)seq);
}

size_t ard_view_stamps(const ard_view *view, int64_t *mono_ns, size_t max)
{
    uint64_t h = 0;
    int64_t newest = 0, real;
    /* The head itself, a few times (the writer may be filling the slot after it). */
    for (int tries = 0; tries < VIEW_TRIES && h == 0; tries++) {
        uint64_t s = ard_view_head(view);
        if (s == 0)
            return 0;
        if (ardi_slot_read(&view->map, s, NULL, 0, &newest, &real))
            h = s;
    }
    if (h == 0 || max == 0)
        return 0;
    mono_ns[0] = newest;
    size_t n = 1;
    /* Older ones while their slots still hold them and their times run backwards. */
    uint64_t ring = view->geom.nslots;
    for (uint64_t q = h - 1; q >= 1 && h - q < ring && n < max; q--) {
        int64_t m;
        if (!ardi_slot_read(&view->map, q, NULL, 0, &m, &real) || m > mono_ns[n - 1])
            break;
        mono_ns[n++] = m;
    }
    return n;
}

int ard_view_peers(const ard_view *view, struct ard_peer *out, size_t max, uint32_t *unlisted)
{
    if (out == NULL && max > 0)
        return ardi_fail(ARD_EINVAL, "ard_view_peers: out is NULL with max %zu", max);
    uint32_t ul = 0;
    bool writer_listed;
    int n = ardi_seg_peers(&view->map, out, max, &ul, &writer_listed);
    if (unlisted != NULL)
        *unlisted = ul;
    return n;
}

bool ard_view_recreated(const ard_view *view)
{
    return other_object(view->path, view->dev, view->ino);
}

int ard_port_readers(const ard_port *port)
{
    if (port == NULL)
        return ardi_fail(ARD_EINVAL, "ard_port_readers: port is NULL");
    if (!port->attached || port->map.seg == NULL)
        return ardi_fail(ARD_ESTATE, "port '%s' is not attached", port->name);
    uint32_t n = atomic_load_explicit(&port->map.seg->readers, memory_order_relaxed);
    return n > INT_MAX ? INT_MAX : (int)n;
}

bool ard_port_recreated(const ard_port *port)
{
    if (port == NULL || !port->attached || port->map.seg == NULL)
        return false;
    struct stat st;
    if (fstat(port->map.fd, &st) < 0)
        return false;
    char path[ARDI_SHM_NAME_MAX + sizeof ARDI_SHM_DIR];
    object_path(path, sizeof path, ard_domain(), port->conn);
    return other_object(path, st.st_dev, st.st_ino);
}

uint32_t ard_port_uid(const ard_port *port)
{
    struct stat st;
    if (port == NULL || !port->attached || port->map.seg == NULL || fstat(port->map.fd, &st) < 0)
        return (uint32_t)-1;
    return (uint32_t)st.st_uid;
}
