/*
 * fox_bench - `ard web` with 10 Foxglove clients next to the same 10 clients on the page's
 * protocol, in one run (docs/performance.md).
 *
 * A writer thread sends a 4-field packet (a:f64 b:f64 c:f64 t:i64, t its own CLOCK_MONOTONIC
 * time just before ard_send) at 10 kHz, paced by ard_period. One `ard web` serves two phases
 * of equal length: (1) 10 page-protocol clients (/ws) each plotting the 4 fields with 1 ms
 * buckets; (2) those closed, 10 Foxglove clients (foxglove.websocket.v1 at /) each subscribed
 * to the channel (they receive whole messages, every packet). Measured per phase: the
 * server's CPU (utime + stime from /proc over the phase, % of one core), the writer's rate,
 * and the delivery latency: page clients from a packet's send time to receiving the newest
 * point of each message ("te"); Foxglove clients from t (decoded from the CDR) to receiving
 * the message, both in this process's CLOCK_MONOTONIC.
 *
 *   fox_bench [SECONDS [ARD]]   (default 20: two phases of half each; ARD: the ard program
 *                               to serve, default the one of this build)
 */
#include "ardnet.h"

#include <civetweb.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define CLIENTS 10
#define RATE 10000.0
#define MAXS 2000000

struct samples {
    int64_t *v;
    size_t n, cap;
    pthread_mutex_t mu;
};

static void add(struct samples *s, int64_t v)
{
    pthread_mutex_lock(&s->mu);
    if (s->n < s->cap)
        s->v[s->n++] = v;
    pthread_mutex_unlock(&s->mu);
}

static int cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static void report(const char *what, struct samples *s)
{
    if (s->n == 0) {
        printf("  %-36s no samples\n", what);
        return;
    }
    qsort(s->v, s->n, sizeof *s->v, cmp64);
    printf("  %-36s n %8zu  p50 %8.3f  p99 %8.3f  max %8.3f ms\n", what, s->n,
           (double)s->v[s->n / 2] * 1e-6, (double)s->v[s->n * 99 / 100] * 1e-6,
           (double)s->v[s->n - 1] * 1e-6);
}

static struct samples lat[3]; /* by phase: 1 page, 2 Foxglove */
static atomic_int phase;      /* 0 not counted, 1 page, 2 Foxglove, 3 stop */
static atomic_uint_fast64_t sent[3], got[3];
static atomic_uint chan_id; /* the Foxglove channel of bench.sig, 0 until advertised */

static void *writer(void *arg)
{
    (void)arg;
    ard_port *p = ard_create_on("fox_bench_w", "bench.sig", ARD_OUT, 32, "a:f64 b:f64 c:f64 t:i64");
    if (!p) {
        fprintf(stderr, "fox_bench: writer: %s\n", ard_errdetail());
        exit(111);
    }
    ard_period per;
    if (ard_period_init(&per, (int64_t)(1e9 / RATE)) < 0)
        exit(111);
    struct {
        double a, b, c;
        int64_t t;
    } pkt;
    for (uint64_t k = 0;; k++) {
        int ph = atomic_load(&phase);
        if (ph == 3)
            break;
        double t = (double)k / RATE;
        pkt.a = sin(2 * M_PI * 7 * t);
        pkt.b = cos(2 * M_PI * 3 * t);
        pkt.c = fmod(t, 1.0);
        pkt.t = ard_now_ns();
        if (ard_send(p, &pkt) < 0)
            exit(111);
        if (ph == 1 || ph == 2)
            atomic_fetch_add(&sent[ph], 1);
        ard_period_wait(&per);
    }
    ard_close(p);
    return NULL;
}

