/*
 * plugin.c - loading a block plugin and checking its descriptor before anything runs; the
 * values of its parameters' types.
 */
#include "ardrun.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int ardr_param_parse(const char *what, const char *name, enum ard_param_type type, const char *text,
                     struct ardr_pval *v)
{
    memset(v, 0, sizeof *v);
    v->type = type;
    char *end;
    errno = 0;
    switch (type) {
    case ARD_PARAM_I64:
        v->i = strtoll(text, &end, 0);
        if (errno || end == text || *end)
            return ardi_fail(ARD_EINVAL, "%s parameter '%s': '%s' is not an integer (i64)", what,
                             name, text);
        return 0;
    case ARD_PARAM_F64:
        v->f = strtod(text, &end);
        if (errno || end == text || *end || !isfinite(v->f))
            return ardi_fail(ARD_EINVAL, "%s parameter '%s': '%s' is not a finite number (f64)",
                             what, name, text);
        return 0;
    case ARD_PARAM_BOOL:
        if (!strcasecmp(text, "true") || !strcasecmp(text, "yes") || !strcasecmp(text, "on") ||
            !strcmp(text, "1"))
            v->b = 1;
        else if (!strcasecmp(text, "false") || !strcasecmp(text, "no") ||
                 !strcasecmp(text, "off") || !strcmp(text, "0"))
            v->b = 0;
        else
            return ardi_fail(ARD_EINVAL, "%s parameter '%s': '%s' is not a boolean", what, name,
                             text);
        return 0;
    case ARD_PARAM_STR:
        if (strlen(text) > ARDR_STR_MAX)
            return ardi_fail(ARD_EINVAL, "%s parameter '%s': longer than %d bytes", what, name,
                             ARDR_STR_MAX);
        snprintf(v->s, sizeof v->s, "%s", text);
        return 0;
    }
    return ardi_fail(ARD_EINVAL, "%s parameter '%s': unknown type", what, name);
}

/* Copy the open .so `src` into a memfd, to be dlopened from there: every load is a new
 * object, so a rebuilt plugin is really loaded again (dlopen of an already loaded path
 * returns the old one). The memfd stays open while the plugin is loaded, so its
 * /proc/self/fd name stays unique. */
static int copy_to_memfd(int src, const char *path, const char *what, int *out)
{
    int fd = memfd_create("ardrun-plugin", MFD_CLOEXEC);
    if (fd < 0)
        return ardi_fail_errno(ARD_ESYS, errno, "%s: memfd_create", what);
    char buf[65536];
    for (;;) {
        ssize_t n = read(src, buf, sizeof buf);
        if (n == 0)
            break;
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 || write(fd, buf, (size_t)n) != n) {
            int e = errno;
            close(fd);
            return ardi_fail_errno(ARD_ESYS, e, "%s: plugin '%s': copy", what, path);
        }
    }
    *out = fd;
    return 0;
}

static int check_type(const char *what, const char *port, size_t size, const char *type)
{
    if (size < 1 || size > ARD_MAX_PACKET)
        return ardi_fail(ARD_ETYPE, "%s: port '%s' declares size %zu (must be 1..%u)", what, port,
                         size, ARD_MAX_PACKET);
    if (type == NULL)
        return 0;
    size_t tsize;
    if (ard_type_parse(type, NULL, 0, NULL, &tsize) < 0) {
        char why[600];
        snprintf(why, sizeof why, "%s", ard_errdetail());
        return ardi_fail(ARD_ETYPE, "%s: port '%s': bad type '%s': %s", what, port, type, why);
    }
    if (tsize != size)
        return ardi_fail(ARD_ETYPE,
                         "%s: port '%s' declares %zu bytes but its type '%s' has %zu bytes "
                         "(the descriptor does not match the packet)",
                         what, port, size, type, tsize);
    return 0;
}

