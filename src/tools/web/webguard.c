/* webguard.c - the access rules of `ard web`'s server (webguard.h, docs/web.md "Security").
 *
 * civetweb writes to a socket blocking (mg_websocket_write waits, up to request_timeout_ms,
 * for a client that does not read). So no thread of the server ever writes to a WebSocket:
 * it queues the frame on the client (bounded, oldest dropped), and the client's own writer
 * thread does the write. A client that keeps its queue full for WG_BEHIND_MS is
 * disconnected by shutting its socket down, which ends civetweb's read loop (the close
 * handler follows) and any write waiting on it. The socket is found once at connect, by its
 * two addresses, among this process's descriptors (civetweb does not hand it out). */
#include "webguard.h"

#include "ardc_buf.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct wg_frame {
    struct wg_frame *next;
    int op;
    bool droppable;
    size_t len;
    char data[];
};

struct wg_client {
    struct wg_client *next;
    const struct mg_connection *conn;
    int fd; /* the client's socket, -1 when not found */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct wg_frame *head, *tail;
    size_t n, bytes;
    uint64_t dropped;
    int64_t behind_since; /* a frame was dropped and the queue has not emptied since */
    int64_t idle_since;   /* not active since (0: active) */
    int64_t close_at;     /* shut the socket down then, unless closed before (0: no) */
    bool ready, writing, closing, stop, drain;
    pthread_t th;
};

static struct {
    struct wg_opts o;
    char addr[64];
    char token[128];
    char hosts[WG_MAX_HOST_NAMES][256];
    atomic_int port;    /* 0 until serving: Host checks fail until then */
    pthread_mutex_t mu; /* clients, nclients */
    struct wg_client *clients;
    int nclients;
    pthread_t dog;
    bool dog_started;
    bool stopping; /* wg_disconnect_all was called: no new client (G.mu) */
    atomic_int stop;
} G = {.mu = PTHREAD_MUTEX_INITIALIZER};

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void wg_init(const struct wg_opts *o)
{
    G.o = *o;
    snprintf(G.addr, sizeof G.addr, "%s", o->addr);
    G.o.addr = G.addr;
    if (o->token) {
        snprintf(G.token, sizeof G.token, "%s", o->token);
        G.o.token = G.token;
    }
    for (int i = 0; i < o->nhost_names && i < WG_MAX_HOST_NAMES; i++) {
        snprintf(G.hosts[i], sizeof G.hosts[i], "%s", o->host_names[i]);
        G.o.host_names[i] = G.hosts[i];
    }
}

void wg_set_port(int port)
{
    atomic_store(&G.port, port);
}

/* ---- UTF-8 ------------------------------------------------------------------------------- */

bool wg_utf8_valid(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < len;) {
        size_t k = ardc_utf8_seq(p + i, len - i);
        if (!k)
            return false;
        i += k;
    }
    return true;
}

/* ---- answers ----------------------------------------------------------------------------- */

/* Text from a request, cut for a message: at most 256 bytes, then "...". */
static void cut(char *out, size_t outlen, const char *s)
{
    snprintf(out, outlen, "%.256s%s", s ? s : "", s && strlen(s) > 256 ? "..." : "");
}

static const char *reason(int status)
{
    switch (status) {
    case 200:
        return "OK";
    case 400:
        return "Bad Request";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 409:
        return "Conflict";
    case 413:
        return "Content Too Large";
    case 500:
        return "Internal Server Error";
    case 503:
        return "Service Unavailable";
    default:
        return "Error";
    }
}

int wg_reply_json(struct mg_connection *c, int status, const struct ardc_buf *body)
{
    if (body->oom)
        return mg_send_http_error(c, 500, "out of memory"), 500;
    mg_printf(c,
              "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
              "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n"
              "Connection: close\r\n\r\n",
              status, reason(status), body->len);
    mg_write(c, body->s ? body->s : "", body->len);
    return status;
}

int wg_reply_error(struct mg_connection *c, int status, const char *msg)
{
    struct ardc_buf b = {0};
    ardc_printf(&b, "{\"error\":");
    ardc_json_str(&b, msg);
    ardc_printf(&b, "}\n");
    wg_reply_json(c, status, &b);
    ardc_free(&b);
    return status;
}

