/*
 * system.c - start a whole system from a YAML description (ardstart --system FILE).
 *
 * The description is turned into what a user would write by hand: a master script that
 * starts one script per subsystem (on its host, level by level with readiness), each of
 * which starts its blocks with their wiring. Where a connection's writer and a reader are
 * mapped to different hosts, the connection is bridged: one ardnet pair per pair of hosts
 * carries all of their connections (a receiving ardnet in the first subsystem that reads
 * one, before its blocks; a sending one after the last block that writes one).
 * The master runs as the system's entry, so `ardstart --list` shows the tree and
 * `ardkill NAME` stops it. Format: docs/ardstart.md, "System description".
 *
 * A block may be a plugin (`plugin:`): alone it runs as `ardrun --block`; with `group: G` it
 * runs inside the ardrun group G (`groups:`), which is one entry started where its first
 * block is listed, with the group YAML that ardrun reads generated here and handed to it on
 * its standard input. All blocks of a group run on one host.
 */
#include "ardstart.h"

#include "ardi.h"
#include "ardr_names.h"
#include "ardyaml.h"

#include "ardnet.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

#define MAXB 256 /* blocks, subsystems, connections: plenty for one description */

struct wire {
    char port[ARDB_MAX_NAME + 1];
    char conn[ARDB_MAX_NAME + 1];
    bool out;
};

/* A restart policy as given (checked; NULL: not given, the system's default applies). */
struct rpol {
    const char *restart, *delay, *limit;
    yaml_node_t *node;
};

struct block {
    char name[ARDB_MAX_NAME + 1];
    struct rpol rp;
    const char *cmd;
    const char *plugin;  /* a block plugin instead of cmd */
    int group;           /* index in groups, -1: none */
    const char *rate;    /* in a group: one of its rates */
    const char *rate_hz; /* alone: --rate or --trigger */
    const char *trigger;
    yaml_node_t *params; /* mapping, checked */
    yaml_node_t *group_node, *rate_node, *plugin_node;
    struct wire wires[16];
    int nwires;
    int sub;
    yaml_node_t *node; /* for the line in messages */
};

struct rate {
    char name[ARDR_NAME_MAX + 1];
    long divide, prio;
    const char *cpu;
};

struct group {
    char name[ARDR_NAME_MAX + 1];
    struct rpol rp;
    const char *rate_hz, *lock, *strict;
    char host[ARDB_MAX_HOST];
    bool has_host;
    struct rate rates[ARDR_MAX_RATES];
    int nrates;
    long prio; /* prio and cpu of the one rate when no 'rates' is given */
    const char *cpu;
    bool rates_given, prio_given;
    int first; /* its first block (where it is started), -1: none */
    yaml_node_t *node;
};

struct subsys {
    char name[ARDB_MAX_NAME + 1];
    char host[ARDB_MAX_HOST]; /* resolved; "" = the starting host */
};

struct conn {
    char name[ARDB_MAX_NAME + 1];
    char type[ARD_MAX_TYPE + 1];
    size_t size;
};

struct sys {
    struct ardy_doc y;         /* the description (y.file: as given) */
    char shown[ARDB_MAX_PATH]; /* file for the scripts' comments: no line break, no control */
    char name[ARDB_MAX_NAME + 1];
    char local[ARDB_MAX_HOST]; /* how other hosts reach the starting host */
    int port;
    struct subsys subs[MAXB];
    int nsubs;
    struct block blocks[MAXB];
    int nblocks;
    struct conn conns[MAXB];
    int nconns;
    struct group groups[MAXB];
    int ngroups;
    char dir[ARDB_MAX_PATH]; /* the description's directory, absolute: for plugin paths */
    struct rpol rp;          /* top level: the default of every block, group and bridge */
};

static int bad(const struct sys *s, const yaml_node_t *n, const char *fmt, ...) ARDB_PRINTF(3, 4);
static int bad(const struct sys *s, const yaml_node_t *n, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    ardy_fail(&s->y, n, "%s", msg);
    fprintf(stderr, "ardstart: %s\n", ard_errdetail());
    return -1;
}

/* An unknown key, printed as bad() does. */
static int unknown_key(const struct sys *s, const yaml_node_t *k, const char *key,
                       const char *known)
{
    ardy_unknown_key(&s->y, k, key, known);
    fprintf(stderr, "ardstart: %s\n", ard_errdetail());
    return -1;
}

static const char *scalar(struct sys *s, yaml_node_t *n, const char *what)
{
    const char *t = ardy_text(n);
    if (!t)
        bad(s, n, "%s: expected a plain value", what);
    return t;
}

/* restart, restart_delay, restart_limit: 1 if `key` is one of them (taken into rp, checked:
 * 0 or -1), else 0 with *handled false. */
static int rpol_pair(struct sys *s, struct rpol *rp, const char *key, yaml_node_t *v, bool *handled)
{
    char why[200];
    int r = 0, pol;
    int64_t ns;
    const char **dst = !strcmp(key, "restart")         ? &rp->restart
                       : !strcmp(key, "restart_delay") ? &rp->delay
                       : !strcmp(key, "restart_limit") ? &rp->limit
                                                       : NULL;
    *handled = dst != NULL;
    if (!dst)
        return 0;
    const char *val = scalar(s, v, key);
    if (!val)
        return -1;
    if (dst == &rp->restart)
        r = as_parse_restart(val, &pol, why, sizeof why);
    else if (dst == &rp->delay)
        r = as_parse_restart_delay(val, &ns, why, sizeof why);
    else
        r = as_parse_restart_limit(val, &pol, &ns, why, sizeof why);
    if (r < 0)
        return bad(s, v, "%s '%s': %s", key, val, why);
    *dst = val;
    rp->node = v;
    return 0;
}

/* Walk a mapping: calls fn(key, value) for each pair; fn returns 0 or -1. */
typedef int (*pair_fn)(struct sys *s, const char *key, yaml_node_t *k, yaml_node_t *v, void *arg);
static int each_pair(struct sys *s, yaml_node_t *map, const char *what, pair_fn fn, void *arg)
{
    if (!map || map->type != YAML_MAPPING_NODE)
        return bad(s, map, "%s: expected a mapping (key: value lines)", what);
    ARDY_FOR_PAIRS(&s->y, map, k, v)
    {
        const char *key = scalar(s, k, what);
        if (!key || fn(s, key, k, v, arg) < 0)
            return -1;
    }
    return 0;
}

