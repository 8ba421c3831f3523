/*
 * ardnet_bench.c - benchmark blocks and baselines for the ardnet bridge (bench/ardnet/run.sh
 * runs them across two network namespaces). Modes:
 *
 *   ardnet_bench ping N          block: send 1 KiB on port "ping", wait for the same packet
 *                                back on port "pong"; N round trips; prints percentiles (us)
 *   ardnet_bench echo            block: copy every packet from port "ping" to port "pong"
 *   ardnet_bench udp-echo PORT   raw UDP: send every datagram back to its sender
 *   ardnet_bench udp-ping HOST PORT N   raw UDP 1 KiB ping-pong, N round trips
 *   ardnet_bench futex N         raw futex hand-off between two processes (shared memory),
 *                                N round trips; prints the one-way hand-off (round trip / 2)
 *   ardnet_bench flood SECONDS   block: send 1 KiB packets on port "data" as fast as possible
 *   ardnet_bench pubmany N HZ SECONDS   block: N ports "c0".."c<N-1>" (1 KiB), each at HZ
 *
 * Output lines are "name: median=.. p90=.. p99=.. min=.. (us), n=.."; every figure is measured
 * in the same run as its baseline.
 */
#include "ardnet.h"

#include <arpa/inet.h>
#include <linux/futex.h>
#include <netdb.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define PKT 1024
#define WARMUP 200

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static void report(const char *name, int64_t *ns, size_t n, double scale)
{
    if (n == 0) {
        printf("%s: no samples\n", name);
        return;
    }
    qsort(ns, n, sizeof *ns, cmp_i64);
    printf("%s: median=%.1f p90=%.1f p99=%.1f min=%.1f (us), n=%zu\n", name,
           ns[n / 2] * scale / 1e3, ns[n * 9 / 10] * scale / 1e3, ns[n * 99 / 100] * scale / 1e3,
           ns[0] * scale / 1e3, n);
    fflush(stdout);
}

static int init_ports(int *argc, char **argv)
{
    if (ard_init(argc, argv) < 0) {
        fprintf(stderr, "ardnet_bench: %s\n", ard_errdetail());
        return -1;
    }
    return 0;
}

static int do_ping(int argc, char **argv, long n)
{
    ard_port *out = ard_create("ping", ARD_OUT, PKT, NULL);
    ard_port *in = ard_create("pong", ARD_IN, PKT, NULL);
    if (!out || !in || init_ports(&argc, argv) < 0)
        return 2;
    uint8_t tx[PKT] = {0}, rx[PKT];
    int64_t *s = calloc((size_t)n, sizeof *s);
    size_t got = 0;
    long lost = 0;
    for (long i = 0; i < n + WARMUP; i++) {
        uint64_t id = (uint64_t)i + 1;
        memcpy(tx, &id, sizeof id);
        int64_t t0 = ard_now_ns();
        if (ard_send(out, tx) < 0)
            return 2;
        for (;;) {
            int rc = ard_rec_timed(in, rx, 1000000000LL);
            if (rc == ARD_ETIMEDOUT) {
                lost++;
                break;
            }
            uint64_t back;
            memcpy(&back, rx, sizeof back);
            if (rc == 0 && back == id) {
                if (i >= WARMUP)
                    s[got++] = ard_now_ns() - t0;
                break;
            }
        }
    }
    report("bridged round trip (block->ardnet->UDP->ardnet->block->...->block)", s, got, 1);
    if (lost)
        printf("  (%ld round trips lost or timed out)\n", lost);
    return 0;
}

static volatile sig_atomic_t stop;
static void on_term(int sig)
{
    (void)sig;
    stop = 1;
}

static int do_echo(int argc, char **argv)
{
    ard_port *in = ard_create("ping", ARD_IN, PKT, NULL);
    ard_port *out = ard_create("pong", ARD_OUT, PKT, NULL);
    if (!out || !in || init_ports(&argc, argv) < 0)
        return 2;
    uint8_t buf[PKT];
    signal(SIGTERM, on_term);
    while (!stop) {
        int rc = ard_rec_timed(in, buf, 200000000LL);
        if (rc == 0 && ard_send(out, buf) < 0)
            return 2;
    }
    return 0;
}

static int do_udp_echo(int port)
{
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) < 0) {
        perror("udp-echo");
        return 2;
    }
    uint8_t buf[PKT];
    for (;;) {
        struct sockaddr_storage src;
        socklen_t sl = sizeof src;
        ssize_t n = recvfrom(fd, buf, sizeof buf, 0, (struct sockaddr *)&src, &sl);
        if (n > 0)
            sendto(fd, buf, (size_t)n, 0, (struct sockaddr *)&src, sl);
    }
}

