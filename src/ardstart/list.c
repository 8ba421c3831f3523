/*
 * list.c - the tree of entries: this host's books, plus for each remote entry the listing
 * of that host (fetched through the transport, recursively), merged by path.
 *
 * --raw prints one tab-separated line per entry (the form fetched from remote hosts):
 *   path host pid state code uptime_ms cmd restarts last
 * (last: how the last run ended before a restart, e.g. "killed by SIGKILL", or "-"; hosts
 * with an older ardstart send the first 7 fields only).
 */
#include "ardstart.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

struct row {
    char path[ARDB_MAX_PATH];
    char host[ARDB_MAX_HOST];
    long pid;
    char state[64]; /* word, e.g. "exited" */
    int code;
    int64_t uptime_ms;
    char cmd[ARDB_MAX_CMD];
    int restarts;
    char last[64]; /* "-" or e.g. "exited 1" */
};

struct rows {
    struct row *v;
    size_t n, cap;
};

static struct row *add(struct rows *r)
{
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 16;
        struct row *v = realloc(r->v, r->cap * sizeof *v);
        if (!v)
            abort();
        r->v = v;
    }
    memset(&r->v[r->n], 0, sizeof r->v[0]);
    return &r->v[r->n++];
}

/* Replace tabs and newlines so that a field stays one field. */
static void clean(char *s)
{
    for (; *s; s++)
        if (*s == '\t' || *s == '\n')
            *s = ' ';
}

static void parse_raw(char *text, struct rows *r)
{
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *f[9];
        int n = 0;
        char *p = line;
        while (n < 9) {
            f[n++] = p;
            char *tab = n < 9 ? strchr(p, '\t') : NULL;
            if (!tab)
                break;
            *tab = '\0';
            p = tab + 1;
        }
        if ((n != 7 && n != 9) || ardb_check_path(f[0]) < 0)
            continue;
        struct row *w = add(r);
        ardb_copy(w->path, sizeof w->path, f[0]);
        ardb_copy(w->host, sizeof w->host, f[1]);
        w->pid = atol(f[2]);
        ardb_copy(w->state, sizeof w->state, f[3]);
        w->code = atoi(f[4]);
        w->uptime_ms = atoll(f[5]);
        ardb_copy(w->cmd, sizeof w->cmd, f[6]);
        w->restarts = n == 9 ? atoi(f[7]) : 0;
        ardb_copy(w->last, sizeof w->last, n == 9 ? f[8] : "-");
    }
}

/* Ask `e->host` for its listing of `path` and add the rows; on failure one row that says so. */
static void fetch_remote(const struct ardb_books *b, const struct ardb_entry *e, const char *path,
                         struct rows *r)
{
    struct ardb_str cmd = {0};
    char prog[PATH_MAX + 16];
    snprintf(prog, sizeof prog, "%s%sardstart", e->bindir, e->bindir[0] ? "/" : "");
    ardb_str_quote(&cmd, prog);
    ardb_str_quote(&cmd, "--domain");
    ardb_str_quote(&cmd, b->domain);
    ardb_str_quote(&cmd, "--list");
    ardb_str_quote(&cmd, "--raw");
    ardb_str_quote(&cmd, "--");
    ardb_str_quote(&cmd, path);
    char **argv;
    struct ardb_str out = {0};
    int status = 0, rc = -1;
    if (ardb_rsh_argv(e->rsh[0] ? e->rsh : ardb_rsh(NULL), e->host, cmd.s, &argv) == 0) {
        fflush(NULL);
        rc = ardb_run(argv, 30000, &out, &status);
        ardb_argv_free(argv);
    }
    ardb_str_free(&cmd);
    if (rc == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        size_t before = r->n;
        parse_raw(out.s, r);
        if (r->n == before && strcmp(path, e->path) == 0) {
            struct row *w = add(r);
            ardb_copy(w->path, sizeof w->path, e->path);
            ardb_copy(w->host, sizeof w->host, e->host);
            snprintf(w->state, sizeof w->state, "gone");
            snprintf(w->last, sizeof w->last, "-");
            ardb_copy(w->cmd, sizeof w->cmd, e->cmd);
        }
    } else if (strcmp(path, e->path) == 0) {
        struct row *w = add(r);
        ardb_copy(w->path, sizeof w->path, e->path);
        ardb_copy(w->host, sizeof w->host, e->host);
        snprintf(w->state, sizeof w->state, "unreachable");
        snprintf(w->last, sizeof w->last, "-");
        ardb_copy(w->cmd, sizeof w->cmd, e->cmd);
    }
    ardb_str_free(&out);
}

static void add_local(const struct ardb_entry *e, struct rows *r)
{
    struct row *w = add(r);
    ardb_copy(w->path, sizeof w->path, e->path);
    ardb_copy(w->host, sizeof w->host, e->host);
    w->pid = e->pid;
    enum ardb_state st = ardb_effective(e);
    ardb_copy(w->state, sizeof w->state, ardb_state_word(st));
    w->code = e->code;
    int64_t end = e->end_ns && st != ARDB_RUNNING ? e->end_ns : ardb_realtime_ns();
    w->uptime_ms = e->start_ns ? (end - e->start_ns) / 1000000 : 0;
    if (w->uptime_ms < 0)
        w->uptime_ms = 0;
    ardb_copy(w->cmd, sizeof w->cmd, e->cmd);
    clean(w->cmd);
    clean(w->host);
    w->restarts = e->restarts;
    if (e->restarts > 0 || (e->state == ARDB_FAILED && e->code == ARDB_CODE_LIMIT))
        ardb_state_text(e->last_state, e->last_code, w->last, sizeof w->last);
    else
        snprintf(w->last, sizeof w->last, "-");
}

