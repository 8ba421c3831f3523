/* foxglove.h - the Foxglove WebSocket protocol (foxglove.websocket.v1) on `ard web`'s port
 * (docs/web.md, "Foxglove and Lichtblick"). */
#ifndef ARD_FOXGLOVE_H
#define ARD_FOXGLOVE_H

#include <civetweb.h>
#include <stdbool.h>

/* Register the protocol's WebSocket handler at "/" (a client offering the subprotocol
 * foxglove.websocket.v1) and start the thread that follows the domain's connections.
 * allow_set gives clients the clientPublish capability. 0, or -1 when no thread starts. */
int fox_start(struct mg_context *ctx, bool allow_set);
/* After mg_stop: stop the threads, free everything. */
void fox_stop(void);

#endif /* ARD_FOXGLOVE_H */