static int do_udp_ping(const char *host, const char *port, long n)
{
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_DGRAM}, *res;
    if (getaddrinfo(host, port, &hints, &res) != 0)
        return 2;
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0 || connect(fd, res->ai_addr, res->ai_addrlen) < 0)
        return 2;
    struct timeval tv = {1, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    uint8_t tx[PKT] = {0}, rx[PKT];
    int64_t *s = calloc((size_t)n, sizeof *s);
    size_t got = 0;
    for (long i = 0; i < n + WARMUP; i++) {
        uint64_t id = (uint64_t)i + 1, back = 0;
        memcpy(tx, &id, sizeof id);
        int64_t t0 = ard_now_ns();
        send(fd, tx, sizeof tx, 0);
        while (recv(fd, rx, sizeof rx, 0) > 0 && (memcpy(&back, rx, 8), back != id))
            ;
        if (back == id && i >= WARMUP)
            s[got++] = ard_now_ns() - t0;
    }
    report("raw UDP round trip (1 KiB)", s, got, 1);
    return 0;
}

static long futex(_Atomic uint32_t *w, int op, uint32_t v)
{
    return syscall(SYS_futex, w, op, v, NULL, NULL, 0);
}

/* Wait until *w == want, sleeping in the kernel like a blocked ard_rec. */
static void futex_wait_for(_Atomic uint32_t *w, uint32_t want)
{
    uint32_t v;
    while ((v = atomic_load(w)) != want)
        futex(w, FUTEX_WAIT, v);
}

static int do_futex(long n)
{
    _Atomic uint32_t *w =
        mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (w == MAP_FAILED)
        return 2;
    atomic_store(w, 0);
    pid_t pid = fork();
    if (pid == 0) {
        for (uint32_t i = 0;; i += 2) {
            futex_wait_for(w, i + 1);
            atomic_store(w, i + 2);
            futex(w, FUTEX_WAKE, 1);
            if (i + 2 >= (uint32_t)(2 * (n + WARMUP)))
                _exit(0);
        }
    }
    int64_t *s = calloc((size_t)n, sizeof *s);
    size_t got = 0;
    for (uint32_t i = 0; i < (uint32_t)(n + WARMUP); i++) {
        int64_t t0 = ard_now_ns();
        atomic_store(w, 2 * i + 1);
        futex(w, FUTEX_WAKE, 1);
        futex_wait_for(w, 2 * i + 2);
        if (i >= WARMUP)
            s[got++] = ard_now_ns() - t0;
    }
    waitpid(pid, NULL, 0);
    report("raw futex hand-off (one way = round trip / 2)", s, got, 0.5);
    return 0;
}

static int do_flood(int argc, char **argv, double seconds)
{
    ard_port *out = ard_create("data", ARD_OUT, PKT, NULL);
    if (!out || init_ports(&argc, argv) < 0)
        return 2;
    uint8_t buf[PKT] = {0};
    int64_t end = ard_now_ns() + (int64_t)(seconds * 1e9);
    uint64_t n = 0;
    while (ard_now_ns() < end) {
        memcpy(buf, &n, sizeof n);
        if (ard_send(out, buf) < 0)
            return 2;
        n++;
    }
    printf("flood: %llu packets in %.1f s (%.0f/s offered)\n", (unsigned long long)n, seconds,
           n / seconds);
    return 0;
}

static int do_pubmany(int argc, char **argv, int nports, long hz, double seconds)
{
    ard_port **p = calloc((size_t)nports, sizeof *p);
    for (int i = 0; i < nports; i++) {
        char name[16];
        snprintf(name, sizeof name, "c%d", i);
        if (!(p[i] = ard_create(name, ARD_OUT, PKT, NULL)))
            return 2;
    }
    if (init_ports(&argc, argv) < 0)
        return 2;
    uint8_t buf[PKT] = {0};
    ard_period per;
    if (ard_period_init(&per, 1000000000LL / hz) < 0)
        return 2;
    signal(SIGTERM, on_term);
    for (long k = 0; !stop && k < (long)(seconds * hz); k++) {
        for (int i = 0; i < nports; i++)
            if (ard_send(p[i], buf) < 0)
                return 2;
        ard_period_wait(&per);
    }
    printf("pubmany: %d connections at %ld Hz, %llu overruns\n", nports, hz,
           (unsigned long long)per.overruns);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: see the comment at the top of ardnet_bench.c\n");
        return 2;
    }
    const char *m = argv[1];
    if (!strcmp(m, "ping") && argc >= 3)
        return do_ping(argc, argv, atol(argv[2]));
    if (!strcmp(m, "echo"))
        return do_echo(argc, argv);
    if (!strcmp(m, "udp-echo") && argc >= 3)
        return do_udp_echo(atoi(argv[2]));
    if (!strcmp(m, "udp-ping") && argc >= 5)
        return do_udp_ping(argv[2], argv[3], atol(argv[4]));
    if (!strcmp(m, "futex") && argc >= 3)
        return do_futex(atol(argv[2]));
    if (!strcmp(m, "flood") && argc >= 3)
        return do_flood(argc, argv, atof(argv[2]));
    if (!strcmp(m, "pubmany") && argc >= 5)
        return do_pubmany(argc, argv, atoi(argv[2]), atol(argv[3]), atof(argv[4]));
    fprintf(stderr, "ardnet_bench: unknown mode or missing arguments\n");
    return 2;
}
