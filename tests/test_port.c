/*
 * test_port.c - the semantics of a connection (DESIGN §2), proved with real processes.
 *
 * The test binary doubles as the block under test: "test_port --helper PORT in|out SIZE TYPE
 * [--ard options]" creates one port, runs ard_init and then obeys commands on stdin
 * (send V, sendn N V0, rec, tryrec, timed NS, poll, close, quit), answering each with one line
 *   "r RC VALUE SEQ SKIPPED MONO REAL DETAIL"
 * so that the parent can drive several blocks step by step and check every answer. VALUE is
 * the packet's first 8 bytes; the receive buffer is filled with 0xEE before every call, so
 * "nothing copied" shows as VALUE 0xEEEEEEEEEEEEEEEE.
 *
 * Run "test_port root" for the tests that need root (another uid); they skip (77) otherwise.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ardnet.h"
#include "testutil.h"

#define NOTHING 0xEEEEEEEEEEEEEEEEull
#define REPLY_TIMEOUT_MS 30000
#define QUIET_MS 300 /* how long a blocked rec must stay silent */

static char exe_path[PATH_MAX];
static char domain[64];

static long first_bad_byte(const unsigned char *pkt, size_t size, uint64_t v);

/* ======================================================================================
 * Helper side: one block with one port, driven over stdin/stdout
 * ==================================================================================== */

static void fill(unsigned char *pkt, size_t size, uint64_t v)
{
    for (size_t i = 0; i < size; i++)
        pkt[i] = (unsigned char)(v + i);
    memcpy(pkt, &v, size < 8 ? size : 8);
}

static void answer(int rc, uint64_t value, const struct ard_info *in)
{
    printf("r %d %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRId64 " %" PRId64 " %s\n", rc, value,
           in->seq, in->skipped, in->mono_ns, in->real_ns, rc < 0 ? ard_errdetail() : "");
    fflush(stdout);
}

/* -1 if pkt is exactly what fill(pkt, size, v) wrote, else the first byte that differs. */
static long first_bad_byte(const unsigned char *pkt, size_t size, uint64_t v)
{
    size_t head = size < 8 ? size : 8;
    for (size_t i = 0; i < head; i++)
        if (pkt[i] != ((const unsigned char *)&v)[i])
            return (long)i;
    for (size_t i = head; i < size; i++)
        if (pkt[i] != (unsigned char)(v + i))
            return (long)i;
    return -1;
}

/* Answer to a receive: the DETAIL field says whether the whole packet is the one its first
 * 8 bytes name. */
static void answer_packet(int rc, uint64_t value, const struct ard_info *in,
                          const unsigned char *pkt, size_t size)
{
    if (rc < 0) {
        answer(rc, value, in);
        return;
    }
    long bad = first_bad_byte(pkt, size, value);
    char what[64];
    if (bad < 0)
        snprintf(what, sizeof what, "whole");
    else
        snprintf(what, sizeof what, "torn at byte %ld", bad);
    printf("r %d %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRId64 " %" PRId64 " %s\n", rc, value,
           in->seq, in->skipped, in->mono_ns, in->real_ns, what);
    fflush(stdout);
}

static int helper_main(int argc, char **argv)
{
    if (argc < 6)
        return 2;
    const char *name = argv[2];
    enum ard_dir dir = strcmp(argv[3], "out") == 0 ? ARD_OUT : ARD_IN;
    size_t size = strtoul(argv[4], NULL, 10);
    const char *type = strcmp(argv[5], "-") == 0 ? NULL : argv[5];

    struct ard_info none = {0};
    ard_port *p = ard_create(name, dir, size, type);
    if (p == NULL) {
        answer(ard_lasterror(), (uint64_t)getpid(), &none);
        return 0;
    }
    /* argv for ard_init: the program name, then the --ard options. */
    int n = argc - 5;
    char **av = calloc((size_t)n + 1, sizeof *av);
    av[0] = argv[0];
    for (int i = 1; i < n; i++)
        av[i] = argv[5 + i];
    int rc = ard_init(&n, av);
    if (rc == 0 && n != 1) {
        printf("r -100 0 0 0 0 0 ard_init left %d arguments, first '%s'\n", n - 1, av[1]);
        fflush(stdout);
        return 0;
    }
    answer(rc, (uint64_t)getpid(), &none);
    if (rc < 0)
        return 0;

    size = ard_port_size(p);
    unsigned char *pkt = malloc(size < 8 ? 8 : size);
    char line[256];
    while (fgets(line, sizeof line, stdin)) {
        unsigned long long a = 0, b = 0;
        long long t = 0;
        struct ard_info info;
        uint64_t v = NOTHING;
        if (sscanf(line, "send %llu", &a) == 1) {
            fill(pkt, size, a);
            rc = ard_send(p, pkt);
            info = ard_port_info(p);
            answer(rc, a, &info);
        } else if (sscanf(line, "sendn %llu %llu", &a, &b) == 2) {
            rc = 0;
            for (unsigned long long i = 0; i < a && rc == 0; i++) {
                fill(pkt, size, b + i);
                rc = ard_send(p, pkt);
            }
            info = ard_port_info(p);
            answer(rc, b + a - 1, &info);
        } else if (strncmp(line, "rec", 3) == 0 || strncmp(line, "tryrec", 6) == 0 ||
                   sscanf(line, "timed %lld", &t) == 1) {
            memset(pkt, 0xEE, size < 8 ? 8 : size);
            if (line[0] == 'r')
                rc = ard_rec(p, pkt);
            else if (line[0] == 't' && line[1] == 'r')
                rc = ard_tryrec(p, pkt);
            else
                rc = ard_rec_timed(p, pkt, t);
            memcpy(&v, pkt, 8);
            info = ard_port_info(p);
            answer_packet(rc, v, &info, pkt, size);
        } else if (sscanf(line, "poll %llu", &a) == 1) {
            /* Read until the packet whose first 8 bytes are a has come (the parent stops us at
             * random moments meanwhile), checking every copy whole; answer how many were not. */
            uint64_t torn = 0, got = 0;
            for (;;) {
                rc = ard_tryrec(p, pkt);
                if (rc < 0 && rc != ARD_ENODATA)
                    break;
                if (rc < 0)
                    continue;
                memcpy(&v, pkt, 8);
                got++;
                if (first_bad_byte(pkt, size, v) >= 0)
                    torn++;
                if (v >= a)
                    break;
            }
            info = ard_port_info(p);
            printf("r %d %" PRIu64 " %" PRIu64 " %" PRIu64 " 0 0 torn %" PRIu64 " of %" PRIu64 "\n",
                   rc < 0 ? rc : 0, v, info.seq, torn, torn, got);
            fflush(stdout);
        } else if (strncmp(line, "close", 5) == 0) {
            ard_close(p);
            p = NULL;
            answer(0, 0, &none);
        } else if (strncmp(line, "quit", 4) == 0) {
            break;
        } else {
            printf("r -101 0 0 0 0 0 unknown command %s", line);
            fflush(stdout);
        }
    }
    ard_fini();
    free(pkt);
    free(av);
    return 0;
}

/* ======================================================================================
 * Parent side
 * ==================================================================================== */

struct helper {
    pid_t pid;
    FILE *to;
    int from;
    char buf[4096];
    size_t len;
};

struct reply {
    int rc;
    uint64_t value, seq, skipped;
    int64_t mono, real;
    char detail[1024];
};

#define MAX_HELPERS 16
static struct helper helpers[MAX_HELPERS];

struct spawn_opts {
    uid_t uid; /* 0: keep */
    gid_t gid;
    int ngroups; /* supplementary groups when changing uid */
    gid_t groups[4];
};

/* Start a helper block; returns it with its init answer in *init. */
static struct helper *spawn_as(const struct spawn_opts *o, struct reply *init, const char *name,
                               const char *dir, size_t size, const char *type, ...);
static int read_reply(struct helper *h, struct reply *r, int timeout_ms);

static struct helper *spawn_v(const struct spawn_opts *o, struct reply *init, const char *name,
                              const char *dir, size_t size, const char *type, va_list ap)
{
    struct helper *h = NULL;
    for (int i = 0; i < MAX_HELPERS; i++)
        if (helpers[i].pid == 0) {
            h = &helpers[i];
            break;
        }
    assert_non_null(h);
    char *argv[32];
    char sz[32];
    snprintf(sz, sizeof sz, "%zu", size);
    int n = 0;
    argv[n++] = exe_path;
    argv[n++] = "--helper";
    argv[n++] = (char *)name;
    argv[n++] = (char *)dir;
    argv[n++] = sz;
    argv[n++] = (char *)(type ? type : "-");
    const char *a;
    while ((a = va_arg(ap, const char *)) != NULL && n < 31)
        argv[n++] = (char *)a;
    argv[n] = NULL;

    int in[2], out[2];
    assert_int_equal(pipe2(in, O_CLOEXEC), 0);
    assert_int_equal(pipe2(out, O_CLOEXEC), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        if (o && o->uid != 0) {
            if (setgroups((size_t)o->ngroups, o->groups) < 0 || setgid(o->gid) < 0 ||
                setuid(o->uid) < 0) {
                perror("helper: dropping privileges");
                _exit(3);
            }
        }
        execv(exe_path, argv);
        perror("helper: execv");
        _exit(4);
    }
    close(in[0]);
    close(out[1]);
    h->pid = pid;
    h->to = fdopen(in[1], "w");
    h->from = out[0];
    h->len = 0;
    if (read_reply(h, init, REPLY_TIMEOUT_MS) != 1)
        fail_msg("helper %s %s: no init answer", name, dir);
    return h;
}

