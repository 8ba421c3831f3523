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

int as_wait_report(int fd, const struct as_opts *o, const struct ardb_entry *e)
{
    /* Executing takes milliseconds; this limit only guards against a hung supervisor. */
    const int64_t exec_limit = 10000000000LL;
    int64_t t0 = ardb_mono_ns();
    int64_t deadline = t0 + exec_limit;
    bool started = false, restarted = false;
    long pid = 0, early[8] = {0}; /* "ready PID" lines seen before "started" */
    size_t nearly = 0;
    char buf[512];
    size_t have = 0;
    char host[ARDB_MAX_HOST];
    ardb_host_label(host, sizeof host);
    for (;;) {
        int64_t left = deadline - ardb_mono_ns();
        if (left <= 0) {
            if (!started) {
                fprintf(stderr, "ardstart: %s: no answer from its supervisor within %.0f s\n",
                        e->path, (double)exec_limit / 1e9);
                return AS_SYS;
            }
            fprintf(stderr,
                    "ardstart: %s (pid %ld on %s) is not ready after %.1f s; left running "
                    "(stop it with: ardkill %s)\n",
                    e->path, pid, host, o->wait_ms / 1000.0, e->path);
            as_print_log_tail(e->log, 10);
            return AS_TIMEOUT;
        }
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
            char word[16];
            long v = 0;
            char tbuf[32];
            if (sscanf(line, "%15s %ld", word, &v) != 2)
                word[0] = '\0';
            if (!strcmp(word, "started")) {
                bool again = started;
                started = true;
                pid = v;
                if (o->wait_ms <= 0) {
                    if (!o->quiet)
                        printf("ardstart: started %s on %s (pid %ld)\n", e->path, host, pid);
                    return AS_OK;
                }
                if (!again) /* a restart keeps the time of the first start */
                    deadline = ardb_mono_ns() + (int64_t)o->wait_ms * 1000000LL;
                bool was_ready = false;
                for (size_t i = 0; i < nearly; i++)
                    was_ready |= early[i] == pid;
                if (was_ready) {
                    if (!o->quiet)
                        printf("ardstart: started %s on %s (pid %ld), ready after %s\n", e->path,
                               host, pid, ms_text(ardb_mono_ns() - t0, tbuf, sizeof tbuf));
                    return AS_OK;
                }
            } else if (!strcmp(word, "ready") && (started ? v == pid : nearly < 8)) {
                /* Only the command's own process declares it ready: a block that a script
                 * started directly (`tblock &`) inherits the pipe but speaks for itself. The
                 * line may come before "started": then it is checked when that comes. */
                if (!started) {
                    early[nearly++] = v;
                } else {
                    if (!o->quiet)
                        printf("ardstart: started %s on %s (pid %ld), ready after %s%s\n", e->path,
                               host, pid, ms_text(ardb_mono_ns() - t0, tbuf, sizeof tbuf),
                               restarted ? " (restarted)" : "");
                    return AS_OK;
                }
            } else if (!strcmp(word, "rexited") || !strcmp(word, "rkilled")) {
                /* Ended before it was ready, and its supervisor restarts it: the restarted
                 * command is awaited, within the same time. */
                char st[64];
                ardb_state_text(word[1] == 'e' ? ARDB_EXITED : ARDB_KILLED, (int)v, st, sizeof st);
                fprintf(stderr,
                        "ardstart: %s (pid %ld on %s) %s before it was ready; restarting it\n",
                        e->path, pid, host, st);
                restarted = true;
            } else if (!strcmp(word, "limit")) {
                fprintf(stderr,
                        "ardstart: %s (pid %ld on %s): restart limit reached (%ld restarts within "
                        "%.1f s) before it was ready; it stays failed\n",
                        e->path, pid, host, v, (double)o->restart_window_ns / 1e9);
                as_print_log_tail(e->log, 10);
                return AS_DIED;
            } else if (!strcmp(word, "failed")) {
                fprintf(stderr, "ardstart: %s: cannot execute '%s': %s\n", e->path, o->argv[0],
                        strerror((int)v));
                return AS_EXEC;
            } else if (!strcmp(word, "exited") || !strcmp(word, "killed")) {
                char st[64];
                ardb_state_text(word[0] == 'e' ? ARDB_EXITED : ARDB_KILLED, (int)v, st, sizeof st);
                fprintf(stderr, "ardstart: %s (pid %ld on %s) %s before it was ready\n", e->path,
                        pid, host, st);
                as_print_log_tail(e->log, 10);
                return AS_DIED;
            }
            line = nl + 1;
        }
        have = strlen(line);
        memmove(buf, line, have + 1);
        if (have >= sizeof buf - 1)
            have = 0; /* garbage without newline: drop it */
    }
}