static int name_ok(struct sys *s, yaml_node_t *n, const char *what, const char *v)
{
    if (ardi_check_name(what, v, true) < 0)
        return bad(s, n, "%s", ard_errdetail());
    return 0;
}

/* A name: value into dst (ARDB_MAX_NAME + 1 bytes), checked. */
static int take_name(struct sys *s, yaml_node_t *v, const char *what, char *dst)
{
    const char *n = scalar(s, v, "name");
    if (!n || name_ok(s, v, what, n) < 0)
        return -1;
    ardb_copy(dst, ARDB_MAX_NAME + 1, n);
    return 0;
}

/* hosts: checked here, resolved on demand (resolve_host). */
static int host_ok(struct sys *s, yaml_node_t *n, const char *what, const char *v)
{
    if (ardb_check_host(what, v) < 0)
        return bad(s, n, "%s", ard_errdetail());
    /* Inserted bridges listen on IPv4 (udp://:PORT) and name their peer in udp://HOST:PORT,
     * where an IPv6 address would need brackets: refused here rather than failing later. */
    if (strchr(v, ':'))
        return bad(s, n,
                   "%s '%s': IPv6 addresses are not supported in a system description; give a "
                   "host name or an IPv4 address",
                   what, v);
    return 0;
}

/* The network address of a host label: "user@rt1" -> "rt1" (the user is for the transport). */
static const char *net_host(const char *label)
{
    const char *at = strrchr(label, '@');
    return at ? at + 1 : label;
}

static int host_pair(struct sys *s, const char *key, yaml_node_t *k, yaml_node_t *v, void *arg)
{
    (void)arg;
    const char *h = scalar(s, v, key);
    if (!h || name_ok(s, k, "host role", key) < 0 || (*h && host_ok(s, v, "host", h) < 0))
        return -1;
    return 0;
}

static const char *resolve_host(struct sys *s, yaml_node_t *hosts, const char *role,
                                const struct as_opts *o)
{
    size_t n = strlen(role);
    for (int i = 0; i < o->nhostmap; i++)
        if (!strncmp(o->hostmap[i], role, n) && o->hostmap[i][n] == '=')
            return o->hostmap[i] + n + 1;
    yaml_node_t *v = ardy_lookup(&s->y, hosts, role);
    if (v)
        return ardy_text(v) ? ardy_text(v) : "";
    return role;
}

static const struct conn *find_conn(const struct sys *s, const char *name)
{
    for (int i = 0; i < s->nconns; i++)
        if (!strcmp(s->conns[i].name, name))
            return &s->conns[i];
    return NULL;
}

static int conn_pair(struct sys *s, const char *key, yaml_node_t *k, yaml_node_t *v, void *arg)
{
    (void)arg;
    if (name_ok(s, k, "connection", key) < 0)
        return -1;
    if (s->nconns == MAXB)
        return bad(s, k, "more than %d connections", MAXB);
    if (find_conn(s, key))
        return bad(s, k, "connection '%s' given twice", key);
    const char *type = scalar(s, v, key);
    if (!type)
        return -1;
    struct conn *c = &s->conns[s->nconns];
    ardb_copy(c->name, sizeof c->name, key);
    if (ard_type_normalize(type, c->type, sizeof c->type) < 0 ||
        ard_type_parse(type, NULL, 0, NULL, &c->size) < 0)
        return bad(s, v, "connection '%s': %s", key, ard_errdetail());
    s->nconns++;
    return 0;
}

struct wire_arg {
    struct block *b;
    bool out;
};

static int wire_pair(struct sys *s, const char *key, yaml_node_t *k, yaml_node_t *v, void *arg)
{
    struct wire_arg *w = arg;
    if (name_ok(s, k, "port", key) < 0)
        return -1;
    const char *conn = scalar(s, v, key);
    if (!conn || name_ok(s, v, "connection", conn) < 0)
        return -1;
    if (w->b->nwires == 16)
        return bad(s, k, "block '%s': more than 16 ports", w->b->name);
    struct wire *x = &w->b->wires[w->b->nwires++];
    ardb_copy(x->port, sizeof x->port, key);
    ardb_copy(x->conn, sizeof x->conn, conn);
    x->out = w->out;
    return 0;
}

/* ardrun's rule for the names of groups, instances and rates. */
static int rname_ok(struct sys *s, yaml_node_t *n, const char *what, const char *v)
{
    if (!ardr_name_ok(v))
        return bad(s, n, "%s '%s': ardrun needs a name of " ARDR_NAME_RULE, what, v);
    return 0;
}

/* An integer in [lo, hi] into *out. */
static int take_long(struct sys *s, yaml_node_t *v, const char *what, long lo, long hi, long *out)
{
    const char *t = scalar(s, v, what);
    if (!t)
        return -1;
    if (ardy_long(t, lo, hi, out) < 0)
        return bad(s, v, "%s: expected an integer %ld..%ld, got '%s'", what, lo, hi, t);
    return 0;
}

/* A rate in Hz as ardrun takes it, kept as text. */
static const char *take_hz(struct sys *s, yaml_node_t *v, const char *what)
{
    const char *t = scalar(s, v, what);
    if (!t)
        return NULL;
    double hz;
    if (ardy_double(t, ARDR_HZ_MIN, ARDR_HZ_MAX, &hz) < 0) {
        bad(s, v, "%s: expected a rate in Hz, %g..%g, got '%s'", what, ARDR_HZ_MIN, ARDR_HZ_MAX, t);
        return NULL;
    }
    return t;
}

static const char *take_bool(struct sys *s, yaml_node_t *v, const char *what)
{
    const char *t = scalar(s, v, what);
    if (!t)
        return NULL;
    bool b;
    if (ardy_bool(t, &b) == 0)
        return b ? "true" : "false";
    bad(s, v, "%s: expected true or false, got '%s'", what, t);
    return NULL;
}

static int param_pair(struct sys *s, const char *key, yaml_node_t *k, yaml_node_t *v, void *arg)
{
    (void)arg;
    const char *val = scalar(s, v, key);
    if (!val || rname_ok(s, k, "parameter", key) < 0)
        return -1;
    if (strlen(val) > ARDR_STR_MAX)
        return bad(s, v, "parameter '%s': a value of at most %d bytes", key, ARDR_STR_MAX);
    return 0;
}

