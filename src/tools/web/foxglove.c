/* foxglove.c - `ard web` speaks the Foxglove WebSocket protocol (foxglove.websocket.v1) to a
 * client that offers it at "/": Foxglove and Lichtblick see the domain live (docs/web.md).
 *
 * A watcher thread lists the domain's connections twice a second and keeps one channel per
 * connection: topic, schema name (the ROS 2 type) and .msg schema from src/ros2 (ardros2.h:
 * exactly what `ard record` writes and ardnet puts on ROS 2), encoding cdr. A connection that
 * appears is advertised to every client, one that disappears or is re-created with another type or
 * size is unadvertised (and the new one advertised with a new id). A channel with subscribers has
 * the connection's reader (hub.c: one per connection, shared with the page's plots) and a
 * thread that takes every packet the reader got, encodes it once as CDR (cdr.c) and queues
 * it on each subscribed client (webguard.c: bounded queue, own writer thread, so a slow
 * client stalls nobody; data frames are the ones dropped when a client is behind). The
 * reader's receive time (CLOCK_REALTIME, ns) is the message's timestamp.
 *
 * clientPublish (with --allow-set): a client's advertise of a topic of an existing connection,
 * then its CDR messages, decoded and written by `ard set` (this program, as the page's set
 * is), so the refusals are `ard set`'s own (a live writer is named). connectionGraph: the
 * writer of each connection is its publisher, its readers the subscribers ("pid/program").
 *
 * Access (Host, Origin, token in the URL, client limit, idle timeout) is webguard.c's. */
#include "ard.h"
#include "foxglove.h"
#include "ardros2.h"
#include "hub.h"
#include "webguard.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define FOX_SUBPROTOCOL "foxglove.websocket.v1"
#define FOX_MAXMSG 65536 /* longest text message from a client */
#define FOX_MAXSUBS 256  /* subscriptions (and client channels) of one client */

/* Little-endian integers of the protocol's binary frames. */
static void st32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void st64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t ld32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* ---- a small JSON reader (client messages only: objects, arrays, strings, numbers) ------- */

enum jt { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };
struct jv {
    enum jt t;
    double num;
    char *str;       /* J_STR; also the key of an object member */
    char *key;       /* member name when inside an object */
    struct jv *kid;  /* first element / member */
    struct jv *next; /* next sibling */
};

struct jp {
    const char *p, *end;
    const char *err;
    int depth;
};

static void j_free(struct jv *v)
{
    while (v) {
        struct jv *n = v->next;
        j_free(v->kid);
        free(v->str);
        free(v->key);
        free(v);
        v = n;
    }
}

static void j_ws(struct jp *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
        j->p++;
}

static struct jv *j_value(struct jp *j);

static char *j_string(struct jp *j)
{
    if (j->p >= j->end || *j->p != '"') {
        j->err = "expected a string";
        return NULL;
    }
    j->p++;
    size_t cap = 16, n = 0;
    char *s = malloc(cap);
    while (s && j->p < j->end && *j->p != '"') {
        char c = *j->p++;
        if ((unsigned char)c < 0x20) {
            j->err = "control character in a string";
            break;
        }
        if (c == '\\') {
            if (j->p >= j->end)
                break;
            char e = *j->p++;
            const char *m = strchr("\"\\/bfnrt", e);
            if (m)
                c = "\"\\/\b\f\n\r\t"[m - "\"\\/bfnrt"];
            else if (e == 'u' && j->end - j->p >= 4) {
                unsigned u = 0;
                for (int i = 0; i < 4; i++) {
                    char h = *j->p++;
                    u = u * 16 + (unsigned)(isdigit((unsigned char)h) ? h - '0'
                                            : isxdigit((unsigned char)h)
                                                ? (tolower((unsigned char)h) - 'a' + 10)
                                                : 0);
                }
                c = u > 0 && u < 0x80 ? (char)u : '?'; /* names are ASCII */
            } else {
                j->err = "bad escape in a string";
                break;
            }
        }
        if (n + 2 > cap) {
            char *t = realloc(s, cap *= 2);
            if (!t) {
                free(s);
                s = NULL;
                break;
            }
            s = t;
        }
        s[n++] = c;
    }
    if (!s) {
        j->err = "out of memory";
        return NULL;
    }
    if (j->err || j->p >= j->end) {
        if (!j->err)
            j->err = "unterminated string";
        free(s);
        return NULL;
    }
    j->p++;
    s[n] = '\0';
    return s;
}

static struct jv *j_list(struct jp *j, bool obj)
{
    struct jv *v = calloc(1, sizeof *v), **tail;
    if (!v) {
        j->err = "out of memory";
        return NULL;
    }
    v->t = obj ? J_OBJ : J_ARR;
    tail = &v->kid;
    j->p++;
    j_ws(j);
    if (j->p < j->end && *j->p == (obj ? '}' : ']')) {
        j->p++;
        return v;
    }
    for (;;) {
        char *key = NULL;
        j_ws(j);
        if (obj) {
            if (!(key = j_string(j)))
                break;
            j_ws(j);
            if (j->p >= j->end || *j->p != ':') {
                free(key);
                j->err = "expected ':'";
                break;
            }
            j->p++;
        }
        struct jv *k = j_value(j);
        if (!k) {
            free(key);
            break;
        }
        k->key = key;
        *tail = k;
        tail = &k->next;
        j_ws(j);
        if (j->p < j->end && *j->p == ',') {
            j->p++;
            continue;
        }
        if (j->p < j->end && *j->p == (obj ? '}' : ']')) {
            j->p++;
            return v;
        }
        j->err = obj ? "expected ',' or '}'" : "expected ',' or ']'";
        break;
    }
    j_free(v);
    return NULL;
}

