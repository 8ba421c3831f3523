/*
 * system_load.c - ardstart --system: read and check a system description (the YAML file,
 * already loaded with ardyaml's depth guard) into struct sys. Every error names the file, the
 * line and what is wrong (the failure detail, through sys_bad; as_start_system prints it);
 * nothing is started before the whole description is checked.
 */
#include "system.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

int sys_bad(const struct sys *s, const yaml_node_t *n, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    ardy_fail(&s->y, n, "%s", msg);
    return -1;
}

/* An unknown key, failed as sys_bad() does. */
static int unknown_key(const struct sys *s, const yaml_node_t *k, const char *key,
                       const char *known)
{
    ardy_unknown_key(&s->y, k, key, known);
    return -1;
}

static const char *scalar(struct sys *s, yaml_node_t *n, const char *what)
{
    const char *t = ardy_text(n);
    if (!t)
        sys_bad(s, n, "%s: expected a plain value", what);
    return t;
}

/* A key that is an option's (restart, restart_delay, restart_limit: the rows of as_optset with
 * that .yaml key): its value checked as the option's, into rp; 0 or -1. Else 0 with *handled
 * false. */
static int rpol_pair(struct sys *s, struct rpol *rp, const char *key, yaml_node_t *v, bool *handled)
{
    const struct ardc_opt *row = ardc_opt_find_yaml(&as_optset, 0, key);
    *handled = row != NULL;
    if (!row)
        return 0;
    const char *val = scalar(s, v, key);
    if (!val)
        return -1;
    if (as_yaml_option(row, key, val) < 0)
        return sys_bad(s, v, "%s", ard_errdetail());
    rp->v[row->set] = val;
    rp->node = v;
    return 0;
}

/* Walk a mapping: calls fn(key, value) for each pair; fn returns 0 or -1. */
typedef int (*pair_fn)(struct sys *s, const char *key, yaml_node_t *k, yaml_node_t *v, void *arg);
static int each_pair(struct sys *s, yaml_node_t *map, const char *what, pair_fn fn, void *arg)
{
    if (!map || map->type != YAML_MAPPING_NODE)
        return sys_bad(s, map, "%s: expected a mapping (key: value lines)", what);
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
        return sys_bad(s, n, "%s", ard_errdetail());
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
        return sys_bad(s, n, "%s", ard_errdetail());
    /* Inserted bridges listen on IPv4 (udp://:PORT) and name their peer in udp://HOST:PORT,
     * where an IPv6 address would need brackets: refused here rather than failing later. */
    if (strchr(v, ':'))
        return sys_bad(s, n,
                       "%s '%s': IPv6 addresses are not supported in a system description; give a "
                       "host name or an IPv4 address",
                       what, v);
    return 0;
}

const char *sys_net_host(const char *label)
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

/* host: ROLE or HOST, resolved (--set-host, then 'hosts') and checked into dst
 * (ARDB_MAX_HOST bytes). */
static int take_host(struct sys *s, yaml_node_t *v, yaml_node_t *hosts, const struct as_opts *o,
                     char *dst)
{
    const char *h = scalar(s, v, "host");
    if (!h)
        return -1;
    const char *r = resolve_host(s, hosts, h, o);
    if (*r && host_ok(s, v, "host", r) < 0)
        return -1;
    ardb_copy(dst, ARDB_MAX_HOST, r);
    return 0;
}

const struct conn *sys_find_conn(const struct sys *s, const char *name)
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
        return sys_bad(s, k, "more than %d connections", MAXB);
    if (sys_find_conn(s, key))
        return sys_bad(s, k, "connection '%s' given twice", key);
    const char *type = scalar(s, v, key);
    if (!type)
        return -1;
    struct conn *c = &s->conns[s->nconns];
    ardb_copy(c->name, sizeof c->name, key);
    if (ard_type_normalize(type, c->type, sizeof c->type) < 0 ||
        ard_type_parse(type, NULL, 0, NULL, &c->size) < 0)
        return sys_bad(s, v, "connection '%s': %s", key, ard_errdetail());
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
        return sys_bad(s, k, "block '%s': more than 16 ports", w->b->name);
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
        return sys_bad(s, n, "%s '%s': ardrun needs a name of " ARDR_NAME_RULE, what, v);
    return 0;
}

