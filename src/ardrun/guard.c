/*
 * guard.c - naming a block that crashes: handlers of the fatal signals that write which block
 * the thread was running (async-signal-safe: a per-thread pointer to a preformatted label,
 * write(2) only) and then let the process die of the same signal. The watchdog of hung ticks
 * is in run.c (the group's control thread).
 */
#include "ardrun.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const int crash_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
static char prefix[96];
/* Per thread: where it records the block it runs. Initial-exec TLS of the executable: read
 * from a signal handler without a lock or an allocation. */
static __thread struct ardr_block *_Atomic *slot;
static __thread void *altstack;

void ardr_label(struct ardr_block *b, const char *rate)
{
    const char *plugin = b->pl.d ? b->pl.d->name : "?";
    if (rate)
        snprintf(b->label, sizeof b->label, "block '%s' (%.40s) of rate '%s'", b->name, plugin,
                 rate);
    else
        snprintf(b->label, sizeof b->label, "block '%s' (%.40s)", b->name, plugin);
}

static void put(char *buf, size_t *n, size_t cap, const char *s, size_t max)
{
    for (size_t i = 0; i < max && s[i] && *n + 1 < cap; i++)
        buf[(*n)++] = s[i];
}

static void put_hex(char *buf, size_t *n, size_t cap, uintptr_t v)
{
    char d[2 * sizeof v + 1];
    int k = (int)sizeof d - 1;
    d[k] = '\0';
    do {
        d[--k] = "0123456789abcdef"[v & 15];
        v >>= 4;
    } while (v && k > 0);
    put(buf, n, cap, "0x", 2);
    put(buf, n, cap, d + k, sizeof d);
}

static const char *sig_name(int sig)
{
    switch (sig) {
    case SIGSEGV:
        return "SIGSEGV";
    case SIGBUS:
        return "SIGBUS";
    case SIGFPE:
        return "SIGFPE";
    case SIGILL:
        return "SIGILL";
    case SIGABRT:
        return "SIGABRT";
    }
    return "a fatal signal";
}

static void on_crash(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    int saved = errno;
    char buf[400];
    size_t n = 0;
    struct ardr_block *b = slot ? atomic_load_explicit(slot, memory_order_relaxed) : NULL;
    put(buf, &n, sizeof buf, prefix, sizeof prefix);
    if (b) {
        put(buf, &n, sizeof buf, b->label, sizeof b->label);
        put(buf, &n, sizeof buf, ": crashed with ", 15);
    } else {
        put(buf, &n, sizeof buf, "crashed with ", 13);
    }
    put(buf, &n, sizeof buf, sig_name(sig), 16);
    if (sig != SIGABRT && si != NULL) {
        put(buf, &n, sizeof buf, " at address ", 12);
        put_hex(buf, &n, sizeof buf, (uintptr_t)si->si_addr);
    }
    if (b)
        put(buf, &n, sizeof buf, "; the process dies with it\n", 27);
    else
        put(buf, &n, sizeof buf, " outside any block's callback\n", 30);
    (void)!write(STDERR_FILENO, buf, n);
    /* SA_RESETHAND made the action the default again and SA_NODEFER leaves the signal
     * unblocked: raising it now ends the process with it (a fault would also come back on
     * return, but a signal sent by kill or raise would not). */
    raise(sig);
    errno = saved;
}

void ardr_crash_init(const char *pfx)
{
    snprintf(prefix, sizeof prefix, "%s", pfx);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_crash;
    sa.sa_flags = SA_SIGINFO | SA_RESETHAND | SA_NODEFER | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof crash_signals / sizeof crash_signals[0]; i++)
        sigaction(crash_signals[i], &sa, NULL);
}

void ardr_crash_thread(struct ardr_block *_Atomic *s)
{
    slot = s;
    if (s != NULL && altstack == NULL) {
        size_t size = 64 * 1024;
        void *mem = malloc(size);
        stack_t st = {.ss_sp = mem, .ss_size = size, .ss_flags = 0};
        if (mem != NULL && sigaltstack(&st, NULL) == 0)
            altstack = mem;
        else
            free(mem);
    } else if (s == NULL && altstack != NULL) {
        stack_t st = {.ss_sp = NULL, .ss_size = 0, .ss_flags = SS_DISABLE};
        if (sigaltstack(&st, NULL) == 0) {
            free(altstack);
            altstack = NULL;
        }
    }
}

struct ardr_block *_Atomic *ardr_crash_slot(void)
{
    return slot;
}

void ardr_crash_sigdel(sigset_t *set)
{
    for (size_t i = 0; i < sizeof crash_signals / sizeof crash_signals[0]; i++)
        sigdelset(set, crash_signals[i]);
}

/* --block: a stop signal arms a 1 s alarm; a step still running then is named. */
static void on_alarm(int sig)
{
    (void)sig;
    char buf[400];
    size_t n = 0;
    struct ardr_block *b = slot ? atomic_load_explicit(slot, memory_order_relaxed) : NULL;
    put(buf, &n, sizeof buf, prefix, sizeof prefix);
    if (b) {
        put(buf, &n, sizeof buf, b->label, sizeof b->label);
        put(buf, &n, sizeof buf,
            ": hangs: its callback did not return within 1 s of the stop "
            "signal; ending the process (exit 106)\n",
            200);
    } else {
        put(buf, &n, sizeof buf,
            "did not stop within 1 s of the stop signal; ending the "
            "process (exit 106)\n",
            200);
    }
    (void)!write(STDERR_FILENO, buf, n);
    _exit(ARDR_EXIT_HUNG);
}

void ardr_grace_init(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
}

void ardr_grace_start(void)
{
    alarm((unsigned)(ARDR_STOP_GRACE_NS / 1000000000));
}

void ardr_grace_end(void)
{
    alarm(0);
}
