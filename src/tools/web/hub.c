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

/* Unlist the client of c and drop what it holds (mu held); NULL when there is none. */
static struct hub_client *take(struct hub_clients *r, const struct mg_connection *c)
{
    for (struct hub_client **p = &r->head; *p; p = &(*p)->next)
        if ((*p)->conn == c) {
            struct hub_client *cl = *p;
            *p = cl->next;
            r->drop(cl);
            return cl;
        }
    return NULL;
}

int hub_connect(const struct mg_connection *c, void *clients)
{
    struct hub_clients *r = clients;
    /* A client still listed for this connection object had its handshake fail (civetweb
     * calls no close handler then). */
    pthread_mutex_lock(r->mu);
    struct hub_client *old = take(r, c);
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

void hub_ready(struct mg_connection *c, void *clients)
{
    struct hub_clients *r = clients;
    pthread_mutex_lock(r->mu);
    struct hub_client *cl = hub_of(r, c);
    if (cl) {
        wg_ready(cl->wg);
        r->greet(cl);
    }
    pthread_mutex_unlock(r->mu);
}

void hub_close(const struct mg_connection *c, void *clients)
{
    struct hub_clients *r = clients;
    pthread_mutex_lock(r->mu);
    struct hub_client *cl = take(r, c);
    pthread_mutex_unlock(r->mu);
    if (cl) {
        wg_close(cl->wg); /* may wait a second for what was queued: not under mu */
        free(cl);
    }
}

void hub_clear(struct hub_clients *r)
{
    while (r->head) {
        struct hub_client *cl = r->head;
        r->head = cl->next;
        r->drop(cl);
        free(cl);
    }
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

ard_port *hub_open(const char *prefix, const char *name)
{
    static atomic_uint nports;
    char pname[32];
    snprintf(pname, sizeof pname, "%s_%u", prefix, atomic_fetch_add(&nports, 1));
    return ard_create_on(pname, name, ARD_IN, 0, NULL);
}

ard_port *hub_follow(ard_port *p, const char *prefix, const char *name, const char *type,
                     bool *gone)
{
    if (!ard_port_recreated(p))
        return p;
    ard_port *np = hub_open(prefix, name);
    if (!np)
        return p;
    if (ard_port_size(np) != ard_port_size(p) || (type && strcmp(ard_port_type(np), type) != 0)) {
        ard_close(np);
        *gone = true;
        return p;
    }
    ard_close(p);
    return np;
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