/* An integer in [lo, hi] into *out. */
static int take_long(struct sys *s, yaml_node_t *v, const char *what, long lo, long hi, long *out)
{
    const char *t = scalar(s, v, what);
    if (!t)
        return -1;
    if (ardy_long(t, lo, hi, out) < 0)
        return sys_bad(s, v, "%s: expected an integer %ld..%ld, got '%s'", what, lo, hi, t);
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
        sys_bad(s, v, "%s: expected a rate in Hz, %g..%g, got '%s'", what, ARDR_HZ_MIN, ARDR_HZ_MAX,
                t);
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
    sys_bad(s, v, "%s: expected true or false, got '%s'", what, t);
    return NULL;
}

static int param_pair(struct sys *s, const char *key, yaml_node_t *k, yaml_node_t *v, void *arg)
{
    (void)arg;
    const char *val = scalar(s, v, key);
    if (!val || rname_ok(s, k, "parameter", key) < 0)
        return -1;
    if (strlen(val) > ARDR_STR_MAX)
        return sys_bad(s, v, "parameter '%s': a value of at most %d bytes", key, ARDR_STR_MAX);
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
            return sys_bad(s, v, "plugin: expected the file name of a block plugin (.so)");
    } else if (!strcmp(key, "group")) {
        const char *g = scalar(s, v, "group");
        if (!g)
            return -1;
        const struct group *gr = find_group(s, g);
        if (!gr) {
            struct ardb_str known = {0};
            for (int i = 0; i < s->ngroups; i++)
                ardb_str_addf(&known, "%s%s", i ? ", " : "", s->groups[i].name);
            sys_bad(s, v, "unknown group '%s' (groups: %s)", g, s->ngroups ? known.s : "none");
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
            return sys_bad(s, v, "cmd: expected one command line, got %s",
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
        return sys_bad(s, b->node,
                       "a block needs 'name' and 'cmd' (a command) or 'plugin' (a block "
                       "plugin)");
    if (b->group >= 0 && b->rp.node)
        return sys_bad(s, b->rp.node,
                       "block '%s' runs in group '%s': a group is restarted as a whole, give "
                       "its restart keys to the group",
                       b->name, s->groups[b->group].name);
    if (b->cmd && b->plugin)
        return sys_bad(s, b->plugin_node,
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
            return sys_bad(
                s,
                b->group >= 0 ? b->group_node
                : b->params   ? b->params
                              : b->rate_node,
                "block '%s': '%s' is for a block plugin: give 'plugin' instead of 'cmd'%s", b->name,
                key, b->group >= 0 ? " (only a plugin runs in a group)" : "");
        return 0;
    }
    if (rname_ok(s, b->node, "block plugin instance", b->name) < 0)
        return -1;
    if (b->group >= 0) {
        const struct group *g = &s->groups[b->group];
        if (b->rate_hz || b->trigger)
            return sys_bad(s, b->rate_node,
                           "block '%s' runs in group '%s' at one of its rates: give "
                           "'rate' (a rate of the group), not '%s'",
                           b->name, g->name, b->rate_hz ? "rate_hz" : "trigger");
        if (b->rate) {
            bool known = false;
            for (int r = 0; r < g->nrates; r++)
                known = known || !strcmp(g->rates[r].name, b->rate);
            if (!known)
                return sys_bad(s, b->rate_node, "block '%s': group '%s' has no rate '%s'", b->name,
                               g->name, b->rate);
        }
        return 0;
    }
    if (b->rate)
        return sys_bad(s, b->rate_node,
                       "block '%s': 'rate' names a rate of a group, and the block "
                       "has no 'group': give 'rate_hz' to run it alone",
                       b->name);
    if (!b->rate_hz == !b->trigger)
        return sys_bad(s, b->rate_hz ? b->rate_node : b->node,
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
        if (take_host(s, v, a->hosts, a->o, a->sub->host) < 0)
            return -1;
    } else if (!strcmp(key, "blocks")) {
        if (v->type != YAML_SEQUENCE_NODE)
            return sys_bad(s, v, "blocks: expected a list (- name: ...)");
        ARDY_FOR_ITEMS(&s->y, v, item)
        {
            if (s->nblocks == MAXB)
                return sys_bad(s, v, "more than %d blocks", MAXB);
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
                    return sys_bad(s, bn, "block '%s' named twice in a subsystem", b->name);
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
            return sys_bad(s, v, "cpu: a CPU list of at most %d characters", ARDR_CPUS_MAX);
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
        if (take_host(s, v, a->hosts, a->o, g->host) < 0)
            return -1;
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
            return sys_bad(s, v, "cpu: a CPU list of at most %d characters", ARDR_CPUS_MAX);
    } else if (!strcmp(key, "rates")) {
        if (v->type != YAML_SEQUENCE_NODE ||
            v->data.sequence.items.top == v->data.sequence.items.start)
            return sys_bad(s, v, "rates: expected a list of rates (- name: ..., divide: N)");
        g->rates_given = true;
        g->nrates = 0;
        ARDY_FOR_ITEMS(&s->y, v, item)
        {
            yaml_node_t *rn = item;
            if (g->nrates == ARDR_MAX_RATES)
                return sys_bad(s, rn, "group '%s': more than %d rates", g->name, ARDR_MAX_RATES);
            struct rate *r = &g->rates[g->nrates];
            *r = (struct rate){.divide = 1};
            if (each_pair(s, rn, "rate", rate_pair, r) < 0)
                return -1;
            if (!r->name[0])
                return sys_bad(s, rn, "a rate needs a 'name'");
            for (int j = 0; j < g->nrates; j++)
                if (!strcmp(g->rates[j].name, r->name))
                    return sys_bad(s, rn, "rate '%s' named twice", r->name);
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
        return sys_bad(s, list, "'groups' must be a list (- name: ...)");
    ARDY_FOR_ITEMS(&s->y, list, item)
    {
        if (s->ngroups == MAXB)
            return sys_bad(s, list, "more than %d groups", MAXB);
        struct group *g = &s->groups[s->ngroups];
        memset(g, 0, sizeof *g);
        g->first = -1;
        g->node = item;
        struct group_arg a = {g, hosts, o};
        if (each_pair(s, g->node, "group", group_pair, &a) < 0)
            return -1;
        if (!g->name[0] || !g->rate_hz)
            return sys_bad(s, g->node, "a group needs 'name' and 'rate_hz' (its base rate)");
        if (g->rates_given && g->prio_given)
            return sys_bad(s, g->node, "group '%s': with 'rates', give 'prio' and 'cpu' per rate",
                           g->name);
        if (!g->rates_given) { /* one rate, as ardrun's default */
            g->nrates = 1;
            g->rates[0] = (struct rate){"base", 1, g->prio, g->cpu};
        }
        if (find_group(s, g->name))
            return sys_bad(s, g->node, "group '%s' named twice", g->name);
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
            return sys_bad(s, v, "bridge_port: expected a UDP port number");
        s->port = (int)port;
    } else if (!strcmp(key, "key")) {
        /* The key file of the bridges: the same path on every host (relative: to the
         * description's directory); ardnet checks the file where it runs. */
        const char *p = scalar(s, v, "key");
        if (!p || !p[0] || strchr(p, '\n'))
            return sys_bad(s, v, "key: expected the path of a key file (ardnet keygen FILE)");
        int n = p[0] == '/' ? snprintf(s->key, sizeof s->key, "%s", p)
                            : snprintf(s->key, sizeof s->key, "%s/%s", s->dir, p);
        if (n < 0 || (size_t)n >= sizeof s->key)
            return sys_bad(s, v, "key: path too long");
    } else if (!strcmp(key, "connections")) {
        t->conns = v;
    } else if (!strcmp(key, "subsystems")) {
        t->subs = v;
    } else if (!strcmp(key, "groups")) {
        t->groups = v;
    } else {
        return unknown_key(s, k, key,
                           "(name, hosts, local_host, bridge_port, key, connections, "
                           "groups, subsystems), or restart, restart_delay, restart_limit");
    }
    return 0;
}

const char *sys_host_of(const struct sys *s, const struct block *b)
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
        const char *h = sys_host_of(s, bl);
        if (g->first < 0) {
            g->first = b;
            if (g->has_host && strcmp(g->host, h) != 0)
                return sys_bad(s, bl->group_node,
                               "group '%s' is on host '%s' (its 'host'), but block '%s' is in "
                               "subsystem '%s' on host '%s': a group is one process on one host",
                               g->name, g->host[0] ? g->host : s->local, bl->name,
                               s->subs[bl->sub].name, h[0] ? h : s->local);
            continue;
        }
        const struct block *f = &s->blocks[g->first];
        if (strcmp(sys_host_of(s, f), h) != 0)
            return sys_bad(
                s, bl->group_node,
                "group '%s' on two hosts: block '%s' (subsystem '%s') is on host '%s', "
                "block '%s' (subsystem '%s') on host '%s': a group is one process on one "
                "host",
                g->name, f->name, s->subs[f->sub].name,
                sys_host_of(s, f)[0] ? sys_host_of(s, f) : s->local, bl->name,
                s->subs[bl->sub].name, h[0] ? h : s->local);
        for (int j = 0; j < b; j++)
            if (s->blocks[j].group == bl->group && !strcmp(s->blocks[j].name, bl->name))
                return sys_bad(s, bl->node, "block '%s' named twice in group '%s'", bl->name,
                               g->name);
    }
    for (int i = 0; i < s->ngroups; i++) {
        const struct group *g = &s->groups[i];
        if (g->first < 0)
            return sys_bad(s, g->node,
                           "group '%s' has no blocks (a block joins it with 'group: %s')", g->name,
                           g->name);
        int sub = s->blocks[g->first].sub;
        for (int b = 0; b < s->nblocks; b++)
            if (s->blocks[b].sub == sub && s->blocks[b].group < 0 &&
                !strcmp(s->blocks[b].name, g->name))
                return sys_bad(
                    s, s->blocks[b].node,
                    "block '%s' has the name of group '%s', which runs in subsystem '%s' "
                    "too",
                    g->name, g->name, s->subs[sub].name);
    }
    return 0;
}

int sys_load(struct sys *s, const struct as_opts *o)
{
    yaml_node_t *root = ardy_root(&s->y);
    if (!root)
        return sys_bad(s, NULL, "empty file");
    struct top_arg t = {0};
    s->port = 7400;
    if (each_pair(s, root, "system description", top_pair, &t) < 0)
        return -1;
    if (!s->name[0])
        return sys_bad(s, root, "no 'name' of the system");
    if (t.conns && each_pair(s, t.conns, "connections", conn_pair, NULL) < 0)
        return -1;
    if (t.groups && parse_groups(s, t.groups, t.hosts, o) < 0)
        return -1;
    if (!t.subs || t.subs->type != YAML_SEQUENCE_NODE)
        return sys_bad(s, t.subs ? t.subs : root, "'subsystems' must be a list (- name: ...)");
    ARDY_FOR_ITEMS(&s->y, t.subs, item)
    {
        if (s->nsubs == MAXB)
            return sys_bad(s, t.subs, "more than %d subsystems", MAXB);
        struct subsys *sub = &s->subs[s->nsubs++];
        memset(sub, 0, sizeof *sub);
        struct sub_arg a = {sub, t.hosts, o};
        yaml_node_t *sn = item;
        if (each_pair(s, sn, "subsystem", sub_pair, &a) < 0)
            return -1;
        if (!sub->name[0])
            return sys_bad(s, sn, "a subsystem needs a 'name'");
        for (int j = 0; j < s->nsubs - 1; j++)
            if (!strcmp(s->subs[j].name, sub->name))
                return sys_bad(s, sn, "subsystem '%s' named twice", sub->name);
    }
    if (!s->local[0]) {
        /* $ARD_HOST reaches the generated scripts: checked like a host in the file. */
        ardb_host_label(s->local, sizeof s->local);
        if (ardb_check_host("this host ($ARD_HOST or the hostname; set local_host)", s->local) <
                0 ||
            strchr(s->local, ':'))
            return sys_bad(s, NULL, "%s",
                           strchr(s->local, ':')
                               ? "this host's name ($ARD_HOST) is an IPv6 address; "
                                 "set local_host to a host name"
                               : ard_errdetail());
    }

    return check_groups(s);
}
