/*
 * clock.c - the clock of the per-block execution times: one reading per block boundary, so
 * its cost is paid once per block and step. Reading the TSC costs about 10 ns where a
 * CLOCK_MONOTONIC reading through the vDSO costs about 24 (docs/performance.md, ardrun); the
 * TSC is used only when the kernel itself keeps time with it.
 */
#include "ardrun.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

bool ardr_use_tsc;
double ardr_ns_per_tick = 1.0;
static char clock_name[48] = "CLOCK_MONOTONIC";

const char *ardr_clock_name(void)
{
    return clock_name;
}

#ifdef ARDR_HAVE_TSC
/* A (TSC, CLOCK_MONOTONIC) pair read as close together as the machine lets: the tightest of
 * a few tries. */
static void pair(uint64_t *tsc, int64_t *ns)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 8; i++) {
        uint64_t a = __rdtsc();
        int64_t n = ard_now_ns();
        uint64_t b = __rdtsc();
        if (b - a < best) {
            best = b - a;
            *tsc = a + (b - a) / 2;
            *ns = n;
        }
    }
}
#endif

void ardr_clock_init(void)
{
#ifdef ARDR_HAVE_TSC
    char cs[32] = "";
    FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
    if (f) {
        if (fgets(cs, sizeof cs, f) == NULL)
            cs[0] = '\0';
        fclose(f);
    }
    cs[strcspn(cs, "\n")] = '\0';
    if (strcmp(cs, "tsc"))
        return;
    uint64_t t0 = 0, t1 = 0;
    int64_t n0 = 0, n1 = 0;
    pair(&t0, &n0);
    struct timespec ts = {0, 10000000};
    while (nanosleep(&ts, &ts) != 0)
        ;
    pair(&t1, &n1);
    if (t1 <= t0 || n1 - n0 < 5000000)
        return;
    double r = (double)(n1 - n0) / (double)(t1 - t0);
    if (!(r > 0.05 && r < 20)) /* 50 MHz .. 20 GHz: anything else is not a TSC to trust */
        return;
    ardr_ns_per_tick = r;
    ardr_use_tsc = true;
    snprintf(clock_name, sizeof clock_name, "TSC (%.3f GHz)", 1.0 / r);
#endif
}
