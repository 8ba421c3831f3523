/* info.c - `ard info FILE`: what a recording holds. */
#include "ard.h"
#include "ardnet_log.h"

#include <inttypes.h>
#include <string.h>

/* The options of `ard info`. */
struct info_opts {
    const char *path;
    bool json;
};

static int set_path(void *dest, char *word)
{
    struct info_opts *o = dest;
    if (o->path)
        return ardi_fail(ARD_EOPTION, "one file at a time ('%s' and '%s')", o->path, word);
    o->path = word;
    return 0;
}

static const struct ardc_opt opts[] = {
    {"json", 0, NULL, "all of it as one JSON object", .kind = ARDC_FLAG,
     ARDC_DEST(struct info_opts, json)},
    {0},
};
const struct ardc_optset ardt_info_spec = {
    .see = "ard help info",
    .head =
        "usage: ard info FILE [--json]\n"
        "  Connections of a recording (type, size, messages, missed packets, rate), its duration,\n"
        "  compression and whether it is complete, then its attachments (name, media type, size)\n"
        "  and metadata records (name, key = value) of any writer. A file without messages has\n"
        "  no start time ('-', null in JSON). The whole file is checked first: a damaged\n"
        "  or foreign file is refused with the byte offset and the cause (exit 3); a file cut\n"
        "  short (recorder killed) is read up to its last complete chunk, with a warning.\n",
    .opts = opts,
    .col = 10,
    .tail =
        "exit codes: 0 ok, 1 no such file, 3 not a recording or damaged, 100 usage, 111 system\n",
    .arg = set_path};

/* Attachments and metadata records, of any writer. JSON: ,"attachments":[{name,media_type,
 * size,log_ns,create_ns}...],"metadata":[{name,values:{k:v...}}...] after the connections. */
static void put_extras(const ard_logr *r, FILE *o, bool json)
{
    size_t na = ard_logr_nattachments(r), nm = ard_logr_nmeta(r);
    if (json) {
        fputs("],\"attachments\":[", o);
        for (size_t i = 0; i < na; i++) {
            const struct ard_log_attachment *a = ard_logr_attachment(r, i);
            fputs(i ? ",{\"name\":" : "{\"name\":", o);
            ardt_put_json_str(o, a->name);
            fputs(",\"media_type\":", o);
            ardt_put_json_str(o, a->media_type);
            fprintf(o, ",\"size\":%" PRIu64 ",\"log_ns\":%" PRIu64 ",\"create_ns\":%" PRIu64 "}",
                    a->size, a->log_ns, a->create_ns);
        }
        fputs("],\"metadata\":[", o);
        for (size_t i = 0; i < nm; i++) {
            const char *const *kv;
            size_t n;
            const char *name = ard_logr_meta_at(r, i, &kv, &n);
            fputs(i ? ",{\"name\":" : "{\"name\":", o);
            ardt_put_json_str(o, name);
            fputs(",\"values\":{", o);
            for (size_t k = 0; k < n; k++) {
                fputs(k ? "," : "", o);
                ardt_put_json_str(o, kv[2 * k]);
                fputc(':', o);
                ardt_put_json_str(o, kv[2 * k + 1]);
            }
            fputs("}}", o);
        }
        fputc(']', o);
        return;
    }
    fprintf(o, "attachments: %zu\n", na);
    for (size_t i = 0; i < na; i++) {
        const struct ard_log_attachment *a = ard_logr_attachment(r, i);
        fprintf(o, "  %-22s %-24s %10" PRIu64 " bytes\n", a->name, a->media_type, a->size);
    }
    fprintf(o, "metadata:    %zu record%s\n", nm, nm == 1 ? "" : "s");
    for (size_t i = 0; i < nm; i++) {
        const char *const *kv;
        size_t n;
        const char *name = ard_logr_meta_at(r, i, &kv, &n);
        fprintf(o, "  %s\n", name);
        for (size_t k = 0; k < n; k++)
            fprintf(o, "    %s = %s\n", kv[2 * k], kv[2 * k + 1]);
    }
}

