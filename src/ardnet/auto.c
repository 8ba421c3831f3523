/* auto.c - ardnet --auto: the catalog. Watches the domain's connections on this host, tells the
 * catalogs of the other hosts what it has (a live local writer) and what it wants (local
 * readers, no writer), and forwards on demand with ordinary routes: one route per connection
 * and wanting address on the sending side, one listening route per wanted connection on the
 * receiving side (docs/ardnet.md, "Automatic: the catalog"). */
#include "auto.h"
#include "ard_common.h"
#include "auto_wire.h"
#include "ardnet_view.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <net/if.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#define MAX_PEERS 64 /* configured peers (--auto-peers) and live catalogs */
#define MAX_LOCAL ARDA_MAX_LOCAL
#define MAX_REPORTS 256
#define MAX_PEER_ENTRIES MAX_LOCAL /* has + wants of one peer's snapshot */
#define MAX_PER_ADDRESS 4          /* catalogs (host ids) listened to at one address */
/* Descriptors: a view of a connection keeps one, a route two (its socket and its connection).
 * New views leave FD_KEEP_VIEWS free for routes, new routes FD_KEEP_ROUTES for the listing of
 * the domain and the stats file. */
#define FD_ROUTE 2
#define FD_KEEP_VIEWS 32
#define FD_KEEP_ROUTES 8

/* A connection as this host sees it. */
struct local {
    struct arda_entry e; /* kind 0: neither has nor wants */
};

/* A live catalog of another host. */
struct peer {
    uint64_t id;
    char host[ARDA_MAX_HOST + 1];
    struct sockaddr_in addr; /* where its announcements come from */
    int64_t seen_ns;
    bool committed;
    uint32_t seq;
    struct arda_entry *ents; /* its last complete snapshot */
    int nents;
    /* the snapshot being assembled */
    uint32_t aseq;
    uint16_t anparts;
    uint64_t amask;
    struct arda_entry *aents;
    int naents;
};

/* One route of the catalog and its own plan (threads, sockets). */
struct flow {
    char conn[ARD_MAX_NAME + 1];
    struct sockaddr_in to; /* forward: the wanting address; want: unused */
    struct ardn_route route;
    struct ardn_plan plan;
    uint16_t port; /* want: the port it listens on */
    /* the other host: forward: the wanting one; want: the one the connection comes from
     * ("" not known yet) */
    char host[ARDA_MAX_HOST + 1];
    bool mark;
};

struct report {
    char key[ARD_MAX_NAME + 96];
    bool mark;
};

enum auto_counter {
    AC_SENT,     /* announcement datagrams sent */
    AC_RECEIVED, /* valid announcements of peers taken */
    AC_FOREIGN,  /* datagrams from addresses that are not peers (ignored) */
    AC_INVALID,  /* datagrams refused by arda_parse (ignored) */
    AC_DOMAIN,   /* announcements of another domain (ignored) */
    AC_SELF,     /* our own announcements (multicast loop) */
    AC_FULL,     /* announcements of new peers when MAX_PEERS catalogs are known */
    AC_STARTED,  /* forwards started */
    AC_STOPPED,  /* forwards stopped */
    AC_FAILED,   /* routes that could not be opened */
    AC_AUTH,     /* with --key: datagrams not sealed with the key, or recorded earlier */
    AC_NCOUNTERS
};
static const char *const counter_names[AC_NCOUNTERS] = {
    "sent", "received", "foreign", "invalid", "other_domain", "self",
    "full", "started",  "stopped", "failed",  "auth"};

/* The catalog's state: set up by ardn_auto_open from its configuration, then changed by its
 * loop (ardn_auto_serve) only. */
struct arda {
    const struct arda_conf *cfg; /* its configuration (read only); NULL: no catalog */
    /* set up by ardn_auto_open */
    unsigned port;  /* the catalog's port: --auto-port, that of --auto-multicast, or the default */
    unsigned limit; /* --auto-limit or the default */
    struct sockaddr_in peers[MAX_PEERS];
    int npeers;
    struct sockaddr_in group;
    bool mcast;
    int fd;
    uint64_t id;
    uint32_t domain;
    char host[ARDA_MAX_HOST + 1];
    const struct ardn_route *routes;
    int nroutes;
    pid_t self;
    /* changed by the loop */
    struct local *locals;
    int nlocals;
    struct arda_entry *snap; /* what was announced last (has then wants) */
    int nsnap;
    uint32_t seq;
    struct peer peer[MAX_PEERS];
    int npeer;
    struct flow *fwd[MAX_LOCAL];
    int nfwd;
    struct flow *want[MAX_LOCAL];
    int nwant;
    struct report reports[MAX_REPORTS];
    int nreports;
    unsigned conflicts, mismatches, over_limit;
    uint64_t cnt[AC_NCOUNTERS];
    /* Descriptors: how many are free (counted when first needed after a scan began), and what
     * did not get one since: views, routes, the listing of the domain; said once. */
    size_t fd_free;
    bool fd_counted, fd_said, fd_list_short;
    unsigned long fd_views_short, fd_routes_short;
    uint8_t *dgram[ARDA_MAX_PARTS];
    size_t dlen[ARDA_MAX_PARTS];
    struct arda_entry *rx; /* ARDA_MAX_ENTRIES, for arda_parse */
    /* With --key: the subkey of this catalog's id, and the other catalogs' ids seen. */
    struct ards_sub sub;
    struct ards_table *seal;
};
static struct arda catalog = {.fd = -1};

/* "HOST[:PORT]" into an IPv4 address (the catalog speaks IPv4). */
static int resolve4(const char *text, unsigned dport, struct sockaddr_in *out, const char *opt)
{
    struct sockaddr_storage a;
    socklen_t len;
    bool has_port;
    if (ardn_resolve(text, &a, &len, &has_port) < 0)
        return ardn_fail_prefix(ARD_EINVAL, opt);
    if (a.ss_family != AF_INET)
        return ardi_fail(ARD_EINVAL, "%s'%s' is not an IPv4 address (the catalog speaks IPv4)", opt,
                         text);
    memcpy(out, &a, sizeof *out);
    if (!has_port)
        out->sin_port = htons((uint16_t)dport);
    return 0;
}

static int parse_peers(struct arda *cat)
{
    char buf[sizeof cat->cfg->peers];
    strcpy(buf, cat->cfg->peers);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (cat->npeers == MAX_PEERS)
            return ardi_fail(ARD_EINVAL, "--auto-peers: more than %d peers", MAX_PEERS);
        if (resolve4(t, cat->port, &cat->peers[cat->npeers], "--auto-peers: ") < 0)
            return ARD_EINVAL;
        cat->npeers++;
    }
    if (cat->npeers == 0)
        return ardi_fail(ARD_EINVAL, "--auto-peers: no peer given");
    return 0;
}