static const struct group *find_group(const struct sys *s, const char *name)
{
    for (int i = 0; i < s->ngroups; i++)
        if (!strcmp(s->groups[i].name, name))
            return &s->groups[i];
    return NULL;
}

static int block_pair(struct sys *s, const char *key, yaml_node_t *k, yaml_node_t *v, void *arg)
{
    struct block *b = arg;
    bool handled;
    if (rpol_pair(s, &b->rp, key, v, &handled) < 0)
        return -1;
    if (handled)
        return 0;
    if (!strcmp(key, "plugin")) {
        if (!(b->plugin = scalar(s, v, "plugin")))
            return -1;
        b->plugin_node = v;
        if (!*b->plugin || strlen(b->plugin) > ARDR_PLUGIN_MAX || strpbrk(b->plugin, "\n\r"))
            return bad(s, v, "plugin: expected the file name of a block plugin (.so)");
    } else if (!strcmp(key, "group")) {
        const char *g = scalar(s, v, "group");
        if (!g)
            return -1;
        const struct group *gr = find_group(s, g);
        if (!gr) {
            struct ardb_str known = {0};
            for (int i = 0; i < s->ngroups; i++)
                ardb_str_addf(&known, "%s%s", i ? ", " : "", s->groups[i].name);
            bad(s, v, "unknown group '%s' (groups: %s)", g, s->ngroups ? known.s : "none");
            ardb_str_free(&known);
            return -1;
        }
        b->group = (int)(gr - s->groups);
        b->group_node = v;
    } else if (!strcmp(key, "rate")) {
        if (!(b->rate = scalar(s, v, "rate")))
            return -1;
        b->rate_node = v;
    } else if (!strcmp(key, "rate_hz")) {
        if (!(b->rate_hz = take_hz(s, v, "rate_hz")))
            return -1;
        b->rate_node = v;
    } else if (!strcmp(key, "trigger")) {
        if (!(b->trigger = scalar(s, v, "trigger")) || rname_ok(s, v, "trigger port", b->trigger))
            return -1;
        b->rate_node = v;
    } else if (!strcmp(key, "params")) {
        b->params = v;
        return each_pair(s, v, "params", param_pair, NULL);
    } else if (!strcmp(key, "name")) {
        if (take_name(s, v, "block", b->name) < 0)
            return -1;
    } else if (!strcmp(key, "cmd")) {
        if (!(b->cmd = scalar(s, v, "cmd")))
            return -1;
        /* It becomes one line of the subsystem script: a second line would run there. */
        if (strpbrk(b->cmd, "\n\r") || !b->cmd[strspn(b->cmd, " \t")])
            return bad(s, v, "cmd: expected one command line, got %s",
                       strpbrk(b->cmd, "\n\r") ? "several lines" : "an empty one");
    } else if (!strcmp(key, "in") || !strcmp(key, "out")) {
        struct wire_arg w = {b, key[0] == 'o'};
        return each_pair(s, v, key, wire_pair, &w);
    } else {
        return unknown_key(s, k, key,
                           "in a block (name, cmd, in, out) or a plugin block "
                           "(plugin, group, rate, rate_hz, trigger, params), or restart, "
                           "restart_delay, restart_limit");
    }
    return 0;
}

/* What a block is: a command, a plugin of its own, or a plugin in a group. */
static int block_ok(struct sys *s, struct block *b)
{
    if (!b->name[0] || (!b->cmd && !b->plugin))
        return bad(s, b->node,
                   "a block needs 'name' and 'cmd' (a command) or 'plugin' (a block "
                   "plugin)");
    if (b->group >= 0 && b->rp.node)
        return bad(s, b->rp.node,
                   "block '%s' runs in group '%s': a group is restarted as a whole, give "
                   "its restart keys to the group",
                   b->name, s->groups[b->group].name);
    if (b->cmd && b->plugin)
        return bad(s, b->plugin_node,
                   "block '%s': give 'cmd' (a command) or 'plugin' (a block "
                   "plugin), not both",
                   b->name);
    if (b->cmd) {
        const char *key = b->group >= 0 ? "group"
                          : b->params   ? "params"
                          : b->rate     ? "rate"
                          : b->rate_hz  ? "rate_hz"
                          : b->trigger  ? "trigger"
                                        : NULL;
        if (key)
            return bad(s,
                       b->group >= 0 ? b->group_node
                       : b->params   ? b->params
                                     : b->rate_node,
                       "block '%s': '%s' is for a block plugin: give 'plugin' instead of 'cmd'%s",
                       b->name, key, b->group >= 0 ? " (only a plugin runs in a group)" : "");
        return 0;
    }
    if (rname_ok(s, b->node, "block plugin instance", b->name) < 0)
        return -1;
    if (b->group >= 0) {
        const struct group *g = &s->groups[b->group];
        if (b->rate_hz || b->trigger)
            return bad(s, b->rate_node,
                       "block '%s' runs in group '%s' at one of its rates: give "
                       "'rate' (a rate of the group), not '%s'",
                       b->name, g->name, b->rate_hz ? "rate_hz" : "trigger");
        if (b->rate) {
            bool known = false;
            for (int r = 0; r < g->nrates; r++)
                known = known || !strcmp(g->rates[r].name, b->rate);
            if (!known)
                return bad(s, b->rate_node, "block '%s': group '%s' has no rate '%s'", b->name,
                           g->name, b->rate);
        }
        return 0;
    }
    if (b->rate)
        return bad(s, b->rate_node,
                   "block '%s': 'rate' names a rate of a group, and the block "
                   "has no 'group': give 'rate_hz' to run it alone",
                   b->name);
    if (!b->rate_hz == !b->trigger)
        return bad(s, b->rate_hz ? b->rate_node : b->node,
                   "block '%s': a plugin block of its own (no 'group') needs %s", b->name,
                   b->rate_hz ? "'rate_hz' or 'trigger', not both"
                              : "'rate_hz: HZ' or 'trigger: PORT' (or a 'group')");
    return 0;
}

struct sub_arg {
    struct subsys *sub;
    yaml_node_t *hosts;
    const struct as_opts *o;
};

