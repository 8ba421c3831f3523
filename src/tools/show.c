/* show.c - `ard show`: the newest packet decoded by its type; -f follows every new one, also
 * across a writer restart and a re-created object. */
#include "ard.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum fmt { TEXT, CSV, JSON }; /* the order of --format's words */

/* The options of `ard show` (the connection and the format go on into struct show). */
struct show_opts {
    const char *conn;
    int fmt; /* enum fmt */
    bool follow, on_change;
    uint64_t count;
    const char *filter_src;
    char **fieldargs, **textargs; /* --field and --text, as given (room for argc) */
    int nfa, nta;
};

static int set_conn(void *dest, char *word)
{
    struct show_opts *o = dest;
    if (o->conn != NULL)
        return ardi_fail(ARD_EOPTION, "one connection at a time ('%s' and '%s')", o->conn, word);
    o->conn = word;
    return 0;
}

/* --on-change implies -f. */
static int on_change(void *dest, const struct ardc_opt *o, const char *value)
{
    (void)o, (void)value;
    ((struct show_opts *)dest)->follow = true;
    return 0;
}

static int set_filter(void *dest, const struct ardc_opt *o, const char *value)
{
    (void)o;
    struct show_opts *so = dest;
    if (so->filter_src)
        return ardi_fail(ARD_EOPTION, "--filter given twice (join them with &&)");
    so->filter_src = value;
    return 0;
}

static const struct ardc_opt opts[] = {
    {"follow", 'f', NULL,
     "print every new packet until interrupted (a packet the terminal\n"
     "cannot keep up with is skipped, and counted)",
     .kind = ARDC_FLAG, ARDC_DEST(struct show_opts, follow)},
    {"field", 0, "PATH",
     "only this field or element: q, q[2], tick, f0 (unnamed field 0);\n"
     "repeatable, or comma-separated",
     ARDT_PUSH(struct show_opts, fieldargs, nfa), .complete = "@field"},
    {"format", 0, "FMT",
     "text (default), csv (header row, then one row per packet) or json\n"
     "(one object per line)",
     .kind = ARDC_CHOICE, ARDC_DEST(struct show_opts, fmt), .complete = "text csv json"},
    {"json", 0, NULL, "same as --format json", .kind = ARDC_SET, ARDC_DEST(struct show_opts, fmt),
     .set = JSON},
    {"count", 'n', "N", "stop after N packets printed (with -f)", .kind = ARDC_UINT,
     ARDC_DEST(struct show_opts, count)},
    {"on-change", 0, NULL,
     "print a packet only when the selected fields differ from the last\n"
     "one printed (implies -f)",
     .kind = ARDC_FLAG, ARDC_DEST(struct show_opts, on_change), .call = on_change},
    {"filter", 0, "EXPR",
     "print only packets for which EXPR holds, e.g.\n"
     "'q[0] > 0.5 && tick % 10 == 0' (grammar: ard(1), docs/ard.md)",
     .kind = ARDC_CALL, .call = set_filter},
    {"text", 0, "FIELD",
     "print the u8/i8 array FIELD as text (repeatable); in the text\n"
     "format, u8 arrays of NUL-terminated printable bytes are text anyway",
     ARDT_PUSH(struct show_opts, textargs, nta), .complete = "@field"},
    {0},
};
const struct ardc_optset ardt_show_spec = {
    .see = "ard help show",
    .head =
        "usage: ard show CONNECTION [-f] [--field PATH...] [--format text|csv|json] [-n COUNT]\n"
        "  The newest packet of CONNECTION decoded by its type, with sequence number, age and\n"
        "  both send times (writer's CLOCK_MONOTONIC and CLOCK_REALTIME). Opaque connections\n"
        "  print hex. ard show attaches as an ordinary reader: the writer is never slowed.\n",
    .opts = opts,
    .col = 22,
    .arg = set_conn};

struct show {
    const char *conn;
    struct ardt_type t;
    struct ardt_sel *sel;
    size_t nsel;
    enum fmt fmt;
    bool header_done;
    bool *text; /* per field: --text */
};

static bool printable(uint8_t c)
{
    return c >= 0x20 && c <= 0x7e;
}

