/* conn.c - connections of a domain seen from outside: list, describe, remove. */
#include "ardi.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static int pick_domain(const char *domain, char *out)
{
    if (domain == NULL)
        domain = ard_domain();
    int rc = ardi_check_name("domain", domain, false);
    if (rc == 0)
        snprintf(out, ARD_MAX_NAME + 1, "%s", domain);
    return rc;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Names of the domain's connections, sorted; caller frees (also after a failure). */
static int collect(const char *domain, char ***names, size_t *n)
{
    *names = NULL;
    *n = 0;
    char prefix[ARD_MAX_NAME + 8];
    int pl = snprintf(prefix, sizeof prefix, ARDI_SHM_PREFIX "%s.", domain);
    DIR *d = opendir(ARDI_SHM_DIR);
    if (d == NULL)
        return ardi_fail_errno(ARD_ESYS, errno, "opendir(" ARDI_SHM_DIR ")");
    char **v = NULL;
    size_t cnt = 0;
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, prefix, (size_t)pl) != 0 || e->d_name[pl] == '\0')
            continue;
        char **nv = realloc(v, (cnt + 1) * sizeof *v);
        char *s = strdup(e->d_name + pl);
        if (nv == NULL || s == NULL) {
            free(s);
            v = nv ? nv : v;
            rc = ardi_fail(ARD_ENOMEM, "listing domain '%s': out of memory", domain);
            break;
        }
        v = nv;
        v[cnt++] = s;
    }
    closedir(d);
    if (cnt > 1)
        qsort(v, cnt, sizeof *v, cmp_names);
    *names = v;
    *n = cnt;
    return rc;
}

static void free_names(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

int ard_conn_list(const char *domain, int (*fn)(const char *name, void *arg), void *arg)
{
    char dom[ARD_MAX_NAME + 1];
    int rc = pick_domain(domain, dom);
    if (rc < 0)
        return rc;
    char **v;
    size_t n;
    if ((rc = collect(dom, &v, &n)) < 0) {
        free_names(v, n);
        return rc;
    }
    int visited = 0;
    for (size_t i = 0; i < n; i++) {
        visited++;
        if (fn && (rc = fn(v[i], arg)) != 0)
            break;
    }
    free_names(v, n);
    return rc != 0 ? rc : visited;
}

int ardi_conn_fill(const struct ardi_map *m, const struct ardi_geom *g, unsigned mode,
                   const char *name, struct ard_conn_stat *st)
{
    memset(st, 0, sizeof *st);
    snprintf(st->name, sizeof st->name, "%s", name);
    memcpy(st->type, g->type, sizeof st->type);
    st->size = (size_t)g->size;
    st->mode = mode;
    /* Readers and writer from the table of live peers: exact, whoever was killed. */
    struct ard_peer peers[ARDI_MAX_PEERS];
    uint32_t unlisted;
    bool writer_listed;
    int n = ardi_seg_peers(m, peers, ARDI_MAX_PEERS, &unlisted, &writer_listed);
    /* The pid field outlives a killed writer; the writer lock does not. */
    bool writer_live = ardi_seg_writer_live(m);
    if (writer_live) {
        int32_t pid = writer_listed ? peers[0].pid : atomic_load(&m->seg->writer_pid);
        st->writer_pid = pid > 0 ? pid : 0;
    }
    st->readers = (uint32_t)n - (writer_listed ? 1u : 0u) + unlisted -
                  (writer_live && !writer_listed && unlisted > 0 ? 1u : 0u);
    st->unlisted = unlisted;
    /* The newest packet's times, read like a reader reads them. */
    uint64_t seq = 0;
    int64_t mono = 0, real = 0;
    int rc = ardi_read_newest(m, NULL, 0, &seq, &mono, &real);
    if (rc < 0)
        return ardi_fail(ARD_ESTALE,
                         "connection '%s': the newest packet's slot never settles: the "
                         "object's header was damaged or rewritten",
                         name);
    if (rc == 1) {
        st->seq = seq;
        st->mono_ns = mono;
        st->real_ns = real;
    }
    return 0;
}

int ard_conn_stat(const char *domain, const char *name, struct ard_conn_stat *st)
{
    char dom[ARD_MAX_NAME + 1];
    int rc = pick_domain(domain, dom);
    if (rc < 0 || (rc = ardi_check_name("connection", name, true)) < 0)
        return rc;
    if (st == NULL)
        return ardi_fail(ARD_EINVAL, "ard_conn_stat: st is NULL");
    struct ardi_map m;
    struct ardi_geom g;
    unsigned mode;
    if ((rc = ardi_seg_inspect(dom, name, &m, &g, &mode)) < 0)
        return rc;
    rc = ardi_conn_fill(&m, &g, mode, name, st);
    ardi_seg_unmap(&m);
    return rc;
}

int ard_conn_peers(const char *domain, const char *name, struct ard_peer *out, size_t max)
{
    char dom[ARD_MAX_NAME + 1];
    int rc = pick_domain(domain, dom);
    if (rc < 0 || (rc = ardi_check_name("connection", name, true)) < 0)
        return rc;
    if (out == NULL && max > 0)
        return ardi_fail(ARD_EINVAL, "ard_conn_peers: out is NULL with max %zu", max);
    struct ardi_map m;
    struct ardi_geom g;
    if ((rc = ardi_seg_inspect(dom, name, &m, &g, NULL)) < 0)
        return rc;
    uint32_t unlisted;
    bool writer_listed;
    rc = ardi_seg_peers(&m, out, max, &unlisted, &writer_listed);
    ardi_seg_unmap(&m);
    return rc;
}

int ard_conn_unlink(const char *domain, const char *name)
{
    char dom[ARD_MAX_NAME + 1];
    int rc = pick_domain(domain, dom);
    if (rc < 0 || (rc = ardi_check_name("connection", name, true)) < 0)
        return rc;
    return ardi_seg_remove(dom, name);
}

int ard_domain_unlink(const char *domain)
{
    char dom[ARD_MAX_NAME + 1];
    int rc = pick_domain(domain, dom);
    if (rc < 0)
        return rc;
    char **v;
    size_t n;
    if ((rc = collect(dom, &v, &n)) < 0) {
        free_names(v, n);
        return rc;
    }
    int removed = 0;
    char busy[512] = "";
    size_t nbusy = 0, blen = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        int r = ard_conn_unlink(dom, v[i]);
        if (r == 0)
            removed++;
        else if (r == ARD_EBUSY) {
            /* Still in use: skipped, and named in the report. */
            if (blen < sizeof busy)
                blen += (size_t)snprintf(busy + blen, sizeof busy - blen, "%s'%s'",
                                         nbusy ? ", " : "", v[i]);
            nbusy++;
        } else if (r != ARD_ENOENT)
            rc = r;
    }
    free_names(v, n);
    if (rc < 0)
        return rc;
    if (nbusy > 0)
        return ardi_fail(ARD_EBUSY,
                         "domain '%s': removed %d object%s; %zu still attached, left in place: "
                         "%s",
                         dom, removed, removed == 1 ? "" : "s", nbusy, busy);
    return removed;
}
