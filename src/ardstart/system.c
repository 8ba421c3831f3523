/*
 * system.c - start a whole system from a YAML description (ardstart --system FILE).
 *
 * The description is turned into what a user would write by hand: a master script that
 * starts one script per subsystem (on its host, level by level with readiness), each of
 * which starts its blocks with their wiring. Where a connection's writer and a reader are
 * mapped to different hosts, an ardnet bridge pair is inserted: a receiving bridge in the
 * reader's subsystem before its blocks, a sending bridge in the writer's after the writer.
 * The master runs as the system's entry, so `ardstart --list` shows the tree and
 * `ardkill NAME` stops it. Format: docs/ardstart.md, "System description".
 */
#include "ardstart.h"

#include "ardi.h"

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

struct block {
    char name[ARDB_MAX_NAME + 1];
    const char *cmd;
    struct wire wires[16];
    int nwires;
    int sub;
    yaml_node_t *node; /* for the line in messages */
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
    const char *file;
    yaml_document_t doc;
    char name[ARDB_MAX_NAME + 1];
    char local[ARDB_MAX_HOST]; /* how other hosts reach the starting host */
    int port;
    struct subsys subs[MAXB];
    int nsubs;
    struct block blocks[MAXB];
    int nblocks;
    struct conn conns[MAXB];
    int nconns;
};

static int bad(const struct sys *s, const yaml_node_t *n, const char *fmt, ...) ARDB_PRINTF(3, 4);
static int bad(const struct sys *s, const yaml_node_t *n, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (n)
        fprintf(stderr, "ardstart: %s:%lu: %s\n", s->file, (unsigned long)n->start_mark.line + 1,
                msg);
    else
        fprintf(stderr, "ardstart: %s: %s\n", s->file, msg);
    return -1;
}

static yaml_node_t *node(struct sys *s, int id)
{
    return yaml_document_get_node(&s->doc, id);
}

static const char *scalar(struct sys *s, yaml_node_t *n, const char *what)
{
    if (!n || n->type != YAML_SCALAR_NODE) {
        bad(s, n, "%s: expected a plain value", what);
        return NULL;
    }
    return (const char *)n->data.scalar.value;
}

/* Walk a mapping: calls fn(key, value) for each pair; fn returns 0 or -1. */
typedef int (*pair_fn)(struct sys *s, const char *key, yaml_node_t *k, yaml_node_t *v, void *arg);
static int each_pair(struct sys *s, yaml_node_t *map, const char *what, pair_fn fn, void *arg)
{
    if (!map || map->type != YAML_MAPPING_NODE)
        return bad(s, map, "%s: expected a mapping (key: value lines)", what);
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = node(s, p->key), *v = node(s, p->value);
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
    if (hosts && hosts->type == YAML_MAPPING_NODE)
        for (yaml_node_pair_t *p = hosts->data.mapping.pairs.start;
             p < hosts->data.mapping.pairs.top; p++) {
            yaml_node_t *k = node(s, p->key), *v = node(s, p->value);
            if (k->type == YAML_SCALAR_NODE && !strcmp((char *)k->data.scalar.value, role))
                return v->type == YAML_SCALAR_NODE ? (const char *)v->data.scalar.value : "";
        }
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

static int block_pair(struct sys *s, const char *key, yaml_node_t *k, yaml_node_t *v, void *arg)
{
    struct block *b = arg;
    if (!strcmp(key, "name")) {
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
        return bad(s, k, "unknown key '%s' in a block (name, cmd, in, out)", key);
    }
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
        for (yaml_node_item_t *i = v->data.sequence.items.start; i < v->data.sequence.items.top;
             i++) {
            if (s->nblocks == MAXB)
                return bad(s, v, "more than %d blocks", MAXB);
            struct block *b = &s->blocks[s->nblocks];
            memset(b, 0, sizeof *b);
            b->sub = (int)(a->sub - s->subs);
            yaml_node_t *bn = node(s, *i);
            b->node = bn;
            if (each_pair(s, bn, "block", block_pair, b) < 0)
                return -1;
            if (!b->name[0] || !b->cmd)
                return bad(s, bn, "a block needs 'name' and 'cmd'");
            for (int j = 0; j < s->nblocks; j++)
                if (s->blocks[j].sub == b->sub && !strcmp(s->blocks[j].name, b->name))
                    return bad(s, bn, "block '%s' named twice in a subsystem", b->name);
            s->nblocks++;
        }
    } else {
        return bad(s, k, "unknown key '%s' in a subsystem (name, host, blocks)", key);
    }
    return 0;
}