__attribute__((format(printf, 3, 4))) static int reply(struct mg_connection *c, int status,
                                                       const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return wg_reply_error(c, status, msg);
}

/* ---- Host and Origin --------------------------------------------------------------------- */

static bool is_loopback(const char *a)
{
    return strncmp(a, "127.", 4) == 0;
}

static bool any_addr(const char *a)
{
    return strcmp(a, "0.0.0.0") == 0;
}

/* Is `name` (lower-case, without port) one this server answers to? An address literal
 * cannot be rebound by DNS; a name only when given with --host-name (or localhost on a
 * loopback address, which resolves locally). */
static bool name_ok(const char *name)
{
    struct in_addr a4;
    if (strcmp(name, G.o.addr) == 0)
        return true;
    if (any_addr(G.o.addr) && inet_pton(AF_INET, name, &a4) == 1)
        return true;
    if (is_loopback(G.o.addr) && strcmp(name, "localhost") == 0)
        return true;
    for (int i = 0; i < G.o.nhost_names; i++)
        if (strcasecmp(name, G.o.host_names[i]) == 0)
            return true;
    return false;
}

/* HOST[:PORT] of this server? */
static bool authority_ok(const char *h)
{
    char name[256];
    size_t n = strcspn(h, ":");
    if (n == 0 || n >= sizeof name || h[0] == '[')
        return false;
    for (size_t i = 0; i < n; i++)
        name[i] = (char)tolower((unsigned char)h[i]);
    name[n] = '\0';
    long port = atomic_load(&G.port); /* no port: browsers always send it for a port but 80; some
                           clients (civetweb's) never do. The name is what stops a rebinding. */
    if (h[n] == ':') {
        char *end = NULL;
        port = strtol(h + n + 1, &end, 10);
        if (end == h + n + 1 || *end || h[n + 1] == '+' || h[n + 1] == '-')
            return false;
    }
    return port == atomic_load(&G.port) && name_ok(name);
}

static int count_header(const struct mg_request_info *ri, const char *name)
{
    int k = 0;
    for (int i = 0; i < ri->num_headers; i++)
        k += strcasecmp(ri->http_headers[i].name, name) == 0;
    return k;
}

/* ---- the token --------------------------------------------------------------------------- */

static bool token_eq(const char *got)
{
    size_t a = strlen(got), b = strlen(G.o.token);
    unsigned diff = (unsigned)(a ^ b);
    for (size_t i = 0; i < b; i++)
        diff |= (unsigned char)(got[i < a ? i : 0] ^ G.o.token[i]);
    return diff == 0;
}

static bool ws_key_ok(const char *k)
{
    /* 16 random bytes in base64: 22 characters and "==" */
    if (!k || strlen(k) != 24 || strcmp(k + 22, "==") != 0)
        return false;
    for (int i = 0; i < 22; i++)
        if (!isalnum((unsigned char)k[i]) && k[i] != '+' && k[i] != '/')
            return false;
    return true;
}

