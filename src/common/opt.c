/*
 * opt.c - the programs' options from one table each (ardc_opt.h): the parser, the appliers of
 * YAML values, the help text and the completion list read the same rows.
 */
#include "ardc_opt.h"

#include "ard_common.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- numbers ---------------------------------------------------------------------------- */

int ardc_parse_uint(const char *what, const char *s, uint64_t max, uint64_t *out)
{
    if (!isdigit((unsigned char)s[0]))
        return ardi_fail(ARD_EOPTION, "%s '%s': expected a whole number", what, s);
    char *end;
    errno = 0;
    /* Decimal (leading zeros too: "010" is ten, not octal), or hex after "0x". */
    bool hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
    unsigned long long v = strtoull(s, &end, hex ? 16 : 10);
    if (*end || errno || v > max)
        return ardi_fail(ARD_EOPTION, "%s '%s': expected a whole number up to %" PRIu64, what, s,
                         max);
    *out = v;
    return 0;
}

int ardc_parse_real(const char *what, const char *s, double min, double max, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno || !isfinite(v) || !(v >= min && v <= max))
        return ardi_fail(ARD_EOPTION, "%s '%s': expected a number from %g to %g", what, s, min,
                         max);
    *out = v;
    return 0;
}

int ardc_parse_packets(const char *what, const char *s, uint64_t *out)
{
    if (strcmp(s, "forever") == 0) {
        *out = 0;
        return 0;
    }
    int rc = ardc_parse_uint(what, s, UINT64_MAX, out);
    if (rc == 0 && *out == 0)
        return ardi_fail(ARD_EOPTION,
                         "%s 0: nothing would be sent; give 1 or more, or 'forever' (the default)",
                         what);
    return rc;
}

/* ---- one value into its destination ------------------------------------------------------ */

/* The index of v among the space-separated words of `words`, or -1. */
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
static int bad_choice(const char *given, const char *v, const char *words)
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
    return ardi_fail(ARD_EOPTION, "%s '%s': expected %s", given, v, list);
}

/* Store u in the unsigned field of `size` bytes at p. */
static void put_uint(void *p, size_t size, uint64_t u)
{
    switch (size) {
    case 1:
        *(uint8_t *)p = (uint8_t)u;
        break;
    case 2:
        *(uint16_t *)p = (uint16_t)u;
        break;
    case 4:
        *(uint32_t *)p = (uint32_t)u;
        break;
    default:
        *(uint64_t *)p = u;
        break;
    }
}

static int store(const struct ardc_opt *o, const char *given, const char *v, char *field,
                 char *dest)
{
    uint64_t u;
    double d;
    int rc, k;
    switch (o->kind) {
    case ARDC_FLAG:
        *(bool *)field = true;
        return 0;
    case ARDC_SET:
        *(int *)(void *)field = o->set;
        return 0;
    case ARDC_TEXT:
        *(const char **)(void *)field = v;
        return 0;
    case ARDC_BUF:
        if (strlen(v) >= o->size)
            return ardi_fail(ARD_EOPTION, "%s '%s': too long (at most %zu characters)", given, v,
                             o->size - 1);
        memcpy(field, v, strlen(v) + 1);
        return 0;
    case ARDC_UINT: {
        uint64_t cap = o->size >= 8 ? UINT64_MAX : (UINT64_C(1) << (8 * o->size)) - 1;
        if ((rc = ardc_parse_uint(given, v, o->umax && o->umax < cap ? o->umax : cap, &u)))
            return rc;
        put_uint(field, o->size, u);
        return 0;
    }
    case ARDC_INT:
        if ((rc = ardc_parse_real(given, v, o->min, o->max, &d)))
            return rc;
        if (d != floor(d))
            return ardi_fail(ARD_EOPTION, "%s '%s': expected a whole number from %g to %g", given,
                             v, o->min, o->max);
        *(int *)(void *)field = (int)d;
        return 0;
    case ARDC_REAL:
        if ((rc = ardc_parse_real(given, v, o->min, o->max, &d)))
            return rc;
        *(double *)(void *)field = d;
        return 0;
    case ARDC_PACKETS:
        if ((rc = ardc_parse_packets(given, v, &u)))
            return rc;
        *(uint64_t *)(void *)field = u;
        return 0;
    case ARDC_CHOICE:
        if ((k = word_index(o->complete, v)) < 0)
            return bad_choice(given, v, o->complete);
        *(int *)(void *)field = k;
        return 0;
    case ARDC_LIST: {
        int *n = (int *)(void *)(dest + o->count);
        if ((uint64_t)*n >= o->umax)
            return ardi_fail(ARD_EOPTION, "%s '%s': more than %" PRIu64 " given", given, v,
                             o->umax);
        ((const char **)(void *)field)[(*n)++] = v;
        return 0;
    }
    case ARDC_CALL:
        break;
    }
    return ardi_fail(ARD_EINVAL, "%s: an option of no known kind", given);
}

