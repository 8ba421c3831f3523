/* export.c - `ard export FILE --csv`: a recording as CSV columns, one per element. */
#include "ard.h"
#include "ardnet_log.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* The options of `ard export`. */
struct exp_opts {
    const char *path, *onto, *out, *dir;
    bool csv;
    double hz;
    char **fields; /* --field, each [CONN:]PATH,... (room for argc) */
    int nf;
};

static int set_path(void *dest, char *word)
{
    struct exp_opts *o = dest;
    if (o->path)
        return ardi_fail(ARD_EOPTION, "one file at a time ('%s' and '%s')", o->path, word);
    o->path = word;
    return 0;
}

static const struct ardc_opt opts[] = {
    {"csv", 0, NULL, "CSV output (the only format so far; required)", .kind = ARDC_FLAG,
     ARDC_DEST(struct exp_opts, csv)},
    {"field", 0, "[CONN:]PATH",
     "a field or element: q, q[2], tick, arm.state:q (repeatable,\n"
     "comma-separated: arm.state:q,qd); default: every field of\n"
     "the connection",
     ARDT_PUSH(struct exp_opts, fields, nf)},
    {"resample", 0, "HZ", "rows on a grid of HZ per second", .kind = ARDC_REAL,
     ARDC_DEST(struct exp_opts, hz), .min = 1e-6, .max = 1e9},
    {"onto", 0, "CONN", "rows at the messages of CONN", .kind = ARDC_TEXT,
     ARDC_DEST(struct exp_opts, onto)},
    {"output", 'o', "OUT", "write to OUT instead of stdout", .kind = ARDC_TEXT,
     ARDC_DEST(struct exp_opts, out), .complete = "@file"},
    {"dir", 0, "DIR", "where the per-connection files go (the directory must exist)",
     .kind = ARDC_TEXT, ARDC_DEST(struct exp_opts, dir), .complete = "@dir"},
    {0},
};
const struct ardc_optset ardt_export_spec = {
    .see = "ard help export",
    .head =
        "usage: ard export FILE --csv [--field [CONN:]PATH...] [--resample HZ | --onto CONN]\n"
        "                  [-o OUT | --dir DIR]\n"
        "  Fields of a recording as CSV, flattened to one column per element (q[0], q[1], ...).\n"
        "  time = receive (log) time in seconds since the first message of the file; real_time =\n"
        "  the writer's realtime stamp in seconds since the Unix epoch.\n"
        "  Without --resample/--onto: one row per message of one connection (the file's only one,\n"
        "  or the one the fields name), with its seq. With them: fields of several connections on\n"
        "  one time base, each column holding its connection's latest value at that time (empty\n"
        "  before its first message): a grid of HZ rows per second, or the times of CONN's\n"
        "  messages.\n"
        "  A file of several connections without --field (and without --resample/--onto):\n"
        "  one file per connection, NAME.csv in --dir DIR (default: the current directory),\n"
        "  each named on stderr.\n",
    .opts = opts,
    .col = 24,
    .tail = "  A file without any channel written by ardnet (another program's MCAP) is refused,\n"
            "  naming its channels.\n"
            "exit codes: 0 ok, 1 no such file or connection, 3 damaged file or no ardnet channel,\n"
            "            100 usage, 111 system\n",
    .arg = set_path};

struct col {
    size_t conn;
    struct ardt_sel sel;
};

struct exp {
    ard_logr *r;
    struct ardt_type *types; /* per connection (desc "" and nfields 0 when foreign/opaque) */
    uint8_t **last;          /* latest packet per connection (resampling) */
    struct col *cols;
    size_t ncols;
    bool *used;
    FILE *o;
    uint64_t t0;
};