/* Page protocol: the newest point's send time ("te", s of CLOCK_MONOTONIC). */
static int on_page(struct mg_connection *c, int bits, char *data, size_t len, void *ud)
{
    (void)c;
    (void)ud;
    int64_t now = ard_now_ns();
    if ((bits & 0x0f) != MG_WEBSOCKET_OPCODE_TEXT || atomic_load(&phase) != 1)
        return 1;
    char buf[32];
    const char *b = memmem(data, len, "\"b\":[[", 6);
    const char *te = memmem(data, len, "\"te\":", 5);
    if (!b || !te)
        return 1;
    size_t off = (size_t)(te - data) + 5, n = len - off < 24 ? len - off : 24;
    memcpy(buf, data + off, n);
    buf[n] = '\0';
    add(&lat[1], now - (int64_t)llround(strtod(buf, NULL) * 1e9));
    atomic_fetch_add(&got[1], 1);
    return 1;
}

/* Foxglove: the advertise (text) gives the channel id; each message (binary: opcode 1,
 * subscription u32, time u64, CDR header 4 bytes, a b c, t) its send time t. */
static int on_fox(struct mg_connection *c, int bits, char *data, size_t len, void *ud)
{
    (void)c;
    (void)ud;
    int64_t now = ard_now_ns();
    int op = bits & 0x0f;
    if (op == MG_WEBSOCKET_OPCODE_TEXT) {
        const char *a = memmem(data, len, "\"op\":\"advertise\"", 16);
        const char *t = memmem(data, len, "\"topic\":\"/bench/sig\"", 20);
        if (a && t) {
            /* the channel object starts with its id: {"id":N,"topic":"/bench/sig" */
            const char *id = t;
            while (id > data && memcmp(id, "{\"id\":", 6) != 0)
                id--;
            atomic_store(&chan_id, (unsigned)atoi(id + 6));
        }
        return 1;
    }
    if (op != MG_WEBSOCKET_OPCODE_BINARY || len < 13 + 4 + 32 || data[0] != 1 ||
        atomic_load(&phase) != 2)
        return 1;
    int64_t t;
    memcpy(&t, data + 13 + 4 + 24, sizeof t);
    add(&lat[2], now - t);
    atomic_fetch_add(&got[2], 1);
    return 1;
}

static double cpu_s(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');
    unsigned long ut = 0, st = 0;
    if (p)
        sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st);
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - floor(s)) * 1e9)};
    nanosleep(&ts, NULL);
}

