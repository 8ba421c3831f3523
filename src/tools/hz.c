/* hz.c - `ard hz CONN...`: packet rate and period statistics from the writers' own send times
 * and sequence numbers, read from the objects' rings without attaching or copying packets, so
 * the figures are right for any packet size and for rates a reader could not keep up with.
 * `ard bw CONN...` is the same watch reported as bytes per second over each interval. */
#include "ard.h"

#include <stdlib.h>
#include <string.h>

const struct ardc_optset ardt_hz_spec = {
    .see = "ard help hz",
    .head =
        "usage: ard hz CONNECTION... [--interval S] [-n REPORTS] [--json]\n"
        "  Rate of each connection and the statistics of its period (min, max, standard\n"
        "  deviation), since ard hz started, printed every interval. The rate is counted from\n"
        "  sequence numbers over the writer's send times (CLOCK_MONOTONIC), so packets the tool\n"
        "  did not see still count and the packet size does not matter; periods are measured\n"
        "  between consecutive packets found in the connection's ring. The ring's history gives\n"
        "  a first figure at once, also for slow writers (0.1 Hz). Nothing is attached.\n",
    .opts = ardt_watch_opts,
    .col = 20,
    .arg = ardt_watch_name};

const struct ardc_optset ardt_bw_spec = {
    .see = "ard help bw",
    .head =
        "usage: ard bw CONNECTION... [--interval S] [-n REPORTS] [--json]\n"
        "  Bandwidth of each connection in bytes per second, printed every interval: the mean\n"
        "  over the interval (packets sent in it, counted by sequence number, times the packet\n"
        "  size, over the span of their send times), and the min and max of the rate between\n"
        "  consecutive packets in it (packet size over period). Each report covers only the\n"
        "  packets sent since the previous one (the window is the interval); measured as\n"
        "  'ard hz' measures, from the writers' send times, attaching nothing.\n",
    .opts = ardt_watch_opts,
    .col = 20,
    .arg = ardt_watch_name};

struct track {
    const char *name;
    ard_view *v;
    size_t size;        /* packet size */
    uint64_t last;      /* newest seq seen */
    int64_t last_mono;  /* its send time */
    uint64_t first_seq; /* oldest seq seen */
    int64_t first_mono;
    struct ardt_stats period;
};

/* Send time of packet `seq` while the ring holds it complete (taken and confirmed, not
 * copied): true, else false. */
static bool stamp_of(ard_view *v, uint64_t seq, int64_t *mono)
{
    struct ard_info inf;
    int code;
    if (seq == 0 || ard_view_take(v, seq, &inf, &code) == NULL || ard_view_done(v, seq) != 0)
        return false;
    *mono = inf.mono_ns;
    return true;
}

static void poll_one(struct track *t)
{
    uint64_t h = ard_view_head(t->v);
    if (h == 0 || h <= t->last)
        return;
    uint64_t nslots = ard_view_slots(t->v);
    uint64_t from = h >= nslots ? h - nslots + 2 : 1;
    if (from <= t->last)
        from = t->last + 1;
    for (uint64_t q = from; q <= h; q++) {
        int64_t m;
        if (!stamp_of(t->v, q, &m))
            continue;
        if (t->last == 0) {
            t->first_seq = q;
            t->first_mono = m;
        } else if (q == t->last + 1 && m >= t->last_mono)
            ardt_stats_add(&t->period, (double)(m - t->last_mono));
        if (q > t->last) {
            t->last = q;
            t->last_mono = m;
        }
    }
}

/* Bytes per second with a unit, 4 significant digits: "1.234 MB/s" (SI, as ros2 topic bw). */
static void put_bw(double bps)
{
    static const char *const unit[] = {"B/s", "kB/s", "MB/s", "GB/s", "TB/s"};
    size_t u = 0;
    while (bps >= 1000 && u + 1 < sizeof unit / sizeof unit[0]) {
        bps /= 1000;
        u++;
    }
    printf("%.4g %s", bps, unit[u]);
}