/* The automatic text rule: a u8 array of 2 or more bytes whose bytes are all printable ASCII
 * (0x20-0x7e) or NUL, with at least one printable byte and a NUL as the last byte. */
static bool looks_text(const struct ard_field *f, const uint8_t *b)
{
    if (f->kind != ARD_U8 || f->count < 2 || b[f->count - 1] != 0)
        return false;
    bool any = false;
    for (uint32_t i = 0; i < f->count; i++) {
        if (b[i] != 0 && !printable(b[i]))
            return false;
        any |= b[i] != 0;
    }
    return any;
}

static bool as_text(const struct show *s, const struct ardt_sel *sel, const uint8_t *pkt)
{
    const struct ard_field *f = &s->t.fields[sel->field];
    return sel->whole && ((s->text && s->text[sel->field]) || looks_text(f, pkt + f->offset));
}

/* The strings of a text field (the text format: --text or the automatic rule; JSON and CSV,
 * whose types must not change with the content: --text only): the runs of bytes between NULs (empty
 * runs left out), each quoted, non-printable bytes as \xHH. text: "a" "b"; json: "a" or ["a","b"];
 * csv: one quoted cell, the runs separated by a space. */
static void put_text(FILE *o, const struct ard_field *f, const uint8_t *pkt, enum fmt fmt)
{
    const uint8_t *b = pkt + f->offset;
    uint32_t n = f->count, runs = 0;
    for (uint32_t i = 0; i < n; i++)
        runs += b[i] != 0 && (i == 0 || b[i - 1] == 0);
    if (fmt == JSON && runs > 1)
        fputc('[', o);
    if (fmt == CSV || runs == 0)
        fputc('"', o);
    bool open = false;
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (b[i] == 0) {
            if (open && fmt != CSV)
                fputc('"', o);
            open = false;
            continue;
        }
        if (!open) {
            if (k++)
                fputs(fmt == JSON ? "," : " ", o);
            if (fmt != CSV)
                fputc('"', o);
            open = true;
        }
        uint8_t c = b[i];
        if (fmt == CSV && c == '"')
            fputs("\"\"", o);
        else if (fmt != CSV && (c == '"' || c == '\\'))
            fprintf(o, "\\%c", c);
        else if (printable(c))
            fputc(c, o);
        else if (fmt == JSON)
            fprintf(o, "\\u%04x", c);
        else
            fprintf(o, "\\x%02x", c);
    }
    if (open && fmt != CSV)
        fputc('"', o);
    if (fmt == CSV || runs == 0)
        fputc('"', o);
    if (fmt == JSON && runs > 1)
        fputc(']', o);
}

static void put_hex(FILE *o, const uint8_t *b, size_t n, bool lines)
{
    for (size_t i = 0; i < n; i++) {
        if (lines && i % 32 == 0)
            fprintf(o, "%s  %08zx ", i ? "\n" : "", i);
        fprintf(o, "%02x", b[i]);
    }
    if (lines)
        fputc('\n', o);
}

static void put_sel_name(FILE *o, const struct show *s, const struct ardt_sel *sel, uint32_t k)
{
    char b[24];
    const char *n = ardt_field_name(&s->t, sel->field, b, sizeof b);
    if (s->t.fields[sel->field].count == 1)
        fputs(n, o);
    else
        fprintf(o, "%s[%u]", n, sel->first + k);
}

/* --text in JSON: a whole text field as one string. */
static bool json_text(FILE *o, const struct ardt_sel *sel, const uint8_t *pkt, void *arg)
{
    const struct show *s = arg;
    if (!sel->whole || !s->text[sel->field])
        return false;
    put_text(o, &s->t.fields[sel->field], pkt, JSON);
    return true;
}

/* The CSV header: the fixed columns, then one per element selected (one per --text field). */
static void put_csv_header(FILE *o, const struct show *s)
{
    fputs("seq,mono_ns,real_ns,skipped", o);
    if (s->t.nfields == 0)
        fputs(",hex", o);
    for (size_t i = 0; i < s->nsel; i++) {
        if (s->sel[i].whole && s->text && s->text[s->sel[i].field]) {
            char b[24];
            fprintf(o, ",%s", ardt_field_name(&s->t, s->sel[i].field, b, sizeof b));
            continue;
        }
        for (uint32_t k = 0; k < s->sel[i].count; k++) {
            fputc(',', o);
            put_sel_name(o, s, &s->sel[i], k);
        }
    }
    fputc('\n', o);
}

