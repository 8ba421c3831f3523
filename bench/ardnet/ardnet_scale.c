/*
 * ardnet_scale.c - the writers, readers and the bare-UDP baseline of the ardnet scale benchmark
 * (bench/ardnet/scale.sh runs them on two network-namespace hosts). Modes:
 *
 *   ardnet_scale pub N SIZE TICK         writer: OUT ports s0..s<N-1> of SIZE bytes, each
 *                                        published at 1 kHz (TICK common or indep)
 *   ardnet_scale sub N SIZE              reader: IN ports s0..s<N-1>; latency of s0, and the
 *                                        packets delivered on all N (sequence numbers)
 *   ardnet_scale udp-tx N SIZE TICK HOST PORT   baseline sender: one bare datagram per packet,
 *                                        the packets of each tick sent with sendmmsg
 *   ardnet_scale udp-rx N SIZE PORT      baseline receiver: recvmmsg, batches of 64
 *
 * Every packet carries the writer's CLOCK_MONOTONIC (ns) in bytes 0-7 and its connection's
 * index in bytes 8-11. TICK "common": one 1 ms period, every connection written at its start
 * (a control system's cycle). TICK "indep": each connection gets a random phase in the
 * millisecond, rounded to a slot of SLOT_NS; the writer wakes once per occupied slot and
 * writes the connections of that slot (N independent 1 kHz writers, for the cost of at most
 * 1 ms / SLOT_NS wake-ups per millisecond on the writer's side). The phases are drawn from a
 * generator seeded with N, so ardnet's writer and the baseline get the same ones.
 *
 * Measuring window: SIGUSR1 opens it, SIGUSR2 closes it; the program then prints one line of
 * key=value figures for the window and exits 0. SIGTERM ends it without output.
 * Exit codes: 0 ok, 100 usage, 111 system error (socket, shared memory).
 */
#include "ardnet.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define PERIOD_NS 1000000LL
#define SLOT_NS 50000LL
#define NSLOTS (PERIOD_NS / SLOT_NS)
#define MAX_CONN 4096
#define MAX_SAMPLES (1 << 20)
#define RX_BATCH 64
#define TX_BATCH 1024 /* UIO_MAXIOV: the most sendmmsg takes in one call */
#define EXIT_USAGE 100
#define EXIT_SYSTEM 111

static volatile sig_atomic_t mark; /* 0 before the window, 1 in it, 2 closed */
static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
    if (sig == SIGUSR1 && mark == 0)
        mark = 1;
    else if (sig == SIGUSR2)
        mark = 2;
    else if (sig == SIGTERM || sig == SIGINT)
        stop = 1;
}

