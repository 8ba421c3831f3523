/* graph.c - `ard graph`: the running net as Graphviz dot (svg through `dot`) or JSON:
 * processes, connections with their rates, ardnet's UDP endpoints, and ardstart's hierarchy
 * (from its books) as nested clusters. */
#include "ard.h"

#include "books.h"

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

enum fmt { DOT, SVG, JSON }; /* the order of --format's words */

/* The options of `ard graph`. */
struct graph_opts {
    int fmt; /* enum fmt */
    const char *out;
};

static const struct ardc_opt opts[] = {
    {"format", 0, "FMT", "dot (default), svg or json", .kind = ARDC_CHOICE,
     ARDC_DEST(struct graph_opts, fmt), .complete = "dot svg json"},
    {"json", 0, NULL, "same as --format json", .kind = ARDC_SET, ARDC_DEST(struct graph_opts, fmt),
     .set = JSON},
    {"output", 'o', "FILE", "write to FILE instead of stdout", .kind = ARDC_TEXT,
     ARDC_DEST(struct graph_opts, out), .complete = "@file"},
    {0},
};
const struct ardc_optset ardt_graph_spec = {
    .see = "ard help graph",
    .head = "usage: ard graph [--format dot|svg|json] [--json] [-o FILE]\n"
            "  The running net of the domain: every process attached to a connection (box), every\n"
            "  connection (ellipse, with its type and rate), edges writer -> connection -> reader\n"
            "  labelled with the port's name in its process (and the writer's with the rate),\n"
            "  the UDP endpoints of ardnet bridges and the hosts ardnet --auto forwards to or\n"
            "  receives from (diamonds: other hosts), and ardstart's hierarchy as nested clusters\n"
            "  (robot/arm/driver). svg needs Graphviz's dot in PATH.\n",
    .opts = opts,
    .col = 21,
    .arg = ardt_no_arg,
    .unexpected = true};

#define MAXPEERS ARDT_MAX_PEERS

struct conn {
    struct ardt_probe p;
    struct ard_peer *peers;
    int npeers;
    bool bad;
};

struct proc {
    int32_t pid;
    char program[16];
    const char *entry;        /* books path of the entry that started it, or NULL */
    char **udp_in, **udp_out; /* ardnet: endpoints on other hosts */
    int nin, nout;
};

struct net {
    struct conn *c;
    size_t nc;
    struct proc *p;
    size_t np;
    struct ardb_entry *books;
    int nbooks;
};

static int add_conn(const char *name, void *arg)
{
    struct net *n = arg;
    struct conn *nv = realloc(n->c, (n->nc + 1) * sizeof *nv);
    if (!nv)
        return ardi_fail(ARD_ENOMEM, "out of memory");
    n->c = nv;
    struct conn *c = &n->c[n->nc++];
    memset(c, 0, sizeof *c);
    if (ardt_probe(name, &c->p) < 0) {
        snprintf(c->p.name, sizeof c->p.name, "%s", name);
        c->bad = true;
        return 0;
    }
    snprintf(c->p.name, sizeof c->p.name, "%s", name);
    c->peers = calloc(MAXPEERS, sizeof *c->peers);
    if (!c->peers)
        return ardi_fail(ARD_ENOMEM, "out of memory");
    int k = ardt_peers(name, c->peers, MAXPEERS, NULL);
    c->npeers = k < 0 ? 0 : k;
    return 0;
}