static int sub_pair(struct sys *s, const char *key, yaml_node_t *k, yaml_node_t *v, void *arg)
{
    struct sub_arg *a = arg;
    if (!strcmp(key, "name")) {
        if (take_name(s, v, "subsystem", a->sub->name) < 0)
            return -1;
    } else if (!strcmp(key, "host")) {
        const char *h = scalar(s, v, "host");
        if (!h)
            return -1;
        const char *r = resolve_host(s, a->hosts, h, a->o);
        if (*r && host_ok(s, v, "host", r) < 0)
            return -1;
        ardb_copy(a->sub->host, sizeof a->sub->host, r);
    } else if (!strcmp(key, "blocks")) {
        if (v->type != YAML_SEQUENCE_NODE)
            return bad(s, v, "blocks: expected a list (- name: ...)");
        ARDY_FOR_ITEMS(&s->y, v, item)
        {
            if (s->nblocks == MAXB)
                return bad(s, v, "more than %d blocks", MAXB);
            struct block *b = &s->blocks[s->nblocks];
            memset(b, 0, sizeof *b);
            b->sub = (int)(a->sub - s->subs);
            yaml_node_t *bn = item;
            b->node = bn;
            b->group = -1;
            if (each_pair(s, bn, "block", block_pair, b) < 0 || block_ok(s, b) < 0)
                return -1;
            for (int j = 0; j < s->nblocks; j++)
                if (s->blocks[j].sub == b->sub && !strcmp(s->blocks[j].name, b->name))
                    return bad(s, bn, "block '%s' named twice in a subsystem", b->name);
            s->nblocks++;
        }
    } else {
        return unknown_key(s, k, key, "in a subsystem (name, host, blocks)");
    }
    return 0;
}

static int rate_pair(struct sys *s, const char *key, yaml_node_t *k, yaml_node_t *v, void *arg)
{
    struct rate *r = arg;
    if (!strcmp(key, "name")) {
        const char *n = scalar(s, v, "name");
        if (!n || rname_ok(s, v, "rate", n) < 0)
            return -1;
        ardb_copy(r->name, sizeof r->name, n);
    } else if (!strcmp(key, "divide")) {
        return take_long(s, v, "divide", 1, ARDR_DIVIDE_MAX, &r->divide);
    } else if (!strcmp(key, "prio")) {
        return take_long(s, v, "prio", 0, ARDR_PRIO_MAX, &r->prio);
    } else if (!strcmp(key, "cpu")) {
        if (!(r->cpu = scalar(s, v, "cpu")))
            return -1;
        if (strlen(r->cpu) > ARDR_CPUS_MAX)
            return bad(s, v, "cpu: a CPU list of at most %d characters", ARDR_CPUS_MAX);
    } else {
        return unknown_key(s, k, key, "in a rate (name, divide, prio, cpu)");
    }
    return 0;
}

struct group_arg {
    struct group *g;
    yaml_node_t *hosts;
    const struct as_opts *o;
};

static int group_pair(struct sys *s, const char *key, yaml_node_t *k, yaml_node_t *v, void *arg)
{
    struct group_arg *a = arg;
    struct group *g = a->g;
    bool handled;
    if (rpol_pair(s, &g->rp, key, v, &handled) < 0)
        return -1;
    if (handled)
        return 0;
    if (!strcmp(key, "name")) {
        const char *n = scalar(s, v, "name");
        if (!n || name_ok(s, v, "group", n) < 0 || rname_ok(s, v, "group", n) < 0)
            return -1;
        ardb_copy(g->name, sizeof g->name, n);
    } else if (!strcmp(key, "host")) {
        const char *h = scalar(s, v, "host");
        if (!h)
            return -1;
        const char *r = resolve_host(s, a->hosts, h, a->o);
        if (*r && host_ok(s, v, "host", r) < 0)
            return -1;
        ardb_copy(g->host, sizeof g->host, r);
        g->has_host = true;
    } else if (!strcmp(key, "rate_hz")) {
        return (g->rate_hz = take_hz(s, v, "rate_hz")) ? 0 : -1;
    } else if (!strcmp(key, "lock")) {
        return (g->lock = take_bool(s, v, "lock")) ? 0 : -1;
    } else if (!strcmp(key, "strict")) {
        return (g->strict = take_bool(s, v, "strict")) ? 0 : -1;
    } else if (!strcmp(key, "prio")) {
        g->prio_given = true;
        return take_long(s, v, "prio", 0, ARDR_PRIO_MAX, &g->prio);
    } else if (!strcmp(key, "cpu")) {
        g->prio_given = true;
        if (!(g->cpu = scalar(s, v, "cpu")))
            return -1;
        if (strlen(g->cpu) > ARDR_CPUS_MAX)
            return bad(s, v, "cpu: a CPU list of at most %d characters", ARDR_CPUS_MAX);
    } else if (!strcmp(key, "rates")) {
        if (v->type != YAML_SEQUENCE_NODE ||
            v->data.sequence.items.top == v->data.sequence.items.start)
            return bad(s, v, "rates: expected a list of rates (- name: ..., divide: N)");
        g->rates_given = true;
        g->nrates = 0;
        ARDY_FOR_ITEMS(&s->y, v, item)
        {
            yaml_node_t *rn = item;
            if (g->nrates == ARDR_MAX_RATES)
                return bad(s, rn, "group '%s': more than %d rates", g->name, ARDR_MAX_RATES);
            struct rate *r = &g->rates[g->nrates];
            *r = (struct rate){.divide = 1};
            if (each_pair(s, rn, "rate", rate_pair, r) < 0)
                return -1;
            if (!r->name[0])
                return bad(s, rn, "a rate needs a 'name'");
            for (int j = 0; j < g->nrates; j++)
                if (!strcmp(g->rates[j].name, r->name))
                    return bad(s, rn, "rate '%s' named twice", r->name);
            g->nrates++;
        }
    } else {
        return unknown_key(s, k, key,
                           "in a group (name, host, rate_hz, prio, cpu, rates, lock, "
                           "strict), or restart, restart_delay, restart_limit");
    }
    return 0;
}

