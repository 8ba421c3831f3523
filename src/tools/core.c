/* core.c - what every `ard` subcommand shares: messages and exit codes, signals, reading a
 * connection's object without attaching, who is attached, types, field paths and values. */
#include "ard.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct ardt_global ardt_g;
const char *ardt_sub = "ard";
volatile int ardt_stop;

/* ---- messages and exit codes ---------------------------------------------------------------- */

int ardt_err(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fflush(stdout);
    if (strcmp(ardt_sub, "ard") == 0)
        fputs("ard: ", stderr);
    else
        fprintf(stderr, "ard %s: ", ardt_sub);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return code;
}

int ardt_fail(int code, const char *fmt, ...)
{
    char msg[1024]; /* formatted first: the arguments may hold ard_errdetail() */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return ardi_fail(code, "%s", msg);
}

int ardt_code(int e)
{
    switch (e) {
    case ARD_ENOENT:
        return ARDT_NOENT;
    case ARD_EBUSY:
        return ARDT_BUSY;
    case ARD_ESTALE:
    case ARD_EACCES:
    case ARD_ETYPE:
        return ARDT_STALE;
    case ARD_ENODATA:
        return ARDT_NODATA;
    default: /* bad argument or option: 100, the rest: 111 */
        return ardc_exit_code(e);
    }
}

int ardt_liberr(int e)
{
    const char *d = ard_errdetail();
    return ardt_err(ardt_code(e), "%s", d[0] ? d : ard_strerror(e));
}

const struct ardc_opt ardt_watch_opts[] = {
    {"interval", 'i', "S", "seconds between reports (default 1)", .kind = ARDC_REAL,
     ARDC_DEST(struct ardt_watch, interval), .min = 0.01, .max = 86400},
    {"count", 'n', "N", "stop after N reports", .kind = ARDC_UINT,
     ARDC_DEST(struct ardt_watch, reports)},
    {"json", 0, NULL, "one JSON object per connection and report", .kind = ARDC_FLAG,
     ARDC_DEST(struct ardt_watch, json)},
    {0},
};

int ardt_watch_name(void *dest, char *word)
{
    struct ardt_watch *w = dest;
    w->names[w->n++] = word;
    return 0;
}

int ardt_parse_watch(const struct ardc_optset *s, int argc, char **argv, struct ardt_watch *w)
{
    w->interval = 1;
    w->reports = 0;
    w->json = false;
    w->n = 0;
    int rc = ardt_opts(s, argc, argv, w);
    if (rc == 0 && w->n == 0)
        rc = ardi_fail(ARD_EOPTION, "which connection? (usage: ard %s CONNECTION...)", ardt_sub);
    return rc;
}

static void on_stop(int sig)
{
    (void)sig;
    ardt_stop = 1;
}

void ardt_signals(void)
{
    struct sigaction sa = {.sa_handler = on_stop};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}

bool ardt_flush(FILE *f)
{
    return fflush(f) == 0 && !ferror(f);
}

/* ---- reading a connection's object without attaching ----------------------------------------- */

int ardt_view_open(const char *name, ard_view **v)
{
    return ard_view_open(ardt_g.domain, name, v);
}