static struct jv *j_value(struct jp *j)
{
    j_ws(j);
    if (j->p >= j->end) {
        j->err = "unexpected end";
        return NULL;
    }
    if (++j->depth > 16) {
        j->err = "nested too deeply";
        return NULL;
    }
    struct jv *v = NULL;
    char c = *j->p;
    if (c == '{' || c == '[')
        v = j_list(j, c == '{');
    else if (c == '"') {
        char *s = j_string(j);
        if (s && (v = calloc(1, sizeof *v)) != NULL) {
            v->t = J_STR;
            v->str = s;
        } else
            free(s);
    } else {
        static const char *const words[] = {"null", "true", "false"};
        for (int i = 0; i < 3 && !v; i++) {
            size_t wl = strlen(words[i]);
            if ((size_t)(j->end - j->p) >= wl && memcmp(j->p, words[i], wl) == 0) {
                j->p += wl;
                if ((v = calloc(1, sizeof *v)) != NULL) {
                    v->t = i == 0 ? J_NULL : J_BOOL;
                    v->num = i == 1;
                }
            }
        }
        if (!v) {
            char num[64];
            size_t n = 0;
            while (j->p + n < j->end && n + 1 < sizeof num && j->p[n] &&
                   strchr("+-0123456789.eE", j->p[n]))
                n++;
            memcpy(num, j->p, n);
            num[n] = '\0';
            char *e = NULL;
            double d = strtod(num, &e);
            if (n == 0 || *e || !isfinite(d))
                j->err = "expected a value";
            else if ((v = calloc(1, sizeof *v)) != NULL) {
                v->t = J_NUM;
                v->num = d;
                j->p += n;
            }
        }
    }
    if (!v && !j->err)
        j->err = "out of memory";
    j->depth--;
    return v;
}

static struct jv *j_get(const struct jv *o, const char *key)
{
    if (!o || o->t != J_OBJ)
        return NULL;
    for (struct jv *k = o->kid; k; k = k->next)
        if (strcmp(k->key, key) == 0)
            return k;
    return NULL;
}

static const char *j_str(const struct jv *o, const char *key)
{
    const struct jv *v = j_get(o, key);
    return v && v->t == J_STR ? v->str : NULL;
}

/* An integer member in [0, 2^32). */
static bool j_u32(const struct jv *o, const char *key, uint32_t *out)
{
    const struct jv *v = j_get(o, key);
    if (!v || v->t != J_NUM || v->num < 0 || v->num > 4294967295.0 || v->num != floor(v->num))
        return false;
    *out = (uint32_t)v->num;
    return true;
}

/* ---- output text ------------------------------------------------------------------------- */

/* ---- channels and clients ---------------------------------------------------------------- */

struct fclient;

struct fsub {
    struct fclient *cl;
    uint32_t id; /* the client's subscription id */
};

struct fchan {
    struct fchan *next;
    uint32_t id;
    char name[ARD_MAX_NAME + 1];
    char topic[ARD_MAX_NAME + 2];
    char type[ARD_MAX_TYPE + 1]; /* normalized; "" opaque */
    size_t size;
    char schema_name[ARDR2_TYPE_MAX];
    struct ardc_buf schema;
    struct ardr2_layout lay;
    ard_view *view; /* tells when the object is created anew (NULL: not opened yet) */
    bool seen;      /* in the last listing */
    /* subscribers, under mu */
    pthread_mutex_t mu;
    struct fsub *subs;
    size_t nsubs;
    /* with subscribers: the connection's reader and the thread that sends its packets */
    struct hub_reader *rd;
    pthread_t th;
    bool running;
    atomic_int stop;
};

struct fcch { /* a channel a client advertised (clientPublish) */
    uint32_t id;
    char conn[ARD_MAX_NAME + 1];
};

struct fclient {
    struct hub_client h; /* its connection, queue and writer */
    struct {
        uint32_t id;
        uint32_t chan;
    } subs[FOX_MAXSUBS];
    size_t nsubs;
    struct fcch cch[FOX_MAXSUBS];
    size_t ncch;
    bool graph;
};

static struct {
    pthread_mutex_t mu; /* channels and clients; a channel's mu nests inside */
    struct fchan *chans;
    struct hub_clients clients;
    uint32_t next_id;
    bool allow_set;
    pthread_t watcher;
    bool watching;
    atomic_int stop;
    char *graph;              /* the last connectionGraphUpdate sent */
    struct ardr2_names names; /* the channels' message names (docs/ros2.md#names) */
    char host[256];
    int64_t session;
    /* Descriptors (a channel's view keeps one): how many more views a look may open, leaving
     * FOX_FD_KEEP for the HTTP clients and the plotted connections; the connections of this
     * look that did not get one; whether that was said (once). */
    size_t fd_room;
    unsigned long fd_short;
    bool fd_said;
} F = {.mu = PTHREAD_MUTEX_INITIALIZER,
       .clients = {&F.mu, sizeof(struct fclient), NULL},
       .next_id = 1};

static struct fclient *first_client(void)
{
    return (struct fclient *)F.clients.head;
}