struct top_arg {
    yaml_node_t *hosts, *subs, *conns;
};

static int top_pair(struct sys *s, const char *key, yaml_node_t *k, yaml_node_t *v, void *arg)
{
    struct top_arg *t = arg;
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
    } else {
        return bad(s, k,
                   "unknown key '%s' (name, hosts, local_host, bridge_port, connections, "
                   "subsystems)",
                   key);
    }
    return 0;
}

static const char *host_of(const struct sys *s, const struct block *b)
{
    return s->subs[b->sub].host;
}

/* Bridges to insert: per connection, one pair for each reader host other than the writer's. */
struct bridge {
    const struct conn *c;
    int writer_sub;
    int reader_sub; /* first subsystem on the reader host that reads it */
    char rhost[ARDB_MAX_HOST];
    int port;
};

static void start_line(struct ardb_str *out, const char *name, const char *cmd, int wait_s)
{
    ardb_str_addf(out, "ardstart -q --wait=%d -n %s -- %s\n", wait_s, name, cmd);
}

/* prefix + connection, cut to a valid entry name. */
static void bridge_name(char *buf, size_t len, const char *prefix, const char *conn)
{
    struct ardb_str s = {0};
    ardb_str_add(&s, prefix);
    ardb_str_add(&s, conn);
    ardb_copy(buf, len, s.s);
    ardb_str_free(&s);
}

/* The script of subsystem i. */
static void sub_script(const struct sys *s, int i, const struct bridge *br, int nbr, int wait_s,
                       struct ardb_str *out)
{
    /* The first line is what a listing shows of the command. */
    ardb_str_addf(out, "# subsystem %s of system %s (%s)\nset -e\n", s->subs[i].name, s->name,
                  s->file);
    char name[ARDB_MAX_NAME + 1];
    for (int k = 0; k < nbr; k++) {
        if (br[k].reader_sub != i)
            continue;
        struct ardb_str cmd = {0};
        ardb_str_quote(&cmd, "ardnet");
        /* --from: only the sending bridge on the writer's host is accepted. */
        const char *wh = s->subs[br[k].writer_sub].host;
        ardb_str_addf(&cmd, " --in udp://:%d --from %s --out %s --size %zu", br[k].port,
                      net_host(wh[0] ? wh : s->local), br[k].c->name, br[k].c->size);
        ardb_str_quote(&cmd, "--type");
        ardb_str_quote(&cmd, br[k].c->type);
        bridge_name(name, sizeof name, "from_", br[k].c->name);
        start_line(out, name, cmd.s, wait_s);
        ardb_str_free(&cmd);
    }
    for (int b = 0; b < s->nblocks; b++) {
        const struct block *bl = &s->blocks[b];
        if (bl->sub != i)
            continue;
        struct ardb_str cmd = {0};
        ardb_str_add(&cmd, bl->cmd);
        for (int w = 0; w < bl->nwires; w++)
            ardb_str_addf(&cmd, " --ard %s=%s", bl->wires[w].port, bl->wires[w].conn);
        start_line(out, bl->name, cmd.s, wait_s);
        ardb_str_free(&cmd);
        /* Sending bridges right after the block that writes the connection. */
        for (int k = 0; k < nbr; k++) {
            bool writes = false;
            for (int w = 0; w < bl->nwires; w++)
                writes = writes || (bl->wires[w].out && !strcmp(bl->wires[w].conn, br[k].c->name));
            if (!writes)
                continue;
            struct ardb_str bc = {0};
            ardb_str_quote(&bc, "ardnet");
            ardb_str_addf(&bc, " --in %s --out udp://%s:%d --size %zu", br[k].c->name,
                          net_host(br[k].rhost[0] ? br[k].rhost : s->local), br[k].port,
                          br[k].c->size);
            ardb_str_quote(&bc, "--type");
            ardb_str_quote(&bc, br[k].c->type);
            char prefix[ARDB_MAX_NAME + 8];
            snprintf(prefix, sizeof prefix, "to_%.20s_",
                     net_host(br[k].rhost[0] ? br[k].rhost : s->local));
            for (char *p = prefix; *p; p++)
                if (!isalnum((unsigned char)*p) && *p != '_' && *p != '-')
                    *p = '_'; /* a host may be an address: "to_10_0_0_2_arm.state" */
            bridge_name(name, sizeof name, prefix, br[k].c->name);
            start_line(out, name, bc.s, wait_s);
            ardb_str_free(&bc);
        }
    }
    ardb_str_add(out, "ardstart --ready\nexec sleep infinity\n");
}

