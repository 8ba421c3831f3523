/* counters.c - per-route counters as text: on SIGUSR1, at exit, and in --stats-file. */
#include "ardn.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char *const counter_names[ARDN_C_NCOUNTERS] = {
    [ARDN_C_RECEIVED] = "received",       [ARDN_C_SENT] = "sent",
    [ARDN_C_SEND_ERRORS] = "send_errors", [ARDN_C_RECV_ERRORS] = "recv_errors",
    [ARDN_C_REDUCED] = "reduced",         [ARDN_C_SKIPPED] = "skipped",
    [ARDN_C_SUPERSEDED] = "superseded",   [ARDN_C_FRAGMENTS] = "fragments",
};

static uint64_t get(_Atomic uint64_t *v)
{
    return atomic_load_explicit(v, memory_order_relaxed);
}

/* One line per route: "route NAME: received=.. sent=.. ... dropped=TOTAL cause=.. ...". */
void ardn_counters_print(FILE *f, struct ardn_route *routes, int n)
{
    for (int i = 0; i < n; i++) {
        struct ardn_route *r = &routes[i];
        fprintf(f, "route %s:", r->name);
        for (int c = 0; c < ARDN_C_NCOUNTERS; c++)
            fprintf(f, " %s=%llu", counter_names[c], (unsigned long long)get(&r->cnt.c[c]));
        uint64_t total = 0;
        for (int c = 1; c < ARDW_NCAUSES; c++)
            total += get(&r->cnt.drop[c]);
        fprintf(f, " dropped=%llu", (unsigned long long)total);
        for (int c = 1; c < ARDW_NCAUSES; c++)
            fprintf(f, " drop_%s=%llu", ardw_cause_name((enum ardw_cause)c),
                    (unsigned long long)get(&r->cnt.drop[c]));
        fputc('\n', f);
    }
    fflush(f);
}

/* Write to PATH.tmp and rename, so a reader never sees half a file. */
int ardn_counters_write_file(const char *path, struct ardn_route *routes, int n)
{
    char tmp[1100];
    if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp)
        return -1;
    FILE *f = fopen(tmp, "w");
    if (!f)
        return -1;
    ardn_counters_print(f, routes, n);
    if (fclose(f) != 0 || rename(tmp, path) != 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}
