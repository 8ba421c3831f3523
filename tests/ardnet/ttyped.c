/*
 * ttyped.c - a test block whose packet has one field of each kind of element, for the tests
 * of typed bridges (byte order, start order): every field's value is derived from a counter,
 * so the reader checks each one and names the first that is wrong.
 *
 *   ttyped type                  print the packet's type descriptor
 *   ttyped pub [--rate HZ] [--count N]
 *   ttyped sub [--count N] [--first-ms F] [--idle-ms T] [--max-ms M] [--result FILE]
 *
 * Port "data" (wire it with --ard data=CONNECTION). pub sends a packet with a strictly
 * increasing counter (the realtime clock in microseconds, or the previous one plus 1), also
 * across restarts, stamped with its CLOCK_REALTIME send time (which the reader checks arrived
 * unchanged in the packet's info). sub receives until it has N good packets (--count; 0: until
 * no packet came for T ms), F ms at most for the first one, M ms (default 60000) in all, or
 * until the first damaged packet, and prints
 * "received=N bad=N older=N badseq=N badtime=N first=C last=C"; it exits 0 only if it got its
 * N packets (any, without --count) and every one was intact, newer than the one before (by
 * counter and by the connection's sequence number) and stamped right; else 1 (2: usage or
 * library error).
 */
#include "ardnet.h"

#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The descriptor's C struct (natural alignment: 3 padding bytes before l, 5 at the end). */
struct typed {
    uint64_t counter;
    int64_t real_ns;
    double d[3];
    float f[4];
    int32_t i[3];
    uint16_t h[5];
    uint8_t b[7];
    int64_t l[2];
    int16_t s;
    int8_t c;
};

static const char type_desc[] = "counter:u64 real_ns:i64 d:f64[3] f:f32[4] i:i32[3] h:u16[5] "
                                "b:u8[7] l:i64[2] s:i16 c:i8";

/* The fields other than counter and real_ns as a function of the counter. Every value is exact
 * in its type (no rounding that could differ between hosts) and none reads the same with its
 * bytes swapped. */
static void fill(struct typed *p, uint64_t n)
{
    memset(p, 0, sizeof *p);
    p->counter = n;
    for (int k = 0; k < 3; k++)
        p->d[k] = (double)(n % 1000003) * 0.25 - 1024.5 * (k + 1);
    for (int k = 0; k < 4; k++)
        p->f[k] = (float)(n % 65521) / 8.0f - 3.0f * (float)k - 0.5f;
    for (int k = 0; k < 3; k++)
        p->i[k] = -(int32_t)(n % 100000007) + 0x01020304 * k;
    for (int k = 0; k < 5; k++)
        p->h[k] = (uint16_t)(0x1234 + n * 7 + (uint64_t)k * 0x0101);
    for (int k = 0; k < 7; k++)
        p->b[k] = (uint8_t)(n + (uint64_t)k * 37);
    for (int k = 0; k < 2; k++)
        p->l[k] = -(int64_t)(n * (uint64_t)(k + 3)) - 0x0102030405060708LL;
    p->s = (int16_t)(-(int32_t)(n % 30000) - 1);
    p->c = (int8_t)(-(int)(n % 100) - 1);
}

