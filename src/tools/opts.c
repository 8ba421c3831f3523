/*
 * opts.c - the options of ard's subcommands, from one table each (struct ardt_spec): the
 * parser (ardt_opt_next), the help text (ardt_usage) and what the bash completion asks for
 * (ardt_opt_list, `ard help --options SUB`) read the same entries, so an option is named once.
 */
#include "ard.h"

#include <string.h>

/* The entry named by `a` (its first n characters: "--rate" of "--rate=2"), or NULL. */
static const struct ardt_opt *find_opt(const struct ardt_spec *s, const char *a, size_t n)
{
    for (const struct ardt_opt *o = s->opts; o->id; o++)
        if ((o->shrt && strlen(o->shrt) == n && strncmp(o->shrt, a, n) == 0) ||
            (o->lng && strlen(o->lng) == n && strncmp(o->lng, a, n) == 0))
            return o;
    return NULL;
}

/* The index of `v` among the space-separated words of `words`, or -1. */
static int word_index(const char *words, const char *v)
{
    size_t vl = strlen(v);
    int k = 0;
    for (const char *w = words; *w; k++) {
        size_t wl = strcspn(w, " ");
        if (wl == vl && strncmp(w, v, vl) == 0)
            return k;
        w += wl;
        w += strspn(w, " ");
    }
    return -1;
}

/* "expected text, csv or json" from "text csv json". */
static int bad_choice(const char *opt, const char *v, const char *words)
{
    char list[160];
    size_t len = 0;
    int n = 0;
    for (const char *w = words; *w && len < sizeof list; n++) {
        size_t wl = strcspn(w, " ");
        const char *next = w + wl + strspn(w + wl, " ");
        const char *sep = n == 0 ? "" : *next ? ", " : " or ";
        int k = snprintf(list + len, sizeof list - len, "%s%.*s", sep, (int)wl, w);
        len += k > 0 ? (size_t)k : 0;
        w = next;
    }
    return ardt_err(ARDT_USAGE, "%s '%s': expected %s", opt, v, list);
}

static int check_value(const struct ardt_opt *o, struct ardt_optarg *v)
{
    const char *s = v->s;
    switch (o->kind) {
    case ARDT_FLAG:
    case ARDT_TEXT:
        return 0;
    case ARDT_UINT:
        return ardt_parse_count(v->opt, s, o->umax ? o->umax : UINT64_MAX, &v->u);
    case ARDT_REAL:
        return ardt_parse_double(v->opt, s, o->min, o->max, &v->d);
    case ARDT_PACKETS:
        return ardt_parse_packets(v->opt, s, &v->u);
    case ARDT_CHOICE: {
        int k = word_index(o->complete, s);
        if (k < 0)
            return bad_choice(v->opt, s, o->complete);
        v->u = (uint64_t)k;
        return 0;
    }
    }
    return ardt_err(ARDT_SYS, "%s: option of no known kind", v->opt);
}

int ardt_opt_next(const struct ardt_spec *s, int argc, char **argv, int *i, struct ardt_optarg *v)
{
    v->s = NULL;
    v->u = 0;
    v->d = 0;
    v->opt[0] = '\0';
    if (++*i >= argc)
        return ARDT_OPT_END;
    char *a = argv[*i];
    v->s = a;
    if (a[0] != '-' || a[1] == '\0')
        return ARDT_OPT_ARG;
    /* --name=value: the long options take their value in the same word too. */
    char *eq = a[1] == '-' ? strchr(a, '=') : NULL;
    size_t n = eq ? (size_t)(eq - a) : strlen(a);
    const struct ardt_opt *o = find_opt(s, a, n);
    if (!o) {
        ardt_err(ARDT_USAGE, "%s '%s' (see 'ard help %s')",
                 s->unexpected ? "unexpected" : "unknown option", a, ardt_sub);
        return ARDT_OPT_BAD;
    }
    snprintf(v->opt, sizeof v->opt, "%.*s", (int)n, a);
    if (o->kind == ARDT_FLAG) {
        if (eq) {
            ardt_err(ARDT_USAGE, "%s takes no value", v->opt);
            return ARDT_OPT_BAD;
        }
        return o->id;
    }
    if (eq)
        v->s = eq + 1;
    else if (*i + 1 < argc)
        v->s = argv[++*i];
    else {
        ardt_err(ARDT_USAGE, "%s needs a value", v->opt);
        return ARDT_OPT_BAD;
    }
    return check_value(o, v) ? ARDT_OPT_BAD : o->id;
}

/* "-o, --output FILE" of one entry. */
static size_t opt_names(const struct ardt_opt *o, char *buf, size_t len)
{
    int k = snprintf(buf, len, "%s%s%s%s%s", o->shrt ? o->shrt : "", o->shrt && o->lng ? ", " : "",
                     o->lng ? o->lng : "", o->arg ? " " : "", o->arg ? o->arg : "");
    return k < 0 ? 0 : (size_t)k < len ? (size_t)k : len - 1;
}

void ardt_usage(FILE *f, const struct ardt_spec *s)
{
    fputs(s->head, f);
    bool any = false;
    for (const struct ardt_opt *o = s->opts; o->id && !any; o++)
        any = !o->hidden;
    if (any)
        fputs("options:\n", f);
    for (const struct ardt_opt *o = s->opts; o->id; o++) {
        if (o->hidden || !o->help)
            continue;
        char names[128];
        size_t len = opt_names(o, names, sizeof names);
        /* Entries without a help of their own share this line: "--start S, --end S". */
        for (const struct ardt_opt *p = o + 1; p->id && !p->help; p++)
            if (!p->hidden && len + 2 < sizeof names) {
                memcpy(names + len, ", ", 3);
                len += 2 + opt_names(p, names + len + 2, sizeof names - len - 2);
            }
        int width = s->col - 2;
        fprintf(f, "  %-*s%s", width, names, (int)len >= width ? " " : "");
        for (const char *h = o->help; *h; h++) {
            fputc(*h, f);
            if (*h == '\n')
                fprintf(f, "%*s", s->col, "");
        }
        fputc('\n', f);
    }
    if (s->tail)
        fputs(s->tail, f);
}

void ardt_opt_list(FILE *f, const struct ardt_spec *s)
{
    for (const struct ardt_opt *o = s->opts; o->id; o++) {
        if (o->hidden)
            continue;
        const char *val = o->kind == ARDT_FLAG ? "" : o->complete ? o->complete : "-";
        if (o->shrt)
            fprintf(f, "%s\t%s\n", o->shrt, val);
        if (o->lng)
            fprintf(f, "%s\t%s\n", o->lng, val);
    }
}