/* No SA_RESTART: a blocked receive returns so the loop sees the window's edges at once. */
static void catch_signals(void)
{
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    sigaction(SIGUSR2, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
}

static int64_t now_ns(void)
{
    return ard_now_ns();
}

/* ---- the tick: which connections are written when ----------------------------------------- */

struct tick {
    int n;
    int nslots;             /* occupied slots */
    int64_t offset[NSLOTS]; /* start of each occupied slot within the period */
    int first[NSLOTS + 1];  /* slot s writes order[first[s] .. first[s+1]-1] */
    int order[MAX_CONN];    /* connection indexes, by slot */
    int64_t next;           /* absolute time of the next slot */
    int slot;               /* index of the next slot */
    uint64_t missed;        /* periods skipped because the writer came too late */
};

static int tick_init(struct tick *t, int n, const char *mode)
{
    memset(t, 0, sizeof *t);
    t->n = n;
    if (!strcmp(mode, "common")) {
        t->nslots = 1;
        for (int i = 0; i < n; i++)
            t->order[i] = i;
        t->first[1] = n;
    } else if (!strcmp(mode, "indep")) {
        int slot_of[MAX_CONN], count[NSLOTS] = {0};
        srand((unsigned)n); /* the same phases for ardnet's writer and the baseline */
        for (int i = 0; i < n; i++) {
            slot_of[i] = rand() % (int)NSLOTS;
            count[slot_of[i]]++;
        }
        int k = 0;
        for (int s = 0; s < NSLOTS; s++) {
            if (!count[s])
                continue;
            t->offset[t->nslots] = s * SLOT_NS;
            t->first[t->nslots] = k;
            for (int i = 0; i < n; i++)
                if (slot_of[i] == s)
                    t->order[k++] = i;
            t->nslots++;
        }
        t->first[t->nslots] = k;
    } else {
        fprintf(stderr, "ardnet_scale: tick '%s' is neither common nor indep\n", mode);
        return -1;
    }
    t->next = (now_ns() / PERIOD_NS + 2) * PERIOD_NS + t->offset[0];
    return 0;
}

/* Sleep until the next occupied slot; returns its index. A slot whose time has passed by more
 * than a period is skipped (counted), not caught up in a burst. */
static int tick_wait(struct tick *t)
{
    struct timespec ts = {(time_t)(t->next / 1000000000LL), (long)(t->next % 1000000000LL)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR && !stop)
        ;
    int s = t->slot;
    int64_t base = t->next - t->offset[s];
    if (++t->slot == t->nslots) {
        t->slot = 0;
        base += PERIOD_NS;
    }
    t->next = base + t->offset[t->slot];
    int64_t late = now_ns() - t->next;
    if (late > PERIOD_NS) {
        int64_t skip = late / PERIOD_NS;
        t->next += skip * PERIOD_NS;
        t->missed += (uint64_t)skip;
    }
    return s;
}

static void stamp(uint8_t *buf, int idx)
{
    int64_t t = now_ns();
    uint32_t i = (uint32_t)idx;
    memcpy(buf, &t, sizeof t);
    memcpy(buf + 8, &i, sizeof i);
}

/* ---- the window's figures ---------------------------------------------------------------- */

struct window {
    int64_t t0, t1;
    uint64_t count0;
    int64_t *lat;
    size_t nlat;
};

static int64_t lat_samples[MAX_SAMPLES]; /* the latency of s0, one window's worth */

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static void print_latency(struct window *w)
{
    if (!w->nlat) {
        printf(" lat_n=0 lat_med_us=- lat_p99_us=-\n");
        fflush(stdout);
        return;
    }
    qsort(w->lat, w->nlat, sizeof *w->lat, cmp_i64);
    printf(" lat_n=%zu lat_med_us=%.1f lat_p99_us=%.1f\n", w->nlat, w->lat[w->nlat / 2] / 1e3,
           w->lat[w->nlat * 99 / 100] / 1e3);
    fflush(stdout);
}

static double seconds(const struct window *w)
{
    return (w->t1 - w->t0) / 1e9;
}

/* ---- modes ------------------------------------------------------------------------------- */

static int create_ports(ard_port **p, int n, enum ard_dir dir, size_t size, int *argc, char **argv)
{
    for (int i = 0; i < n; i++) {
        char name[16];
        snprintf(name, sizeof name, "s%d", i);
        if (!(p[i] = ard_create(name, dir, size, NULL))) {
            fprintf(stderr, "ardnet_scale: %s\n", ard_errdetail());
            return -1;
        }
    }
    if (ard_init(argc, argv) < 0) {
        fprintf(stderr, "ardnet_scale: %s\n", ard_errdetail());
        return -1;
    }
    return 0;
}

static int cmd_pub(int argc, char **argv, int n, size_t size, const char *mode)
{
    static struct tick t;
    static ard_port *p[MAX_CONN];
    static uint8_t buf[65536];
    if (tick_init(&t, n, mode) < 0)
        return EXIT_USAGE;
    if (create_ports(p, n, ARD_OUT, size, &argc, argv) < 0)
        return EXIT_SYSTEM;
    uint64_t sent = 0, sent0 = 0, missed0 = 0;
    int64_t t0 = 0;
    while (!stop && mark != 2) {
        int s = tick_wait(&t);
        if (mark == 1 && !t0) {
            t0 = now_ns();
            sent0 = sent;
            missed0 = t.missed;
        }
        for (int k = t.first[s]; k < t.first[s + 1]; k++) {
            int i = t.order[k];
            stamp(buf, i);
            if (ard_send(p[i], buf) < 0) {
                fprintf(stderr, "ardnet_scale: s%d: %s\n", i, ard_errdetail());
                return EXIT_SYSTEM;
            }
            sent++;
        }
    }
    if (stop)
        return 0;
    double sec = (now_ns() - t0) / 1e9;
    printf("published_per_s=%.0f missed_periods_per_s=%.0f\n", (double)(sent - sent0) / sec,
           (double)(t.missed - missed0) / sec);
    return 0;
}

static uint64_t seq_sum(ard_port **p, int n, uint8_t *buf)
{
    uint64_t sum = 0;
    for (int i = 0; i < n; i++) {
        if (ard_tryrec(p[i], buf) >= 0)
            sum += ard_port_info(p[i]).seq;
    }
    return sum;
}

static int cmd_sub(int argc, char **argv, int n, size_t size)
{
    static ard_port *p[MAX_CONN];
    static uint8_t buf[65536];
    struct window w = {.lat = lat_samples};
    if (create_ports(p, n, ARD_IN, size, &argc, argv) < 0)
        return EXIT_SYSTEM;
    while (!stop && mark != 2) {
        int rc = ard_rec_timed(p[0], buf, 100000000LL);
        int64_t t = now_ns();
        if (mark == 1 && !w.t0) {
            w.t0 = now_ns();
            w.count0 = seq_sum(p, n, buf);
            continue; /* the sweep has taken s0's packet */
        }
        if (rc == 0 && w.t0 && w.nlat < MAX_SAMPLES) {
            int64_t sent;
            memcpy(&sent, buf, sizeof sent);
            w.lat[w.nlat++] = t - sent;
        } else if (rc < 0 && rc != ARD_ETIMEDOUT && rc != ARD_EINTR) {
            fprintf(stderr, "ardnet_scale: s0: %s\n", ard_errdetail());
            return EXIT_SYSTEM;
        }
    }
    if (stop)
        return 0;
    w.t1 = now_ns();
    uint64_t count1 = seq_sum(p, n, buf);
    printf("delivered_per_s=%.0f", (double)(count1 - w.count0) / seconds(&w));
    print_latency(&w);
    return 0;
}

static int udp_socket(const char *host, const char *port, struct sockaddr_storage *peer,
                      socklen_t *peerlen)
{
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_DGRAM}, *res;
    if (host) {
        int rc = getaddrinfo(host, port, &hints, &res);
        if (rc != 0) {
            fprintf(stderr, "ardnet_scale: %s:%s: %s\n", host, port, gai_strerror(rc));
            return -1;
        }
        memcpy(peer, res->ai_addr, res->ai_addrlen);
        *peerlen = res->ai_addrlen;
        freeaddrinfo(res);
    }
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0) {
        perror("ardnet_scale: socket");
        return -1;
    }
    /* Room for a whole tick of 1000 packets of 1 KiB (about 2.3 MB of kernel memory); as root
     * past net.core.rmem_max/wmem_max, as others up to them. */
    int big = 8 << 20, opt = host ? SO_SNDBUFFORCE : SO_RCVBUFFORCE;
    if (setsockopt(fd, SOL_SOCKET, opt, &big, sizeof big) < 0)
        setsockopt(fd, SOL_SOCKET, host ? SO_SNDBUF : SO_RCVBUF, &big, sizeof big);
    return fd;
}