/* Name of the first field of `got` that differs from the packet of its counter, or NULL. */
static const char *bad_field(const struct typed *got)
{
    struct typed want;
    fill(&want, got->counter);
    if (memcmp(got->d, want.d, sizeof want.d) != 0)
        return "d";
    if (memcmp(got->f, want.f, sizeof want.f) != 0)
        return "f";
    if (memcmp(got->i, want.i, sizeof want.i) != 0)
        return "i";
    if (memcmp(got->h, want.h, sizeof want.h) != 0)
        return "h";
    if (memcmp(got->b, want.b, sizeof want.b) != 0)
        return "b";
    if (memcmp(got->l, want.l, sizeof want.l) != 0)
        return "l";
    if (got->s != want.s)
        return "s";
    if (got->c != want.c)
        return "c";
    return NULL;
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

static int run_pub(ard_port *port, int argc, char **argv)
{
    long rate = opt_long(argc, argv, "--rate", 200);
    long count = opt_long(argc, argv, "--count", 0);
    ard_period per;
    if (rate <= 0 || ard_period_init(&per, 1000000000LL / rate) < 0) {
        fprintf(stderr, "ttyped: bad --rate\n");
        return 2;
    }
    uint64_t counter = 0;
    long sent = 0;
    struct typed p;
    while (!stop && (count == 0 || sent < count)) {
        uint64_t now_us = (uint64_t)(ard_realtime_ns() / 1000);
        counter = now_us > counter ? now_us : counter + 1;
        fill(&p, counter);
        p.real_ns = ard_realtime_ns();
        if (ard_send_stamped(port, &p, ard_now_ns(), p.real_ns) < 0) {
            fprintf(stderr, "ttyped: %s\n", ard_errdetail());
            return 2;
        }
        sent++;
        ard_period_wait(&per);
    }
    printf("sent=%ld last=%" PRIu64 "\n", sent, counter);
    return 0;
}

static int run_sub(ard_port *port, int argc, char **argv)
{
    long count = opt_long(argc, argv, "--count", 0);
    long first_ms = opt_long(argc, argv, "--first-ms", 20000);
    long idle_ms = opt_long(argc, argv, "--idle-ms", 2000);
    int64_t deadline = ard_now_ns() + opt_long(argc, argv, "--max-ms", 60000) * 1000000LL;
    const char *result = opt_str(argc, argv, "--result");
    uint64_t received = 0, bad = 0, older = 0, badseq = 0, badtime = 0, first = 0, last = 0;
    uint64_t last_seq = 0;
    struct typed p;
    while (!stop && (count == 0 || received < (uint64_t)count)) {
        int64_t wait = (received ? idle_ms : first_ms) * 1000000LL;
        int64_t left = deadline - ard_now_ns();
        if (left <= 0)
            break;
        int rc = ard_rec_timed(port, &p, wait < left ? wait : left);
        if (rc == ARD_ETIMEDOUT)
            break;
        if (rc == ARD_EINTR)
            continue;
        if (rc < 0) {
            fprintf(stderr, "ttyped: %s\n", ard_errdetail());
            return 2;
        }
        struct ard_info info = ard_port_info(port);
        const char *field = bad_field(&p);
        if (field) {
            fprintf(stderr, "ttyped: packet %" PRIu64 ": field '%s' is wrong\n", p.counter, field);
            bad++;
            break;
        }
        if (info.real_ns != p.real_ns && badtime++ == 0)
            fprintf(stderr,
                    "ttyped: packet %" PRIu64 ": stamped %" PRId64 ", sent at %" PRId64 "\n",
                    p.counter, info.real_ns, p.real_ns);
        if (received && p.counter <= last && older++ == 0)
            fprintf(stderr, "ttyped: packet %" PRIu64 " after %" PRIu64 "\n", p.counter, last);
        if (received && info.seq <= last_seq && badseq++ == 0)
            fprintf(stderr, "ttyped: sequence %" PRIu64 " after %" PRIu64 "\n", info.seq, last_seq);
        if (!received)
            first = p.counter;
        if (!received || p.counter > last)
            last = p.counter;
        last_seq = info.seq;
        received++;
    }
    char line[256];
    snprintf(line, sizeof line,
             "received=%" PRIu64 " bad=%" PRIu64 " older=%" PRIu64 " badseq=%" PRIu64
             " badtime=%" PRIu64 " first=%" PRIu64 " last=%" PRIu64 "\n",
             received, bad, older, badseq, badtime, first, last);
    fputs(line, stdout);
    if (result) {
        FILE *f = fopen(result, "w");
        if (f) {
            fputs(line, f);
            fclose(f);
        }
    }
    bool enough = count > 0 ? received >= (uint64_t)count : received > 0;
    return enough && !bad && !older && !badseq && !badtime ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "type") == 0) {
        puts(type_desc);
        return 0;
    }
    if (argc < 2 || (strcmp(argv[1], "pub") != 0 && strcmp(argv[1], "sub") != 0)) {
        fprintf(stderr, "usage: ttyped type|pub|sub [options] (see ttyped.c)\n");
        return 2;
    }
    bool pub = strcmp(argv[1], "pub") == 0;
    ard_port *port = ard_create("data", pub ? ARD_OUT : ARD_IN, sizeof(struct typed), type_desc);
    if (!port || ard_init(&argc, argv) < 0) {
        fprintf(stderr, "ttyped: %s\n", ard_errdetail());
        return 2;
    }
    signal(SIGTERM, on_term);
    signal(SIGINT, on_term);
    int rc = pub ? run_pub(port, argc, argv) : run_sub(port, argc, argv);
    ard_fini();
    return rc;
}
