/* hub.h - what the two protocols of `ard web` (the page's at /ws, web.c; Foxglove's at "/",
 * foxglove.c) share, so that neither calls into the other: one client registry on webguard
 * (connect, ready, find, close: each protocol's client begins with a struct hub_client) and
 * `ard set` run as this program. */
#ifndef ARD_WEB_HUB_H
#define ARD_WEB_HUB_H

#include "ardc_buf.h"
#include "ardnet.h"
#include "ardnet_view.h"
#include "webguard.h"

#include <civetweb.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

/* The first member of a protocol's client. */
struct hub_client {
    struct hub_client *next;
    struct mg_connection *conn;
    struct wg_client *wg; /* its queue and writer (webguard.c) */
};

/* One protocol's clients. mu is the protocol's own lock (it guards the protocol's state with
 * the list); size is the size of its client; greet sends a ready client its first messages
 * and drop releases what a client holds (both with mu held). */
struct hub_clients {
    pthread_mutex_t *mu;
    size_t size;
    void (*greet)(struct hub_client *cl);
    void (*drop)(struct hub_client *cl);
    struct hub_client *head;
};

/* civetweb's WebSocket handlers, with the registry as their cbdata. connect: a zeroed client
 * of size bytes with a webguard slot, listed; 0, or 1 to refuse (too many clients: answered
 * 503; out of memory). ready: start the client's writer and greet it. close: unlist, drop
 * and free the client. */
int hub_connect(const struct mg_connection *c, void *clients);
void hub_ready(struct mg_connection *c, void *clients);
void hub_close(const struct mg_connection *c, void *clients);
/* A frame's opcode: 0 (end the connection) for a close, 1 (go on) for a ping or pong, -1 for
 * data (the protocol's). */
int hub_control(int op);
/* The client of c (mu held), or NULL. */
struct hub_client *hub_of(const struct hub_clients *r, const struct mg_connection *c);
/* At the end (mu held): drop and free every client. */
void hub_clear(struct hub_clients *r);

/* Queue a text message on the client (never waits; see wg_send). */
void hub_send_text(struct hub_client *cl, const struct ardc_buf *b, bool droppable);

/* A reader (IN port PREFIX_N) of connection name in the program's domain; NULL with the
 * library's error. */
ard_port *hub_open(const char *prefix, const char *name);
/* A reader's receive timed out: when its object was created anew (ard_port_recreated), p is
 * closed and a reader of the new object returned, provided it has p's size and, type not
 * NULL, that type; otherwise *gone is set (another layout) and p returned. p when the object
 * is the same, or the new one cannot be opened (yet). */
ard_port *hub_follow(ard_port *p, const char *prefix, const char *name, const char *type,
                     bool *gone);

/* Run `ard set` (this program, self: its path, set by hub_set_self) with av, so that the
 * refusals are exactly its own; its stdout and stderr (the first 8 KiB or so) appended to
 * out. Its exit code, -1 when it cannot be started. */
void hub_set_self(const char *self);
int hub_run_set(char **av, struct ardc_buf *out);

#endif /* ARD_WEB_HUB_H */
