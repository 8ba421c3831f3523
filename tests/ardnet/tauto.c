/*
 * tauto.c - a hostile fourth host for the catalog tests (ardnet --auto).
 *
 *   tauto want HOST[:PORT] --conn NAME --size S [--type DESC] [--ids N] [--base P]
 *              [--duration-ms D]
 *     Sends, every 100 ms, N forged announcements (N random host ids, as N catalogs would)
 *     each wanting NAME on its own port P, P+1, ... P+N-1, and listens on those ports.
 *     Prints "received=K ports=M foreign=F": K datagrams received on them in all, M of the
 *     ports that got any, F datagrams from an address other than HOST.
 *   tauto garbage HOST[:PORT] [--count N]
 *     Sends N datagrams: random bytes, valid announcements cut short or with one byte
 *     changed, entries with bad names, types and sizes. Prints "sent=N".
 */
#include "auto_wire.h"
#include "ardn.h"

#include <arpa/inet.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

static const char *opt(int argc, char **argv, const char *name, const char *def)
{
    for (int i = 3; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return argv[i + 1];
    return def;
}

static uint64_t rnd64(void)
{
    uint64_t v = 0;
    while (v == 0)
        if (getrandom(&v, sizeof v, 0) != (ssize_t)sizeof v)
            exit(2);
    return v;
}

static size_t one_want(uint8_t *buf, uint64_t id, uint32_t seq, const char *conn, unsigned size,
                       const char *type, uint16_t port)
{
    const char *dom = getenv("ARD_DOMAIN");
    struct arda_msg m = {
        .host_id = id, .domain = arda_domain_hash(dom && *dom ? dom : "default"), .seq = seq};
    strcpy(m.host, "forger");
    struct arda_entry e = {
        .kind = ARDA_WANT, .order = (uint8_t)arda_host_order(), .port = port, .size = size};
    snprintf(e.name, sizeof e.name, "%s", conn);
    snprintf(e.type, sizeof e.type, "%s", type);
    size_t len = arda_put_hdr(buf, &m);
    return arda_put_entry(buf, len, &e);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: tauto want|garbage HOST[:PORT] [options]\n");
        return 2;
    }
    struct sockaddr_storage ss;
    socklen_t slen;
    bool has_port;
    if (ardn_resolve(argv[2], &ss, &slen, &has_port) < 0 || ss.ss_family != AF_INET) {
        fprintf(stderr, "tauto: bad address '%s'\n", argv[2]);
        return 2;
    }
    struct sockaddr_in to;
    memcpy(&to, &ss, sizeof to);
    if (!has_port)
        to.sin_port = htons(7400);
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    static uint8_t buf[ARDA_MAX_DGRAM];
    if (strcmp(argv[1], "garbage") == 0) {
        int count = atoi(opt(argc, argv, "--count", "1000"));
        uint64_t id = rnd64();
        for (int i = 0; i < count; i++) {
            size_t len = one_want(buf, id, (uint32_t)i + 1, "arm.state", 16, "u64 u64", 4000);
            uint32_t r = (uint32_t)rnd64();
            switch (i % 5) {
            case 0: /* random bytes, random length */
                len = r % 1500;
                for (size_t k = 0; k < len; k++)
                    buf[k] = (uint8_t)rnd64();
                break;
            case 1: /* cut short */
                len = r % len;
                break;
            case 2: /* one byte changed (never the port or the seq: those stay valid) */
            {
                size_t k = r % len;
                if ((k >= 20 && k < 24) || k == len - 1)
                    k = 4;
                buf[k] ^= (uint8_t)(1 + (r >> 16) % 255);
                break;
            }
            case 3: /* a bad name */
                len = one_want(buf, id, (uint32_t)i + 1, "../etc", 16, "u64 u64", 4000);
                break;
            default: /* a type that is not of the entry's size */
                len = one_want(buf, id, (uint32_t)i + 1, "arm.state", 24, "u64 u64", 4000);
                break;
            }
            sendto(fd, buf, len, 0, (struct sockaddr *)&to, sizeof to);
            usleep(500);
        }
        printf("sent=%d\n", count);
        return 0;
    }
    if (strcmp(argv[1], "want") != 0) {
        fprintf(stderr, "tauto: unknown mode '%s'\n", argv[1]);
        return 2;
    }
    const char *conn = opt(argc, argv, "--conn", "arm.state");
    unsigned size = (unsigned)atoi(opt(argc, argv, "--size", "0"));
    const char *type = opt(argc, argv, "--type", "");
    int ids = atoi(opt(argc, argv, "--ids", "4"));
    int base = atoi(opt(argc, argv, "--base", "9100"));
    long duration = atol(opt(argc, argv, "--duration-ms", "3000"));
    if (ids < 1 || ids > 32) {
        fprintf(stderr, "tauto: --ids 1..32\n");
        return 2;
    }
    struct pollfd pfd[32];
    uint64_t id[32], got[32] = {0}, foreign = 0;
    for (int i = 0; i < ids; i++) {
        id[i] = rnd64();
        pfd[i].fd = socket(AF_INET, SOCK_DGRAM, 0);
        pfd[i].events = POLLIN;
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)(base + i))};
        if (bind(pfd[i].fd, (struct sockaddr *)&a, sizeof a) < 0) {
            perror("tauto: bind");
            return 2;
        }
    }
    int64_t end = ard_now_ns() + duration * 1000000LL, next = 0;
    uint32_t seq = 0;
    for (int64_t now = ard_now_ns(); now < end; now = ard_now_ns()) {
        if (now >= next) {
            seq++;
            for (int i = 0; i < ids; i++) {
                size_t len = one_want(buf, id[i], seq, conn, size, type, (uint16_t)(base + i));
                sendto(fd, buf, len, 0, (struct sockaddr *)&to, sizeof to);
            }
            next = now + 100000000;
        }
        if (poll(pfd, (nfds_t)ids, 10) <= 0)
            continue;
        for (int i = 0; i < ids; i++) {
            if (!(pfd[i].revents & POLLIN))
                continue;
            struct sockaddr_in src;
            socklen_t sl = sizeof src;
            if (recvfrom(pfd[i].fd, buf, sizeof buf, 0, (struct sockaddr *)&src, &sl) < 0)
                continue;
            if (src.sin_addr.s_addr != to.sin_addr.s_addr)
                foreign++;
            got[i]++;
        }
    }
    uint64_t total = 0;
    int ports = 0;
    for (int i = 0; i < ids; i++) {
        total += got[i];
        ports += got[i] > 0;
    }
    printf("received=%llu ports=%d foreign=%llu\n", (unsigned long long)total, ports,
           (unsigned long long)foreign);
    return 0;
}
