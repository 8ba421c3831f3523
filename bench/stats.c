/*
 * stats.c - order statistics of a row's samples.
 */
#include "bench.h"

#include <stdlib.h>
#include <string.h>

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Nearest rank: the smallest sample with at least p of all samples at or below it. */
static int64_t rank(const int64_t *v, size_t n, unsigned permille)
{
    size_t k = (n * permille + 999) / 1000; /* ceil(n * p) */
    if (k < 1)
        k = 1;
    if (k > n)
        k = n;
    return v[k - 1];
}

void bench_stats_compute(int64_t *v, size_t n, struct bench_stats *st)
{
    memset(st, 0, sizeof *st);
    if (n == 0)
        return;
    qsort(v, n, sizeof *v, cmp_i64);
    st->n = n;
    st->min = v[0];
    st->median = rank(v, n, 500);
    st->p99 = rank(v, n, 990);
    st->p999 = rank(v, n, 999);
    st->max = v[n - 1];
}