static int check_desc(const struct ard_block_desc *d, const char *what, const char *path)
{
    if (d == NULL)
        return ardi_fail(ARD_EINVAL, "%s: plugin '%s': ard_block_descriptor() returned NULL", what,
                         path);
    if (d->api < 1 || d->api > ARD_BLOCK_API)
        return ardi_fail(ARD_EINVAL,
                         "%s: plugin '%s' was built against block API version %u, this ardrun "
                         "has version %u and loads 1..%u (rebuild the plugin against this "
                         "ardnet_block.h)",
                         what, path, d->api, ARD_BLOCK_API, ARD_BLOCK_API);
    if (!ardr_name_ok(d->name))
        return ardi_fail(ARD_EINVAL,
                         "%s: plugin '%s': block name '%s' is not a name (" ARDR_NAME_RULE ")",
                         what, path, d->name ? d->name : "(null)");
    if (d->version == NULL)
        return ardi_fail(ARD_EINVAL, "%s: plugin '%s': block '%s' has no version", what, path,
                         d->name);
    const char *missing = !d->init ? "init" : !d->step ? "step" : !d->close ? "close" : NULL;
    if (missing)
        return ardi_fail(ARD_EINVAL, "%s: plugin '%s': block '%s' has no %s callback", what, path,
                         d->name, missing);
    if (d->nports > ARD_BLOCK_MAX_PORTS || (d->nports && !d->ports))
        return ardi_fail(ARD_EINVAL, "%s: plugin '%s': bad port table (%u ports, at most %d)", what,
                         path, d->nports, ARD_BLOCK_MAX_PORTS);
    if (d->nparams > ARD_BLOCK_MAX_PARAMS || (d->nparams && !d->params))
        return ardi_fail(ARD_EINVAL, "%s: plugin '%s': bad parameter table (%u, at most %d)", what,
                         path, d->nparams, ARD_BLOCK_MAX_PARAMS);
    for (uint32_t i = 0; i < d->nports; i++) {
        const struct ard_block_port *p = &d->ports[i];
        if (!ardr_name_ok(p->name))
            return ardi_fail(ARD_EINVAL, "%s: plugin '%s': port %u has a bad name '%s'", what, path,
                             i, p->name ? p->name : "(null)");
        if (p->dir != ARD_IN && p->dir != ARD_OUT)
            return ardi_fail(ARD_EINVAL, "%s: plugin '%s': port '%s' has no direction", what, path,
                             p->name);
        for (uint32_t j = 0; j < i; j++)
            if (!strcmp(d->ports[j].name, p->name))
                return ardi_fail(ARD_EINVAL, "%s: plugin '%s': port '%s' is declared twice", what,
                                 path, p->name);
        uint32_t unknown = p->flags & ~(uint32_t)ARD_PORT_WHOLE;
        if (unknown)
            return ardi_fail(ARD_EINVAL,
                             "%s: plugin '%s': port '%s' has unknown flag bit 0x%x (this ardrun "
                             "knows ARD_PORT_WHOLE 0x%x; built against a newer ardnet_block.h?)",
                             what, path, p->name, unknown & (~unknown + 1u), ARD_PORT_WHOLE);
        if ((p->flags & ARD_PORT_WHOLE) && p->dir != ARD_OUT)
            return ardi_fail(ARD_EINVAL,
                             "%s: plugin '%s': port '%s' is an IN port but declares "
                             "ARD_PORT_WHOLE (a promise about writing: OUT ports only)",
                             what, path, p->name);
        char w[600];
        snprintf(w, sizeof w, "%s: plugin '%s'", what, path);
        int rc = check_type(w, p->name, p->size, p->type);
        if (rc < 0)
            return rc;
    }
    for (uint32_t i = 0; i < d->nparams; i++) {
        const struct ard_block_param *p = &d->params[i];
        if (!ardr_name_ok(p->name))
            return ardi_fail(ARD_EINVAL, "%s: plugin '%s': parameter %u has a bad name '%s'", what,
                             path, i, p->name ? p->name : "(null)");
        for (uint32_t j = 0; j < i; j++)
            if (!strcmp(d->params[j].name, p->name))
                return ardi_fail(ARD_EINVAL, "%s: plugin '%s': parameter '%s' is declared twice",
                                 what, path, p->name);
        struct ardr_pval v;
        char w[600];
        snprintf(w, sizeof w, "%s: plugin '%s': default of", what, path);
        if (p->type < ARD_PARAM_I64 || p->type > ARD_PARAM_STR)
            return ardi_fail(ARD_EINVAL, "%s: plugin '%s': parameter '%s' has unknown type %d",
                             what, path, p->name, (int)p->type);
        if (p->def && ardr_param_parse(w, p->name, p->type, p->def, &v) < 0)
            return ARD_EINVAL;
    }
    return 0;
}

