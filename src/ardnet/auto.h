/*
 * auto.h - ardnet --auto: the catalog that wires connections across hosts by name, on demand
 * (docs/ardnet.md, "Automatic: the catalog").
 */
#ifndef ARDN_AUTO_H
#define ARDN_AUTO_H

#include "ardc_ready.h"
#include "ardn.h"

#include <signal.h>

#define ARDA_DEFAULT_PORT 7400u
#define ARDA_DEFAULT_LIMIT 256u
#define ARDA_MAX_LOCAL 1024 /* connections of the domain looked at (and announced, at most) */
#define ARDA_PERIOD_NS 200000000LL        /* announcements at rest */
#define ARDA_SCAN_NS 50000000LL           /* the local domain is looked at this often */
#define ARDA_PEER_TIMEOUT_NS 1000000000LL /* a peer silent this long is gone */
/* The catalog's ports name the other host (read by `ard list` and `ard graph`, src/tools/ard.h):
 * the writer of a connection received from host H is "auto-N-from-H", the reader of one
 * forwarded to host H "auto-N-to-H", N a number of the catalog's own (a process's port
 * names are unique). */
#define ARDA_PORT_FROM "from"
#define ARDA_PORT_TO "to"

/* After every option: check the catalog's (cfg, kept and read until ardn_auto_close), resolve
 * the peers, open the catalog socket; without --auto (cfg->enabled false) only refuse the other
 * --auto-* options. The local connections of the configured routes (routes, n) are left to
 * them. 0, or a negative code with the detail. */
int ardn_auto_open(const struct arda_conf *cfg, const struct ardn_route *routes, int n);
/* Run the catalog until SIGTERM/SIGINT (taken from sigs, which the caller blocked); also
 * publishes the counters of the configured plan p as serve() does. Ready (the value main
 * held back, ardc_ready.h) once its first scan and announcement are out. */
void ardn_auto_serve(struct ardn_plan *p, const struct ardc_ready *held, const sigset_t *sigs);
/* Stop every forwarding and close the socket; the last counters (with those of the configured
 * plan p) go to stderr and --stats-file. */
void ardn_auto_close(const struct ardn_plan *p);

#endif /* ARDN_AUTO_H */