int ardc_opt_apply(const struct ardc_opt *o, const char *given, const char *value, void *dest)
{
    if (o->arg && !value && !o->optional)
        return ardi_fail(ARD_EOPTION, "%s needs a value", given);
    if (o->kind == ARDC_CALL)
        return o->call(dest, o, value);
    if (value || !o->arg) {
        int rc = store(o, given, value, (char *)dest + o->off, dest);
        if (rc)
            return rc;
    }
    return o->call ? o->call(dest, o, value) : 0;
}

/* ---- the command line --------------------------------------------------------------------- */

static bool applies(const struct ardc_opt *o, unsigned where)
{
    return o->where == 0 || (o->where & where) != 0;
}

/* The row called `name` (its first n characters: "rate" of "rate=2"), or NULL. */
static const struct ardc_opt *find_long(const struct ardc_optset *s, unsigned where,
                                        const char *name, size_t n)
{
    for (const struct ardc_opt *o = s->opts; o->name; o++)
        if (applies(o, where) && strlen(o->name) == n && strncmp(o->name, name, n) == 0)
            return o;
    return NULL;
}

static const struct ardc_opt *find_short(const struct ardc_optset *s, unsigned where, char c)
{
    for (const struct ardc_opt *o = s->opts; o->name; o++)
        if (applies(o, where) && o->shrt && o->shrt == c)
            return o;
    return NULL;
}

const struct ardc_opt *ardc_opt_find(const struct ardc_optset *s, unsigned where, const char *name)
{
    return find_long(s, where, name, strlen(name));
}

const struct ardc_opt *ardc_opt_find_yaml(const struct ardc_optset *s, unsigned where,
                                          const char *key)
{
    for (const struct ardc_opt *o = s->opts; o->name; o++)
        if (applies(o, where) && o->yaml && strcmp(o->yaml, key) == 0)
            return o;
    return NULL;
}

static int unknown(const struct ardc_optset *s, const char *word)
{
    return ardi_fail(ARD_EOPTION, "%s '%s' (see '%s')",
                     s->unexpected ? "unexpected" : "unknown option", word, s->see);
}

/* --name, --name=value or --name value at argv[*i]; *i at its last word. */
static int parse_long(const struct ardc_optset *s, unsigned where, int argc, char **argv, int *i,
                      void *dest)
{
    char *a = argv[*i];
    char *eq = strchr(a, '=');
    size_t n = eq ? (size_t)(eq - a) : strlen(a);
    const struct ardc_opt *o = find_long(s, where, a + 2, n - 2);
    if (!o)
        return unknown(s, a);
    char given[64];
    snprintf(given, sizeof given, "%.*s", (int)n, a);
    const char *v = NULL;
    if (!o->arg) {
        if (eq)
            return ardi_fail(ARD_EOPTION, "%s takes no value", given);
    } else if (eq)
        v = eq + 1;
    else if (!o->optional && *i + 1 < argc)
        v = argv[++*i];
    return ardc_opt_apply(o, given, v, dest);
}

