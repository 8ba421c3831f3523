/* web.c - `ard web`: the live net and an oscilloscope in a browser (docs/web.md).
 *
 * civetweb serves the page (web/index.html, app.js, app.css, built into the binary), a JSON
 * picture of the net (/api/net), a set endpoint (/api/set, only with --allow-set) and one
 * WebSocket per plot (/ws). Each connection being looked at has one reader (hub.c, shared
 * with the Foxglove protocol) that receives every packet it can and keeps it, with its send
 * time, in an in-process ring; a pump thread at 30 Hz folds the new packets of each
 * WebSocket client into min/max buckets of the client's width and queues the completed
 * buckets on the client, whose own writer thread sends them (webguard.c: Host, Origin,
 * token, client limit, idle timeout, bounded queues; no thread of the server waits for a
 * client). The server is an ordinary reader: a writer never waits for it (a packet it is
 * too slow for is skipped). */
#include "ard.h"
#include "hub.h"
#include "web.h"
#include "webguard.h"
#ifdef ARD_HAVE_LOG
#include "foxglove.h"
#endif

#include <civetweb.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

/* What the options say. */
struct web_args {
    const char *listen, *token_file;
    bool allow_set, no_token;
    double max_clients, idle_s;
    struct wg_opts go;
};

/* --host-name NAME: a host name, up to WG_MAX_HOST_NAMES of them. */
static int add_host_name(void *dest, const struct ardc_opt *o, const char *v)
{
    (void)o;
    struct wg_opts *go = &((struct web_args *)dest)->go;
    size_t hl = strlen(v);
    if (hl == 0 || hl > 253 ||
        strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-") != hl)
        return ardi_fail(ARD_EOPTION,
                         "--host-name '%s': expected a host name (letters, digits, '.', "
                         "'-'), without port",
                         v);
    if (go->nhost_names == WG_MAX_HOST_NAMES)
        return ardi_fail(ARD_EOPTION, "--host-name: at most %d names", WG_MAX_HOST_NAMES);
    go->host_names[go->nhost_names++] = v;
    return 0;
}

/* Refused with the reason: a token in argv is visible to every local user. */
static int token_refused(void *dest, const struct ardc_opt *o, const char *v)
{
    (void)dest, (void)o, (void)v;
    return ardi_fail(ARD_EOPTION, "--token: a token on the command line is visible to every local "
                                  "user (ps); put it in a file and use --token-file FILE");
}

static const struct ardc_opt web_opts[] = {
    {"listen", 'l', "ADDR:PORT",
     "address to serve on (default 127.0.0.1:8642; port 0: any free\n"
     "port)",
     .kind = ARDC_TEXT, ARDC_DEST(struct web_args, listen)},
    {"allow-set", 0, NULL,
     "let the page write packets (as `ard set`, same refusals);\n"
     "read-only otherwise",
     .kind = ARDC_FLAG, ARDC_DEST(struct web_args, allow_set)},
    {"token-file", 0, "FILE",
     "the token is the first line of FILE (8-79 letters, digits,\n"
     "'-_.'; FILE not readable by others) instead of a random one",
     .kind = ARDC_TEXT, ARDC_DEST(struct web_args, token_file), .complete = "@file"},
    {"no-token", 0, NULL,
     "no token (loopback only): every local user gets in with this\n"
     "server's rights",
     .kind = ARDC_FLAG, ARDC_DEST(struct web_args, no_token)},
    {"host-name", 0, "NAME",
     "also answer to Host NAME[:PORT] (a name of this machine; up to\n"
     "8); address literals of the listened address always work",
     .kind = ARDC_CALL, .call = add_host_name},
    {"max-clients", 0, "N", "WebSockets (plots) at once, 1-1000 (default 64); more get 503",
     .kind = ARDC_REAL, ARDC_DEST(struct web_args, max_clients), .min = 1, .max = 1000},
    {"idle-timeout", 0, "SECONDS",
     "close a WebSocket that subscribes to nothing for this long\n"
     "(default 30)",
     .kind = ARDC_REAL, ARDC_DEST(struct web_args, idle_s), .min = 0.1, .max = 86400},
    {"token", 0, "TOKEN", NULL, .kind = ARDC_CALL, .call = token_refused, .hidden = true},
    {0},
};
const struct ardc_optset ardt_web_spec = {
    .see = "ard help web",
    .head =
        "usage: ard web [--listen ADDR:PORT] [--allow-set] [--token-file FILE | --no-token]\n"
        "               [--host-name NAME]... [--max-clients N] [--idle-timeout SECONDS]\n"
        "  Serve a page showing the running net of the domain, live, and an oscilloscope of any\n"
        "  connection's fields (min/max per time bucket, decimated in the server). An ordinary\n"
        "  reader: a writer never waits for it. The page and its scripts are inside the program.\n"
        "  Every request needs a token (a random one is printed in the address to open; the page\n"
        "  keeps it in a cookie) and a Host and Origin of this server.\n",
    .opts = web_opts,
    .col = 26,
    .tail =
        "  Foxglove and Lichtblick connect to ws://ADDR:PORT/?token=... (the Foxglove WebSocket\n"
        "  protocol; --allow-set lets them publish as ard set).\n"
        "  The address to open is printed on stdout when serving; SIGINT or SIGTERM end it (exit "
        "0).\n"
        "  See docs/web.md.\n",
    .arg = ardt_no_arg,
    .unexpected = true};

/* ---- clients ----------------------------------------------------------------------------- */

/* One WebSocket client (a plot on a page). */
#define WEB_MAXF 16
struct client {
    struct hub_client h;    /* its connection, queue and writer */
    struct hub_reader *src; /* the connection plotted (hub.c), NULL before a sub */
    struct ardt_type t;     /* its type */
    struct ardt_sel sel[WEB_MAXF];
    size_t nsel;
    int64_t bucket_ns;
    uint64_t cursor, lost;
    int64_t cur;   /* bucket index being filled */
    int64_t tlast; /* newest packet folded */
    int64_t tcur;  /* newest packet of the bucket being filled */
    int64_t temit; /* newest packet of the buckets sent */
    double mn[WEB_MAXF], mx[WEB_MAXF];
    bool have;
    int tick;
};

struct web {
    struct mg_context *ctx;
    char token[80];
    bool no_token;
    bool allow_set;
    pthread_mutex_t mu; /* the clients */
    struct hub_clients clients;
    pthread_t pump;
    atomic_int stop; /* set by the signal handler (lock-free: async-signal-safe) */
};
static struct web W = {.mu = PTHREAD_MUTEX_INITIALIZER,
                       .clients = {&W.mu, sizeof(struct client), NULL}};

/* Release what the client holds (W.mu held). */
static void client_drop(struct hub_client *h)
{
    struct client *cl = (struct client *)h;
    hub_reader_put(cl->src);
    cl->src = NULL;
    ardt_type_free(&cl->t);
}

/* The client plots nothing (W.mu held). */
static void client_unsub(struct client *cl)
{
    client_drop(&cl->h);
    cl->nsel = 0;
    wg_active(cl->h.wg, false);
}

/* ---- output buffers --------------------------------------------------------------------- */

/* The shared growable buffer (ardc_buf.h); bp appends printf-style text. */
ARDI_PRINTF(2, 3) static void bp(struct ardc_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ardc_vprintf(b, fmt, ap);
    va_end(ap);
}

static void b_num(struct ardc_buf *b, double v)
{
    if (isfinite(v))
        bp(b, "%.9g", v);
    else
        bp(b, "null");
}

/* A JSON string (ardc_json_str: bytes that are not UTF-8 become the text \xNN). */
static void b_str(struct ardc_buf *b, const char *s)
{
    ardc_json_str(b, s);
}

/* A packet's fields as JSON: {"q":[...],"tick":3}. */
static void b_packet(struct ardc_buf *b, const struct ardt_type *t, const uint8_t *pkt)
{
    char *text = NULL;
    size_t len = 0;
    FILE *o = open_memstream(&text, &len);
    if (!o) {
        b->oom = true;
        return;
    }
    ardt_put_fields_json(o, t, NULL, 0, pkt, NULL, NULL);
    fclose(o);
    bp(b, "%s", text ? text : "{}");
    free(text);
}

/* Queue a message for the client (never waits for it). Plot frames may be dropped when the
 * client is behind; answers to its commands are not. */
static void ws_send(struct client *cl, const struct ardc_buf *b, bool droppable)
{
    hub_send_text(&cl->h, b, droppable);
}

static void ws_error(struct client *cl, const char *msg)
{
    struct ardc_buf b = {0};
    bp(&b, "{\"error\":");
    b_str(&b, msg);
    bp(&b, "}");
    ws_send(cl, &b, false);
    free(b.p);
}

/* ---- the pump: 30 times a second, new packets to buckets to clients ------------------------ */

static void emit_bucket(struct client *cl, struct ardc_buf *b, bool *first)
{
    bp(b, "%s[%.6f", *first ? "" : ",", (double)cl->cur * (double)cl->bucket_ns * 1e-9);
    for (size_t i = 0; i < cl->nsel; i++) {
        bp(b, ",");
        b_num(b, cl->mn[i]);
        bp(b, ",");
        b_num(b, cl->mx[i]);
    }
    bp(b, "]");
    *first = false;
}

static void pump_client(struct client *cl, int64_t now)
{
    struct hub_reader *s = cl->src;
    if (atomic_load(&s->gone)) {
        char msg[ARD_MAX_NAME + 96];
        snprintf(msg, sizeof msg, "connection '%s' was re-created with another type: pick it again",
                 s->name);
        ws_error(cl, msg);
        client_unsub(cl);
        return;
    }
    struct ardc_buf b = {0};
    bool first = true;
    bp(&b, "{\"now\":%.6f,\"b\":[", (double)now * 1e-9);
    pthread_mutex_lock(&s->mu);
    if (s->head - cl->cursor > s->cap) {
        cl->lost += s->head - cl->cursor - s->cap;
        cl->cursor = s->head - s->cap;
    }
    uint64_t n0 = cl->cursor;
    for (; cl->cursor < s->head && cl->nsel; cl->cursor++) {
        uint32_t k = (uint32_t)(cl->cursor & (s->cap - 1));
        const uint8_t *pkt = s->ring + (size_t)k * s->size;
        int64_t bi = s->mono[k] / cl->bucket_ns;
        if (cl->have && bi != cl->cur) {
            emit_bucket(cl, &b, &first);
            cl->have = false;
            cl->temit = cl->tcur;
        }
        for (size_t i = 0; i < cl->nsel; i++) {
            double v = ardt_get_f(&cl->t.fields[cl->sel[i].field], pkt, cl->sel[i].first);
            if (!cl->have || v < cl->mn[i] || isnan(cl->mn[i]))
                cl->mn[i] = v;
            if (!cl->have || v > cl->mx[i] || isnan(cl->mx[i]))
                cl->mx[i] = v;
        }
        cl->cur = bi;
        cl->have = true;
        cl->tlast = cl->tcur = s->mono[k];
    }
    cl->cursor = s->head;
    bool fresh = s->head != n0;
    /* The decoded newest value, 5 times a second. */
    bool val = s->head > 0 && (cl->tick++ % 6) == 0;
    bp(&b, "],\"tl\":%.6f,\"te\":%.6f,\"lost\":%llu,\"dropped\":%llu", (double)cl->tlast * 1e-9,
       (double)cl->temit * 1e-9, (unsigned long long)cl->lost,
       (unsigned long long)wg_dropped(cl->h.wg));
    if (val) {
        uint32_t k = (uint32_t)((s->head - 1) & (s->cap - 1));
        bp(&b, ",\"val\":{\"seq\":%llu,\"age_ns\":%lld,\"fields\":", (unsigned long long)s->seq[k],
           (long long)(now - s->mono[k]));
        b_packet(&b, &cl->t, s->ring + (size_t)k * s->size);
        bp(&b, "}");
    }
    pthread_mutex_unlock(&s->mu);
    bp(&b, "}");
    if (fresh || val)
        ws_send(cl, &b, true);
    free(b.p);
}

/* civetweb's master thread polls the listening socket in 2 s quanta and sees mg_stop only at
 * the end of one: a connection to our own port, made while mg_stop waits, ends it at once. */
struct poke {
    struct sockaddr_in to;
    atomic_int done;
};

static void *poke_run(void *arg)
{
    struct poke *k = arg;
    for (int i = 0; i < 150 && !atomic_load(&k->done); i++) {
        struct timespec ts = {0, 20000000};
        nanosleep(&ts, NULL);
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
            continue;
        (void)!connect(fd, (const struct sockaddr *)&k->to, sizeof k->to);
        close(fd);
    }
    return NULL;
}

static void stop_server(const char *addr, int port)
{
    /* Clients first: a WebSocket's read loop otherwise notices the stop only at its next
     * poll, up to 2 s later, past ardkill's default grace. */
    wg_disconnect_all(300);
    struct poke k = {.to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)}};
    pthread_t th;
    bool poking =
        inet_pton(AF_INET, strcmp(addr, "0.0.0.0") ? addr : "127.0.0.1", &k.to.sin_addr) == 1 &&
        pthread_create(&th, NULL, poke_run, &k) == 0;
    mg_stop(W.ctx);
    if (poking) {
        atomic_store(&k.done, 1);
        pthread_join(th, NULL);
    }
}