static void view_probe(ard_view *v, struct ardt_probe *p)
{
    struct ard_conn_stat st;
    ard_view_stat(v, &st);
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", st.name);
    snprintf(p->type, sizeof p->type, "%s", st.type);
    p->size = st.size;
    p->mode = st.mode;
    p->uid = ard_view_uid(v);
    p->ino = ard_view_inode(v);
    p->writer_pid = st.writer_pid;
    p->readers = st.readers;
    p->unlisted = st.unlisted;
    p->attached = st.writer_pid > 0 || st.readers > 0 || st.unlisted > 0;
    p->seq = st.seq;
    p->mono_ns = st.mono_ns;
    p->real_ns = st.real_ns;
    /* The writer's program from the object's table of who is attached (listed first). */
    if (p->writer_pid > 0) {
        struct ard_peer w;
        if (ard_view_peers(v, &w, 1, NULL) > 0 && w.dir == ARD_OUT && w.pid == p->writer_pid)
            snprintf(p->writer_program, sizeof p->writer_program, "%s", w.program);
        else
            ardt_comm(p->writer_pid, p->writer_program, sizeof p->writer_program);
    }
    /* The rate from the send times of the packets still in the ring, newest first. */
    int64_t t[64];
    size_t n = ard_view_stamps(v, t, sizeof t / sizeof t[0]);
    if (n < 2 || t[0] <= t[n - 1])
        return;
    double span = (double)(t[0] - t[n - 1]), k = (double)(n - 1);
    double age = (double)(ard_now_ns() - t[0]);
    /* A writer that stopped: the rate decays with the time since its last packet. */
    if (age > 2 * span / k)
        span = (double)(ard_now_ns() - t[n - 1]);
    p->rate_hz = k / span * 1e9;
}

int ardt_probe(const char *name, struct ardt_probe *p)
{
    ard_view *v;
    int rc = ardt_view_open(name, &v);
    if (rc < 0)
        return rc;
    view_probe(v, p);
    ard_view_close(v);
    return 0;
}

void ardt_comm(int32_t pid, char *buf, size_t len)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
    snprintf(buf, len, "?");
    FILE *f = fopen(path, "re");
    if (!f)
        return;
    if (fgets(buf, (int)len, f))
        buf[strcspn(buf, "\n")] = '\0';
    fclose(f);
}

/* ---- who is attached ---------------------------------------------------------------------- */

int ardt_peers(const char *conn, struct ard_peer *out, size_t max, uint32_t *unlisted)
{
    ard_view *v;
    int rc = ardt_view_open(conn, &v);
    if (rc < 0)
        return rc;
    int n = ard_view_peers(v, out, max, unlisted);
    ard_view_close(v);
    return n < 0 ? n : n > (int)max ? (int)max : n;
}

const char *ardt_auto_host(const struct ard_peer *pe, bool *to)
{
    if (strcmp(pe->program, "ardnet") != 0 || strncmp(pe->port, "auto-", 5) != 0)
        return NULL;
    const char *s = pe->port + 5;
    if (!isdigit((unsigned char)*s))
        return NULL;
    while (isdigit((unsigned char)*s))
        s++;
    const char *word = pe->dir == ARD_IN ? "-to-" : "-from-";
    size_t n = strlen(word);
    if (strncmp(s, word, n) != 0 || s[n] == '\0')
        return NULL;
    *to = pe->dir == ARD_IN;
    return s + n;
}

/* ---- opening ports ------------------------------------------------------------------------ */

int ardt_lib_init(void)
{
    static bool inited;
    if (inited)
        return 0;
    char prog[] = "ard";
    char *argv[] = {prog, NULL};
    int argc = 1;
    int rc = ard_set_domain(ardt_g.domain);
    if (rc == 0)
        rc = ard_init(&argc, argv);
    if (rc < 0)
        return rc;
    inited = true;
    return 0;
}

ard_port *ardt_attach(const char *conn, enum ard_dir dir, int *code)
{
    static unsigned nports;
    if ((*code = ardt_lib_init()) != 0)
        return NULL;
    int rc = ardi_check_name("connection", conn, true);
    if (rc < 0) {
        *code = ARD_EOPTION; /* the detail names the bad name */
        return NULL;
    }
    char name[ARD_MAX_NAME + 1];
    snprintf(name, sizeof name, "%s_%u", ardt_sub, nports++);
    ard_port *p = ard_create_on(name, conn, dir, 0, NULL);
    if (p == NULL) {
        int e = ard_lasterror();
        if (e == ARD_ENOENT)
            *code = ardi_fail(ARD_ENOENT, "connection '%s' does not exist in domain '%s'", conn,
                              ardt_g.domain);
        else
            *code = e;
    }
    return p;
}