/* ardnet's command line names its UDP endpoints: --in/--out udp://... */
static void read_bridge(struct proc *pr)
{
    char path[64], buf[8192];
    snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pr->pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return;
    size_t len = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[len] = '\0';
    const char *prev = "";
    for (size_t i = 0; i < len; i += strlen(buf + i) + 1) {
        const char *a = buf + i;
        bool in = false;
        const char *ep = NULL;
        if (strncmp(a, "--in=", 5) == 0)
            in = true, ep = a + 5;
        else if (strncmp(a, "--out=", 6) == 0)
            ep = a + 6;
        else if (strcmp(prev, "--in") == 0 || strcmp(prev, "-i") == 0)
            in = true, ep = a;
        else if (strcmp(prev, "--out") == 0 || strcmp(prev, "-o") == 0)
            ep = a;
        prev = a;
        if (!ep || strncmp(ep, "udp://", 6) != 0)
            continue;
        char ***v = in ? &pr->udp_in : &pr->udp_out;
        int *n = in ? &pr->nin : &pr->nout;
        char **nv = realloc(*v, (size_t)(*n + 1) * sizeof *nv);
        if (!nv)
            return;
        *v = nv;
        if ((nv[*n] = strdup(ep)) != NULL)
            (*n)++;
    }
}

static struct proc *proc_of(struct net *n, const struct ard_peer *pe)
{
    for (size_t i = 0; i < n->np; i++)
        if (n->p[i].pid == pe->pid)
            return &n->p[i];
    struct proc *nv = realloc(n->p, (n->np + 1) * sizeof *nv);
    if (!nv)
        return NULL;
    n->p = nv;
    struct proc *pr = &n->p[n->np++];
    memset(pr, 0, sizeof *pr);
    pr->pid = pe->pid;
    snprintf(pr->program, sizeof pr->program, "%s", pe->program);
    for (int b = n->nbooks; b-- > 0;)
        if (n->books[b].pid == pe->pid && n->books[b].state == ARDB_RUNNING && !n->books[b].remote)
            pr->entry = n->books[b].path;
    if (strcmp(pr->program, "ardnet") == 0)
        read_bridge(pr);
    return pr;
}

static void put_dot_str(FILE *o, const char *s)
{
    fputc('"', o);
    for (; *s; s++) {
        if (*s == '\n') {
            fputs("\\n", o);
            continue;
        }
        if (*s == '"' || *s == '\\')
            fputc('\\', o);
        fputc(*s, o);
    }
    fputc('"', o);
}

/* Parent path of an entry ("arm/sim" for "arm/sim/plant"; "" at the top). */
static size_t parent_len(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? (size_t)(s - path) : 0;
}

static void put_proc_node(FILE *o, const struct proc *pr, const char *ind)
{
    fprintf(o, "%s\"p%d\" [shape=box label=", ind, (int)pr->pid);
    char label[160];
    const char *name = pr->entry ? strrchr(pr->entry, '/') : NULL;
    name = name ? name + 1 : pr->entry;
    if (name && strcmp(name, pr->program) != 0)
        snprintf(label, sizeof label, "%s\\n%s %d", name, pr->program, (int)pr->pid);
    else
        snprintf(label, sizeof label, "%s\\n%d", pr->program, (int)pr->pid);
    fprintf(o, "\"%s\"];\n", label); /* names and programs have no quotes or backslashes */
}

/* Clusters of the books' paths: one per entry that has entries or processes below it. */
static void put_cluster(FILE *o, const struct net *n, const char *path, int depth)
{
    char ind[64];
    snprintf(ind, sizeof ind, "%*s", 2 * depth + 2, "");
    size_t pl = strlen(path);
    for (int b = 0; b < n->nbooks; b++) {
        const char *q = n->books[b].path;
        if (parent_len(q) != pl || strncmp(q, path, pl) != 0 || (pl && q[pl] != '/'))
            continue;
        /* A child cluster only if something we draw lies below it. */
        bool used = false;
        for (size_t i = 0; i < n->np && !used; i++)
            used = n->p[i].entry && ardb_under(n->p[i].entry, q) && strcmp(n->p[i].entry, q) != 0;
        if (!used)
            continue;
        fprintf(o, "%ssubgraph ", ind);
        char cl[ARDB_MAX_PATH + 16];
        snprintf(cl, sizeof cl, "cluster_%s", q);
        put_dot_str(o, cl);
        fprintf(o, " {\n%s  label=", ind);
        put_dot_str(o, q + (pl ? pl + 1 : 0));
        fprintf(o, ";\n");
        put_cluster(o, n, q, depth + 1);
        fprintf(o, "%s}\n", ind);
    }
    for (size_t i = 0; i < n->np; i++) {
        const struct proc *pr = &n->p[i];
        if (!pr->entry && pl == 0)
            put_proc_node(o, pr, ind);
        else if (pr->entry && parent_len(pr->entry) == pl && strncmp(pr->entry, path, pl) == 0)
            put_proc_node(o, pr, ind);
    }
}