/* One window of `ard bw`: then the window starts again at the newest packet. */
static void report_bw(struct track *t, bool json)
{
    double span = (double)(t->last_mono - t->first_mono);
    uint64_t n = t->last - t->first_seq;
    double size = (double)t->size;
    double mean = n > 0 && span > 0 ? (double)n * size / span * 1e9 : 0;
    const struct ardt_stats *p = &t->period;
    double lo = p->n && p->max > 0 ? size / p->max * 1e9 : 0;
    double hi = p->n && p->min > 0 ? size / p->min * 1e9 : 0;
    if (json) {
        fputs("{\"connection\":", stdout);
        ardt_put_json_str(stdout, t->name);
        printf(",\"size\":%llu,\"bytes_per_s\":%.9g,\"packets\":%llu", (unsigned long long)t->size,
               mean, (unsigned long long)n);
        if (p->n)
            printf(",\"min_bytes_per_s\":%.9g,\"max_bytes_per_s\":%.9g", lo, hi);
        puts("}");
    } else if (n == 0) {
        printf("%s: no packets in the window\n", t->name);
    } else {
        printf("%s: mean ", t->name);
        put_bw(mean);
        if (p->n) {
            fputs("  min ", stdout);
            put_bw(lo);
            fputs("  max ", stdout);
            put_bw(hi);
        }
        printf("  over %llu packets of %llu B\n", (unsigned long long)n,
               (unsigned long long)t->size);
    }
    if (t->last) {
        t->first_seq = t->last;
        t->first_mono = t->last_mono;
    }
    memset(&t->period, 0, sizeof t->period);
}

static void report(const struct track *t, bool json)
{
    double span = (double)(t->last_mono - t->first_mono);
    uint64_t n = t->last - t->first_seq;
    double rate = n > 0 && span > 0 ? (double)n / span * 1e9 : 0;
    const struct ardt_stats *p = &t->period;
    if (json) {
        fputs("{\"connection\":", stdout);
        ardt_put_json_str(stdout, t->name);
        printf(",\"rate_hz\":%.9g,\"packets\":%llu,\"periods\":%llu", rate,
               (unsigned long long)(t->last ? n + 1 : 0), (unsigned long long)p->n);
        if (p->n)
            printf(",\"period_mean_ns\":%.0f,\"period_min_ns\":%.0f,\"period_max_ns\":%.0f,"
                   "\"period_std_ns\":%.0f",
                   p->mean, p->min, p->max, ardt_stats_std(p));
        puts("}");
        return;
    }
    if (n == 0) {
        printf("%s: %s\n", t->name, t->last ? "one packet so far" : "no packets yet");
        return;
    }
    printf("%s: rate %.6g Hz", t->name, rate);
    if (p->n) {
        fputs("  period min ", stdout);
        ardt_put_age(stdout, (int64_t)p->min);
        fputs(" max ", stdout);
        ardt_put_age(stdout, (int64_t)p->max);
        fputs(" std ", stdout);
        ardt_put_age(stdout, (int64_t)ardt_stats_std(p));
    }
    printf("  over %llu packets\n", (unsigned long long)n + 1);
}

static int watch(int argc, char **argv, bool bw)
{
    struct ardt_watch w = {.names = calloc((size_t)argc, sizeof(char *))};
    struct track *t = calloc((size_t)argc, sizeof *t);
    if (!t || !w.names) {
        free(t);
        free(w.names);
        return ardi_fail(ARD_ENOMEM, "out of memory");
    }
    int rc = ardt_parse_watch(bw ? &ardt_bw_spec : &ardt_hz_spec, argc, argv, &w);
    size_t nt = 0;
    for (; nt < w.n; nt++)
        t[nt].name = w.names[nt];
    free(w.names);
    const double interval = w.interval;
    const uint64_t reports = w.reports;
    const bool json = w.json;
    size_t opened = 0;
    for (; rc == 0 && opened < nt; opened++) {
        int r = ardt_view_open(t[opened].name, &t[opened].v);
        if (r < 0) {
            rc = r;
            break;
        }
        struct ard_conn_stat st;
        ard_view_stat(t[opened].v, &st);
        t[opened].size = st.size;
    }
    if (rc == 0)
        ardt_signals();
    int64_t next = ard_now_ns() + (int64_t)(interval * 1e9);
    for (uint64_t done = 0; rc == 0 && !ardt_stop;) {
        for (size_t i = 0; i < nt; i++)
            poll_one(&t[i]);
        if (ard_now_ns() >= next) {
            for (size_t i = 0; i < nt; i++)
                if (bw)
                    report_bw(&t[i], json);
                else
                    report(&t[i], json);
            if (!ardt_flush(stdout))
                break;
            next += (int64_t)(interval * 1e9);
            if (reports && ++done >= reports)
                break;
        }
        ardt_sleep(500000); /* 0.5 ms: the ring holds 8 packets, the seq counts the rest */
    }
    for (size_t i = 0; i < opened; i++)
        ard_view_close(t[i].v);
    free(t);
    return rc;
}

int cmd_hz(int argc, char **argv)
{
    return watch(argc, argv, false);
}

int cmd_bw(int argc, char **argv)
{
    return watch(argc, argv, true);
}