/* One packet as a CSV row (the header before the first). */
static void put_csv(FILE *o, struct show *s, const uint8_t *pkt, struct ard_info in)
{
    if (!s->header_done) {
        put_csv_header(o, s);
        s->header_done = true;
    }
    fprintf(o, "%llu,%lld,%lld,%llu", (unsigned long long)in.seq, (long long)in.mono_ns,
            (long long)in.real_ns, (unsigned long long)in.skipped);
    if (s->t.nfields == 0) {
        fputc(',', o);
        put_hex(o, pkt, s->t.size, false);
    }
    for (size_t i = 0; i < s->nsel; i++) {
        /* CSV columns are fixed by the header: only --text makes one text column. */
        if (s->sel[i].whole && s->text && s->text[s->sel[i].field]) {
            fputc(',', o);
            put_text(o, &s->t.fields[s->sel[i].field], pkt, CSV);
            continue;
        }
        for (uint32_t k = 0; k < s->sel[i].count; k++) {
            fputc(',', o);
            ardt_put_value(o, &s->t.fields[s->sel[i].field], pkt, s->sel[i].first + k, false);
        }
    }
    fputc('\n', o);
}

/* One packet as a line of JSON. */
static void put_json(FILE *o, struct show *s, const uint8_t *pkt, struct ard_info in, int64_t now)
{
    fputs("{\"connection\":", o);
    ardt_put_json_str(o, s->conn);
    fputs(",\"type\":", o);
    ardt_put_json_str(o, s->t.desc);
    fprintf(o, ",\"seq\":%llu,\"age_ns\":%lld,\"mono_ns\":%lld,\"real_ns\":%lld,\"skipped\":%llu",
            (unsigned long long)in.seq, (long long)(now - in.mono_ns), (long long)in.mono_ns,
            (long long)in.real_ns, (unsigned long long)in.skipped);
    if (s->t.nfields == 0) {
        fputs(",\"hex\":\"", o);
        put_hex(o, pkt, s->t.size, false);
        fputs("\"}\n", o);
        return;
    }
    fputs(",\"fields\":", o);
    ardt_put_fields_json(o, &s->t, s->sel, s->nsel, pkt, s->text ? json_text : NULL, s);
    fputs("}\n", o);
}

/* One packet as text: a line of its stamps, then one line per selection, names aligned. */
static void put_plain(FILE *o, const struct show *s, const uint8_t *pkt, struct ard_info in,
                      int64_t now)
{
    fprintf(o, "%s  seq %llu  age ", s->conn, (unsigned long long)in.seq);
    ardt_put_age(o, now - in.mono_ns);
    fprintf(o, "  mono %lld.%09lld  real ", (long long)(in.mono_ns / 1000000000),
            (long long)(in.mono_ns % 1000000000));
    ardt_put_real(o, in.real_ns);
    if (in.skipped)
        fprintf(o, "  skipped %llu", (unsigned long long)in.skipped);
    fputc('\n', o);
    if (s->t.nfields == 0) {
        put_hex(o, pkt, s->t.size, true);
        return;
    }
    int w = 1;
    for (size_t i = 0; i < s->nsel; i++) {
        char b[24];
        int l = (int)strlen(ardt_field_name(&s->t, s->sel[i].field, b, sizeof b)) +
                (s->sel[i].whole ? 0 : 12);
        w = l > w ? l : w;
    }
    for (size_t i = 0; i < s->nsel; i++) {
        const struct ardt_sel *sel = &s->sel[i];
        const struct ard_field *f = &s->t.fields[sel->field];
        char key[64], b[24];
        const char *n = ardt_field_name(&s->t, sel->field, b, sizeof b);
        if (sel->whole)
            snprintf(key, sizeof key, "%s", n);
        else
            snprintf(key, sizeof key, "%s[%u]", n, sel->first);
        fprintf(o, "  %-*s =", w, key);
        if (as_text(s, sel, pkt)) {
            fputc(' ', o);
            put_text(o, f, pkt, TEXT);
            fputc('\n', o);
            continue;
        }
        for (uint32_t k = 0; k < sel->count; k++) {
            fputc(' ', o);
            ardt_put_value(o, f, pkt, sel->first + k, false);
        }
        fputc('\n', o);
    }
}

