/*
 * ardnet_rxpath.c - the receiving ardnet's own work per packet, without the kernel: N routes
 * sharing one listening address (in: udp://127.0.0.1:PORT, out: rxpK, SIZE bytes, conn-id
 * K+1, from 127.0.0.1), opened with ardn_plan_open (real shared-memory outputs), fed whole
 * datagrams in wake-ups of BATCH, each datagram of the next route in turn (the pattern of
 * independent ticks), then published as the receiving thread does. What the kernel would do
 * is stood for by writing the header and copying the payload into the receive slot (the same
 * in both versions). The loop around ardn_input_datagram is plan.c's input_main written out:
 * with RXPATH_V2 (this tree) no per-route tick on a wake-up when no route has --max-rate, and
 * delivery by reference; without it (the tree before) the timeout and tick of every route on
 * every wake-up. Build either against its own tree (docs/performance.md gives the commands).
 *
 *   ardnet_rxpath [N [SIZE [BATCH [PACKETS [PORT]]]]]   (defaults 100 1024 3 2000000 47123)
 *
 * Prints "ns_per_packet=X" (CPU time of the loop / packets) and the packets published. Run it
 * with ARD_DOMAIN set to a scratch domain. Exit 0 (every packet published), 1 (some not),
 * 100 usage, 111 setup failed (e.g. PORT in use).
 */
#include "ardn.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SLOT 2048

static int64_t cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static long arg(int argc, char **argv, int i, long def, long min, long max)
{
    if (argc <= i)
        return def;
    char *end;
    long v = strtol(argv[i], &end, 10);
    if (*end || v < min || v > max) {
        fprintf(stderr, "ardnet_rxpath: argument %d '%s' is not %ld..%ld\n", i, argv[i], min, max);
        exit(100);
    }
    return v;
}

int main(int argc, char **argv)
{
    if (argc > 1 && argv[1][0] == '-') {
        fprintf(stderr, "usage: ardnet_rxpath [N [SIZE [BATCH [PACKETS [PORT]]]]]\n");
        return strcmp(argv[1], "--help") == 0 ? 0 : 100;
    }
    if (ard_init(&argc, argv) < 0) {
        fprintf(stderr, "ardnet_rxpath: %s\n", ard_errdetail());
        return 111;
    }
    int n = (int)arg(argc, argv, 1, 100, 1, 4096);
    size_t size = (size_t)arg(argc, argv, 2, 1024, 1, SLOT - ARDW_HDR_SIZE);
    int batch = (int)arg(argc, argv, 3, 3, 1, 16);
    long packets = arg(argc, argv, 4, 2000000, 1, 1000000000);
    long port = arg(argc, argv, 5, 47123, 1, 65535);
    struct ardn_route *routes = calloc((size_t)n, sizeof *routes);
    uint64_t *seq = calloc((size_t)n, sizeof *seq);
    uint8_t *rx = calloc(16, SLOT), *payload = calloc(1, size);
    if (!routes || !seq || !rx || !payload) {
        fprintf(stderr, "ardnet_rxpath: out of memory\n");
        return 111;
    }
    char in[64], out[32], sz[32], id[32];
    snprintf(in, sizeof in, "udp://127.0.0.1:%ld", port);
    snprintf(sz, sizeof sz, "%zu", size);
    for (int i = 0; i < n; i++) {
        ardn_route_init(&routes[i]);
        snprintf(out, sizeof out, "rxp%d", i);
        snprintf(id, sizeof id, "%d", i + 1);
        if (ardn_route_option(&routes[i], "in", in) < 0 ||
            ardn_route_option(&routes[i], "out", out) < 0 ||
            ardn_route_option(&routes[i], "size", sz) < 0 ||
            ardn_route_option(&routes[i], "conn-id", id) < 0 ||
            ardn_route_option(&routes[i], "from", "127.0.0.1") < 0 ||
            ardn_route_finish(&routes[i]) < 0) {
            fprintf(stderr, "ardnet_rxpath: %s\n", ard_errdetail());
            return 111;
        }
    }
    struct ardn_plan plan = {0};
    if (ardn_plan_open(&plan, routes, n) < 0) {
        fprintf(stderr, "ardnet_rxpath: %s\n", ard_errdetail());
        return 111;
    }
    struct ardn_input *input = &plan.inputs[0];
#ifdef RXPATH_V2
    input->by_reference = true;
#endif
    struct sockaddr_storage src = {0};
    struct sockaddr_in *s4 = (struct sockaddr_in *)&src;
    s4->sin_family = AF_INET;
    s4->sin_addr.s_addr = inet_addr("127.0.0.1");
    s4->sin_port = htons(40000);
    for (size_t i = 0; i < size; i++)
        payload[i] = (uint8_t)i;
    struct ardw_hdr h = {.size = (uint32_t)size, .epoch = 0x5eed};
    int next = 0;
    int64_t t0 = cpu_ns();
    for (long p = 0; p < packets; p += batch) {
        int64_t now = ard_now_ns(), timeout = 250000000;
#ifndef RXPATH_V2
        for (int k = 0; k < input->nroutes; k++)
            timeout = ardn_reducer_timeout(&input->routes[k]->red, now, timeout);
#endif
        (void)timeout;
        now = ard_now_ns(); /* (after the receive call) */
        for (int k = 0; k < batch; k++) {
            int r = next;
            next = next + 1 == n ? 0 : next + 1;
            h.conn_id = (uint32_t)r + 1;
            h.seq = ++seq[r];
            h.mono_ns = h.real_ns = now;
            uint8_t *d = rx + (size_t)k * SLOT;
            ardw_put_hdr(d, &h);
            memcpy(d + ARDW_HDR_SIZE, payload, size);
            ardn_input_datagram(input, d, ARDW_HDR_SIZE + size, &src, now);
        }
        for (int t = 0; t < input->ntouched; t++) {
            struct ardn_route *r = input->touched[t];
            r->fresh = false;
            if (r->conn_id != 0)
                r->newest.conn_id = r->conn_id;
            ardn_offer(r, &r->newest, now, NULL);
        }
        input->ntouched = 0;
#ifndef RXPATH_V2
        for (int k = 0; k < input->nroutes; k++)
            ardn_tick(input->routes[k], now, NULL);
#endif
    }
    int64_t t1 = cpu_ns();
    uint64_t sent = 0;
    for (int i = 0; i < n; i++)
        sent += atomic_load(&routes[i].cnt.c[ARDN_C_SENT]);
    printf("ns_per_packet=%.1f published=%llu of %ld\n", (double)(t1 - t0) / (double)packets,
           (unsigned long long)sent, packets);
    ardn_plan_close(&plan);
    free(routes);
    free(seq);
    free(rx);
    free(payload);
    return sent == (uint64_t)((packets + batch - 1) / batch * batch) ? 0 : 1;
}