static struct helper *spawn_as(const struct spawn_opts *o, struct reply *init, const char *name,
                               const char *dir, size_t size, const char *type, ...)
{
    va_list ap;
    va_start(ap, type);
    struct helper *h = spawn_v(o, init, name, dir, size, type, ap);
    va_end(ap);
    return h;
}

/* Spawn and require ard_init to succeed. Extra arguments: --ard options, NULL-terminated. */
static struct helper *spawn_ok(const char *name, const char *dir, size_t size, const char *type,
                               ...)
{
    struct reply r;
    va_list ap;
    va_start(ap, type);
    struct helper *h = spawn_v(NULL, &r, name, dir, size, type, ap);
    va_end(ap);
    if (r.rc != 0)
        fail_msg("helper %s %s: ard_init: %d %s", name, dir, r.rc, r.detail);
    return h;
}

/* Reads one answer line. 1: got it, 0: timeout, -1: helper closed its output. */
static int read_reply(struct helper *h, struct reply *r, int timeout_ms)
{
    for (;;) {
        char *nl = memchr(h->buf, '\n', h->len);
        if (nl) {
            *nl = '\0';
            memset(r, 0, sizeof *r);
            long long mono = 0, real = 0;
            unsigned long long v = 0, s = 0, k = 0;
            int off = 0;
            if (sscanf(h->buf, "r %d %llu %llu %llu %lld %lld %n", &r->rc, &v, &s, &k, &mono, &real,
                       &off) < 6)
                fail_msg("helper %d: bad answer '%s'", (int)h->pid, h->buf);
            r->value = v;
            r->seq = s;
            r->skipped = k;
            r->mono = mono;
            r->real = real;
            snprintf(r->detail, sizeof r->detail, "%s", h->buf + off);
            size_t used = (size_t)(nl + 1 - h->buf);
            memmove(h->buf, nl + 1, h->len - used);
            h->len -= used;
            if (r->rc <= -100)
                fail_msg("helper %d: %s", (int)h->pid, r->detail);
            return 1;
        }
        struct pollfd pfd = {.fd = h->from, .events = POLLIN};
        int pr = poll(&pfd, 1, timeout_ms);
        if (pr == 0)
            return 0;
        if (pr < 0 && errno == EINTR)
            continue;
        assert_true(pr > 0);
        ssize_t n = read(h->from, h->buf + h->len, sizeof h->buf - 1 - h->len);
        if (n <= 0)
            return -1;
        h->len += (size_t)n;
    }
}

static void post(struct helper *h, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(h->to, fmt, ap);
    va_end(ap);
    fputc('\n', h->to);
    fflush(h->to);
}

static struct reply wait_reply(struct helper *h)
{
    struct reply r;
    int got = read_reply(h, &r, REPLY_TIMEOUT_MS);
    if (got != 1)
        fail_msg("helper %d: %s", (int)h->pid, got == 0 ? "no answer (hung?)" : "died");
    return r;
}

static struct reply cmd(struct helper *h, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(h->to, fmt, ap);
    va_end(ap);
    fputc('\n', h->to);
    fflush(h->to);
    return wait_reply(h);
}

/* The helper must not answer for QUIET_MS: it is blocked. */
static void assert_blocked(struct helper *h)
{
    struct reply r;
    int got = read_reply(h, &r, QUIET_MS);
    if (got != 0)
        fail_msg("helper %d should block but answered rc %d value %" PRIu64, (int)h->pid, r.rc,
                 r.value);
}

static void reap(struct helper *h, int sig)
{
    if (h->pid == 0)
        return;
    if (sig)
        kill(h->pid, sig);
    else
        fputs("quit\n", h->to);
    fclose(h->to);
    close(h->from);
    waitpid(h->pid, NULL, 0);
    h->pid = 0;
}

static void kill_helper(struct helper *h)
{
    reap(h, SIGKILL);
}

static int setup(void **state)
{
    (void)state;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    for (int i = 0; i < MAX_HELPERS; i++)
        reap(&helpers[i], SIGKILL);
    ard_fini();
    if (ard_domain_unlink(domain) < 0)
        fprintf(stderr, "ard_domain_unlink(%s): %s\n", domain, ard_errdetail());
    return 0;
}

static void shm_path(char *buf, size_t len, const char *dom, const char *conn)
{
    snprintf(buf, len, "/dev/shm/ard.%s.%s", dom, conn);
}

/* ======================================================================================
 * Latest value, blocking, polling
 * ==================================================================================== */

static void test_latest_value_reader_skips_what_it_slept_through(void **state)
{
    (void)state;
    struct helper *w = spawn_ok("out", "out", 8, "u64", "--ard", "out=lv", NULL);
    struct helper *r = spawn_ok("in", "in", 8, "u64", "--ard", "in=lv", NULL);
    struct reply a = cmd(w, "send 1");
    assert_int_equal(a.rc, 0);
    a = cmd(r, "rec");
    assert_int_equal(a.rc, 0);
    assert_int_equal(a.value, 1);
    assert_int_equal(a.seq, 1);
    assert_int_equal(a.skipped, 0);

    /* The reader sleeps (it gets no command) while 1000 packets go out. */
    a = cmd(w, "sendn 1000 2");
    assert_int_equal(a.rc, 0);
    assert_int_equal(a.seq, 1001);
    a = cmd(r, "rec");
    assert_int_equal(a.rc, 0);
    assert_int_equal(a.value, 1001); /* the 1000th of the burst */
    assert_string_equal(a.detail, "whole");
    assert_int_equal(a.seq, 1001);
    assert_int_equal(a.skipped, 999);

    /* Reading again gives the same packet, not a queue. */
    a = cmd(r, "tryrec");
    assert_int_equal(a.rc, 0);
    assert_int_equal(a.value, 1001);
    assert_int_equal(a.skipped, 0);

    /* A reader that joins late gets the newest packet; nothing was skipped by it. */
    struct helper *late = spawn_ok("in", "in", 8, "u64", "--ard", "in=lv", NULL);
    a = cmd(late, "tryrec");
    assert_int_equal(a.rc, 1);
    assert_int_equal(a.value, 1001);
    assert_int_equal(a.seq, 1001);
    assert_int_equal(a.skipped, 0);
}

static void test_rec_returns_at_once_when_newer_exists(void **state)
{
    (void)state;
    struct helper *w = spawn_ok("out", "out", 16, "u64[2]", NULL);
    struct helper *r = spawn_ok("out", "in", 16, "u64[2]", NULL);
    assert_int_equal(cmd(w, "send 5").rc, 0);
    /* Nothing else is sent: if rec waited for another packet it would never answer. */
    struct reply a = cmd(r, "rec");
    assert_int_equal(a.rc, 0);
    assert_int_equal(a.value, 5);
    assert_int_equal(cmd(w, "send 6").rc, 0);
    assert_int_equal(cmd(w, "send 7").rc, 0);
    a = cmd(r, "rec");
    assert_int_equal(a.value, 7);
    assert_int_equal(a.skipped, 1);
}

static void test_rec_blocks_until_newer_packet(void **state)
{
    (void)state;
    struct helper *w = spawn_ok("w", "out", 8, NULL, "--ard", "w=blk", NULL);
    struct helper *r = spawn_ok("r", "in", 8, NULL, "--ard", "r=blk", NULL);
    /* Before anything was ever sent, rec blocks. */
    post(r, "rec");
    assert_blocked(r);
    assert_int_equal(cmd(w, "send 1").rc, 0);
    struct reply a = wait_reply(r);
    assert_int_equal(a.rc, 0);
    assert_int_equal(a.value, 1);
    /* The packet it returned is not new any more: rec blocks again. */
    post(r, "rec");
    assert_blocked(r);
    assert_int_equal(cmd(w, "send 2").rc, 0);
    a = wait_reply(r);
    assert_int_equal(a.rc, 0);
    assert_int_equal(a.value, 2);
    assert_int_equal(a.seq, 2);
}

static void test_tryrec_new_same_and_nothing_yet(void **state)
{
    (void)state;
    /* The reader comes first and creates the connection. */
    struct helper *r = spawn_ok("t", "in", 24, "u64 u32 f64", NULL);
    struct reply a = cmd(r, "tryrec");
    assert_int_equal(a.rc, ARD_ENODATA);
    assert_int_equal(a.value, NOTHING);
    assert_int_equal(a.seq, 0);

    struct helper *w = spawn_ok("t", "out", 24, "u64,u32,f64", NULL);
    assert_int_equal(cmd(w, "send 7").rc, 0);
    a = cmd(r, "tryrec");
    assert_int_equal(a.rc, 1);
    assert_int_equal(a.value, 7);
    a = cmd(r, "tryrec");
    assert_int_equal(a.rc, 0);
    assert_int_equal(a.value, 7); /* copied again */
    assert_int_equal(a.seq, 1);
    assert_int_equal(cmd(w, "send 8").rc, 0);
    a = cmd(r, "tryrec");
    assert_int_equal(a.rc, 1);
    assert_int_equal(a.value, 8);
    assert_int_equal(a.seq, 2);
}

