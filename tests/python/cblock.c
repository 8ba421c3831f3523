/*
 * cblock - a C block for the Python binding's tests: the other end of a connection, written
 * against the C library alone.
 *
 *   cblock write [--ard out=CONN]    send one packet of ALL_TYPE with the values below, exit
 *   cblock read [--ard in=CONN]      wait up to 10 s for a packet, print its fields, exit
 *   cblock hold [--ard out=CONN]     be the writer, print "ready PID", wait for EOF on stdin
 *   cblock stream N US [--ard ...]   send N packets, US microseconds apart; field d[0] = 1..N
 *
 * Exit: 0 ok, 1 library error (message on stderr), 2 nothing received in time, 100 usage.
 */
#include "ardnet.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Every basic type once, arrays included, laid out like the descriptor says. */
#define ALL_TYPE "i8 u8[3] i16 u16 i32 u32 i64 u64 f32 f64[3]"

struct all {
    int8_t a;
    uint8_t b[3];
    int16_t c;
    uint16_t d16;
    int32_t e;
    uint32_t f;
    int64_t g;
    uint64_t h;
    float i;
    double d[3];
};

_Static_assert(sizeof(struct all) == 64, "struct all must match ALL_TYPE");

static void fill(struct all *s)
{
    s->a = -5;
    s->b[0] = 1;
    s->b[1] = 2;
    s->b[2] = 250;
    s->c = -1234;
    s->d16 = 54321;
    s->e = -123456789;
    s->f = 4000000000u;
    s->g = -((int64_t)1 << 40) - 3;
    s->h = ((uint64_t)1 << 63) + 5;
    s->i = 1.5f;
    s->d[0] = -1.0;
    s->d[1] = 0.1;
    s->d[2] = 1e300;
}

static void print(const struct all *s)
{
    printf("f0 %d\n", s->a);
    printf("f1 %u %u %u\n", s->b[0], s->b[1], s->b[2]);
    printf("f2 %d\n", s->c);
    printf("f3 %u\n", s->d16);
    printf("f4 %" PRId32 "\n", s->e);
    printf("f5 %" PRIu32 "\n", s->f);
    printf("f6 %" PRId64 "\n", s->g);
    printf("f7 %" PRIu64 "\n", s->h);
    printf("f8 %.9g\n", (double)s->i);
    printf("f9 %.17g %.17g %.17g\n", s->d[0], s->d[1], s->d[2]);
}

static int fail(const char *what)
{
    fprintf(stderr, "cblock: %s: %s\n", what, ard_errdetail());
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: cblock write|read|hold|stream N US [--ard ...]\n");
        return 100;
    }
    const char *mode = argv[1];
    enum ard_dir dir = strcmp(mode, "read") == 0 ? ARD_IN : ARD_OUT;
    ard_port *p = ard_create(dir == ARD_IN ? "in" : "out", dir, sizeof(struct all), ALL_TYPE);
    if (p == NULL || ard_init(&argc, argv) < 0)
        return fail("start");
    struct all s;
    memset(&s, 0, sizeof s);
    if (strcmp(mode, "write") == 0) {
        fill(&s);
        return ard_send(p, &s) < 0 ? fail("send") : 0;
    }
    if (strcmp(mode, "read") == 0) {
        int rc = ard_rec_timed(p, &s, 10000000000LL);
        if (rc == ARD_ETIMEDOUT)
            return 2;
        if (rc < 0)
            return fail("rec");
        print(&s);
        return 0;
    }
    if (strcmp(mode, "hold") == 0) {
        printf("ready %d\n", (int)getpid());
        fflush(stdout);
        char buf[64];
        while (fread(buf, 1, sizeof buf, stdin) > 0)
            ;
        return 0;
    }
    if (strcmp(mode, "stream") == 0 && argc == 4) {
        long n = atol(argv[2]), us = atol(argv[3]);
        for (long k = 1; k <= n; k++) {
            fill(&s);
            s.d[0] = (double)k;
            if (ard_send(p, &s) < 0)
                return fail("send");
            struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
            nanosleep(&ts, NULL);
        }
        return 0;
    }
    fprintf(stderr, "cblock: unknown mode '%s'\n", mode);
    return 100;
}
