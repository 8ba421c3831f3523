/*
 * tblock.c - test blocks for ardnet: a writer that fills a verifiable pattern and a reader
 * that checks it.
 *
 *   tblock pub [--size S] [--rate HZ] [--count N] [--burst B] [--pause-ms P] [--counter-from C]
 *              [--plain] [--opaque] [--ports K]
 *   (--plain: the counter is C+1, C+2, ... whatever the clock)
 *   tblock sub [--size S] [--idle-ms T] [--first-ms F] [--duration-ms D] [--result FILE]
 *              [--multiple-of M] [--opaque]
 *   (--multiple-of: count packets whose counter is not a multiple of M as bad; --opaque: the
 *   connection has no type descriptor, the same bytes)
 *
 * Port "data" (wire it with --ard data=CONNECTION); pub --ports K also writes ports data1 ..
 * data{K-1}, each packet to all of them at once (writers on a common tick). Packet type "u64 u64
 * i64 u32[K]": counter, writer id, writer's CLOCK_REALTIME send time (also given to
 * ard_send_stamped, so the reader checks that the packet's real_ns arrived unchanged, across
 * bridges too), then K words derived from counter and writer id. The counter is strictly
 * increasing, also across writer restarts (it starts from the realtime clock in microseconds, or
 * after C if that is larger: a writer whose clock was set back continues a run), so a reader can
 * tell an older packet from a newer one. sub prints "received=N bad=N older=N dup=N first=C last=C"
 * and exits 1 if any packet was damaged or older than one it already had.
 */
#include "ardnet.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <signal.h>
#include <stdbool.h>
#include <unistd.h>

struct head {
    uint64_t counter;
    uint64_t writer;
    int64_t real_ns;
};

static uint32_t word(uint64_t counter, uint64_t writer, size_t i)
{
    uint64_t x = counter * 0x9E3779B97F4A7C15ull ^ writer ^ (i * 0xBF58476D1CE4E5B9ull);
    x ^= x >> 31;
    return (uint32_t)(x ^ (x >> 17));
}

static void fill(uint8_t *p, size_t size, uint64_t counter, uint64_t writer)
{
    struct head h = {counter, writer, ard_realtime_ns()};
    memcpy(p, &h, sizeof h);
    for (size_t i = 0; (i + 1) * 4 + sizeof h <= size; i++) {
        uint32_t w = word(counter, writer, i);
        memcpy(p + sizeof h + 4 * i, &w, 4);
    }
}

static int check(const uint8_t *p, size_t size, struct head *h)
{
    memcpy(h, p, sizeof *h);
    for (size_t i = 0; (i + 1) * 4 + sizeof *h <= size; i++) {
        uint32_t w;
        memcpy(&w, p + sizeof *h + 4 * i, 4);
        if (w != word(h->counter, h->writer, i))
            return -1;
    }
    return 0;
}

static volatile sig_atomic_t stop;
static void on_term(int sig)
{
    (void)sig;
    stop = 1;
}

