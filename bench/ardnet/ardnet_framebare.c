/*
 * ardnet_framebare.c - the baseline of bench/ardnet/frames.sh: large packets sent as datagrams of
 * the same size as ardnet's, by a bare sender (sendmmsg) and receiver (recvmmsg, assembling
 * each packet in one buffer, latest value), and a reader of a local connection that measures
 * how long after its writer's send each packet arrives.
 *
 *   ardnet_framebare send HOST PORT SIZE HZ SECONDS [DGRAM]
 *   ardnet_framebare recv PORT SIZE SECONDS [DGRAM]
 *   ardnet_framebare read CONNECTION SIZE SECONDS
 *
 * Each datagram: a 72-byte header (packet sequence, send CLOCK_REALTIME, fragment index,
 * count: the same header bytes ardnet's fragments carry) and a piece of the packet. send
 * prints "packets=N cpu_us=U" (its own user+system time); recv and read print "packets=N
 * cpu_us=U lat_us_p50=X lat_us_p90=Y lat_us_p99=Z lat_us_max=M" (latency: CLOCK_REALTIME when
 * the whole packet is there, less the writer's send time; one host, one clock). read also
 * prints "gap_us_p99=G gap_us_max=H": the time between two packets it got (how stale its
 * newest value got), and serves bench/ardnet/joint_frames.sh's 1 kHz joint data (any SIZE of
 * 24 + 4k bytes).
 */
#include "ardnet.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define HDR 72u
#define BATCH 64

static int64_t cpu_us(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (int64_t)u.ru_utime.tv_sec * 1000000 + u.ru_utime.tv_usec +
           (int64_t)u.ru_stime.tv_sec * 1000000 + u.ru_stime.tv_usec;
}

static int cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static void report(long n, int64_t cpu, int64_t *lat)
{
    int64_t p50 = 0, p90 = 0, p99 = 0, max = 0;
    if (n > 0) {
        qsort(lat, (size_t)n, sizeof *lat, cmp64);
        p50 = lat[n / 2];
        p90 = lat[n * 9 / 10];
        p99 = lat[n * 99 / 100];
        max = lat[n - 1];
    }
    printf("packets=%ld cpu_us=%lld lat_us_p50=%lld lat_us_p90=%lld lat_us_p99=%lld "
           "lat_us_max=%lld\n",
           n, (long long)cpu, (long long)(p50 / 1000), (long long)(p90 / 1000),
           (long long)(p99 / 1000), (long long)(max / 1000));
}

static int do_send(char **argv, int argc)
{
    size_t size = strtoul(argv[4], NULL, 10), dgram = argc > 7 ? strtoul(argv[7], NULL, 10) : 1472;
    long hz = strtol(argv[5], NULL, 10), secs = strtol(argv[6], NULL, 10);
    size_t chunk = dgram - HDR, n = (size + chunk - 1) / chunk;
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_DGRAM}, *ai;
    if (getaddrinfo(argv[2], argv[3], &hints, &ai) != 0)
        return 2;
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    int buf = (int)(4 * size + size / 2);
    setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &buf, sizeof buf);
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0)
        return 2;
    uint8_t *payload = calloc(1, size), *hdrs = calloc(n, HDR);
    struct mmsghdr *m = calloc(n, sizeof *m);
    struct iovec *iov = calloc(2 * n, sizeof *iov);
    for (size_t i = 0; i < size; i++)
        payload[i] = (uint8_t)(i * 7);
    int64_t c0 = cpu_us(), period = 1000000000LL / hz, next = ard_now_ns();
    long sent = 0;
    for (long k = 0; k < hz * secs; k++) {
        int64_t real = ard_realtime_ns();
        for (size_t i = 0; i < n; i++) {
            uint8_t *h = hdrs + i * HDR;
            uint64_t seq = (uint64_t)k + 1;
            uint32_t idx = (uint32_t)i, cnt = (uint32_t)n;
            memcpy(h, &seq, 8);
            memcpy(h + 8, &real, 8);
            memcpy(h + 16, &idx, 4);
            memcpy(h + 20, &cnt, 4);
            size_t off = i * chunk, len = size - off < chunk ? size - off : chunk;
            iov[2 * i] = (struct iovec){h, HDR};
            iov[2 * i + 1] = (struct iovec){payload + off, len};
            m[i] = (struct mmsghdr){.msg_hdr = {.msg_iov = &iov[2 * i], .msg_iovlen = 2}};
        }
        for (size_t at = 0; at < n;) {
            int r = sendmmsg(fd, m + at, (unsigned)(n - at), 0);
            if (r <= 0)
                break;
            at += (size_t)r;
        }
        sent++;
        next += period;
        int64_t now = ard_now_ns();
        if (next > now) {
            struct timespec ts = {(time_t)((next - now) / 1000000000),
                                  (long)((next - now) % 1000000000)};
            nanosleep(&ts, NULL);
        }
    }
    printf("packets=%ld cpu_us=%lld\n", sent, (long long)(cpu_us() - c0));
    return 0;
}