static void test_poll_says_new_without_copying(void **state)
{
    (void)state;
    ard_port *o = ard_create("pl", ARD_OUT, 16, "u64[2]");
    ard_port *i = ard_create("pl_in", ARD_IN, 16, "u64[2]");
    assert_non_null(o);
    assert_non_null(i);
    int argc = 3;
    char *argv[] = {"t", "--ard", "pl_in=pl", NULL};
    assert_int_equal(ard_init(&argc, argv), 0);
    assert_int_equal(ard_poll(i), ARD_ENODATA);
    uint64_t v[2] = {5, 5}, got[2] = {0, 0};
    assert_int_equal(ard_send(o, v), 0);
    /* New, and polling does not take it: the port's state is unchanged. */
    assert_int_equal(ard_poll(i), 1);
    assert_int_equal(ard_poll(i), 1);
    assert_int_equal(ard_port_info(i).seq, 0);
    assert_int_equal(ard_tryrec(i, got), 1);
    assert_int_equal(got[1], 5);
    assert_int_equal(ard_poll(i), 0);
    v[0] = v[1] = 6;
    assert_int_equal(ard_send(o, v), 0);
    v[0] = v[1] = 7;
    assert_int_equal(ard_send(o, v), 0);
    assert_int_equal(ard_poll(i), 1);
    assert_int_equal(ard_port_info(i).seq, 1);
    assert_int_equal(ard_tryrec(i, got), 1);
    assert_int_equal(got[0], 7);
    assert_int_equal(ard_port_info(i).skipped, 1);
    assert_int_equal(ard_poll(i), 0);
    /* Misuse. */
    assert_int_equal(ard_poll(o), ARD_EINVAL);
    assert_int_equal(ard_poll(NULL), ARD_EINVAL);
    ard_port *late = ard_create_on("pl_late", "pl", ARD_IN, 16, NULL);
    assert_non_null(late);
    assert_int_equal(ard_poll(late), 1); /* a late reader has not returned anything yet */
}

static void test_poll_sees_another_process_send(void **state)
{
    (void)state;
    struct helper *w = spawn_ok("pp", "out", 64, NULL, NULL);
    ard_port *i = ard_create("pp", ARD_IN, 64, NULL);
    assert_non_null(i);
    int argc = 1;
    char *argv[] = {"t", NULL};
    assert_int_equal(ard_init(&argc, argv), 0);
    assert_int_equal(ard_poll(i), ARD_ENODATA);
    assert_int_equal(cmd(w, "send 9").rc, 0);
    assert_int_equal(ard_poll(i), 1);
    unsigned char buf[64];
    assert_int_equal(ard_tryrec(i, buf), 1);
    assert_int_equal(first_bad_byte(buf, 64, 9), -1);
    assert_int_equal(ard_poll(i), 0);
}

/* ======================================================================================
 * Waiting on many ports
 * ==================================================================================== */

struct waiter {
    pid_t pid;
    int from;
};

#ifndef SYS_futex_waitv
#define SYS_futex_waitv 449
#endif
#if defined(__x86_64__)
#define AUDIT_ARCH_HERE AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define AUDIT_ARCH_HERE AUDIT_ARCH_AARCH64
#endif

/* Make futex_waitv fail with ENOSYS in this process from now on, as on a kernel before 5.16
 * (a seccomp filter: the library's real fallback path runs, nothing is faked inside it). */