static struct fclient *next_client(const struct fclient *cl)
{
    return (struct fclient *)cl->h.next;
}

static void send_text(struct fclient *cl, const struct ardc_buf *b)
{
    hub_send_text(&cl->h, b, false);
}

/* A status message (level 0 info, 1 warning, 2 error). */
static void fox_status(struct fclient *cl, int level, const char *fmt, ...) ARDI_PRINTF(3, 4);
static void fox_status(struct fclient *cl, int level, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    struct ardc_buf b = {0};
    ardc_printf(&b, "{\"op\":\"status\",\"level\":%d,\"message\":", level);
    ardc_json_str(&b, msg);
    ardc_printf(&b, "}");
    send_text(cl, &b);
    free(b.s);
}

static void chan_json(struct ardc_buf *b, const struct fchan *ch)
{
    ardc_printf(b, "{\"id\":%u,\"topic\":", ch->id);
    ardc_json_str(b, ch->topic);
    ardc_printf(b, ",\"encoding\":\"cdr\",\"schemaName\":");
    ardc_json_str(b, ch->schema_name);
    ardc_printf(b, ",\"schemaEncoding\":\"ros2msg\",\"schema\":");
    ardc_json_str(b, ch->schema.p ? (const char *)ch->schema.p : "");
    ardc_printf(b, "}");
}

static void advertise(struct fclient *only, const struct fchan *ch)
{
    struct ardc_buf b = {0};
    ardc_printf(&b, "{\"op\":\"advertise\",\"channels\":[");
    for (const struct fchan *c = ch ? ch : F.chans; c; c = ch ? NULL : c->next) {
        if (c != ch && c != F.chans)
            ardc_printf(&b, ",");
        chan_json(&b, c);
    }
    ardc_printf(&b, "]}");
    for (struct fclient *cl = only ? only : first_client(); cl; cl = only ? NULL : next_client(cl))
        send_text(cl, &b);
    free(b.s);
}

/* ---- readers ----------------------------------------------------------------------------- */

/* Every packet the channel's reader takes, CDR-encoded once, to each subscriber. */
static void *sender_run(void *arg)
{
    struct fchan *ch = arg;
    struct hub_reader *r = ch->rd;
    size_t hdr = 1 + 4 + 8, len = hdr + ARDR2_CDR_HDR + ch->lay.body;
    uint8_t *pkt = malloc(ch->size), *msg = malloc(len);
    pthread_mutex_lock(&r->mu);
    uint64_t cursor = r->head; /* what is received from now on */
    pthread_mutex_unlock(&r->mu);
    int64_t t;
    while (pkt && msg && !atomic_load(&ch->stop)) {
        /* Behind by more than a client's queue holds, the older ones would only push
         * each other out of it: skipped. */
        if (!hub_reader_next(r, &cursor, WG_QUEUE_FRAMES, pkt, &t, 200000000, &ch->stop))
            continue;
        msg[0] = 1; /* Message Data */
        st64(msg + 5, (uint64_t)t);
        ardr2_cdr_encode(&ch->lay, pkt, msg + hdr);
        pthread_mutex_lock(&ch->mu);
        for (size_t i = 0; i < ch->nsubs; i++) {
            st32(msg + 1, ch->subs[i].id);
            wg_send(ch->subs[i].cl->h.wg, MG_WEBSOCKET_OPCODE_BINARY, (const char *)msg, len, true);
        }
        pthread_mutex_unlock(&ch->mu);
    }
    free(pkt);
    free(msg);
    return NULL;
}

/* Take the connection's reader and start the sender (F.mu held). NULL, or what failed. */
static const char *reader_start(struct fchan *ch)
{
    char norm[ARD_MAX_TYPE + 1] = "";
    int rc = hub_reader_get(ch->name, &ch->rd);
    if (rc < 0)
        return rc == ARD_ENOENT ? "the connection is gone" : ard_strerror(rc);
    if (ch->rd->size != ch->size ||
        (ch->rd->type[0] && ard_type_normalize(ch->rd->type, norm, sizeof norm) < 0) ||
        strcmp(norm, ch->type) != 0) {
        hub_reader_put(ch->rd);
        ch->rd = NULL;
        return "the connection was created anew with another layout (its channel is replaced)";
    }
    ch->running = pthread_create(&ch->th, NULL, sender_run, ch) == 0;
    if (!ch->running) {
        hub_reader_put(ch->rd);
        ch->rd = NULL;
        return "cannot start a thread";
    }
    return NULL;
}

/* Stop a channel's sender and drop its reader (F.mu held; neither takes F.mu). */
static void reader_stop(struct fchan *ch)
{
    if (!ch->running)
        return;
    atomic_store(&ch->stop, 1);
    hub_reader_wake(ch->rd);
    pthread_join(ch->th, NULL);
    hub_reader_put(ch->rd);
    ch->rd = NULL;
    ch->running = false;
    atomic_store(&ch->stop, 0);
}

static void chan_free(struct fchan *ch)
{
    reader_stop(ch);
    free(ch->subs);
    ard_view_close(ch->view);
    ardc_free(&ch->schema);
    ardr2_layout_free(&ch->lay);
    pthread_mutex_destroy(&ch->mu);
    free(ch);
}

static struct fchan *chan_by_id(uint32_t id)
{
    for (struct fchan *c = F.chans; c; c = c->next)
        if (c->id == id)
            return c;
    return NULL;
}