/* ---- types, field paths, values ------------------------------------------------------------ */

int ardt_type_init(struct ardt_type *t, const char *desc, size_t size)
{
    memset(t, 0, sizeof *t);
    snprintf(t->desc, sizeof t->desc, "%s", desc);
    t->size = size;
    if (desc[0] == '\0')
        return 0;
    size_t n, tsize;
    if (ard_type_parse(desc, NULL, 0, &n, &tsize) < 0)
        return ARD_ESTALE; /* the detail says what is wrong with desc */
    if (tsize != size)
        return ardi_fail(ARD_ESTALE, "type '%s' describes %zu bytes, the connection has %zu", desc,
                         tsize, size);
    t->fields = calloc(n, sizeof *t->fields);
    if (!t->fields)
        return ardi_fail(ARD_ENOMEM, "out of memory");
    if (ard_type_parse(desc, t->fields, n, &t->nfields, NULL) < 0) {
        free(t->fields);
        t->fields = NULL;
        return ARD_ESTALE;
    }
    return 0;
}

void ardt_type_free(struct ardt_type *t)
{
    free(t->fields);
    t->fields = NULL;
}

const char *ardt_field_name(const struct ardt_type *t, size_t i, char *buf, size_t len)
{
    if (t->fields[i].name[0])
        return t->fields[i].name;
    snprintf(buf, len, "f%zu", i);
    return buf;
}

int ardt_sel_parse(const struct ardt_type *t, const char *path, struct ardt_sel *sel)
{
    if (t->nfields == 0)
        return ardi_fail(ARD_EOPTION,
                         "field '%s': the connection is opaque (no type), it has no fields", path);
    size_t nl = strcspn(path, "[");
    for (size_t i = 0; i < t->nfields; i++) {
        char b[24];
        const char *n = ardt_field_name(t, i, b, sizeof b);
        if (strlen(n) != nl || strncmp(n, path, nl) != 0)
            continue;
        const struct ard_field *f = &t->fields[i];
        *sel = (struct ardt_sel){.field = i, .first = 0, .count = f->count, .whole = true};
        if (path[nl] == '\0')
            return 0;
        const char *p = path + nl + 1;
        char *end;
        if (!isdigit((unsigned char)*p))
            return ardi_fail(ARD_EOPTION, "field '%s': expected an index after '['", path);
        errno = 0;
        unsigned long long idx = strtoull(p, &end, 10);
        if (*end != ']' || end[1] != '\0')
            return ardi_fail(ARD_EOPTION, "field '%s': expected NAME or NAME[INDEX]", path);
        if (errno || idx >= f->count)
            return ardi_fail(ARD_EOPTION, "field '%s': index out of range (%.*s has %u element%s)",
                             path, (int)nl, path, f->count, f->count == 1 ? "" : "s");
        *sel = (struct ardt_sel){.field = i, .first = (uint32_t)idx, .count = 1, .whole = false};
        return 0;
    }
    /* Name the fields there are, so a typo is one look away. */
    char list[256] = "";
    size_t ll = 0;
    for (size_t i = 0; i < t->nfields && ll + 40 < sizeof list; i++) {
        char b[24];
        ll += (size_t)snprintf(list + ll, sizeof list - ll, "%s%s", i ? " " : "",
                               ardt_field_name(t, i, b, sizeof b));
    }
    return ardi_fail(ARD_EOPTION, "field '%.*s' does not exist (fields: %s)",
                     (int)(nl > 64 ? 64 : nl), path, list);
}

#define ELEM(f, pkt, idx)                                                                          \
    ((const uint8_t *)(pkt) + (f)->offset + (size_t)(idx)*ard_basic_size((f)->kind))