static int deny_futex_waitv(void)
{
#ifdef AUDIT_ARCH_HERE
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_HERE, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_futex_waitv, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {.len = sizeof f / sizeof f[0], .filter = f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        return -1;
    return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
#else
    return -1;
#endif
}

/* Fork a process (it inherits our ports) that calls ard_wait once and writes
 * "RC b0b1b2..." to a pipe; with no_waitv, under deny_futex_waitv ("setup" if that fails). */
static struct waiter wait_in_child_as(ard_port **ports, size_t n, int64_t timeout_ns, bool no_waitv)
{
    int pfd[2];
    assert_int_equal(pipe(pfd), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(pfd[0]);
        if (no_waitv && deny_futex_waitv() != 0)
            _exit(write(pfd[1], "setup\n", 6) == 6 ? 0 : 1);
        static unsigned char ready[512];
        int rc = ard_wait(ports, n, timeout_ns, ready);
        char line[1024];
        int len = snprintf(line, sizeof line, "%d ", rc);
        for (size_t i = 0; i < n && len < (int)sizeof line - 2; i++)
            line[len++] = ready[i] ? '1' : '0';
        line[len++] = '\n';
        _exit(write(pfd[1], line, (size_t)len) == len ? 0 : 1);
    }
    close(pfd[1]);
    return (struct waiter){pid, pfd[0]};
}

static struct waiter wait_in_child(ard_port **ports, size_t n, int64_t timeout_ns)
{
    return wait_in_child_as(ports, n, timeout_ns, false);
}

/* The system call process `pid` sleeps in once it sleeps in futex or futex_waitv, or -1. */
static long sleeping_in(pid_t pid)
{
    char path[64], buf[128];
    snprintf(path, sizeof path, "/proc/%d/syscall", (int)pid);
    for (int i = 0; i < 20000; i++) {
        int fd = open(path, O_RDONLY);
        ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
        if (fd >= 0)
            close(fd);
        if (n > 0) {
            buf[n] = '\0';
            long nr = strtol(buf, NULL, 10);
            if (nr == SYS_futex || nr == SYS_futex_waitv)
                return nr;
        }
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    return -1;
}

/* The waiter's answer; "" if it has not answered within ms. */
static const char *waiter_answer(struct waiter *w, int ms)
{
    static char buf[1024];
    struct pollfd pfd = {.fd = w->from, .events = POLLIN};
    if (poll(&pfd, 1, ms) <= 0)
        return "";
    ssize_t n = read(w->from, buf, sizeof buf - 1);
    assert_true(n > 0);
    buf[n - 1] = '\0';
    close(w->from);
    assert_int_equal(waitpid(w->pid, NULL, 0), w->pid);
    return buf;
}

static void test_wait_on_many_reports_which(void **state)
{
    (void)state;
    struct helper *w[3];
    ard_port *in[3];
    char name[3][8];
    for (int i = 0; i < 3; i++) {
        snprintf(name[i], sizeof name[i], "wm%d", i);
        w[i] = spawn_ok(name[i], "out", 8, "u64", NULL);
        in[i] = ard_create(name[i], ARD_IN, 8, "u64");
        assert_non_null(in[i]);
    }
    int argc = 1;
    char *argv[] = {"t", NULL};
    assert_int_equal(ard_init(&argc, argv), 0);
    unsigned char ready[3] = {9, 9, 9};
    /* Nothing yet: only looking, and a short wait, both time out. */
    assert_int_equal(ard_wait(in, 3, 0, ready), ARD_ETIMEDOUT);
    assert_int_equal(ard_wait(in, 3, 20000000, ready), ARD_ETIMEDOUT);
    /* Something already there: returned at once, the right one. */
    assert_int_equal(cmd(w[1], "send 11").rc, 0);
    assert_int_equal(ard_wait(in, 3, -1, ready), 1);
    assert_memory_equal(ready, ((unsigned char[]){0, 1, 0}), 3);
    uint64_t v;
    assert_int_equal(ard_tryrec(in[1], &v), 1);
    assert_int_equal(v, 11);
    assert_int_equal(ard_wait(in, 3, 0, ready), ARD_ETIMEDOUT);
    /* Blocked until another process sends on one of them. */
    struct waiter wt = wait_in_child(in, 3, -1);
    assert_string_equal(waiter_answer(&wt, QUIET_MS), "");
    assert_int_equal(cmd(w[2], "send 12").rc, 0);
    assert_string_equal(waiter_answer(&wt, REPLY_TIMEOUT_MS), "1 001");
    /* Two at once. */
    assert_int_equal(cmd(w[0], "send 13").rc, 0);
    assert_int_equal(ard_wait(in, 3, -1, ready), 2);
    assert_memory_equal(ready, ((unsigned char[]){1, 0, 1}), 3);
    assert_int_equal(ard_wait(in, 3, -1, NULL), 2);
    /* Misuse. */
    assert_int_equal(ard_wait(in, 0, 0, ready), ARD_EINVAL);
    assert_int_equal(ard_wait(NULL, 3, 0, ready), ARD_EINVAL);
    ard_port *o = ard_create("wm_out", ARD_OUT, 8, "u64");
    ard_port *mixed[2] = {in[0], o};
    assert_int_equal(ard_wait(mixed, 2, 0, ready), ARD_EINVAL);
}

static void test_wait_on_many_survives_writer_kill_and_timeout(void **state)
{
    (void)state;
    struct helper *a = spawn_ok("wk_a", "out", 64, NULL, NULL);
    struct helper *b = spawn_ok("wk_b", "out", 64, NULL, NULL);
    ard_port *in[2] = {ard_create("wk_a", ARD_IN, 64, NULL), ard_create("wk_b", ARD_IN, 64, NULL)};
    assert_non_null(in[0]);
    assert_non_null(in[1]);
    int argc = 1;
    char *argv[] = {"t", NULL};
    assert_int_equal(ard_init(&argc, argv), 0);
    assert_int_equal(cmd(a, "send 1").rc, 0);
    unsigned char buf[64];
    assert_int_equal(ard_tryrec(in[0], buf), 1);
    /* The waiter sleeps; writer a is killed and replaced; the waiter keeps waiting and gets
     * the new writer's packet. */
    struct waiter wt = wait_in_child(in, 2, -1);
    assert_string_equal(waiter_answer(&wt, QUIET_MS), "");
    kill_helper(a);
    assert_string_equal(waiter_answer(&wt, QUIET_MS), "");
    a = spawn_ok("wk_a", "out", 64, NULL, NULL);
    assert_string_equal(waiter_answer(&wt, QUIET_MS), "");
    assert_int_equal(cmd(a, "send 2").rc, 0);
    assert_string_equal(waiter_answer(&wt, REPLY_TIMEOUT_MS), "1 10");
    /* A waiter with a timeout returns ETIMEDOUT when nothing comes. */
    assert_int_equal(ard_tryrec(in[0], buf), 1);
    wt = wait_in_child(in, 2, 100000000);
    char want[32];
    snprintf(want, sizeof want, "%d 00", ARD_ETIMEDOUT);
    assert_string_equal(waiter_answer(&wt, REPLY_TIMEOUT_MS), want);
    (void)b;
}

static void test_wait_on_more_ports_than_the_kernel_sleeps_on(void **state)
{
    (void)state;
    enum { N = ARD_WAIT_SLEEP_MAX + 10 };
    static ard_port *in[N], *out[N];
    int argc = 1;
    char *argv[] = {"t", NULL};
    assert_int_equal(ard_init(&argc, argv), 0);
    for (int i = 0; i < N; i++) {
        char conn[16], oname[16], iname[16];
        snprintf(conn, sizeof conn, "many%d", i);
        snprintf(oname, sizeof oname, "o%d", i);
        snprintf(iname, sizeof iname, "i%d", i);
        out[i] = ard_create_on(oname, conn, ARD_OUT, 8, NULL);
        in[i] = ard_create_on(iname, conn, ARD_IN, 8, NULL);
        assert_non_null(out[i]);
        assert_non_null(in[i]);
    }
    uint64_t v = 1;
    /* One the kernel sleeps on, and one beyond its limit: both wake the waiter. */
    int pick[2] = {5, N - 1};
    for (int k = 0; k < 2; k++) {
        struct waiter wt = wait_in_child(in, N, -1);
        assert_string_equal(waiter_answer(&wt, QUIET_MS), "");
        assert_int_equal(ard_send(out[pick[k]], &v), 0);
        const char *ans = waiter_answer(&wt, REPLY_TIMEOUT_MS);
        assert_int_equal(strncmp(ans, "1 ", 2), 0);
        for (int i = 0; i < N; i++)
            if ((ans[2 + i] == '1') != (i == pick[k]))
                fail_msg("port %d reported %c (picked %d)", i, ans[2 + i], pick[k]);
        assert_int_equal(ard_tryrec(in[pick[k]], &v), 1);
    }
}

static void test_wait_without_futex_waitv_falls_back(void **state)
{
    (void)state;
#ifndef AUDIT_ARCH_HERE
    print_message("skipping: no seccomp architecture constant for this CPU\n");
    skip();
#endif
    struct helper *w[3];
    ard_port *in[3];
    char name[3][8];
    for (int i = 0; i < 3; i++) {
        snprintf(name[i], sizeof name[i], "nv%d", i);
        w[i] = spawn_ok(name[i], "out", 8, "u64", NULL);
        in[i] = ard_create(name[i], ARD_IN, 8, "u64");
        assert_non_null(in[i]);
    }
    int argc = 1;
    char *argv[] = {"t", NULL};
    assert_int_equal(ard_init(&argc, argv), 0);
    /* Control: normally the waiter sleeps in futex_waitv. */
    struct waiter wt = wait_in_child_as(in, 3, -1, false);
    assert_int_equal(sleeping_in(wt.pid), SYS_futex_waitv);
    assert_int_equal(cmd(w[1], "send 1").rc, 0);
    assert_string_equal(waiter_answer(&wt, REPLY_TIMEOUT_MS), "1 010");
    uint64_t v;
    assert_int_equal(ard_tryrec(in[1], &v), 1);

    /* Without futex_waitv it sleeps in plain futex, on the first port's word... */
    wt = wait_in_child_as(in, 3, -1, true);
    assert_int_equal(sleeping_in(wt.pid), SYS_futex);
    assert_string_equal(waiter_answer(&wt, QUIET_MS), "");
    /* ...and still notices a packet on a port it does not sleep on (it looks every ms). */
    assert_int_equal(cmd(w[2], "send 2").rc, 0);
    assert_string_equal(waiter_answer(&wt, REPLY_TIMEOUT_MS), "1 001");
    assert_int_equal(ard_tryrec(in[2], &v), 1);
    assert_int_equal(v, 2);
    /* A packet on the port it sleeps on wakes it. */
    wt = wait_in_child_as(in, 3, -1, true);
    assert_int_equal(sleeping_in(wt.pid), SYS_futex);
    assert_int_equal(cmd(w[0], "send 3").rc, 0);
    assert_string_equal(waiter_answer(&wt, REPLY_TIMEOUT_MS), "1 100");
    assert_int_equal(ard_tryrec(in[0], &v), 1);
    /* Two at once, reported both. */
    assert_int_equal(cmd(w[0], "send 4").rc, 0);
    assert_int_equal(cmd(w[2], "send 5").rc, 0);
    wt = wait_in_child_as(in, 3, -1, true);
    assert_string_equal(waiter_answer(&wt, REPLY_TIMEOUT_MS), "2 101");
    assert_int_equal(ard_tryrec(in[0], &v), 1);
    assert_int_equal(ard_tryrec(in[2], &v), 1);
    /* A timeout is kept. */
    wt = wait_in_child_as(in, 3, 100000000, true);
    char want[32];
    snprintf(want, sizeof want, "%d 000", ARD_ETIMEDOUT);
    assert_string_equal(waiter_answer(&wt, REPLY_TIMEOUT_MS), want);
    /* A writer killed and replaced while it waits: the new writer's packet wakes it. */
    wt = wait_in_child_as(in, 3, -1, true);
    assert_int_equal(sleeping_in(wt.pid), SYS_futex);
    kill_helper(w[0]);
    w[0] = spawn_ok(name[0], "out", 8, "u64", NULL);
    assert_string_equal(waiter_answer(&wt, QUIET_MS), "");
    assert_int_equal(cmd(w[0], "send 6").rc, 0);
    assert_string_equal(waiter_answer(&wt, REPLY_TIMEOUT_MS), "1 100");
}

static void test_rec_timed_times_out_with_its_code(void **state)
{
    (void)state;
    struct helper *r = spawn_ok("tm", "in", 8, "i64", NULL);
    struct reply a = cmd(r, "timed 50000000");
    assert_int_equal(a.rc, ARD_ETIMEDOUT);
    assert_int_equal(a.value, NOTHING);
    ASSERT_CONTAINS(a.detail, "tm");
    a = cmd(r, "timed 0");
    assert_int_equal(a.rc, ARD_ETIMEDOUT);

    struct helper *w = spawn_ok("tm", "out", 8, "i64", NULL);
    assert_int_equal(cmd(w, "send 3").rc, 0);
    a = cmd(r, "timed 0");
    assert_int_equal(a.rc, 0);
    assert_int_equal(a.value, 3);
    a = cmd(r, "timed -5");
    assert_int_equal(a.rc, ARD_ETIMEDOUT);
    assert_int_equal(a.value, NOTHING);
    a = cmd(r, "timed 20000000");
    assert_int_equal(a.rc, ARD_ETIMEDOUT);

    /* A generous timeout: the packet arrives while it waits. */
    post(r, "timed 60000000000");
    assert_blocked(r);
    assert_int_equal(cmd(w, "send 4").rc, 0);
    a = wait_reply(r);
    assert_int_equal(a.rc, 0);
    assert_int_equal(a.value, 4);
}

/* ======================================================================================
 * Writers
 * ==================================================================================== */

static void test_second_live_writer_refused_naming_first_pid(void **state)
{
    (void)state;
    struct helper *w1 = spawn_ok("o", "out", 8, "u64", "--ard", "o=one", NULL);
    struct reply init;
    spawn_as(NULL, &init, "o2", "out", 8, "u64", "--ard", "o2=one", NULL);
    assert_int_equal(init.rc, ARD_EBUSY);
    char pid[32];
    snprintf(pid, sizeof pid, "pid %d", (int)w1->pid);
    ASSERT_CONTAINS(init.detail, pid);
    ASSERT_CONTAINS(init.detail, "one");

    /* The first writer is unaffected. */
    struct helper *r = spawn_ok("i", "in", 8, "u64", "--ard", "i=one", NULL);
    assert_int_equal(cmd(w1, "send 11").rc, 0);
    assert_int_equal(cmd(r, "rec").value, 11);
}

static void test_closed_writer_releases_role_at_once(void **state)
{
    (void)state;
    struct helper *w1 = spawn_ok("o", "out", 8, "u64", NULL);
    assert_int_equal(cmd(w1, "send 1").rc, 0);
    assert_int_equal(cmd(w1, "close").rc, 0);
    struct helper *w2 = spawn_ok("o", "out", 8, "u64", NULL);
    struct reply a = cmd(w2, "send 2");
    assert_int_equal(a.rc, 0);
    assert_int_equal(a.seq, 2);
}

static void test_killed_writer_replaced_without_cleanup(void **state)
{
    (void)state;
    struct helper *r = spawn_ok("in", "in", 64, "f64[8]", "--ard", "in=kw", NULL);
    struct helper *w1 = spawn_ok("out", "out", 64, "f64[8]", "--ard", "out=kw", NULL);
    struct reply a = cmd(w1, "sendn 10 1");
    assert_int_equal(a.seq, 10);
    a = cmd(r, "rec");
    assert_int_equal(a.value, 10);

    /* The reader waits for news; the writer dies without any clean-up. */
    post(r, "rec");
    assert_blocked(r);
    kill_helper(w1);
    assert_blocked(r);

    struct helper *w2 = spawn_ok("out", "out", 64, "f64[8]", "--ard", "out=kw", NULL);
    a = cmd(w2, "send 100");
    assert_int_equal(a.rc, 0);
    uint64_t sent_seq = a.seq;
    assert_true(sent_seq > 10);
    a = wait_reply(r);
    assert_int_equal(a.rc, 0);
    assert_int_equal(a.value, 100);
    assert_int_equal(a.seq, sent_seq);

    /* And a third generation, killed while the reader is not waiting. */
    kill_helper(w2);
    struct helper *w3 = spawn_ok("out", "out", 64, "f64[8]", "--ard", "out=kw", NULL);
    a = cmd(w3, "send 200");
    assert_true(a.seq > sent_seq);
    a = cmd(r, "rec");
    assert_int_equal(a.value, 200);
}

static void test_send_never_waits_for_stopped_reader(void **state)
{
    (void)state;
    /* Big packets, so that the reader is often stopped in the middle of copying one. */
    struct helper *w = spawn_ok("big", "out", 65536, NULL, NULL);
    struct helper *r = spawn_ok("big", "in", 65536, NULL, NULL);
    struct helper *r2 = spawn_ok("big", "in", 65536, NULL, NULL);
    assert_int_equal(cmd(w, "send 1").rc, 0);
    uint64_t v = 2, last = 2 + 20 * 50 - 1;
    post(r, "poll %llu", (unsigned long long)last);
    srand((unsigned)getpid());
    for (int k = 0; k < 20; k++) {
        struct timespec ts = {0, (rand() % 2000) * 1000L};
        nanosleep(&ts, NULL);
        kill(r->pid, SIGSTOP);
        /* With the reader frozen wherever it was, the writer goes on. */
        struct reply a = cmd(w, "sendn 50 %llu", (unsigned long long)v);
        assert_int_equal(a.rc, 0);
        v += 50;
        kill(r->pid, SIGCONT);
    }
    /* Another reader gets the newest packet, whole, byte for byte. */
    struct reply a = cmd(r2, "tryrec");
    assert_int_equal(a.rc, 1);
    assert_int_equal(a.value, v - 1);
    assert_int_equal(a.seq, v - 1);
    assert_string_equal(a.detail, "whole");
    /* The reader that was stopped again and again never copied out a torn packet, and it
     * reached the last one. */
    a = wait_reply(r);
    assert_int_equal(a.rc, 0);
    assert_int_equal(a.value, last);
    if (strncmp(a.detail, "torn 0 ", 7) != 0)
        fail_msg("stopped reader: %s", a.detail);
}

static void test_rec_with_spin_blocks_and_wakes(void **state)
{
    (void)state;
    struct helper *w = spawn_ok("sp", "out", 8, NULL, NULL);
    struct helper *r = spawn_ok("sp", "in", 8, NULL, "--ard-spin", "200000", NULL);
    setenv("ARD_SPIN_NS", "100000", 1);
    struct helper *r2 = spawn_ok("sp", "in", 8, NULL, NULL);
    unsetenv("ARD_SPIN_NS");
    for (uint64_t v = 1; v <= 3; v++) {
        post(r, "rec");
        post(r2, "rec");
        assert_blocked(r);
        assert_blocked(r2);
        assert_int_equal(cmd(w, "send %llu", (unsigned long long)v).rc, 0);
        assert_int_equal(wait_reply(r).value, v);
        assert_int_equal(wait_reply(r2).value, v);
    }
    /* A packet already there is returned at once. */
    assert_int_equal(cmd(w, "send 4").rc, 0);
    assert_int_equal(cmd(r, "rec").value, 4);
}

/* ======================================================================================
 * Type matching
 * ==================================================================================== */

static void test_size_mismatch_refused_naming_both_sizes(void **state)
{
    (void)state;
    spawn_ok("w", "out", 16, "u64[2]", "--ard", "w=sz", NULL);
    struct reply init;
    spawn_as(NULL, &init, "r", "in", 8, "u64", "--ard", "r=sz", NULL);
    assert_int_equal(init.rc, ARD_ETYPE);
    ASSERT_CONTAINS(init.detail, "'sz'");
    ASSERT_CONTAINS(init.detail, "16");
    ASSERT_CONTAINS(init.detail, "8");
    ASSERT_CONTAINS(init.detail, "u64[2]");

    /* Opaque ports are checked by size just the same, also when the reader came first. */
    spawn_ok("r2", "in", 100, NULL, "--ard", "r2=sz2", NULL);
    spawn_as(NULL, &init, "w2", "out", 104, NULL, "--ard", "w2=sz2", NULL);
    assert_int_equal(init.rc, ARD_ETYPE);
    ASSERT_CONTAINS(init.detail, "100");
    ASSERT_CONTAINS(init.detail, "104");
}

static void test_type_mismatch_refused_naming_both_types(void **state)
{
    (void)state;
    spawn_ok("w", "out", 16, "u64 f64", "--ard", "w=ty", NULL);
    struct reply init;
    spawn_as(NULL, &init, "r", "in", 16, "f64 u64", "--ard", "r=ty", NULL);
    assert_int_equal(init.rc, ARD_ETYPE);
    ASSERT_CONTAINS(init.detail, "'ty'");
    ASSERT_CONTAINS(init.detail, "u64 f64");
    ASSERT_CONTAINS(init.detail, "f64 u64");

    /* The same layout spelt differently is the same type. */
    struct helper *r = spawn_ok("r", "in", 16, " u64[1],f64 ", "--ard", "r=ty", NULL);
    (void)r;
}

static void test_size_zero_adopts_connection_layout(void **state)
{
    (void)state;
    struct helper *w = spawn_ok("ad", "out", 24, "u32 f64 u16", NULL);
    assert_int_equal(cmd(w, "send 9").rc, 0);
    ard_port *p = ard_create("ad", ARD_IN, 0, NULL);
    assert_non_null(p);
    int argc = 1;
    char *argv[] = {"t", NULL};
    int rc = ard_init(&argc, argv);
    if (rc != 0)
        fail_msg("ard_init: %s", ard_errdetail());
    assert_int_equal(ard_port_size(p), 24);
    assert_string_equal(ard_port_type(p), "u32 f64 u16");
    unsigned char buf[24];
    assert_int_equal(ard_tryrec(p, buf), 1);
    uint64_t v;
    memcpy(&v, buf, 8);
    assert_int_equal(v, 9);

    /* Adopting needs the connection to exist. */
    ard_port *q = ard_create("nosuch", ARD_IN, 0, NULL);
    assert_null(q);
    assert_int_equal(ard_lasterror(), ARD_ENOENT);
    ASSERT_CONTAINS(ard_errdetail(), "nosuch");
}

static void test_opaque_side_accepts_any_type_and_typed_side_records_it(void **state)
{
    (void)state;
    /* An opaque reader attaches to a typed connection and learns its type. */
    struct helper *w = spawn_ok("ty", "out", 16, "f64[2]", NULL);
    ard_port *p = ard_create("ty", ARD_IN, 16, NULL);
    assert_non_null(p);
    int argc = 1;
    char *argv[] = {"t", NULL};
    if (ard_init(&argc, argv) != 0)
        fail_msg("ard_init: %s", ard_errdetail());
    assert_string_equal(ard_port_type(p), "f64[2]");
    reap(w, SIGKILL);

    /* An opaque writer creates an untyped connection; a typed reader fills the type in. */
    struct helper *o = spawn_ok("op", "out", 16, NULL, NULL);
    struct ard_conn_stat st;
    assert_int_equal(ard_conn_stat(domain, "op", &st), 0);
    assert_string_equal(st.type, "");
    ard_port *q = ard_create("op", ARD_IN, 16, "u32[4]");
    if (q == NULL)
        fail_msg("typed reader on opaque connection: %s", ard_errdetail());
    assert_int_equal(ard_conn_stat(domain, "op", &st), 0);
    assert_string_equal(st.type, "u32[4]");
    reap(o, SIGKILL);
}

static void test_create_on_names_the_connection(void **state)
{
    (void)state;
    /* Before ard_init: the command line still rewires the port. */
    ard_port *early = ard_create_on("early", "con_a", ARD_IN, 8, "u64");
    assert_non_null(early);
    int argc = 3;
    char *argv[] = {"t", "--ard", "early=con_b", NULL};
    if (ard_init(&argc, argv) != 0)
        fail_msg("ard_init: %s", ard_errdetail());
    assert_string_equal(ard_port_connection(early), "con_b");

    /* After ard_init: several ports of one process on one connection, each its own reader. */
    ard_port *w = ard_create_on("w", "con_x", ARD_OUT, 8, "u64");
    ard_port *a = ard_create_on("a", "con_x", ARD_IN, 8, "u64");
    ard_port *b = ard_create_on("b", "con_x", ARD_IN, 0, NULL);
    assert_non_null(w);
    assert_non_null(a);
    assert_non_null(b);
    uint64_t v = 42, got = 0;
    assert_int_equal(ard_send(w, &v), 0);
    assert_int_equal(ard_tryrec(a, &got), 1);
    assert_int_equal(got, 42);
    got = 0;
    assert_int_equal(ard_tryrec(b, &got), 1);
    assert_int_equal(got, 42);
    assert_int_equal(ard_tryrec(a, &got), 0);

    /* A second writer on the connection, even in the same process, is refused. */
    assert_null(ard_create_on("w2", "con_x", ARD_OUT, 8, "u64"));
    assert_int_equal(ard_lasterror(), ARD_EBUSY);
    /* A bad connection name is refused by name. */
    assert_null(ard_create_on("c", "bad/name", ARD_IN, 8, "u64"));
    ASSERT_CONTAINS(ard_errdetail(), "bad/name");
}

static void test_send_stamped_carries_given_times(void **state)
{
    (void)state;
    ard_port *w = ard_create("st_w", ARD_OUT, 8, "u64");
    ard_port *r = ard_create("st_r", ARD_IN, 8, "u64");
    assert_non_null(w);
    assert_non_null(r);
    int argc = 3;
    char *argv[] = {"t", "--ard", "st_r=st_w", NULL};
    if (ard_init(&argc, argv) != 0)
        fail_msg("ard_init: %s", ard_errdetail());
    uint64_t v = 5, got = 0;
    assert_int_equal(ard_send_stamped(w, &v, 1234, 5678), 0);
    assert_int_equal(ard_tryrec(r, &got), 1);
    struct ard_info i = ard_port_info(r);
    assert_int_equal(got, 5);
    assert_int_equal(i.mono_ns, 1234);
    assert_int_equal(i.real_ns, 5678);
    /* The sequence stays the connection's own. */
    assert_int_equal(ard_send(w, &v), 0);
    assert_int_equal(ard_tryrec(r, &got), 1);
    assert_int_equal(ard_port_info(r).seq, i.seq + 1);
    assert_true(ard_port_info(r).real_ns > 5678);
}

/* ======================================================================================
 * Readers
 * ==================================================================================== */

static void test_many_readers_each_own_new_state(void **state)
{
    (void)state;
    struct helper *w = spawn_ok("s", "out", 8, "u64", NULL);
    struct helper *r[3];
    for (int i = 0; i < 3; i++)
        r[i] = spawn_ok("s", "in", 8, "u64", NULL);
    assert_int_equal(cmd(w, "send 1").rc, 0);
    assert_int_equal(cmd(r[0], "tryrec").rc, 1);
    assert_int_equal(cmd(r[0], "tryrec").rc, 0);
    assert_int_equal(cmd(r[1], "tryrec").rc, 1); /* r[0] reading did not use it up */
    assert_int_equal(cmd(w, "send 2").rc, 0);
    struct reply a = cmd(r[0], "rec");
    assert_int_equal(a.value, 2);
    assert_int_equal(a.skipped, 0);
    a = cmd(r[2], "tryrec");
    assert_int_equal(a.rc, 1);
    assert_int_equal(a.value, 2);
    a = cmd(r[1], "tryrec");
    assert_int_equal(a.rc, 1);
    assert_int_equal(a.value, 2);
    assert_int_equal(cmd(r[1], "tryrec").rc, 0);

    /* All blocked at once: one send wakes every one of them. */
    for (int i = 0; i < 3; i++)
        post(r[i], "rec");
    for (int i = 0; i < 3; i++)
        assert_blocked(r[i]);
    assert_int_equal(cmd(w, "send 3").rc, 0);
    for (int i = 0; i < 3; i++) {
        a = wait_reply(r[i]);
        assert_int_equal(a.rc, 0);
        assert_int_equal(a.value, 3);
    }
}

/* ======================================================================================
 * Domains and permissions
 * ==================================================================================== */

static void test_domains_with_same_connection_isolated(void **state)
{
    (void)state;
    char da[80], db[80], pa[160], pb[160];
    snprintf(da, sizeof da, "%sa", domain);
    snprintf(db, sizeof db, "%sb", domain);
    struct helper *wa = spawn_ok("c", "out", 8, "u64", "--ard-domain", da, NULL);
    struct helper *rb = spawn_ok("c", "in", 8, "u64", "--ard-domain", db, NULL);
    assert_int_equal(cmd(wa, "send 1").rc, 0);
    assert_int_equal(cmd(rb, "tryrec").rc, ARD_ENODATA);
    /* A writer in the other domain is not "a second writer". */
    struct helper *wb = spawn_ok("c", "out", 8, "u64", "--ard-domain", db, NULL);
    assert_int_equal(cmd(wb, "send 2").rc, 0);
    struct helper *ra = spawn_ok("c", "in", 8, "u64", "--ard-domain", da, NULL);
    assert_int_equal(cmd(ra, "tryrec").value, 1);
    assert_int_equal(cmd(rb, "tryrec").value, 2);
    /* A different size under the same name in a third domain does not clash either. */
    spawn_ok("c", "in", 32, NULL, NULL);

    struct stat st;
    shm_path(pa, sizeof pa, da, "c");
    shm_path(pb, sizeof pb, db, "c");
    assert_int_equal(stat(pa, &st), 0);
    assert_int_equal(stat(pb, &st), 0);
    for (int i = 0; i < MAX_HELPERS; i++)
        reap(&helpers[i], SIGKILL);
    assert_int_equal(ard_domain_unlink(da), 1);
    assert_int_equal(ard_domain_unlink(db), 1);
    assert_int_equal(stat(pa, &st), -1);
}

/* In-process: create one OUT port with extra options and return the object's mode. */
static int created_mode(const char *conn, mode_t umask_value, const char *opt, const char *val,
                        int *rc)
{
    char *argv[4] = {"t", (char *)opt, (char *)val, NULL};
    int argc = opt ? (val ? 3 : 2) : 1;
    ard_port *p = ard_create(conn, ARD_OUT, 8, NULL);
    assert_non_null(p);
    mode_t old = umask(umask_value);
    *rc = ard_init(&argc, argv);
    umask(old);
    int mode = -1;
    if (*rc == 0) {
        char path[160];
        struct stat st;
        shm_path(path, sizeof path, domain, conn);
        assert_int_equal(stat(path, &st), 0);
        assert_int_equal(st.st_uid, geteuid());
        mode = (int)(st.st_mode & 07777);
    }
    ard_fini();
    return mode;
}

static void test_shm_created_mode_0600(void **state)
{
    (void)state;
    int rc;
    assert_int_equal(created_mode("m1", 022, NULL, NULL, &rc), 0600);
    /* Also with a permissive umask: the library sets the mode, not the umask. */
    assert_int_equal(created_mode("m2", 0, NULL, NULL, &rc), 0600);
}

static void test_shm_group_mode_by_option_and_env(void **state)
{
    (void)state;
    int rc;
    /* A strict umask must not narrow the configured mode. */
    assert_int_equal(created_mode("g1", 077, "--ard-mode", "0660", &rc), 0660);
    assert_int_equal(created_mode("g2", 077, "--ard-mode=0640", NULL, &rc), 0640);
    setenv("ARD_SHM_MODE", "0660", 1);
    int m = created_mode("g3", 077, NULL, NULL, &rc);
    unsetenv("ARD_SHM_MODE");
    if (rc != 0)
        fail_msg("ARD_SHM_MODE=0660: %s", ard_errdetail());
    assert_int_equal(m, 0660);
    /* The option wins over the environment. */
    setenv("ARD_SHM_MODE", "0660", 1);
    m = created_mode("g4", 077, "--ard-mode", "0600", &rc);
    unsetenv("ARD_SHM_MODE");
    assert_int_equal(m, 0600);
}

static void test_shm_world_writable_mode_refused(void **state)
{
    (void)state;
    const char *bad[] = {"0666", "0662", "0602", "0777", "9", "rw", "", "0x180"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc;
        int m = created_mode("ww", 0, "--ard-mode", bad[i], &rc);
        if (rc != ARD_EOPTION)
            fail_msg("--ard-mode %s: rc %d mode %o", bad[i], rc, m);
        ASSERT_CONTAINS(ard_errdetail(), "--ard-mode");
    }
    setenv("ARD_SHM_MODE", "0666", 1);
    int rc;
    created_mode("ww", 0, NULL, NULL, &rc);
    unsetenv("ARD_SHM_MODE");
    assert_true(rc < 0);
    ASSERT_CONTAINS(ard_errdetail(), "ARD_SHM_MODE");
    char path[160];
    struct stat st;
    shm_path(path, sizeof path, domain, "ww");
    assert_int_equal(stat(path, &st), -1); /* nothing was created */
}

static void test_own_object_with_wider_mode_refused(void **state)
{
    (void)state;
    struct helper *w = spawn_ok("wide", "out", 8, "u64", NULL);
    assert_int_equal(cmd(w, "send 1").rc, 0);
    char path[160];
    shm_path(path, sizeof path, domain, "wide");
    assert_int_equal(chmod(path, 0666), 0);
    struct reply init;
    spawn_as(NULL, &init, "wide", "in", 8, "u64", NULL);
    assert_int_equal(init.rc, ARD_EACCES);
    char want[128];
    snprintf(want, sizeof want, "connection 'wide' is owned by uid %d with mode 0666: refusing",
             (int)geteuid());
    ASSERT_CONTAINS(init.detail, want);
    struct ard_conn_stat st;
    assert_int_equal(ard_conn_stat(domain, "wide", &st), ARD_EACCES);
    ASSERT_CONTAINS(ard_errdetail(), want);
    /* A group mode that the reader is not configured for is refused the same way. */
    assert_int_equal(chmod(path, 0640), 0);
    spawn_as(NULL, &init, "wide", "in", 8, "u64", NULL);
    assert_int_equal(init.rc, ARD_EACCES);
    ASSERT_CONTAINS(init.detail, "with mode 0640: refusing");
    struct helper *r = spawn_ok("wide", "in", 8, "u64", "--ard-mode", "0640", NULL);
    assert_int_equal(cmd(r, "tryrec").value, 1);
}

/* ======================================================================================
 * Stale and foreign objects
 * ==================================================================================== */

static void write_object(const char *conn, const void *data, size_t len)
{
    char path[160];
    shm_path(path, sizeof path, domain, conn);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, data, len), (ssize_t)len);
    close(fd);
}