/* Tree order: compare path by path, '/' before every name character. */
static int tree_order(const void *a, const void *b)
{
    const unsigned char *x = (const unsigned char *)((const struct row *)a)->path;
    const unsigned char *y = (const unsigned char *)((const struct row *)b)->path;
    for (; *x && *x == *y; x++, y++) {
    }
    int cx = *x == '/' ? 1 : *x, cy = *y == '/' ? 1 : *y;
    return cx - cy;
}

static void uptime_text(int64_t ms, char *buf, size_t len)
{
    int64_t s = ms / 1000;
    if (s < 60)
        snprintf(buf, len, "%.1fs", (double)ms / 1000);
    else if (s < 3600)
        snprintf(buf, len, "%dm%02ds", (int)(s / 60), (int)(s % 60));
    else if (s < 86400)
        snprintf(buf, len, "%dh%02dm", (int)(s / 3600), (int)(s / 60 % 60));
    else
        snprintf(buf, len, "%dd%02dh", (int)(s / 86400), (int)(s / 3600 % 24));
}

static int max_int(int a, int b)
{
    return a > b ? a : b;
}

/* The NAME (indented leaf), STATE and UPTIME cells of one row. */
static void row_cells(const struct row *w, char *name, size_t nlen, char *st, size_t slen, char *up,
                      size_t ulen)
{
    int depth = 0;
    for (const char *p = w->path; *p; p++)
        depth += *p == '/';
    const char *leaf = strrchr(w->path, '/') ? strrchr(w->path, '/') + 1 : w->path;
    snprintf(name, nlen, "%*s%s", 2 * depth, "", depth == 0 ? w->path : leaf);
    enum ardb_state s;
    if (ardb_state_parse(w->state, &s) == 0)
        ardb_state_text(s, w->code, st, slen);
    else
        ardb_copy(st, slen, w->state);
    uptime_text(w->uptime_ms, up, ulen);
}

int as_list(struct ardb_books *b, const char *prefix, bool raw)
{
    struct ardb_entry *v;
    int n = ardb_list(b, prefix, &v);
    if (n < 0) {
        fprintf(stderr, "ardstart: %s\n", ard_errdetail());
        return AS_SYS;
    }
    int rc = AS_OK;
    if (b->damaged) {
        fprintf(stderr, "ardstart: %s (%d such entr%s not listed)\n", b->damage, b->damaged,
                b->damaged == 1 ? "y" : "ies");
        rc = AS_SYS;
    }
    struct rows r = {0};
    for (int i = 0; i < n; i++) {
        if (v[i].remote)
            fetch_remote(b, &v[i], v[i].path, &r);
        else
            add_local(&v[i], &r);
    }
    free(v);
    if (n == 0 && prefix) {
        /* The path may lie below an entry that runs on another host. */
        n = ardb_list(b, NULL, &v);
        if (n < 0) {
            fprintf(stderr, "ardstart: %s\n", ard_errdetail());
            free(r.v);
            return AS_SYS;
        }
        for (int i = 0; i < n; i++)
            if (v[i].remote && ardb_under(prefix, v[i].path))
                fetch_remote(b, &v[i], prefix, &r);
        if (n > 0)
            free(v);
    }
    if (r.n)
        qsort(r.v, r.n, sizeof r.v[0], tree_order);
    if (raw) {
        for (size_t i = 0; i < r.n; i++)
            printf("%s\t%s\t%ld\t%s\t%d\t%lld\t%s\t%d\t%s\n", r.v[i].path, r.v[i].host, r.v[i].pid,
                   r.v[i].state, r.v[i].code, (long long)r.v[i].uptime_ms, r.v[i].cmd,
                   r.v[i].restarts, r.v[i].last);
        free(r.v);
        return rc;
    }
    if (r.n == 0) {
        char host[ARDB_MAX_HOST];
        ardb_host_label(host, sizeof host);
        printf("nothing started%s%s in domain %s on %s\n", prefix ? " under " : "",
               prefix ? prefix : "", b->domain, host);
        return rc;
    }
    /* Columns as wide as their widest cell (a long state such as "failed: Permission
     * denied" or a long host never shifts the columns after it). */
    int wname = 4, whost = 4, wst = 5, wre = 8;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1)
            printf("%-*s %-*s %7s  %-*s %9s  %-*s  %s\n", wname, "NAME", whost, "HOST", "PID", wst,
                   "STATE", "UPTIME", wre, "RESTARTS", "COMMAND");
        for (size_t i = 0; i < r.n; i++) {
            const struct row *w = &r.v[i];
            char name[ARDB_MAX_PATH + 64], st[ARDB_MAX_CMD], up[32], re[96];
            row_cells(w, name, sizeof name, st, sizeof st, up, sizeof up);
            /* the count, and how the last run ended: "2 (killed by SIGKILL)" */
            if (strcmp(w->last, "-") != 0)
                snprintf(re, sizeof re, "%d (%s)", w->restarts, w->last);
            else
                snprintf(re, sizeof re, "%d", w->restarts);
            if (pass == 0) {
                wname = max_int(wname, (int)strlen(name));
                whost = max_int(whost, (int)strlen(w->host));
                wst = max_int(wst, (int)strlen(st));
                wre = max_int(wre, (int)strlen(re));
                continue;
            }
            /* Long commands (a system's generated scripts) are cut: --raw has them whole. */
            int cut = strlen(w->cmd) > 72;
            printf("%-*s %-*s %7ld  %-*s %9s  %-*s  %.*s%s\n", wname, name, whost, w->host, w->pid,
                   wst, st, up, wre, re, cut ? 69 : 72, w->cmd, cut ? "..." : "");
        }
    }
    free(r.v);
    return rc;
}