static int parse_mcast(struct arda *cat)
{
    if (!strchr(cat->cfg->mcast, ':'))
        return ardi_fail(ARD_EINVAL, "--auto-multicast '%s': expected GROUP:PORT", cat->cfg->mcast);
    if (resolve4(cat->cfg->mcast, 0, &cat->group, "--auto-multicast: ") < 0)
        return ARD_EINVAL;
    if (!IN_MULTICAST(ntohl(cat->group.sin_addr.s_addr)))
        return ardi_fail(ARD_EINVAL, "--auto-multicast '%s': not a multicast group (224.0.0.0/4)",
                         cat->cfg->mcast);
    if (!ardn_g.dev[0])
        return ardi_fail(ARD_EINVAL, "--auto-multicast needs --dev IFACE (the network the "
                                     "catalog announces on)");
    if (cat->cfg->port && cat->port != ntohs(cat->group.sin_port))
        return ardi_fail(ARD_EINVAL, "--auto-port %u and --auto-multicast port %u differ",
                         cat->port, ntohs(cat->group.sin_port));
    cat->port = ntohs(cat->group.sin_port);
    cat->mcast = true;
    return 0;
}

static int open_socket(struct arda *cat)
{
    cat->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (cat->fd < 0)
        return ardi_fail(ARD_ESYS, "--auto: socket: %s", strerror(errno));
    /* No SO_REUSEADDR: a second catalog on this port would steal announcements. */
    int rcvbuf = 1 << 20; /* (bursts of announcements; capped by rmem_max) */
    setsockopt(cat->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    if (ardn_g.dev[0] && setsockopt(cat->fd, SOL_SOCKET, SO_BINDTODEVICE, ardn_g.dev,
                                    (socklen_t)strlen(ardn_g.dev)) < 0)
        return ardi_fail(ARD_ESYS, "--auto: --dev %s: %s", ardn_g.dev, strerror(errno));
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)cat->port)};
    if (ardn_g.bind[0] && !cat->mcast) {
        if (resolve4(ardn_g.bind, cat->port, &a, "--bind: ") < 0)
            return ARD_EINVAL;
        a.sin_port = htons((uint16_t)cat->port);
    }
    if (bind(cat->fd, (struct sockaddr *)&a, sizeof a) < 0)
        return ardi_fail(ARD_ESYS, "--auto: cannot listen on port %u: %s", cat->port,
                         strerror(errno));
    if (cat->mcast) {
        struct ip_mreqn m = {.imr_multiaddr = cat->group.sin_addr,
                             .imr_ifindex = (int)if_nametoindex(ardn_g.dev)};
        if (m.imr_ifindex == 0)
            return ardi_fail(ARD_EINVAL, "--dev %s: no such interface", ardn_g.dev);
        if (setsockopt(cat->fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &m, sizeof m) < 0 ||
            setsockopt(cat->fd, IPPROTO_IP, IP_MULTICAST_IF, &m, sizeof m) < 0)
            return ardi_fail(ARD_ESYS, "--auto-multicast %s on %s: %s", cat->cfg->mcast, ardn_g.dev,
                             strerror(errno));
        unsigned char loop = 0;
        setsockopt(cat->fd, IPPROTO_IP, IP_MULTICAST_LOOP, &loop, sizeof loop);
    }
    return 0;
}

int ardn_auto_open(const struct arda_conf *cfg, const struct ardn_route *routes, int n)
{
    struct arda *cat = &catalog;
    if (!cfg->enabled) {
        if (cfg->peers[0] || cfg->mcast[0])
            return ardi_fail(ARD_EINVAL, "--auto-peers and --auto-multicast need --auto");
        return 0;
    }
    cat->cfg = cfg;
    cat->port = cfg->port ? (unsigned)cfg->port : ARDA_DEFAULT_PORT;
    cat->limit = cfg->limit ? (unsigned)cfg->limit : ARDA_DEFAULT_LIMIT;
    if (!cfg->peers[0] && !cfg->mcast[0])
        return ardi_fail(ARD_EINVAL, "--auto needs --auto-peers HOST[:PORT],... or "
                                     "--auto-multicast GROUP:PORT --dev IFACE");
    if (cfg->mcast[0] && parse_mcast(cat) < 0)
        return ARD_EINVAL;
    if (cfg->peers[0] && parse_peers(cat) < 0)
        return ARD_EINVAL;
    for (int i = 0; i < n; i++) {
        bool ros2 = routes[i].cfg.in.kind == ARDN_EP_ROS2;
        for (int o = 0; o < routes[i].cfg.nout; o++)
            ros2 |= routes[i].cfg.out[o].kind == ARDN_EP_ROS2;
        if (ros2)
            return ardi_fail(ARD_EINVAL,
                             "route '%s': ros2: endpoints and --auto are not run by "
                             "one process (start a second ardnet for them)",
                             routes[i].cfg.name);
    }
    cat->routes = routes;
    cat->nroutes = n;
    cat->self = getpid();
    cat->domain = arda_domain_hash(ard_domain());
    while (cat->id == 0)
        if (getrandom(&cat->id, sizeof cat->id, 0) != (ssize_t)sizeof cat->id)
            return ardi_fail(ARD_ESYS, "getrandom: %s", strerror(errno));
    if (ardn_seal.on) {
        ards_subkey(&ardn_seal.key, cat->id, &cat->sub);
        if (!(cat->seal = ards_table_alloc(sizeof *cat->seal)))
            return ardi_fail(ARD_ENOMEM, "out of memory");
    }
    char h[256] = "";
    gethostname(h, sizeof h - 1);
    size_t k = 0;
    for (const char *c = h; *c && k < ARDA_MAX_HOST; c++)
        cat->host[k++] =
            (isalnum((unsigned char)*c) || *c == '.' || *c == '-' || *c == '_') ? *c : '_';
    if (k == 0)
        strcpy(cat->host, "host");
    cat->locals = calloc(MAX_LOCAL, sizeof *cat->locals);
    cat->snap = calloc(MAX_LOCAL, sizeof *cat->snap);
    cat->rx = calloc(ARDA_MAX_ENTRIES, sizeof *cat->rx);
    for (unsigned i = 0; i < ARDA_MAX_PARTS; i++)
        cat->dgram[i] = malloc(ARDA_MAX_DGRAM);
    if (!cat->locals || !cat->snap || !cat->rx || !cat->dgram[ARDA_MAX_PARTS - 1])
        return ardi_fail(ARD_ENOMEM, "out of memory");
    return open_socket(cat);
}

/* ---- reports -------------------------------------------------------------------------------- */

