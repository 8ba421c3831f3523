/*
 * test_period.c - the periodic-loop helper: absolute deadlines on a fixed grid, overruns
 * counted, low timer slack. Only orders and counts are asserted, never durations.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/prctl.h>
#include <time.h>

#include "ardnet.h"

#define PERIOD 2000000 /* 2 ms */

static void sleep_ns(int64_t ns)
{
    struct timespec ts = {ns / 1000000000, ns % 1000000000};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static void test_period_init_rejects_bad_period(void **state)
{
    (void)state;
    ard_period p;
    assert_int_equal(ard_period_init(&p, 0), ARD_EINVAL);
    assert_int_equal(ard_period_init(&p, -5), ARD_EINVAL);
    assert_int_equal(ard_period_init(NULL, PERIOD), ARD_EINVAL);
}

static void test_period_wakes_on_absolute_grid(void **state)
{
    (void)state;
    ard_period p;
    int64_t before = ard_now_ns();
    assert_int_equal(ard_period_init(&p, PERIOD), 0);
    int64_t first = p.next_ns;
    assert_true(first >= before + PERIOD);
    assert_true(first <= ard_now_ns() + PERIOD);
    assert_int_equal(prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0), 1);
    uint64_t missed = 0;
    for (int k = 0; k < 20; k++) {
        int64_t deadline = p.next_ns;
        int m = ard_period_wait(&p);
        int64_t now = ard_now_ns();
        assert_true(m >= 0);
        missed += (uint64_t)m;
        /* Never early: it woke at or after the deadline it slept for. */
        assert_true(now >= deadline);
        /* The grid is absolute: work time does not shift it. */
        assert_int_equal((p.next_ns - first) % PERIOD, 0);
        assert_true(p.next_ns > deadline);
    }
    assert_int_equal(p.cycles, 20);
    assert_int_equal(p.overruns, missed);
    assert_int_equal(p.next_ns, first + (int64_t)(20 + p.overruns) * PERIOD);
}

static void test_period_counts_overruns(void **state)
{
    (void)state;
    ard_period p;
    assert_int_equal(ard_period_init(&p, PERIOD), 0);
    int64_t first = p.next_ns;
    /* Work that takes over ten periods: at least ten deadlines have passed. */
    sleep_ns(10 * PERIOD + PERIOD / 2);
    int m = ard_period_wait(&p);
    assert_true(m >= 10);
    assert_int_equal(p.overruns, (uint64_t)m);
    int64_t now = ard_now_ns();
    /* It resumed on the grid, on a deadline that is not in the past. */
    assert_int_equal((p.next_ns - first) % PERIOD, 0);
    assert_true(p.next_ns > now - PERIOD);
    assert_int_equal(p.cycles, 1);
}

static void test_clocks_are_monotonic_and_realtime(void **state)
{
    (void)state;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    int64_t m = ard_now_ns();
    clock_gettime(CLOCK_MONOTONIC, &b);
    assert_true(m >= (int64_t)a.tv_sec * 1000000000 + a.tv_nsec);
    assert_true(m <= (int64_t)b.tv_sec * 1000000000 + b.tv_nsec);
    clock_gettime(CLOCK_REALTIME, &a);
    int64_t r = ard_realtime_ns();
    clock_gettime(CLOCK_REALTIME, &b);
    assert_true(r >= (int64_t)a.tv_sec * 1000000000 + a.tv_nsec);
    assert_true(r <= (int64_t)b.tv_sec * 1000000000 + b.tv_nsec);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_period_init_rejects_bad_period),
        cmocka_unit_test(test_period_wakes_on_absolute_grid),
        cmocka_unit_test(test_period_counts_overruns),
        cmocka_unit_test(test_clocks_are_monotonic_and_realtime),
    };
    return cmocka_run_group_tests_name("period", tests, NULL, NULL);
}