static int do_recv(char **argv, int argc)
{
    size_t size = strtoul(argv[3], NULL, 10), dgram = argc > 5 ? strtoul(argv[5], NULL, 10) : 1472;
    long secs = strtol(argv[4], NULL, 10);
    size_t chunk = dgram - HDR, n = (size + chunk - 1) / chunk;
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    int buf = (int)(4 * size + size / 2);
    setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof buf);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[2]))};
    if (bind(fd, (struct sockaddr *)&a, sizeof a) < 0)
        return 2;
    struct timeval tv = {0, 100000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    uint8_t *rx = malloc(BATCH * 2048), *packet = malloc(size), *got = calloc(n, 1);
    int64_t *lat = calloc(100000, sizeof *lat);
    struct mmsghdr m[BATCH];
    struct iovec iov[BATCH];
    uint64_t cur = 0;
    size_t have = 0;
    long done = 0;
    int64_t c0 = cpu_us(), end = ard_now_ns() + secs * 1000000000LL;
    while (ard_now_ns() < end) {
        for (int k = 0; k < BATCH; k++) {
            iov[k] = (struct iovec){rx + k * 2048, 2048};
            m[k] = (struct mmsghdr){.msg_hdr = {.msg_iov = &iov[k], .msg_iovlen = 1}};
        }
        int r = recvmmsg(fd, m, BATCH, MSG_WAITFORONE, NULL);
        for (int k = 0; k < r; k++) {
            const uint8_t *d = rx + k * 2048;
            uint64_t seq;
            int64_t real;
            uint32_t idx, cnt;
            memcpy(&seq, d, 8);
            memcpy(&real, d + 8, 8);
            memcpy(&idx, d + 16, 4);
            memcpy(&cnt, d + 20, 4);
            if (cnt != n || idx >= n || seq < cur)
                continue;
            if (seq > cur) { /* latest value: a newer packet abandons the one in progress */
                cur = seq;
                have = 0;
                memset(got, 0, n);
            }
            if (got[idx])
                continue;
            got[idx] = 1;
            memcpy(packet + idx * chunk, d + HDR, m[k].msg_len - HDR);
            if (++have == n && done < 100000)
                lat[done++] = ard_realtime_ns() - real;
        }
    }
    report(done, cpu_us() - c0, lat);
    return 0;
}

static int do_read(char **argv)
{
    size_t size = strtoul(argv[3], NULL, 10);
    long secs = strtol(argv[4], NULL, 10);
    char type[64];
    snprintf(type, sizeof type, "u64 u64 i64 u32[%zu]", (size - 24) / 4);
    ard_port *p = ard_create(argv[2], ARD_IN, size, type);
    int one = 1;
    char *none[] = {argv[0], NULL};
    if (!p || ard_init(&one, none) < 0) {
        fprintf(stderr, "read: %s\n", ard_errdetail());
        return 2;
    }
    uint8_t *buf = malloc(size);
    int64_t *lat = calloc(100000, sizeof *lat), *gap = calloc(100000, sizeof *gap), prev = 0;
    long done = 0;
    int64_t c0 = cpu_us(), end = ard_now_ns() + secs * 1000000000LL, start = ard_realtime_ns();
    while (ard_now_ns() < end) {
        int rc = ard_rec_timed(p, buf, 100000000);
        if (rc == ARD_ETIMEDOUT || rc == ARD_EINTR)
            continue;
        if (rc != 0) {
            fprintf(stderr, "read: %s: %s\n", ard_strerror(rc), ard_errdetail());
            return 2;
        }
        int64_t now = ard_realtime_ns();
        if (ard_port_info(p).real_ns < start)
            continue; /* (the connection's packet of an earlier run) */
        if (done < 100000) {
            gap[done] = done > 0 ? now - prev : 0;
            lat[done++] = now - ard_port_info(p).real_ns;
        }
        prev = now;
    }
    report(done, cpu_us() - c0, lat);
    /* The longest wait between two packets: how stale the reader's newest value got. */
    qsort(gap, (size_t)done, sizeof *gap, cmp64);
    printf("gap_us_p99=%lld gap_us_max=%lld\n",
           (long long)(done > 0 ? gap[done * 99 / 100] / 1000 : 0),
           (long long)(done > 0 ? gap[done - 1] / 1000 : 0));
    ard_close(p);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 7 && strcmp(argv[1], "send") == 0)
        return do_send(argv, argc);
    if (argc >= 5 && strcmp(argv[1], "recv") == 0)
        return do_recv(argv, argc);
    if (argc >= 5 && strcmp(argv[1], "read") == 0)
        return do_read(argv);
    fprintf(stderr, "usage: see bench/ardnet/ardnet_framebare.c\n");
    return 2;
}