double ardt_get_f(const struct ard_field *f, const void *pkt, uint32_t idx)
{
    const void *e = ELEM(f, pkt, idx);
    switch (f->kind) {
#define GET(K, T)                                                                                  \
    case K: {                                                                                      \
        T v;                                                                                       \
        memcpy(&v, e, sizeof v);                                                                   \
        return (double)v;                                                                          \
    }
        GET(ARD_I8, int8_t)
        GET(ARD_U8, uint8_t)
        GET(ARD_I16, int16_t)
        GET(ARD_U16, uint16_t)
        GET(ARD_I32, int32_t)
        GET(ARD_U32, uint32_t)
        GET(ARD_I64, int64_t)
        GET(ARD_U64, uint64_t)
        GET(ARD_F32, float)
        GET(ARD_F64, double)
#undef GET
    }
    return 0;
}

static bool is_signed(enum ard_basic k)
{
    return k == ARD_I8 || k == ARD_I16 || k == ARD_I32 || k == ARD_I64;
}

static void int_range(enum ard_basic k, int64_t *min, uint64_t *max)
{
    size_t bits = ard_basic_size(k) * 8;
    if (is_signed(k)) {
        *max = (bits == 64) ? (uint64_t)INT64_MAX : (UINT64_C(1) << (bits - 1)) - 1;
        *min = -(int64_t)*max - 1;
    } else {
        *max = (bits == 64) ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
        *min = 0;
    }
}

static void store_int(const struct ard_field *f, void *pkt, uint32_t idx, uint64_t bits)
{
    uint8_t *e = (uint8_t *)pkt + f->offset + (size_t)idx * ard_basic_size(f->kind);
    switch (ard_basic_size(f->kind)) {
    case 1: {
        uint8_t v = (uint8_t)bits;
        memcpy(e, &v, 1);
        break;
    }
    case 2: {
        uint16_t v = (uint16_t)bits;
        memcpy(e, &v, 2);
        break;
    }
    case 4: {
        uint32_t v = (uint32_t)bits;
        memcpy(e, &v, 4);
        break;
    }
    default:
        memcpy(e, &bits, 8);
    }
}

void ardt_set_f(const struct ard_field *f, void *pkt, uint32_t idx, double v)
{
    uint8_t *e = (uint8_t *)pkt + f->offset + (size_t)idx * ard_basic_size(f->kind);
    if (f->kind == ARD_F64) {
        memcpy(e, &v, sizeof v);
        return;
    }
    if (f->kind == ARD_F32) {
        float x = (float)v;
        memcpy(e, &x, sizeof x);
        return;
    }
    int64_t min;
    uint64_t max;
    int_range(f->kind, &min, &max);
    double r = isnan(v) ? 0 : nearbyint(v);
    if (is_signed(f->kind)) {
        int64_t x = r <= (double)min ? min : r >= (double)(int64_t)max ? (int64_t)max : (int64_t)r;
        store_int(f, pkt, idx, (uint64_t)x);
    } else {
        uint64_t x = r <= 0 ? 0 : r >= (double)max ? max : (uint64_t)r;
        store_int(f, pkt, idx, x);
    }
}

