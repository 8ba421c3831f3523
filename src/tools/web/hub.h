/* hub.h - what the two protocols of `ard web` (the page's at /ws, web.c; Foxglove's at "/",
 * foxglove.c) share, so that neither calls into the other: one client registry on webguard
 * (connect, ready, find, close: each protocol's client begins with a struct hub_client), one
 * reader per connection for every client of both, and `ard set` run as this program. */
#ifndef ARD_WEB_HUB_H
#define ARD_WEB_HUB_H

#include "ardc_buf.h"
#include "ardnet.h"
#include "ardnet_view.h"
#include "webguard.h"

#include <civetweb.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

/* The first member of a protocol's client. */
struct hub_client {
    struct hub_client *next;
    struct mg_connection *conn;
    struct wg_client *wg; /* its queue and writer (webguard.c) */
};

/* One protocol's clients. mu is the protocol's own lock (it guards the protocol's state with
 * the list); size is the size of its client. The hub never calls into a protocol: each
 * protocol's ready and close handlers call hub_ready and hub_take under mu and greet or
 * release the client themselves. */
struct hub_clients {
    pthread_mutex_t *mu;
    size_t size;
    struct hub_client *head;
};

/* civetweb's WebSocket connect handler, with the registry as its cbdata: a zeroed client of
 * size bytes with a webguard slot, listed; 0, or 1 to refuse (too many clients: answered
 * 503; out of memory). */
int hub_connect(const struct mg_connection *c, void *clients);
/* In the ready handler (mu held): start the writer of c's client and return the client (to
 * greet), or NULL. */
struct hub_client *hub_ready(struct hub_clients *r, struct mg_connection *c);
/* In the close handler (mu held): unlist c's client and return it (to release what it
 * holds, then hub_release it without mu), or NULL. */
struct hub_client *hub_take(struct hub_clients *r, const struct mg_connection *c);
/* Close a taken client's writer (it may wait a second for what was queued: call it without
 * mu) and free it. NULL is fine. */
void hub_release(struct hub_client *cl);
/* At the end (mu held): unlist the first client and return it (NULL when none are left),
 * to release what it holds and hub_free it. */
struct hub_client *hub_pop(struct hub_clients *r);
/* Free a client popped at the end, its writer already stopped (wg_stop). */
void hub_free(struct hub_client *cl);
/* A frame's opcode: 0 (end the connection) for a close, 1 (go on) for a ping or pong, -1 for
 * data (the protocol's). */
int hub_control(int op);
/* The client of c (mu held), or NULL. */
struct hub_client *hub_of(const struct hub_clients *r, const struct mg_connection *c);

/* Queue a text message on the client (never waits; see wg_send). */
void hub_send_text(struct hub_client *cl, const struct ardc_buf *b, bool droppable);

/* ---- readers: one per connection, shared by every client of both protocols ---------------
 *
 * A reader is a thread with an IN port of the connection that receives every packet it can
 * (an ordinary reader: a writer never waits for it; a packet it is too slow for is skipped)
 * and keeps the newest ones in a ring, with their send time, sequence number and receive
 * time. The hub keeps one per connection name, whoever watches it (page plots, Foxglove
 * subscriptions): hub_reader_get takes a reference, hub_reader_put drops it and the last one
 * stops the thread and closes the port. When the connection's object is created anew
 * (ard_port_recreated) the reader reattaches, once for all its holders, provided the new
 * object has the same type and size; with another layout it is `gone`: it reads nothing
 * more, and hub_reader_get opens a fresh one for that name. The reader never takes a lock of
 * a protocol: a holder may call get and put with its own lock held. */
struct hub_reader {
    /* Constant from get to the last put. */
    char name[ARD_MAX_NAME + 1];
    char type[ARD_MAX_TYPE + 1]; /* normalised descriptor; "" opaque */
    size_t size;                 /* packet size */
    uint32_t cap;                /* entries in the ring, a power of two */
    /* Under mu: entry k of the ring (k = index & (cap - 1)) holds packet `index`. */
    pthread_mutex_t mu;
    uint64_t head;      /* packets ever put in the ring */
    uint8_t *ring;      /* cap packets of size bytes */
    int64_t *mono;      /* the writer's CLOCK_MONOTONIC at send, ns */
    int64_t *recv_real; /* this reader's CLOCK_REALTIME when it took the packet, ns */
    uint64_t *seq;      /* the packet's sequence number */
    atomic_bool gone;   /* re-created with another layout (any thread reads it) */
    /* The hub's own. */
    pthread_cond_t more; /* broadcast with each packet and by hub_reader_wake */
    struct hub_reader *next;
    int refs;
    ard_port *port;
    pthread_t th;
    atomic_int stop;
};

/* The reader of connection name (a reference to the one open, not gone, or a new one):
 * 0, or the library's error (ARD_ENOENT: no such connection; ard_errdetail says more) or
 * ARD_ENOMEM. */
int hub_reader_get(const char *name, struct hub_reader **out);
/* Drop a reference (NULL is fine); the last stops the reader (waits up to 0.2 s for its
 * thread) and frees it. */
void hub_reader_put(struct hub_reader *r);
/* Is connection name read by an open reader (not gone)? */
bool hub_reading(const char *name);
/* Wait up to timeout_ns for a packet past *cursor (the index of the next packet to take):
 * copy the oldest one of the newest `keep` into pkt (size bytes; those before it are
 * skipped), its receive time into *recv_real, advance *cursor past it and return true. False
 * when none came in that time (a gone reader gets none), *stop is set or hub_reader_wake was
 * called. */
bool hub_reader_next(struct hub_reader *r, uint64_t *cursor, uint64_t keep, void *pkt,
                     int64_t *recv_real, int64_t timeout_ns, const atomic_int *stop);
/* Wake the threads waiting in hub_reader_next (after setting their stop). */
void hub_reader_wake(struct hub_reader *r);

/* Run `ard set` (this program, self: its path, set by hub_set_self) with av, so that the
 * refusals are exactly its own; its stdout and stderr (the first 8 KiB or so) appended to
 * out. Its exit code, -1 when it cannot be started. */
void hub_set_self(const char *self);
int hub_run_set(char **av, struct ardc_buf *out);

#endif /* ARD_WEB_HUB_H */