static pid_t web;
static void die(const char *what, const char *err)
{
    fprintf(stderr, "fox_bench: %s: %s\n", what, err);
    if (web > 0)
        kill(web, SIGKILL);
    exit(111);
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 20;
    const char *ard = argc > 2 ? argv[2] : ARD_BIN; /* another build of ard, to compare */
    if (!(secs >= 2 && secs <= 600) || argc > 3) {
        fprintf(stderr, "usage: fox_bench [SECONDS 2..600 [ARD]]\n");
        return 100;
    }
    char dom[64];
    snprintf(dom, sizeof dom, "foxbench_%d", (int)getpid());
    setenv("ARD_DOMAIN", dom, 1);
    signal(SIGPIPE, SIG_IGN);
    int zero = 1;
    char *noargs[] = {argv[0], NULL};
    if (ard_init(&zero, noargs) < 0)
        die("ard_init", ard_errdetail());
    for (int i = 1; i < 3; i++) {
        lat[i].cap = MAXS;
        lat[i].v = malloc(MAXS * sizeof(int64_t));
        pthread_mutex_init(&lat[i].mu, NULL);
    }
    double ph = secs / 2, wall[3] = {0}, cpu[3] = {0};
    pthread_t wt;
    pthread_create(&wt, NULL, writer, NULL);
    sleep_s(0.5);

    int fds[2];
    if (pipe(fds) < 0)
        die("pipe", "failed");
    web = fork();
    if (web == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        close(fds[1]);
        execl(ard, ard, "web", "--listen", "127.0.0.1:0", "--no-token", (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    FILE *wf = fdopen(fds[0], "r");
    char line[256] = "";
    int port = 0;
    if (!wf || !fgets(line, sizeof line, wf) || !strstr(line, "127.0.0.1:") ||
        sscanf(strstr(line, "127.0.0.1:") + 10, "%d", &port) != 1)
        die("ard web did not start", line);
    mg_init_library(MG_FEATURES_WEBSOCKET);

    /* Phase 1: page clients. */
    struct mg_connection *cl[CLIENTS];
    for (int i = 0; i < CLIENTS; i++) {
        char err[256] = "";
        cl[i] = mg_connect_websocket_client("127.0.0.1", port, 0, err, sizeof err, "/ws", NULL,
                                            on_page, NULL, NULL);
        if (!cl[i])
            die("page client", err);
        const char *sub = "sub bench.sig 1000 a b c t";
        mg_websocket_client_write(cl[i], MG_WEBSOCKET_OPCODE_TEXT, sub, strlen(sub));
    }
    sleep_s(1);
    double c0 = cpu_s(web);
    int64_t w0 = ard_now_ns();
    atomic_store(&phase, 1);
    sleep_s(ph);
    atomic_store(&phase, 0);
    wall[1] = (double)(ard_now_ns() - w0) * 1e-9;
    cpu[1] = cpu_s(web) - c0;
    for (int i = 0; i < CLIENTS; i++)
        mg_close_connection(cl[i]);

    /* Phase 2: Foxglove clients. civetweb's client has no subprotocol argument: the
     * Sec-WebSocket-Protocol header rides after its extensions header. */
    for (int i = 0; i < CLIENTS; i++) {
        char err[256] = "";
        cl[i] = mg_connect_websocket_client_extensions(
            "127.0.0.1", port, 0, err, sizeof err, "/", NULL,
            "x-none\r\nSec-WebSocket-Protocol: foxglove.websocket.v1", on_fox, NULL, NULL);
        if (!cl[i])
            die("Foxglove client", err);
        for (int k = 0; k < 100 && !atomic_load(&chan_id); k++)
            sleep_s(0.02);
        if (!atomic_load(&chan_id))
            die("Foxglove client", "no advertise of /bench/sig");
        char sub[128];
        snprintf(sub, sizeof sub,
                 "{\"op\":\"subscribe\",\"subscriptions\":[{\"id\":%d,\"channelId\":%u}]}", i + 1,
                 atomic_load(&chan_id));
        mg_websocket_client_write(cl[i], MG_WEBSOCKET_OPCODE_TEXT, sub, strlen(sub));
    }
    sleep_s(1);
    c0 = cpu_s(web);
    w0 = ard_now_ns();
    atomic_store(&phase, 2);
    sleep_s(ph);
    atomic_store(&phase, 3);
    wall[2] = (double)(ard_now_ns() - w0) * 1e-9;
    cpu[2] = cpu_s(web) - c0;
    pthread_join(wt, NULL);
    for (int i = 0; i < CLIENTS; i++)
        mg_close_connection(cl[i]);
    kill(web, SIGTERM);
    int stw = 0;
    waitpid(web, &stw, 0);

    printf("fox_bench: %d clients of a %.0f Hz connection (4 fields), %.1f s per phase\n", CLIENTS,
           RATE, ph);
    printf("  ard web CPU, page protocol (1 ms buckets)   %5.1f %% of a core\n",
           100 * cpu[1] / wall[1]);
    printf("  ard web CPU, Foxglove (every message)       %5.1f %% of a core  (ratio %.2f)\n",
           100 * cpu[2] / wall[2], cpu[1] > 0 ? (cpu[2] / wall[2]) / (cpu[1] / wall[1]) : 0);
    printf("  messages received: page %.0f/s, Foxglove %.0f/s (all clients)\n",
           (double)atomic_load(&got[1]) / wall[1], (double)atomic_load(&got[2]) / wall[2]);
    printf("  writer rate: page phase %.0f Hz, Foxglove phase %.0f Hz\n",
           (double)atomic_load(&sent[1]) / wall[1], (double)atomic_load(&sent[2]) / wall[2]);
    report("latency send -> page client (te)", &lat[1]);
    report("latency send -> Foxglove client", &lat[2]);
    char path[128];
    snprintf(path, sizeof path, "/dev/shm/ard.%s.bench.sig", dom);
    unlink(path);
    return WIFEXITED(stw) && WEXITSTATUS(stw) == 0 ? 0 : 1;
}