int ardt_set_text(const struct ard_field *f, void *pkt, uint32_t idx, const char *what,
                  const char *text)
{
    char *end;
    errno = 0;
    if (f->kind == ARD_F32 || f->kind == ARD_F64) {
        double v = strtod(text, &end);
        if (end == text || *end || isspace((unsigned char)text[0]))
            return ardi_fail(ARD_EOPTION, "%s=%s: '%s' is not a number (the field is %s)", what,
                             text, text, ard_basic_name(f->kind));
        /* a finite text beyond the type's range is refused, never written as inf */
        if ((errno == ERANGE && isinf(v)) ||
            (f->kind == ARD_F32 && isfinite(v) && fabs(v) > 3.4028234663852886e38))
            return ardi_fail(ARD_EOPTION, "%s=%s: out of range for %s", what, text,
                             ard_basic_name(f->kind));
        ardt_set_f(f, pkt, idx, v);
        return 0;
    }
    int64_t min;
    uint64_t max;
    int_range(f->kind, &min, &max);
    bool neg = text[0] == '-';
    /* decimal, or hexadecimal after 0x: never octal (010 is ten, as in the docs) */
    const char *digits = text + (text[0] == '-' || text[0] == '+');
    int base = digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X') ? 16 : 10;
    if (!(isdigit((unsigned char)text[neg]) || (text[neg] == '+' && !neg)))
        return ardi_fail(ARD_EOPTION, "%s=%s: '%s' is not an integer (the field is %s)", what, text,
                         text, ard_basic_name(f->kind));
    if (neg) {
        long long v = strtoll(text, &end, base);
        if (*end)
            return ardi_fail(ARD_EOPTION, "%s=%s: '%s' is not an integer (the field is %s)", what,
                             text, text, ard_basic_name(f->kind));
        if (errno || v < min)
            return ardi_fail(ARD_EOPTION, "%s=%s: out of range for %s (%" PRId64 "..%" PRIu64 ")",
                             what, text, ard_basic_name(f->kind), min, max);
        store_int(f, pkt, idx, (uint64_t)v);
    } else {
        unsigned long long v = strtoull(text, &end, base);
        if (*end)
            return ardi_fail(ARD_EOPTION, "%s=%s: '%s' is not an integer (the field is %s)", what,
                             text, text, ard_basic_name(f->kind));
        if (errno || v > max)
            return ardi_fail(ARD_EOPTION, "%s=%s: out of range for %s (%" PRId64 "..%" PRIu64 ")",
                             what, text, ard_basic_name(f->kind), min, max);
        store_int(f, pkt, idx, v);
    }
    return 0;
}

void ardt_put_fields_json(
    FILE *o, const struct ardt_type *t, const struct ardt_sel *sel, size_t nsel, const uint8_t *pkt,
    bool (*text)(FILE *o, const struct ardt_sel *sel, const uint8_t *pkt, void *arg), void *arg)
{
    size_t n = sel ? nsel : t->nfields;
    fputc('{', o);
    for (size_t i = 0; i < n; i++) {
        struct ardt_sel all = {.field = i, .count = t->fields[i].count, .whole = true};
        const struct ardt_sel *s = sel ? &sel[i] : &all;
        const struct ard_field *f = &t->fields[s->field];
        char key[64], b[24];
        const char *name = ardt_field_name(t, s->field, b, sizeof b);
        if (s->whole)
            snprintf(key, sizeof key, "%s", name);
        else
            snprintf(key, sizeof key, "%s[%u]", name, s->first);
        fputs(i ? "," : "", o);
        ardt_put_json_str(o, key);
        fputc(':', o);
        if (text && text(o, s, pkt, arg))
            continue;
        bool arr = s->whole && f->count > 1;
        fputs(arr ? "[" : "", o);
        for (uint32_t k = 0; k < s->count; k++) {
            fputs(k ? "," : "", o);
            ardt_put_value(o, f, pkt, s->first + k, true);
        }
        fputs(arr ? "]" : "", o);
    }
    fputc('}', o);
}

