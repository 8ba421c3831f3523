/*
 * restart.c - the restart policy's values: --restart, --restart-delay, --restart-limit and
 * the YAML keys restart, restart_delay, restart_limit (docs/ardstart.md, "Restarting").
 * Each parser returns 0, or ARD_EOPTION with the detail "WHAT 'VALUE': expected ..." (WHAT: the
 * option or the key as the user wrote it); seconds are read by the books' one parser.
 * Then the supervisor's decision after a run: does the policy want a restart, does the limit
 * (N restarts within a window, a ring of their times) allow it.
 */
#include "ardstart.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int as_parse_restart(const char *what, const char *v, int *policy)
{
    if (!strcmp(v, "no"))
        *policy = AS_RESTART_NO;
    else if (!strcmp(v, "on-failure"))
        *policy = AS_RESTART_ON_FAILURE;
    else if (!strcmp(v, "always"))
        *policy = AS_RESTART_ALWAYS;
    else
        return ardi_fail(ARD_EOPTION, "%s '%s': expected on-failure, always or no", what, v);
    return 0;
}

int as_parse_restart_delay(const char *what, const char *v, int64_t *ns)
{
    return ardb_opt_seconds(what, v, true, AS_RESTART_MAX_S, ns);
}

int as_parse_restart_limit(const char *what, const char *v, int *n, int64_t *ns)
{
    if (!strcmp(v, "none")) {
        *n = 0;
        *ns = 0;
        return 0;
    }
    const char *slash = strchr(v, '/');
    char *end;
    long count = slash ? strtol(v, &end, 10) : 0;
    int64_t window;
    if (!slash || end != slash || slash == v || v[0] == '-' || v[0] == '+' || count < 1 ||
        count > AS_RESTART_MAX_N ||
        ardb_opt_seconds(what, slash + 1, false, AS_RESTART_MAX_S, &window) < 0)
        return ardi_fail(ARD_EOPTION,
                         "%s '%s': expected N/SECONDS (at most N restarts within SECONDS, as in "
                         "5/10; N 1..%d, SECONDS > 0) or none",
                         what, v, AS_RESTART_MAX_N);
    *n = (int)count;
    *ns = window;
    return 0;
}

const char *as_restart_word(int policy)
{
    return policy == AS_RESTART_ALWAYS       ? "always"
           : policy == AS_RESTART_ON_FAILURE ? "on-failure"
                                             : "no";
}

void as_restarts_init(struct as_restarts *r, const struct as_opts *o)
{
    r->times = NULL;
    r->n = 0;
    if (o->restart != AS_RESTART_NO && o->restart_limit > 0)
        r->times = calloc((size_t)o->restart_limit, sizeof *r->times);
}

bool as_restart_wanted(const struct as_opts *o, bool failure)
{
    return o->restart == AS_RESTART_ALWAYS || (o->restart == AS_RESTART_ON_FAILURE && failure);
}

bool as_restart_limit_ok(const struct as_restarts *r, const struct as_opts *o, int64_t now)
{
    if (r->times && r->n >= o->restart_limit) {
        /* the oldest of the last N restarts, within the window: N restarts already */
        int64_t oldest = r->times[r->n % o->restart_limit];
        return now - oldest > o->restart_window_ns;
    }
    return true;
}

void as_restart_note(struct as_restarts *r, const struct as_opts *o, int64_t now)
{
    if (r->times)
        r->times[r->n % o->restart_limit] = now;
    r->n++;
}