static void *pump_run(void *arg)
{
    (void)arg;
    while (!W.stop) {
        int64_t now = ard_now_ns();
        pthread_mutex_lock(&W.mu);
        for (struct hub_client *h = W.clients.head; h; h = h->next)
            if (((struct client *)h)->src)
                pump_client((struct client *)h, now);
        pthread_mutex_unlock(&W.mu);
        struct timespec ts = {0, 33000000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

/* ---- WebSocket: "sub CONN BUCKET_US [FIELD...]" and "unsub" --------------------------------- */

static void client_greet(struct hub_client *h)
{
    struct ardc_buf b = {0};
    bp(&b, "{\"hello\":\"ard web\",\"allow_set\":%s}", W.allow_set ? "true" : "false");
    ws_send((struct client *)h, &b, false);
    free(b.p);
}

/* The reader of connection name and its type in *t, or NULL after telling the client why. */
static struct hub_reader *plot_open(struct client *cl, const char *name, struct ardt_type *t)
{
    char err[ARD_MAX_NAME + ARD_MAX_TYPE + 256];
    struct hub_reader *s = NULL;
    if (ardi_check_name("connection", name, true) < 0) {
        ws_error(cl, ard_errdetail());
        return NULL;
    }
    int rc = hub_reader_get(name, &s);
    if (rc == ARD_ENOENT)
        snprintf(err, sizeof err, "connection '%s' does not exist in domain '%s'", name,
                 ardt_g.domain);
    else if (rc < 0)
        snprintf(err, sizeof err, "connection '%s': %s", name,
                 rc != ARD_ENOMEM && ard_errdetail()[0] ? ard_errdetail() : ard_strerror(rc));
    else if (ardt_type_init(t, s->type, s->size) != 0) {
        snprintf(err, sizeof err, "connection '%s': bad type '%s'", name, s->type);
        hub_reader_put(s);
        rc = -1;
    }
    if (rc < 0) {
        ws_error(cl, err);
        return NULL;
    }
    return s;
}

/* Handle one command (W.mu held); a bad one is answered with an error, the connection stays. */
static void ws_command(struct client *cl, char *line)
{
    char *save = NULL;
    char *verb = strtok_r(line, " ", &save);
    if (!verb) {
        ws_error(cl, "empty command");
        return;
    }
    if (strcmp(verb, "unsub") == 0) {
        client_unsub(cl);
        return;
    }
    if (strcmp(verb, "sub") != 0) {
        ws_error(cl, "unknown command (expected sub or unsub)");
        return;
    }
    char *name = strtok_r(NULL, " ", &save);
    char *bucket = strtok_r(NULL, " ", &save);
    char *end = NULL;
    long long bus = bucket ? strtoll(bucket, &end, 10) : 0;
    if (!name || !bucket || *end || bus < 10 || bus > 10000000) {
        ws_error(cl, "usage: sub CONNECTION BUCKET_US [FIELD...] (bucket 10 us to 10 s)");
        return;
    }
    char err[ARD_MAX_NAME + ARD_MAX_TYPE + 256];
    struct ardt_type t = {0};
    struct hub_reader *s = plot_open(cl, name, &t);
    if (!s)
        return;
    struct ardt_sel sel[WEB_MAXF];
    size_t n = 0;
    for (char *f; (f = strtok_r(NULL, " ", &save)) != NULL;) {
        const char *bad = n == WEB_MAXF ? "at most 16 fields per plot" : NULL;
        if (!bad && (ardt_sel_parse(&t, f, &sel[n]) != 0 || sel[n].count != 1)) {
            snprintf(err, sizeof err, "'%.60s': not a field element of type '%s'", f, t.desc);
            bad = err;
        }
        if (bad) {
            ws_error(cl, bad);
            ardt_type_free(&t);
            hub_reader_put(s);
            return;
        }
        n++;
    }
    client_unsub(cl);
    cl->src = s;
    cl->t = t;
    wg_active(cl->h.wg, true);
    memcpy(cl->sel, sel, n * sizeof *sel);
    cl->nsel = n;
    cl->bucket_ns = bus * 1000;
    cl->have = false;
    pthread_mutex_lock(&s->mu);
    /* Start with the last second the reader holds, so a new plot is not empty. */
    cl->cursor = s->head;
    int64_t newest = s->head ? s->mono[(s->head - 1) & (s->cap - 1)] : 0;
    while (cl->cursor > 0 && s->head - cl->cursor < s->cap &&
           newest - s->mono[(cl->cursor - 1) & (s->cap - 1)] < 1000000000)
        cl->cursor--;
    pthread_mutex_unlock(&s->mu);
    struct ardc_buf b = {0};
    bp(&b, "{\"sub\":");
    b_str(&b, s->name);
    bp(&b, ",\"type\":");
    b_str(&b, t.desc);
    bp(&b, ",\"size\":%zu,\"fields\":[", s->size);
    for (size_t i = 0; i < t.nfields; i++) {
        char nb[24];
        bp(&b, "%s{\"name\":", i ? "," : "");
        b_str(&b, ardt_field_name(&t, i, nb, sizeof nb));
        bp(&b, ",\"type\":\"%s\",\"count\":%u}", ard_basic_name(t.fields[i].kind),
           t.fields[i].count);
    }
    bp(&b, "],\"plot\":[");
    for (size_t i = 0; i < n; i++) {
        char nb[24];
        const char *fn = ardt_field_name(&t, sel[i].field, nb, sizeof nb);
        if (t.fields[sel[i].field].count > 1)
            bp(&b, "%s\"%s[%u]\"", i ? "," : "", fn, sel[i].first);
        else
            bp(&b, "%s\"%s\"", i ? "," : "", fn);
    }
    bp(&b, "]}");
    ws_send(cl, &b, false);
    free(b.p);
}

/* civetweb's ready and close handlers of /ws (the registry is hub.c's). */
static void ws_ready(struct mg_connection *c, void *cb)
{
    (void)cb;
    pthread_mutex_lock(&W.mu);
    struct hub_client *h = hub_ready(&W.clients, c);
    if (h)
        client_greet(h);
    pthread_mutex_unlock(&W.mu);
}

static void ws_close(const struct mg_connection *c, void *cb)
{
    (void)cb;
    pthread_mutex_lock(&W.mu);
    struct hub_client *h = hub_take(&W.clients, c);
    if (h)
        client_drop(h);
    pthread_mutex_unlock(&W.mu);
    hub_release(h);
}

#define WEB_MAXMSG 4096

static int ws_data(struct mg_connection *c, int bits, char *data, size_t len, void *cb)
{
    (void)cb;
    int op = bits & 0x0f, ctl = hub_control(op);
    if (ctl >= 0)
        return ctl;
    const char *err = NULL;
    char line[WEB_MAXMSG + 1];
    if (op != MG_WEBSOCKET_OPCODE_TEXT || !(bits & 0x80))
        err = "expected one complete text message";
    else if (len > WEB_MAXMSG)
        err = "message too long (at most 4096 bytes)";
    else {
        memcpy(line, data, len);
        line[len] = '\0';
        if (strlen(line) != len)
            err = "message contains a NUL byte";
    }
    pthread_mutex_lock(&W.mu);
    struct client *cl = (struct client *)hub_of(&W.clients, c);
    bool keep = cl && !err && !wg_closing(cl->h.wg);
    if (cl && err)
        ws_error(cl, err); /* sent before the socket closes (wg_close drains) */
    else if (keep)
        ws_command(cl, line);
    pthread_mutex_unlock(&W.mu);
    return keep;
}

/* ---- HTTP ---------------------------------------------------------------------------------- */

static int h_asset(struct mg_connection *c, void *cb)
{
    const struct web_asset *a = cb;
    const struct mg_request_info *ri = mg_get_request_info(c);
    if (strcmp(ri->request_method, "GET") != 0 && strcmp(ri->request_method, "HEAD") != 0)
        return wg_reply_error(c, 405, "method not allowed");
    mg_printf(c,
              "HTTP/1.1 200 OK\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
              "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n"
              "Content-Security-Policy: default-src 'self'; connect-src 'self'; "
              "frame-ancestors 'none'; form-action 'self'\r\n"
              "X-Frame-Options: DENY\r\nConnection: close\r\n\r\n",
              a->type, a->len);
    if (strcmp(ri->request_method, "GET") == 0)
        mg_write(c, a->data, a->len);
    return 200;
}

struct netconn {
    struct ardt_probe p;
    struct ard_peer peers[64];
    int npeers;
    uint32_t unlisted;
    bool bad;
};

struct netlist {
    struct netconn *c;
    size_t n;
};

static int net_add(const char *name, void *arg)
{
    struct netlist *l = arg;
    if (l->n >= 4096)
        return 0;
    struct netconn *nv = realloc(l->c, (l->n + 1) * sizeof *nv);
    if (!nv)
        return ARD_ENOMEM;
    l->c = nv;
    struct netconn *c = &l->c[l->n++];
    memset(c, 0, sizeof *c);
    c->bad = ardt_probe(name, &c->p) < 0;
    snprintf(c->p.name, sizeof c->p.name, "%s", name);
    if (!c->bad) {
        int k = ardt_peers(name, c->peers, 64, &c->unlisted);
        c->npeers = k < 0 ? 0 : k;
    }
    return 0;
}

static int h_net(struct mg_connection *c, void *cb)
{
    (void)cb;
    static pthread_mutex_t netmu = PTHREAD_MUTEX_INITIALIZER; /* one picture at a time */
    struct netlist l = {0};
    pthread_mutex_lock(&netmu);
    int rc = ard_conn_list(ardt_g.domain, net_add, &l);
    pthread_mutex_unlock(&netmu);
    int64_t now = ard_now_ns();
    struct ardc_buf b = {0};
    bp(&b, "{\"domain\":");
    b_str(&b, ardt_g.domain);
    bp(&b, ",\"allow_set\":%s,\"self\":%d,\"connections\":[", W.allow_set ? "true" : "false",
       (int)getpid());
    for (size_t i = 0; i < l.n; i++) {
        const struct netconn *n = &l.c[i];
        bp(&b, "%s\n{\"name\":", i ? "," : "");
        b_str(&b, n->p.name);
        if (n->bad) {
            bp(&b, ",\"damaged\":true,\"stale\":true}");
            continue;
        }
        int64_t age = n->p.seq ? now - n->p.mono_ns : -1;
        double lim = n->p.rate_hz > 0 ? 10.0 / n->p.rate_hz : 1.0;
        lim = lim < 1.0 ? 1.0 : lim;
        bool stale =
            !n->p.attached || n->p.writer_pid <= 0 || n->p.seq == 0 || (double)age * 1e-9 > lim;
        bp(&b, ",\"type\":");
        b_str(&b, n->p.type);
        bp(&b, ",\"size\":%zu,\"rate_hz\":", n->p.size);
        b_num(&b, n->p.rate_hz);
        bool plotted = hub_reading(n->p.name);
        bp(&b,
           ",\"count\":%llu,\"age_ns\":%lld,\"orphaned\":%s,\"stale\":%s,\"web_reads\":%s,"
           "\"peers\":[",
           (unsigned long long)n->p.seq, (long long)age, n->p.attached ? "false" : "true",
           stale ? "true" : "false", plotted ? "true" : "false");
        for (int k = 0; k < n->npeers; k++) {
            const struct ard_peer *pe = &n->peers[k];
            bp(&b, "%s{\"pid\":%d,\"dir\":\"%s\",\"program\":", k ? "," : "", (int)pe->pid,
               pe->dir == ARD_OUT ? "out" : "in");
            b_str(&b, pe->program);
            bp(&b, ",\"port\":");
            b_str(&b, pe->port);
            bp(&b, "}");
        }
        bp(&b, "],\"unlisted\":%u}", n->unlisted);
    }
    bp(&b, "]}\n");
    free(l.c);
    if (rc < 0) {
        free(b.p);
        return wg_reply_error(c, 500, ard_errdetail()[0] ? ard_errdetail() : ard_strerror(rc));
    }
    wg_reply_json(c, 200, &b);
    free(b.p);
    return 200;
}

#define WEB_MAXBODY 16384
#define WEB_MAXASSIGN 64

static int h_set(struct mg_connection *c, void *cb)
{
    (void)cb;
    const struct mg_request_info *ri = mg_get_request_info(c);
    if (strcmp(ri->request_method, "POST") != 0)
        return wg_reply_error(c, 405, "POST only");
    if (!W.allow_set)
        return wg_reply_error(c, 403, "read-only: start ard web with --allow-set to set values");
    if (ri->content_length < 0 || ri->content_length > WEB_MAXBODY)
        return wg_reply_error(c, 413, "request body missing or over 16384 bytes");
    char body[WEB_MAXBODY + 1];
    size_t len = 0;
    while (len < (size_t)ri->content_length) {
        int r = mg_read(c, body + len, (size_t)ri->content_length - len);
        if (r <= 0)
            break;
        len += (size_t)r;
    }
    if (len != (size_t)ri->content_length)
        return wg_reply_error(c, 400, "request body shorter than its Content-Length");
    body[len] = '\0';
    char conn[ARD_MAX_NAME + 2];
    if (mg_get_var(body, len, "c", conn, sizeof conn) <= 0)
        return wg_reply_error(c, 400, "no connection given (c=NAME)");
    static char assigns[WEB_MAXASSIGN][512];
    static pthread_mutex_t amu = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&amu);
    char *av[WEB_MAXASSIGN + 5];
    int ac = 0;
    char dom[ARD_MAX_NAME + 16];
    snprintf(dom, sizeof dom, "--domain=%s", ardt_g.domain);
    av[ac++] = "ard";
    av[ac++] = dom;
    av[ac++] = "set";
    av[ac++] = conn;
    int n = 0, r = 0;
    const char *notassign = NULL;
    for (; n < WEB_MAXASSIGN; n++) {
        r = mg_get_var2(body, len, "a", assigns[n], sizeof assigns[n], (size_t)n);
        if (r < 0)
            break;
        /* Values never become options: FIELD=VALUE, a field name first. */
        const char *a = assigns[n];
        size_t fl = strcspn(a, "=[");
        if (!notassign && (a[0] == '-' || fl == 0 || !strchr(a, '=')))
            notassign = a;
        av[ac++] = assigns[n];
    }
    av[ac] = NULL;
    int status;
    char msg[600];
    if (r < -1)
        status = wg_reply_error(c, 400, "an assignment is too long");
    else if (conn[0] == '-') {
        snprintf(msg, sizeof msg, "'%.200s' is not a connection name (no options here)", conn);
        status = wg_reply_error(c, 400, msg);
    } else if (ardi_check_name("connection", conn, true) < 0)
        status = wg_reply_error(c, 400, ard_errdetail());
    else if (n == 0)
        status = wg_reply_error(c, 400, "nothing to set (a=FIELD=VALUE)");
    else if (n == WEB_MAXASSIGN)
        status = wg_reply_error(c, 400, "too many assignments");
    else if (notassign) {
        snprintf(msg, sizeof msg, "'%.500s' is not an assignment FIELD=VALUE (no options here)",
                 notassign);
        status = wg_reply_error(c, 400, msg);
    } else {
        struct ardc_buf out = {0};
        int code = hub_run_set(av, &out);
        struct ardc_buf b = {0};
        bp(&b, "{\"code\":%d,\"message\":", code);
        b_str(&b, out.s ? out.s : "");
        bp(&b, "}\n");
        status = code == 0 ? 200 : code == ARDT_BUSY ? 409 : code == ARDT_NOENT ? 404 : 400;
        wg_reply_json(c, status, &b);
        free(b.p);
        free(out.p);
    }
    pthread_mutex_unlock(&amu);
    return status;
}

static int h_notfound(struct mg_connection *c, void *cb)
{
    (void)cb;
    return wg_reply_error(c, 404, "no such page");
}

static int log_message(const struct mg_connection *c, const char *msg)
{
    (void)c;
    (void)msg;
    return 1; /* quiet: bad requests are answered, not logged */
}

/* ---- main ---------------------------------------------------------------------------------- */

static bool is_loopback(const char *addr)
{
    return strncmp(addr, "127.", 4) == 0;
}

/* The token of --token-file: its first line; the file must not be open to others. */
static int read_token_file(const char *path, char *out, size_t outlen)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return ardi_fail(ARD_EOPTION, "--token-file '%s': %s", path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && (st.st_mode & 0007)) {
        fclose(f);
        return ardi_fail(ARD_EOPTION,
                         "--token-file '%s' has mode %04o: others may read it (chmod o-rwx)", path,
                         (unsigned)(st.st_mode & 07777));
    }
    char line[256];
    bool got = fgets(line, sizeof line, f) != NULL;
    fclose(f);
    if (!got)
        return ardi_fail(ARD_EOPTION, "--token-file '%s' is empty", path);
    line[strcspn(line, "\r\n")] = '\0';
    size_t tl = strlen(line);
    if (tl < 8 || tl >= outlen ||
        strspn(line, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJ"
                     "KLMNOPQRSTUVWXYZ0123456789-_.") != tl)
        return ardi_fail(ARD_EOPTION,
                         "--token-file '%s': the token must be 8 to 79 characters of letters, "
                         "digits, '-', '_', '.'",
                         path);
    snprintf(out, outlen, "%s", line);
    return 0;
}

static void on_signal(int sig)
{
    (void)sig;
    W.stop = 1;
}

static int parse_web_args(int argc, char **argv, struct web_args *a)
{
    int rc = ardt_opts(&ardt_web_spec, argc, argv, a);
    if (rc)
        return rc;
    W.allow_set = a->allow_set;
    W.no_token = a->no_token;
    a->go.max_clients = (int)a->max_clients;
    a->go.idle_ms = (int)(a->idle_s * 1000);
    return 0;
}

/* --listen ADDR:PORT: the IPv4 address (localhost is 127.0.0.1) and the port. */
static int parse_listen(const char *listen, char *addr, size_t addrlen, long *port)
{
    const char *colon = strrchr(listen, ':');
    char *end = NULL;
    *port = colon ? strtol(colon + 1, &end, 10) : -1;
    if (!colon || colon == listen || (size_t)(colon - listen) >= addrlen || !end || *end ||
        end == colon + 1 || *port < 0 || *port > 65535)
        return ardi_fail(ARD_EOPTION, "--listen '%s': expected ADDR:PORT (e.g. 127.0.0.1:8642)",
                         listen);
    memcpy(addr, listen, (size_t)(colon - listen));
    addr[colon - listen] = '\0';
    if (strcmp(addr, "localhost") == 0)
        snprintf(addr, addrlen, "127.0.0.1");
    struct in_addr a4;
    if (inet_pton(AF_INET, addr, &a4) != 1)
        return ardi_fail(ARD_EOPTION, "--listen '%s': ADDR must be an IPv4 address", listen);
    return 0;
}

/* The token: --token-file's, none (--no-token, loopback only) or a random one. */
static int pick_token(const char *addr, const char *token_file)
{
    if (W.no_token && token_file)
        return ardi_fail(ARD_EOPTION, "--no-token and --token-file exclude each other");
    if (W.no_token && !is_loopback(addr))
        return ardi_fail(ARD_EOPTION,
                         "--no-token: only on a loopback address (127.x.x.x), not on %s", addr);
    if (token_file)
        return read_token_file(token_file, W.token, sizeof W.token);
    if (!W.no_token) {
        uint8_t rnd[16];
        if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd)
            return ardi_fail(ARD_ESYS, "cannot draw a random token");
        for (int i = 0; i < 16; i++)
            snprintf(W.token + 2 * i, 3, "%02x", rnd[i]);
    }
    return 0;
}