static size_t read_object(const char *conn, void *data, size_t max)
{
    char path[160];
    shm_path(path, sizeof path, domain, conn);
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    ssize_t n = read(fd, data, max);
    assert_true(n > 0);
    close(fd);
    return (size_t)n;
}

static int attach_one(const char *conn, enum ard_dir dir)
{
    ard_port *p = ard_create(conn, dir, 8, "u64");
    assert_non_null(p);
    int argc = 1;
    char *argv[] = {"t", NULL};
    int rc = ard_init(&argc, argv);
    return rc;
}

static void expect_stale(const char *conn)
{
    for (int d = 0; d < 2; d++) {
        int rc = attach_one(conn, d ? ARD_OUT : ARD_IN);
        if (rc != ARD_ESTALE)
            fail_msg("connection %s (%s): rc %d (%s), want ARD_ESTALE", conn, d ? "out" : "in", rc,
                     ard_errdetail());
        ASSERT_CONTAINS(ard_errdetail(), conn);
        ard_fini();
    }
    struct ard_conn_stat st;
    int rc = ard_conn_stat(domain, conn, &st);
    if (rc != ARD_ESTALE)
        fail_msg("ard_conn_stat(%s): rc %d, want ARD_ESTALE", conn, rc);
}

static void test_foreign_shm_object_gives_estale(void **state)
{
    (void)state;
    static unsigned char junk[65536];
    srand(1234);
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (unsigned char)rand();
    write_object("junk", junk, sizeof junk);
    expect_stale("junk");
    write_object("tiny", junk, 10);
    expect_stale("tiny");
    memset(junk, 0, 4096);
    write_object("zeros", junk, 4096);
    expect_stale("zeros");
    static const char text[] = "this is someone else's shared memory, not ardnet's\n";
    static unsigned char big[8192];
    memset(big, 'x', sizeof big);
    memcpy(big, text, sizeof text);
    write_object("text", big, sizeof big);
    expect_stale("text");
}