static long opt_long(int argc, char **argv, const char *name, long def)
{
    for (int i = 2; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return strtol(argv[i + 1], NULL, 10);
    return def;
}

static const char *opt_str(int argc, char **argv, const char *name)
{
    for (int i = 2; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return argv[i + 1];
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2 || (strcmp(argv[1], "pub") != 0 && strcmp(argv[1], "sub") != 0)) {
        fprintf(stderr, "usage: tblock pub|sub [options] (see tblock.c)\n");
        return 2;
    }
    bool pub = strcmp(argv[1], "pub") == 0;
    long size = opt_long(argc, argv, "--size", 1024);
    if (size < 28 || (size - 24) % 4 != 0) {
        fprintf(stderr, "tblock: --size must be 24 + 4k, k >= 1\n");
        return 2;
    }
    char type[64];
    snprintf(type, sizeof type, "u64 u64 i64 u32[%ld]", (size - 24) / 4);
    bool opaque = false; /* --opaque: the connection has no type, only a size */
    for (int i = 2; i < argc; i++)
        opaque |= strcmp(argv[i], "--opaque") == 0;
    long nports = pub ? opt_long(argc, argv, "--ports", 1) : 1;
    if (nports < 1 || nports > 1024) {
        fprintf(stderr, "tblock: --ports must be 1..1024\n");
        return 2;
    }
    ard_port **ports = calloc((size_t)nports, sizeof *ports);
    if (!ports)
        return 2;
    for (long k = 0; k < nports; k++) {
        char pname[16] = "data";
        if (k > 0)
            snprintf(pname, sizeof pname, "data%ld", k);
        ports[k] = ard_create(pname, pub ? ARD_OUT : ARD_IN, (size_t)size, opaque ? NULL : type);
        if (!ports[k])
            break;
    }
    ard_port *port = ports[0];
    if (!ports[nports - 1] || ard_init(&argc, argv) < 0) {
        fprintf(stderr, "tblock: %s\n", ard_errdetail());
        return 2;
    }
    signal(SIGTERM, on_term);
    signal(SIGINT, on_term);
    uint8_t *buf = calloc(1, (size_t)size);
    if (pub) {
        long rate = opt_long(argc, argv, "--rate", 1000);
        long count = opt_long(argc, argv, "--count", 0);
        long burst = opt_long(argc, argv, "--burst", 1);
        long pause_ms = opt_long(argc, argv, "--pause-ms", 0);
        uint64_t writer = (uint64_t)getpid() << 32 ^ (uint64_t)ard_realtime_ns();
        uint64_t counter = (uint64_t)(ard_realtime_ns() / 1000);
        const char *from = opt_str(argc, argv, "--counter-from");
        if (from && strtoull(from, NULL, 10) > counter)
            counter = strtoull(from, NULL, 10);
        ard_period per;
        if (rate > 0 && ard_period_init(&per, 1000000000LL / rate) < 0)
            return 2;
        long sent = 0;
        bool plain = false;
        for (int i = 2; i < argc; i++)
            plain |= strcmp(argv[i], "--plain") == 0;
        if (plain)
            counter = from ? strtoull(from, NULL, 10) : 0;
        while (!stop && (count == 0 || sent < count)) {
            for (long b = 0; b < burst && (count == 0 || sent < count); b++) {
                uint64_t now_us = (uint64_t)(ard_realtime_ns() / 1000);
                counter = now_us > counter && !plain ? now_us : counter + 1;
                fill(buf, (size_t)size, counter, writer);
                struct head hd;
                memcpy(&hd, buf, sizeof hd);
                for (long k = 0; k < nports; k++)
                    if (ard_send_stamped(ports[k], buf, ard_now_ns(), hd.real_ns) < 0) {
                        free(buf);
                        free(ports);
                        return 2;
                    }
                sent++;
            }
            if (pause_ms > 0) {
                struct timespec ts = {pause_ms / 1000, (pause_ms % 1000) * 1000000};
                nanosleep(&ts, NULL);
            } else if (rate > 0) {
                ard_period_wait(&per);
            }
        }
        printf("sent=%ld last=%" PRIu64 "\n", sent, counter);
        ard_fini();
        free(buf);
        free(ports);
        return 0;
    }
    long idle_ms = opt_long(argc, argv, "--idle-ms", 2000);
    long first_ms = opt_long(argc, argv, "--first-ms", 20000);
    long duration_ms = opt_long(argc, argv, "--duration-ms", 0);
    const char *result = opt_str(argc, argv, "--result");
    long multiple = opt_long(argc, argv, "--multiple-of", 1);
    uint64_t received = 0, bad = 0, older = 0, dup = 0, first = 0, last = 0, badtime = 0;
    int64_t t0 = ard_now_ns();
    while (!stop) {
        int64_t wait = (received ? idle_ms : first_ms) * 1000000LL;
        if (duration_ms > 0) {
            int64_t left = t0 + duration_ms * 1000000LL - ard_now_ns();
            if (left <= 0)
                break;
            if (left < wait)
                wait = left;
        }
        int rc = ard_rec_timed(port, buf, wait);
        if (rc == ARD_ETIMEDOUT) {
            if (duration_ms > 0)
                continue;
            break;
        }
        if (rc == ARD_EINTR)
            continue;
        if (rc < 0) {
            fprintf(stderr, "tblock: %s\n", ard_strerror(rc));
            return 2;
        }
        struct head h;
        if (check(buf, (size_t)size, &h) < 0 || h.counter % (uint64_t)multiple != 0) {
            bad++;
            continue;
        }
        if (ard_port_info(port).real_ns != h.real_ns)
            badtime++;
        if (received && h.counter < last)
            older++;
        else if (received && h.counter == last)
            dup++;
        if (!received)
            first = h.counter;
        if (!received || h.counter > last)
            last = h.counter;
        received++;
    }
    char line[256];
    snprintf(line, sizeof line,
             "received=%" PRIu64 " bad=%" PRIu64 " older=%" PRIu64 " dup=%" PRIu64 " first=%" PRIu64
             " last=%" PRIu64 " badtime=%" PRIu64 "\n",
             received, bad, older, dup, first, last, badtime);
    fputs(line, stdout);
    if (result) {
        FILE *f = fopen(result, "w");
        if (f) {
            fputs(line, f);
            fclose(f);
        }
    }
    ard_fini();
    free(buf);
    free(ports);
    return bad || older || dup || badtime ? 1 : 0;
}