/* Start civetweb on addr:port with the page's handlers (and the Foxglove protocol's). */
static int start_server(const char *addr, long port, const struct wg_opts *go)
{
    char ports[96], workers[16];
    snprintf(ports, sizeof ports, "%s:%ld", addr, port);
    /* One worker per WebSocket client (civetweb keeps one for each) and as many again for the
     * page, the API and sockets that are still sending their request. */
    snprintf(workers, sizeof workers, "%d", go->max_clients + WG_EXTRA_WORKERS);
    wg_init(go);
    const char *opts[] = {"listening_ports",
                          ports,
                          "num_threads",
                          workers,
                          "max_request_size",
                          "16384",
                          "request_timeout_ms",
                          "10000",
                          "enable_keep_alive",
                          "no",
                          "tcp_nodelay",
                          "1",
                          NULL};
    struct mg_callbacks cbs = {0};
    cbs.begin_request = wg_begin_request;
    cbs.log_message = log_message;
    mg_init_library(MG_FEATURES_WEBSOCKET);
    W.ctx = mg_start(&cbs, NULL, opts);
    if (!W.ctx) {
        mg_exit_library();
        return ardi_fail(ARD_ESYS, "cannot serve on %s (address in use or not local?)", ports);
    }
    for (size_t i = 0; i < web_nassets; i++)
        mg_set_request_handler(W.ctx, web_assets[i].path, h_asset, (void *)&web_assets[i]);
    mg_set_request_handler(W.ctx, "/$", h_asset, (void *)&web_assets[0]);
    mg_set_request_handler(W.ctx, "/api/net$", h_net, NULL);
    mg_set_request_handler(W.ctx, "/api/set$", h_set, NULL);
    mg_set_websocket_handler(W.ctx, "/ws$", hub_connect, ws_ready, ws_data, ws_close, &W.clients);
    mg_set_request_handler(W.ctx, "**", h_notfound, NULL);
#ifdef ARD_HAVE_LOG
    /* The Foxglove WebSocket protocol at "/" (foxglove.c). */
    if (fox_start(W.ctx, W.allow_set) != 0) {
        mg_stop(W.ctx);
        return ardi_fail(ARD_ESYS, "cannot start a thread");
    }
#endif
    return 0;
}

