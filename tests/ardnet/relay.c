/*
 * relay.c - impairment relay for ardnet tests: forwards UDP datagrams from a listen port to a
 * destination, dropping, duplicating, reordering and delaying them at random (seeded, so a
 * failing run can be repeated).
 *
 *   relay --listen PORT --to HOST:PORT [--seed S] [--drop PCT] [--dup PCT] [--reorder PCT]
 *         [--delay-ms MS] [--stats FILE]
 *
 * Every datagram is dropped with probability drop%; a kept one is sent once, or twice with
 * probability dup%; each copy is held back for a random 1..MS ms with probability reorder%
 * (so later datagrams overtake it), else sent at once. Runs until SIGTERM, then writes
 * "in=N out=N dropped=N duplicated=N delayed=N" to FILE (or stderr).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAXQ 512
#define MAXD 65536

struct held {
    int64_t due_ns;
    size_t len;
    uint8_t *data;
};

static volatile sig_atomic_t stop;
static void on_term(int sig)
{
    (void)sig;
    stop = 1;
}

static uint64_t rng_state;
static uint32_t rnd(void) /* xorshift64*: small, seeded, reproducible */
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (uint32_t)((rng_state * 2685821657736338717ull) >> 32);
}

static bool chance(int pct)
{
    return (int)(rnd() % 100) < pct;
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
    int listen_port = 0, drop = 0, dup = 0, reorder = 0, delay_ms = 5;
    const char *to = NULL, *stats = NULL;
    rng_state = 1;
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *o = argv[i], *v = argv[i + 1];
        if (!strcmp(o, "--listen"))
            listen_port = atoi(v);
        else if (!strcmp(o, "--to"))
            to = v;
        else if (!strcmp(o, "--seed"))
            rng_state = strtoull(v, NULL, 10) * 2 + 1;
        else if (!strcmp(o, "--drop"))
            drop = atoi(v);
        else if (!strcmp(o, "--dup"))
            dup = atoi(v);
        else if (!strcmp(o, "--reorder"))
            reorder = atoi(v);
        else if (!strcmp(o, "--delay-ms"))
            delay_ms = atoi(v);
        else if (!strcmp(o, "--stats"))
            stats = v;
        else {
            fprintf(stderr, "relay: unknown option %s\n", o);
            return 2;
        }
    }
    if (!listen_port || !to || delay_ms < 1) {
        fprintf(stderr, "usage: relay --listen PORT --to HOST:PORT [options]\n");
        return 2;
    }
    char host[256];
    snprintf(host, sizeof host, "%s", to);
    char *colon = strrchr(host, ':');
    if (!colon)
        return 2;
    *colon = '\0';
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_DGRAM}, *res;
    if (getaddrinfo(host, colon + 1, &hints, &res) != 0) {
        fprintf(stderr, "relay: unknown host %s\n", host);
        return 2;
    }
    int in = socket(AF_INET, SOCK_DGRAM, 0), out = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in la = {.sin_family = AF_INET, .sin_port = htons((uint16_t)listen_port)};
    if (in < 0 || out < 0 || bind(in, (struct sockaddr *)&la, sizeof la) < 0 ||
        connect(out, res->ai_addr, res->ai_addrlen) < 0) {
        fprintf(stderr, "relay: socket: %s\n", strerror(errno));
        return 2;
    }
    freeaddrinfo(res);
    struct sigaction sa = {.sa_handler = on_term};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);

    static struct held q[MAXQ];
    size_t nq = 0;
    uint64_t n_in = 0, n_out = 0, n_drop = 0, n_dup = 0, n_delayed = 0;
    static uint8_t buf[MAXD];
    while (!stop) {
        int64_t now = now_ns(), next = now + 100000000LL;
        for (size_t i = 0; i < nq;) {
            if (q[i].due_ns <= now) {
                if (send(out, q[i].data, q[i].len, 0) >= 0)
                    n_out++;
                free(q[i].data);
                q[i] = q[--nq];
            } else {
                if (q[i].due_ns < next)
                    next = q[i].due_ns;
                i++;
            }
        }
        struct pollfd p = {.fd = in, .events = POLLIN};
        int ms = (int)((next - now + 999999) / 1000000);
        if (poll(&p, 1, ms) <= 0)
            continue;
        ssize_t len = recv(in, buf, sizeof buf, 0);
        if (len < 0)
            continue;
        n_in++;
        if (chance(drop)) {
            n_drop++;
            continue;
        }
        int copies = chance(dup) ? 2 : 1;
        n_dup += (uint64_t)(copies - 1);
        for (int c = 0; c < copies; c++) {
            if (chance(reorder) && nq < MAXQ) {
                uint8_t *d = malloc((size_t)len);
                if (!d)
                    continue;
                memcpy(d, buf, (size_t)len);
                q[nq++] =
                    (struct held){now_ns() + (int64_t)(1 + rnd() % (unsigned)delay_ms) * 1000000LL,
                                  (size_t)len, d};
                n_delayed++;
            } else if (send(out, buf, (size_t)len, 0) >= 0) {
                n_out++;
            }
        }
    }
    FILE *f = stats ? fopen(stats, "w") : stderr;
    if (f) {
        fprintf(f, "in=%llu out=%llu dropped=%llu duplicated=%llu delayed=%llu\n",
                (unsigned long long)n_in, (unsigned long long)n_out, (unsigned long long)n_drop,
                (unsigned long long)n_dup, (unsigned long long)n_delayed);
        if (f != stderr)
            fclose(f);
    }
    return 0;
}
