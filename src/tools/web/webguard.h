/* webguard.h - the access rules of `ard web`'s server, written once for every protocol it
 * speaks on its port (docs/web.md, "Security"): Host and Origin checked on every request and
 * handshake, a token (query, then cookie) on every address, a maximum number of WebSocket
 * clients, an idle timeout, and for each client a bounded send queue emptied by a writer
 * thread of its own, so that no server thread ever waits for one client. */
#ifndef ARD_WEBGUARD_H
#define ARD_WEBGUARD_H

#include "ardc_buf.h"

#include <civetweb.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WG_MAX_HOST_NAMES 8
#define WG_QUEUE_FRAMES 32        /* frames waiting for one client, at most */
#define WG_QUEUE_BYTES (4u << 20) /* bytes waiting for one client, at most */
#define WG_BEHIND_MS 5000         /* a client dropping frames this long is disconnected */
#define WG_EXTRA_WORKERS 64       /* civetweb workers beyond one per client, for requests */

struct wg_opts {
    const char *addr; /* the numeric address listened on ("0.0.0.0" for any) */
    const char *host_names[WG_MAX_HOST_NAMES];
    int nhost_names;
    const char *token; /* NULL: no token (loopback only, checked by the caller) */
    int max_clients;   /* WebSocket clients at once; more get 503 */
    int idle_ms;       /* a client not active (wg_active) for this long is closed */
};

/* Copy the options (before mg_start). */
void wg_init(const struct wg_opts *o);
/* The port actually listened on (after mg_start; port 0 picks one). The token's cookie is
 * "ard_token_PORT". */
void wg_set_port(int port);

/* civetweb's begin_request callback: checks Host, Origin, the WebSocket handshake's key and
 * the token; answers 403, 400 or 401 itself (returning the status), turns a page request
 * carrying ?token= into a redirect that sets the cookie (303), or returns 0 to go on. */
int wg_begin_request(struct mg_connection *c);

/* Every JSON answer of the server: status, body (500 when the body ran out of memory), never
 * cached, never sniffed. Returns the status sent. */
int wg_reply_json(struct mg_connection *c, int status, const struct ardc_buf *body);
/* {"error":"msg"} with that status. Returns status. */
int wg_reply_error(struct mg_connection *c, int status, const char *msg);

/* One WebSocket client. All functions are safe from any thread; none blocks on the client. */
struct wg_client;

/* In the connect handler: take a client slot. NULL after answering 503 (too many clients):
 * return non-zero from the handler then. A stale client of the same connection (a handshake
 * that failed after its connect handler) is released first. */
struct wg_client *wg_connect(const struct mg_connection *c);
/* In the ready handler: start the client's writer. */
void wg_ready(struct wg_client *cl);
/* In the close handler: stop the writer and free the client. */
void wg_close(struct wg_client *cl);
/* Queue a frame (text frames are made valid UTF-8). A full queue drops its oldest droppable
 * frame (the newest is kept); a client that stays behind for WG_BEHIND_MS is disconnected.
 * A frame that is not droppable (answers to commands) is never dropped: a client whose queue
 * is full of them is disconnected. False when the client is being closed. */
bool wg_send(struct wg_client *cl, int opcode, const char *data, size_t len, bool droppable);
/* Active (subscribed) clients are never closed for being idle; inactive ones are after the
 * idle timeout. */
void wg_active(struct wg_client *cl, bool active);
/* Frames dropped for this client so far. */
uint64_t wg_dropped(const struct wg_client *cl);
/* True once the client is being closed (disconnected by a rule). */
bool wg_closing(const struct wg_client *cl);

/* The server is stopping: send every client a close frame (1001, going away), wait up to
 * wait_ms for them to close, then shut the sockets of the others down, so that civetweb's
 * read loops end at once and mg_stop does not wait for them. */
void wg_disconnect_all(int wait_ms);

/* Start and stop the watchdog thread (idle and behind clients). */
int wg_start(void);
void wg_stop(void);

/* Is s (len bytes) valid UTF-8? */
bool wg_utf8_valid(const char *s, size_t len);

#endif /* ARD_WEBGUARD_H */
