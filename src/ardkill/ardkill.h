/*
 * ardkill.h - declarations shared by ardkill's source files.
 */
#ifndef ARDKILL_H
#define ARDKILL_H

#include "ard_common.h"
#include "books.h"

/* Exit codes (documented in docs/ardkill.md). */
enum {
    AK_OK = ARDC_EXIT_OK, /* everything asked for is stopped (or was not running) */
    AK_SURVIVED = 1,      /* a process survived SIGKILL or could not be signalled */
    AK_HOST = 2,          /* a host could not be reached; its part is not stopped */
    AK_USAGE = ARDC_EXIT_USAGE,
    AK_SYS = ARDC_EXIT_SYS,
};

struct ak_opts {
    const char *domain;
    const char *rsh; /* overrides the transport recorded in remote entries */
    int64_t grace_ns;
    bool unlink; /* remove the domain's shared memory on every host reached */
    bool all;    /* the whole domain: every host is swept (and its memory removed) at the end */
    bool quiet;
    const char *visited; /* hosts already covered by a whole-domain stop (comma list) */
};

/* Stop `path` and everything below it (NULL: every entry of the domain here), following
 * remote entries to their hosts, in reverse start order. Returns the worst exit code. */
int ak_stop(struct ardb_books *b, const struct ak_opts *o, const char *path);

/* Whole-domain stop on every host this host started something on (the books' host list),
 * except those in o->visited. Returns the worst exit code. */
int ak_sweep_hosts(struct ardb_books *b, const struct ak_opts *o);

#endif /* ARDKILL_H */