/* Remove client cl's subscription(s) to channel ch (F.mu held); the reader stops with the
 * last one. */
static void chan_unsub(struct fchan *ch, struct fclient *cl, uint32_t subid, bool all)
{
    pthread_mutex_lock(&ch->mu);
    for (size_t i = 0; i < ch->nsubs;)
        if (ch->subs[i].cl == cl && (all || ch->subs[i].id == subid))
            ch->subs[i] = ch->subs[--ch->nsubs];
        else
            i++;
    bool none = ch->nsubs == 0;
    pthread_mutex_unlock(&ch->mu);
    if (none)
        reader_stop(ch);
}

static void client_active(struct fclient *cl)
{
    wg_active(cl->h.wg, cl->nsubs > 0 || cl->graph);
}

/* ---- the watcher: connections appear, disappear, are re-created -------------------------- */

struct listing {
    char (*names)[ARD_MAX_NAME + 1];
    size_t n, cap;
};

static int list_add(const char *name, void *arg)
{
    struct listing *l = arg;
    if (l->n == l->cap) {
        size_t c = l->cap ? l->cap * 2 : 64;
        void *q = realloc(l->names, c * sizeof *l->names);
        if (!q)
            return 1;
        l->names = q;
        l->cap = c;
    }
    snprintf(l->names[l->n++], sizeof l->names[0], "%s", name);
    return 0;
}

/* A channel for the object that view v shows (v is the channel's from now on, or closed). */
static struct fchan *chan_new(const char *name, const struct ard_conn_stat *st, ard_view *v)
{
    struct fchan *ch = calloc(1, sizeof *ch);
    if (!ch) {
        ard_view_close(v);
        return NULL;
    }
    ch->view = v;
    pthread_mutex_init(&ch->mu, NULL);
    snprintf(ch->name, sizeof ch->name, "%s", name);
    ch->size = st->size;
    if ((st->type[0] && ard_type_normalize(st->type, ch->type, sizeof ch->type) < 0) ||
        ardr2_topic(name, ch->topic, sizeof ch->topic) < 0 ||
        ardr2_layout_init(&ch->lay, ch->type, ch->size) < 0 ||
        ardr2_msgdef(ch->type, ch->size, &ch->schema) < 0) {
        chan_free(ch);
        return NULL;
    }
    ardc_put(&ch->schema, "", 1); /* terminated: sent as a JSON string */
    if (ch->schema.oom) {
        chan_free(ch);
        return NULL;
    }
    ch->schema.len--;
    /* The schema name is the ROS 2 type, the same as in a recording and on ROS 2. */
    char msg[ARDR2_MSG_MAX];
    const char *other = NULL;
    int rc = ardr2_names_add(&F.names, name, ardr2_fnv1a(ch->schema.p, ch->schema.len), msg,
                             sizeof msg, &other);
    if (rc < 0) {
        chan_free(ch);
        return NULL;
    }
    if (rc == 1) {
        char why[3 * ARD_MAX_NAME + 200];
        ardr2_clash_text(why, sizeof why, other, name, msg);
        ardt_err(0, "%s", why);
    }
    ardr2_type_name(msg, ch->schema_name, sizeof ch->schema_name);
    ch->id = F.next_id++;
    return ch;
}

/* Remove channel *pp and tell the clients (F.mu held). */
static void chan_remove(struct fchan **pp)
{
    struct fchan *ch = *pp;
    *pp = ch->next;
    ardr2_names_drop(&F.names, ch->name);
    struct ardc_buf b = {0};
    ardc_printf(&b, "{\"op\":\"unadvertise\",\"channelIds\":[%u]}", ch->id);
    for (struct fclient *cl = first_client(); cl; cl = next_client(cl)) {
        send_text(cl, &b);
        size_t k = 0;
        for (size_t i = 0; i < cl->nsubs; i++)
            if (cl->subs[i].chan != ch->id)
                cl->subs[k++] = cl->subs[i];
        cl->nsubs = k;
        client_active(cl);
    }
    free(b.s);
    chan_free(ch);
}

/* "pid/program" of each peer in one direction. */
static void peers_json(struct ardc_buf *b, const struct ard_peer *pe, int n, enum ard_dir dir)
{
    bool first = true;
    ardc_printf(b, "[");
    for (int i = 0; i < n; i++)
        if (pe[i].dir == dir) {
            char id[64];
            snprintf(id, sizeof id, "%d/%s", (int)pe[i].pid, pe[i].program);
            ardc_printf(b, first ? "" : ",");
            ardc_json_str(b, id);
            first = false;
        }
    ardc_printf(b, "]");
}

/* The connection graph now (F.mu held): every topic's writer and readers. */
static char *graph_json(const char *removed)
{
    struct ardc_buf pub = {0}, sub = {0};
    struct ard_peer pe[64];
    for (struct fchan *c = F.chans; c; c = c->next) {
        int n = ard_conn_peers(ardt_g.domain, c->name, pe, 64);
        if (n < 0)
            n = 0;
        if (n > 64)
            n = 64;
        ardc_printf(&pub, "%s{\"name\":", pub.len ? "," : "");
        ardc_json_str(&pub, c->topic);
        ardc_printf(&pub, ",\"publisherIds\":");
        peers_json(&pub, pe, n, ARD_OUT);
        ardc_printf(&pub, "}");
        ardc_printf(&sub, "%s{\"name\":", sub.len ? "," : "");
        ardc_json_str(&sub, c->topic);
        ardc_printf(&sub, ",\"subscriberIds\":");
        peers_json(&sub, pe, n, ARD_IN);
        ardc_printf(&sub, "}");
    }
    struct ardc_buf b = {0};
    ardc_printf(
        &b,
        "{\"op\":\"connectionGraphUpdate\",\"publishedTopics\":[%s],\"subscribedTopics\":[%s],"
        "\"advertisedServices\":[],\"removedTopics\":[%s],\"removedServices\":[]}",
        pub.s ? pub.s : "", sub.s ? sub.s : "", removed ? removed : "");
    free(pub.s);
    free(sub.s);
    if (b.oom) {
        free(b.s);
        return NULL;
    }
    return b.s;
}

