/* list.c - `ard list`: every connection of the domain with its type, writer, readers, rate,
 * age of the newest packet and packet count, read without attaching to anything. */
#include "ard.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The options of `ard list`; the patterns point into argv. */
struct list_opts {
    bool lng, json;
    char **pats;
    int npats;
};

static int add_pattern(void *dest, char *word)
{
    struct list_opts *o = dest;
    o->pats[o->npats++] = word;
    return 0;
}

static const struct ardc_opt opts[] = {
    {"long", 'l', NULL,
     "also the object's mode and owner, the full type, and each attached process",
     .kind = ARDC_FLAG, ARDC_DEST(struct list_opts, lng)},
    {"json", 0, NULL, "one JSON array of objects (with -l: each with its attached ports)",
     .kind = ARDC_FLAG, ARDC_DEST(struct list_opts, json)},
    {0},
};
const struct ardc_optset ardt_list_spec = {
    .see = "ard help list",
    .head =
        "usage: ard list [-l] [--json] [PATTERN...]\n"
        "  Every connection of the domain (or those whose name matches a shell PATTERN): name,\n"
        "  packet size, type, writer (pid and program), readers, rate measured from the send\n"
        "  times of the last packets, age of the newest packet, packet count. Connections that\n"
        "  ardnet --auto receives from another host say 'from HOST'. Objects nobody is\n"
        "  attached to are marked 'orphaned', unreadable ones 'damaged' with the cause, objects "
        "of\n"
        "  another user or open to others 'foreign'. Nothing is attached: listing never disturbs\n"
        "  a block.\n",
    .opts = opts,
    .col = 15,
    .arg = add_pattern};

struct row {
    struct ardt_probe p;
    char name[ARD_MAX_NAME + 1];
    char writer[40];
    /* the host `ardnet --auto` receives it from; "" when written here or not at all */
    char remote[ARD_MAX_NAME + 1];
    char err[256]; /* damaged, foreign or unreadable: why */
    bool refused;  /* refused by the owner and mode check (another user's, or open to others) */
};

struct rows {
    struct row *v;
    size_t n, cap;
    char **patterns;
    int npatterns;
    int rc;
};

static int add(const char *name, void *arg)
{
    struct rows *r = arg;
    if (r->npatterns > 0) {
        bool hit = false;
        for (int i = 0; i < r->npatterns && !hit; i++)
            hit = fnmatch(r->patterns[i], name, 0) == 0;
        if (!hit)
            return 0;
    }
    if (r->n == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 64;
        struct row *nv = realloc(r->v, cap * sizeof *nv);
        if (!nv) {
            r->rc = ardi_fail(ARD_ENOMEM, "out of memory");
            return 1;
        }
        r->v = nv;
        r->cap = cap;
    }
    struct row *w = &r->v[r->n++];
    memset(w, 0, sizeof *w);
    snprintf(w->name, sizeof w->name, "%s", name);
    int rc = ardt_probe(name, &w->p);
    if (rc < 0) {
        snprintf(w->err, sizeof w->err, "%s", ard_errdetail());
        w->refused = rc == ARD_EACCES;
        return 0;
    }
    if (w->p.writer_pid > 0)
        snprintf(w->writer, sizeof w->writer, "%d %s", (int)w->p.writer_pid, w->p.writer_program);
    else
        snprintf(w->writer, sizeof w->writer, "-");
    if (w->p.writer_pid > 0 && strcmp(w->p.writer_program, "ardnet") == 0) {
        struct ard_peer peers[ARDT_MAX_PEERS];
        int n = ardt_peers(name, peers, ARDT_MAX_PEERS, NULL);
        for (int k = 0; k < n; k++) {
            bool to;
            const char *h = ardt_auto_host(&peers[k], &to);
            if (h && !to && peers[k].pid == w->p.writer_pid)
                snprintf(w->remote, sizeof w->remote, "%s", h);
        }
    }
    return 0;
}

/* Created by another user, or open to others: not this user's system (DESIGN §9). */
static bool foreign(const struct ardt_probe *p)
{
    return p->uid != (uint32_t)geteuid() || (p->mode & 0007) != 0;
}

/* -l: every attached port, as `ard list -l` prints them. */
static void put_json_ports(const char *name)
{
    struct ard_peer peers[ARDT_MAX_PEERS];
    int n = ardt_peers(name, peers, ARDT_MAX_PEERS, NULL);
    fputs(",\"ports\":[", stdout);
    for (int k = 0; k < n; k++) {
        printf("%s{\"role\":\"%s\",\"pid\":%d,\"program\":", k ? "," : "",
               peers[k].dir == ARD_OUT ? "writer" : "reader", (int)peers[k].pid);
        ardt_put_json_str(stdout, peers[k].program);
        fputs(",\"port\":", stdout);
        ardt_put_json_str(stdout, peers[k].port);
        printf(",\"attached_ns\":%lld,\"attached\":\"", (long long)peers[k].attach_real_ns);
        ardt_put_real(stdout, peers[k].attach_real_ns);
        fputs("\"}", stdout);
    }
    fputs("]", stdout);
}

