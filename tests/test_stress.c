/*
 * test_stress.c - no torn packets, no hangs (DESIGN §2): a writer at full speed, several
 * readers in their own processes (ard_rec, ard_tryrec, ard_rec_timed) that verify every
 * packet they get. Optionally the writer is SIGKILLed at random moments and restarted.
 *
 *   test_stress --size BYTES --count N [--readers R] [--timeout S]
 *       one writer sends N packets, then a final "stop" packet
 *   test_stress --size BYTES --restarts K [--count N] [--readers R] [--timeout S]
 *       K writers are killed at random moments, then one sends N packets and "stop"
 *
 * Packet layout (8-byte words): w[0] = sequence number the writer expects the library to
 * give it, w[1] = 1 for the final packet else 0, w[i] = mix(w[0], i). A packet made of
 * pieces of two packets fails the mix check. Readers also check that the library's info.seq
 * equals w[0], that sequence numbers strictly increase (across writer restarts too), that
 * info.skipped is consistent and that send times do not go back.
 *
 * A watchdog in the parent fails the run if a reader makes no progress for 60 s while the
 * writer sends, if readers do not finish within 60 s after the final packet, or after
 * --timeout seconds in all. Exit status 0 only if every count of errors is zero.
 */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ardnet.h"

#define MAX_READERS 8
#define CONN "stress"
#define STALL_NS (60 * 1000000000LL)

enum rmode { MODE_REC, MODE_TRYREC, MODE_TIMED };
static const char *const mode_names[] = {"rec", "tryrec", "rec_timed"};

struct reader_stats {
    _Atomic uint64_t got;   /* calls that returned a packet */
    _Atomic uint64_t fresh; /* of which new */
    uint64_t same;          /* tryrec: same packet again */
    uint64_t torn;          /* packets failing the pattern check */
    uint64_t order;         /* seq not increasing, or same packet not the same */
    uint64_t seq_mismatch;  /* info.seq != w[0] */
    uint64_t skip_err;      /* info.skipped inconsistent */
    uint64_t time_err;      /* send time went back */
    uint64_t call_err;      /* unexpected return codes */
    uint64_t max_skipped;
    uint64_t last_seq;
    _Atomic int attached; /* ard_init done */
    _Atomic int finished; /* saw the final packet */
};

struct shared {
    _Atomic uint64_t sent; /* packets sent by all writers */
    _Atomic int in_send;   /* the writer is inside ard_send */
    _Atomic int writer_ready;
    struct reader_stats r[MAX_READERS];
};

static struct shared *sh;
static size_t size = 64;
static uint64_t count = 100000;
static int readers = 3;
static int restarts = 0;
static int timeout_s = 600;

static uint64_t mix(uint64_t seq, uint64_t i)
{
    return seq * 0x9E3779B97F4A7C15ull ^ (i + 1) * 0xD6E8FEB86659FD93ull;
}

static void fill(uint64_t *w, size_t words, uint64_t seq, uint64_t final)
{
    w[0] = seq;
    w[1] = final;
    for (size_t i = 2; i < words; i++)
        w[i] = mix(seq, i);
}

