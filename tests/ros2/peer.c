/*
 * peer.c - an independent DDS peer for the tests of ardnet's ros2: endpoints: plain Cyclone DDS
 * on the C code idlc generates from ardnet_msgs.idl (the IDL ROS 2 would generate), no ardnet.
 *
 *   ros2_peer sub arm|cmd|all|image|cloud TOPIC [--count N] [--first-ms F] [--idle-ms I] [--max-ms
 * M]
 *                               [--reliable] [--transient-local] [--expect-none]
 *                               [--matched FILE]
 *   ros2_peer pub arm|cmd|all|image|cloud|other TOPIC [--count N] [--rate HZ] [--wait-ms W]
 * [--reliable]
 *                               [--linger-ms L] [--many K]
 *   (both)                      [--secure ENCLAVE_DIR]
 *
 * arm is ArmState_, cmd ArmCmd_ (the same fields), all AllTypes_, image CamImage_ (1 MiB),
 * cloud LidarCloud_ (4 MiB; every byte of the large ones checked), other Other_ (another type).
 * TOPIC is the DDS topic ("rt/arm/state"); the domain is ROS_DOMAIN_ID (default 0). sub takes
 * samples until it has N (--count; 0: until none came for I ms), F ms at most for the first, M
 * in all, checks every value against its counter (values.h) and prints
 * "received=N bad=N older=N first=C last=C lat_med_us=X lat_p99_us=Y" (latency: the sample's
 * source timestamp to its receipt); --transient-local: a reliable, transient-local reader (it
 * gets what a transient-local writer kept); --matched: FILE is created once a writer matched. Exit
 * 0 if it got its samples (at least one) all intact and in order; with --expect-none, exit 0 if
 * none came. pub waits up to W ms (default 20000) for a matching reader, then writes N samples
 * (default 1000) at HZ (default 1000), the counter starting at the realtime clock in microseconds
 * (increasing across restarts); exit 0 when all were written, 3 when no reader matched.
 * --many K: K writers on the topics TOPIC0 .. TOPIC<K-1>, each sample written to every one
 * (all matched first); a reliable write that times out (the readers have not acknowledged
 * enough yet) is tried again, so that "sent" counts every sample each writer wrote.
 * --secure ENCLAVE_DIR: the participant joins a DDS Security domain with the files of an SROS2
 * enclave (identity_ca.cert.pem, cert.pem, key.pem, permissions_ca.cert.pem, governance.p7s,
 * permissions.p7s).
 */
#include "ardnet_msgs.h"
#include "values.h"

#include <dds/dds.h>

#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

_Static_assert(sizeof(struct arm) == sizeof(ardnet_msgs_msg_dds__ArmState_), "arm layout");
_Static_assert(sizeof(struct all) == sizeof(ardnet_msgs_msg_dds__AllTypes_), "all layout");
_Static_assert(sizeof(ardnet_msgs_msg_dds__CamImage_) == IMAGE_SIZE, "image layout");
_Static_assert(sizeof(ardnet_msgs_msg_dds__LidarCloud_) == CLOUD_SIZE, "cloud layout");

enum kind { K_ARM, K_ALL, K_OTHER, K_IMAGE, K_CLOUD };

static size_t big_size(int kind)
{
    return kind == K_IMAGE ? IMAGE_SIZE : kind == K_CLOUD ? CLOUD_SIZE : 0;
}

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
    (void)sig;
    stop = 1;
}

