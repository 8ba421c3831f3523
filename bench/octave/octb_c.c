/*
 * octb_c - the C side of bench/octave/octbench.m: ns per ard_send and per ard_tryrec (the
 * same packet again) of a "q:f64[7] qd:f64[7]" packet, median over BATCHES batches of LEN
 * calls. Prints "send NS" and "tryrec NS". Domain from $ARD_DOMAIN.
 *
 *   octb_c BATCHES LEN
 */
#include "ardnet.h"

#include <stdio.h>
#include <stdlib.h>

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 100;
    int nb = atoi(argv[1]), len = atoi(argv[2]);
    if (nb < 1 || nb > 1000 || len < 1)
        return 100;
    const char *type = "q:f64[7] qd:f64[7]";
    ard_port *w = ard_create_on("w", "octb.c", ARD_OUT, 112, type);
    ard_port *r = ard_create_on("r", "octb.c", ARD_IN, 112, type);
    if (!w || !r || ard_init(&argc, argv) < 0) {
        fprintf(stderr, "octb_c: %s\n", ard_errdetail());
        return 111;
    }
    double pkt[14] = {0}, *t = calloc((size_t)nb, sizeof *t);
    if (!t)
        return 111;
    for (int what = 0; what < 2; what++) {
        for (int b = 0; b < nb; b++) {
            int64_t t0 = ard_now_ns();
            for (int i = 0; i < len; i++) {
                int rc = what == 0 ? ard_send(w, pkt) : ard_tryrec(r, pkt);
                if (rc < 0)
                    return 111;
            }
            t[b] = (double)(ard_now_ns() - t0) / len;
        }
        qsort(t, (size_t)nb, sizeof *t, cmp);
        printf("%s %.1f\n", what == 0 ? "send" : "tryrec", t[nb / 2]);
    }
    ard_close(r);
    ard_close(w);
    return 0;
}
