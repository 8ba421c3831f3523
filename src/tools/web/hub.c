/* hub.c - the client registry and the set runner the protocols of `ard web` share (hub.h). */
#include "hub.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* ---- the client registry ----------------------------------------------------------------- */

struct hub_client *hub_of(const struct hub_clients *r, const struct mg_connection *c)
{
    for (struct hub_client *cl = r->head; cl; cl = cl->next)
        if (cl->conn == c)
            return cl;
    return NULL;
}

struct hub_client *hub_take(struct hub_clients *r, const struct mg_connection *c)
{
    for (struct hub_client **p = &r->head; *p; p = &(*p)->next)
        if ((*p)->conn == c) {
            struct hub_client *cl = *p;
            *p = cl->next;
            return cl;
        }
    return NULL;
}

int hub_connect(const struct mg_connection *c, void *clients)
{
    struct hub_clients *r = clients;
    /* A client still listed for this connection object had its handshake fail (civetweb
     * calls no close handler then): never ready, it holds nothing of its protocol's. */
    pthread_mutex_lock(r->mu);
    struct hub_client *old = hub_take(r, c);
    pthread_mutex_unlock(r->mu);
    free(old);
    struct hub_client *cl = calloc(1, r->size);
    if (!cl)
        return 1;
    cl->wg = wg_connect(c);
    if (!cl->wg) {
        free(cl); /* too many clients: answered 503 */
        return 1;
    }
    cl->conn = (struct mg_connection *)c;
    pthread_mutex_lock(r->mu);
    cl->next = r->head;
    r->head = cl;
    pthread_mutex_unlock(r->mu);
    return 0;
}

struct hub_client *hub_ready(struct hub_clients *r, struct mg_connection *c)
{
    struct hub_client *cl = hub_of(r, c);
    if (cl)
        wg_ready(cl->wg);
    return cl;
}

void hub_release(struct hub_client *cl)
{
    if (cl) {
        wg_close(cl->wg);
        free(cl);
    }
}

struct hub_client *hub_pop(struct hub_clients *r)
{
    struct hub_client *cl = r->head;
    if (cl)
        r->head = cl->next;
    return cl;
}

void hub_free(struct hub_client *cl)
{
    free(cl);
}

int hub_control(int op)
{
    if (op == MG_WEBSOCKET_OPCODE_CONNECTION_CLOSE)
        return 0;
    if (op == MG_WEBSOCKET_OPCODE_PING || op == MG_WEBSOCKET_OPCODE_PONG)
        return 1;
    return -1;
}

void hub_send_text(struct hub_client *cl, const struct ardc_buf *b, bool droppable)
{
    if (!b->oom && b->len)
        wg_send(cl->wg, MG_WEBSOCKET_OPCODE_TEXT, b->s, b->len, droppable);
}

/* ---- readers ----------------------------------------------------------------------------- */

static pthread_mutex_t readers_mu = PTHREAD_MUTEX_INITIALIZER; /* the list and the refs */
static struct hub_reader *readers;

/* An IN port of connection name in the program's domain ("web_N"); NULL with the library's
 * error. */
static ard_port *open_port(const char *name)
{
    static atomic_uint nports;
    char pname[32];
    snprintf(pname, sizeof pname, "web_%u", atomic_fetch_add(&nports, 1));
    return ard_create_on(pname, name, ARD_IN, 0, NULL);
}

static int64_t realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The receive failed: when the object was created anew, reattach to the new one if it has
 * the same type and size; otherwise the reader is gone. Nothing when the object is the same
 * or the new one cannot be opened (yet). */
static void follow(struct hub_reader *r)
{
    if (!ard_port_recreated(r->port))
        return;
    ard_port *np = open_port(r->name);
    if (!np)
        return;
    if (ard_port_size(np) != r->size || strcmp(ard_port_type(np), r->type) != 0) {
        ard_close(np);
        atomic_store(&r->gone, true);
        return;
    }
    ard_close(r->port);
    r->port = np;
}

static void *reader_run(void *arg)
{
    struct hub_reader *r = arg;
    uint8_t *buf = malloc(r->size ? r->size : 1);
    while (buf && !atomic_load(&r->stop) && !atomic_load(&r->gone)) {
        int rc = ard_rec_timed(r->port, buf, 200000000);
        if (rc < 0) {
            if (rc != ARD_EINTR)
                follow(r);
            if (rc != ARD_ETIMEDOUT && rc != ARD_EINTR) {
                struct timespec ts = {0, 20000000}; /* nothing sent yet, or damaged */
                nanosleep(&ts, NULL);
            }
            continue;
        }
        struct ard_info in = ard_port_info(r->port);
        int64_t now = realtime_ns();
        pthread_mutex_lock(&r->mu);
        uint32_t k = (uint32_t)(r->head & (r->cap - 1));
        memcpy(r->ring + (size_t)k * r->size, buf, r->size);
        r->mono[k] = in.mono_ns;
        r->recv_real[k] = now;
        r->seq[k] = in.seq;
        r->head++;
        pthread_cond_broadcast(&r->more);
        pthread_mutex_unlock(&r->mu);
    }
    free(buf);
    return NULL;
}

static void reader_free(struct hub_reader *r)
{
    if (r->port)
        ard_close(r->port);
    free(r->ring);
    free(r->mono);
    free(r->recv_real);
    free(r->seq);
    pthread_cond_destroy(&r->more);
    pthread_mutex_destroy(&r->mu);
    free(r);
}

