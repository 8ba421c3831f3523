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
    [ARDN_C_PACKED] = "packed",
};

static uint64_t get(_Atomic uint64_t *v)
{
    return atomic_load_explicit(v, memory_order_relaxed);
}

/* One line per route: "route NAME: received=.. sent=.. ... dropped=TOTAL cause=.. ...",
 * then one per shared destination ("output ...") and shared listening address ("input ..."). */
void ardn_counters_print(FILE *f, const struct ardn_plan *p)
{
    for (int i = 0; i < p->nroutes; i++) {
        struct ardn_route *r = &p->routes[i];
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
    for (int k = 0; k < p->ndests; k++) {
        struct ardn_dest *d = &p->dests[k];
        if (d->nroutes > 1)
            fprintf(f, "output %s: datagrams=%llu packed=%llu packets=%llu send_errors=%llu\n",
                    d->text, (unsigned long long)get(&d->datagrams),
                    (unsigned long long)get(&d->packed), (unsigned long long)get(&d->packets),
                    (unsigned long long)get(&d->send_errors));
    }
    for (int k = 0; k < p->ninputs; k++) {
        struct ardn_input *in = &p->inputs[k];
        if (in->nroutes < 2)
            continue;
        uint64_t total = 0;
        for (int c = 1; c < ARDW_NCAUSES; c++)
            total += get(&in->drop[c]);
        fprintf(f, "input %s: datagrams=%llu packed=%llu dropped=%llu", in->text,
                (unsigned long long)get(&in->datagrams), (unsigned long long)get(&in->packed),
                (unsigned long long)total);
        for (int c = 1; c < ARDW_NCAUSES; c++)
            fprintf(f, " drop_%s=%llu", ardw_cause_name((enum ardw_cause)c),
                    (unsigned long long)get(&in->drop[c]));
        fputc('\n', f);
    }
    fflush(f);
}

/* Write to PATH.tmp and rename, so a reader never sees half a file. */
int ardn_counters_write_file(const char *path, const struct ardn_plan *p)
{
    char tmp[1100];
    if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp)
        return -1;
    FILE *f = fopen(tmp, "w");
    if (!f)
        return -1;
    ardn_counters_print(f, p);
    if (fclose(f) != 0 || rename(tmp, path) != 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}