static void test_damaged_ardnet_object_gives_estale(void **state)
{
    (void)state;
    /* A genuine object, then copies of it damaged in the header or cut short. */
    assert_int_equal(attach_one("good", ARD_OUT), 0);
    ard_fini();
    static unsigned char obj[1 << 20], bad[1 << 20];
    size_t len = read_object("good", obj, sizeof obj);

    memcpy(bad, obj, len);
    bad[0] ^= 0xFF; /* the magic number */
    write_object("badmagic", bad, len);
    expect_stale("badmagic");

    memcpy(bad, obj, len);
    for (size_t i = 8; i < 40; i++)
        bad[i] ^= 0x5A; /* version, geometry */
    write_object("badhead", bad, len);
    expect_stale("badhead");

    write_object("short", obj, len / 2 > 200 ? len / 2 : 200);
    expect_stale("short");

    /* The damaged objects were not silently repaired or removed. */
    char path[160];
    struct stat st;
    shm_path(path, sizeof path, domain, "short");
    assert_int_equal(stat(path, &st), 0);
}

/* ======================================================================================
 * Timestamps, info, API misuse, signals
 * ==================================================================================== */

static void test_timestamps_plausible_and_seq_matches(void **state)
{
    (void)state;
    struct helper *w = spawn_ok("ts", "out", 8, "u64", NULL);
    struct helper *r = spawn_ok("ts", "in", 8, "u64", NULL);
    for (int i = 1; i <= 3; i++) {
        int64_t m0 = ard_now_ns(), r0 = ard_realtime_ns();
        struct reply s = cmd(w, "send %d", i);
        int64_t m1 = ard_now_ns(), r1 = ard_realtime_ns();
        assert_int_equal(s.rc, 0);
        assert_int_equal(s.seq, (uint64_t)i);
        assert_in_range(s.mono, m0, m1);
        assert_in_range(s.real, r0, r1);
        struct reply a = cmd(r, "rec");
        assert_int_equal(a.seq, s.seq);
        assert_int_equal(a.mono, s.mono);
        assert_int_equal(a.real, s.real);
    }
    /* The clocks are the system's: monotonic close to now, realtime close to time(). */
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    int64_t mono = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    int64_t lib = ard_now_ns();
    clock_gettime(CLOCK_MONOTONIC, &ts);
    int64_t mono2 = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    assert_in_range(lib, mono, mono2);
    assert_in_range(ard_realtime_ns() / 1000000000, time(NULL) - 1, time(NULL) + 1);
}

