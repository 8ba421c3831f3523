/*
 * ready.c - wait for what the supervisor and the command report on the starter's pipe:
 *   "started PID"  the command was executed        "failed ERRNO"  it could not be
 *   "ready PID"    process PID is ready (ARD_READY_FD, libardnet's ard_ready); it counts
 *                  only when PID is the command's own (ardstart --ready speaks for its parent)
 *   "exited N" / "killed SIG"   it ended
 */
#include "ardstart.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void as_print_log_tail(const char *log, int lines)
{
    FILE *f = fopen(log, "re");
    if (!f)
        return;
    static char buf[16384];
    if (fseek(f, 0, SEEK_END) == 0) {
        long size = ftell(f);
        long from = size > (long)sizeof buf - 1 ? size - (long)sizeof buf + 1 : 0;
        fseek(f, from, SEEK_SET);
    }
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    if (n && buf[n - 1] == '\n')
        buf[--n] = '\0';
    char *p = buf + n;
    int seen = 0;
    while (p > buf && seen < lines) {
        p--;
        if (*p == '\n')
            seen++;
    }
    if (*p == '\n')
        p++;
    fprintf(stderr, "ardstart: last lines of %s:\n", log);
    for (char *line = p; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        fprintf(stderr, "  | %s\n", line);
        line = nl ? nl + 1 : NULL;
    }
}

static const char *ms_text(int64_t ns, char *buf, size_t len)
{
    snprintf(buf, len, "%.1f ms", (double)ns / 1e6);
    return buf;
}

/* Executing takes milliseconds; this limit only guards against a hung supervisor. */
#define EXEC_LIMIT_NS 10000000000LL

/* What the starter knows while it waits for the reports of one entry. */
struct waiting {
    const struct as_opts *o;
    const struct ardb_entry *e;
    int64_t t0, deadline;
    bool started, restarted;
    long pid, early[8]; /* "ready PID" lines seen before "started" */
    size_t nearly;
    char host[ARDB_MAX_HOST];
};

/* No report in time: the supervisor hung, or the command is not ready (left running). */
static int wait_timed_out(const struct waiting *w)
{
    if (!w->started) {
        fprintf(stderr, "ardstart: %s: no answer from its supervisor within %.0f s\n", w->e->path,
                (double)EXEC_LIMIT_NS / 1e9);
        return AS_SYS;
    }
    fprintf(stderr,
            "ardstart: %s (pid %ld on %s) is not ready after %.1f s; left running "
            "(stop it with: ardkill %s)\n",
            w->e->path, w->pid, w->host, w->o->wait_ms / 1000.0, w->e->path);
    as_print_log_tail(w->e->log, 10);
    return AS_TIMEOUT;
}

/* "started PID": done without --wait, or when PID said ready already; -1 to wait on. */
static int on_started(struct waiting *w, long v)
{
    char tbuf[32];
    bool again = w->started;
    w->started = true;
    w->pid = v;
    if (w->o->wait_ms <= 0) {
        if (!w->o->quiet)
            printf("ardstart: started %s on %s (pid %ld)\n", w->e->path, w->host, w->pid);
        return AS_OK;
    }
    if (!again) /* a restart keeps the time of the first start */
        w->deadline = ardb_mono_ns() + (int64_t)w->o->wait_ms * 1000000LL;
    bool was_ready = false;
    for (size_t i = 0; i < w->nearly; i++)
        was_ready |= w->early[i] == w->pid;
    if (was_ready) {
        if (!w->o->quiet)
            printf("ardstart: started %s on %s (pid %ld), ready after %s\n", w->e->path, w->host,
                   w->pid, ms_text(ardb_mono_ns() - w->t0, tbuf, sizeof tbuf));
        return AS_OK;
    }
    return -1;
}

/* "ready PID": only the command's own process declares it ready: a block that a script
 * started directly (`tblock &`) inherits the pipe but speaks for itself. The line may come
 * before "started": then it is checked when that comes. Returns AS_OK, or -1 to wait on. */