/* One packet on stdout in the chosen format. */
static void put_packet(struct show *s, const uint8_t *pkt, struct ard_info in, int64_t now)
{
    if (s->fmt == CSV)
        put_csv(stdout, s, pkt, in);
    else if (s->fmt == JSON)
        put_json(stdout, s, pkt, in, now);
    else
        put_plain(stdout, s, pkt, in, now);
}

static int add_sel(struct show *s, char *list)
{
    for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        struct ardt_sel *nv = realloc(s->sel, (s->nsel + 1) * sizeof *nv);
        if (!nv)
            return ardi_fail(ARD_ENOMEM, "out of memory");
        s->sel = nv;
        int rc = ardt_sel_parse(&s->t, tok, &s->sel[s->nsel]);
        if (rc)
            return rc;
        s->nsel++;
    }
    return 0;
}

/* --on-change: do the selected fields (the whole packet when opaque) hold the same bytes? */
static bool same_sel(const struct show *s, const uint8_t *a, const uint8_t *b)
{
    if (s->t.nfields == 0)
        return memcmp(a, b, s->t.size) == 0;
    for (size_t i = 0; i < s->nsel; i++) {
        const struct ard_field *f = &s->t.fields[s->sel[i].field];
        size_t es = ard_basic_size(f->kind);
        size_t off = f->offset + (size_t)s->sel[i].first * es;
        if (memcmp(a + off, b + off, (size_t)s->sel[i].count * es) != 0)
            return false;
    }
    return true;
}

/* The port read, its packet size and filter, and the buffers of the newest and the last
 * packet shown. */
struct show_run {
    ard_port *p;
    size_t size;
    struct ardt_filter *filter;
    uint8_t *pkt, *prev;
};

/* The command line into o, the connection and the format into s; 0 or an ARD_E* code (detail
 * set). */
static int parse_show_args(int argc, char **argv, struct show *s, struct show_opts *o)
{
    int rc = ardt_opts(&ardt_show_spec, argc, argv, o);
    if (rc)
        return rc;
    if (o->conn == NULL)
        return ardi_fail(ARD_EOPTION, "which connection? (usage: ard show CONNECTION)");
    s->conn = o->conn;
    s->fmt = (enum fmt)o->fmt;
    return 0;
}

/* The selections of --field (every field by default) and the --text fields; 0 or an ARD_E*
 * code (detail set). */
static int select_fields(struct show *s, const struct show_opts *o)
{
    int rc = 0;
    for (int i = 0; i < o->nfa && rc == 0; i++)
        rc = add_sel(s, o->fieldargs[i]);
    if (rc == 0 && s->nsel == 0 && s->t.nfields > 0) {
        s->sel = calloc(s->t.nfields, sizeof *s->sel);
        if (!s->sel)
            rc = ardi_fail(ARD_ENOMEM, "out of memory");
        for (size_t i = 0; rc == 0 && i < s->t.nfields; i++)
            s->sel[s->nsel++] =
                (struct ardt_sel){.field = i, .count = s->t.fields[i].count, .whole = true};
    }
    for (int i = 0; i < o->nta && rc == 0; i++) {
        struct ardt_sel sel;
        if ((rc = ardt_sel_parse(&s->t, o->textargs[i], &sel)) != 0)
            break;
        const struct ard_field *f = &s->t.fields[sel.field];
        if (!sel.whole || (f->kind != ARD_U8 && f->kind != ARD_I8))
            rc = ardi_fail(ARD_EOPTION, "--text %s: only a whole u8 or i8 array is text",
                           o->textargs[i]);
        else if (!s->text && !(s->text = calloc(s->t.nfields, sizeof *s->text)))
            rc = ardi_fail(ARD_ENOMEM, "out of memory");
        else
            s->text[sel.field] = true;
    }
    return rc;
}