/* "a, b (not ardnet: json), c": the connections of the file, for messages. */
static void list_conns(const ard_logr *r, char *b, size_t len)
{
    size_t at = 0;
    b[0] = '\0';
    for (size_t i = 0; i < ard_logr_nconns(r) && at < len; i++) {
        const struct ard_log_conn *c = ard_logr_conn(r, i);
        int n = snprintf(b + at, len - at, "%s%s", i ? ", " : "", c->name);
        if (n > 0)
            at += (size_t)n;
        if (!c->ardnet && at < len) {
            n = snprintf(b + at, len - at, " (not ardnet: %s)", c->encoding);
            if (n > 0)
                at += (size_t)n;
        }
    }
    if (at >= len && len > 4)
        snprintf(b + len - 4, 4, "...");
}

static int add_col(struct exp *e, size_t conn, const char *path)
{
    struct ardt_type *t = &e->types[conn];
    const struct ard_log_conn *lc = ard_logr_conn(e->r, conn);
    if (!lc->ardnet)
        return ardi_fail(ARD_ESTALE,
                         "connection '%s' was not written by ardnet (message encoding '%s', "
                         "schema '%s'): its messages cannot be decoded",
                         lc->name, lc->encoding, lc->schema_encoding);
    if (t->nfields == 0)
        return ardi_fail(ARD_EOPTION, "connection '%s' has no fields to export (opaque)", lc->name);
    struct col *nc = realloc(e->cols, (e->ncols + 1) * sizeof *nc);
    if (!nc)
        return ardi_fail(ARD_ENOMEM, "out of memory");
    e->cols = nc;
    e->cols[e->ncols].conn = conn;
    int rc = ardt_sel_parse(t, path, &e->cols[e->ncols].sel);
    if (rc)
        return rc;
    e->ncols++;
    e->used[conn] = true;
    return 0;
}

static int add_all(struct exp *e, size_t conn)
{
    char b[24];
    for (size_t f = 0; f < e->types[conn].nfields; f++) {
        int rc = add_col(e, conn, ardt_field_name(&e->types[conn], f, b, sizeof b));
        if (rc)
            return rc;
    }
    return 0;
}

static void header(struct exp *e, bool multi, bool seq)
{
    fputs(seq ? "time,real_time,seq" : "time", e->o);
    for (size_t i = 0; i < e->ncols; i++) {
        const struct col *c = &e->cols[i];
        const struct ardt_type *t = &e->types[c->conn];
        char b[24];
        const char *n = ardt_field_name(t, c->sel.field, b, sizeof b);
        for (uint32_t k = 0; k < c->sel.count; k++) {
            fputc(',', e->o);
            if (multi)
                fprintf(e->o, "%s:", ard_logr_conn(e->r, c->conn)->name);
            if (t->fields[c->sel.field].count == 1)
                fputs(n, e->o);
            else
                fprintf(e->o, "%s[%u]", n, c->sel.first + k);
        }
    }
    fputc('\n', e->o);
}

/* Seconds of a time or a time difference (MCAP times are unsigned). */
static void put_usecs(FILE *o, uint64_t ns)
{
    fprintf(o, "%" PRIu64 ".%09" PRIu64, ns / 1000000000, ns % 1000000000);
}

/* The selected values; a connection without a message yet gives empty cells. */
static void row_values(struct exp *e, const bool *have)
{
    for (size_t i = 0; i < e->ncols; i++) {
        const struct col *c = &e->cols[i];
        const uint8_t *p = have[c->conn] ? e->last[c->conn] : NULL;
        for (uint32_t k = 0; k < c->sel.count; k++) {
            fputc(',', e->o);
            if (p)
                ardt_put_value(e->o, &e->types[c->conn].fields[c->sel.field], p, c->sel.first + k,
                               false);
        }
    }
    fputc('\n', e->o);
}

/* Several connections, no --field: NAME.csv per ardnet connection in dir, one pass over the
 * file each (rows as for one connection: time, real_time, seq, every element). */