static int parse_groups(struct sys *s, yaml_node_t *list, yaml_node_t *hosts,
                        const struct as_opts *o)
{
    if (list->type != YAML_SEQUENCE_NODE)
        return bad(s, list, "'groups' must be a list (- name: ...)");
    ARDY_FOR_ITEMS(&s->y, list, item)
    {
        if (s->ngroups == MAXB)
            return bad(s, list, "more than %d groups", MAXB);
        struct group *g = &s->groups[s->ngroups];
        memset(g, 0, sizeof *g);
        g->first = -1;
        g->node = item;
        struct group_arg a = {g, hosts, o};
        if (each_pair(s, g->node, "group", group_pair, &a) < 0)
            return -1;
        if (!g->name[0] || !g->rate_hz)
            return bad(s, g->node, "a group needs 'name' and 'rate_hz' (its base rate)");
        if (g->rates_given && g->prio_given)
            return bad(s, g->node, "group '%s': with 'rates', give 'prio' and 'cpu' per rate",
                       g->name);
        if (!g->rates_given) { /* one rate, as ardrun's default */
            g->nrates = 1;
            g->rates[0] = (struct rate){"base", 1, g->prio, g->cpu};
        }
        if (find_group(s, g->name))
            return bad(s, g->node, "group '%s' named twice", g->name);
        s->ngroups++;
    }
    return 0;
}

struct top_arg {
    yaml_node_t *hosts, *subs, *conns, *groups;
};

static int top_pair(struct sys *s, const char *key, yaml_node_t *k, yaml_node_t *v, void *arg)
{
    struct top_arg *t = arg;
    bool handled;
    if (rpol_pair(s, &s->rp, key, v, &handled) < 0)
        return -1;
    if (handled)
        return 0;
    if (!strcmp(key, "name")) {
        if (take_name(s, v, "system", s->name) < 0)
            return -1;
    } else if (!strcmp(key, "hosts")) {
        t->hosts = v;
        return each_pair(s, v, "hosts", host_pair, NULL);
    } else if (!strcmp(key, "local_host")) {
        const char *h = scalar(s, v, "local_host");
        if (!h || host_ok(s, v, "local_host", h) < 0)
            return -1;
        ardb_copy(s->local, sizeof s->local, h);
    } else if (!strcmp(key, "bridge_port")) {
        const char *p = scalar(s, v, "bridge_port");
        char *end;
        long port = p ? strtol(p, &end, 10) : 0;
        if (!p || *end || port < 1 || port > 65000)
            return bad(s, v, "bridge_port: expected a UDP port number");
        s->port = (int)port;
    } else if (!strcmp(key, "connections")) {
        t->conns = v;
    } else if (!strcmp(key, "subsystems")) {
        t->subs = v;
    } else if (!strcmp(key, "groups")) {
        t->groups = v;
    } else {
        return unknown_key(s, k, key,
                           "(name, hosts, local_host, bridge_port, connections, "
                           "groups, subsystems), or restart, restart_delay, restart_limit");
    }
    return 0;
}

static const char *host_of(const struct sys *s, const struct block *b)
{
    return s->subs[b->sub].host;
}

/* Each group: its blocks, all on one host (and on its 'host' if given); its entry, started
 * in the subsystem of its first block, takes a name no other entry there has. */
static int check_groups(struct sys *s)
{
    for (int b = 0; b < s->nblocks; b++) {
        const struct block *bl = &s->blocks[b];
        if (bl->group < 0)
            continue;
        struct group *g = &s->groups[bl->group];
        const char *h = host_of(s, bl);
        if (g->first < 0) {
            g->first = b;
            if (g->has_host && strcmp(g->host, h) != 0)
                return bad(s, bl->group_node,
                           "group '%s' is on host '%s' (its 'host'), but block '%s' is in "
                           "subsystem '%s' on host '%s': a group is one process on one host",
                           g->name, g->host[0] ? g->host : s->local, bl->name,
                           s->subs[bl->sub].name, h[0] ? h : s->local);
            continue;
        }
        const struct block *f = &s->blocks[g->first];
        if (strcmp(host_of(s, f), h) != 0)
            return bad(s, bl->group_node,
                       "group '%s' on two hosts: block '%s' (subsystem '%s') is on host '%s', "
                       "block '%s' (subsystem '%s') on host '%s': a group is one process on one "
                       "host",
                       g->name, f->name, s->subs[f->sub].name,
                       host_of(s, f)[0] ? host_of(s, f) : s->local, bl->name, s->subs[bl->sub].name,
                       h[0] ? h : s->local);
        for (int j = 0; j < b; j++)
            if (s->blocks[j].group == bl->group && !strcmp(s->blocks[j].name, bl->name))
                return bad(s, bl->node, "block '%s' named twice in group '%s'", bl->name, g->name);
    }
    for (int i = 0; i < s->ngroups; i++) {
        const struct group *g = &s->groups[i];
        if (g->first < 0)
            return bad(s, g->node, "group '%s' has no blocks (a block joins it with 'group: %s')",
                       g->name, g->name);
        int sub = s->blocks[g->first].sub;
        for (int b = 0; b < s->nblocks; b++)
            if (s->blocks[b].sub == sub && s->blocks[b].group < 0 &&
                !strcmp(s->blocks[b].name, g->name))
                return bad(s, s->blocks[b].node,
                           "block '%s' has the name of group '%s', which runs in subsystem '%s' "
                           "too",
                           g->name, g->name, s->subs[sub].name);
    }
    return 0;
}

/* A YAML double-quoted scalar. */
static void yaml_quote(struct ardb_str *out, const char *v)
{
    ardb_str_add(out, "\"");
    for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
        if (*p == '"' || *p == '\\')
            ardb_str_addf(out, "\\%c", *p);
        else if (*p < 0x20 || *p == 0x7f)
            ardb_str_addf(out, "\\x%02x", *p);
        else
            ardb_str_addf(out, "%c", *p);
    }
    ardb_str_add(out, "\"");
}

/* A plugin's file as ardrun gets it: a bare name stays (ardrun looks in $ARDRUN_PLUGIN_PATH),
 * a relative path is taken from the description's directory. */
static void plugin_path(const struct sys *s, const char *plugin, struct ardb_str *out)
{
    if (strchr(plugin, '/') && plugin[0] != '/') {
        ardb_str_add(out, s->dir);
        ardb_str_add(out, "/");
    }
    ardb_str_add(out, plugin);
}

