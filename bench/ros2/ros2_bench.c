/*
 * ros2_bench.c - the roles of the ros2: benchmark (bench/ros2/run.sh runs them):
 *
 *   ros2_bench writer N SECONDS   N local connections bench.k0.. ("stamp:i64 data:u8[1016]",
 *                                 1 KiB), one packet each every period, stamped when sent
 *   ros2_bench bare N SECONDS     the baseline: a bare Cyclone DDS publisher of the generated
 *                                 type on rt/bench/k0.., one sample each every period, the
 *                                 source timestamp the time of the write
 *   ros2_bench peer N SECONDS LABEL   a DDS subscriber of the N topics: prints
 *                                 "LABEL received=R med_us=M p99_us=P first10_med_us=F
 *                                 last10_med_us=L" (source timestamp to receipt, samples
 *                                 after the first second; F and L: the medians of the first
 *                                 and the last tenth of the topics)
 *
 * The period is 1 ms, or 1 s / $ROS2_BENCH_RATE (Hz, 1..10000) when that is set. A packet is
 * 1 KiB, or $ROS2_BENCH_SIZE bytes: 1024, 1048576 ("stamp:i64 data:u8[1048568]", an image) or
 * 4194304 ("stamp:i64 data:u8[4194296]", a point cloud). A packet is
 * stamped just before it is sent (written), or with ROS2_BENCH_STAMP=tick all packets of a
 * period with the period's start, when a control loop would have computed them: then the
 * latency includes the time a publisher takes to get through the period's N packets.
 * writer and bare print "written=W" on SIGUSR1 (run.sh reads it with the CPU time of the
 * measured window); the domain is ROS_DOMAIN_ID.
 */
#include "ardnet.h"
#include "bench_msgs.h"

#include <dds/dds.h>

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int64_t period_ns = 1000000; /* of the writer and the bare publisher */
static size_t size = 1024;          /* of a packet (ROS2_BENCH_SIZE) */
static char desc[64] = "stamp:i64 data:u8[1016]";
static bool stamp_tick; /* stamp a period's packets with its start */

struct pkt {
    int64_t stamp;
    uint8_t data[1016];
};
_Static_assert(sizeof(struct pkt) == 1024, "1 KiB");
_Static_assert(sizeof(struct pkt) == sizeof(ardnet_msgs_msg_dds__Bench_), "the IDL's layout");
_Static_assert(sizeof(ardnet_msgs_msg_dds__BenchImage_) == 1u << 20, "the IDL's image layout");
_Static_assert(sizeof(ardnet_msgs_msg_dds__BenchCloud_) == 4u << 20, "the IDL's cloud layout");