/* One loaded copy of a plugin file. Those loaded for ardr_plugin_load are listed in `shared`
 * while they are loaded, so that the next instance of the same file uses the same copy: 40
 * instances of a filter in one thread then run the same instructions from the cache, where
 * 40 copies of the code cost each step instruction cache and TLB misses (docs/performance.md,
 * "ardrun"). Loading happens at start and on reload, never in a rate thread; the lock only
 * orders the control thread's reloads against the list. */
struct ardr_so {
    struct ardr_so *next;
    int refs;
    bool listed;
    int fd; /* the memfd */
    void *dl;
    dev_t dev; /* the file it was copied from, as it was then */
    ino_t ino;
    off_t size;
    struct timespec mtim;
    const struct ard_block_desc *d; /* the plugin's, or `conv` */
    struct ard_block_desc *conv;    /* an API 1 descriptor read into the current layout */
};

static struct ardr_so *shared;
static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;

/* struct ard_block_port as API 1 declared it: no `flags`. */
struct port_v1 {
    const char *name;
    enum ard_dir dir;
    size_t size;
    const char *type;
};

/* The descriptor as this host reads it: an API 1 plugin's port table has the API 1 layout
 * (a shorter stride), so the host reads it with that layout into a copy of the descriptor
 * whose ports have flags 0. Returns `d` itself for the current API. */
static const struct ard_block_desc *host_desc(struct ardr_so *so, const struct ard_block_desc *d,
                                              const char *what)
{
    if (d == NULL || d->api != 1)
        return d;
    if (d->nports > ARD_BLOCK_MAX_PORTS || (d->nports && !d->ports))
        return d; /* refused by check_desc, which reads no port then */
    struct ard_block_desc *c = calloc(1, sizeof *c + d->nports * sizeof(struct ard_block_port));
    if (c == NULL) {
        (void)ardi_fail(ARD_ENOMEM, "%s: out of memory", what);
        return NULL;
    }
    *c = *d;
    struct ard_block_port *ports = (struct ard_block_port *)(c + 1);
    const struct port_v1 *old = (const struct port_v1 *)(const void *)d->ports;
    for (uint32_t i = 0; i < d->nports; i++)
        ports[i] = (struct ard_block_port){old[i].name, old[i].dir, old[i].size, old[i].type, 0};
    c->ports = ports;
    so->conv = c;
    return c;
}

static bool same_file(const struct ardr_so *so, const struct stat *st)
{
    return so->dev == st->st_dev && so->ino == st->st_ino && so->size == st->st_size &&
           so->mtim.tv_sec == st->st_mtim.tv_sec && so->mtim.tv_nsec == st->st_mtim.tv_nsec;
}

static void so_free(struct ardr_so *so)
{
    if (so->dl)
        dlclose(so->dl);
    if (so->fd >= 0)
        close(so->fd);
    free(so->conv);
    free(so);
}

/* dlopen the copy in so->fd, find and check the descriptor. */
static int so_open(struct ardr_so *so, const char *path, const char *what)
{
    char loaded[64];
    snprintf(loaded, sizeof loaded, "/proc/self/fd/%d", so->fd);
    dlerror();
    so->dl = dlopen(loaded, RTLD_NOW | RTLD_LOCAL);
    if (so->dl == NULL) {
        const char *e = dlerror();
        /* dlerror names the memfd; say the real file instead */
        const char *colon = e ? strstr(e, ": ") : NULL;
        return ardi_fail(ARD_EINVAL, "%s: plugin '%s' cannot be loaded: %s", what, path,
                         colon ? colon + 2
                         : e   ? e
                               : "unknown dlopen error");
    }
    const struct ard_block_desc *(*fn)(void);
    *(void **)&fn = dlsym(so->dl, ARD_BLOCK_SYMBOL);
    if (fn == NULL)
        return ardi_fail(ARD_EINVAL,
                         "%s: plugin '%s' does not export %s() (not a block plugin? see "
                         "ARD_BLOCK_EXPORT in ardnet_block.h)",
                         what, path, ARD_BLOCK_SYMBOL);
    const struct ard_block_desc *raw = fn();
    so->d = host_desc(so, raw, what);
    if (raw != NULL && so->d == NULL)
        return ARD_ENOMEM;
    return check_desc(so->d, what, path);
}

