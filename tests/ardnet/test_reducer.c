/*
 * test_reducer.c - --every and --max-rate, alone and together, on a simulated clock: the
 * packets forwarded are exactly those docs/ardnet.md describes (every N-th packet taken in is
 * a candidate; at most one candidate per period, always the newest; a held candidate goes out
 * at its slot, also after the input stops).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "reducer.h"

#define MS 1000000LL
#define MAXF 1000

struct fwd {
    int packet; /* 1-based index of the packet taken in */
    int64_t at; /* forwarded at */
};

/* Packets 1..n arrive at k * gap; the route wakes up at every packet and at every held
 * candidate's slot (its receive timeout), as route.c does. Returns the number forwarded. */
static int run(uint64_t every, double max_rate, int n, int64_t gap, struct fwd *out)
{
    struct ardn_reducer red;
    ardn_reducer_init(&red, every, max_rate);
    int nf = 0, held = 0, k = 1;
    int64_t now = 0;
    for (;;) {
        int64_t next_packet = k <= n ? k * gap : INT64_MAX;
        int64_t wake = next_packet;
        if (red.pending && red.next_ns < wake)
            wake = red.next_ns;
        if (wake == INT64_MAX)
            break;
        now = wake;
        if (now == next_packet) {
            bool replaced;
            enum ardn_red_action a = ardn_reducer_offer(&red, now, &replaced);
            if (replaced)
                assert_true(held != 0);
            if (a == ARDN_RED_HOLD)
                held = k;
            if (a == ARDN_RED_SEND) {
                out[nf++] = (struct fwd){k, now};
                ardn_reducer_sent(&red, now);
                held = 0;
            }
            k++;
        }
        if (ardn_reducer_due(&red, now)) {
            out[nf++] = (struct fwd){held, now};
            ardn_reducer_sent(&red, now);
            held = 0;
        }
        assert_true(nf < MAXF);
    }
    return nf;
}

static void test_every_alone_forwards_every_nth(void **state)
{
    (void)state;
    static struct fwd f[MAXF];
    int nf = run(4, 0, 100, MS, f);
    assert_int_equal(nf, 25);
    for (int i = 0; i < nf; i++)
        assert_true(f[i].packet == 4 * (i + 1) && f[i].at == f[i].packet * MS);
}

static void test_max_rate_alone_forwards_the_newest_on_a_grid(void **state)
{
    (void)state;
    static struct fwd f[MAXF];
    /* 1 kHz for 100 ms, at most 100 Hz: packet 1 at once, then at 11, 21, ... 91 ms the
     * newest (the one arriving at the slot), and the last one (100) held until its slot */
    int nf = run(0, 100, 100, MS, f);
    assert_int_equal(nf, 11);
    for (int i = 0; i < nf - 1; i++)
        assert_true(f[i].at == (1 + 10 * i) * MS && f[i].packet == 1 + 10 * i);
    assert_true(f[10].packet == 100 && f[10].at == 101 * MS);
}

/* 1 kHz for 200 ms, --every 3 --max-rate 100: the candidates are packets 3, 6, 9, ...;
 * packet 3 goes at once (3 ms), then one per 10 ms slot (13, 23, ... ms), each the newest
 * candidate by then, and the last candidate (198) at the slot after the input stopped. A
 * packet that is not a candidate is never forwarded, held or not. */
static void test_every_and_max_rate_together(void **state)
{
    (void)state;
    static struct fwd f[MAXF];
    int nf = run(3, 100, 200, MS, f);
    assert_int_equal(nf, 21);
    for (int j = 0; j < nf; j++) {
        int64_t t = 3 + 10 * j; /* ms */
        int newest = 3 * (int)((t < 200 ? t : 200) / 3);
        if (f[j].at != t * MS || f[j].packet != newest)
            fail_msg("forward %d: packet %d at %lld ns, expected packet %d at %lld ms", j,
                     f[j].packet, (long long)f[j].at, newest, (long long)t);
    }
    assert_int_equal(f[nf - 1].packet, 198);
}

/* Slower than the rate: every candidate goes out as it comes, nothing is held. */
static void test_candidates_slower_than_the_rate_are_not_delayed(void **state)
{
    (void)state;
    static struct fwd f[MAXF];
    int nf = run(2, 100, 40, 7 * MS, f); /* candidates every 14 ms, slots every 10 ms */
    assert_int_equal(nf, 20);
    for (int i = 0; i < nf; i++)
        assert_true(f[i].packet == 2 * (i + 1) && f[i].at == f[i].packet * 7 * MS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_alone_forwards_every_nth),
        cmocka_unit_test(test_max_rate_alone_forwards_the_newest_on_a_grid),
        cmocka_unit_test(test_every_and_max_rate_together),
        cmocka_unit_test(test_candidates_slower_than_the_rate_are_not_delayed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