/* -x, -xVALUE, -x VALUE or bundled flags -xyz at argv[*i]; *i at its last word. */
static int parse_short(const struct ardc_optset *s, unsigned where, int argc, char **argv, int *i,
                       void *dest)
{
    char *a = argv[*i];
    for (char *c = a + 1; *c; c++) {
        const struct ardc_opt *o = find_short(s, where, *c);
        if (!o) {
            char word[3] = {'-', *c, '\0'};
            return unknown(s, c == a + 1 ? a : word);
        }
        char given[3] = {'-', *c, '\0'};
        if (!o->arg) {
            int rc = ardc_opt_apply(o, given, NULL, dest);
            if (rc)
                return rc;
            continue;
        }
        const char *v = c[1] ? c + 1 : NULL;
        if (!v && !o->optional && *i + 1 < argc)
            v = argv[++*i];
        return ardc_opt_apply(o, given, v, dest);
    }
    return 0;
}

int ardc_opt_parse(const struct ardc_optset *s, unsigned where, int argc, char **argv, int *i,
                   void *dest)
{
    for (; *i < argc; ++*i) {
        char *a = argv[*i];
        int rc;
        if (strcmp(a, "--") == 0) {
            ++*i;
            break;
        }
        if (a[0] != '-' || a[1] == '\0') {
            if (!s->arg)
                return 0;
            if ((rc = s->arg(dest, a)))
                return rc;
            continue;
        }
        rc = a[1] == '-' ? parse_long(s, where, argc, argv, i, dest)
                         : parse_short(s, where, argc, argv, i, dest);
        if (rc == ARDC_OPT_STOP) {
            ++*i;
            return 0;
        }
        if (rc)
            return rc;
    }
    /* After "--": every word is an argument. */
    for (; s->arg && *i < argc; ++*i) {
        int rc = s->arg(dest, argv[*i]);
        if (rc)
            return rc;
    }
    return 0;
}

/* ---- help and completion ------------------------------------------------------------------- */

/* "-o, --output FILE" of one row. */
static size_t opt_names(const struct ardc_opt *o, char *buf, size_t len)
{
    char shrt[5] = "";
    if (o->shrt)
        snprintf(shrt, sizeof shrt, "-%c, ", o->shrt);
    const char *arg = o->arg ? o->arg : "";
    const char *open = o->optional ? "[=" : *arg ? " " : "";
    int k = snprintf(buf, len, "%s--%s%s%s%s", shrt, o->name, open, arg, o->optional ? "]" : "");
    return k < 0 ? 0 : (size_t)k < len ? (size_t)k : len - 1;
}

void ardc_opt_usage(FILE *f, const struct ardc_optset *s, unsigned where)
{
    fputs(s->head, f);
    bool any = false;
    for (const struct ardc_opt *o = s->opts; o->name && !any; o++)
        any = !o->hidden && applies(o, where);
    if (any)
        fputs("options:\n", f);
    for (const struct ardc_opt *o = s->opts; o->name; o++) {
        if (o->hidden || !o->help || !applies(o, where))
            continue;
        char names[160];
        size_t len = opt_names(o, names, sizeof names);
        /* Rows without a help of their own share this line: "--start S, --end S". */
        for (const struct ardc_opt *p = o + 1; p->name && !p->help; p++)
            if (!p->hidden && applies(p, where) && len + 2 < sizeof names) {
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

void ardc_opt_list(FILE *f, const struct ardc_optset *s, unsigned where)
{
    for (const struct ardc_opt *o = s->opts; o->name; o++) {
        if (o->hidden || !applies(o, where))
            continue;
        const char *val = !o->arg ? "" : o->complete ? o->complete : "-";
        if (o->shrt)
            fprintf(f, "-%c\t%s\n", o->shrt, val);
        fprintf(f, "--%s\t%s\n", o->name, val);
    }
}
