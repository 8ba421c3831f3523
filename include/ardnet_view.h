/* ardnet_view.h - a read-only view of a connection, for monitors, recorders and bridges.
 *
 * A view maps one connection's object read-only without becoming one of its ports: the
 * writer never waits for it, never wakes it, and the readers do not see it. It is what `ard`
 * (list, show, hz, bw, record, web), ardrun and `ardnet --auto` use, and what a third-party
 * monitor uses (docs/api.md shows one). The object is checked by the same validator as an
 * attach (owner, mode, header, geometry); nothing in the mapping is trusted beyond it: every
 * packet read is a copy checked against its slot's sequence lock, so a writer that dies or
 * rewrites the slot mid-copy yields a retry or ARD_EAGAIN, never a torn packet.
 *
 * ARD_EAGAIN (ardnet.h) is the code of a read the writer overtook.
 *
 * None of these calls allocates after ard_view_open, none takes a lock another process can
 * hold, none blocks. They are not realtime calls: use ports for the loop.
 */
#ifndef ARDNET_VIEW_H
#define ARDNET_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ardnet.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The library is built with hidden visibility; everything declared here is exported. */
#if defined(__GNUC__) || defined(__clang__)
#pragma GCC visibility push(default)
#endif

typedef struct ard_view ard_view;

/* Open connection `name` of `domain` (NULL: the domain in force, as ard_domain()) read-only.
 * Allocates the view (freed by ard_view_close). Returns 0 with *view set, or ARD_ENOENT,
 * ARD_EACCES (foreign or too open: detail names owner and mode), ARD_ESTALE (not an ardnet
 * object, or damaged), ARD_EINVAL (bad name), ARD_ENOMEM, ARD_ESYS; the detail names the
 * connection and the cause. */
ARD_NODISCARD int ard_view_open(const char *domain, const char *name, ard_view **view);

/* Unmap and free; NULL is a no-op. */
void ard_view_close(ard_view *view);

/* What the header says, as read now: name, type, size, mode (as ard_conn_stat fills them),
 * the live writer (0 if none), the live readers and unlisted ports, the newest seq and its
 * send times. Does not fail on an open view. */
void ard_view_stat(const ard_view *view, struct ard_conn_stat *st);

/* The owner's uid and the object's inode (changes when the object is re-created). */
uint32_t ard_view_uid(const ard_view *view);
uint64_t ard_view_inode(const ard_view *view);

/* Packets the ring holds: packet `seq` can be read while seq > head - slots (sooner or later
 * the writer reuses its slot; the slot lock says when). For a reader that follows every
 * packet: what it missed while away. */
uint32_t ard_view_slots(const ard_view *view);

/* Newest complete sequence number, 0 if nothing was sent. One atomic load. */
uint64_t ard_view_head(const ard_view *view);

/* Copy the newest packet into buf (ard_view_stat's size bytes) with its info (seq, send
 * times; skipped counts packets since the previous call on this view). Returns 0, ARD_ENODATA
 * (nothing sent yet), ARD_EAGAIN (the writer overwrote the slot during every retry: the view
 * is behind a very fast writer; try again). */
ARD_NODISCARD int ard_view_latest(ard_view *view, void *buf, struct ard_info *info);

/* Copy packet `seq` if it is still in the ring and complete. Returns 0, ARD_ENODATA (not yet
 * sent, or already overwritten), ARD_EAGAIN (overwritten during the copy). */
ARD_NODISCARD int ard_view_read(ard_view *view, uint64_t seq, void *buf, struct ard_info *info);

/* Zero-copy: the slot of packet `seq` (NULL with *code set as for ard_view_read). The caller
 * copies or writes out what it needs, then calls ard_view_done, which returns 0 if the slot
 * still held `seq` all along, or ARD_EAGAIN if the writer overwrote it meanwhile (discard what
 * was taken). */
const void *ard_view_take(ard_view *view, uint64_t seq, struct ard_info *info, int *code);
ARD_NODISCARD int ard_view_done(const ard_view *view, uint64_t seq);

/* Send times (CLOCK_MONOTONIC) of the newest packets still in the ring, newest first, at most
 * `max`; returns how many were stored. For rates: ard hz, ard list. */
size_t ard_view_stamps(const ard_view *view, int64_t *mono_ns, size_t max);

/* Attached ports as the object records them, writer first (see ard_conn_peers). Returns the
 * count of live peers listed (may exceed max); *unlisted (may be NULL) counts live ports the
 * table had no room for. */
ARD_NODISCARD int ard_view_peers(const ard_view *view, struct ard_peer *out, size_t max,
                                 uint32_t *unlisted);

/* Whether the connection's name now leads to another object than the one this view maps
 * (removed and created anew, possibly with another type): the caller closes and reopens.
 * One stat of the name; false while the name still leads to this object, and while it leads
 * to nothing (a removed object is followed once a new one appears under its name). */
bool ard_view_recreated(const ard_view *view);

/* IN ports attached to the connection of `port` (any process, this one included) as the
 * connection's header counts them: one atomic load, no system call. The count goes up when a
 * port attaches and down when it is closed, so a reader killed with kill -9 stays counted (too
 * high, never too low); ard_conn_stat's `readers` is exact. A negative ARD_E* code for NULL
 * (ARD_EINVAL) or a port that is not attached (ARD_ESTATE). */
int ard_port_readers(const ard_port *port);

/* ard_view_recreated for the object an attached port maps (a reader that waits in vain on a
 * connection that was removed and created anew reattaches). False for a port not attached. */
bool ard_port_recreated(const ard_port *port);

/* The owner's uid of the object an attached port maps (ardrun accepts its control
 * connections only from its own user, whatever allow-foreign says); (uint32_t)-1 for NULL or
 * a port not attached. */
uint32_t ard_port_uid(const ard_port *port);

#if defined(__GNUC__) || defined(__clang__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif

#endif