/* The group file that ardrun reads. */
static void group_yaml(const struct sys *s, int gi, struct ardb_str *out)
{
    const struct group *g = &s->groups[gi];
    ardb_str_addf(out, "# group %s of system %s (%s)\nname: ", g->name, s->name, s->shown);
    yaml_quote(out, g->name);
    ardb_str_add(out, "\nrate_hz: ");
    yaml_quote(out, g->rate_hz);
    ardb_str_add(out, "\n");
    if (g->lock)
        ardb_str_addf(out, "lock: %s\n", g->lock);
    if (g->strict)
        ardb_str_addf(out, "strict: %s\n", g->strict);
    ardb_str_add(out, "rates:\n");
    for (int r = 0; r < g->nrates; r++) {
        ardb_str_add(out, "  - name: ");
        yaml_quote(out, g->rates[r].name);
        ardb_str_addf(out, "\n    divide: %ld\n    prio: %ld\n    cpu: ", g->rates[r].divide,
                      g->rates[r].prio);
        yaml_quote(out, g->rates[r].cpu ? g->rates[r].cpu : "");
        ardb_str_add(out, "\n");
    }
    ardb_str_add(out, "blocks:\n");
    for (int b = 0; b < s->nblocks; b++) {
        const struct block *bl = &s->blocks[b];
        if (bl->group != gi)
            continue;
        struct ardb_str path = {0};
        plugin_path(s, bl->plugin, &path);
        ardb_str_add(out, "  - name: ");
        yaml_quote(out, bl->name);
        ardb_str_add(out, "\n    plugin: ");
        yaml_quote(out, path.s);
        ardb_str_free(&path);
        ardb_str_add(out, "\n    rate: ");
        yaml_quote(out, bl->rate ? bl->rate : g->rates[0].name);
        ardb_str_add(out, "\n");
        if (bl->params &&
            bl->params->data.mapping.pairs.top > bl->params->data.mapping.pairs.start) {
            ardb_str_add(out, "    params:\n");
            for (yaml_node_pair_t *p = bl->params->data.mapping.pairs.start;
                 p < bl->params->data.mapping.pairs.top; p++) {
                yaml_node_t *k = ardy_node(&s->y, p->key);
                yaml_node_t *v = ardy_node(&s->y, p->value);
                ardb_str_add(out, "      ");
                yaml_quote(out, (const char *)k->data.scalar.value);
                ardb_str_add(out, ": ");
                yaml_quote(out, (const char *)v->data.scalar.value);
                ardb_str_add(out, "\n");
            }
        }
        if (bl->nwires) {
            ardb_str_add(out, "    ard:\n");
            for (int w = 0; w < bl->nwires; w++) {
                ardb_str_add(out, "      ");
                yaml_quote(out, bl->wires[w].port);
                ardb_str_add(out, ": ");
                yaml_quote(out, bl->wires[w].conn);
                ardb_str_add(out, "\n");
            }
        }
    }
}

/* The command of a block: its cmd, `ardrun --block` for a plugin of its own, or the group's
 * ardrun with the group file on its standard input. */
static void block_cmd(const struct sys *s, const struct block *bl, struct ardb_str *cmd)
{
    if (bl->cmd) {
        ardb_str_add(cmd, bl->cmd);
        for (int w = 0; w < bl->nwires; w++)
            ardb_str_addf(cmd, " --ard %s=%s", bl->wires[w].port, bl->wires[w].conn);
        return;
    }
    if (bl->group < 0) {
        struct ardb_str path = {0};
        plugin_path(s, bl->plugin, &path);
        ardb_str_add(cmd, "ardrun --block");
        ardb_str_quote(cmd, path.s);
        ardb_str_free(&path);
        ardb_str_addf(cmd, " --name %s", bl->name);
        for (yaml_node_pair_t *p = bl->params ? bl->params->data.mapping.pairs.start : NULL;
             p && p < bl->params->data.mapping.pairs.top; p++) {
            yaml_node_t *k = ardy_node(&s->y, p->key);
            yaml_node_t *v = ardy_node(&s->y, p->value);
            struct ardb_str kv = {0};
            ardb_str_addf(&kv, "%s=%s", (const char *)k->data.scalar.value,
                          (const char *)v->data.scalar.value);
            ardb_str_add(cmd, " --param");
            ardb_str_quote(cmd, kv.s);
            ardb_str_free(&kv);
        }
        if (bl->rate_hz)
            ardb_str_addf(cmd, " --rate %s", bl->rate_hz);
        else
            ardb_str_addf(cmd, " --trigger %s", bl->trigger);
        for (int w = 0; w < bl->nwires; w++)
            ardb_str_addf(cmd, " --ard %s=%s", bl->wires[w].port, bl->wires[w].conn);
        return;
    }
    struct ardb_str script = {0};
    /* ardrun reads its file twice (a depth check first): a pipe would not do, so the file
     * is written, opened as standard input, and unlinked before ardrun runs. */
    const char *gn = s->groups[bl->group].name;
    ardb_str_addf(&script,
                  "# group %s of system %s\nset -e\n"
                  "f=$(mktemp \"${TMPDIR:-/tmp}/ardrun-%s.XXXXXX\")\n"
                  "trap 'rm -f \"$f\"' EXIT\n"
                  "cat >\"$f\" <<'ARDRUN_GROUP'\n",
                  gn, s->name, gn);
    group_yaml(s, bl->group, &script);
    ardb_str_add(&script, "ARDRUN_GROUP\nexec <\"$f\"\nrm -f \"$f\"\nexec ardrun /dev/stdin\n");
    ardb_str_add(cmd, "bash -c");
    ardb_str_quote(cmd, script.s);
    ardb_str_quote(cmd, s->groups[bl->group].name);
    ardb_str_free(&script);
}

/* Bridges to insert: per connection, one for each reader host other than the writer's. */
struct bridge {
    const struct conn *c;
    int pair; /* its host pair */
};

/* One ardnet pair per (writer's host, reader's host) carries every bridge between them on
 * one UDP port (docs/ardnet.md, "Many connections per bridge"). */
struct hostpair {
    char whost[ARDB_MAX_HOST], rhost[ARDB_MAX_HOST];
    int port;
    int rsub;        /* the receiving ardnet: first subsystem there that reads one of them */
    int last_writer; /* the sending ardnet: right after the last block that writes one */
};

/* rp over the system's default d: the ardstart options of an entry's restart policy. */
static void start_line(struct ardb_str *out, const char *name, const char *cmd, int wait_s,
                       const struct rpol *rp, const struct rpol *d)
{
    ardb_str_addf(out, "ardstart -q --wait=%d", wait_s);
    const char *v[3][2] = {{"restart", rp && rp->restart ? rp->restart : d->restart},
                           {"restart-delay", rp && rp->delay ? rp->delay : d->delay},
                           {"restart-limit", rp && rp->limit ? rp->limit : d->limit}};
    for (int i = 0; i < 3; i++)
        if (v[i][1]) {
            struct ardb_str opt = {0};
            ardb_str_addf(&opt, "--%s=%s", v[i][0], v[i][1]);
            ardb_str_quote(out, opt.s);
            ardb_str_free(&opt);
        }
    ardb_str_addf(out, " -n %s -- %s\n", name, cmd);
}

