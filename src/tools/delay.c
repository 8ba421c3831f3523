/* delay.c - `ard delay CONN...`: how old packets are when a reader receives them (receipt time
 * minus the writer's send time), one blocking reader thread per connection. */
#include "ard.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

const struct ardc_optset ardt_delay_spec = {
    .see = "ard help delay",
    .head =
        "usage: ard delay CONNECTION... [--interval S] [-n REPORTS] [--json]\n"
        "  Age of each packet when ard delay's reader returns it from ard_rec: this host's\n"
        "  CLOCK_MONOTONIC at receipt minus the send time, mean/min/max/std since the start, "
        "every\n"
        "  interval. Over an ardnet bridge the monotonic send time is the bridge's (the local "
        "part\n"
        "  of the path); the 'real' figure uses the original writer's CLOCK_REALTIME and is the\n"
        "  whole path when the hosts' clocks are synchronised. Includes copying the packet.\n",
    .opts = ardt_watch_opts,
    .col = 20,
    .arg = ardt_watch_name};

struct track {
    const char *name;
    ard_port *p;
    uint8_t *pkt;
    pthread_t th;
    pthread_mutex_t mu;
    struct ardt_stats mono, real;
};

static _Atomic int quit;

static void *reader(void *arg)
{
    struct track *t = arg;
    /* The packet there before we started waiting is not received "now": skip it. */
    int r0 = ard_tryrec(t->p, t->pkt);
    if (r0 == ARD_ESTATE || r0 == ARD_EINVAL)
        return NULL;
    while (!quit) {
        int r = ard_rec_timed(t->p, t->pkt, 100000000);
        if (r != 0)
            continue;
        int64_t now = ard_now_ns(), rnow = ard_realtime_ns();
        struct ard_info in = ard_port_info(t->p);
        pthread_mutex_lock(&t->mu);
        ardt_stats_add(&t->mono, (double)(now - in.mono_ns));
        ardt_stats_add(&t->real, (double)(rnow - in.real_ns));
        pthread_mutex_unlock(&t->mu);
    }
    return NULL;
}

static void report(struct track *t, bool json)
{
    pthread_mutex_lock(&t->mu);
    struct ardt_stats m = t->mono, r = t->real;
    pthread_mutex_unlock(&t->mu);
    if (json) {
        fputs("{\"connection\":", stdout);
        ardt_put_json_str(stdout, t->name);
        printf(",\"packets\":%llu", (unsigned long long)m.n);
        if (m.n)
            printf(",\"delay_mean_ns\":%.0f,\"delay_min_ns\":%.0f,\"delay_max_ns\":%.0f,"
                   "\"delay_std_ns\":%.0f,\"real_delay_mean_ns\":%.0f",
                   m.mean, m.min, m.max, ardt_stats_std(&m), r.mean);
        puts("}");
        return;
    }
    if (m.n == 0) {
        printf("%s: no packets received yet\n", t->name);
        return;
    }
    printf("%s: delay mean ", t->name);
    ardt_put_age(stdout, (int64_t)m.mean);
    fputs(" min ", stdout);
    ardt_put_age(stdout, (int64_t)m.min);
    fputs(" max ", stdout);
    ardt_put_age(stdout, (int64_t)m.max);
    fputs(" std ", stdout);
    ardt_put_age(stdout, (int64_t)ardt_stats_std(&m));
    printf("  real %s", r.mean < 0 ? "-" : "");
    ardt_put_age(stdout, (int64_t)(r.mean < 0 ? -r.mean : r.mean));
    printf("  over %llu packets\n", (unsigned long long)m.n);
}

int cmd_delay(int argc, char **argv)
{
    struct ardt_watch w = {.names = calloc((size_t)argc, sizeof(char *))};
    struct track *t = calloc((size_t)argc, sizeof *t);
    if (!t || !w.names) {
        free(t);
        free(w.names);
        return ardt_err(ARDT_SYS, "out of memory");
    }
    int rc = ardt_parse_watch(&ardt_delay_spec, argc, argv, &w);
    if (rc)
        rc = ardt_liberr(rc);
    size_t nt = 0, started = 0;
    for (; nt < w.n; nt++)
        t[nt].name = w.names[nt];
    free(w.names);
    const double interval = w.interval;
    const uint64_t reports = w.reports;
    const bool json = w.json;
    for (size_t i = 0; rc == 0 && i < nt; i++) {
        if ((t[i].p = ardt_attach(t[i].name, ARD_IN, &rc)) == NULL)
            break;
        if ((t[i].pkt = malloc(ard_port_size(t[i].p))) == NULL)
            rc = ardt_err(ARDT_SYS, "out of memory");
    }
    if (rc == 0)
        ardt_signals();
    for (; rc == 0 && started < nt; started++) {
        pthread_mutex_init(&t[started].mu, NULL);
        if (pthread_create(&t[started].th, NULL, reader, &t[started]) != 0)
            rc = ardt_err(ARDT_SYS, "pthread_create failed");
    }
    for (uint64_t done = 0; rc == 0 && !ardt_stop;) {
        ardt_sleep((int64_t)(interval * 1e9));
        if (ardt_stop)
            break;
        for (size_t i = 0; i < nt; i++)
            report(&t[i], json);
        if (!ardt_flush(stdout) || (reports && ++done >= reports))
            break;
    }
    quit = 1;
    for (size_t i = 0; i < started; i++)
        pthread_join(t[i].th, NULL);
    for (size_t i = 0; i < nt; i++) {
        ard_close(t[i].p);
        free(t[i].pkt);
    }
    free(t);
    return rc;
}