int wg_begin_request(struct mg_connection *c)
{
    const struct mg_request_info *ri = mg_get_request_info(c);
    int port = atomic_load(&G.port);
    char cookie[40];
    snprintf(cookie, sizeof cookie, "ard_token_%d", port);
    char q[300];
    const char *host = mg_get_header(c, "Host");
    if (count_header(ri, "Host") > 1 || count_header(ri, "Origin") > 1)
        return reply(c, 400, "more than one Host or Origin header");
    if (!host)
        return reply(c, 403, "no Host header: this server answers only to its own address");
    if (!authority_ok(host)) {
        cut(q, sizeof q, host);
        return reply(c, 403,
                     "Host '%s' is not this server's address (%s:%d); another name must be "
                     "given with --host-name",
                     q, G.o.addr, port);
    }
    const char *origin = mg_get_header(c, "Origin");
    if (origin && (strncasecmp(origin, "http://", 7) != 0 || strcasecmp(origin + 7, host) != 0)) {
        cut(q, sizeof q, origin);
        char h[300];
        cut(h, sizeof h, host);
        return reply(c, 403, "Origin '%s' is not this server's (http://%s): cross-site request", q,
                     h);
    }
    const char *up = mg_get_header(c, "Upgrade");
    if (up && strcasecmp(up, "websocket") == 0) {
        const char *ver = mg_get_header(c, "Sec-WebSocket-Version");
        if (!ws_key_ok(mg_get_header(c, "Sec-WebSocket-Key")))
            return reply(c, 400, "WebSocket handshake without a valid Sec-WebSocket-Key");
        if (!ver || strcmp(ver, "13") != 0)
            return reply(c, 400, "WebSocket handshake: Sec-WebSocket-Version must be 13");
    }
    if (!G.o.token)
        return 0;
    char got[sizeof G.token + 1] = "";
    bool from_query = false;
    if (ri->query_string &&
        mg_get_var(ri->query_string, strlen(ri->query_string), "token", got, sizeof got) > 0)
        from_query = true;
    if (!got[0]) {
        const char *ck = mg_get_header(c, "Cookie");
        if (ck)
            mg_get_cookie(ck, cookie, got, sizeof got);
    }
    if (!token_eq(got))
        return reply(c, 401,
                     "a token is required: open the address ard web printed "
                     "(http://%s:%d/?token=...)",
                     G.o.addr, port);
    const char *m = ri->request_method;
    const char *u = ri->local_uri ? ri->local_uri : "";
    /* A WebSocket at "/" (the Foxglove protocol) keeps its token in the address. */
    if (from_query && !(up && strcasecmp(up, "websocket") == 0) &&
        (strcmp(m, "GET") == 0 || strcmp(m, "HEAD") == 0) &&
        (strcmp(u, "/") == 0 || strcmp(u, "/index.html") == 0)) {
        /* The page's first request: the token goes into a cookie and out of the address bar. */
        mg_printf(c,
                  "HTTP/1.1 303 See Other\r\nLocation: /\r\n"
                  "Set-Cookie: %s=%s; Path=/; HttpOnly; SameSite=Strict\r\n"
                  "Content-Length: 0\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n",
                  cookie, G.o.token);
        return 303;
    }
    return 0;
}

/* ---- clients ----------------------------------------------------------------------------- */

static bool sockaddr_is(const struct sockaddr_storage *sa, const char *addr, int port)
{
    char buf[INET6_ADDRSTRLEN];
    int p;
    if (sa->ss_family == AF_INET) {
        const struct sockaddr_in *a = (const struct sockaddr_in *)sa;
        inet_ntop(AF_INET, &a->sin_addr, buf, sizeof buf);
        p = ntohs(a->sin_port);
    } else if (sa->ss_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)sa;
        inet_ntop(AF_INET6, &a->sin6_addr, buf, sizeof buf);
        p = ntohs(a->sin6_port);
    } else
        return false;
    return p == port && strcmp(buf, addr) == 0;
}

/* The client's socket: the one descriptor whose peer is the client's address and port and
 * whose own port is the server's. */
static int find_fd(const struct mg_connection *c)
{
    const struct mg_request_info *ri = mg_get_request_info(c);
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    int found = -1;
    for (struct dirent *e; found < 0 && (e = readdir(d)) != NULL;) {
        char *end;
        long fd = strtol(e->d_name, &end, 10);
        if (*end || end == e->d_name || fd == dirfd(d))
            continue;
        struct sockaddr_storage pa, la;
        socklen_t pl = sizeof pa, ll = sizeof la;
        if (getpeername((int)fd, (struct sockaddr *)&pa, &pl) == 0 &&
            sockaddr_is(&pa, ri->remote_addr, ri->remote_port) &&
            getsockname((int)fd, (struct sockaddr *)&la, &ll) == 0 &&
            (la.ss_family == AF_INET
                 ? ntohs(((struct sockaddr_in *)&la)->sin_port)
                 : ntohs(((struct sockaddr_in6 *)&la)->sin6_port)) == ri->server_port)
            found = (int)fd;
    }
    closedir(d);
    return found;
}