static void test_port_info_zero_before_first_packet(void **state)
{
    (void)state;
    ard_port *o = ard_create("z", ARD_OUT, 8, "u64");
    ard_port *i = ard_create("z2", ARD_IN, 8, "u64");
    assert_non_null(o);
    assert_non_null(i);
    int argc = 3;
    char *argv[] = {"t", "--ard", "z2=z", NULL};
    assert_int_equal(ard_init(&argc, argv), 0);
    struct ard_info inf = ard_port_info(i);
    assert_int_equal(inf.seq, 0);
    assert_int_equal(inf.mono_ns, 0);
    assert_int_equal(ard_port_info(o).seq, 0);
    uint64_t v = 42, got = 0;
    assert_int_equal(ard_send(o, &v), 0);
    assert_int_equal(ard_port_info(o).seq, 1);
    assert_int_equal(ard_tryrec(i, &got), 1);
    assert_int_equal(got, 42);
    assert_int_equal(ard_port_info(i).seq, 1);
    assert_string_equal(ard_port_connection(i), "z");
    assert_string_equal(ard_port_name(i), "z2");
    assert_int_equal(ard_port_dir(i), ARD_IN);
    assert_int_equal(ard_port_dir(o), ARD_OUT);
}

static void test_wrong_direction_and_state_refused(void **state)
{
    (void)state;
    uint64_t v = 1;
    ard_port *o = ard_create("d", ARD_OUT, 8, NULL);
    ard_port *i = ard_create("d", ARD_IN, 8, NULL);
    assert_null(i); /* one name, one port */
    assert_int_equal(ard_lasterror(), ARD_EINVAL);
    i = ard_create("d_in", ARD_IN, 8, NULL);
    assert_non_null(o);
    assert_non_null(i);
    /* Declared but not attached yet. */
    assert_int_equal(ard_send(o, &v), ARD_ESTATE);
    ASSERT_CONTAINS(ard_errdetail(), "'d'");
    assert_int_equal(ard_tryrec(i, &v), ARD_ESTATE);
    assert_int_equal(ard_rec(i, &v), ARD_ESTATE);
    assert_int_equal(ard_rec_timed(i, &v, 0), ARD_ESTATE);
    int argc = 3;
    char *argv[] = {"t", "--ard", "d_in=d", NULL};
    assert_int_equal(ard_init(&argc, argv), 0);
    assert_int_equal(ard_send(i, &v), ARD_EINVAL);
    assert_int_equal(ard_rec(o, &v), ARD_EINVAL);
    assert_int_equal(ard_tryrec(o, &v), ARD_EINVAL);
    assert_int_equal(ard_rec_timed(o, &v, 0), ARD_EINVAL);
    assert_int_equal(ard_send(NULL, &v), ARD_EINVAL);
    assert_int_equal(ard_send(o, NULL), ARD_EINVAL);
    assert_int_equal(ard_port_set_spin(o, 1000), ARD_EINVAL);
    assert_int_equal(ard_port_set_spin(i, -1), ARD_EINVAL);
    /* Bad names. */
    assert_null(ard_create("a/b", ARD_IN, 8, NULL));
    assert_int_equal(ard_lasterror(), ARD_EINVAL);
    assert_null(ard_create("", ARD_IN, 8, NULL));
    assert_null(ard_create("x123456789012345678901234567890123456789012345678901234567890123",
                           ARD_IN, 8, NULL));
    assert_null(ard_create("big", ARD_IN, (size_t)ARD_MAX_PACKET + 1, NULL));
    /* A port created after ard_init attaches at once. */
    ard_port *late = ard_create("d_late", ARD_IN, 8, NULL);
    assert_non_null(late);
    assert_int_equal(ard_tryrec(late, &v), ARD_ENODATA);
    ard_close(late);
    ard_close(NULL);
}

static void on_alarm(int sig)
{
    (void)sig;
}

static void test_rec_interrupted_by_signal_returns_eintr(void **state)
{
    (void)state;
    ard_port *i = ard_create("intr", ARD_IN, 8, NULL);
    int argc = 1;
    char *argv[] = {"t", NULL};
    assert_int_equal(ard_init(&argc, argv), 0);
    struct sigaction sa = {.sa_handler = on_alarm}; /* no SA_RESTART */
    sigemptyset(&sa.sa_mask);
    struct sigaction old;
    sigaction(SIGALRM, &sa, &old);
    struct itimerval it = {.it_value = {0, 100000}};
    setitimer(ITIMER_REAL, &it, NULL);
    uint64_t v = NOTHING;
    int rc = ard_rec(i, &v);
    sigaction(SIGALRM, &old, NULL);
    assert_int_equal(rc, ARD_EINTR);
    assert_int_equal(v, NOTHING);
}

/* ======================================================================================
 * Another uid (root only)
 * ==================================================================================== */

static void test_other_uid_cannot_attach(void **state)
{
    (void)state;
    struct helper *w = spawn_ok("priv", "out", 8, "u64", NULL);
    assert_int_equal(cmd(w, "send 1").rc, 0);
    struct spawn_opts nobody = {.uid = NOBODY_UID, .gid = NOGROUP_GID, .ngroups = 0};
    struct reply init;
    for (int d = 0; d < 2; d++) {
        spawn_as(&nobody, &init, "priv", d ? "out" : "in", 8, "u64", NULL);
        if (init.rc != ARD_EACCES)
            fail_msg("uid nobody attached as %s: rc %d %s", d ? "writer" : "reader", init.rc,
                     init.detail);
        ASSERT_CONTAINS(init.detail, "priv");
    }
}

static void test_group_mode_lets_group_members_attach(void **state)
{
    (void)state;
    struct helper *w = spawn_ok("grp", "out", 8, "u64", "--ard-mode", "0660", NULL);
    assert_int_equal(cmd(w, "send 5").rc, 0);
    char path[160];
    struct stat st;
    shm_path(path, sizeof path, domain, "grp");
    assert_int_equal(stat(path, &st), 0);
    /* A member of the object's group that runs with the group mode too may attach. */
    struct spawn_opts member = {
        .uid = NOBODY_UID, .gid = NOGROUP_GID, .ngroups = 1, .groups = {st.st_gid}};
    struct spawn_opts stranger = {.uid = NOBODY_UID, .gid = NOGROUP_GID, .ngroups = 0};
    struct reply init;
    struct helper *r = spawn_as(&member, &init, "grp", "in", 8, "u64", "--ard-mode", "0660", NULL);
    if (init.rc != 0)
        fail_msg("group member: %d %s", init.rc, init.detail);
    assert_int_equal(cmd(r, "tryrec").value, 5);
    /* A member configured for private objects (0600) does not trust a group object. */
    spawn_as(&member, &init, "grp", "in", 8, "u64", NULL);
    assert_int_equal(init.rc, ARD_EACCES);
    ASSERT_CONTAINS(init.detail, "connection 'grp' is owned by uid 0 with mode 0660: refusing");
    /* A non-member cannot even open it; the message names owner and mode. */
    spawn_as(&stranger, &init, "grp", "in", 8, "u64", "--ard-mode", "0660", NULL);
    assert_int_equal(init.rc, ARD_EACCES);
    ASSERT_CONTAINS(init.detail, "owned by uid 0 with mode 0660");
}