static void put_json(const struct rows *r, int64_t now, bool lng)
{
    fputs("[", stdout);
    for (size_t i = 0; i < r->n; i++) {
        const struct row *w = &r->v[i];
        fputs(i ? ",\n " : "\n ", stdout);
        fputs("{\"name\":", stdout);
        ardt_put_json_str(stdout, w->name);
        if (w->err[0]) {
            fputs(w->refused ? ",\"foreign\":true,\"error\":" : ",\"damaged\":true,\"error\":",
                  stdout);
            ardt_put_json_str(stdout, w->err);
            fputs("}", stdout);
            continue;
        }
        const struct ardt_probe *p = &w->p;
        printf(",\"size\":%zu,\"type\":", p->size);
        ardt_put_json_str(stdout, p->type);
        printf(",\"writer\":");
        if (p->writer_pid > 0) {
            printf("{\"pid\":%d,\"program\":", (int)p->writer_pid);
            ardt_put_json_str(stdout, p->writer_program);
            fputs("}", stdout);
        } else
            fputs("null", stdout);
        fputs(",\"remote_host\":", stdout);
        if (w->remote[0])
            ardt_put_json_str(stdout, w->remote);
        else
            fputs("null", stdout);
        printf(",\"readers\":%u,\"unlisted\":%u,\"rate_hz\":%.6g,\"count\":%llu,\"age_ns\":",
               p->readers, p->unlisted, p->rate_hz, (unsigned long long)p->seq);
        if (p->seq)
            printf("%lld", (long long)(now - p->mono_ns));
        else
            fputs("null", stdout);
        printf(",\"orphaned\":%s,\"foreign\":%s,\"mode\":\"%04o\",\"uid\":%u",
               p->attached ? "false" : "true", foreign(p) ? "true" : "false", p->mode, p->uid);
        if (lng)
            put_json_ports(w->name);
        fputs("}", stdout);
    }
    fputs(r->n ? "\n]\n" : "]\n", stdout);
}

static void put_text(const struct rows *r, int64_t now, bool lng)
{
    /* Column widths from the rows themselves. */
    int wn = 10, wt = 4, ww = 6;
    for (size_t i = 0; i < r->n; i++) {
        const struct row *w = &r->v[i];
        int l = (int)strlen(w->name);
        wn = l > wn ? l : wn;
        l = (int)strlen(w->p.type[0] ? w->p.type : "(opaque)");
        l = !lng && l > 40 ? 40 : l;
        wt = l > wt ? l : wt;
        l = (int)strlen(w->writer);
        ww = l > ww ? l : ww;
    }
    printf("%-*s %8s  %-*s  %-*s %7s %9s %10s %10s\n", wn, "CONNECTION", "SIZE", wt, "TYPE", ww,
           "WRITER", "READERS", "RATE", "AGE", "COUNT");
    for (size_t i = 0; i < r->n; i++) {
        const struct row *w = &r->v[i];
        if (w->err[0]) {
            printf("%-*s %s: %s\n", wn, w->name, w->refused ? "foreign" : "damaged", w->err);
            continue;
        }
        const struct ardt_probe *p = &w->p;
        char type[48], rate[24], age[32] = "-";
        const char *t = p->type[0] ? p->type : "(opaque)";
        if (!lng && strlen(t) > 40)
            snprintf(type, sizeof type, "%.37s...", t);
        else
            snprintf(type, sizeof type, "%.47s", t);
        ardt_fmt_rate(rate, sizeof rate, p->rate_hz);
        if (p->seq) {
            FILE *m = fmemopen(age, sizeof age, "w");
            if (m) {
                ardt_put_age(m, now - p->mono_ns);
                fclose(m);
            }
        }
        printf("%-*s %8zu  %-*s  %-*s %7u %9s %10s %10llu%s", wn, w->name, p->size, wt,
               lng ? p->type[0] ? p->type : "(opaque)" : type, ww, w->writer, p->readers, rate, age,
               (unsigned long long)p->seq, p->attached ? "" : "  orphaned");
        if (w->remote[0])
            printf("  from %s", w->remote);
        if (foreign(p))
            printf("  foreign (owner uid %u, mode %04o)", p->uid, p->mode);
        putchar('\n');
        if (lng) {
            printf("%*s mode %04o uid %u\n", wn, "", p->mode, p->uid);
            struct ard_peer peers[ARDT_MAX_PEERS];
            uint32_t unlisted = 0;
            int n = ardt_peers(w->name, peers, ARDT_MAX_PEERS, &unlisted);
            for (int k = 0; k < n; k++) {
                printf("%*s %-6s pid %d %s port %s attached ", wn, "",
                       peers[k].dir == ARD_OUT ? "writer" : "reader", (int)peers[k].pid,
                       peers[k].program, peers[k].port);
                ardt_put_real(stdout, peers[k].attach_real_ns);
                putchar('\n');
            }
            if (unlisted)
                printf("%*s and %u port%s not listed (the object's table is full)\n", wn, "",
                       unlisted, unlisted == 1 ? "" : "s");
        }
    }
}

int cmd_list(int argc, char **argv)
{
    struct rows r = {0};
    struct list_opts o = {.pats = calloc((size_t)argc, sizeof(char *))};
    if (!o.pats)
        return ardt_err(ARDT_SYS, "out of memory");
    int rc = ardt_opts(&ardt_list_spec, argc, argv, &o);
    if (rc) {
        free(o.pats);
        return ardt_liberr(rc);
    }
    bool lng = o.lng, json = o.json;
    char **pats = o.pats;
    r.patterns = pats;
    r.npatterns = o.npats;
    rc = ard_conn_list(ardt_g.domain, add, &r);
    int64_t now = ard_now_ns();
    if (rc < 0)
        r.rc = ardt_liberr(rc);
    if (r.rc == 0) {
        ardt_signals();
        if (json)
            put_json(&r, now, lng);
        else
            put_text(&r, now, lng);
        if (!ardt_flush(stdout))
            r.rc = ARDT_OK; /* reader of the pipe went away: nothing more to say */
    }
    free(r.v);
    free(pats);
    return r.rc;
}