/* A new reader of name, its thread started (readers_mu held). */
static int reader_new(const char *name, struct hub_reader **out)
{
    struct hub_reader *r = calloc(1, sizeof *r);
    if (!r)
        return ARD_ENOMEM;
    pthread_mutex_init(&r->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&r->more, &ca);
    pthread_condattr_destroy(&ca);
    snprintf(r->name, sizeof r->name, "%s", name);
    r->port = open_port(name);
    if (!r->port) {
        int e = ard_lasterror();
        reader_free(r);
        return e < 0 ? e : ARD_ENOENT;
    }
    r->size = ard_port_size(r->port);
    snprintf(r->type, sizeof r->type, "%s", ard_port_type(r->port));
    /* About a second at 10 kHz, at most 16 MiB of packets (2 entries at least: a 4 MiB point
     * cloud takes two, not 64 of 256 MiB). */
    size_t psize = r->size ? r->size : 1;
    r->cap = 16384;
    while (r->cap > 2 && (size_t)r->cap * psize > (16u << 20))
        r->cap /= 2;
    r->ring = malloc((size_t)r->cap * psize);
    r->mono = calloc(r->cap, sizeof *r->mono);
    r->recv_real = calloc(r->cap, sizeof *r->recv_real);
    r->seq = calloc(r->cap, sizeof *r->seq);
    if (!r->ring || !r->mono || !r->recv_real || !r->seq ||
        pthread_create(&r->th, NULL, reader_run, r) != 0) {
        reader_free(r);
        return ARD_ENOMEM;
    }
    r->refs = 1;
    *out = r;
    return 0;
}

int hub_reader_get(const char *name, struct hub_reader **out)
{
    pthread_mutex_lock(&readers_mu);
    struct hub_reader *r = readers;
    while (r && (strcmp(r->name, name) != 0 || atomic_load(&r->gone)))
        r = r->next;
    int rc = 0;
    if (r)
        r->refs++;
    else if ((rc = reader_new(name, &r)) == 0) {
        r->next = readers;
        readers = r;
    }
    pthread_mutex_unlock(&readers_mu);
    *out = rc == 0 ? r : NULL;
    return rc;
}

void hub_reader_put(struct hub_reader *r)
{
    if (!r)
        return;
    pthread_mutex_lock(&readers_mu);
    bool last = --r->refs == 0;
    if (last)
        for (struct hub_reader **p = &readers; *p; p = &(*p)->next)
            if (*p == r) {
                *p = r->next;
                break;
            }
    pthread_mutex_unlock(&readers_mu);
    if (!last)
        return;
    /* Unlisted: a get of the same name meanwhile opens a new one. */
    atomic_store(&r->stop, 1);
    pthread_join(r->th, NULL);
    reader_free(r);
}

bool hub_reading(const char *name)
{
    pthread_mutex_lock(&readers_mu);
    struct hub_reader *r = readers;
    while (r && (strcmp(r->name, name) != 0 || atomic_load(&r->gone)))
        r = r->next;
    pthread_mutex_unlock(&readers_mu);
    return r != NULL;
}

bool hub_reader_next(struct hub_reader *r, uint64_t *cursor, uint64_t keep, void *pkt,
                     int64_t *recv_real, int64_t timeout_ns, const atomic_int *stop)
{
    struct timespec dl;
    clock_gettime(CLOCK_MONOTONIC, &dl);
    dl.tv_sec += (time_t)(timeout_ns / 1000000000);
    dl.tv_nsec += (long)(timeout_ns % 1000000000);
    if (dl.tv_nsec >= 1000000000) {
        dl.tv_sec++;
        dl.tv_nsec -= 1000000000;
    }
    pthread_mutex_lock(&r->mu);
    /* One wait: a wake, the end of the time or a packet. */
    if (r->head <= *cursor && !atomic_load(stop))
        pthread_cond_timedwait(&r->more, &r->mu, &dl);
    bool got = r->head > *cursor && !atomic_load(stop);
    if (got) {
        if (keep > r->cap)
            keep = r->cap; /* the older ones were overwritten */
        if (r->head - *cursor > keep)
            *cursor = r->head - keep;
        uint32_t k = (uint32_t)(*cursor & (r->cap - 1));
        memcpy(pkt, r->ring + (size_t)k * r->size, r->size);
        *recv_real = r->recv_real[k];
        (*cursor)++;
    }
    pthread_mutex_unlock(&r->mu);
    return got;
}

void hub_reader_wake(struct hub_reader *r)
{
    pthread_mutex_lock(&r->mu);
    pthread_cond_broadcast(&r->more);
    pthread_mutex_unlock(&r->mu);
}

/* ---- ard set ----------------------------------------------------------------------------- */

static char self[4096];

void hub_set_self(const char *path)
{
    snprintf(self, sizeof self, "%s", path);
}

int hub_run_set(char **av, struct ardc_buf *out)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) < 0)
        return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
    pid_t pid;
    int e = posix_spawn(&pid, self, &fa, NULL, av, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (e != 0) {
        close(fds[0]);
        return -1;
    }
    char tmp[1024];
    ssize_t r;
    while ((r = read(fds[0], tmp, sizeof tmp)) > 0 || (r < 0 && errno == EINTR))
        if (r > 0 && out->len < 8192)
            ardc_put(out, tmp, (size_t)r);
    close(fds[0]);
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}