/* Index of the first bad word, or 0 if the packet is whole. */
static size_t check(const uint64_t *w, size_t words)
{
    if (w[1] > 1)
        return 1;
    for (size_t i = 2; i < words; i++)
        if (w[i] != mix(w[0], i))
            return i;
    return 0;
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void sleep_ns(int64_t ns)
{
    struct timespec ts = {ns / 1000000000, ns % 1000000000};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

/* ---- reader ------------------------------------------------------------------------------ */

static int reader_main(int idx)
{
    enum rmode mode = (enum rmode)(idx % 3);
    struct reader_stats *st = &sh->r[idx];
    ard_port *in = ard_create("in", ARD_IN, size, NULL);
    char *argv[] = {"reader", "--ard", "in=" CONN, NULL};
    int argc = 3;
    if (in == NULL || ard_init(&argc, argv) != 0) {
        fprintf(stderr, "reader %d: %s\n", idx, ard_errdetail());
        return 2;
    }
    atomic_store(&st->attached, 1);
    size_t words = size / 8;
    uint64_t *w = malloc(size);
    uint64_t last_w0 = 0;
    int64_t last_mono = 0;
    int reports = 0;
    for (;;) {
        int rc;
        if (mode == MODE_REC)
            rc = ard_rec(in, w);
        else if (mode == MODE_TRYREC)
            rc = ard_tryrec(in, w);
        else
            rc = ard_rec_timed(in, w, 100000000);
        bool fresh;
        if (mode == MODE_TRYREC && (rc == 1 || rc == 0)) {
            fresh = rc == 1;
            if (!fresh)
                sched_yield(); /* polling, but polite to the other tests on the machine */
        } else if (rc == 0) {
            fresh = true;
        } else if (rc == ARD_ENODATA || rc == ARD_ETIMEDOUT) {
            if (mode == MODE_TRYREC)
                sched_yield();
            continue;
        } else {
            if (st->call_err++ < 5)
                fprintf(stderr, "reader %d: rc %d: %s\n", idx, rc, ard_errdetail());
            continue;
        }
        struct ard_info info = ard_port_info(in);
        size_t bad = check(w, words);
        if (bad) {
            if (reports++ < 5)
                fprintf(stderr,
                        "reader %d: TORN packet seq %" PRIu64 ": word %zu is %#" PRIx64
                        ", want %#" PRIx64 "\n",
                        idx, w[0], bad, w[bad], bad == 1 ? 0 : mix(w[0], bad));
            st->torn++;
        }
        if (info.seq != w[0]) {
            if (reports++ < 5)
                fprintf(stderr, "reader %d: info.seq %" PRIu64 " but packet %" PRIu64 "\n", idx,
                        info.seq, w[0]);
            st->seq_mismatch++;
        }
        if (fresh) {
            if (info.seq <= st->last_seq || w[0] <= last_w0) {
                if (reports++ < 5)
                    fprintf(stderr, "reader %d: seq %" PRIu64 " after %" PRIu64 "\n", idx, info.seq,
                            st->last_seq);
                st->order++;
            }
            uint64_t want_skip = st->last_seq ? info.seq - st->last_seq - 1 : 0;
            if (info.seq > st->last_seq && info.skipped != want_skip)
                st->skip_err++;
            if (info.skipped > st->max_skipped)
                st->max_skipped = info.skipped;
            if (info.mono_ns < last_mono)
                st->time_err++;
            last_mono = info.mono_ns;
            st->last_seq = info.seq;
            last_w0 = w[0];
            atomic_fetch_add_explicit(&st->fresh, 1, memory_order_relaxed);
        } else {
            st->same++;
            if (info.seq != st->last_seq || w[0] != last_w0)
                st->order++;
        }
        atomic_fetch_add_explicit(&st->got, 1, memory_order_relaxed);
        if (!bad && w[1] == 1)
            break;
    }
    atomic_store(&st->finished, 1);
    free(w);
    ard_fini();
    return 0;
}

/* ---- writer ------------------------------------------------------------------------------ */

/* Sends `n` packets (forever if n == 0), then the final packet if `final`. */
static int writer_main(uint64_t n, bool final)
{
    ard_port *out = ard_create("out", ARD_OUT, size, NULL);
    char *argv[] = {"writer", "--ard", "out=" CONN, NULL};
    int argc = 3;
    if (out == NULL || ard_init(&argc, argv) != 0) {
        fprintf(stderr, "writer: %s\n", ard_errdetail());
        return 2;
    }
    struct ard_conn_stat cs;
    if (ard_conn_stat(NULL, CONN, &cs) != 0) {
        fprintf(stderr, "writer: ard_conn_stat: %s\n", ard_errdetail());
        return 2;
    }
    atomic_store(&sh->writer_ready, 1);
    size_t words = size / 8;
    uint64_t *w = malloc(size);
    uint64_t seq = cs.seq;
    for (uint64_t i = 0; n == 0 || i < n + (final ? 1 : 0); i++) {
        seq++;
        fill(w, words, seq, final && i == n);
        atomic_store_explicit(&sh->in_send, 1, memory_order_relaxed);
        int rc = ard_send(out, w);
        atomic_store_explicit(&sh->in_send, 0, memory_order_relaxed);
        if (rc != 0 || ard_port_info(out).seq != seq) {
            fprintf(stderr, "writer: send rc %d, seq %" PRIu64 " want %" PRIu64 ": %s\n", rc,
                    ard_port_info(out).seq, seq, ard_errdetail());
            return 3;
        }
        atomic_fetch_add_explicit(&sh->sent, 1, memory_order_relaxed);
    }
    free(w);
    ard_fini();
    return 0;
}

/* ---- parent ------------------------------------------------------------------------------ */

static pid_t reader_pids[MAX_READERS];

static pid_t spawn(int (*fn)(int), int arg)
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        exit(1);
    }
    if (pid == 0)
        _exit(fn(arg));
    return pid;
}