#define FOX_FD_KEEP 64

/* Note that connection name is (still) there (F.mu held). A channel keeps one view of its
 * object: as long as the object is the same, nothing is mapped; an object created anew is
 * looked at once: with the same type and size its channel stays (the reader follows it
 * itself), with another the channel is replaced (its topic added to removed). */
static void watch_name(const char *name, struct ardc_buf *removed)
{
    struct fchan **pp = &F.chans;
    while (*pp && strcmp((*pp)->name, name) != 0)
        pp = &(*pp)->next;
    if (*pp && (*pp)->view && !ard_view_recreated((*pp)->view)) {
        (*pp)->seen = true;
        return;
    }
    ard_view *v;
    struct ard_conn_stat st;
    char norm[ARD_MAX_TYPE + 1] = "";
    if (F.fd_room == 0) {
        F.fd_short++; /* (said once, with the limit) */
        return;
    }
    if (ardt_view_open(name, &v) < 0) {
        F.fd_short += ardc_nofile_exhausted();
        return; /* damaged, foreign, being created: not a channel (yet) */
    }
    if (F.fd_room != (size_t)-1)
        F.fd_room--;
    ard_view_stat(v, &st);
    if (st.size == 0 || (st.type[0] && ard_type_normalize(st.type, norm, sizeof norm) < 0)) {
        ard_view_close(v);
        return;
    }
    if (*pp && (*pp)->size == st.size && strcmp((*pp)->type, norm) == 0) {
        struct fchan *c = *pp;
        ard_view_close(c->view);
        c->view = v;
        c->seen = true;
        return;
    }
    if (*pp) {
        ardc_printf(removed, "%s", removed->len ? "," : "");
        ardc_json_str(removed, (*pp)->topic);
        chan_remove(pp); /* re-created with another type: a new channel */
    }
    struct fchan *ch = chan_new(name, &st, v);
    if (!ch)
        return;
    ch->seen = true;
    struct fchan **tail = &F.chans;
    while (*tail)
        tail = &(*tail)->next;
    *tail = ch;
    advertise(NULL, ch);
}

static void watch_once(void)
{
    struct listing l = {0};
    int rc = ard_conn_list(ardt_g.domain, list_add, &l);
    pthread_mutex_lock(&F.mu);
    if (rc < 0) {
        pthread_mutex_unlock(&F.mu);
        free(l.names);
        return;
    }
    struct ardc_buf removed = {0};
    for (struct fchan *c = F.chans; c; c = c->next)
        c->seen = false;
    F.fd_room = ardc_nofile_room(FOX_FD_KEEP);
    F.fd_short = 0;
    for (size_t i = 0; i < l.n; i++)
        watch_name(l.names[i], &removed);
    if (F.fd_short > 0 && !F.fd_said) {
        ardc_nofile_say("ard web", "connections", F.fd_short, FOX_FD_KEEP);
        F.fd_said = true;
    }
    for (struct fchan **pp = &F.chans; *pp;)
        if (!(*pp)->seen) {
            ardc_printf(&removed, "%s", removed.len ? "," : "");
            ardc_json_str(&removed, (*pp)->topic);
            chan_remove(pp);
        } else
            pp = &(*pp)->next;
    bool any = false;
    for (struct fclient *cl = first_client(); cl && !any; cl = next_client(cl))
        any = cl->graph;
    if (any) {
        char *g = graph_json(removed.s);
        if (g && (removed.len || !F.graph || strcmp(g, F.graph) != 0)) {
            struct ardc_buf b = {.s = g, .len = strlen(g), .cap = strlen(g) + 1};
            for (struct fclient *cl = first_client(); cl; cl = next_client(cl))
                if (cl->graph)
                    send_text(cl, &b);
        }
        if (g) {
            free(F.graph);
            F.graph = g;
        }
    }
    pthread_mutex_unlock(&F.mu);
    free(removed.s);
    free(l.names);
}

static void *watch_run(void *arg)
{
    (void)arg;
    while (!F.stop) {
        watch_once();
        for (int i = 0; i < 5 && !F.stop; i++) {
            struct timespec ts = {0, 100000000};
            nanosleep(&ts, NULL);
        }
    }
    return NULL;
}

/* ---- client operations ------------------------------------------------------------------- */

static struct fclient *client_of(const struct mg_connection *c)
{
    return (struct fclient *)hub_of(&F.clients, c);
}

