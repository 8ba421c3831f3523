/* period.c - fixed-rate loops on absolute deadlines. */
#include "ardi.h"

#include <errno.h>
#include <sys/prctl.h>
#include <time.h>

int ard_period_init(ard_period *p, int64_t period_ns)
{
    if (p == NULL || period_ns <= 0)
        return ardi_fail(ARD_EINVAL, "ard_period_init: period must be > 0 ns");
    /* The default 50 us slack would let the kernel batch our wake-ups. */
    (void)prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
    p->period_ns = period_ns;
    p->next_ns = ard_now_ns() + period_ns;
    p->overruns = 0;
    p->cycles = 0;
    return 0;
}

int ard_period_wait(ard_period *p)
{
    int64_t now = ard_now_ns();
    int missed = 0;
    if (now >= p->next_ns) {
        /* Late: do not try to catch up with a burst; resume on the next future deadline. */
        int64_t behind = (now - p->next_ns) / p->period_ns + 1;
        p->next_ns += behind * p->period_ns;
        missed = behind > INT32_MAX ? INT32_MAX : (int)behind;
        p->overruns += (uint64_t)behind;
    }
    struct timespec ts = {.tv_sec = p->next_ns / 1000000000, .tv_nsec = p->next_ns % 1000000000};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
    p->next_ns += p->period_ns;
    p->cycles++;
    return missed;
}
