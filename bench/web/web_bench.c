/*
 * web_bench - `ard web` under 10 plotting clients, next to `ard show -f` in the same run.
 *
 * A writer thread sends a 4-field packet (a:f64 b:f64 c:f64 d:f64) at 10 kHz, paced by
 * ard_period, and times each ard_send. Four phases: (1) the writer alone; (2) `ard show -f
 * --format csv` follows the connection; (3) a second `ard show -f` too (what any second
 * blocking reader costs the writer); (4) instead of the second show, `ard web` with
 * WEB_CLIENTS WebSocket clients (civetweb's client, not a browser), each subscribed to the 4
 * fields with 1 ms buckets. Measured: the server's CPU in phase 4 (utime + stime from /proc
 * over the window, in % of one core); latency from a packet's send time (the writer's
 * CLOCK_MONOTONIC stamp, taken by ard_send) to a client receiving the newest point of each
 * message ("te": the newest packet of the buckets sent), and to `ard show -f` printing it
 * (its csv line, read from a pipe), both in phase 4; the writer's rate and ard_send times in
 * every phase (the server must cost the writer no more than any other reader).
 *
 *   web_bench [SECONDS]   (default 16: four phases of a quarter each)
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

#define WEB_CLIENTS 10
#define RATE 10000.0
#define MAXS 400000

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

static void report(const char *what, struct samples *s, double scale, const char *unit)
{
    if (s->n == 0) {
        printf("  %-34s no samples\n", what);
        return;
    }
    qsort(s->v, s->n, sizeof *s->v, cmp64);
    printf("  %-34s n %7zu  p50 %8.1f  p99 %8.1f  max %8.1f %s\n", what, s->n,
           (double)s->v[s->n / 2] * scale, (double)s->v[s->n * 99 / 100] * scale,
           (double)s->v[s->n - 1] * scale, unit);
}

static struct samples lat_web, lat_show;
static atomic_int
    phase; /* 0 not counted, 1 alone, 2 show, 3 show + 2nd show, 4 show + web, 5 stop */
static struct samples sendp[5];
static atomic_uint_fast64_t sent[5];
static const char *domain;

static void *writer(void *arg)
{
    (void)arg;
    ard_port *p = ard_create_on("web_bench_w", "bench.sig", ARD_OUT, 32, "a:f64 b:f64 c:f64 d:f64");
    if (!p) {
        fprintf(stderr, "web_bench: writer: %s\n", ard_errdetail());
        exit(111);
    }
    ard_period per;
    if (ard_period_init(&per, (int64_t)(1e9 / RATE)) < 0)
        exit(111);
    double pkt[4];
    for (uint64_t k = 0;; k++) {
        int ph = atomic_load(&phase);
        if (ph == 5)
            break;
        double t = (double)k / RATE;
        pkt[0] = sin(2 * M_PI * 7 * t);
        pkt[1] = cos(2 * M_PI * 3 * t);
        pkt[2] = fmod(t, 1.0);
        pkt[3] = (double)(k & 1023);
        int64_t t0 = ard_now_ns();
        if (ard_send(p, pkt) < 0)
            exit(111);
        int64_t t1 = ard_now_ns();
        if (ph >= 1 && ph <= 4) {
            add(&sendp[ph], t1 - t0);
            atomic_fetch_add(&sent[ph], 1);
        }
        ard_period_wait(&per);
    }
    ard_close(p);
    return NULL;
}

static int on_data(struct mg_connection *c, int bits, char *data, size_t len, void *ud)
{
    (void)c;
    (void)ud;
    int64_t now = ard_now_ns();
    if ((bits & 0x0f) != MG_WEBSOCKET_OPCODE_TEXT || atomic_load(&phase) != 4)
        return 1;
    char buf[64];
    const char *b = memmem(data, len, "\"b\":[[", 6);
    const char *tl = memmem(data, len, "\"te\":", 5);
    if (!b || !tl)
        return 1;
    size_t off = (size_t)(tl - data) + 5, n = len - off < 24 ? len - off : 24;
    memcpy(buf, data + off, n);
    buf[n] = '\0';
    double s = strtod(buf, NULL);
    add(&lat_web, now - (int64_t)llround(s * 1e9));
    return 1;
}