static void op_subscribe(struct fclient *cl, const struct jv *m)
{
    const struct jv *subs = j_get(m, "subscriptions");
    if (!subs || subs->t != J_ARR) {
        fox_status(cl, 2, "subscribe: expected \"subscriptions\": [{id, channelId}...]");
        return;
    }
    for (const struct jv *s = subs->kid; s; s = s->next) {
        uint32_t id, cid;
        if (!j_u32(s, "id", &id) || !j_u32(s, "channelId", &cid)) {
            fox_status(cl, 2, "subscribe: each subscription needs an integer id and channelId");
            continue;
        }
        struct fchan *ch = chan_by_id(cid);
        bool dup = false;
        for (size_t i = 0; i < cl->nsubs; i++)
            dup = dup || cl->subs[i].id == id;
        if (!ch)
            fox_status(cl, 2, "subscribe: no channel %u (unadvertised or never advertised)", cid);
        else if (dup)
            fox_status(cl, 2, "subscribe: subscription id %u is already in use", id);
        else if (cl->nsubs == FOX_MAXSUBS)
            fox_status(cl, 2, "subscribe: at most %d subscriptions per client", FOX_MAXSUBS);
        else {
            pthread_mutex_lock(&ch->mu);
            struct fsub *ns = realloc(ch->subs, (ch->nsubs + 1) * sizeof *ns);
            if (ns) {
                ch->subs = ns;
                ch->subs[ch->nsubs++] = (struct fsub){cl, id};
            }
            pthread_mutex_unlock(&ch->mu);
            if (!ns) {
                fox_status(cl, 2, "subscribe: out of memory");
                continue;
            }
            cl->subs[cl->nsubs].id = id;
            cl->subs[cl->nsubs++].chan = cid;
            const char *why = ch->running ? NULL : reader_start(ch);
            if (why)
                fox_status(cl, 2, "subscribe: no reader of %s: %s", ch->name, why);
        }
    }
    client_active(cl);
}

static void op_unsubscribe(struct fclient *cl, const struct jv *m)
{
    const struct jv *ids = j_get(m, "subscriptionIds");
    if (!ids || ids->t != J_ARR) {
        fox_status(cl, 2, "unsubscribe: expected \"subscriptionIds\": [...]");
        return;
    }
    for (const struct jv *v = ids->kid; v; v = v->next) {
        size_t i = 0;
        while (i < cl->nsubs && !(v->t == J_NUM && cl->subs[i].id == v->num))
            i++;
        if (i == cl->nsubs) {
            fox_status(cl, 1, "unsubscribe: no subscription %g", v->t == J_NUM ? v->num : -1.0);
            continue;
        }
        struct fchan *ch = chan_by_id(cl->subs[i].chan);
        if (ch)
            chan_unsub(ch, cl, cl->subs[i].id, false);
        cl->subs[i] = cl->subs[--cl->nsubs];
    }
    client_active(cl);
}

static void op_advertise(struct fclient *cl, const struct jv *m)
{
    const struct jv *chs = j_get(m, "channels");
    if (!F.allow_set) {
        fox_status(cl, 2,
                   "advertise: read-only server (clientPublish not offered): start ard web with "
                   "--allow-set to write packets");
        return;
    }
    if (!chs || chs->t != J_ARR) {
        fox_status(cl, 2, "advertise: expected \"channels\": [{id, topic, encoding}...]");
        return;
    }
    for (const struct jv *c = chs->kid; c; c = c->next) {
        uint32_t id = 0;
        const char *topic = j_str(c, "topic"), *enc = j_str(c, "encoding");
        char conn[ARD_MAX_NAME + 1];
        bool okid = j_u32(c, "id", &id), dup = false;
        for (size_t i = 0; i < cl->ncch; i++)
            dup = dup || cl->cch[i].id == id;
        if (!okid || !topic || !enc)
            fox_status(cl, 2, "advertise: each channel needs an integer id, a topic, an encoding");
        else if (strcmp(enc, "cdr") != 0)
            fox_status(cl, 2, "advertise %s: encoding '%.100s' (only cdr is supported)", topic,
                       enc);
        else if (ardr2_topic_conn(topic, conn, sizeof conn) < 0)
            fox_status(cl, 2, "advertise: %s", ard_errdetail());
        else if (dup)
            fox_status(cl, 2, "advertise: client channel id %u is already in use", id);
        else if (cl->ncch == FOX_MAXSUBS)
            fox_status(cl, 2, "advertise: at most %d client channels", FOX_MAXSUBS);
        else {
            cl->cch[cl->ncch].id = id;
            snprintf(cl->cch[cl->ncch++].conn, sizeof conn, "%s", conn);
        }
    }
}

static void op_unadvertise(struct fclient *cl, const struct jv *m)
{
    const struct jv *ids = j_get(m, "channelIds");
    if (!ids || ids->t != J_ARR) {
        fox_status(cl, 2, "unadvertise: expected \"channelIds\": [...]");
        return;
    }
    for (const struct jv *v = ids->kid; v; v = v->next)
        for (size_t i = 0; i < cl->ncch; i++)
            if (v->t == J_NUM && cl->cch[i].id == v->num) {
                cl->cch[i] = cl->cch[--cl->ncch];
                break;
            }
}

/* Every field of pkt as FIELD=V1,V2,... (values printed exactly: ardt_put_value), appended
 * to av at *ac (each allocated; NULL where memory ran out), then NULL. False when memory ran
 * out. */