static void free_frames(struct wg_client *cl)
{
    while (cl->head) {
        struct wg_frame *f = cl->head;
        cl->head = f->next;
        free(f);
    }
    cl->tail = NULL;
    cl->n = cl->bytes = 0;
}

/* Disconnect now (cl->mu held). */
static void kill_client(struct wg_client *cl)
{
    cl->closing = true;
    free_frames(cl);
    if (cl->fd >= 0)
        shutdown(cl->fd, SHUT_RDWR);
    pthread_cond_signal(&cl->cv);
}

static void client_free(struct wg_client *cl)
{
    free_frames(cl);
    pthread_mutex_destroy(&cl->mu);
    pthread_cond_destroy(&cl->cv);
    free(cl);
}

struct wg_client *wg_connect(const struct mg_connection *c)
{
    pthread_mutex_lock(&G.mu);
    /* civetweb calls no close handler when a handshake fails after the connect handler: the
     * connection object (one per worker) comes back here with that client still listed. */
    for (struct wg_client **p = &G.clients; *p; p = &(*p)->next)
        if ((*p)->conn == c && !(*p)->ready) {
            struct wg_client *old = *p;
            *p = old->next;
            G.nclients--;
            client_free(old);
            break;
        }
    if (G.stopping) {
        pthread_mutex_unlock(&G.mu);
        reply((struct mg_connection *)c, 503, "the server is stopping");
        return NULL;
    }
    if (G.nclients >= G.o.max_clients) {
        int n = G.nclients;
        pthread_mutex_unlock(&G.mu);
        reply((struct mg_connection *)c, 503,
              "too many clients: %d WebSockets are open, at most %d (ard web --max-clients)", n,
              G.o.max_clients);
        return NULL;
    }
    struct wg_client *cl = calloc(1, sizeof *cl);
    if (!cl) {
        pthread_mutex_unlock(&G.mu);
        reply((struct mg_connection *)c, 503, "out of memory");
        return NULL;
    }
    cl->conn = c;
    cl->fd = find_fd(c);
    pthread_mutex_init(&cl->mu, NULL);
    pthread_cond_init(&cl->cv, NULL);
    cl->idle_since = now_ms();
    cl->next = G.clients;
    G.clients = cl;
    G.nclients++;
    pthread_mutex_unlock(&G.mu);
    return cl;
}

static void *writer_run(void *arg)
{
    struct wg_client *cl = arg;
    pthread_mutex_lock(&cl->mu);
    for (;;) {
        while (!cl->head && !cl->stop && !cl->drain)
            pthread_cond_wait(&cl->cv, &cl->mu);
        if (cl->stop || !cl->head)
            break;
        struct wg_frame *f = cl->head;
        cl->head = f->next;
        if (!cl->head)
            cl->tail = NULL;
        cl->n--;
        cl->bytes -= f->len;
        cl->writing = true;
        pthread_mutex_unlock(&cl->mu);
        int r = mg_websocket_write((struct mg_connection *)cl->conn, f->op, f->data, f->len);
        bool ok = f->len ? r == (int)f->len : r > 0;
        bool was_close = f->op == MG_WEBSOCKET_OPCODE_CONNECTION_CLOSE;
        free(f);
        pthread_mutex_lock(&cl->mu);
        cl->writing = false;
        if (!ok) {
            /* Timed out or failed part-way: the stream is broken; end the connection. */
            kill_client(cl);
            break;
        }
        if (!cl->head)
            cl->behind_since = 0;
        if (was_close)
            break; /* nothing after a close frame; the watchdog ends it if the client won't */
    }
    pthread_mutex_unlock(&cl->mu);
    return NULL;
}

void wg_ready(struct wg_client *cl)
{
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setstacksize(&at, 256 << 10);
    pthread_mutex_lock(&cl->mu);
    cl->ready = pthread_create(&cl->th, &at, writer_run, cl) == 0;
    if (!cl->ready)
        kill_client(cl);
    pthread_mutex_unlock(&cl->mu);
    pthread_attr_destroy(&at);
}