static int export_each(struct exp *e, const char *path, const char *dir, uint64_t t0)
{
    size_t nc = ard_logr_nconns(e->r);
    bool *have = calloc(nc, sizeof *have);
    if (!have)
        return ardi_fail(ARD_ENOMEM, "out of memory");
    int rc = 0;
    for (size_t i = 0; i < nc && rc == 0; i++) {
        const struct ard_log_conn *c = ard_logr_conn(e->r, i);
        if (!c->ardnet) {
            ardt_err(0, "'%s': connection '%s' is not an ardnet one (%s): not exported", path,
                     c->name, c->encoding);
            continue;
        }
        e->ncols = 0;
        memset(e->used, 0, nc * sizeof *e->used);
        if ((rc = add_all(e, i)) != 0)
            break;
        e->used[i] = true;
        if (!e->last[i] && !(e->last[i] = calloc(1, c->size ? c->size : 1))) {
            rc = ardi_fail(ARD_ENOMEM, "out of memory");
            break;
        }
        char *fn = malloc(strlen(dir) + strlen(c->name) + 8);
        if (!fn) {
            rc = ardi_fail(ARD_ENOMEM, "out of memory");
            break;
        }
        sprintf(fn, "%s/%s.csv", dir, c->name);
        e->o = fopen(fn, "w");
        if (!e->o) {
            rc = ardi_fail(ARD_ESYS, "cannot create '%s': %s", fn, strerror(errno));
            free(fn);
            break;
        }
        header(e, false, true);
        uint64_t rows = 0;
        struct ard_log_msg m;
        int k = ard_logr_seek(e->r, 0);
        while (k == 0 && (k = ard_logr_next(e->r, &m)) == 1) {
            k = 0;
            if (m.conn != i || !m.packet)
                continue;
            memcpy(e->last[i], m.packet, c->size);
            have[i] = true;
            put_usecs(e->o, m.log_ns - t0);
            fputc(',', e->o);
            put_usecs(e->o, m.real_ns);
            fprintf(e->o, ",%" PRIu64, m.seq);
            row_values(e, have);
            rows++;
        }
        if (k < 0)
            rc = k;
        if (!ardt_flush(e->o) && rc == 0)
            rc = ardi_fail(ARD_ESYS, "writing '%s': %s", fn, strerror(errno));
        if (fclose(e->o) != 0 && rc == 0)
            rc = ardi_fail(ARD_ESYS, "writing '%s': %s", fn, strerror(errno));
        e->o = NULL;
        if (rc == 0)
            ardt_err(0, "%s: %" PRIu64 " row%s", fn, rows, rows == 1 ? "" : "s");
        free(fn);
    }
    free(have);
    return rc;
}

/* The command line into o, and the options that exclude each other; 0 or ARD_EOPTION (detail set).
 */
static int parse_export_args(int argc, char **argv, struct exp_opts *o)
{
    int rc = ardt_opts(&ardt_export_spec, argc, argv, o);
    if (rc)
        return rc;
    if (rc == 0 && !o->path)
        rc = ardi_fail(ARD_EOPTION, "no file given (see 'ard help export')");
    if (rc == 0 && !o->csv)
        rc = ardi_fail(ARD_EOPTION, "say --csv (the only export format so far)");
    if (rc == 0 && o->hz > 0 && o->onto)
        rc = ardi_fail(ARD_EOPTION, "--resample and --onto exclude each other");
    if (rc == 0 && o->dir && (o->out || o->nf || o->hz > 0 || o->onto))
        rc = ardi_fail(ARD_EOPTION, "--dir is for one file per connection: not with -o, --field, "
                                    "--resample or --onto");
    return rc;
}

/* The type of each ardnet connection of the file, which must have one; 0 or an ARD_E* code (detail
 * set). */