/* The addresses to open, on stdout. */
static void print_addresses(const char *addr, int port, const char *token_file)
{
    if (token_file)
        printf("ard web: domain %s on http://%s:%d/?token=(the token of %s)%s\n", ardt_g.domain,
               addr, port, token_file, W.allow_set ? " (setting allowed)" : "");
    else
        printf("ard web: domain %s on http://%s:%d/%s%s%s\n", ardt_g.domain, addr, port,
               W.no_token ? "" : "?token=", W.token, W.allow_set ? " (setting allowed)" : "");
#ifdef ARD_HAVE_LOG
    if (token_file)
        printf("ard web: Foxglove and Lichtblick: ws://%s:%d/?token=(the token of %s)\n", addr,
               port, token_file);
    else
        printf("ard web: Foxglove and Lichtblick: ws://%s:%d/%s%s\n", addr, port,
               W.no_token ? "" : "?token=", W.token);
#endif
    if (W.no_token)
        printf("ard web: no token: every local user can use this server with its rights\n");
    fflush(stdout);
}

/* Serve until SIGINT or SIGTERM, then stop everything. */
static void serve(const char *addr, int port)
{
    while (!W.stop) {
        struct timespec ts = {0, 100000000};
        nanosleep(&ts, NULL);
    }
    stop_server(addr, port);
#ifdef ARD_HAVE_LOG
    fox_stop();
#endif
    pthread_join(W.pump, NULL);
    wg_stop();
    pthread_mutex_lock(&W.mu);
    for (struct hub_client *h; (h = hub_pop(&W.clients)) != NULL; hub_free(h))
        client_drop(h);
    pthread_mutex_unlock(&W.mu);
    mg_exit_library();
}

