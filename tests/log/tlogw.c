/* tlogw.c - writers of known values for the recording tests.
 *   tlogw all CONN RATE N     "every basic type" packets: packet n (1..N) holds values made
 *                             from n (see value_of in mcap_check.mjs), sent with the realtime
 *                             stamp 1.7e18 + n ms (also stored in the field `stamp`)
 *   tlogw opaque CONN RATE N  40-byte opaque packets: byte i of packet n = (n + i) & 255
 *   tlogw live CONN RATE N    u64 packets holding n, sent with ard_send (the writer's real
 *                             clock as the publish stamp)
 * Sends N packets at RATE Hz, prints "sent N", stays attached until killed.
 *   tlogw check FILE CONN     reads the recording of connection CONN in FILE and prints
 *                             "count C first S last L missed M early E min_lag_ns D":
 *                             E = messages whose log time is before their publish time
 *                             (compared as unsigned 64-bit ns), D = the least log - publish. */
#include "ardnet.h"
#include "ardnet_log.h"

#include <inttypes.h>

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ALL_TYPE                                                                                   \
    "a:i8 b:u8 c:i16 d:u16 e:i32 f:u32 g:i64 h:u64 x:f32 y:f64 arr:f64[3] Big:u16[2] "             \
    "stamp:i64"

struct all {
    int8_t a;
    uint8_t b;
    int16_t c;
    uint16_t d;
    int32_t e;
    uint32_t f;
    int64_t g;
    uint64_t h;
    float x;
    double y;
    double arr[3];
    uint16_t big[2];
    int64_t stamp;
};

static int check(const char *file, const char *conn)
{
    ard_logr *r = ard_logr_open(file);
    if (!r) {
        fprintf(stderr, "tlogw: %s\n", ard_errdetail());
        return 3;
    }
    int ci = ard_logr_find(r, conn);
    if (ci < 0) {
        fprintf(stderr, "tlogw: '%s' has no connection '%s'\n", file, conn);
        ard_logr_close(r);
        return 1;
    }
    uint64_t count = 0, first = 0, last = 0, early = 0;
    int64_t min_lag = INT64_MAX;
    struct ard_log_msg m;
    int rc;
    while ((rc = ard_logr_next(r, &m)) == 1) {
        if (m.conn != (size_t)ci)
            continue;
        if (count++ == 0)
            first = m.seq;
        last = m.seq;
        if ((uint64_t)m.log_ns < (uint64_t)m.real_ns)
            early++;
        int64_t lag = (int64_t)((uint64_t)m.log_ns - (uint64_t)m.real_ns);
        if (lag < min_lag)
            min_lag = lag;
    }
    if (rc < 0) {
        fprintf(stderr, "tlogw: %s\n", ard_errdetail());
        ard_logr_close(r);
        return 3;
    }
    printf("count %" PRIu64 " first %" PRIu64 " last %" PRIu64 " missed %" PRIu64 " early %" PRIu64
           " min_lag_ns %" PRId64 "\n",
           count, first, last, ard_logr_conn(r, (size_t)ci)->missed, early, count ? min_lag : 0);
    ard_logr_close(r);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "check") == 0)
        return check(argv[2], argv[3]);
    if (argc < 5) {
        fprintf(stderr, "usage: tlogw all|opaque|live CONN RATE N | check FILE CONN\n");
        return 100;
    }
    bool all = strcmp(argv[1], "all") == 0, live = strcmp(argv[1], "live") == 0;
    if (live) {
        ard_port *p = ard_create_on("out", argv[2], ARD_OUT, 8, "n:u64");
        if (!p || ard_init(&argc, argv) < 0) {
            fprintf(stderr, "tlogw: %s\n", ard_errdetail());
            return 111;
        }
        ard_period per;
        if (ard_period_init(&per, (int64_t)(1e9 / atof(argv[3]))) < 0)
            return 111;
        long n = atol(argv[4]);
        for (long k = 1; k <= n; k++) {
            uint64_t v = (uint64_t)k;
            if (ard_send(p, &v) < 0)
                return 111;
            ard_period_wait(&per);
        }
        printf("sent %ld\n", n);
        fflush(stdout);
        pause();
        return 0;
    }
    size_t size = all ? sizeof(struct all) : 40;
    ard_port *p = ard_create_on("out", argv[2], ARD_OUT, size, all ? ALL_TYPE : NULL);
    if (!p || ard_init(&argc, argv) < 0) {
        fprintf(stderr, "tlogw: %s\n", ard_errdetail());
        return 111;
    }
    double rate = atof(argv[3]);
    long n = atol(argv[4]);
    ard_period per;
    if (ard_period_init(&per, (int64_t)(1e9 / rate)) < 0)
        return 111;
    for (long k = 1; k <= n; k++) {
        int64_t real = 1700000000000000000ll + k * 1000000ll;
        if (all) {
            struct all v;
            memset(&v, 0, sizeof v);
            v.a = (int8_t)(k % 200 - 100);
            v.b = (uint8_t)(k % 256);
            v.c = (int16_t)(-k);
            v.d = (uint16_t)(k * 3);
            v.e = (int32_t)(-k * 100000);
            v.f = (uint32_t)(k * 4000000u);
            v.g = -k * 10000000000ll;
            v.h = (uint64_t)k * 1000000000000000ull + 1;
            v.x = (float)k * 0.5f;
            v.y = (double)k / 3.0;
            for (int i = 0; i < 3; i++)
                v.arr[i] = (double)(k + i) * 0.25;
            v.big[0] = (uint16_t)k;
            v.big[1] = 65535;
            v.stamp = real;
            if (ard_send_stamped(p, &v, ard_now_ns(), real) < 0)
                return 111;
        } else {
            uint8_t b[40];
            for (int i = 0; i < 40; i++)
                b[i] = (uint8_t)(k + i);
            if (ard_send_stamped(p, b, ard_now_ns(), real) < 0)
                return 111;
        }
        ard_period_wait(&per);
    }
    printf("sent %ld\n", n);
    fflush(stdout);
    pause();
    return 0;
}