static void put_dot(FILE *o, const struct net *n)
{
    fprintf(o, "digraph ard {\n  rankdir=LR;\n  label=");
    char title[ARD_MAX_NAME + 16];
    snprintf(title, sizeof title, "domain %s", ardt_g.domain);
    put_dot_str(o, title);
    fprintf(o, ";\n  fontname=\"Helvetica\";\n  node [fontname=\"Helvetica\" fontsize=10];\n"
               "  edge [fontname=\"Helvetica\" fontsize=9];\n");
    put_cluster(o, n, "", 0);
    for (size_t i = 0; i < n->nc; i++) {
        const struct conn *c = &n->c[i];
        char id[ARD_MAX_NAME + 4], label[ARD_MAX_TYPE + 128], rate[24];
        snprintf(id, sizeof id, "c:%s", c->p.name);
        ardt_fmt_rate(rate, sizeof rate, c->p.rate_hz);
        if (c->bad)
            snprintf(label, sizeof label, "%s\n(damaged)", c->p.name);
        else
            snprintf(label, sizeof label, "%s\n%s\n%s", c->p.name,
                     c->p.type[0] ? c->p.type : "(opaque)", rate);
        fputs("  ", o);
        put_dot_str(o, id);
        fputs(" [shape=ellipse label=", o);
        put_dot_str(o, label);
        fputs(c->p.attached || c->bad ? "];\n" : " style=dashed];\n", o);
        for (int k = 0; k < c->npeers; k++) {
            const struct ard_peer *pe = &c->peers[k];
            char pid[24], elabel[ARD_MAX_NAME + 32];
            snprintf(pid, sizeof pid, "p%d", (int)pe->pid);
            fputs("  ", o);
            put_dot_str(o, pe->dir == ARD_OUT ? pid : id);
            fputs(" -> ", o);
            put_dot_str(o, pe->dir == ARD_OUT ? id : pid);
            /* The port's name in its process, and on the writer's edge the rate. */
            if (pe->dir == ARD_OUT && c->p.rate_hz > 0)
                snprintf(elabel, sizeof elabel, "%s\n%s", pe->port, rate);
            else
                snprintf(elabel, sizeof elabel, "%s", pe->port);
            fputs(" [label=", o);
            put_dot_str(o, elabel);
            fputs("];\n", o);
            /* What ardnet --auto set up: the other host, and which way the connection goes. */
            bool to;
            const char *host = ardt_auto_host(pe, &to);
            if (host) {
                char hid[ARD_MAX_NAME + 4];
                snprintf(hid, sizeof hid, "h:%s", host);
                fputs("  ", o);
                put_dot_str(o, hid);
                fputs(" [shape=diamond label=", o);
                put_dot_str(o, host);
                fputs("];\n  ", o);
                put_dot_str(o, to ? id : hid);
                fputs(" -> ", o);
                put_dot_str(o, to ? hid : id);
                fputs(" [style=dashed label=\"ardnet --auto\"];\n", o);
            }
        }
    }
    for (size_t i = 0; i < n->np; i++) {
        const struct proc *pr = &n->p[i];
        for (int k = 0; k < pr->nin + pr->nout; k++) {
            bool in = k < pr->nin;
            const char *ep = in ? pr->udp_in[k] : pr->udp_out[k - pr->nin];
            char id[300], pid[24];
            snprintf(id, sizeof id, "u:%d:%s", (int)pr->pid, ep);
            snprintf(pid, sizeof pid, "p%d", (int)pr->pid);
            fputs("  ", o);
            put_dot_str(o, id);
            fputs(" [shape=diamond label=", o);
            put_dot_str(o, ep);
            fputs("];\n  ", o);
            put_dot_str(o, in ? id : pid);
            fputs(" -> ", o);
            put_dot_str(o, in ? pid : id);
            fputs(" [style=dashed];\n", o);
        }
    }
    fputs("}\n", o);
}