/* Say `msg` once while the condition named by key lasts (report_sweep forgets the others). */
static bool report(struct arda *cat, const char *key, const char *msg)
{
    for (int i = 0; i < cat->nreports; i++)
        if (strcmp(cat->reports[i].key, key) == 0) {
            cat->reports[i].mark = true;
            return false;
        }
    if (cat->nreports < MAX_REPORTS) {
        snprintf(cat->reports[cat->nreports].key, sizeof cat->reports[0].key, "%s", key);
        cat->reports[cat->nreports++].mark = true;
    }
    fprintf(stderr, "ardnet: auto: %s\n", msg);
    return true;
}

static void report_sweep(struct arda *cat)
{
    int k = 0;
    for (int i = 0; i < cat->nreports; i++) {
        if (cat->reports[i].mark || cat->reports[i].key[0] == '#') {
            cat->reports[i].mark = false;
            cat->reports[k++] = cat->reports[i];
        } else {
            fprintf(stderr, "ardnet: auto: resolved: %s\n", cat->reports[i].key);
        }
    }
    cat->nreports = k;
}

/* ---- descriptors ----------------------------------------------------------------------------- */

/* Whether `n` more descriptors may be taken leaving `keep` free; if so they are taken. */
static bool fd_take(struct arda *cat, unsigned n, unsigned keep)
{
    if (!cat->fd_counted) {
        cat->fd_free = ardc_nofile_room(0);
        cat->fd_counted = true;
    }
    if (cat->fd_free == (size_t)-1)
        return true; /* unlimited */
    if (cat->fd_free < (size_t)n + keep)
        return false;
    cat->fd_free -= n;
    return true;
}

/* `n` descriptors closed. */
static void fd_give(struct arda *cat, unsigned n)
{
    if (cat->fd_counted && cat->fd_free != (size_t)-1)
        cat->fd_free += n;
}

/* After an open that failed: whether for want of a descriptor (then none is free). */
static bool fd_out(struct arda *cat)
{
    if (!ardc_nofile_exhausted())
        return false;
    cat->fd_free = 0;
    cat->fd_counted = true;
    return true;
}

/* What did not get a descriptor, said once (the limit and about how many are needed). */
static void fd_say(struct arda *cat)
{
    if (cat->fd_said || (!cat->fd_list_short && !cat->fd_views_short && !cat->fd_routes_short))
        return;
    char what[300];
    if (cat->fd_list_short)
        snprintf(what, sizeof what, "the domain cannot be listed (tried again at every scan)");
    else
        snprintf(what, sizeof what,
                 "%lu connections are not looked at and %lu routes are not opened (tried again "
                 "at every scan)",
                 cat->fd_views_short, cat->fd_routes_short);
    /* (a connection not looked at may be wanted: a view and a route) */
    unsigned long short_by =
        cat->fd_list_short + cat->fd_views_short * (1 + FD_ROUTE) + cat->fd_routes_short * FD_ROUTE;
    ardc_nofile_say_skipped("ardnet: auto", short_by, FD_KEEP_VIEWS, what);
    cat->fd_said = true;
}

/* ---- the local domain ----------------------------------------------------------------------- */

static bool configured(const struct arda *cat, const char *conn)
{
    for (int i = 0; i < cat->nroutes; i++) {
        const struct ardn_route *r = &cat->routes[i];
        if (r->cfg.in.kind == ARDN_EP_LOCAL && strcmp(r->cfg.in.conn, conn) == 0)
            return true;
        for (int o = 0; o < r->cfg.nout; o++)
            if (r->cfg.out[o].kind == ARDN_EP_LOCAL && strcmp(r->cfg.out[o].conn, conn) == 0)
                return true;
    }
    return false;
}

static int list_cb(const char *name, void *arg)
{
    struct arda *cat = arg;
    if (cat->nlocals == MAX_LOCAL) {
        report(cat, "#locals",
               "more than 1024 connections in the domain: the catalog looks at the "
               "first 1024 (in name order) only");
        return 1;
    }
    struct local *l = &cat->locals[cat->nlocals];
    memset(l, 0, sizeof *l);
    snprintf(l->e.name, sizeof l->e.name, "%s", name);
    cat->nlocals++;
    return 0;
}

/* Whether the writer (pid) of a connection is an ardnet: looked up in its peer table once per
 * writer, then remembered (by name and pid) from one look to the next. */
struct seen {
    char name[ARD_MAX_NAME + 1];
    int32_t pid;
    bool relayed;
};
static struct seen seen_buf[2][MAX_LOCAL];
static int nseen[2], seen_cur;