static int on_ready(struct waiting *w, long v)
{
    char tbuf[32];
    if (!w->started) {
        w->early[w->nearly++] = v;
        return -1;
    }
    if (!w->o->quiet)
        printf("ardstart: started %s on %s (pid %ld), ready after %s%s\n", w->e->path, w->host,
               w->pid, ms_text(ardb_mono_ns() - w->t0, tbuf, sizeof tbuf),
               w->restarted ? " (restarted)" : "");
    return AS_OK;
}

/* The command ended before it was ready (word: rexited, rkilled, limit, failed, exited or
 * killed, with value v); the exit code, or -1 to wait for its restart. */
static int on_ended(struct waiting *w, const char *word, long v)
{
    const struct ardb_entry *e = w->e;
    char st[64];
    if (!strcmp(word, "rexited") || !strcmp(word, "rkilled")) {
        /* Ended before it was ready, and its supervisor restarts it: the restarted
         * command is awaited, within the same time. */
        ardb_state_text(word[1] == 'e' ? ARDB_EXITED : ARDB_KILLED, (int)v, st, sizeof st);
        fprintf(stderr, "ardstart: %s (pid %ld on %s) %s before it was ready; restarting it\n",
                e->path, w->pid, w->host, st);
        w->restarted = true;
        return -1;
    }
    if (!strcmp(word, "limit")) {
        fprintf(stderr,
                "ardstart: %s (pid %ld on %s): restart limit reached (%ld restarts within "
                "%.1f s) before it was ready; it stays failed\n",
                e->path, w->pid, w->host, v, (double)w->o->restart_window_ns / 1e9);
        as_print_log_tail(e->log, 10);
        return AS_DIED;
    }
    if (!strcmp(word, "failed")) {
        fprintf(stderr, "ardstart: %s: cannot execute '%s': %s\n", e->path, w->o->argv[0],
                strerror((int)v));
        return AS_EXEC;
    }
    if (!strcmp(word, "exited") || !strcmp(word, "killed")) {
        ardb_state_text(word[0] == 'e' ? ARDB_EXITED : ARDB_KILLED, (int)v, st, sizeof st);
        fprintf(stderr, "ardstart: %s (pid %ld on %s) %s before it was ready\n", e->path, w->pid,
                w->host, st);
        as_print_log_tail(e->log, 10);
        return AS_DIED;
    }
    return -1;
}

/* One report line ("WORD VALUE"); the exit code, or -1 to wait on. */
static int take_report(struct waiting *w, const char *line)
{
    char word[16];
    long v = 0;
    if (sscanf(line, "%15s %ld", word, &v) != 2)
        word[0] = '\0';
    if (!strcmp(word, "started"))
        return on_started(w, v);
    if (!strcmp(word, "ready") && (w->started ? v == w->pid : w->nearly < 8))
        return on_ready(w, v);
    if (!strcmp(word, "ready"))
        return -1;
    return on_ended(w, word, v);
}

int as_wait_report(int fd, const struct as_opts *o, const struct ardb_entry *e)
{
    struct waiting w = {.o = o, .e = e, .t0 = ardb_mono_ns()};
    w.deadline = w.t0 + EXEC_LIMIT_NS;
    char buf[512];
    size_t have = 0;
    ardb_host_label(w.host, sizeof w.host);
    for (;;) {
        int64_t left = w.deadline - ardb_mono_ns();
        if (left <= 0)
            return wait_timed_out(&w);
        struct pollfd pf = {fd, POLLIN, 0};
        int pr = poll(&pf, 1, (int)(left / 1000000 + 1));
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr <= 0)
            continue;
        ssize_t r = read(fd, buf + have, sizeof buf - 1 - have);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            fprintf(stderr, "ardstart: %s: its supervisor went away without a report\n", e->path);
            return AS_SYS;
        }
        have += (size_t)r;
        buf[have] = '\0';
        char *line = buf, *nl;
        while ((nl = strchr(line, '\n')) != NULL) {
            *nl = '\0';
            int rc = take_report(&w, line);
            if (rc >= 0)
                return rc;
            line = nl + 1;
        }
        have = strlen(line);
        memmove(buf, line, have + 1);
        if (have >= sizeof buf - 1)
            have = 0; /* garbage without newline: drop it */
    }
}