static void put_json(FILE *o, const struct net *n)
{
    fputs("{\"domain\":", o);
    ardt_put_json_str(o, ardt_g.domain);
    fputs(",\n \"connections\":[", o);
    for (size_t i = 0; i < n->nc; i++) {
        const struct conn *c = &n->c[i];
        fputs(i ? ",\n  {\"name\":" : "\n  {\"name\":", o);
        ardt_put_json_str(o, c->p.name);
        if (c->bad) {
            fputs(",\"damaged\":true}", o);
            continue;
        }
        fprintf(o, ",\"size\":%zu,\"type\":", c->p.size);
        ardt_put_json_str(o, c->p.type);
        fprintf(o, ",\"rate_hz\":%.6g,\"count\":%llu,\"writer\":", c->p.rate_hz,
                (unsigned long long)c->p.seq);
        if (c->p.writer_pid > 0)
            fprintf(o, "%d", (int)c->p.writer_pid);
        else
            fputs("null", o);
        fputs(",\"peers\":[", o);
        for (int k = 0; k < c->npeers; k++) {
            const struct ard_peer *pe = &c->peers[k];
            fprintf(o, "%s{\"pid\":%d,\"dir\":\"%s\",\"port\":", k ? "," : "", (int)pe->pid,
                    pe->dir == ARD_OUT ? "out" : "in");
            ardt_put_json_str(o, pe->port);
            bool to;
            const char *host = ardt_auto_host(pe, &to);
            if (host) {
                fputs(to ? ",\"to_host\":" : ",\"from_host\":", o);
                ardt_put_json_str(o, host);
            }
            fputs("}", o);
        }
        fprintf(o, "],\"orphaned\":%s}", c->p.attached ? "false" : "true");
    }
    fputs("\n ],\n \"processes\":[", o);
    for (size_t i = 0; i < n->np; i++) {
        const struct proc *pr = &n->p[i];
        fprintf(o, "%s{\"pid\":%d,\"program\":", i ? ",\n  " : "\n  ", (int)pr->pid);
        ardt_put_json_str(o, pr->program);
        fputs(",\"entry\":", o);
        if (pr->entry)
            ardt_put_json_str(o, pr->entry);
        else
            fputs("null", o);
        fputs(",\"udp_in\":[", o);
        for (int k = 0; k < pr->nin; k++) {
            fputs(k ? "," : "", o);
            ardt_put_json_str(o, pr->udp_in[k]);
        }
        fputs("],\"udp_out\":[", o);
        for (int k = 0; k < pr->nout; k++) {
            fputs(k ? "," : "", o);
            ardt_put_json_str(o, pr->udp_out[k]);
        }
        fputs("]}", o);
    }
    fputs("\n ],\n \"entries\":[", o);
    for (int b = 0; b < n->nbooks; b++) {
        const struct ardb_entry *e = &n->books[b];
        char st[128];
        ardb_state_text(ardb_effective(e), e->code, st, sizeof st);
        fputs(b ? ",\n  {\"path\":" : "\n  {\"path\":", o);
        ardt_put_json_str(o, e->path);
        fputs(",\"host\":", o);
        ardt_put_json_str(o, e->host);
        fprintf(o, ",\"pid\":%ld,\"state\":", e->pid);
        ardt_put_json_str(o, st);
        fputs("}", o);
    }
    fputs("\n ]}\n", o);
}

