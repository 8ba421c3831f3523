/* twriter.c - a writer of known rate for the ard tests.
 *   twriter CONN TYPE RATE SECONDS        send at RATE Hz (ard_period; above 20 kHz by spinning)
 *                                        for SECONDS, then print
 *                                        "achieved HZ" (packets-1 over the first-to-last
 *                                        send time) and stay attached until killed; with
 *                                        $TWRITER_STAMPS set, first write the send time of
 *                                        every packet to that file, one a line, in seq order
 *   twriter CONN TYPE stamped PERIOD_S N  send N packets at once, stamped PERIOD_S apart and
 *                                        ending now (a slow writer's history), then stay
 * TYPE "opaque:N" makes an opaque connection of N bytes. */
#include "ardnet.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: twriter CONN TYPE RATE SECONDS | CONN TYPE stamped PERIOD N\n");
        return 100;
    }
    size_t size;
    const char *type = argv[2];
    if (strncmp(type, "opaque:", 7) == 0) {
        size = (size_t)atol(type + 7);
        type = NULL;
    } else if (ard_type_parse(type, NULL, 0, NULL, &size) < 0) {
        fprintf(stderr, "twriter: %s\n", ard_errdetail());
        return 100;
    }
    ard_port *p = ard_create_on("out", argv[1], ARD_OUT, size, type);
    if (!p || ard_init(&argc, argv) < 0) {
        fprintf(stderr, "twriter: %s\n", ard_errdetail());
        return 111;
    }
    unsigned char *pkt = calloc(1, size);
    if (!pkt)
        return 111;
    if (strcmp(argv[3], "stamped") == 0) {
        double period = atof(argv[4]);
        int n = atoi(argv[5]);
        int64_t now = ard_now_ns(), rnow = ard_realtime_ns();
        for (int i = 0; i < n; i++) {
            int64_t back = (int64_t)((n - 1 - i) * period * 1e9);
            if (ard_send_stamped(p, pkt, now - back, rnow - back) < 0)
                return 111;
        }
        printf("sent %d\n", n);
        fflush(stdout);
        pause();
        return 0;
    }
    double rate = atof(argv[3]), secs = atof(argv[4]);
    ard_period per;
    if (ard_period_init(&per, (int64_t)(1e9 / rate)) < 0)
        return 111;
    int64_t first = 0, last = 0;
    uint64_t n = 0;
    const char *stamps_file = getenv("TWRITER_STAMPS");
    int64_t *stamps = NULL;
    size_t cap = 0;
    int64_t end = ard_now_ns() + (int64_t)(secs * 1e9);
    while (ard_now_ns() < end) {
        if (ard_send(p, pkt) < 0)
            return 111;
        last = ard_port_info(p).mono_ns;
        if (stamps_file) {
            if (n == cap) {
                cap = cap ? 2 * cap : 65536;
                if (!(stamps = realloc(stamps, cap * sizeof *stamps)))
                    return 111;
            }
            stamps[n] = last;
        }
        if (n++ == 0)
            first = last;
        if (rate > 20000) { /* faster than a sleep can pace: spin to the next deadline */
            int64_t next = first + (int64_t)((double)n * 1e9 / rate);
            while (ard_now_ns() < next)
                ;
        } else
            ard_period_wait(&per);
    }
    if (stamps_file) {
        FILE *f = fopen(stamps_file, "w");
        if (!f)
            return 111;
        for (uint64_t i = 0; i < n; i++)
            fprintf(f, "%lld\n", (long long)stamps[i]);
        if (fclose(f) != 0)
            return 111;
    }
    printf("achieved %.6f\n", n > 1 ? (double)(n - 1) / (double)(last - first) * 1e9 : 0.0);
    fflush(stdout);
    pause();
    return 0;
}