static pid_t spawn(char *const av[], int *out)
{
    int fds[2];
    if (out && pipe(fds) < 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        if (out) {
            dup2(fds[1], 1);
            close(fds[0]);
            close(fds[1]);
        }
        execv(av[0], av);
        _exit(127);
    }
    if (out) {
        close(fds[1]);
        *out = fds[0];
    }
    return pid;
}

static void *show_reader(void *arg)
{
    FILE *f = fdopen(*(int *)arg, "r");
    char line[512];
    while (f && fgets(line, sizeof line, f)) {
        int64_t now = ard_now_ns();
        long long seq, mono;
        if (sscanf(line, "%lld,%lld,", &seq, &mono) == 2 && atomic_load(&phase) == 4)
            add(&lat_show, now - mono);
    }
    if (f)
        fclose(f);
    return NULL;
}

static void *drain(void *arg)
{
    char buf[65536];
    int fd = *(int *)arg;
    while (read(fd, buf, sizeof buf) > 0)
        ;
    close(fd);
    return NULL;
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

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 16;
    if (!(secs >= 1 && secs <= 600)) {
        fprintf(stderr, "usage: web_bench [SECONDS 1..600]\n");
        return 100;
    }
    char dom[64];
    snprintf(dom, sizeof dom, "webbench_%d", (int)getpid());
    domain = dom;
    setenv("ARD_DOMAIN", dom, 1);
    signal(SIGPIPE, SIG_IGN);
    int zero = 1;
    char *noargs[] = {argv[0], NULL};
    if (ard_init(&zero, noargs) < 0) {
        fprintf(stderr, "web_bench: %s\n", ard_errdetail());
        return 111;
    }
    struct samples *all[] = {&lat_web, &lat_show, &sendp[1], &sendp[2], &sendp[3], &sendp[4]};
    for (int i = 0; i < 6; i++) {
        all[i]->cap = MAXS;
        all[i]->v = malloc(MAXS * sizeof(int64_t));
        pthread_mutex_init(&all[i]->mu, NULL);
    }
    double ph = secs / 4, wall[5] = {0};
    pthread_t wt;
    pthread_create(&wt, NULL, writer, NULL);
    sleep_s(0.5);
    /* Phase 1: the writer alone. */
    int64_t w0 = ard_now_ns();
    atomic_store(&phase, 1);
    sleep_s(ph);
    atomic_store(&phase, 0);
    wall[1] = (double)(ard_now_ns() - w0) * 1e-9;
    /* Phase 2: ard show -f follows. */
    int sout;
    char *sav[] = {ARD_BIN, "show", "bench.sig", "-f", "--format", "csv", NULL};
    pid_t show = spawn(sav, &sout);
    pthread_t st;
    pthread_create(&st, NULL, show_reader, &sout);
    sleep_s(0.5);
    double sc0 = cpu_s(show);
    w0 = ard_now_ns();
    atomic_store(&phase, 2);
    sleep_s(ph);
    atomic_store(&phase, 0);
    wall[2] = (double)(ard_now_ns() - w0) * 1e-9;
    double sc1 = cpu_s(show);
    /* Phase 3: a second ard show -f: what any second blocking reader costs the writer. */
    int s2out;
    pid_t show2 = spawn(sav, &s2out);
    pthread_t st2;
    pthread_create(&st2, NULL, drain, &s2out);
    sleep_s(0.5);
    w0 = ard_now_ns();
    atomic_store(&phase, 3);
    sleep_s(ph);
    atomic_store(&phase, 0);
    wall[3] = (double)(ard_now_ns() - w0) * 1e-9;
    kill(show2, SIGINT);
    waitpid(show2, NULL, 0);
    pthread_join(st2, NULL);
    /* Phase 4: ard web and its clients instead. */
    int wout;
    char *wav[] = {ARD_BIN, "web", "--listen", "127.0.0.1:0", "--no-token", NULL};
    pid_t web = spawn(wav, &wout);
    FILE *wf = fdopen(wout, "r");
    char line[256] = "";
    int port = 0;
    if (!wf || !fgets(line, sizeof line, wf) || !strstr(line, "127.0.0.1:") ||
        sscanf(strstr(line, "127.0.0.1:") + 10, "%d", &port) != 1) {
        fprintf(stderr, "web_bench: ard web did not start: %s\n", line);
        kill(web, SIGKILL);
        kill(show, SIGKILL);
        return 111;
    }
    struct mg_connection *cl[WEB_CLIENTS];
    mg_init_library(MG_FEATURES_WEBSOCKET);
    for (int i = 0; i < WEB_CLIENTS; i++) {
        char err[256] = "";
        cl[i] = mg_connect_websocket_client("127.0.0.1", port, 0, err, sizeof err, "/ws", NULL,
                                            on_data, NULL, NULL);
        if (!cl[i]) {
            fprintf(stderr, "web_bench: client %d: %s\n", i, err);
            kill(web, SIGKILL);
            kill(show, SIGKILL);
            return 111;
        }
        const char *sub = "sub bench.sig 1000 a b c d";
        mg_websocket_client_write(cl[i], MG_WEBSOCKET_OPCODE_TEXT, sub, strlen(sub));
    }
    sleep_s(1); /* settle */
    double c0 = cpu_s(web), sc2 = cpu_s(show);
    w0 = ard_now_ns();
    atomic_store(&phase, 4);
    sleep_s(ph);
    atomic_store(&phase, 5);
    wall[4] = (double)(ard_now_ns() - w0) * 1e-9;
    double c1 = cpu_s(web), sc3 = cpu_s(show);
    pthread_join(wt, NULL);
    for (int i = 0; i < WEB_CLIENTS; i++)
        mg_close_connection(cl[i]);
    kill(web, SIGTERM);
    kill(show, SIGINT);
    int stw = 0;
    waitpid(web, &stw, 0);
    waitpid(show, NULL, 0);
    pthread_join(st, NULL);

    printf("web_bench: %d WebSocket clients x 4 fields of a %.0f Hz connection, 1 ms buckets, "
           "%.1f s per phase\n",
           WEB_CLIENTS, RATE, ph);
    printf("  ard web CPU                        %.1f %% of a core\n", 100 * (c1 - c0) / wall[4]);
    printf("  ard show -f CPU (alone / with web) %.1f / %.1f %% of a core\n",
           100 * (sc1 - sc0) / wall[2], 100 * (sc3 - sc2) / wall[4]);
    report("latency send -> WebSocket client", &lat_web, 1e-3, "us");
    report("latency send -> ard show -f line", &lat_show, 1e-3, "us");
    printf("  writer rate: alone / show / 2 shows / show + web: %.0f / %.0f / %.0f / %.0f Hz\n",
           (double)atomic_load(&sent[1]) / wall[1], (double)atomic_load(&sent[2]) / wall[2],
           (double)atomic_load(&sent[3]) / wall[3], (double)atomic_load(&sent[4]) / wall[4]);
    report("ard_send, writer alone", &sendp[1], 1e-3, "us");
    report("ard_send, ard show -f reading", &sendp[2], 1e-3, "us");
    report("ard_send, two ard show -f", &sendp[3], 1e-3, "us");
    report("ard_send, show + web + 10 clients", &sendp[4], 1e-3, "us");
    char path[128];
    snprintf(path, sizeof path, "/dev/shm/ard.%s.bench.sig", dom);
    unlink(path);
    return WIFEXITED(stw) && WEXITSTATUS(stw) == 0 ? 0 : 1;
}
