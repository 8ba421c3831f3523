/* ardyaml.c - what the project's YAML loaders share (ardyaml.h). */
#include "ardyaml.h"

#include "ard_common.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

/* The largest configuration file taken from a pipe; a file on disk has no such limit. */
#define ARDY_PIPE_MAX (64u << 20)

/* A pipe (`ardrun /dev/stdin`, `... --config <(...)`) cannot be read twice: copy it into an
 * anonymous temporary file, which replaces *f. */
static int make_rereadable(const char *file, FILE **f)
{
    if (fseeko(*f, 0, SEEK_CUR) == 0)
        return 0;
    if (errno != ESPIPE)
        return ardi_fail_errno(ARD_ESYS, errno, "%s: cannot read", file);
    FILE *tmp = tmpfile();
    if (tmp == NULL)
        return ardi_fail_errno(ARD_ESYS, errno, "%s: cannot keep a copy of the pipe", file);
    char buf[16384];
    size_t n, total = 0;
    while ((n = fread(buf, 1, sizeof buf, *f)) > 0) {
        total += n;
        if (total > ARDY_PIPE_MAX) {
            fclose(tmp);
            return ardi_fail(ARD_EINVAL, "%s: larger than %u MiB (read from a pipe)", file,
                             ARDY_PIPE_MAX >> 20);
        }
        if (fwrite(buf, 1, n, tmp) != n) {
            int e = errno;
            fclose(tmp);
            return ardi_fail_errno(ARD_ESYS, e, "%s: cannot keep a copy of the pipe", file);
        }
    }
    if (ferror(*f)) {
        int e = errno;
        fclose(tmp);
        return ardi_fail_errno(ARD_ESYS, e, "%s: cannot read", file);
    }
    fclose(*f);
    rewind(tmp);
    *f = tmp;
    return 0;
}

int ardy_check_depth(const char *file, FILE **fp, int max_depth)
{
    int rc = make_rereadable(file, fp);
    if (rc < 0)
        return rc;
    FILE *f = *fp;
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p))
        return ardi_fail(ARD_ENOMEM, "%s: out of memory", file);
    yaml_parser_set_input_file(&p, f);
    int depth = 0;
    for (bool end = false; !end;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&p, &ev))
            break; /* the loader reports it */
        if (ev.type == YAML_MAPPING_START_EVENT || ev.type == YAML_SEQUENCE_START_EVENT) {
            if (++depth > max_depth) {
                rc = ardi_fail(ARD_EINVAL, "%s:%zu:%zu: nested deeper than %d levels", file,
                               ev.start_mark.line + 1, ev.start_mark.column + 1, max_depth);
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

int ardy_load(struct ardy_doc *y, const char *file, FILE **f, int max_depth, bool column)
{
    y->file = file;
    y->column = column;
    y->loaded = false;
    int rc = ardy_check_depth(file, f, max_depth);
    if (rc < 0)
        return rc;
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p))
        return ardi_fail(ARD_ENOMEM, "%s: out of memory", file);
    yaml_parser_set_input_file(&p, *f);
    if (!yaml_parser_load(&p, &y->doc)) {
        char where[32];
        if (column)
            snprintf(where, sizeof where, "%zu:%zu", p.problem_mark.line + 1,
                     p.problem_mark.column + 1);
        else
            snprintf(where, sizeof where, "%zu", p.problem_mark.line + 1);
        rc = ardi_fail(ARD_EINVAL, "%s:%s: YAML error: %s", file, where,
                       p.problem ? p.problem : "unknown");
    } else {
        y->loaded = true;
    }
    yaml_parser_delete(&p);
    return rc;
}

void ardy_free(struct ardy_doc *y)
{
    if (y->loaded)
        yaml_document_delete(&y->doc);
    y->loaded = false;
}

yaml_node_t *ardy_root(struct ardy_doc *y)
{
    return yaml_document_get_root_node(&y->doc);
}

yaml_node_t *ardy_node(const struct ardy_doc *y, int id)
{
    /* libyaml's getter takes no const document; it only reads it. */
    return yaml_document_get_node((yaml_document_t *)&y->doc, id);
}

const char *ardy_text(const yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

yaml_node_t *ardy_lookup(const struct ardy_doc *y, const yaml_node_t *map, const char *key)
{
    if (!map || map->type != YAML_MAPPING_NODE)
        return NULL;
    ARDY_FOR_PAIRS(y, map, k, v)
    {
        const char *t = ardy_text(k);
        if (t && !strcmp(t, key))
            return v;
    }
    return NULL;
}

int ardy_len(const yaml_node_t *seq)
{
    if (!seq || seq->type != YAML_SEQUENCE_NODE)
        return 0;
    return (int)(seq->data.sequence.items.top - seq->data.sequence.items.start);
}

int ardy_fail(const struct ardy_doc *y, const yaml_node_t *n, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (!n)
        return ardi_fail(ARD_EINVAL, "%s: %s", y->file, msg);
    if (y->column)
        return ardi_fail(ARD_EINVAL, "%s:%zu:%zu: %s", y->file, n->start_mark.line + 1,
                         n->start_mark.column + 1, msg);
    return ardi_fail(ARD_EINVAL, "%s:%zu: %s", y->file, n->start_mark.line + 1, msg);
}

int ardy_unknown_key(const struct ardy_doc *y, const yaml_node_t *k, const char *key,
                     const char *known)
{
    return ardy_fail(y, k, "unknown key '%s'%s%s", key, known ? " " : "", known ? known : "");
}

int ardy_long(const char *t, long lo, long hi, long *out)
{
    if (!t)
        return -1;
    char *end;
    errno = 0;
    long x = strtol(t, &end, 10);
    if (end == t || *end || errno || x < lo || x > hi)
        return -1;
    *out = x;
    return 0;
}

int ardy_double(const char *t, double lo, double hi, double *out)
{
    if (!t || !*t)
        return -1;
    char *end;
    errno = 0;
    double x = strtod(t, &end);
    if (end == t || *end || errno || !isfinite(x) || !(x >= lo && x <= hi))
        return -1;
    *out = x;
    return 0;
}

int ardy_bool(const char *t, bool *out)
{
    if (!t)
        return -1;
    if (!strcmp(t, "true") || !strcmp(t, "yes") || !strcmp(t, "on"))
        *out = true;
    else if (!strcmp(t, "false") || !strcmp(t, "no") || !strcmp(t, "off"))
        *out = false;
    else
        return -1;
    return 0;
}
