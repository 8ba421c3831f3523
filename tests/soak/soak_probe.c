/*
 * soak_probe.c - the soak run's writer and invariant-checking reader (scripts/soak.sh).
 *
 *   soak_probe pub --ard data=CONN [--rate HZ]
 *   soak_probe sub --ard data=CONN [--gap-ms MS] [--name LABEL]
 *
 * pub draws a random 64-bit epoch at start and sends, at HZ (default 200), packets of type
 * SOAK_TYPE whose every value follows from (epoch, seq): values v[i], the type's hash, and a
 * checksum over all of it. sub polls the connection every millisecond and counts, from its
 * start, what must never happen:
 *   older     a packet older than one it had from the same writer epoch, or a packet of an
 *             epoch it had already left (equal sequence numbers, a packet sent again by a
 *             restarted bridge, are counted as `repeat`, not as older)
 *   torn      a checksum that does not match the packet (a half-written or damaged packet)
 *   wrongtype a packet whose type hash is not SOAK_TYPE's
 *   badvalue  a packet with a valid checksum whose values are not what the writer sends
 * Every second it prints one line of cumulative counters; a pause of new packets longer than
 * --gap-ms (default 100) is printed when it ends as
 *   gap LABEL from=REALTIME_NS to=REALTIME_NS ms=X
 * (times of the last packet before and the first after, as this reader saw them).
 * Runs until SIGTERM/SIGINT; then prints the counters once more and exits 0.
 */
#include "ardnet.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SOAK_TYPE "magic:u64 epoch:u64 seq:u64 t_ns:i64 v:f64[4] check:u64"

struct probe {
    uint64_t magic, epoch, seq;
    int64_t t_ns;
    double v[4];
    uint64_t check;
};

static volatile sig_atomic_t stop;
static void on_term(int sig)
{
    (void)sig;
    stop = 1;
}

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

static double value(uint64_t epoch, uint64_t seq, int i)
{
    return (double)(mix(epoch ^ (seq * 4 + (uint64_t)i)) >> 11) / 9007199254740992.0;
}

static uint64_t checksum(const struct probe *p)
{
    uint64_t h = mix(p->magic) ^ mix(p->epoch + 1) ^ mix(p->seq + 2) ^ mix((uint64_t)p->t_ns + 3);
    for (int i = 0; i < 4; i++) {
        uint64_t b;
        memcpy(&b, &p->v[i], sizeof b);
        h = mix(h ^ b);
    }
    return h;
}

static const char *opt(int argc, char **argv, const char *name, const char *def)
{
    for (int i = 2; i + 1 < argc; i++)
        if (!strcmp(argv[i], name))
            return argv[i + 1];
    return def;
}

static void sleep_ns(int64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000LL), (long)(ns % 1000000000LL)};
    nanosleep(&ts, NULL);
}

static int pub(ard_port *out, double hz)
{
    uint64_t epoch = 0;
    FILE *r = fopen("/dev/urandom", "rb");
    if (!r || fread(&epoch, sizeof epoch, 1, r) != 1) {
        fprintf(stderr, "soak_probe: cannot read /dev/urandom\n");
        return 111;
    }
    fclose(r);
    uint64_t magic = ard_type_hash(SOAK_TYPE);
    int64_t period = (int64_t)(1e9 / hz), next = ard_now_ns();
    printf("soak_probe pub: epoch %016" PRIx64 " at %.0f Hz\n", epoch, hz);
    fflush(stdout);
    for (uint64_t seq = 1; !stop; seq++) {
        struct probe p = {magic, epoch, seq, ard_realtime_ns(), {0}, 0};
        for (int i = 0; i < 4; i++)
            p.v[i] = value(epoch, seq, i);
        p.check = checksum(&p);
        if (ard_send(out, &p) != 0) {
            fprintf(stderr, "soak_probe: send: %s\n", ard_errdetail());
            return 111;
        }
        next += period;
        int64_t now = ard_now_ns();
        if (next > now)
            sleep_ns(next - now);
        else
            next = now; /* late (stopped, or a loaded host): no burst to catch up */
    }
    return 0;
}

#define NOLD 64 /* epochs left behind, remembered */

