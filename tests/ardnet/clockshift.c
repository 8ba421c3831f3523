/*
 * clockshift.c - LD_PRELOAD library for the ardnet tests: CLOCK_REALTIME as seen by the
 * process is set back by $CLOCKSHIFT_S seconds (the other clocks are untouched), as after a
 * step of the host's clock. A time namespace cannot do this: it shifts only the monotonic and
 * boot-time clocks.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>

int clock_gettime(clockid_t id, struct timespec *ts)
{
    static int (*real)(clockid_t, struct timespec *);
    if (!real)
        real = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
    int rc = real(id, ts);
    const char *s = getenv("CLOCKSHIFT_S");
    if (rc == 0 && id == CLOCK_REALTIME && s)
        ts->tv_sec -= strtol(s, NULL, 10);
    return rc;
}