static int init_types(struct exp *e, const char *path, size_t nc)
{
    int rc = 0;
    for (size_t i = 0; i < nc && rc == 0; i++) {
        const struct ard_log_conn *c = ard_logr_conn(e->r, i);
        if (c->ardnet && c->type[0])
            rc = ardt_type_init(&e->types[i], c->type, c->size);
    }
    size_t n_ardnet = 0;
    for (size_t i = 0; i < nc; i++)
        n_ardnet += ard_logr_conn(e->r, i)->ardnet;
    char names[1024];
    if (rc == 0 && n_ardnet == 0) {
        list_conns(e->r, names, sizeof names);
        rc = ardi_fail(ARD_ESTALE,
                       "'%s' holds no channel written by ardnet (%s%s): nothing to export as "
                       "CSV",
                       path, nc ? "channels: " : "no channel at all", names);
    }
    return rc;
}

/* The columns of --field: "CONN:a,b,c", the connection named first holds for the paths after
 * it; without one, the file's only connection or --onto's. 0 or an ARD_E* code (detail set). */
static int add_fields(struct exp *e, const struct exp_opts *o, size_t nc, int onto_i)
{
    int rc = 0;
    for (int i = 0; i < o->nf && rc == 0; i++) {
        int ci = nc == 1 ? 0 : onto_i;
        for (char *save = NULL, *tok = strtok_r(o->fields[i], ",", &save); tok && rc == 0;
             tok = strtok_r(NULL, ",", &save)) {
            char *colon = strrchr(tok, ':');
            if (colon) {
                *colon = '\0';
                ci = ard_logr_find(e->r, tok);
                if (ci < 0) {
                    rc = ardi_fail(ARD_ENOENT, "'%s' has no connection '%s'", o->path, tok);
                    break;
                }
                tok = colon + 1;
            } else if (ci < 0) {
                rc = ardi_fail(ARD_EOPTION, "field '%s': say which connection (CONN:%s)", tok, tok);
                break;
            }
            rc = add_col(e, (size_t)ci, tok);
        }
    }
    return rc;
}

/* Fields of several connections need a time base; then the latest packet of each connection
 * used gets its buffer. 0 or an ARD_E* code (detail set). */
static int check_cols(struct exp *e, bool multi, size_t nc)
{
    int rc = 0;
    size_t only = e->ncols ? e->cols[0].conn : 0;
    for (size_t i = 0; rc == 0 && !multi && i < e->ncols; i++)
        if (e->cols[i].conn != only)
            rc = ardi_fail(ARD_EOPTION, "fields of several connections need --resample or --onto");
    for (size_t i = 0; rc == 0 && i < nc; i++)
        if (e->used[i] && !(e->last[i] = calloc(1, ard_logr_conn(e->r, i)->size)))
            rc = ardi_fail(ARD_ENOMEM, "out of memory");
    return rc;
}

/* The rows: one per message, per message of --onto's connection, or on the grid of step ns
 * (have: per connection, a message was seen). Returns ard_logr_next's last result. */
static int write_rows(struct exp *e, uint64_t step, int onto_i, bool *have)
{
    uint64_t next = e->t0;
    struct ard_log_msg m;
    int k;
    while ((k = ard_logr_next(e->r, &m)) == 1) {
        if (!e->used[m.conn] || !m.packet)
            continue;
        size_t size = ard_logr_conn(e->r, m.conn)->size;
        if (step) { /* grid points before this message see the values so far */
            while (next < m.log_ns) {
                put_usecs(e->o, next - e->t0); /* t0 is the first log time */
                row_values(e, have);
                next = next > UINT64_MAX - step ? UINT64_MAX : next + step; /* never wraps */
            }
        }
        memcpy(e->last[m.conn], m.packet, size);
        have[m.conn] = true;
        if (step || (onto_i >= 0 && (int)m.conn != onto_i))
            continue;
        put_usecs(e->o, m.log_ns - e->t0);
        if (onto_i < 0) {
            fputc(',', e->o);
            put_usecs(e->o, m.real_ns);
            fprintf(e->o, ",%" PRIu64, m.seq);
        }
        row_values(e, have);
    }
    return k;
}

/* The CSV into -o OUT or stdout, from the log time start_ns on; 0 or an ARD_E* code (detail set).
 */