void wg_close(struct wg_client *cl)
{
    if (!cl)
        return;
    pthread_mutex_lock(&G.mu);
    for (struct wg_client **p = &G.clients; *p; p = &(*p)->next)
        if (*p == cl) {
            *p = cl->next;
            G.nclients--;
            break;
        }
    pthread_mutex_unlock(&G.mu);
    pthread_mutex_lock(&cl->mu);
    /* What was queued before the close (an error message, say) goes out if it can within
     * a second; then the socket is shut down, ending any write that waits. */
    bool started = cl->ready, drain = !cl->closing;
    cl->closing = cl->drain = true;
    pthread_cond_signal(&cl->cv);
    pthread_mutex_unlock(&cl->mu);
    if (started && drain) {
        struct timespec dl;
        clock_gettime(CLOCK_REALTIME, &dl);
        dl.tv_sec += 1;
        if (pthread_timedjoin_np(cl->th, NULL, &dl) == 0)
            started = false;
    }
    pthread_mutex_lock(&cl->mu);
    cl->stop = true;
    if (started && cl->fd >= 0)
        shutdown(cl->fd, SHUT_RDWR); /* the socket is closing anyway */
    pthread_cond_signal(&cl->cv);
    pthread_mutex_unlock(&cl->mu);
    if (started)
        pthread_join(cl->th, NULL);
    client_free(cl);
}

static struct wg_frame *frame_new(int op, const char *data, size_t len, bool droppable)
{
    bool fix = op == MG_WEBSOCKET_OPCODE_TEXT && !wg_utf8_valid(data, len);
    size_t cap = fix ? 3 * len : len; /* each bad byte becomes U+FFFD (3 bytes) */
    struct wg_frame *f = malloc(sizeof *f + (cap ? cap : 1));
    if (!f)
        return NULL;
    f->next = NULL;
    f->op = op;
    f->droppable = droppable;
    if (!fix) {
        memcpy(f->data, data, len);
        f->len = len;
        return f;
    }
    const unsigned char *s = (const unsigned char *)data;
    size_t o = 0;
    for (size_t i = 0; i < len;) {
        size_t k = ardc_utf8_seq(s + i, len - i);
        if (k) {
            memcpy(f->data + o, s + i, k);
            o += k;
            i += k;
        } else {
            memcpy(f->data + o, "\xef\xbf\xbd", 3);
            o += 3;
            i++;
        }
    }
    f->len = o;
    return f;
}

bool wg_send(struct wg_client *cl, int op, const char *data, size_t len, bool droppable)
{
    struct wg_frame *f = frame_new(op, data, len, droppable);
    pthread_mutex_lock(&cl->mu);
    if (cl->closing || !f) {
        pthread_mutex_unlock(&cl->mu);
        free(f);
        return false;
    }
    while (cl->n >= WG_QUEUE_FRAMES || cl->bytes + f->len > WG_QUEUE_BYTES) {
        struct wg_frame **p = &cl->head, *prev = NULL;
        while (*p && !(*p)->droppable) {
            prev = *p;
            p = &(*p)->next;
        }
        if (!cl->behind_since)
            cl->behind_since = now_ms();
        cl->dropped++;
        if (*p) { /* the oldest droppable frame goes */
            struct wg_frame *old = *p;
            *p = old->next;
            if (cl->tail == old)
                cl->tail = prev;
            cl->n--;
            cl->bytes -= old->len;
            free(old);
            continue;
        }
        if (!droppable)
            kill_client(cl); /* asks and asks without reading the answers */
        bool open = !cl->closing;
        pthread_mutex_unlock(&cl->mu);
        free(f);
        return open;
    }
    if (cl->tail)
        cl->tail->next = f;
    else
        cl->head = f;
    cl->tail = f;
    cl->n++;
    cl->bytes += f->len;
    pthread_cond_signal(&cl->cv);
    pthread_mutex_unlock(&cl->mu);
    return true;
}

void wg_active(struct wg_client *cl, bool active)
{
    pthread_mutex_lock(&cl->mu);
    cl->idle_since = active ? 0 : now_ms();
    pthread_mutex_unlock(&cl->mu);
}