static bool set_assignments(const struct ardt_type *t, const uint8_t *pkt, char **av, int *ac)
{
    bool ok = true;
    for (size_t i = 0; i < t->nfields; i++) {
        char *s = NULL, nb[24];
        size_t sl = 0;
        FILE *o = open_memstream(&s, &sl);
        if (!o) {
            ok = false;
            av[(*ac)++] = NULL;
            continue;
        }
        fprintf(o, "%s=", ardt_field_name(t, i, nb, sizeof nb));
        for (uint32_t k = 0; k < t->fields[i].count; k++) {
            fputs(k ? "," : "", o);
            ardt_put_value(o, &t->fields[i], pkt, k, false);
        }
        fclose(o);
        ok = ok && s;
        av[(*ac)++] = s;
    }
    av[*ac] = NULL;
    return ok;
}

/* A client's message on one of its channels: decoded from CDR, written by `ard set`. Called
 * without F.mu (it runs a program); the channel's layout is copied under it first. */
static void client_publish(struct mg_connection *c, const uint8_t *data, size_t len)
{
    pthread_mutex_lock(&F.mu);
    struct fclient *cl = client_of(c);
    if (!cl || len < 5) {
        if (cl)
            fox_status(cl, 2, "client message shorter than its 5-byte header");
        pthread_mutex_unlock(&F.mu);
        return;
    }
    uint32_t cid = ld32(data + 1);
    const struct fcch *cc = NULL;
    for (size_t i = 0; i < cl->ncch && !cc; i++)
        if (cl->cch[i].id == cid)
            cc = &cl->cch[i];
    if (!cc) {
        fox_status(cl, 2, "message on client channel %u, which was not advertised", cid);
        pthread_mutex_unlock(&F.mu);
        return;
    }
    char conn[ARD_MAX_NAME + 1];
    snprintf(conn, sizeof conn, "%s", cc->conn);
    struct fchan *ch = F.chans;
    while (ch && strcmp(ch->name, conn) != 0)
        ch = ch->next;
    if (!ch || !ch->lay.nfields) {
        fox_status(cl, 2,
                   ch ? "connection '%s' is opaque (no type): no fields to set"
                      : "connection '%s' does not exist in domain '%s'",
                   conn, ardt_g.domain);
        pthread_mutex_unlock(&F.mu);
        return;
    }
    struct ardt_type t;
    uint8_t *pkt = malloc(ch->size);
    struct ardr2_layout lay;
    int rc = pkt ? ardr2_layout_init(&lay, ch->type, ch->size) : ARD_ENOMEM;
    const char *why = rc < 0 ? "out of memory" : ardr2_cdr_decode(&lay, data + 5, len - 5, pkt);
    if (!why && ardt_type_init(&t, ch->type, ch->size) != 0)
        why = "bad type";
    pthread_mutex_unlock(&F.mu);
    if (rc == 0)
        ardr2_layout_free(&lay);
    if (why) {
        pthread_mutex_lock(&F.mu);
        if ((cl = client_of(c)) != NULL)
            fox_status(cl, 2, "message for %s: %s", conn, why);
        pthread_mutex_unlock(&F.mu);
        free(pkt);
        return;
    }
    char *av[t.nfields + 5];
    char dom[ARD_MAX_NAME + 16];
    snprintf(dom, sizeof dom, "--domain=%s", ardt_g.domain);
    int ac = 0;
    av[ac++] = "ard";
    av[ac++] = dom;
    av[ac++] = "set";
    av[ac++] = conn;
    bool oom = !set_assignments(&t, pkt, av, &ac);
    struct ardc_buf res = {0};
    int code = oom ? -1 : hub_run_set(av, &res);
    char out[1024];
    snprintf(out, sizeof out, "%s", res.s && !res.oom ? res.s : "");
    ardc_free(&res);
    for (int i = 4; i < ac; i++)
        free(av[i]);
    ardt_type_free(&t);
    free(pkt);
    if (code != 0) {
        out[strcspn(out, "\n")] = '\0';
        pthread_mutex_lock(&F.mu);
        if ((cl = client_of(c)) != NULL)
            fox_status(cl, 2, "%s: %s", conn,
                       code < 0 ? "cannot run ard set"
                       : out[0] ? out
                                : "ard set failed");
        pthread_mutex_unlock(&F.mu);
    }
}

/* ---- civetweb handlers ------------------------------------------------------------------- */

static void client_drop(struct hub_client *h)
{
    struct fclient *cl = (struct fclient *)h;
    for (size_t i = 0; i < cl->nsubs; i++) {
        struct fchan *ch = chan_by_id(cl->subs[i].chan);
        if (ch)
            chan_unsub(ch, cl, 0, true);
    }
    cl->nsubs = 0;
}

static int fox_connect(const struct mg_connection *c, void *cb)
{
    (void)cb;
    const struct mg_request_info *ri = mg_get_request_info(c);
    if (!ri->acceptedWebSocketSubprotocol ||
        strcmp(ri->acceptedWebSocketSubprotocol, FOX_SUBPROTOCOL) != 0)
        return 1; /* "/" speaks only the Foxglove protocol; the page's is at /ws */
    return hub_connect(c, &F.clients);
}