static bool writer_is_ardnet(const char *name, const ard_view *view, int32_t pid)
{
    const struct seen *prev = seen_buf[!seen_cur];
    int lo = 0, hi = nseen[!seen_cur] - 1;
    bool relayed = false, known = false;
    while (lo <= hi && !known) {
        int mid = (lo + hi) / 2, c = strcmp(prev[mid].name, name);
        if (c == 0 && prev[mid].pid == pid) {
            relayed = prev[mid].relayed;
            known = true;
        } else if (c == 0) {
            break;
        } else if (c < 0) {
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    if (!known) {
        struct ard_peer ps[8];
        int n = ard_view_peers(view, ps, 8, NULL);
        for (int k = 0; k < n && k < 8; k++)
            if (ps[k].dir == ARD_OUT && ps[k].pid == pid)
                relayed = strcmp(ps[k].program, "ardnet") == 0;
    }
    struct seen *s = &seen_buf[seen_cur][nseen[seen_cur]++];
    snprintf(s->name, sizeof s->name, "%s", name);
    s->pid = pid;
    s->relayed = relayed;
    return relayed;
}

/* The read-only views of the connections the catalog looks at (not those of configured
 * routes), in name order: opened when a connection appears, kept from one look to the next,
 * reopened when its object is re-created, closed when it disappears. */
struct tracked {
    char name[ARD_MAX_NAME + 1];
    ard_view *view;
};
static struct tracked trk_buf[2][MAX_LOCAL];
static int ntrk[2], trk_cur;

/* The view of `name` kept from the previous look (taken from it), opened anew if there was
 * none or its object was re-created; NULL if the connection cannot be opened now. */
static ard_view *view_of(struct arda *cat, const char *name)
{
    struct tracked *prev = trk_buf[!trk_cur];
    ard_view *v = NULL;
    int lo = 0, hi = ntrk[!trk_cur] - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2, c = strcmp(prev[mid].name, name);
        if (c == 0) {
            v = prev[mid].view;
            prev[mid].view = NULL;
            break;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    if (v && ard_view_recreated(v)) {
        ard_view_close(v);
        v = NULL;
        fd_give(cat, 1);
    }
    if (!v && !fd_take(cat, 1, FD_KEEP_VIEWS)) {
        cat->fd_views_short++;
        return NULL;
    }
    if (!v && ard_view_open(NULL, name, &v) < 0) {
        v = NULL;
        cat->fd_views_short += fd_out(cat);
    }
    if (v) {
        struct tracked *t = &trk_buf[trk_cur][ntrk[trk_cur]++];
        snprintf(t->name, sizeof t->name, "%s", name);
        t->view = v;
    }
    return v;
}

/* Close the views of the previous look that this look did not take over. */
static void views_sweep(int which)
{
    for (int i = 0; i < ntrk[which]; i++) {
        ard_view_close(trk_buf[which][i].view);
        trk_buf[which][i].view = NULL;
    }
    ntrk[which] = 0;
}

/* What this host has and wants now, into cat->locals (kind 0 for neither). One ard_view_stat per
 * connection (its view is kept open); its peer table only when a new writer appears. */
static void scan(struct arda *cat)
{
    int before = cat->nlocals;
    cat->nlocals = 0;
    cat->fd_counted = false;
    cat->fd_views_short = cat->fd_routes_short = 0;
    cat->fd_list_short = false;
    if (ard_conn_list(NULL, list_cb, cat) < 0) {
        cat->nlocals = before; /* (nothing of the last look was overwritten) */
        cat->fd_list_short = fd_out(cat);
        return;
    }
    seen_cur = !seen_cur;
    nseen[seen_cur] = 0;
    trk_cur = !trk_cur;
    ntrk[trk_cur] = 0;
    unsigned wants = 0;
    for (int i = 0; i < cat->nlocals; i++) {
        struct local *l = &cat->locals[i];
        struct ard_conn_stat st;
        if (configured(cat, l->e.name))
            continue;
        ard_view *v = view_of(cat, l->e.name);
        if (!v)
            continue;
        ard_view_stat(v, &st);
        if (st.size == 0 || st.size > ARDW_MAX_PAYLOAD)
            continue;
        int32_t w = st.writer_pid;
        /* Written by ardnet (this catalog, or a configured bridge): not an original. */
        bool relayed = w == cat->self || (w != 0 && writer_is_ardnet(l->e.name, v, w));
        /* The readers but this catalog's own (its forwards, one port each). */
        uint32_t readers = st.readers;
        for (int k = 0; k < cat->nfwd && readers > 0; k++)
            readers -= strcmp(cat->fwd[k]->conn, l->e.name) == 0;
        bool writer = w != 0;
        l->e.size = (uint32_t)st.size;
        snprintf(l->e.type, sizeof l->e.type, "%s", st.type);
        l->e.order = (uint8_t)arda_host_order();
        if (writer && !relayed) {
            l->e.kind = ARDA_HAS;
        } else if ((!writer || (relayed && st.writer_pid == cat->self)) && readers > 0) {
            if (wants < cat->limit) {
                l->e.kind = ARDA_WANT;
                wants++;
            } else {
                char key[ARD_MAX_NAME + 96], msg[300];
                snprintf(key, sizeof key, "#limit %s", l->e.name);
                snprintf(msg, sizeof msg,
                         "connection '%s' is wanted here but not asked for: more than "
                         "--auto-limit %u wanted connections",
                         l->e.name, cat->limit);
                report(cat, key, msg);
                cat->over_limit++;
            }
        }
    }
    views_sweep(!trk_cur);
}

/* ---- routes of the catalog ------------------------------------------------------------------ */

static void flow_close(struct arda *cat, struct flow *f)
{
    fd_give(cat, FD_ROUTE);
    ardn_plan_halt(&f->plan);
    ardn_plan_join(&f->plan);
    ardn_plan_close(&f->plan);
    free(f);
}

static int flow_start(struct arda *cat, struct flow *f)
{
    if (!fd_take(cat, FD_ROUTE, FD_KEEP_ROUTES)) {
        cat->fd_routes_short++; /* (said once, with the limit) */
        cat->cnt[AC_FAILED]++;
        return ARD_ESYS;
    }
    int rc = ardn_plan_open(&f->plan, &f->route, 1);
    if (rc == 0 && f->route.cfg.in.kind == ARDN_EP_UDP) {
        struct sockaddr_in a;
        socklen_t len = sizeof a;
        if (getsockname(f->route.fd_in, (struct sockaddr *)&a, &len) < 0)
            rc = ardi_fail(ARD_ESYS, "getsockname: %s", strerror(errno));
        f->port = ntohs(a.sin_port);
    }
    if (rc == 0)
        rc = ardn_plan_start(&f->plan);
    if (rc < 0) {
        char key[ARD_MAX_NAME + 96], msg[800];
        snprintf(key, sizeof key, "#route %s", f->route.cfg.name);
        snprintf(msg, sizeof msg, "%s", ard_errdetail());
        if (fd_out(cat))
            cat->fd_routes_short++; /* (said once, with the limit) */
        else
            report(cat, key, msg);
        cat->cnt[AC_FAILED]++;
        ardn_plan_halt(&f->plan);
        ardn_plan_join(&f->plan);
        if (f->plan.routes)
            ardn_plan_close(&f->plan);
        else
            ardn_route_close(&f->route);
        return rc;
    }
    return 0;
}

/* The name of a catalog's port, which tells the tools the other host (docs/ardnet.md):
 * "auto-N-WAY-HOST" (WAY "from" or "to"), N new for each port (a process's port names are
 * unique), the host cut to a port name's length, characters a name may not have as '_'. */
static void auto_port_name(char *out, const char *way, const char *host)
{
    static unsigned serial;
    int k = snprintf(out, ARD_MAX_NAME + 1, "auto-%u-%s-", ++serial, way);
    int n = snprintf(out + k, (size_t)(ARD_MAX_NAME + 1 - k), "%s", host) + k;
    for (int i = k; i < n && i < ARD_MAX_NAME; i++)
        if (!isalnum((unsigned char)out[i]) && out[i] != '.' && out[i] != '-' && out[i] != '_')
            out[i] = '_';
}

/* Receive connection `conn` on a port of our own (UDP port `port`, 0: any), written into the
 * local connection by a port that names the host it comes from (`host`, "" not known). */
static struct flow *want_open(struct arda *cat, const char *conn, const char *host, uint16_t port)
{
    struct flow *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    snprintf(f->conn, sizeof f->conn, "%s", conn);
    snprintf(f->host, sizeof f->host, "%s", host);
    struct ardn_route *r = &f->route;
    ardn_route_init(r);
    snprintf(r->cfg.name, sizeof r->cfg.name, "auto<%.50s", conn);
    r->cfg.in.kind = ARDN_EP_UDP;
    struct sockaddr_in *a = (struct sockaddr_in *)&r->cfg.in.addr;
    a->sin_family = AF_INET;
    a->sin_addr.s_addr = htonl(INADDR_ANY);
    a->sin_port = htons(port);
    r->cfg.in.addrlen = sizeof *a;
    strcpy(r->cfg.in.text, "udp://:0");
    r->cfg.out[0].kind = ARDN_EP_LOCAL;
    snprintf(r->cfg.out[0].conn, sizeof r->cfg.out[0].conn, "%s", conn);
    snprintf(r->cfg.out[0].text, sizeof r->cfg.out[0].text, "%s", conn);
    if (host[0])
        auto_port_name(r->cfg.out[0].port_name, ARDA_PORT_FROM, host);
    r->cfg.nout = 1;
    if (flow_start(cat, f) < 0) {
        free(f);
        return NULL;
    }
    return f;
}

/* Send local connection `conn` to a peer's address (host `host`), read by a port that names
 * that host. */
static struct flow *fwd_open(struct arda *cat, const char *conn, const struct sockaddr_in *to,
                             const char *host)
{
    struct flow *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    snprintf(f->conn, sizeof f->conn, "%s", conn);
    snprintf(f->host, sizeof f->host, "%s", host);
    f->to = *to;
    struct ardn_route *r = &f->route;
    ardn_route_init(r);
    snprintf(r->cfg.name, sizeof r->cfg.name, "auto:%.40s>%s", conn, inet_ntoa(to->sin_addr));
    r->cfg.in.kind = ARDN_EP_LOCAL;
    snprintf(r->cfg.in.conn, sizeof r->cfg.in.conn, "%s", conn);
    snprintf(r->cfg.in.text, sizeof r->cfg.in.text, "%s", conn);
    auto_port_name(r->cfg.in.port_name, ARDA_PORT_TO, host);
    r->cfg.out[0].kind = ARDN_EP_UDP;
    memcpy(&r->cfg.out[0].addr, to, sizeof *to);
    r->cfg.out[0].addrlen = sizeof *to;
    char s[64];
    ardn_addr_str(&r->cfg.out[0].addr, s, sizeof s);
    snprintf(r->cfg.out[0].text, sizeof r->cfg.out[0].text, "udp://%s", s);
    r->cfg.nout = 1;
    if (flow_start(cat, f) < 0) {
        free(f);
        return NULL;
    }
    cat->cnt[AC_STARTED]++;
    return f;
}

/* ---- announcements -------------------------------------------------------------------------- */

static bool same_entry(const struct arda_entry *a, const struct arda_entry *b)
{
    return a->kind == b->kind && a->port == b->port && a->size == b->size && a->order == b->order &&
           strcmp(a->name, b->name) == 0 && strcmp(a->type, b->type) == 0;
}

static struct flow *find_flow(struct flow **v, int n, const char *conn)
{
    for (int i = 0; i < n; i++)
        if (strcmp(v[i]->conn, conn) == 0)
            return v[i];
    return NULL;
}

static const char *source_host(const struct arda *cat, const struct arda_entry *want);

/* The receiving routes of the wants (opened, kept, closed), then the snapshot to announce.
 * Returns whether it differs from the last one. */
static bool update_wants(struct arda *cat)
{
    for (int i = 0; i < cat->nwant; i++)
        cat->want[i]->mark = false;
    int n = 0;
    bool changed = false;
    for (int i = 0; i < cat->nlocals; i++) {
        struct arda_entry e = cat->locals[i].e;
        if (e.kind == 0)
            continue;
        if (e.kind == ARDA_WANT) {
            struct flow *f = find_flow(cat->want, cat->nwant, e.name);
            const char *src = source_host(cat, &e);
            if (f && src[0] && strcmp(f->host, src) != 0) {
                /* Comes from another host now: its port is named anew, on the same UDP port
                 * where it can (what the peers were told stays true). */
                int w = 0;
                while (cat->want[w] != f)
                    w++;
                uint16_t port = f->port;
                flow_close(cat, f);
                if ((f = want_open(cat, e.name, src, port)) == NULL)
                    f = want_open(cat, e.name, src, 0);
                if (f)
                    cat->want[w] = f;
                else
                    cat->want[w] = cat->want[--cat->nwant];
            }
            if (!f && cat->nwant < MAX_LOCAL && (f = want_open(cat, e.name, src, 0)) != NULL)
                cat->want[cat->nwant++] = f;
            if (!f)
                continue; /* (reported; tried again at the next scan) */
            f->mark = true;
            e.port = f->port;
        }
        changed |= n >= cat->nsnap || !same_entry(&cat->snap[n], &e);
        cat->snap[n++] = e;
    }
    changed |= n != cat->nsnap;
    cat->nsnap = n;
    int k = 0;
    for (int i = 0; i < cat->nwant; i++) {
        if (cat->want[i]->mark)
            cat->want[k++] = cat->want[i];
        else
            flow_close(cat, cat->want[i]);
    }
    cat->nwant = k;
    return changed;
}

static void send_all(struct arda *cat, const uint8_t *d, size_t len)
{
    static uint8_t sealed[ARDA_MAX_DGRAM + ARDS_OVERHEAD];
    if (ardn_seal.on) {
        len = ardn_seal_with(&cat->sub, d, ARDA_HDR_SIZE, d + ARDA_HDR_SIZE, len - ARDA_HDR_SIZE,
                             sealed);
        d = sealed;
    }
    for (int i = 0; i < cat->npeers; i++)
        if (sendto(cat->fd, d, len, 0, (const struct sockaddr *)&cat->peers[i],
                   sizeof cat->peers[i]) >= 0)
            cat->cnt[AC_SENT]++;
    if (cat->mcast &&
        sendto(cat->fd, d, len, 0, (const struct sockaddr *)&cat->group, sizeof cat->group) >= 0)
        cat->cnt[AC_SENT]++;
}

static void announce(struct arda *cat)
{
    struct arda_msg m = {.host_id = cat->id, .domain = cat->domain, .seq = ++cat->seq};
    strcpy(m.host, cat->host);
    unsigned nd = 1, in_dgram = 0;
    size_t len = arda_put_hdr(cat->dgram[0], &m);
    for (int i = 0; i < cat->nsnap; i++) {
        size_t el = arda_entry_len(&cat->snap[i]);
        if (in_dgram > 0 && len + el > ARDA_FILL_DGRAM) {
            if (nd == ARDA_MAX_PARTS) {
                report(cat, "#parts",
                       "more connections than one announcement carries: the rest "
                       "are not announced");
                break;
            }
            cat->dlen[nd - 1] = len;
            len = arda_put_hdr(cat->dgram[nd++], &m);
            in_dgram = 0;
        }
        len = arda_put_entry(cat->dgram[nd - 1], len, &cat->snap[i]);
        in_dgram++;
    }
    cat->dlen[nd - 1] = len;
    for (unsigned i = 0; i < nd; i++) {
        arda_set_part(cat->dgram[i], (uint16_t)i, (uint16_t)nd);
        send_all(cat, cat->dgram[i], cat->dlen[i]);
    }
}

/* ---- peers ---------------------------------------------------------------------------------- */

static bool allowed(const struct arda *cat, const struct sockaddr_in *src)
{
    for (int i = 0; i < cat->npeers; i++)
        if (cat->peers[i].sin_addr.s_addr == src->sin_addr.s_addr)
            return true;
    /* Multicast mode: the socket is bound to --dev, so anything that arrives came from the
     * robot's network. */
    return cat->mcast;
}

static void peer_free(struct peer *p)
{
    free(p->ents);
    free(p->aents);
}

static void take_datagram(struct arda *cat, const uint8_t *d, size_t len,
                          const struct sockaddr_in *src, int64_t now, bool *dirty)
{
    if (!allowed(cat, src)) {
        cat->cnt[AC_FOREIGN]++;
        return;
    }
    struct arda_msg m;
    if (arda_parse(d, len, &m, cat->rx, ARDA_MAX_ENTRIES) != ARDA_OK) {
        cat->cnt[AC_INVALID]++;
        return;
    }
    if (m.host_id == cat->id) {
        cat->cnt[AC_SELF]++;
        return;
    }
    if (m.domain != cat->domain) {
        cat->cnt[AC_DOMAIN]++;
        return;
    }
    struct peer *p = NULL;
    for (int i = 0; i < cat->npeer && !p; i++)
        if (cat->peer[i].id == m.host_id)
            p = &cat->peer[i];
    if (!p) {
        int same = 0; /* catalogs at this address: a forger's many ids cannot crowd out peers */
        for (int i = 0; i < cat->npeer; i++)
            same += cat->peer[i].addr.sin_addr.s_addr == src->sin_addr.s_addr;
        if (cat->npeer == MAX_PEERS || same >= MAX_PER_ADDRESS) {
            cat->cnt[AC_FULL]++;
            return;
        }
        p = &cat->peer[cat->npeer++];
        memset(p, 0, sizeof *p);
        p->id = m.host_id;
        fprintf(stderr, "ardnet: auto: peer %s (%s) joined\n", m.host, inet_ntoa(src->sin_addr));
    }
    cat->cnt[AC_RECEIVED]++;
    /* A late part of an older snapshot (or a recording) tells nothing: not even that the peer
     * lives. So a snapshot number far ahead (damaged, or forged without a key) stops this
     * peer's snapshots for PEER_TIMEOUT at most: then the peer is gone, and its next
     * announcement starts it anew. */
    if (p->committed && (int32_t)(m.seq - p->seq) <= 0)
        return;
    strcpy(p->host, m.host);
    p->addr = *src;
    p->seen_ns = now;
    if (m.seq != p->aseq || m.nparts != p->anparts || p->amask == 0) {
        p->aseq = m.seq;
        p->anparts = m.nparts;
        p->amask = 0;
        p->naents = 0;
    }
    uint64_t bit = 1ull << m.part;
    if (p->amask & bit)
        return;
    if (p->naents + m.count > MAX_PEER_ENTRIES) { /* (bounds what one peer can make us keep) */
        cat->cnt[AC_INVALID]++;
        p->amask = 0;
        return;
    }
    void *na = realloc(p->aents, (size_t)(p->naents + m.count + 1) * sizeof *p->aents);
    if (!na)
        return;
    p->aents = na;
    memcpy(p->aents + p->naents, cat->rx, m.count * sizeof *cat->rx);
    p->naents += m.count;
    p->amask |= bit;
    uint64_t full = m.nparts == 64 ? ~0ull : (1ull << m.nparts) - 1;
    if (p->amask != full)
        return;
    struct arda_entry *old = p->ents;
    p->ents = p->aents;
    p->nents = p->naents;
    p->aents = old;
    p->naents = 0;
    p->amask = 0;
    p->seq = m.seq;
    p->committed = true;
    *dirty = true;
}

/* With --key: an announcement is taken only sealed with the key, from a catalog id that proved
 * it holds the key now (it answered a challenge; docs/wire.md, "Sealed datagrams"), and not
 * sealed before that (a recording). Challenges of the other catalogs are answered here. */
static void take_sealed(struct arda *cat, uint8_t *d, size_t len, const struct sockaddr_in *src,
                        int64_t now, bool *dirty)
{
    struct ards_info i;
    if (!allowed(cat, src)) {
        cat->cnt[AC_FOREIGN]++;
        return;
    }
    if (!ards_peek(d, len, &i)) {
        cat->cnt[AC_AUTH]++;
        return;
    }
    if (i.magic == ARDS_CATALOG_MAGIC && i.epoch == cat->id) {
        cat->cnt[AC_SELF]++;
        return;
    }
    struct sockaddr_storage from = {0};
    memcpy(&from, src, sizeof *src);
    if (i.magic == ARDW_MAGIC_WORD && d[5] == ARDS_FLAG_CHALLENGE) {
        (void)ardn_seal_answer_as(cat->fd, d, len, cat->id, &cat->sub, (const struct sockaddr *)src,
                                  sizeof *src);
        return;
    }
    struct ards_peer *p = ards_find(cat->seal, i.epoch);
    struct ards_sub sub; /* (an epoch not in the table yet) */
    if (!p)
        ards_subkey(&ardn_seal.key, i.epoch, &sub);
    size_t plen;
    uint8_t *pd = ards_open(p ? &p->sub : &sub, d, len, &i, &plen);
    if (!p && (!pd || i.magic == ARDW_MAGIC_WORD))
        ards_sub_wipe(&sub); /* (not kept) */
    if (!pd) {
        cat->cnt[AC_AUTH]++;
        return;
    }
    if (i.magic == ARDW_MAGIC_WORD) { /* an answer to a challenge of ours */
        unsigned flags;
        uint64_t theirs, t;
        uint8_t nonce[ARDS_NONCE_BYTES];
        if (!p || p->proven || !ards_get_handshake(pd, plen, &flags, &theirs, nonce, &t) ||
            flags != ARDS_FLAG_ANSWER || theirs != cat->id ||
            memcmp(nonce, p->nonce, sizeof nonce) != 0) {
            cat->cnt[AC_AUTH]++;
            return;
        }
        ardn_seal_proven(p, t, now);
        size_t n = p->hold_len[1];
        p->hold_len[1] = 0;
        if (n && p->hold_ctr[1] >= p->floor)
            take_datagram(cat, p->hold[1], n, src, now, dirty);
        else if (n)
            cat->cnt[AC_AUTH]++;
        return;
    }
    if (!p) {
        unsigned given_up;
        p = ards_take_slot(cat->seal, &given_up);
        cat->cnt[AC_AUTH] += given_up;
        p->used = true;
        p->epoch = i.epoch;
        p->sub = sub;
        ards_sub_wipe(&sub);
        ardn_seal_challenge(cat->fd, p, cat->id, &cat->sub, &from, now);
    }
    p->used_ns = now;
    if (!p->proven) { /* the newest is held until the answer comes */
        if (now - p->chal_ns >= ARDS_RECHALLENGE_NS)
            ardn_seal_challenge(cat->fd, p, cat->id, &cat->sub, &from, now);
        if (plen <= ARDS_HOLD_MAX) {
            memcpy(p->hold[1], pd, plen);
            p->hold_len[1] = plen;
            p->hold_ctr[1] = i.ctr;
        }
        return;
    }
    if (i.ctr < p->floor) { /* sealed before this run's challenge: a recording */
        cat->cnt[AC_AUTH]++;
        return;
    }
    take_datagram(cat, pd, plen, src, now, dirty);
}

static void receive(struct arda *cat, int64_t now, bool *dirty)
{
    static uint8_t buf[ARDA_MAX_DGRAM + ARDS_OVERHEAD + 1];
    for (int i = 0; i < 256; i++) {
        struct sockaddr_in src;
        socklen_t sl = sizeof src;
        ssize_t n = recvfrom(cat->fd, buf, sizeof buf, MSG_TRUNC, (struct sockaddr *)&src, &sl);
        if (n < 0)
            return;
        if (sl != sizeof src || src.sin_family != AF_INET) {
            cat->cnt[AC_FOREIGN]++;
            continue;
        }
        size_t len = (size_t)n > sizeof buf ? sizeof buf : (size_t)n;
        if (ardn_seal.on)
            take_sealed(cat, buf, len, &src, now, dirty);
        else
            take_datagram(cat, buf, len, &src, now, dirty);
    }
}

static void expire(struct arda *cat, int64_t now, bool *dirty)
{
    int k = 0;
    for (int i = 0; i < cat->npeer; i++) {
        if (now - cat->peer[i].seen_ns > ARDA_PEER_TIMEOUT_NS) {
            fprintf(stderr, "ardnet: auto: peer %s (%s) gone (silent for %.1f s)\n",
                    cat->peer[i].host, inet_ntoa(cat->peer[i].addr.sin_addr),
                    ARDA_PEER_TIMEOUT_NS / 1e9);
            peer_free(&cat->peer[i]);
            *dirty = true;
            continue;
        }
        cat->peer[k++] = cat->peer[i];
    }
    cat->npeer = k;
}

/* ---- what to forward ------------------------------------------------------------------------ */

static bool same_type(const struct arda_entry *a, const struct arda_entry *b)
{
    return a->size == b->size && ard_type_hash(a->type) == ard_type_hash(b->type);
}

static const struct arda_entry *peer_entry(const struct peer *p, const char *name, int kind)
{
    for (int i = 0; i < p->nents; i++)
        if (p->ents[i].kind == kind && strcmp(p->ents[i].name, name) == 0)
            return &p->ents[i];
    return NULL;
}

static void mismatch(struct arda *cat, const char *name, const struct arda_entry *mine,
                     const struct peer *p, const struct arda_entry *theirs)
{
    char key[ARD_MAX_NAME + 96], msg[ARD_MAX_TYPE * 2 + 400];
    snprintf(key, sizeof key, "type %s %s", name, p->host);
    snprintf(msg, sizeof msg,
             "connection '%s' disagrees: this host %s it as %u bytes '%s', %s (%s) %s it as %u "
             "bytes '%s'; not forwarded",
             name, mine->kind == ARDA_HAS ? "has" : "wants", mine->size,
             mine->type[0] ? mine->type : "(opaque)", p->host, inet_ntoa(p->addr.sin_addr),
             theirs->kind == ARDA_HAS ? "has" : "wants", theirs->size,
             theirs->type[0] ? theirs->type : "(opaque)");
    if (report(cat, key, msg))
        cat->mismatches++;
}

/* The host a wanted connection comes from: the one peer that has it with the same type; ""
 * when none or several do. */
static const char *source_host(const struct arda *cat, const struct arda_entry *want)
{
    const char *host = "";
    for (int j = 0; j < cat->npeer; j++) {
        const struct arda_entry *t = peer_entry(&cat->peer[j], want->name, ARDA_HAS);
        if (!t)
            continue;
        if (host[0] || !same_type(want, t))
            return "";
        host = cat->peer[j].host;
    }
    return host;
}

/* Decide every forward from this host's has list and the peers' snapshots. */
static void evaluate(struct arda *cat)
{
    for (int i = 0; i < cat->nfwd; i++)
        cat->fwd[i]->mark = false;
    for (int i = 0; i < cat->nsnap; i++) {
        const struct arda_entry *e = &cat->snap[i];
        /* Written on two hosts: both say so, nothing is forwarded until one stops. */
        int havers = e->kind == ARDA_HAS;
        for (int j = 0; j < cat->npeer; j++)
            havers += peer_entry(&cat->peer[j], e->name, ARDA_HAS) != NULL;
        if (havers > 1) {
            char key[ARD_MAX_NAME + 96], msg[1200];
            int n = snprintf(msg, sizeof msg, "connection '%s' is written on %d hosts: %s", e->name,
                             havers, e->kind == ARDA_HAS ? "this host" : "");
            const char *sep = e->kind == ARDA_HAS ? ", " : "";
            for (int j = 0; j < cat->npeer && n < (int)sizeof msg; j++)
                if (peer_entry(&cat->peer[j], e->name, ARDA_HAS)) {
                    n += snprintf(msg + n, sizeof msg - (size_t)n, "%s%s (%s)", sep,
                                  cat->peer[j].host, inet_ntoa(cat->peer[j].addr.sin_addr));
                    sep = ", ";
                }
            if (n < (int)sizeof msg)
                snprintf(msg + n, sizeof msg - (size_t)n, "; nothing is forwarded until one stops");
            snprintf(key, sizeof key, "conflict %s", e->name);
            if (report(cat, key, msg))
                cat->conflicts++;
            continue;
        }
        for (int j = 0; j < cat->npeer; j++) {
            const struct peer *p = &cat->peer[j];
            const struct arda_entry *t =
                peer_entry(p, e->name, e->kind == ARDA_HAS ? ARDA_WANT : ARDA_HAS);
            if (!t)
                continue;
            if (!same_type(e, t)) {
                mismatch(cat, e->name, e, p, t);
                continue;
            }
            if (e->kind != ARDA_HAS)
                continue;
            /* Only to the address the want came from, one forward per connection and
             * address (a second want from there replaces the first). */
            struct sockaddr_in to = p->addr;
            to.sin_port = htons(t->port);
            struct flow *f = NULL;
            bool claimed = false;
            for (int k = 0; k < cat->nfwd && !claimed; k++)
                if (strcmp(cat->fwd[k]->conn, e->name) == 0 &&
                    cat->fwd[k]->to.sin_addr.s_addr == to.sin_addr.s_addr) {
                    if (cat->fwd[k]->mark)
                        claimed = true; /* (another catalog at that address, this round) */
                    else if (cat->fwd[k]->to.sin_port == to.sin_port)
                        f = cat->fwd[k];
                }
            if (claimed)
                continue;
            if (!f && cat->nfwd < MAX_LOCAL && (f = fwd_open(cat, e->name, &to, p->host)) != NULL)
                cat->fwd[cat->nfwd++] = f;
            if (f)
                f->mark = true;
        }
    }
    /* Forwards no longer asked for (or asked for on another port) stop. */
    int k = 0;
    for (int i = 0; i < cat->nfwd; i++) {
        if (cat->fwd[i]->mark) {
            cat->fwd[k++] = cat->fwd[i];
        } else {
            flow_close(cat, cat->fwd[i]);
            cat->cnt[AC_STOPPED]++;
        }
    }
    cat->nfwd = k;
    report_sweep(cat);
}

/* ---- counters and the loop ------------------------------------------------------------------ */

static void print_counters(const struct arda *cat, FILE *f)
{
    unsigned has = 0, wants = 0;
    for (int i = 0; i < cat->nsnap; i++)
        *(cat->snap[i].kind == ARDA_HAS ? &has : &wants) += 1;
    fprintf(f,
            "catalog %s: peers=%d has=%u wants=%u forwards=%d conflicts=%u mismatches=%u "
            "over_limit=%u",
            cat->host, cat->npeer, has, wants, cat->nfwd, cat->conflicts, cat->mismatches,
            cat->over_limit);
    for (int c = 0; c < AC_NCOUNTERS; c++)
        fprintf(f, " %s=%llu", counter_names[c], (unsigned long long)cat->cnt[c]);
    fputc('\n', f);
    for (int i = 0; i < cat->npeer; i++) {
        const struct peer *p = &cat->peer[i];
        unsigned ph = 0, pw = 0;
        for (int k = 0; k < p->nents; k++)
            *(p->ents[k].kind == ARDA_HAS ? &ph : &pw) += 1;
        fprintf(f, "peer %s: address=%s has=%u wants=%u\n", p->host, inet_ntoa(p->addr.sin_addr),
                ph, pw);
    }
    for (int i = 0; i < cat->nfwd; i++)
        ardn_counters_print(f, &cat->fwd[i]->plan);
    for (int i = 0; i < cat->nwant; i++)
        ardn_counters_print(f, &cat->want[i]->plan);
}

static void write_stats(const struct arda *cat, const struct ardn_plan *p)
{
    char tmp[1100];
    if (snprintf(tmp, sizeof tmp, "%s.tmp", ardn_g.stats_file) >= (int)sizeof tmp)
        return;
    FILE *f = fopen(tmp, "w");
    if (!f)
        return;
    if (p->routes)
        ardn_counters_print(f, p);
    print_counters(cat, f);
    if (fclose(f) != 0 || rename(tmp, ardn_g.stats_file) != 0)
        unlink(tmp);
}

void ardn_auto_serve(struct ardn_plan *p, const struct ardc_ready *held, const sigset_t *sigs)
{
    struct arda *cat = &catalog;
    fprintf(stderr, "ardnet: auto: catalog of host %s, domain %s, port %u%s%s\n", cat->host,
            ard_domain(), cat->port, cat->mcast ? ", multicast " : "",
            cat->mcast ? cat->cfg->mcast : "");
    int64_t now = ard_now_ns(), next_scan = now, next_announce = now, next_stats = now,
            next_counters = now;
    bool ready = false;
    for (;;) {
        struct pollfd pfd = {.fd = cat->fd, .events = POLLIN};
        int64_t wait = next_scan - ard_now_ns();
        wait = wait < 0 ? 0 : wait;
        poll(&pfd, 1, (int)(wait / 1000000) + 1);
        now = ard_now_ns();
        bool dirty = false;
        receive(cat, now, &dirty);
        expire(cat, now, &dirty);
        if (now >= next_scan) {
            scan(cat);
            if (update_wants(cat)) {
                next_announce = now;
                dirty = true;
            }
            next_scan = now + ARDA_SCAN_NS;
        }
        if (now >= next_announce) {
            announce(cat);
            next_announce = now + ARDA_PERIOD_NS;
        }
        if (dirty)
            evaluate(cat);
        fd_say(cat);
        /* The first scan and announcement are out: ready. */
        if (!ready && ardc_ready_release(held)) {
            if (ard_ready() < 0)
                fprintf(stderr, "ardnet: readiness: %s\n", ard_errdetail());
        }
        ready = true;
        struct timespec zero = {0, 0};
        int sig = sigtimedwait(sigs, NULL, &zero);
        if (sig == SIGTERM || sig == SIGINT)
            return;
        if (sig == SIGUSR1) {
            if (p->routes)
                ardn_counters_print(stderr, p);
            print_counters(cat, stderr);
        }
        if (ardn_g.counters[0] && p->routes && now >= next_counters) {
            ardn_counters_publish(p, false);
            next_counters = now + 100000000;
        }
        if (ardn_g.stats_file[0] && (now >= next_stats || sig == SIGUSR1)) {
            write_stats(cat, p);
            next_stats = now + 500000000;
        }
    }
}

void ardn_auto_close(const struct ardn_plan *p)
{
    struct arda *cat = &catalog;
    if (!cat->cfg)
        return;
    /* Stop every thread first (each notices within its idle period), then join them. */
    for (int i = 0; i < cat->nfwd; i++)
        ardn_plan_halt(&cat->fwd[i]->plan);
    for (int i = 0; i < cat->nwant; i++)
        ardn_plan_halt(&cat->want[i]->plan);
    if (cat->fd >= 0 && ardn_g.stats_file[0])
        write_stats(cat, p);
    print_counters(cat, stderr);
    for (int i = 0; i < cat->nfwd; i++)
        flow_close(cat, cat->fwd[i]);
    for (int i = 0; i < cat->nwant; i++)
        flow_close(cat, cat->want[i]);
    cat->nfwd = cat->nwant = 0;
    for (int i = 0; i < cat->npeer; i++)
        peer_free(&cat->peer[i]);
    cat->npeer = 0;
    if (cat->fd >= 0)
        close(cat->fd);
    cat->fd = -1;
    views_sweep(0);
    views_sweep(1);
    free(cat->locals);
    free(cat->snap);
    free(cat->rx);
    if (cat->seal)
        for (int i = 0; i < ARDS_PEERS; i++)
            ards_sub_wipe(&cat->seal->p[i].sub);
    ards_sub_wipe(&cat->sub);
    free(cat->seal);
    cat->seal = NULL;
    for (unsigned i = 0; i < ARDA_MAX_PARTS; i++)
        free(cat->dgram[i]);
}