static int write_csv(struct exp *e, const struct exp_opts *o, uint64_t start_ns, int onto_i,
                     bool multi, size_t nc)
{
    int rc = 0;
    e->o = o->out ? fopen(o->out, "w") : stdout;
    if (!e->o)
        return ardi_fail(ARD_ESYS, "cannot create '%s': %s", o->out, strerror(errno));
    bool *have = calloc(nc ? nc : 1, sizeof *have);
    if (!have)
        return ardi_fail(ARD_ENOMEM, "out of memory");
    header(e, multi, !multi);
    e->t0 = start_ns;
    int k = write_rows(e, o->hz > 0 ? (uint64_t)(1e9 / o->hz) : 0, onto_i, have);
    free(have);
    if (k < 0)
        rc = k;
    if (!ardt_flush(e->o) && rc == 0)
        rc = ardi_fail(ARD_ESYS, "writing the CSV: %s", strerror(errno));
    if (o->out)
        fclose(e->o);
    return rc;
}

/* The export of the open file e->r: the columns, then one CSV or one file per connection;
 * 0 or an ARD_E* code (detail set). */
static int export_file(struct exp *e, const struct exp_opts *o, size_t nc)
{
    struct ard_log_summary s;
    ard_logr_summary(e->r, &s);
    if (s.cut[0])
        ardt_err(0, "warning: %s", s.cut);
    e->types = calloc(nc ? nc : 1, sizeof *e->types);
    e->last = calloc(nc ? nc : 1, sizeof *e->last);
    e->used = calloc(nc ? nc : 1, sizeof *e->used);
    if (!e->types || !e->last || !e->used)
        return ardi_fail(ARD_ENOMEM, "out of memory");
    int rc = init_types(e, o->path, nc);
    int onto_i = -1;
    if (rc == 0 && o->onto && (onto_i = ard_logr_find(e->r, o->onto)) < 0)
        rc = ardi_fail(ARD_ENOENT, "'%s' has no connection '%s'", o->path, o->onto);
    if (rc == 0)
        rc = add_fields(e, o, nc, onto_i);
    if (rc == 0 && o->nf == 0) {
        char names[1024];
        if (onto_i >= 0)
            rc = add_all(e, (size_t)onto_i);
        else if (nc == 1 && !o->dir)
            rc = add_all(e, 0);
        else if (o->hz > 0 || o->out) {
            list_conns(e->r, names, sizeof names);
            rc = ardi_fail(ARD_EOPTION,
                           "the file has %zu connections (%s): choose with --field "
                           "CONN:PATH, or leave -o out for one NAME.csv each (--dir DIR)",
                           nc, names);
        } else
            return export_each(e, o->path, o->dir ? o->dir : ".", s.start_ns);
    }
    bool multi = o->hz > 0 || o->onto;
    if (rc == 0)
        rc = check_cols(e, multi, nc);
    if (rc)
        return rc;
    return write_csv(e, o, s.start_ns, onto_i, multi, nc);
}

int cmd_export(int argc, char **argv)
{
    struct exp e = {0};
    struct exp_opts o = {0};
    o.fields = calloc((size_t)argc, sizeof *o.fields);
    if (!o.fields)
        return ardt_err(ARDT_SYS, "out of memory");
    int rc = parse_export_args(argc, argv, &o);
    if (rc) {
        free(o.fields);
        return rc;
    }
    e.r = ard_logr_open(o.path);
    if (!e.r) {
        free(o.fields);
        return ardt_liberr(ard_lasterror());
    }
    size_t nc = ard_logr_nconns(e.r);
    rc = export_file(&e, &o, nc);
    for (size_t i = 0; i < nc && e.types; i++) {
        ardt_type_free(&e.types[i]);
        if (e.last)
            free(e.last[i]);
    }
    free(e.types);
    free(e.last);
    free(e.used);
    free(e.cols);
    free(o.fields);
    ard_logr_close(e.r);
    return rc;
}
