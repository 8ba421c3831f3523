/*
 * reducer.h - the rate reducers of a route (--every N, --max-rate HZ) as pure decisions on
 * a given clock, so that tests can drive them with simulated time (docs/ardnet.md).
 *
 * --every N makes every N-th packet taken in a candidate (the others are dropped); of the
 * candidates, --max-rate forwards at most one per period, always the newest: a candidate that
 * comes before its time slot is held, replaced by any newer candidate, and the held one is
 * forwarded when the slot comes. Under steady load the slots form a fixed grid.
 */
#ifndef ARDN_REDUCER_H
#define ARDN_REDUCER_H

#include <stdbool.h>
#include <stdint.h>

struct ardn_reducer {
    uint64_t every;    /* 0 or 1: every packet is a candidate */
    int64_t period_ns; /* 0: no --max-rate */
    uint64_t seen;     /* packets offered */
    bool pending;      /* a candidate is held for its slot */
    int64_t next_ns;   /* earliest time of the next forward */
    bool started;      /* something was forwarded: next_ns is on the grid */
};

enum ardn_red_action {
    ARDN_RED_DROP, /* not a candidate (--every): drop it, a held one stays */
    ARDN_RED_HOLD, /* a candidate before its slot: hold it (instead of the held one, if any) */
    ARDN_RED_SEND  /* forward it now (instead of the held one, if any) */
};

void ardn_reducer_init(struct ardn_reducer *red, uint64_t every, double max_rate);
/* A packet was taken in at now_ns. *replaced: a held candidate is superseded by this one. */
enum ardn_red_action ardn_reducer_offer(struct ardn_reducer *red, int64_t now_ns, bool *replaced);
/* A held candidate's slot has come: forward it, then call ardn_reducer_sent. */
bool ardn_reducer_due(const struct ardn_reducer *red, int64_t now_ns);
/* A candidate was forwarded at now_ns (after SEND, or when due). */
void ardn_reducer_sent(struct ardn_reducer *red, int64_t now_ns);
/* How long the route may wait for input: until the held candidate's slot, at most idle_ns. */
int64_t ardn_reducer_timeout(const struct ardn_reducer *red, int64_t now_ns, int64_t idle_ns);

#endif /* ARDN_REDUCER_H */