static int cmd_udp_tx(int n, size_t size, const char *mode, const char *host, const char *port)
{
    static struct tick t;
    static uint8_t buf[MAX_CONN][1024];
    static struct mmsghdr msg[MAX_CONN];
    static struct iovec iov[MAX_CONN];
    if (tick_init(&t, n, mode) < 0)
        return EXIT_USAGE;
    if (size > sizeof buf[0]) {
        fprintf(stderr, "ardnet_scale: udp-tx: size %zu is over %zu\n", size, sizeof buf[0]);
        return EXIT_USAGE;
    }
    struct sockaddr_storage peer;
    socklen_t peerlen = 0;
    int fd = udp_socket(host, port, &peer, &peerlen);
    if (fd < 0)
        return EXIT_SYSTEM;
    for (int i = 0; i < n; i++) {
        iov[i] = (struct iovec){buf[i], size};
        msg[i].msg_hdr = (struct msghdr){
            .msg_name = &peer, .msg_namelen = peerlen, .msg_iov = &iov[i], .msg_iovlen = 1};
    }
    uint64_t sent = 0, errors = 0, sent0 = 0, errors0 = 0, missed0 = 0;
    int64_t t0 = 0;
    static struct mmsghdr batch[TX_BATCH];
    while (!stop && mark != 2) {
        int s = tick_wait(&t);
        if (mark == 1 && !t0) {
            t0 = now_ns();
            sent0 = sent;
            errors0 = errors;
            missed0 = t.missed;
        }
        int k = t.first[s], end = t.first[s + 1];
        while (k < end) {
            int m = 0;
            for (; m < TX_BATCH && k + m < end; m++) {
                int i = t.order[k + m];
                stamp(buf[i], i);
                batch[m] = msg[i];
            }
            int done = 0;
            while (done < m) {
                int rc = sendmmsg(fd, batch + done, (unsigned)(m - done), MSG_DONTWAIT);
                if (rc > 0) {
                    done += rc;
                    sent += (uint64_t)rc;
                } else if (rc < 0 && errno == EINTR) {
                    continue;
                } else { /* the first message failed: count it, go on with the next */
                    done++;
                    errors++;
                }
            }
            k += m;
        }
    }
    if (stop)
        return 0;
    double sec = (now_ns() - t0) / 1e9;
    printf("published_per_s=%.0f missed_periods_per_s=%.0f send_errors_per_s=%.0f\n",
           (double)(sent - sent0) / sec, (double)(t.missed - missed0) / sec,
           (double)(errors - errors0) / sec);
    return 0;
}