static int build(struct sys *s, const struct as_opts *o, struct ardb_str *master)
{
    yaml_node_t *root = yaml_document_get_root_node(&s->doc);
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
    if (!t.subs || t.subs->type != YAML_SEQUENCE_NODE)
        return bad(s, t.subs ? t.subs : root, "'subsystems' must be a list (- name: ...)");
    for (yaml_node_item_t *i = t.subs->data.sequence.items.start;
         i < t.subs->data.sequence.items.top; i++) {
        if (s->nsubs == MAXB)
            return bad(s, t.subs, "more than %d subsystems", MAXB);
        struct subsys *sub = &s->subs[s->nsubs++];
        memset(sub, 0, sizeof *sub);
        struct sub_arg a = {sub, t.hosts, o};
        yaml_node_t *sn = node(s, *i);
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

    /* Writers and readers per connection; bridges where hosts differ. */
    static struct bridge br[MAXB];
    int nbr = 0;
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
                    bool have = false;
                    for (int k = 0; k < nbr; k++)
                        have =
                            have || (!strcmp(br[k].c->name, wi->conn) && !strcmp(br[k].rhost, rh));
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
                    br[nbr] =
                        (struct bridge){c, s->blocks[b].sub, s->blocks[b2].sub, "", s->port + nbr};
                    ardb_copy(br[nbr].rhost, sizeof br[nbr].rhost, rh);
                    nbr++;
                }
        }

    int wait_s = o->wait_ms > 0 ? (o->wait_ms + 999) / 1000 : 20;
    if (wait_s > 86400 / 4)
        wait_s = 86400 / 4; /* a subsystem waits 4 block times: keep within --wait's limit */
    ardb_str_addf(master, "# system %s (%s)\nset -e\n", s->name, s->file);
    for (int i = 0; i < s->nsubs; i++) {
        struct ardb_str script = {0};
        sub_script(s, i, br, nbr, wait_s, &script);
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

/* libyaml takes time quadratic in the nesting depth of flow collections ([[[...), and
 * recursion to load them; a description needs 6 levels, so deeper input is refused by a
 * first pass over the events, which stops there. The loader reports other errors. */
#define MAX_DEPTH 16
static int check_depth(const char *file, FILE *f)
{
    yaml_parser_t p;
    yaml_parser_initialize(&p);
    yaml_parser_set_input_file(&p, f);
    int depth = 0, rc = 0;
    for (bool end = false; !end;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&p, &ev))
            break;
        if (ev.type == YAML_MAPPING_START_EVENT || ev.type == YAML_SEQUENCE_START_EVENT) {
            if (++depth > MAX_DEPTH) {
                fprintf(stderr, "ardstart: %s:%lu: nested deeper than %d levels\n", file,
                        (unsigned long)ev.start_mark.line + 1, MAX_DEPTH);
                rc = -1;
                end = true;
            }
        } else if (ev.type == YAML_MAPPING_END_EVENT || ev.type == YAML_SEQUENCE_END_EVENT) {
            depth--;
        } else if (ev.type == YAML_STREAM_END_EVENT) {
            end = true;
        }
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&p);
    rewind(f);
    return rc;
}

int as_start_system(struct ardb_books *b, const struct as_opts *o, const char *file)
{
    struct sys *s = calloc(1, sizeof *s);
    if (!s)
        return AS_SYS;
    s->file = file;
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
    if (check_depth(file, f) < 0) {
        fclose(f);
        free(s);
        return AS_USAGE;
    }
    yaml_parser_t parser;
    yaml_parser_initialize(&parser);
    yaml_parser_set_input_file(&parser, f);
    int rc = AS_USAGE;
    if (!yaml_parser_load(&parser, &s->doc)) {
        fprintf(stderr, "ardstart: %s:%lu: %s\n", file, (unsigned long)parser.problem_mark.line + 1,
                parser.problem ? parser.problem : "YAML error");
        yaml_parser_delete(&parser);
        fclose(f);
        free(s);
        return AS_USAGE;
    }
    yaml_parser_delete(&parser);
    fclose(f);
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
    yaml_document_delete(&s->doc);
    free(s);
    return rc;
}
