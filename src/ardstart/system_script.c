/*
 * system_script.c - ardstart --system: the scripts a checked description becomes. A master
 * script starts one script per subsystem (on its host, level by level with readiness), each
 * of which starts its blocks with their wiring; where a connection's writer and a reader are
 * on different hosts, one ardnet pair per pair of hosts carries all of their connections; a
 * group of plugin blocks is one ardrun, given the group file written here.
 */
#include "system.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

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
    /* The options that are keys of the description, as --NAME=VALUE. */
    for (const struct ardc_opt *row = as_optset.opts; row->name; row++) {
        const char *v = !row->yaml              ? NULL
                        : rp && rp->v[row->set] ? rp->v[row->set]
                                                : d->v[row->set];
        if (v) {
            struct ardb_str opt = {0};
            ardb_str_addf(&opt, "--%s=%s", row->name, v);
            ardb_str_quote(out, opt.s);
            ardb_str_free(&opt);
        }
    }
    ardb_str_addf(out, " -n %s -- %s\n", name, cmd);
}

/* prefix + the network name of a host, as a valid entry name: "to_10_0_0_2". */
static void bridge_name(char *buf, size_t len, const char *prefix, const char *host)
{
    snprintf(buf, len, "%s%.40s", prefix, sys_net_host(host));
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
                          sys_net_host(hp->whost[0] ? hp->whost : s->local), br[j].c->name);
        else
            ardb_str_addf(cmd, " --in %s --out udp://%s:%d", br[j].c->name,
                          sys_net_host(hp->rhost[0] ? hp->rhost : s->local), hp->port);
        ardb_str_addf(cmd, " --size %zu", br[j].c->size);
        ardb_str_quote(cmd, "--type");
        ardb_str_quote(cmd, br[j].c->type);
    }
    if (s->key[0]) { /* every bridge seals its datagrams (ardnet(1), "Sealed links") */
        ardb_str_add(cmd, " --key");
        ardb_str_quote(cmd, s->key);
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

int sys_scripts(const struct sys *s, const struct as_opts *o, struct ardb_str *master)
{

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
                        return sys_bad(s, s->blocks[b2].node,
                                       "connection '%s' has two writers: %s and %s", wi->conn,
                                       s->blocks[b].name, s->blocks[b2].name);
                    const char *wh = sys_host_of(s, &s->blocks[b]),
                               *rh = sys_host_of(s, &s->blocks[b2]);
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
                    const struct conn *c = sys_find_conn(s, wi->conn);
                    if (!c)
                        return sys_bad(s, s->blocks[b2].node,
                                       "connection '%s' runs from host '%s' to '%s': a bridge is "
                                       "needed, give its type under 'connections'",
                                       wi->conn, wh[0] ? wh : s->local, rh[0] ? rh : s->local);
                    if (nbr == MAXB)
                        return sys_bad(s, NULL, "more than %d bridges", MAXB);
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