/* prefix + the network name of a host, as a valid entry name: "to_10_0_0_2". */
static void bridge_name(char *buf, size_t len, const char *prefix, const char *host)
{
    snprintf(buf, len, "%s%.40s", prefix, net_host(host));
    for (char *p = buf + strlen(prefix); *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '_' && *p != '-')
            *p = '_'; /* a host may be an address */
}

/* The ardnet of one side of host pair k: a route per bridge, joined by --next. */
static void pair_cmd(const struct sys *s, const struct bridge *br, int nbr, int k,
                     const struct hostpair *hp, bool receiving, struct ardb_str *cmd)
{
    ardb_str_quote(cmd, "ardnet");
    bool first = true;
    for (int j = 0; j < nbr; j++) {
        if (br[j].pair != k)
            continue;
        if (!first)
            ardb_str_add(cmd, " --next");
        first = false;
        if (receiving) /* --from: only the sending bridge on the writer's host is accepted */
            ardb_str_addf(cmd, " --in udp://:%d --from %s --out %s", hp->port,
                          net_host(hp->whost[0] ? hp->whost : s->local), br[j].c->name);
        else
            ardb_str_addf(cmd, " --in %s --out udp://%s:%d", br[j].c->name,
                          net_host(hp->rhost[0] ? hp->rhost : s->local), hp->port);
        ardb_str_addf(cmd, " --size %zu", br[j].c->size);
        ardb_str_quote(cmd, "--type");
        ardb_str_quote(cmd, br[j].c->type);
    }
}

/* The script of subsystem i. */
static void sub_script(const struct sys *s, int i, const struct bridge *br, int nbr,
                       const struct hostpair *hp, int nhp, int wait_s, struct ardb_str *out)
{
    /* The first line is what a listing shows of the command. */
    ardb_str_addf(out, "# subsystem %s of system %s (%s)\nset -e\n", s->subs[i].name, s->name,
                  s->shown);
    char name[ARDB_MAX_NAME + 1];
    for (int k = 0; k < nhp; k++) {
        if (hp[k].rsub != i)
            continue;
        struct ardb_str cmd = {0};
        pair_cmd(s, br, nbr, k, &hp[k], true, &cmd);
        bridge_name(name, sizeof name, "from_", hp[k].whost[0] ? hp[k].whost : s->local);
        ardb_str_addf(&cmd, " --counters ardnet.%s", name);
        start_line(out, name, cmd.s, wait_s, NULL, &s->rp);
        ardb_str_free(&cmd);
    }
    for (int b = 0; b < s->nblocks; b++) {
        const struct block *bl = &s->blocks[b];
        if (bl->sub != i)
            continue;
        /* A group starts at its first block, with all of its blocks. */
        if (bl->group < 0 || s->groups[bl->group].first == b) {
            struct ardb_str cmd = {0};
            block_cmd(s, bl, &cmd);
            start_line(out, bl->group < 0 ? bl->name : s->groups[bl->group].name, cmd.s, wait_s,
                       bl->group < 0 ? &bl->rp : &s->groups[bl->group].rp, &s->rp);
            ardb_str_free(&cmd);
        }
        /* Sending bridges right after the last block that writes one of their connections. */
        for (int k = 0; k < nhp; k++) {
            if (hp[k].last_writer != b)
                continue;
            struct ardb_str cmd = {0};
            pair_cmd(s, br, nbr, k, &hp[k], false, &cmd);
            bridge_name(name, sizeof name, "to_", hp[k].rhost[0] ? hp[k].rhost : s->local);
            ardb_str_addf(&cmd, " --counters ardnet.%s", name);
            start_line(out, name, cmd.s, wait_s, NULL, &s->rp);
            ardb_str_free(&cmd);
        }
    }
    ardb_str_add(out, "ardstart --ready\nexec sleep infinity\n");
}