/* The file's summary as the start of a JSON object, up to its list of connections. */
static void put_summary_json(FILE *o, const char *path, const struct ard_log_summary *s,
                             const char *host, const char *dom)
{
    fputs("{\"file\":", o);
    ardt_put_json_str(o, path);
    fprintf(o, ",\"bytes\":%" PRIu64 ",\"complete\":%s,\"compression\":", s->file_size,
            s->complete ? "true" : "false");
    ardt_put_json_str(o, s->compression[0] ? s->compression : "none");
    fputs(",\"host\":", o);
    ardt_put_json_str(o, host ? host : "");
    fputs(",\"domain\":", o);
    ardt_put_json_str(o, dom ? dom : "");
    fprintf(o, ",\"messages\":%" PRIu64 ",\"chunks\":%" PRIu64, s->messages, s->chunks);
    if (s->messages)
        fprintf(o, ",\"start_ns\":%" PRIu64 ",\"end_ns\":%" PRIu64, s->start_ns, s->end_ns);
    else
        fputs(",\"start_ns\":null,\"end_ns\":null", o);
    fputs(",\"connections\":[", o);
}

/* The file's summary as text, up to the header of the table of connections. */
static void put_summary_text(FILE *o, const char *path, const struct ard_log_summary *s,
                             const char *host, const char *dom)
{
    double dur = s->messages ? (double)(s->end_ns - s->start_ns) / 1e9 : 0;
    fprintf(o, "file:        %s (%" PRIu64 " bytes%s)\n", path, s->file_size,
            s->complete ? "" : ", cut short");
    fprintf(o, "recorded on: %s, domain %s\n", host ? host : "?", dom ? dom : "?");
    fprintf(o, "start:       ");
    if (s->messages)
        ardt_put_real(o, s->start_ns);
    else
        fputs("- (no messages)", o);
    fprintf(o,
            "\nduration:    %.3f s\nmessages:    %" PRIu64 " in %" PRIu64
            " chunks, compression %s\n",
            dur, s->messages, s->chunks, s->compression[0] ? s->compression : "none");
    fprintf(o, "%-24s %8s %10s %8s %10s  %s\n", "connection", "size", "messages", "missed", "rate",
            "type");
}

/* One connection per JSON object or table row: size, messages, missed and rate. */
static void put_conns(const ard_logr *r, FILE *o, bool json)
{
    for (size_t i = 0; i < ard_logr_nconns(r); i++) {
        const struct ard_log_conn *c = ard_logr_conn(r, i);
        double span = (double)(c->last_ns - c->first_ns) / 1e9;
        double hz = c->count > 1 && span > 0 ? (double)(c->count - 1) / span : 0;
        if (json) {
            fputs(i ? ",{\"name\":" : "{\"name\":", o);
            ardt_put_json_str(o, c->name);
            fputs(",\"type\":", o);
            ardt_put_json_str(o, c->type);
            fputs(",\"topic\":", o);
            ardt_put_json_str(o, c->topic);
            fputs(",\"schema_name\":", o);
            ardt_put_json_str(o, c->schema_name);
            fprintf(o,
                    ",\"size\":%zu,\"messages\":%" PRIu64 ",\"missed\":%" PRIu64
                    ",\"rate_hz\":%.6g}",
                    c->size, c->count, c->missed, hz);
        } else {
            char rate[32];
            ardt_fmt_rate(rate, sizeof rate, hz);
            fprintf(o, "%-24s %8zu %10" PRIu64 " %8" PRIu64 " %10s  %s\n", c->name, c->size,
                    c->count, c->missed, rate,
                    c->ardnet ? (c->type[0] ? c->type : "(opaque)") : "(not ardnet)");
        }
    }
}

int cmd_info(int argc, char **argv)
{
    struct info_opts io = {0};
    int rc = ardt_opts(&ardt_info_spec, argc, argv, &io);
    if (rc)
        return ardt_liberr(rc);
    const char *path = io.path;
    bool json = io.json;
    if (!path)
        return ardt_err(ARDT_USAGE, "no file given (see 'ard help info')");
    ard_logr *r = ard_logr_open(path);
    if (!r)
        return ardt_liberr(ard_lasterror());
    struct ard_log_summary s;
    ard_logr_summary(r, &s);
    if (s.cut[0])
        ardt_err(0, "warning: %s", s.cut);
    const char *host = ard_logr_meta(r, "ardnet", "host");
    const char *dom = ard_logr_meta(r, "ardnet", "domain");
    FILE *o = stdout;
    if (json)
        put_summary_json(o, path, &s, host, dom);
    else
        put_summary_text(o, path, &s, host, dom);
    put_conns(r, o, json);
    put_extras(r, o, json);
    if (json)
        fputs("}\n", o);
    ard_logr_close(r);
    return ARDT_OK;
}