/* The connections of the domain and the processes at their ends; 0 or an ARD_E* code (detail set).
 */
static int gather_net(struct net *n)
{
    int rc = ard_conn_list(ardt_g.domain, add_conn, n);
    if (rc > 0)
        rc = 0;
    for (size_t i = 0; rc == 0 && i < n->nc; i++)
        for (int k = 0; k < n->c[i].npeers; k++)
            if (!proc_of(n, &n->c[i].peers[k]))
                rc = ardi_fail(ARD_ENOMEM, "out of memory");
    return rc;
}

/* The net as SVG into o, drawn by Graphviz's dot from the dot text; 0 or an ARD_E* code (detail
 * set). */
static int put_svg(FILE *o, const struct net *n)
{
    int rc = 0;
    fflush(o);
    int fds[2];
    pid_t pid = -1;
    if (pipe(fds) == 0 && (pid = fork()) == 0) {
        dup2(fds[0], 0);
        if (o != stdout)
            dup2(fileno(o), 1);
        close(fds[0]);
        close(fds[1]);
        execlp("dot", "dot", "-Tsvg", (char *)NULL);
        _exit(ARDT_SYS); /* the parent says why */
    }
    if (pid < 0)
        rc = ardi_fail(ARD_ESYS, "cannot start dot");
    else {
        close(fds[0]);
        FILE *d = fdopen(fds[1], "w");
        if (d) {
            put_dot(d, n);
            fclose(d);
        }
        int st = 0;
        waitpid(pid, &st, 0);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
            rc = WIFEXITED(st) && WEXITSTATUS(st) == ARDT_SYS
                     ? ardi_fail(ARD_ESYS, "svg needs Graphviz's 'dot' in PATH (apt install "
                                           "graphviz), or use --format dot")
                     : ardi_fail(ARD_ESYS, "dot failed (status %d)", st);
    }
    return rc;
}

/* Frees what gather_net and the books' listing took. */
static void free_net(struct net *n)
{
    for (size_t i = 0; i < n->nc; i++)
        free(n->c[i].peers);
    for (size_t i = 0; i < n->np; i++) {
        for (int k = 0; k < n->p[i].nin; k++)
            free(n->p[i].udp_in[k]);
        for (int k = 0; k < n->p[i].nout; k++)
            free(n->p[i].udp_out[k]);
        free(n->p[i].udp_in);
        free(n->p[i].udp_out);
    }
    free(n->c);
    free(n->p);
    free(n->books);
}

int cmd_graph(int argc, char **argv)
{
    struct graph_opts go = {.fmt = DOT};
    int orc = ardt_opts(&ardt_graph_spec, argc, argv, &go);
    if (orc)
        return ardt_liberr(orc);
    const int fmt = go.fmt;
    const char *out = go.out;
    struct net n = {0};
    struct ardb_books bk;
    bool have_books = ardb_open(&bk, ardt_g.domain) == 0;
    if (have_books) {
        int k = ardb_list(&bk, NULL, &n.books);
        n.nbooks = k < 0 ? 0 : k;
    }
    int rc = gather_net(&n);
    FILE *o = stdout;
    if (rc == 0 && out && (o = fopen(out, "we")) == NULL)
        rc = ardt_err(ARDT_SYS, "cannot write '%s'", out);
    ardt_signals();
    if (rc == 0 && fmt == SVG) {
        rc = put_svg(o, &n);
    } else if (rc == 0) {
        if (fmt == JSON)
            put_json(o, &n);
        else
            put_dot(o, &n);
        ardt_flush(o);
    }
    if (o && o != stdout)
        fclose(o);
    free_net(&n);
    if (have_books)
        ardb_close(&bk);
    return rc;
}