uint64_t wg_dropped(const struct wg_client *cl)
{
    struct wg_client *m = (struct wg_client *)cl;
    pthread_mutex_lock(&m->mu);
    uint64_t d = m->dropped;
    pthread_mutex_unlock(&m->mu);
    return d;
}

bool wg_closing(const struct wg_client *cl)
{
    struct wg_client *m = (struct wg_client *)cl;
    pthread_mutex_lock(&m->mu);
    bool c = m->closing;
    pthread_mutex_unlock(&m->mu);
    return c;
}

/* ---- the watchdog ------------------------------------------------------------------------ */

/* Replace what is queued by a close frame (code, reason), and shut the socket down after
 * wait_ms if the client has not closed by then (cl->mu held). */
static void close_with(struct wg_client *cl, int64_t now, int code, const char *reason,
                       int64_t wait_ms)
{
    char msg[128];
    int n = snprintf(msg + 2, sizeof msg - 2, "%s", reason);
    msg[0] = (char)(code >> 8);
    msg[1] = (char)(code & 0xff);
    free_frames(cl);
    struct wg_frame *f = frame_new(MG_WEBSOCKET_OPCODE_CONNECTION_CLOSE, msg, (size_t)n + 2, 0);
    if (f) {
        cl->head = cl->tail = f;
        cl->n = 1;
        cl->bytes = f->len;
    }
    cl->closing = true;
    cl->close_at = now + wait_ms; /* a client that does not answer the close frame */
    pthread_cond_signal(&cl->cv);
}

static void idle_close(struct wg_client *cl, int64_t now)
{
    char why[64];
    snprintf(why, sizeof why, "idle for %.1f s without a subscription", G.o.idle_ms / 1000.0);
    close_with(cl, now, 1008 /* policy violation */, why, 1000);
}

void wg_disconnect_all(int wait_ms)
{
    int64_t now = now_ms(), end = now + wait_ms;
    pthread_mutex_lock(&G.mu);
    G.stopping = true;
    for (struct wg_client *cl = G.clients; cl; cl = cl->next) {
        pthread_mutex_lock(&cl->mu);
        if (!cl->closing)
            close_with(cl, now, 1001 /* going away */, "the server is stopping", wait_ms);
        pthread_mutex_unlock(&cl->mu);
    }
    pthread_mutex_unlock(&G.mu);
    for (;;) {
        pthread_mutex_lock(&G.mu);
        bool none = G.clients == NULL;
        pthread_mutex_unlock(&G.mu);
        if (none || now_ms() >= end)
            break;
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    pthread_mutex_lock(&G.mu);
    for (struct wg_client *cl = G.clients; cl; cl = cl->next) {
        pthread_mutex_lock(&cl->mu);
        kill_client(cl);
        pthread_mutex_unlock(&cl->mu);
    }
    pthread_mutex_unlock(&G.mu);
}

static void *dog_run(void *arg)
{
    (void)arg;
    while (!atomic_load(&G.stop)) {
        int64_t now = now_ms();
        pthread_mutex_lock(&G.mu);
        for (struct wg_client *cl = G.clients; cl; cl = cl->next) {
            pthread_mutex_lock(&cl->mu);
            if (!cl->closing && cl->behind_since && now - cl->behind_since > WG_BEHIND_MS)
                kill_client(cl);
            else if (!cl->closing && cl->idle_since && now - cl->idle_since > G.o.idle_ms)
                idle_close(cl, now);
            else if (cl->close_at && now > cl->close_at) {
                cl->close_at = 0;
                kill_client(cl);
            }
            pthread_mutex_unlock(&cl->mu);
        }
        pthread_mutex_unlock(&G.mu);
        struct timespec ts = {0, 100000000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

int wg_start(void)
{
    atomic_store(&G.stop, 0);
    if (pthread_create(&G.dog, NULL, dog_run, NULL) != 0)
        return -1;
    G.dog_started = true;
    return 0;
}

void wg_stop(void)
{
    atomic_store(&G.stop, 1);
    if (G.dog_started)
        pthread_join(G.dog, NULL);
    G.dog_started = false;
}