static int cmd_udp_rx(int n, size_t size, const char *port)
{
    static uint8_t buf[RX_BATCH][1024];
    static struct mmsghdr msg[RX_BATCH];
    static struct iovec iov[RX_BATCH];
    (void)n;
    if (size > sizeof buf[0]) {
        fprintf(stderr, "ardnet_scale: udp-rx: size %zu is over %zu\n", size, sizeof buf[0]);
        return EXIT_USAGE;
    }
    struct window w = {.lat = lat_samples};
    int fd = udp_socket(NULL, NULL, NULL, NULL);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(port))};
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) < 0) {
        perror("ardnet_scale: udp-rx");
        return EXIT_SYSTEM;
    }
    for (int j = 0; j < RX_BATCH; j++) {
        iov[j] = (struct iovec){buf[j], sizeof buf[j]};
        msg[j].msg_hdr = (struct msghdr){.msg_iov = &iov[j], .msg_iovlen = 1};
    }
    uint64_t got = 0;
    while (!stop && mark != 2) {
        int rc = recvmmsg(fd, msg, RX_BATCH, MSG_WAITFORONE, NULL);
        int64_t t = now_ns();
        if (mark == 1 && !w.t0) {
            w.t0 = t;
            w.count0 = got;
        }
        for (int j = 0; j < rc; j++) {
            if (msg[j].msg_len != size)
                continue;
            got++;
            uint32_t idx;
            memcpy(&idx, buf[j] + 8, sizeof idx);
            if (idx == 0 && w.t0 && w.nlat < MAX_SAMPLES) {
                int64_t sent;
                memcpy(&sent, buf[j], sizeof sent);
                w.lat[w.nlat++] = t - sent;
            }
        }
    }
    if (stop)
        return 0;
    w.t1 = now_ns();
    printf("delivered_per_s=%.0f", (double)(got - w.count0) / seconds(&w));
    print_latency(&w);
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: ardnet_scale pub N SIZE common|indep\n"
            "       ardnet_scale sub N SIZE\n"
            "       ardnet_scale udp-tx N SIZE common|indep HOST PORT\n"
            "       ardnet_scale udp-rx N SIZE PORT\n"
            "N 1..%d connections at 1 kHz, SIZE 16..65536 bytes (udp-*: ..1024).\n"
            "SIGUSR1 opens the measuring window, SIGUSR2 closes it and prints its figures.\n"
            "Part of bench/ardnet/scale.sh; exit codes 0 ok, 100 usage, 111 system error.\n",
            MAX_CONN);
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "--help")) {
        usage(stdout);
        return 0;
    }
    if (argc == 2 && !strcmp(argv[1], "--version")) {
        printf("ardnet_scale %d.%d.%d\n", ARD_VERSION_MAJOR, ARD_VERSION_MINOR, ARD_VERSION_PATCH);
        return 0;
    }
    if (argc < 4) {
        usage(stderr);
        return EXIT_USAGE;
    }
    catch_signals(); /* first: a window opened while the ports attach is not lost */
    const char *m = argv[1];
    char *e1, *e2;
    long n = strtol(argv[2], &e1, 10), size = strtol(argv[3], &e2, 10);
    if (*e1 || *e2 || n < 1 || n > MAX_CONN || size < 16 || size > 65536) {
        fprintf(stderr, "ardnet_scale: N '%s' or SIZE '%s' out of range\n", argv[2], argv[3]);
        return EXIT_USAGE;
    }
    if (!strcmp(m, "pub") && argc == 5)
        return cmd_pub(argc, argv, (int)n, (size_t)size, argv[4]);
    if (!strcmp(m, "sub") && argc == 4)
        return cmd_sub(argc, argv, (int)n, (size_t)size);
    if (!strcmp(m, "udp-tx") && argc == 7)
        return cmd_udp_tx((int)n, (size_t)size, argv[4], argv[5], argv[6]);
    if (!strcmp(m, "udp-rx") && argc == 5)
        return cmd_udp_rx((int)n, (size_t)size, argv[4]);
    usage(stderr);
    return EXIT_USAGE;
}
