/*
 * ardnet_attach.c - time from a reader's attach to its first packet, for ardnet --auto
 * (bench/ardnet/auto.sh runs it on the wanting host).
 *
 *   ardnet_attach CONN SIZE TYPE COUNT GAP_MS
 *
 * COUNT times: attach an IN port to CONN, wait for the first packet sent after the attach
 * (its CLOCK_REALTIME send time later than the attach: not one the connection already held),
 * record the time, detach, then wait GAP_MS (plus 0..49 ms, spread) so that the catalog stops
 * wanting CONN before the next attach. Prints "attaches=N min_ms= p10_ms= median_ms= p90_ms=
 * p99_ms= max_ms= missed=M" (missed: no packet within 5 s).
 */
#include "ardnet.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int64_t real_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
    if (ard_init(&argc, argv) < 0 || argc != 6) {
        fprintf(stderr, "usage: ardnet_attach CONN SIZE TYPE COUNT GAP_MS\n");
        return 2;
    }
    size_t size = (size_t)atol(argv[2]);
    int count = atoi(argv[4]);
    long gap_ms = atol(argv[5]);
    int64_t *t = calloc((size_t)count, sizeof *t);
    void *buf = malloc(size);
    if (!t || !buf || count < 1)
        return 2;
    int n = 0, missed = 0;
    for (int i = 0; i < count; i++) {
        int64_t t0 = ard_now_ns(), r0 = real_ns();
        ard_port *p = ard_create(argv[1], ARD_IN, size, argv[3][0] ? argv[3] : NULL);
        if (!p) {
            fprintf(stderr, "ardnet_attach: %s\n", ard_errdetail());
            return 1;
        }
        int got = 0;
        while (ard_now_ns() - t0 < 5000000000LL) {
            if (ard_rec_timed(p, buf, 100000000) == 0 && ard_port_info(p).real_ns > r0) {
                got = 1;
                break;
            }
        }
        if (got)
            t[n++] = ard_now_ns() - t0;
        else
            missed++;
        ard_close(p);
        /* Plus 0..49 ms spread over the attaches: a fixed period would lock on to the
         * catalog's 50 ms look at the domain and measure one phase of it only. */
        long g = gap_ms + (long)((i * 7919) % 50);
        struct timespec gap = {g / 1000, (g % 1000) * 1000000L};
        nanosleep(&gap, NULL);
    }
    qsort(t, (size_t)n, sizeof *t, cmp);
    if (n == 0) {
        printf("attaches=%d missed=%d\n", count, missed);
        return 1;
    }
    size_t p99 = (size_t)((n * 99 + 99) / 100) - 1;
    printf("attaches=%d min_ms=%.2f p10_ms=%.2f median_ms=%.2f p90_ms=%.2f p99_ms=%.2f "
           "max_ms=%.2f missed=%d\n",
           n, t[0] / 1e6, t[n / 10] / 1e6, t[n / 2] / 1e6, t[n * 9 / 10] / 1e6, t[p99] / 1e6,
           t[n - 1] / 1e6, missed);
    ard_fini();
    return 0;
}