static int sub(ard_port *in, int64_t gap_ns, const char *label)
{
    uint64_t magic = ard_type_hash(SOAK_TYPE);
    uint64_t received = 0, older = 0, torn = 0, wrongtype = 0, badvalue = 0, repeat = 0, epochs = 0,
             gaps = 0;
    uint64_t cur = 0, last = 0, old[NOLD] = {0};
    int nold = 0;
    bool have = false;
    int64_t last_new_real = 0, last_new_mono = 0, next_print = ard_now_ns() + 1000000000LL;
    double max_gap_ms = 0;
    struct probe p;
    while (!stop) {
        int rc = ard_tryrec(in, &p);
        int64_t mono = ard_now_ns();
        if (rc == 1) {
            int64_t real = ard_realtime_ns();
            received++;
            if (last_new_mono && mono - last_new_mono > gap_ns) {
                double ms = (double)(mono - last_new_mono) / 1e6;
                gaps++;
                if (ms > max_gap_ms)
                    max_gap_ms = ms;
                printf("gap %s from=%" PRId64 " to=%" PRId64 " ms=%.1f\n", label, last_new_real,
                       real, ms);
            }
            last_new_mono = mono;
            last_new_real = real;
            if (p.magic != magic) {
                wrongtype++;
            } else if (checksum(&p) != p.check) {
                torn++;
            } else {
                bool ok = true;
                for (int i = 0; i < 4; i++)
                    ok &= p.v[i] == value(p.epoch, p.seq, i);
                if (!ok) {
                    badvalue++;
                } else if (have && p.epoch == cur) {
                    if (p.seq < last)
                        older++;
                    else if (p.seq == last)
                        repeat++;
                    else
                        last = p.seq;
                } else {
                    bool left = false;
                    for (int i = 0; i < nold; i++)
                        left |= old[i] == p.epoch;
                    if (left) {
                        older++; /* an epoch this reader had already left */
                    } else {
                        if (have)
                            old[nold < NOLD ? nold++ : (int)(epochs % NOLD)] = cur;
                        cur = p.epoch;
                        last = p.seq;
                        have = true;
                        epochs++;
                    }
                }
            }
        } else if (rc < 0 && rc != ARD_ENODATA) {
            fprintf(stderr, "soak_probe: %s: %s\n", label, ard_errdetail());
            return 111;
        }
        if (mono >= next_print || stop) {
            printf("probe %s received=%" PRIu64 " older=%" PRIu64 " torn=%" PRIu64
                   " wrongtype=%" PRIu64 " badvalue=%" PRIu64 " repeat=%" PRIu64 " epochs=%" PRIu64
                   " gaps=%" PRIu64 " max_gap_ms=%.1f\n",
                   label, received, older, torn, wrongtype, badvalue, repeat, epochs, gaps,
                   max_gap_ms);
            fflush(stdout);
            next_print = mono + 1000000000LL;
        }
        if (rc != 1)
            sleep_ns(1000000);
    }
    printf("probe %s received=%" PRIu64 " older=%" PRIu64 " torn=%" PRIu64 " wrongtype=%" PRIu64
           " badvalue=%" PRIu64 " repeat=%" PRIu64 " epochs=%" PRIu64 " gaps=%" PRIu64
           " max_gap_ms=%.1f\n",
           label, received, older, torn, wrongtype, badvalue, repeat, epochs, gaps, max_gap_ms);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2 || (strcmp(argv[1], "pub") && strcmp(argv[1], "sub"))) {
        fprintf(stderr, "usage: soak_probe pub|sub --ard data=CONN [--rate HZ] [--gap-ms MS] "
                        "[--name LABEL]\n");
        return 100;
    }
    bool is_pub = !strcmp(argv[1], "pub");
    ard_port *port = ard_create("data", is_pub ? ARD_OUT : ARD_IN, sizeof(struct probe), SOAK_TYPE);
    if (!port || ard_init(&argc, argv) != 0) {
        fprintf(stderr, "soak_probe: %s\n", ard_errdetail());
        return 111;
    }
    signal(SIGTERM, on_term);
    signal(SIGINT, on_term);
    setvbuf(stdout, NULL, _IOLBF, 0);
    double hz = atof(opt(argc, argv, "--rate", "200"));
    double gap_ms = atof(opt(argc, argv, "--gap-ms", "100"));
    if (hz <= 0 || hz > 100000 || gap_ms <= 0) {
        fprintf(stderr, "soak_probe: --rate 0..100000, --gap-ms > 0\n");
        return 100;
    }
    int rc = is_pub ? pub(port, hz)
                    : sub(port, (int64_t)(gap_ms * 1e6), opt(argc, argv, "--name", "probe"));
    ard_fini();
    return rc;
}