static void client_greet(struct hub_client *h)
{
    struct fclient *cl = (struct fclient *)h;
    struct ardc_buf b = {0};
    ardc_printf(&b,
                "{\"op\":\"serverInfo\",\"name\":\"ard web (ardnet %d.%d.%d)\",\"capabilities\":[",
                ARD_VERSION_MAJOR, ARD_VERSION_MINOR, ARD_VERSION_PATCH);
    ardc_printf(&b, "\"connectionGraph\"%s]", F.allow_set ? ",\"clientPublish\"" : "");
    ardc_printf(&b, ",\"supportedEncodings\":[\"cdr\"],\"metadata\":{\"domain\":");
    ardc_json_str(&b, ardt_g.domain);
    ardc_printf(&b, ",\"host\":");
    ardc_json_str(&b, F.host);
    ardc_printf(&b, "},\"sessionId\":\"%lld\"}", (long long)F.session);
    send_text(cl, &b);
    free(b.s);
    if (F.chans)
        advertise(cl, NULL);
}

/* civetweb's ready and close handlers of "/" (the registry is hub.c's). */
static void fox_ready(struct mg_connection *c, void *cb)
{
    (void)cb;
    pthread_mutex_lock(&F.mu);
    struct hub_client *h = hub_ready(&F.clients, c);
    if (h)
        client_greet(h);
    pthread_mutex_unlock(&F.mu);
}

static void fox_close(const struct mg_connection *c, void *cb)
{
    (void)cb;
    pthread_mutex_lock(&F.mu);
    struct hub_client *h = hub_take(&F.clients, c);
    if (h)
        client_drop(h);
    pthread_mutex_unlock(&F.mu);
    hub_release(h);
}

static int fox_data(struct mg_connection *c, int bits, char *data, size_t len, void *cb)
{
    (void)cb;
    int op = bits & 0x0f, ctl = hub_control(op);
    if (ctl >= 0)
        return ctl;
    if (op == MG_WEBSOCKET_OPCODE_BINARY) {
        if (len >= 1 && (uint8_t)data[0] == 1 && F.allow_set)
            client_publish(c, (const uint8_t *)data, len);
        else {
            pthread_mutex_lock(&F.mu);
            struct fclient *cl = client_of(c);
            if (cl)
                fox_status(cl, 2,
                           F.allow_set ? "binary message with opcode %d: only client message "
                                         "data (1) is accepted"
                                       : "binary message with opcode %d: this server is "
                                         "read-only (no clientPublish, services or assets)",
                           len ? (uint8_t)data[0] : -1);
            pthread_mutex_unlock(&F.mu);
        }
        return 1;
    }
    struct jv *m = NULL;
    struct jp j = {data, data + len, NULL, 0};
    const char *err = NULL;
    if (op != MG_WEBSOCKET_OPCODE_TEXT)
        err = "expected a text or binary message";
    else if (len > FOX_MAXMSG)
        err = "message too long (at most 65536 bytes)";
    else if (!wg_utf8_valid(data, len))
        err = "text message that is not UTF-8";
    else if ((m = j_value(&j)) == NULL || (j_ws(&j), j.p != j.end) || m->t != J_OBJ)
        err = j.err ? j.err : "expected one JSON object";
    pthread_mutex_lock(&F.mu);
    struct fclient *cl = client_of(c);
    const char *o = j_str(m, "op");
    if (!cl)
        ;
    else if (err)
        fox_status(cl, 2, "bad message: %s", err);
    else if (!o)
        fox_status(cl, 2, "message without \"op\"");
    else if (strcmp(o, "subscribe") == 0)
        op_subscribe(cl, m);
    else if (strcmp(o, "unsubscribe") == 0)
        op_unsubscribe(cl, m);
    else if (strcmp(o, "advertise") == 0)
        op_advertise(cl, m);
    else if (strcmp(o, "unadvertise") == 0)
        op_unadvertise(cl, m);
    else if (strcmp(o, "subscribeConnectionGraph") == 0) {
        cl->graph = true;
        client_active(cl);
        char *g = graph_json(NULL);
        if (g) {
            struct ardc_buf b = {.s = g, .len = strlen(g), .cap = strlen(g) + 1};
            send_text(cl, &b);
            free(g);
        }
    } else if (strcmp(o, "unsubscribeConnectionGraph") == 0) {
        cl->graph = false;
        client_active(cl);
    } else
        fox_status(cl, 2, "op '%.100s' is not supported (no parameters, services or assets)", o);
    bool keep = cl && !wg_closing(cl->h.wg);
    pthread_mutex_unlock(&F.mu);
    j_free(m);
    return keep;
}

int fox_start(struct mg_context *ctx, bool allow_set)
{
    static const char *protos[] = {FOX_SUBPROTOCOL};
    static struct mg_websocket_subprotocols sp = {1, protos};
    F.allow_set = allow_set;
    gethostname(F.host, sizeof F.host - 1);
    F.session = ard_now_ns();
    mg_set_websocket_handler_with_subprotocols(ctx, "/$", &sp, fox_connect, fox_ready, fox_data,
                                               fox_close, &F.clients);
    watch_once();
    F.watching = pthread_create(&F.watcher, NULL, watch_run, NULL) == 0;
    return F.watching ? 0 : -1;
}

void fox_stop(void)
{
    F.stop = 1;
    if (F.watching)
        pthread_join(F.watcher, NULL);
    F.watching = false;
    pthread_mutex_lock(&F.mu);
    for (struct hub_client *h; (h = hub_pop(&F.clients)) != NULL; hub_free(h))
        client_drop(h);
    while (F.chans) {
        struct fchan *ch = F.chans;
        F.chans = ch->next;
        chan_free(ch);
    }
    free(F.graph);
    F.graph = NULL;
    ardr2_names_free(&F.names);
    pthread_mutex_unlock(&F.mu);
}
