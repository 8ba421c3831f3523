/*
 * octblock - the C side of the Octave binding's tests.
 *
 *   octblock write CONN N PERIOD_US   send packets k = 1..N, one every PERIOD_US
 *   octblock read CONN N              receive until N packets were checked (5 s per packet)
 *   octblock trywrite CONN            exit 0 if an OUT port attaches, 6 on ARD_EBUSY
 *   octblock arm CONN N PERIOD_US     send the arm's state "q:f64[7] qd:f64[7]" k = 1..N:
 *                                     q[j] = k + j / 8, qd[j] = -k
 *   octblock unlink -                 remove the domain's connections
 *
 * Domain from $ARD_DOMAIN. Packet k holds the values of expected(k) below, which
 * tests/octave/expected_packet.m computes the same way on the Octave side.
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep */

#include "ardnet.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TYPE "k:u32 a:i8 b:u8 c:i16 d:u16 e:i32 f:u32 g:i64 h:u64 x:f32[2] y:f64[3]"

struct pkt {
    uint32_t k;
    int8_t a;
    uint8_t b;
    int16_t c;
    uint16_t d;
    int32_t e;
    uint32_t f;
    int64_t g;
    uint64_t h;
    float x[2];
    double y[3];
};

static struct pkt expected(uint32_t k)
{
    struct pkt p;
    memset(&p, 0, sizeof p); /* padding too: packets are compared with memcmp */
    p.k = k;
    p.a = (int8_t)(-(int)(k % 100));
    p.b = (uint8_t)(200 + k % 50);
    p.c = (int16_t)(-300 * (int)(k % 100));
    p.d = (uint16_t)(60000 + k % 1000);
    p.e = -100000 * (int32_t)(k % 1000);
    p.f = 4000000000u + k;
    p.g = -5000000000000LL * (int64_t)k;
    p.h = (UINT64_C(1) << 63) + k;
    p.x[0] = (float)k / 4;
    p.x[1] = -(float)k / 8;
    p.y[0] = k * 0.1;
    p.y[1] = -(double)k;
    p.y[2] = (double)k * k;
    return p;
}

static ard_port *port(const char *conn, enum ard_dir dir)
{
    ard_port *p = ard_create_on(dir == ARD_OUT ? "w" : "r", conn, dir, sizeof(struct pkt), TYPE);
    if (!p) {
        fprintf(stderr, "octblock: %s\n", ard_errdetail());
        exit(ard_lasterror() == ARD_EBUSY ? 6 : 1);
    }
    return p;
}

int main(int argc, char **argv)
{
    if (ard_init(&argc, argv) < 0 || argc < 3) {
        fprintf(stderr, "usage: octblock write|read|trywrite CONN [N [PERIOD_US]]\n");
        return 100;
    }
    const char *mode = argv[1], *conn = argv[2];
    if (strcmp(mode, "unlink") == 0)
        return ard_domain_unlink(NULL) < 0;
    if (strcmp(mode, "trywrite") == 0) {
        ard_close(port(conn, ARD_OUT));
        return 0;
    }
    if (argc < 4)
        return 100;
    uint32_t n = (uint32_t)strtoul(argv[3], NULL, 10);
    if (strcmp(mode, "write") == 0 && argc == 5) {
        ard_port *w = port(conn, ARD_OUT);
        long us = strtol(argv[4], NULL, 10);
        for (uint32_t k = 1; k <= n; k++) {
            struct pkt p = expected(k);
            if (ard_send(w, &p) < 0)
                return 1;
            struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
            nanosleep(&ts, NULL);
        }
        return 0;
    }
    if (strcmp(mode, "arm") == 0 && argc == 5) {
        ard_port *w = ard_create_on("w", conn, ARD_OUT, 14 * sizeof(double), "q:f64[7] qd:f64[7]");
        if (!w) {
            fprintf(stderr, "octblock: %s\n", ard_errdetail());
            return 1;
        }
        long us = strtol(argv[4], NULL, 10);
        for (uint32_t k = 1; k <= n; k++) {
            double s[14];
            for (int j = 0; j < 7; j++) {
                s[j] = k + j / 8.0;
                s[7 + j] = -(double)k;
            }
            if (ard_send(w, s) < 0)
                return 1;
            struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
            nanosleep(&ts, NULL);
        }
        return 0;
    }
    if (strcmp(mode, "read") == 0) {
        ard_port *r = port(conn, ARD_IN);
        for (uint32_t i = 0; i < n; i++) {
            struct pkt p;
            memset(&p, 0, sizeof p);
            int rc = ard_rec_timed(r, &p, 5000000000LL);
            if (rc < 0) {
                fprintf(stderr, "octblock read: %s after %u packets\n", ard_strerror(rc), i);
                return 2;
            }
            struct pkt e = expected(p.k);
            if (p.k == 0 || memcmp(&p, &e, sizeof p) != 0) {
                fprintf(stderr,
                        "octblock read: packet k=%u differs from the expected values "
                        "(a=%d b=%u c=%d d=%u e=%d f=%u g=%lld h=%llu x=%g,%g y=%g,%g,%g)\n",
                        p.k, p.a, p.b, p.c, p.d, p.e, p.f, (long long)p.g, (unsigned long long)p.h,
                        p.x[0], p.x[1], p.y[0], p.y[1], p.y[2]);
                return 1;
            }
        }
        printf("octblock read: %u packets ok\n", n);
        return 0;
    }
    return 100;
}