static int load(struct ardr_plugin *pl, const char *path, const char *what, bool share)
{
    memset(pl, 0, sizeof *pl);
    int src = open(path, O_RDONLY | O_CLOEXEC);
    if (src < 0)
        return ardi_fail_errno(ARD_ESYS, errno, "%s: plugin '%s': cannot open", what, path);
    struct stat st;
    if (fstat(src, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(src);
        return ardi_fail(ARD_EINVAL, "%s: plugin '%s' is not a regular file", what, path);
    }
    pthread_mutex_lock(&shared_lock);
    for (struct ardr_so *so = shared; share && so != NULL; so = so->next)
        if (same_file(so, &st)) {
            so->refs++;
            pthread_mutex_unlock(&shared_lock);
            close(src);
            pl->so = so;
            pl->d = so->d;
            return 0;
        }
    struct ardr_so *so = calloc(1, sizeof *so);
    int rc = so == NULL ? ardi_fail(ARD_ENOMEM, "%s: out of memory", what) : 0;
    if (so != NULL) {
        so->fd = -1;
        so->refs = 1;
        so->dev = st.st_dev;
        so->ino = st.st_ino;
        so->size = st.st_size;
        so->mtim = st.st_mtim;
        rc = copy_to_memfd(src, path, what, &so->fd);
    }
    close(src);
    if (rc == 0)
        rc = so_open(so, path, what);
    if (rc < 0) {
        if (so != NULL)
            so_free(so);
        pthread_mutex_unlock(&shared_lock);
        return rc;
    }
    if (share) {
        so->listed = true;
        so->next = shared;
        shared = so;
    }
    pthread_mutex_unlock(&shared_lock);
    pl->so = so;
    pl->d = so->d;
    return 0;
}

int ardr_plugin_load(struct ardr_plugin *pl, const char *path, const char *what)
{
    return load(pl, path, what, true);
}

int ardr_plugin_load_new(struct ardr_plugin *pl, const char *path, const char *what)
{
    return load(pl, path, what, false);
}

void ardr_plugin_unload(struct ardr_plugin *pl)
{
    struct ardr_so *so = pl->so;
    pl->so = NULL;
    pl->d = NULL;
    if (so == NULL)
        return;
    pthread_mutex_lock(&shared_lock);
    bool last = --so->refs == 0;
    if (last && so->listed) {
        struct ardr_so **p = &shared;
        while (*p != so)
            p = &(*p)->next;
        *p = so->next;
    }
    pthread_mutex_unlock(&shared_lock);
    if (last)
        so_free(so);
}

int ardr_plugin_same_ports(const struct ard_block_desc *a, const struct ard_block_desc *b,
                           const char *what)
{
    if (a->nports != b->nports)
        return ardi_fail(ARD_ETYPE, "%s: the new build has %u ports, the running one %u", what,
                         b->nports, a->nports);
    for (uint32_t i = 0; i < a->nports; i++) {
        const struct ard_block_port *p = &a->ports[i], *q = &b->ports[i];
        char tp[ARD_MAX_TYPE + 1] = "", tq[ARD_MAX_TYPE + 1] = "";
        if (p->type)
            (void)!ard_type_normalize(p->type, tp, sizeof tp);
        if (q->type)
            (void)!ard_type_normalize(q->type, tq, sizeof tq);
        if (strcmp(p->name, q->name) || p->dir != q->dir || p->size != q->size || strcmp(tp, tq))
            return ardi_fail(ARD_ETYPE,
                             "%s: port %u differs: running '%s' %s %zu bytes '%s', new build "
                             "'%s' %s %zu bytes '%s' (reload keeps the ports; restart the group)",
                             what, i, p->name, p->dir == ARD_IN ? "in" : "out", p->size, tp,
                             q->name, q->dir == ARD_IN ? "in" : "out", q->size, tq);
        if (p->flags != q->flags)
            return ardi_fail(ARD_ETYPE,
                             "%s: port '%s' differs: running flags 0x%x, new build flags 0x%x "
                             "(reload keeps the ports and how they are handed over; restart "
                             "the group)",
                             what, p->name, p->flags, q->flags);
    }
    return 0;
}