static int run_reader(int idx)
{
    return reader_main(idx);
}

static int run_writer_forever(int unused)
{
    (void)unused;
    return writer_main(0, false);
}

static int run_writer_final(int unused)
{
    (void)unused;
    return writer_main(count, true);
}

static void kill_all(pid_t writer)
{
    if (writer > 0)
        kill(writer, SIGKILL);
    for (int i = 0; i < readers; i++)
        if (reader_pids[i] > 0)
            kill(reader_pids[i], SIGKILL);
}

static uint64_t rng_state;

static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static void usage(void)
{
    fprintf(stderr, "usage: test_stress --size BYTES [--count N] [--restarts K] [--readers R] "
                    "[--timeout S]\n");
    exit(64);
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (i + 1 >= argc)
            usage();
        const char *o = argv[i], *v = argv[++i];
        if (strcmp(o, "--size") == 0)
            size = strtoul(v, NULL, 10);
        else if (strcmp(o, "--count") == 0)
            count = strtoull(v, NULL, 10);
        else if (strcmp(o, "--readers") == 0)
            readers = atoi(v);
        else if (strcmp(o, "--restarts") == 0)
            restarts = atoi(v);
        else if (strcmp(o, "--timeout") == 0)
            timeout_s = atoi(v);
        else
            usage();
    }
    if (size < 16 || size % 8 != 0 || readers < 1 || readers > MAX_READERS || count < 1)
        usage();

    char domain[64];
    snprintf(domain, sizeof domain, "t_stress_%d", (int)getpid());
    setenv("ARD_DOMAIN", domain, 1);
    unsetenv("ARD_SPIN_NS");
    sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    rng_state = (uint64_t)now_ns() ^ (uint64_t)getpid() << 32;
    if (rng_state == 0)
        rng_state = 1;
    printf("stress: %zu-byte packets, %" PRIu64 " packets, %d readers, %d writer restarts, "
           "domain %s, seed %#" PRIx64 "\n",
           size, count, readers, restarts, domain, rng_state);

    for (int i = 0; i < readers; i++)
        reader_pids[i] = spawn(run_reader, i);

    int64_t start = now_ns(), deadline = start + (int64_t)timeout_s * 1000000000;
    int failed = 0;
    /* Readers first, so that every packet is sent while they read. */
    for (int i = 0; i < readers && !failed; i++)
        while (!atomic_load(&sh->r[i].attached) && !failed) {
            int st;
            if (waitpid(reader_pids[i], &st, WNOHANG) == reader_pids[i]) {
                fprintf(stderr, "FAIL: reader %d could not attach\n", i);
                reader_pids[i] = 0;
                failed = 1;
            }
            sleep_ns(1000000);
        }
    pid_t writer = 0;
    int kills = 0, mid_send = 0, before_ready = 0;

    /* Writers killed at random moments: during ard_init, between and in the middle of sends. */
    for (int k = 0; k < restarts && !failed; k++) {
        atomic_store(&sh->writer_ready, 0);
        writer = spawn(run_writer_forever, 0);
        sleep_ns((int64_t)(rnd() % 8000000) + 200000);
        int in_send = atomic_load(&sh->in_send);
        bool ready = atomic_load(&sh->writer_ready);
        kill(writer, SIGKILL);
        int st;
        waitpid(writer, &st, 0);
        writer = 0;
        if (!WIFSIGNALED(st)) {
            fprintf(stderr, "FAIL: writer %d ended by itself (status %#x)\n", k, st);
            failed = 1;
        }
        kills++;
        mid_send += ready && in_send;
        before_ready += !ready;
        atomic_store(&sh->in_send, 0);
        if (now_ns() > deadline) {
            fprintf(stderr, "FAIL: timeout during writer restarts\n");
            failed = 1;
        }
    }

    /* The last writer runs to the end and sends the final packet. */
    if (!failed)
        writer = spawn(run_writer_final, 0);

    /* Per reader: when it last got a packet, and how many had been sent then. */
    uint64_t last_got[MAX_READERS] = {0}, sent_then[MAX_READERS] = {0};
    int64_t last_change[MAX_READERS];
    for (int i = 0; i < readers; i++)
        last_change[i] = now_ns();
    int64_t writer_done_at = 0;
    int live = readers;
    while (!failed && (live > 0 || writer > 0)) {
        sleep_ns(20000000);
        int st;
        if (writer > 0 && waitpid(writer, &st, WNOHANG) == writer) {
            writer = 0;
            writer_done_at = now_ns();
            if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
                fprintf(stderr, "FAIL: writer failed (status %#x)\n", st);
                failed = 1;
            }
        }
        for (int i = 0; i < readers; i++) {
            if (reader_pids[i] > 0 && waitpid(reader_pids[i], &st, WNOHANG) == reader_pids[i]) {
                reader_pids[i] = 0;
                live--;
                if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
                    fprintf(stderr, "FAIL: reader %d died (status %#x)\n", i, st);
                    failed = 1;
                }
            }
        }
        int64_t t = now_ns();
        uint64_t sent = atomic_load(&sh->sent);
        for (int i = 0; i < readers; i++) {
            uint64_t got = atomic_load(&sh->r[i].got);
            if (got != last_got[i] || reader_pids[i] == 0) {
                last_got[i] = got;
                last_change[i] = t;
                sent_then[i] = sent;
            } else if (t - last_change[i] > STALL_NS && sent != sent_then[i]) {
                fprintf(stderr,
                        "FAIL: reader %d (%s) HUNG: no packet for 60 s while the writer "
                        "sent %" PRIu64 " packets\n",
                        i, mode_names[i % 3], sent - sent_then[i]);
                failed = 1;
            }
        }
        if (writer_done_at && t - writer_done_at > STALL_NS && live > 0) {
            fprintf(stderr, "FAIL: %d reader(s) HUNG: not finished 60 s after the final packet\n",
                    live);
            failed = 1;
        }
        if (t > deadline) {
            fprintf(stderr, "FAIL: TIMEOUT after %d s (writer %s, %d readers running)\n", timeout_s,
                    writer > 0 ? "running" : "done", live);
            failed = 1;
        }
    }
    if (failed)
        kill_all(writer);
    while (wait(NULL) > 0)
        ;

    double secs = (double)(now_ns() - start) / 1e9;
    printf("writer: %" PRIu64 " packets sent in %.1f s", atomic_load(&sh->sent), secs);
    if (restarts)
        printf("; %d writers killed (%d in the middle of a send, %d before ard_init returned)",
               kills, mid_send, before_ready);
    printf("\n");
    uint64_t errors = 0;
    for (int i = 0; i < readers; i++) {
        struct reader_stats *r = &sh->r[i];
        uint64_t e = r->torn + r->order + r->seq_mismatch + r->skip_err + r->time_err + r->call_err;
        errors += e;
        printf("reader %d (%-9s): %" PRIu64 " packets verified (%" PRIu64 " new, %" PRIu64
               " re-read), last seq %" PRIu64 ", max skipped %" PRIu64 "; torn %" PRIu64
               ", order %" PRIu64 ", seq/info %" PRIu64 ", skipped %" PRIu64 ", time %" PRIu64
               ", call %" PRIu64 "%s\n",
               i, mode_names[i % 3], atomic_load(&r->got), atomic_load(&r->fresh), r->same,
               r->last_seq, r->max_skipped, r->torn, r->order, r->seq_mismatch, r->skip_err,
               r->time_err, r->call_err, atomic_load(&r->finished) ? "" : " (NOT FINISHED)");
        if (!atomic_load(&r->finished))
            failed = 1;
    }
    if (restarts && atomic_load(&sh->sent) < count)
        failed = 1;
    if (!restarts && atomic_load(&sh->sent) != count + 1) {
        fprintf(stderr, "FAIL: writer sent %" PRIu64 ", want %" PRIu64 "\n", atomic_load(&sh->sent),
                count + 1);
        failed = 1;
    }
    if (ard_domain_unlink(domain) < 0)
        fprintf(stderr, "ard_domain_unlink: %s\n", ard_errdetail());
    if (failed || errors) {
        printf("FAIL: %" PRIu64 " errors%s\n", errors, failed ? ", see above" : "");
        return 1;
    }
    printf("PASS: zero torn packets, zero order errors, no hangs\n");
    return 0;
}