void ardt_put_value(FILE *o, const struct ard_field *f, const void *pkt, uint32_t idx, bool json)
{
    const void *e = ELEM(f, pkt, idx);
    switch (f->kind) {
    case ARD_I8:
    case ARD_I16:
    case ARD_I32:
        fprintf(o, "%lld", (long long)ardt_get_f(f, pkt, idx));
        return;
    case ARD_I64: {
        int64_t v;
        memcpy(&v, e, sizeof v);
        fprintf(o, "%" PRId64, v);
        return;
    }
    case ARD_U8:
    case ARD_U16:
    case ARD_U32:
        fprintf(o, "%llu", (unsigned long long)ardt_get_f(f, pkt, idx));
        return;
    case ARD_U64: {
        uint64_t v;
        memcpy(&v, e, sizeof v);
        fprintf(o, "%" PRIu64, v);
        return;
    }
    case ARD_F32:
    case ARD_F64: {
        double v = ardt_get_f(f, pkt, idx);
        if (!isfinite(v)) {
            fputs(json ? "null" : isnan(v) ? "nan" : v > 0 ? "inf" : "-inf", o);
            return;
        }
        char buf[40];
        for (int prec = f->kind == ARD_F32 ? 6 : 15; prec <= 17; prec++) {
            snprintf(buf, sizeof buf, "%.*g", prec, v);
            double back = strtod(buf, NULL);
            if (f->kind == ARD_F32 ? (float)back == (float)v : back == v)
                break;
        }
        fputs(buf, o);
        return;
    }
    }
}

void ardt_put_json_str(FILE *o, const char *s)
{
    struct ardc_buf b = {0}; /* freed here: threads that end (ard web's) leave nothing */
    ardc_json_str(&b, s);
    if (b.oom) /* nothing sensible is left to write; keep the output valid JSON */
        fputs("\"\"", o);
    else
        fwrite(b.s, 1, b.len, o);
    ardc_free(&b);
}

void ardt_put_age(FILE *o, int64_t ns)
{
    if (ns < 0)
        ns = 0;
    if (ns < 1000)
        fprintf(o, "%lld ns", (long long)ns);
    else if (ns < 1000000)
        fprintf(o, "%.1f us", (double)ns / 1e3);
    else if (ns < 1000000000)
        fprintf(o, "%.2f ms", (double)ns / 1e6);
    else
        fprintf(o, "%.2f s", (double)ns / 1e9);
}

void ardt_put_real(FILE *o, int64_t real_ns)
{
    time_t s = (time_t)(real_ns / 1000000000);
    long ns = (long)(real_ns % 1000000000);
    if (ns < 0) {
        ns += 1000000000;
        s--;
    }
    struct tm tm;
    char buf[40];
    if (gmtime_r(&s, &tm) && strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm))
        fprintf(o, "%s.%09ldZ", buf, ns);
    else
        fprintf(o, "%lld", (long long)real_ns);
}

void ardt_fmt_rate(char *buf, size_t len, double hz)
{
    if (!(hz > 0))
        snprintf(buf, len, "-");
    else if (hz >= 100)
        snprintf(buf, len, "%.0f Hz", hz);
    else if (hz >= 1)
        snprintf(buf, len, "%.1f Hz", hz);
    else
        snprintf(buf, len, "%.2g Hz", hz);
}

/* ---- statistics and waiting ------------------------------------------------------------------ */

void ardt_stats_add(struct ardt_stats *s, double v)
{
    s->n++;
    double d = v - s->mean;
    s->mean += d / (double)s->n;
    s->m2 += d * (v - s->mean);
    if (s->n == 1 || v < s->min)
        s->min = v;
    if (s->n == 1 || v > s->max)
        s->max = v;
}

double ardt_stats_std(const struct ardt_stats *s)
{
    return s->n > 1 ? sqrt(s->m2 / (double)(s->n - 1)) : 0;
}

void ardt_sleep(int64_t ns)
{
    int64_t end = ard_now_ns() + ns;
    while (!ardt_stop) {
        int64_t left = end - ard_now_ns();
        if (left <= 0)
            return;
        if (left > 100000000)
            left = 100000000;
        struct timespec ts = {(time_t)(left / 1000000000), (long)(left % 1000000000)};
        nanosleep(&ts, NULL);
    }
}

void ardt_period_wait(ard_period *p)
{
    while (!ardt_stop && p->next_ns - ard_now_ns() > 150000000)
        ardt_sleep(100000000);
    if (!ardt_stop)
        (void)ard_period_wait(p);
}