/* Make the object of `conn` look as if uid/gid had created it with `mode`. */
static void squat(const char *conn, uid_t uid, gid_t gid, mode_t mode)
{
    char path[160];
    shm_path(path, sizeof path, domain, conn);
    assert_int_equal(chown(path, uid, gid), 0);
    assert_int_equal(chmod(path, mode), 0);
}

static void test_squatted_object_refused_naming_owner_and_mode(void **state)
{
    (void)state;
    /* Another user (daemon) made the connection world-writable before the victim started. */
    struct helper *sq = spawn_ok("sq", "out", 8, "u64", NULL);
    assert_int_equal(cmd(sq, "send 66").rc, 0);
    kill_helper(sq);
    squat("sq", DAEMON_UID, DAEMON_GID, 0666);
    struct spawn_opts victim = {.uid = NOBODY_UID, .gid = NOGROUP_GID, .ngroups = 0};
    struct reply init;
    for (int d = 0; d < 2; d++) {
        spawn_as(&victim, &init, "sq", d ? "out" : "in", 8, "u64", NULL);
        assert_int_equal(init.rc, ARD_EACCES);
        char want[128];
        snprintf(want, sizeof want, "connection 'sq' is owned by uid %d with mode 0666: refusing",
                 DAEMON_UID);
        ASSERT_CONTAINS(init.detail, want);
    }
    /* Not even its group mode lets the victim trust another user's world-writable object. */
    spawn_as(&victim, &init, "sq", "in", 8, "u64", "--ard-mode", "0660", NULL);
    assert_int_equal(init.rc, ARD_EACCES);
    /* Readable by others but not writable: the victim cannot open it; owner and mode named. */
    squat("sq", DAEMON_UID, DAEMON_GID, 0644);
    spawn_as(&victim, &init, "sq", "in", 8, "u64", NULL);
    assert_int_equal(init.rc, ARD_EACCES);
    ASSERT_CONTAINS(init.detail, "with mode 0644");
}

static void test_root_refuses_foreign_object_unless_allowed(void **state)
{
    (void)state;
    struct spawn_opts other = {.uid = NOBODY_UID, .gid = NOGROUP_GID, .ngroups = 0};
    struct reply init;
    struct helper *w = spawn_as(&other, &init, "fo", "out", 8, "u64", NULL);
    assert_int_equal(init.rc, 0);
    assert_int_equal(cmd(w, "send 9").rc, 0);
    char want[128];
    snprintf(want, sizeof want, "connection 'fo' is owned by uid %d with mode 0600: refusing",
             NOBODY_UID);
    /* Root, for whom no permission bit protects anything, refuses by default... */
    spawn_as(NULL, &init, "fo", "in", 8, "u64", NULL);
    assert_int_equal(init.rc, ARD_EACCES);
    ASSERT_CONTAINS(init.detail, want);
    ASSERT_CONTAINS(init.detail, "--ard-allow-foreign");
    struct ard_conn_stat st;
    unsetenv("ARD_ALLOW_FOREIGN");
    assert_int_equal(ard_conn_stat(domain, "fo", &st), ARD_EACCES);
    ASSERT_CONTAINS(ard_errdetail(), want);
    /* ...and accepts when told to, by option or environment. */
    struct helper *r = spawn_ok("fo", "in", 8, "u64", "--ard-allow-foreign", NULL);
    assert_int_equal(cmd(r, "tryrec").value, 9);
    setenv("ARD_ALLOW_FOREIGN", "1", 1);
    r = spawn_ok("fo", "in", 8, "u64", NULL);
    int rc = ard_conn_stat(domain, "fo", &st);
    unsetenv("ARD_ALLOW_FOREIGN");
    assert_int_equal(rc, 0);
    assert_int_equal(st.seq, 1);
    assert_int_equal(cmd(r, "tryrec").value, 9);
    /* A malformed value is an option error naming the variable. */
    setenv("ARD_ALLOW_FOREIGN", "yes", 1);
    spawn_as(NULL, &init, "fo", "in", 8, "u64", NULL);
    unsetenv("ARD_ALLOW_FOREIGN");
    assert_int_equal(init.rc, ARD_EOPTION);
    ASSERT_CONTAINS(init.detail, "ARD_ALLOW_FOREIGN");
}

/* ======================================================================================
 * main
 * ==================================================================================== */

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

/* The root tests run this binary as nobody, who may not reach the build tree (a checkout under
 * /root, mode 0700): they run a copy in a directory of their own that everyone can reach. */
static char exe_copy_dir[64];

static int copy_exe_for_other_users(void)
{
    snprintf(exe_copy_dir, sizeof exe_copy_dir, "/tmp/ard_test_port.XXXXXX");
    if (mkdtemp(exe_copy_dir) == NULL || chmod(exe_copy_dir, 0755) < 0) {
        perror("test_port: a directory for the copy run by nobody");
        return -1;
    }
    char copy[sizeof exe_copy_dir + 16];
    snprintf(copy, sizeof copy, "%s/test_port", exe_copy_dir);
    int in = open(exe_path, O_RDONLY | O_CLOEXEC);
    int out = open(copy, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
    char buf[65536];
    ssize_t n = in < 0 || out < 0 ? -1 : 0;
    while (n >= 0 && (n = read(in, buf, sizeof buf)) > 0)
        if (write(out, buf, (size_t)n) != n)
            n = -1;
    if (in >= 0)
        close(in);
    if (out >= 0 && close(out) < 0)
        n = -1;
    if (n < 0) {
        fprintf(stderr, "test_port: copying %s to %s: %s\n", exe_path, copy, strerror(errno));
        return -1;
    }
    snprintf(exe_path, sizeof exe_path, "%s", copy);
    return 0;
}

static void remove_exe_copy(void)
{
    if (exe_copy_dir[0] == '\0')
        return;
    unlink(exe_path);
    rmdir(exe_copy_dir);
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "--helper") == 0)
        return helper_main(argc, argv);

    if (realpath("/proc/self/exe", exe_path) == NULL) {
        perror("realpath /proc/self/exe");
        return 1;
    }
    snprintf(domain, sizeof domain, "t_port_%d", (int)getpid());
    setenv("ARD_DOMAIN", domain, 1);
    unsetenv("ARD_SHM_MODE");
    unsetenv("ARD_SPIN_NS");
    signal(SIGPIPE, SIG_IGN);

    if (argc >= 2 && strcmp(argv[1], "root") == 0) {
        if (geteuid() != 0) {
            printf("SKIP: these tests switch to uid nobody and need root\n");
            return 77;
        }
        const struct CMUnitTest root_tests[] = {
            T(test_other_uid_cannot_attach),
            T(test_group_mode_lets_group_members_attach),
            T(test_squatted_object_refused_naming_owner_and_mode),
            T(test_root_refuses_foreign_object_unless_allowed),
        };
        if (copy_exe_for_other_users() < 0) {
            remove_exe_copy();
            return 1;
        }
        int failed = cmocka_run_group_tests_name("port_root", root_tests, NULL, NULL);
        remove_exe_copy();
        return failed;
    }

    const struct CMUnitTest tests[] = {
        T(test_latest_value_reader_skips_what_it_slept_through),
        T(test_rec_returns_at_once_when_newer_exists),
        T(test_rec_blocks_until_newer_packet),
        T(test_tryrec_new_same_and_nothing_yet),
        T(test_rec_timed_times_out_with_its_code),
        T(test_poll_says_new_without_copying),
        T(test_poll_sees_another_process_send),
        T(test_wait_on_many_reports_which),
        T(test_wait_on_many_survives_writer_kill_and_timeout),
        T(test_wait_on_more_ports_than_the_kernel_sleeps_on),
        T(test_wait_without_futex_waitv_falls_back),
        T(test_second_live_writer_refused_naming_first_pid),
        T(test_closed_writer_releases_role_at_once),
        T(test_killed_writer_replaced_without_cleanup),
        T(test_send_never_waits_for_stopped_reader),
        T(test_rec_with_spin_blocks_and_wakes),
        T(test_size_mismatch_refused_naming_both_sizes),
        T(test_type_mismatch_refused_naming_both_types),
        T(test_size_zero_adopts_connection_layout),
        T(test_send_stamped_carries_given_times),
        T(test_create_on_names_the_connection),
        T(test_opaque_side_accepts_any_type_and_typed_side_records_it),
        T(test_many_readers_each_own_new_state),
        T(test_domains_with_same_connection_isolated),
        T(test_shm_created_mode_0600),
        T(test_shm_group_mode_by_option_and_env),
        T(test_shm_world_writable_mode_refused),
        T(test_own_object_with_wider_mode_refused),
        T(test_foreign_shm_object_gives_estale),
        T(test_damaged_ardnet_object_gives_estale),
        T(test_timestamps_plausible_and_seq_matches),
        T(test_port_info_zero_before_first_packet),
        T(test_wrong_direction_and_state_refused),
        T(test_rec_interrupted_by_signal_returns_eintr),
    };
    return cmocka_run_group_tests_name("port", tests, NULL, NULL);
}