static int build(struct sys *s, const struct as_opts *o, struct ardb_str *master)
{
    yaml_node_t *root = ardy_root(&s->y);
    if (!root)
        return bad(s, NULL, "empty file");
    struct top_arg t = {0};
    s->port = 7400;
    if (each_pair(s, root, "system description", top_pair, &t) < 0)
        return -1;
    if (!s->name[0])
        return bad(s, root, "no 'name' of the system");
    if (t.conns && each_pair(s, t.conns, "connections", conn_pair, NULL) < 0)
        return -1;
    if (t.groups && parse_groups(s, t.groups, t.hosts, o) < 0)
        return -1;
    if (!t.subs || t.subs->type != YAML_SEQUENCE_NODE)
        return bad(s, t.subs ? t.subs : root, "'subsystems' must be a list (- name: ...)");
    ARDY_FOR_ITEMS(&s->y, t.subs, item)
    {
        if (s->nsubs == MAXB)
            return bad(s, t.subs, "more than %d subsystems", MAXB);
        struct subsys *sub = &s->subs[s->nsubs++];
        memset(sub, 0, sizeof *sub);
        struct sub_arg a = {sub, t.hosts, o};
        yaml_node_t *sn = item;
        if (each_pair(s, sn, "subsystem", sub_pair, &a) < 0)
            return -1;
        if (!sub->name[0])
            return bad(s, sn, "a subsystem needs a 'name'");
        for (int j = 0; j < s->nsubs - 1; j++)
            if (!strcmp(s->subs[j].name, sub->name))
                return bad(s, sn, "subsystem '%s' named twice", sub->name);
    }
    if (!s->local[0]) {
        /* $ARD_HOST reaches the generated scripts: checked like a host in the file. */
        ardb_host_label(s->local, sizeof s->local);
        if (ardb_check_host("this host ($ARD_HOST or the hostname; set local_host)", s->local) <
                0 ||
            strchr(s->local, ':'))
            return bad(s, NULL, "%s",
                       strchr(s->local, ':') ? "this host's name ($ARD_HOST) is an IPv6 address; "
                                               "set local_host to a host name"
                                             : ard_errdetail());
    }

    if (check_groups(s) < 0)
        return -1;

    /* Writers and readers per connection; bridges where hosts differ. */
    static struct bridge br[MAXB];
    static struct hostpair hp[MAXB];
    int nbr = 0, nhp = 0;
    for (int b = 0; b < s->nblocks; b++)
        for (int w = 0; w < s->blocks[b].nwires; w++) {
            const struct wire *wi = &s->blocks[b].wires[w];
            if (!wi->out)
                continue;
            for (int b2 = 0; b2 < s->nblocks; b2++)
                for (int w2 = 0; w2 < s->blocks[b2].nwires; w2++) {
                    const struct wire *x = &s->blocks[b2].wires[w2];
                    if (strcmp(x->conn, wi->conn) != 0 || (b2 == b && w2 == w))
                        continue;
                    if (x->out)
                        return bad(s, s->blocks[b2].node,
                                   "connection '%s' has two writers: %s and %s", wi->conn,
                                   s->blocks[b].name, s->blocks[b2].name);
                    const char *wh = host_of(s, &s->blocks[b]), *rh = host_of(s, &s->blocks[b2]);
                    if (!strcmp(wh, rh))
                        continue;
                    int k = 0; /* the host pair */
                    while (k < nhp && (strcmp(hp[k].whost, wh) || strcmp(hp[k].rhost, rh)))
                        k++;
                    bool have = false;
                    for (int j = 0; j < nbr; j++)
                        have = have || (br[j].pair == k && !strcmp(br[j].c->name, wi->conn));
                    if (have)
                        continue;
                    const struct conn *c = find_conn(s, wi->conn);
                    if (!c)
                        return bad(s, s->blocks[b2].node,
                                   "connection '%s' runs from host '%s' to '%s': a bridge is "
                                   "needed, give its type under 'connections'",
                                   wi->conn, wh[0] ? wh : s->local, rh[0] ? rh : s->local);
                    if (nbr == MAXB)
                        return bad(s, NULL, "more than %d bridges", MAXB);
                    if (k == nhp) {
                        hp[k] = (struct hostpair){
                            .port = s->port + nhp, .rsub = s->blocks[b2].sub, .last_writer = b};
                        ardb_copy(hp[k].whost, sizeof hp[k].whost, wh);
                        ardb_copy(hp[k].rhost, sizeof hp[k].rhost, rh);
                        nhp++;
                    }
                    if (s->blocks[b2].sub < hp[k].rsub)
                        hp[k].rsub = s->blocks[b2].sub;
                    if (s->blocks[b].sub > s->blocks[hp[k].last_writer].sub ||
                        (s->blocks[b].sub == s->blocks[hp[k].last_writer].sub &&
                         b > hp[k].last_writer))
                        hp[k].last_writer = b;
                    br[nbr++] = (struct bridge){c, k};
                }
        }

    int wait_s = o->wait_ms > 0 ? (o->wait_ms + 999) / 1000 : 20;
    if (wait_s > 86400 / 4)
        wait_s = 86400 / 4; /* a subsystem waits 4 block times: keep within --wait's limit */
    ardb_str_addf(master, "# system %s (%s)\nset -e\n", s->name, s->shown);
    for (int i = 0; i < s->nsubs; i++) {
        struct ardb_str script = {0};
        sub_script(s, i, br, nbr, hp, nhp, wait_s, &script);
        ardb_str_add(master, "ardstart -q");
        if (s->subs[i].host[0]) {
            ardb_str_quote(master, "-H");
            ardb_str_quote(master, s->subs[i].host);
        }
        ardb_str_addf(master, " --wait=%d -n %s -- bash -c", wait_s * 4, s->subs[i].name);
        ardb_str_quote(master, script.s);
        ardb_str_quote(master, s->subs[i].name);
        ardb_str_add(master, "\n");
        ardb_str_free(&script);
    }
    ardb_str_add(master, "ardstart --ready\nexec sleep infinity\n");
    return 0;
}

int as_start_system(struct ardb_books *b, const struct as_opts *o, const char *file)
{
    struct sys *s = calloc(1, sizeof *s);
    if (!s)
        return AS_SYS;
    /* The name goes into comments of the generated scripts: a line break there would start
     * a command. */
    ardb_copy(s->shown, sizeof s->shown, file);
    for (char *p = s->shown; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
    FILE *f = fopen(file, "re");
    if (!f) {
        fprintf(stderr, "ardstart: cannot open '%s': %s\n", file, strerror(errno));
        free(s);
        return AS_USAGE;
    }
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fprintf(stderr, "ardstart: cannot read '%s': %s\n", file, strerror(EISDIR));
        fclose(f);
        free(s);
        return AS_USAGE;
    }
    /* A description needs 6 levels. */
    int rc = ardy_load(&s->y, file, &f, 16, false);
    fclose(f);
    if (rc < 0) {
        fprintf(stderr, "ardstart: %s\n", ard_errdetail());
        free(s);
        return rc == ARD_ENOMEM ? AS_SYS : AS_USAGE;
    }
    rc = AS_USAGE;
    /* Plugin paths are relative to the description's directory. */
    char *full = realpath(file, NULL);
    if (full) {
        *strrchr(full, '/') = '\0';
        ardb_copy(s->dir, sizeof s->dir, full[0] ? full : "/");
        free(full);
    } else {
        ardb_copy(s->dir, sizeof s->dir, ".");
    }
    struct ardb_str master = {0};
    if (build(s, o, &master) == 0) {
        if (o->dry_run) {
            printf("%s", master.s);
            rc = AS_OK;
        } else {
            const char *name = o->name ? o->name : s->name;
            char path[ARDB_MAX_PATH];
            if (as_entry_path(o, name, path, sizeof path) < 0)
                goto out;
            char *argv[] = {"bash", "-c", master.s, (char *)name, NULL};
            struct as_opts mo = *o;
            mo.argv = argv;
            mo.argc = 4;
            /* The master is ready when every subsystem is: each may take 4 block waits. */
            int64_t ms = (int64_t)(o->wait_ms > 0 ? o->wait_ms : 20000) * (s->nsubs + 1) * 4;
            mo.wait_ms = ms > INT_MAX ? INT_MAX : (int)ms;
            rc = as_start_local(b, &mo, path);
        }
    }
out:
    ardb_str_free(&master);
    ardy_free(&s->y);
    free(s);
    return rc;
}