static long opt_long(int argc, char **argv, const char *name, long def)
{
    for (int i = 3; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return strtol(argv[i + 1], NULL, 10);
    return def;
}

static const char *opt_str(int argc, char **argv, const char *name)
{
    for (int i = 3; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return argv[i + 1];
    return NULL;
}

static bool opt_flag(int argc, char **argv, const char *name)
{
    for (int i = 3; i < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return true;
    return false;
}

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static dds_qos_t *make_qos(bool reliable, bool tl, bool big)
{
    dds_qos_t *q = dds_create_qos();
    if (tl) {
        reliable = true;
        dds_qset_durability(q, DDS_DURABILITY_TRANSIENT_LOCAL);
    }
    dds_qset_reliability(q, reliable ? DDS_RELIABILITY_RELIABLE : DDS_RELIABILITY_BEST_EFFORT,
                         DDS_MSECS(100));
    if (reliable && big) {
        /* (1000 large samples would be gigabytes: keep all, at most 8 waiting; a writer whose
         * reader has not acknowledged them waits, so that every sample is delivered) */
        dds_qset_history(q, DDS_HISTORY_KEEP_ALL, 0);
        dds_qset_resource_limits(q, 8, DDS_LENGTH_UNLIMITED, DDS_LENGTH_UNLIMITED);
    } else {
        dds_qset_history(q, DDS_HISTORY_KEEP_LAST, reliable ? 1000 : 1);
    }
    return q;
}

static int run_sub(dds_entity_t pp, const dds_topic_descriptor_t *desc, int kind, int argc,
                   char **argv)
{
    bool arm = kind == K_ARM;
    size_t big = big_size(kind);
    long count = opt_long(argc, argv, "--count", 0);
    int64_t first_ns = opt_long(argc, argv, "--first-ms", 20000) * 1000000LL;
    int64_t idle_ns = opt_long(argc, argv, "--idle-ms", 2000) * 1000000LL;
    int64_t end = mono_ns() + opt_long(argc, argv, "--max-ms", 60000) * 1000000LL;
    bool none = opt_flag(argc, argv, "--expect-none");
    dds_entity_t tp = dds_create_topic(pp, desc, argv[2], NULL, NULL);
    dds_qos_t *q = make_qos(opt_flag(argc, argv, "--reliable"),
                            opt_flag(argc, argv, "--transient-local"), big > 0);
    dds_entity_t rd = dds_create_reader(pp, tp, q, NULL);
    dds_delete_qos(q);
    if (tp < 0 || rd < 0) {
        fprintf(stderr, "ros2_peer: cannot create reader: %s\n", dds_strretcode(tp < 0 ? tp : rd));
        return 2;
    }
    dds_entity_t ws = dds_create_waitset(pp);
    dds_entity_t rc = dds_create_readcondition(rd, DDS_ANY_STATE);
    dds_waitset_attach(ws, rc, 0);
    size_t cap = count > 0 ? (size_t)count + 16 : 100000, nlat = 0;
    int64_t *lat = malloc(cap * sizeof *lat);
    uint64_t received = 0, bad = 0, older = 0, first = 0, last = 0;
    int64_t last_ns = mono_ns();
    const char *matched = opt_str(argc, argv, "--matched");
    struct all small;
    void *sample = big ? malloc(big) : &small;
    if (!sample) {
        fprintf(stderr, "ros2_peer: out of memory\n");
        return 2;
    }
    void *ptr[1] = {sample};
    while (!stop && (count == 0 || received < (uint64_t)count)) {
        int64_t now = mono_ns(), wait = (received ? idle_ns : first_ns) - (now - last_ns);
        if (now >= end || wait <= 0)
            break;
        int64_t w = wait < end - now ? wait : end - now;
        dds_waitset_wait(ws, NULL, 0, matched && w > DDS_MSECS(10) ? DDS_MSECS(10) : w);
        dds_subscription_matched_status_t ms;
        if (matched && dds_get_subscription_matched_status(rd, &ms) == 0 && ms.current_count > 0) {
            FILE *f = fopen(matched, "w");
            if (f)
                fclose(f);
            matched = NULL;
        }
        dds_sample_info_t si;
        while (dds_take(rd, ptr, &si, 1, 1) == 1) {
            if (!si.valid_data)
                continue;
            int64_t at = dds_time();
            const char *field = big   ? (bad_big(sample, big) ? "data" : NULL)
                                : arm ? bad_arm(sample)
                                      : bad_all(sample);
            uint64_t c = big   ? big_counter(sample)
                         : arm ? arm_counter(sample)
                               : ((const struct all *)sample)->counter;
            if (field) {
                if (bad++ == 0)
                    fprintf(stderr, "ros2_peer: sample %" PRIu64 ": field '%s' is wrong\n", c,
                            field);
                continue;
            }
            if (received && c <= last && older++ == 0)
                fprintf(stderr, "ros2_peer: sample %" PRIu64 " after %" PRIu64 "\n", c, last);
            if (!received)
                first = c;
            if (!received || c > last)
                last = c;
            if (lat && nlat < cap)
                lat[nlat++] = at - si.source_timestamp;
            received++;
            last_ns = mono_ns();
        }
    }
    double med = 0, p99 = 0;
    if (lat && nlat) {
        qsort(lat, nlat, sizeof *lat, cmp_i64);
        med = (double)lat[nlat / 2] / 1e3;
        p99 = (double)lat[(nlat * 99) / 100 < nlat ? (nlat * 99) / 100 : nlat - 1] / 1e3;
    }
    free(lat);
    if (big)
        free(sample);
    printf("received=%" PRIu64 " bad=%" PRIu64 " older=%" PRIu64 " first=%" PRIu64 " last=%" PRIu64
           " lat_med_us=%.1f lat_p99_us=%.1f\n",
           received, bad, older, first, last, med, p99);
    if (none)
        return received == 0 ? 0 : 1;
    return received > 0 && bad == 0 && older == 0 ? 0 : 1;
}

static int run_pub(dds_entity_t pp, const dds_topic_descriptor_t *desc, int kind, int argc,
                   char **argv)
{
    long count = opt_long(argc, argv, "--count", 1000);
    long rate = opt_long(argc, argv, "--rate", 1000);
    int64_t wait_ns = opt_long(argc, argv, "--wait-ms", 20000) * 1000000LL;
    long many = opt_long(argc, argv, "--many", 0);
    int nw = many > 0 ? (int)many : 1;
    dds_entity_t *wr = calloc((size_t)nw, sizeof *wr);
    size_t big = big_size(kind);
    dds_qos_t *q = make_qos(opt_flag(argc, argv, "--reliable"), false, big > 0);
    for (int i = 0; wr && i < nw; i++) {
        char name[256];
        if (many > 0)
            snprintf(name, sizeof name, "%s%d", argv[2], i);
        else
            snprintf(name, sizeof name, "%s", argv[2]);
        dds_entity_t tp = dds_create_topic(pp, desc, name, NULL, NULL);
        wr[i] = tp < 0 ? tp : dds_create_writer(pp, tp, q, NULL);
        if (wr[i] < 0) {
            fprintf(stderr, "ros2_peer: cannot create writer on %s: %s\n", name,
                    dds_strretcode(wr[i]));
            free(wr);
            return 2;
        }
    }
    dds_delete_qos(q);
    if (!wr) {
        fprintf(stderr, "ros2_peer: out of memory\n");
        return 2;
    }
    int64_t until = mono_ns() + wait_ns;
    for (int i = 0; i < nw; i++) {
        dds_publication_matched_status_t st = {0};
        while (!stop && mono_ns() < until) {
            dds_get_publication_matched_status(wr[i], &st);
            if (st.current_count > 0)
                break;
            dds_sleepfor(DDS_MSECS(10));
        }
        if (st.current_count == 0) {
            fprintf(stderr, "ros2_peer: no reader matched on %s (writer %d)\n", argv[2], i);
            free(wr);
            return 3;
        }
    }
    dds_sleepfor(DDS_MSECS(opt_long(argc, argv, "--settle-ms", 200)));
    void *bigbuf = big ? malloc(big) : NULL;
    if (big && !bigbuf) {
        fprintf(stderr, "ros2_peer: out of memory\n");
        free(wr);
        return 2;
    }
    uint64_t counter = 0;
    long sent = 0;
    int64_t period = 1000000000LL / (rate > 0 ? rate : 1), next = mono_ns();
    while (!stop && sent < count) {
        uint64_t now_us = (uint64_t)(dds_time() / 1000);
        counter = now_us > counter ? now_us : counter + 1;
        struct arm a;
        struct all b;
        ardnet_msgs_msg_dds__Other_ o = {.x = (int32_t)counter};
        const void *s = &o;
        if (big) {
            fill_big(bigbuf, big, counter);
            s = bigbuf;
        } else if (kind == K_ARM) {
            fill_arm(&a, counter);
            s = &a;
        } else if (kind == K_ALL) {
            fill_all(&b, counter);
            s = &b;
        }
        for (int i = 0; i < nw; i++) {
            dds_return_t rc;
            int tries = 0;
            while ((rc = dds_write(wr[i], s)) == DDS_RETCODE_TIMEOUT && !stop && ++tries < 100)
                ;
            if (rc < 0) {
                fprintf(stderr, "ros2_peer: write: %s\n", dds_strretcode(rc));
                free(bigbuf);
                free(wr);
                return 2;
            }
        }
        sent++;
        next += period;
        int64_t d = next - mono_ns();
        if (d > 0) {
            struct timespec ts = {(time_t)(d / 1000000000), (long)(d % 1000000000)};
            nanosleep(&ts, NULL);
        }
    }
    dds_sleepfor(DDS_MSECS(opt_long(argc, argv, "--linger-ms", 300)));
    printf("sent=%ld last=%" PRIu64 "\n", sent, counter);
    free(bigbuf);
    free(wr);
    return 0;
}

/* --secure DIR: DDS Security with the files of an SROS2 enclave directory, the plugins by the
 * names Cyclone's loader resolves itself. */
static dds_qos_t *participant_qos(const char *dir)
{
    dds_qos_t *q = dds_create_qos();
    if (!dir)
        return q;
    static const char *const plugin[][4] = {
        {"auth", "dds_security_auth", "init_authentication", "finalize_authentication"},
        {"crypto", "dds_security_crypto", "init_crypto", "finalize_crypto"},
        {"access", "dds_security_ac", "init_access_control", "finalize_access_control"},
    };
    static const char *const file[][2] = {
        {"dds.sec.auth.identity_ca", "identity_ca.cert.pem"},
        {"dds.sec.auth.identity_certificate", "cert.pem"},
        {"dds.sec.auth.private_key", "key.pem"},
        {"dds.sec.access.permissions_ca", "permissions_ca.cert.pem"},
        {"dds.sec.access.governance", "governance.p7s"},
        {"dds.sec.access.permissions", "permissions.p7s"},
    };
    char name[64], val[4200];
    for (int i = 0; i < 3; i++) {
        static const char *const part[] = {"path", "init", "finalize"};
        for (int j = 0; j < 3; j++) {
            snprintf(name, sizeof name, "dds.sec.%s.library.%s", plugin[i][0], part[j]);
            dds_qset_prop(q, name, plugin[i][j + 1]);
        }
    }
    for (int i = 0; i < 6; i++) {
        snprintf(val, sizeof val, "file:%s/%s", dir, file[i][1]);
        dds_qset_prop(q, file[i][0], val);
    }
    return q;
}

int main(int argc, char **argv)
{
    if (argc < 4 || (strcmp(argv[1], "sub") != 0 && strcmp(argv[1], "pub") != 0)) {
        fprintf(stderr, "usage: ros2_peer sub|pub arm|cmd|all|image|cloud|other TOPIC [options]\n");
        return 2;
    }
    bool cmd = strcmp(argv[2], "cmd") == 0;
    int kind = strcmp(argv[2], "arm") == 0 || cmd ? K_ARM
               : strcmp(argv[2], "all") == 0      ? K_ALL
               : strcmp(argv[2], "image") == 0    ? K_IMAGE
               : strcmp(argv[2], "cloud") == 0    ? K_CLOUD
                                                  : K_OTHER;
    if (kind == K_OTHER && strcmp(argv[2], "other") != 0) {
        fprintf(stderr, "ros2_peer: unknown message '%s'\n", argv[2]);
        return 2;
    }
    /* argv[2] becomes the topic for the option parsers (options start at argv[3]). */
    argv[2] = argv[3];
    for (int i = 3; i + 1 < argc; i++)
        argv[i] = argv[i + 1];
    argc--;
    signal(SIGTERM, on_term);
    signal(SIGINT, on_term);
    const char *dom = getenv("ROS_DOMAIN_ID");
    dds_qos_t *pq = participant_qos(opt_str(argc, argv, "--secure"));
    dds_entity_t pp = dds_create_participant(dom ? (dds_domainid_t)atoi(dom) : 0, pq, NULL);
    dds_delete_qos(pq);
    if (pp < 0) {
        fprintf(stderr, "ros2_peer: participant: %s\n", dds_strretcode(pp));
        return 2;
    }
    const dds_topic_descriptor_t *desc = cmd               ? &ardnet_msgs_msg_dds__ArmCmd__desc
                                         : kind == K_ARM   ? &ardnet_msgs_msg_dds__ArmState__desc
                                         : kind == K_ALL   ? &ardnet_msgs_msg_dds__AllTypes__desc
                                         : kind == K_IMAGE ? &ardnet_msgs_msg_dds__CamImage__desc
                                         : kind == K_CLOUD ? &ardnet_msgs_msg_dds__LidarCloud__desc
                                                           : &ardnet_msgs_msg_dds__Other__desc;
    int rc = argv[1][0] == 's' ? run_sub(pp, desc, kind, argc, argv)
                               : run_pub(pp, desc, kind, argc, argv);
    dds_delete(pp);
    return rc;
}