/* The type, the selections, the filter and the buffers; 0 or an ARD_E* code (detail set). */
static int setup_show(struct show *s, const struct show_opts *o, struct show_run *u)
{
    u->size = ard_port_size(u->p);
    int rc = ardt_type_init(&s->t, ard_port_type(u->p), u->size);
    if (rc == 0)
        rc = select_fields(s, o);
    if (rc == 0 && o->filter_src)
        rc = ardt_filter_new(&s->t, o->filter_src, &u->filter);
    u->pkt = rc == 0 ? malloc(u->size) : NULL;
    u->prev = rc == 0 && o->on_change ? malloc(u->size) : NULL;
    if (rc == 0 && (!u->pkt || (o->on_change && !u->prev)))
        rc = ardi_fail(ARD_ENOMEM, "out of memory");
    return rc;
}

/* ardkill removed the connection and a new run created it afresh: follow the new one, of the
 * same layout. Returns false (rc set, or u->p NULL) when showing ends. */
static bool reattach(const struct show *s, struct show_run *u, int *rc)
{
    ard_close(u->p);
    size_t old = u->size;
    u->p = ardt_attach(s->conn, ARD_IN, rc);
    if (!u->p)
        return false;
    if (ard_port_size(u->p) != old || strcmp(ard_port_type(u->p), s->t.desc) != 0) {
        *rc = ardi_fail(ARD_ESTALE,
                        "connection '%s' was re-created with another layout "
                        "(size %zu type '%s')",
                        s->conn, ard_port_size(u->p), ard_port_type(u->p));
        return false;
    }
    return true;
}

/* Shows the newest packet, or with -f each new one until a signal or -n COUNT; 0 or an ARD_E*
 * code (detail set). */
static int show_loop(struct show *s, const struct show_opts *o, struct show_run *u)
{
    int rc = 0;
    bool have_prev = false;
    uint64_t shown = 0;
    while (rc == 0 && !ardt_stop) {
        int r = o->follow ? ard_rec_timed(u->p, u->pkt, 500000000) : ard_tryrec(u->p, u->pkt);
        if (r == ARD_ENODATA) {
            rc = ardi_fail(ARD_ENODATA, "connection '%s': nothing was sent yet", s->conn);
            break;
        }
        if (r == ARD_ETIMEDOUT || r == ARD_EINTR) {
            if (r == ARD_ETIMEDOUT && ard_port_recreated(u->p) && !reattach(s, u, &rc))
                break;
            continue;
        }
        if (r < 0) {
            rc = r;
            break;
        }
        if (u->filter && !ardt_filter_pass(u->filter, u->pkt)) {
            if (!o->follow) {
                rc = ardi_fail(ARD_ENODATA,
                               "connection '%s': the newest packet (seq %llu) does not pass "
                               "--filter",
                               s->conn, (unsigned long long)ard_port_info(u->p).seq);
                break;
            }
            continue;
        }
        if (o->on_change) {
            if (have_prev && same_sel(s, u->prev, u->pkt))
                continue;
            memcpy(u->prev, u->pkt, u->size);
            have_prev = true;
        }
        put_packet(s, u->pkt, ard_port_info(u->p), ard_now_ns());
        if (!ardt_flush(stdout))
            break; /* the reader of our output went away (head, less): a clean end */
        shown++;
        if (!o->follow || (o->count && shown >= o->count))
            break;
    }
    return rc;
}

int cmd_show(int argc, char **argv)
{
    struct show s = {0};
    struct show_opts o = {0};
    struct show_run u = {0};
    o.fieldargs = calloc((size_t)argc, sizeof *o.fieldargs);
    o.textargs = calloc((size_t)argc, sizeof *o.textargs);
    int rc = 0;
    if (!o.fieldargs || !o.textargs) {
        free(o.fieldargs);
        free(o.textargs);
        return ardt_err(ARDT_SYS, "out of memory");
    }
    rc = parse_show_args(argc, argv, &s, &o);
    if (rc == 0) {
        ardt_signals();
        u.p = ardt_attach(s.conn, ARD_IN, &rc);
    }
    if (rc || !u.p) {
        free(o.fieldargs);
        free(o.textargs);
        return rc;
    }
    rc = setup_show(&s, &o, &u);
    if (rc == 0)
        rc = show_loop(&s, &o, &u);
    ard_close(u.p);
    free(u.pkt);
    free(u.prev);
    ardt_filter_free(u.filter);
    free(s.text);
    free(s.sel);
    free(o.fieldargs);
    free(o.textargs);
    ardt_type_free(&s.t);
    return rc;
}