/* A packet of the size asked for, filled; its stamp is at offset 0. */
static void *packet(void)
{
    void *p = malloc(size);
    if (!p) {
        fprintf(stderr, "ros2_bench: out of memory\n");
        exit(2);
    }
    memset(p, 0x5a, size);
    return p;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Percentile p of n sorted values, in microseconds. */
static double pct_us(const int64_t *v, size_t n, unsigned p)
{
    if (n == 0)
        return 0;
    size_t i = n * p / 100;
    return (double)v[i < n ? i : n - 1] / 1e3;
}

static volatile sig_atomic_t report;

static void on_usr1(int sig)
{
    (void)sig;
    report = 1;
}

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void sleep_until(int64_t t)
{
    struct timespec ts = {(time_t)(t / 1000000000), (long)(t % 1000000000)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0) {
    }
}

/* The generated descriptor under the type name ardnet gives connection bench.k<i>; without
 * the XTypes information (which names the generated type), as ardnet's own type has none. */
static const dds_topic_descriptor_t *desc_for(int i)
{
    dds_topic_descriptor_t *d = malloc(sizeof *d);
    char *name = malloc(64);
    if (!d || !name)
        exit(2);
    memcpy(d,
           size == 1024         ? &ardnet_msgs_msg_dds__Bench__desc
           : size == (1u << 20) ? &ardnet_msgs_msg_dds__BenchImage__desc
                                : &ardnet_msgs_msg_dds__BenchCloud__desc,
           sizeof *d);
    snprintf(name, 64, "ardnet_msgs::msg::dds_::BenchK%d_", i);
    const char *cn = name;
    uint32_t flags = d->m_flagset & ~(uint32_t)DDS_TOPIC_XTYPES_METADATA;
    struct dds_type_meta_ser none = {0};
    memcpy((char *)d + offsetof(dds_topic_descriptor_t, m_typename), &cn, sizeof cn);
    memcpy((char *)d + offsetof(dds_topic_descriptor_t, m_flagset), &flags, sizeof flags);
    memcpy((char *)d + offsetof(dds_topic_descriptor_t, type_information), &none, sizeof none);
    memcpy((char *)d + offsetof(dds_topic_descriptor_t, type_mapping), &none, sizeof none);
    return d;
}

static dds_entity_t participant(void)
{
    const char *dom = getenv("ROS_DOMAIN_ID");
    dds_entity_t pp = dds_create_participant(dom ? (dds_domainid_t)atoi(dom) : 0, NULL, NULL);
    if (pp < 0) {
        fprintf(stderr, "ros2_bench: participant: %s\n", dds_strretcode(pp));
        exit(2);
    }
    return pp;
}

static dds_qos_t *qos(void)
{
    /* ROS2_BENCH_QOS=reliable: reliable writers and readers (keep last 1, as ardnet's
     * --qos reliable writer); else best effort. */
    const char *e = getenv("ROS2_BENCH_QOS");
    bool rel = e && strcmp(e, "reliable") == 0;
    dds_qos_t *q = dds_create_qos();
    dds_qset_reliability(q, rel ? DDS_RELIABILITY_RELIABLE : DDS_RELIABILITY_BEST_EFFORT,
                         DDS_MSECS(100));
    dds_qset_history(q, DDS_HISTORY_KEEP_LAST, 1);
    return q;
}

static dds_entity_t topic(dds_entity_t pp, int i)
{
    char name[64];
    snprintf(name, sizeof name, "rt/bench/k%d", i);
    dds_entity_t tp = dds_create_topic(pp, desc_for(i), name, NULL, NULL);
    if (tp < 0) {
        fprintf(stderr, "ros2_bench: topic %s: %s\n", name, dds_strretcode(tp));
        exit(2);
    }
    return tp;
}

static int run_writer(int n, double seconds)
{
    ard_port **p = calloc((size_t)n, sizeof *p);
    int64_t *pk = packet();
    for (int i = 0; i < n; i++) {
        char conn[32];
        snprintf(conn, sizeof conn, "bench.k%d", i);
        p[i] = ard_create_on(conn, conn, ARD_OUT, size, desc);
        if (!p[i]) {
            fprintf(stderr, "ros2_bench: %s\n", ard_errdetail());
            return 2;
        }
    }
    uint64_t written = 0;
    int64_t t = mono_ns(), end = t + (int64_t)(seconds * 1e9);
    while (t < end) {
        int64_t tick = ard_realtime_ns();
        for (int i = 0; i < n; i++) {
            *pk = stamp_tick ? tick : ard_realtime_ns();
            if (ard_send(p[i], pk) == 0)
                written++;
        }
        if (report) {
            report = 0;
            fprintf(stderr, "written=%llu\n", (unsigned long long)written);
        }
        t += period_ns;
        sleep_until(t);
    }
    return 0;
}

static int run_bare(int n, double seconds)
{
    dds_entity_t pp = participant();
    dds_entity_t *wr = calloc((size_t)n, sizeof *wr);
    dds_qos_t *q = qos();
    for (int i = 0; i < n; i++)
        wr[i] = dds_create_writer(pp, topic(pp, i), q, NULL);
    dds_delete_qos(q);
    /* Every writer matched first, as ardnet's are when the measured window starts. */
    int64_t until = mono_ns() + 20000000000LL;
    for (int i = 0; i < n && mono_ns() < until; i++) {
        dds_publication_matched_status_t st = {0};
        while (dds_get_publication_matched_status(wr[i], &st) == 0 && st.current_count == 0 &&
               mono_ns() < until)
            dds_sleepfor(DDS_MSECS(5));
    }
    int64_t *s = packet();
    uint64_t written = 0;
    int64_t t = mono_ns(), end = t + (int64_t)(seconds * 1e9);
    while (t < end) {
        dds_time_t tick = dds_time();
        for (int i = 0; i < n; i++) {
            *s = stamp_tick ? tick : dds_time();
            if (dds_write_ts(wr[i], s, *s) == 0)
                written++;
        }
        if (report) {
            report = 0;
            fprintf(stderr, "written=%llu\n", (unsigned long long)written);
        }
        t += period_ns;
        sleep_until(t);
    }
    dds_delete(pp);
    return 0;
}

static int run_peer(int n, double seconds, const char *label)
{
    dds_entity_t pp = participant();
    dds_entity_t ws = dds_create_waitset(pp);
    dds_entity_t *rd = calloc((size_t)n, sizeof *rd);
    dds_qos_t *q = qos();
    for (int i = 0; i < n; i++) {
        rd[i] = dds_create_reader(pp, topic(pp, i), q, NULL);
        dds_waitset_attach(ws, dds_create_readcondition(rd[i], DDS_ANY_STATE), i);
    }
    dds_delete_qos(q);
    size_t cap = (size_t)(seconds * 1000 * n) + 16, nlat = 0, nfirst = 0, nlast = 0;
    int64_t *lat = malloc(cap * sizeof *lat), *first10 = malloc(cap * sizeof *lat),
            *last10 = malloc(cap * sizeof *lat);
    if (!lat || !first10 || !last10)
        return 2;
    int64_t start = mono_ns(), end = start + (int64_t)(seconds * 1e9), first = 0;
    uint64_t received = 0;
    dds_attach_t *trig = calloc((size_t)n, sizeof *trig);
    void *ptr[1] = {packet()};
    while (mono_ns() < end) {
        int k = dds_waitset_wait(ws, trig, (size_t)n, DDS_MSECS(100));
        for (int j = 0; j < k && j < n; j++) {
            dds_sample_info_t si;
            while (dds_take(rd[trig[j]], ptr, &si, 1, 1) == 1) {
                int64_t at = dds_time();
                if (!si.valid_data)
                    continue;
                if (!first)
                    first = mono_ns();
                received++;
                if (mono_ns() - first > 1000000000LL && nlat < cap) {
                    lat[nlat++] = at - si.source_timestamp;
                    /* By topic: the first and the last tenth of the connections. */
                    if ((int)trig[j] < (n + 9) / 10)
                        first10[nfirst++] = at - si.source_timestamp;
                    else if ((int)trig[j] >= n - n / 10)
                        last10[nlast++] = at - si.source_timestamp;
                }
            }
        }
    }
    qsort(lat, nlat, sizeof *lat, cmp_i64);
    qsort(first10, nfirst, sizeof *lat, cmp_i64);
    qsort(last10, nlast, sizeof *lat, cmp_i64);
    printf("%s received=%llu med_us=%.1f p99_us=%.1f first10_med_us=%.1f last10_med_us=%.1f\n",
           label, (unsigned long long)received, pct_us(lat, nlat, 50), pct_us(lat, nlat, 99),
           pct_us(first10, nfirst, 50), pct_us(last10, nlast, 50));
    free(lat);
    free(first10);
    free(last10);
    dds_delete(pp);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: ros2_bench writer|bare|peer N SECONDS [LABEL]\n");
        return 2;
    }
    int n = atoi(argv[2]);
    double seconds = atof(argv[3]);
    if (n < 1 || n > 1000 || seconds <= 0)
        return 2;
    const char *rate = getenv("ROS2_BENCH_RATE");
    if (rate && *rate) {
        long hz = atol(rate);
        if (hz < 1 || hz > 10000) {
            fprintf(stderr, "ros2_bench: ROS2_BENCH_RATE '%s': expected 1..10000 (Hz)\n", rate);
            return 2;
        }
        period_ns = 1000000000 / hz;
    }
    const char *sz = getenv("ROS2_BENCH_SIZE");
    if (sz && *sz) {
        size = (size_t)atol(sz);
        if (size != 1024 && size != (1u << 20) && size != (4u << 20)) {
            fprintf(stderr, "ros2_bench: ROS2_BENCH_SIZE '%s': expected 1024, 1048576 or 4194304\n",
                    sz);
            return 2;
        }
        snprintf(desc, sizeof desc, "stamp:i64 data:u8[%zu]", size - 8);
    }
    const char *stamp = getenv("ROS2_BENCH_STAMP");
    stamp_tick = stamp && strcmp(stamp, "tick") == 0;
    signal(SIGUSR1, on_usr1);
    if (strcmp(argv[1], "writer") == 0) {
        if (ard_init(&argc, argv) < 0)
            return 2;
        return run_writer(n, seconds);
    }
    if (strcmp(argv[1], "bare") == 0)
        return run_bare(n, seconds);
    if (strcmp(argv[1], "peer") == 0)
        return run_peer(n, seconds, argc > 4 ? argv[4] : "peer");
    return 2;
}