int cmd_web(int argc, char **argv)
{
    struct web_args a = {.listen = "127.0.0.1:8642", .max_clients = 64, .idle_s = 30};
    char addr[64], self[4096];
    long port;
    int rc;
    if ((rc = parse_web_args(argc, argv, &a)) != 0 ||
        (rc = parse_listen(a.listen, addr, sizeof addr, &port)) != 0 ||
        (rc = pick_token(addr, a.token_file)) != 0)
        return rc;
    a.go.addr = addr;
    a.go.token = W.no_token ? NULL : W.token;
    ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
    if (sl <= 0)
        return ardt_err(ARDT_SYS, "cannot find this program (/proc/self/exe)");
    self[sl] = '\0';
    hub_set_self(self);

    rc = ardt_lib_init();
    if (rc)
        return rc;
    signal(SIGPIPE, SIG_IGN);
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    if ((rc = start_server(addr, port, &a.go)) != 0)
        return rc;
    struct mg_server_port sp[4];
    int np = mg_get_server_ports(W.ctx, 4, sp);
    int real_port = np > 0 ? sp[0].port : (int)port;
    wg_set_port(real_port);
    if (wg_start() != 0 || pthread_create(&W.pump, NULL, pump_run, NULL) != 0) {
        mg_stop(W.ctx);
        return ardt_err(ARDT_SYS, "cannot start a thread");
    }
    print_addresses(addr, real_port, a.token_file);
    serve(addr, real_port);
    return ARDT_OK;
}
