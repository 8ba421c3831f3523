/*
 * kill.c - stop entries in reverse start order: remote entries by running ardkill on their
 * host (recursively, the path gets deeper at every hop so it ends), local ones by signalling
 * their process group.
 */
#include "ardkill.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void say(const struct ak_opts *o, const char *fmt, ...) ARDB_PRINTF(2, 3);
static void say(const struct ak_opts *o, const char *fmt, ...)
{
    if (o->quiet)
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("ardkill: ", stdout);
    vprintf(fmt, ap);
    fputc('\n', stdout);
    va_end(ap);
    fflush(stdout);
}

/* Run ardkill on `host`: for `path`, or with path NULL for the whole domain there (then
 * `visited` lists the hosts already covered, so that the sweep does not go round). */
static int stop_remote(const struct ak_opts *o, const char *host, const char *rsh_rec,
                       const char *bindir, const char *path, const char *visited)
{
    struct ardb_str cmd = {0};
    char prog[PATH_MAX + 16];
    snprintf(prog, sizeof prog, "%s%sardkill", bindir, bindir[0] ? "/" : "");
    ardb_str_quote(&cmd, prog);
    ardb_str_quote(&cmd, "--domain");
    ardb_str_quote(&cmd, o->domain);
    ardb_str_quote(&cmd, "--as-host");
    ardb_str_quote(&cmd, host);
    ardb_str_addf(&cmd, " --grace=%.3f", (double)o->grace_ns / 1e9);
    if (o->rsh) {
        ardb_str_quote(&cmd, "--rsh");
        ardb_str_quote(&cmd, o->rsh);
    }
    /* Not for one entry of a whole-domain stop: other entries may still run on that host
     * (they are stopped later), and its memory is removed when the host is swept, last. */
    if (o->unlink && path && !o->all)
        ardb_str_quote(&cmd, "--unlink-domain");
    if (visited) {
        ardb_str_quote(&cmd, "--visited");
        ardb_str_quote(&cmd, visited);
    }
    if (o->quiet)
        ardb_str_quote(&cmd, "--quiet");
    if (path) {
        ardb_str_quote(&cmd, "--");
        ardb_str_quote(&cmd, path);
    }
    const char *what = path ? path : "the domain";
    const char *rsh = o->rsh ? o->rsh : rsh_rec[0] ? rsh_rec : ardb_rsh(NULL);
    char **argv;
    int rc = ardb_rsh_argv(rsh, host, cmd.s, &argv);
    ardb_str_free(&cmd);
    if (rc < 0) {
        fprintf(stderr, "ardkill: %s\n", ard_errdetail());
        return AK_USAGE;
    }
    int status = 0;
    fflush(NULL);
    /* Generous: the remote side may wait a grace time per level. */
    rc = ardb_run(argv, 60000 + 20 * o->grace_ns / 1000000, NULL, &status);
    ardb_argv_free(argv);
    if (rc < 0) {
        fprintf(stderr, "ardkill: %s on %s: %s\n", what, host, ard_errdetail());
        return AK_HOST;
    }
    if (rc == 1) {
        fprintf(stderr, "ardkill: %s on %s: no answer in time; not known to be stopped\n", what,
                host);
        return AK_HOST;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 255) {
        fprintf(stderr, "ardkill: cannot reach host %s through '%s'; %s there is not stopped\n",
                host, rsh, what);
        return AK_HOST;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
        fprintf(stderr, "ardkill: no ardkill on host %s; %s there is not stopped\n", host, what);
        return AK_HOST;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : AK_HOST;
}

static bool in_list(const char *list, const char *host)
{
    size_t n = strlen(host);
    for (const char *p = list; p && *p;) {
        const char *comma = strchr(p, ',');
        size_t l = comma ? (size_t)(comma - p) : strlen(p);
        if (l == n && strncmp(p, host, n) == 0)
            return true;
        p = comma ? comma + 1 : NULL;
    }
    return false;
}

int ak_sweep_hosts(struct ardb_books *b, const struct ak_opts *o)
{
    struct ardb_host *v;
    int n = ardb_hosts(b, &v);
    if (n < 0) {
        fprintf(stderr, "ardkill: %s\n", ard_errdetail());
        return AK_SYS;
    }
    char self[ARDB_MAX_HOST];
    ardb_host_label(self, sizeof self);
    struct ardb_str visited = {0};
    ardb_str_add(&visited, o->visited ? o->visited : "");
    if (!in_list(visited.s, self))
        ardb_str_addf(&visited, "%s%s", visited.len ? "," : "", self);
    for (int i = 0; i < n; i++)
        if (!in_list(visited.s, v[i].host))
            ardb_str_addf(&visited, ",%s", v[i].host);
    int rc = AK_OK;
    for (int i = 0; i < n; i++) {
        if (o->visited && in_list(o->visited, v[i].host)) {
            ardb_forget_host(b, v[i].host);
            continue;
        }
        if (!strcmp(v[i].host, self))
            continue;
        int r = stop_remote(o, v[i].host, v[i].rsh, v[i].bindir, NULL, visited.s);
        if (r == AK_OK || r == AK_SURVIVED)
            ardb_forget_host(b, v[i].host);
        rc = r > rc ? r : rc;
    }
    ardb_str_free(&visited);
    free(v);
    return rc;
}

/* A descriptor that becomes readable when `pid` exits (zombie or not), or -1; only if pid
 * is still the process that was recorded and has not ended (start time checked after
 * opening: the descriptor then keeps referring to that process, whatever reuses the pid). */
static int exit_fd(long pid, unsigned long long start)
{
#ifdef SYS_pidfd_open
    if (pid <= 1)
        return -1;
    int fd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
    if (fd >= 0 && !ardb_proc_alive(pid, start)) {
        close(fd);
        return -1;
    }
    return fd;
#else
    (void)pid;
    (void)start;
    return -1;
#endif
}

/* The exit descriptors of an entry's command and supervisor (-1: gone, or not to be had). */
struct exit_fds {
    int cmd, sup;
};

static struct exit_fds open_exit_fds(const struct ardb_entry *e)
{
    return (struct exit_fds){exit_fd(e->pid, e->pid_start), exit_fd(e->sup, e->sup_start)};
}

static void close_exit_fds(struct exit_fds *x)
{
    if (x->cmd >= 0)
        close(x->cmd);
    if (x->sup >= 0)
        close(x->sup);
    x->cmd = x->sup = -1;
}

/* Signal the entry's process group, and its command if it made a group of its own. `cmd` is
 * the command's exit descriptor (or -1): with it, a group the command leads is known to be
 * the recorded one without looking at /proc, and the command is signalled through it. */
static void signal_entry(const struct ardb_entry *e, int sig, int cmd)
{
    /* The group is ours if it exists and its leader is gone or is the recorded one (a zombie
     * member gets the signal harmlessly). */
    bool ours = e->pgid > 1;
    if (ours &&
        !(cmd >= 0 && e->pgid == e->pid && (e->pgid_start == 0 || e->pgid_start == e->pid_start))) {
        unsigned long long leader = ardb_proc_start(e->pgid);
        ours = leader == 0 || e->pgid_start == 0 || leader == e->pgid_start;
    }
    if (ours)
        kill((pid_t)-e->pgid, sig);
#ifdef SYS_pidfd_send_signal
    if (cmd >= 0) { /* a command that made itself a group of its own: signalled directly */
        pid_t g = getpgid((pid_t)e->pid); /* -1: it has ended already */
        if (g >= 0 && g != e->pgid)
            (void)syscall(SYS_pidfd_send_signal, cmd, sig, NULL, 0);
        return;
    }
#endif
    if (ardb_proc_alive(e->pid, e->pid_start) && getpgid((pid_t)e->pid) != e->pgid)
        kill((pid_t)e->pid, sig); /* the same, without a descriptor */
}

/* The group's processes are gone: cheap checks first (the command's exit, the group empty -
 * the supervisor reaps the command at once), the /proc scan of ardb_group_alive only while a
 * member (perhaps a zombie not reaped yet) remains. `reaped`: the command is known to be
 * reaped. */
static bool gone_now(const struct ardb_entry *e, bool scan, bool reaped)
{
    if (e->pgid <= 1 || (kill((pid_t)-e->pgid, 0) < 0 && errno == ESRCH))
        return reaped || !ardb_proc_alive(e->pid, e->pid_start);
    return scan && !ardb_proc_alive(e->pid, e->pid_start) &&
           !ardb_group_alive(e->pgid, e->pgid_start);
}

/* Sleep for `ns`, or until the command of exit descriptor *cmd has been reaped: Linux 6.18
 * wakes the descriptor's pollers with POLLHUP then (where a kernel does not, this is a plain
 * sleep). True when it was reaped; *cmd is then closed (it would report the same at once
 * forever). */
static bool nap_until_reaped(int *cmd, int64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000LL), (long)(ns % 1000000000LL)};
    if (*cmd < 0) {
        ardb_sleep_ns(ns);
        return false;
    }
    struct pollfd pf = {*cmd, 0, 0};
    if (ppoll(&pf, 1, &ts, NULL) > 0 && (pf.revents & POLLHUP)) {
        close(*cmd);
        *cmd = -1;
        return true;
    }
    return false;
}

/* Wait until the entry's processes are gone, up to `limit_ns`; takes (closes) the exit
 * descriptors x. The command (and, unless supfd is given, its supervisor) are waited for by
 * their descriptors (no polling: stopping 100 blocks stays fast); what else may be in the
 * group is then checked by looking. With supfd, the supervisor's descriptor is handed to the
 * caller (-1 if it is already gone): it records how the command ended, then exits, while the
 * caller goes on. */
static bool wait_gone(const struct ardb_entry *e, int64_t limit_ns, struct exit_fds x, int *supfd)
{
    int64_t end = ardb_mono_ns() + limit_ns;
    struct pollfd pf[2];
    int n = 0;
    bool reaped = false;
    if (x.cmd >= 0)
        pf[n++] = (struct pollfd){x.cmd, POLLIN, 0};
    if (supfd) {
        *supfd = x.sup;
        x.sup = -1;
    } else if (x.sup >= 0) {
        pf[n++] = (struct pollfd){x.sup, POLLIN, 0};
    }
    while (n > 0) {
        int64_t left = end - ardb_mono_ns();
        if (left <= 0)
            break;
        int rc = poll(pf, (nfds_t)n, (int)(left / 1000000 + 1));
        if (rc < 0 && errno != EINTR)
            break;
        for (int i = 0; i < n; i++)
            if (pf[i].revents) {
                if (pf[i].fd != x.cmd) { /* the command's is kept: it also tells the reap */
                    close(pf[i].fd);
                    x.sup = -1;
                } else if (pf[i].revents & POLLHUP) {
                    reaped = true;
                }
                pf[i--] = pf[--n];
            }
    }
    /* The command's group is usually empty within microseconds (its supervisor reaps it):
     * wait for the reap, or look often for the first 5 ms, cheaply; then scan /proc, less
     * often. */
    int64_t nap = 20000, scan_at = ardb_mono_ns() + 5000000;
    bool gone = false;
    for (;;) {
        bool scan = ardb_mono_ns() >= scan_at;
        if ((gone = gone_now(e, scan, reaped)) || ardb_mono_ns() >= end)
            break;
        reaped = nap_until_reaped(&x.cmd, nap) || reaped;
        if (nap < (scan ? 10000000 : 500000))
            nap *= 2;
    }
    close_exit_fds(&x);
    return gone;
}

/* Entries whose command is gone and whose supervisor is still recording how it ended: the
 * next entry is signalled meanwhile. Their lines are printed, and they are removed from the
 * books, in stop order, once the supervisor has exited. */
struct pending {
    const struct ardb_entry *e; /* in ak_stop's listing, which outlives it */
    int supfd;
    double took;
};
static struct pending *pend;
static int npend, pend_head;

static void finish(struct ardb_books *b, const struct ak_opts *o, struct pending *p);

/* Finish the pending entries in order: all of them (wait), or those whose supervisor has
 * already exited. */
static void drain(struct ardb_books *b, const struct ak_opts *o, bool wait)
{
    while (pend_head < npend) {
        struct pending *p = &pend[pend_head];
        if (p->supfd >= 0) {
            struct pollfd pf = {p->supfd, POLLIN, 0};
            int rc;
            /* A supervisor writes one entry and exits: 5 s is only a guard. */
            do
                rc = poll(&pf, 1, wait ? 5000 : 0);
            while (rc < 0 && errno == EINTR);
            if (rc == 0 && !wait)
                return;
            close(p->supfd);
            p->supfd = -1;
        }
        finish(b, o, p);
        pend_head++;
    }
    npend = pend_head = 0;
}

/* An entry with a restart policy: mark it `stopping` under the lock, so that its supervisor
 * never restarts the command again, and take the entry as it is now (the command may have
 * been restarted since the listing: that is the one to stop). 0, 1 if the entry is gone or
 * is another start, -1 on error. */
static int mark_stopping(struct ardb_books *b, struct ardb_entry *e)
{
    if (ardb_lock(b) < 0)
        return -1;
    struct ardb_entry now;
    int rc = ardb_read(b, e->path, &now);
    if (rc == 0 && now.seq != e->seq)
        rc = 1;
    if (rc == 0 && !now.stopping) {
        now.stopping = true;
        rc = ardb_write(b, &now);
    }
    ardb_unlock(b);
    if (rc != 0)
        return rc < 0 ? -1 : 1;
    *e = now;
    return 0;
}

/* Cut the supervisor's restart delay short (after the entry's state was taken: it exits). */
static void wake_supervisor(const struct ardb_entry *e)
{
    if (e->sup > 1 && ardb_proc_alive(e->sup, e->sup_start))
        kill((pid_t)e->sup, SIGUSR1);
}

/* A start in progress: removing the entry under the lock makes its supervisor give up (the
 * command is held until it is recorded), unless it has just recorded the command - then *e
 * and *s become what it recorded, to be stopped. Returns the exit code, or -1 to go on. */
static int cancel_start(struct ardb_books *b, const struct ak_opts *o, struct ardb_entry *e,
                        enum ardb_state *s)
{
    if (ardb_lock(b) < 0)
        return AK_SYS;
    struct ardb_entry now;
    int rc = ardb_read(b, e->path, &now);
    if (rc == 0 && now.seq == e->seq && now.pgid == 0) {
        ardb_remove(b, e->path);
        ardb_unlock(b);
        say(o, "%s on %s: start cancelled", e->path, e->host);
        return AK_OK;
    }
    ardb_unlock(b);
    if (rc != 0)
        return AK_OK;
    *e = now;
    *s = ardb_effective(e);
    return -1;
}

/* Between two runs: nothing runs; the supervisor sees `stopping` and exits. */
static int stop_restarting(struct ardb_books *b, const struct ak_opts *o,
                           const struct ardb_entry *e)
{
    char last[64];
    ardb_state_text(e->last_state, e->last_code, last, sizeof last);
    if (!wait_gone(e, o->grace_ns + 5000000000LL, open_exit_fds(e), NULL)) {
        fprintf(stderr,
                "ardkill: %s on %s: its supervisor (pid %ld) did not end; kept in the "
                "books\n",
                e->path, e->host, e->sup);
        return AK_SURVIVED;
    }
    say(o, "stopped %s on %s: was waiting to restart (last run %s, %d restart%s)", e->path, e->host,
        last, e->restarts, e->restarts == 1 ? "" : "s");
    ardb_remove_seq(b, e->path, e->seq);
    return AK_OK;
}

/* A running command: SIGTERM to its group, SIGKILL after the grace time; x: its exit
 * descriptors when already open. Returns the exit code. */
static int stop_running(struct ardb_books *b, const struct ak_opts *o, struct ardb_entry *e,
                        struct exit_fds x)
{
    int64_t t0 = ardb_mono_ns();
    if (x.cmd < 0)
        x = open_exit_fds(e);
    signal_entry(e, SIGTERM, x.cmd);
    drain(b, o, false); /* the entries stopped before are finished while this one ends */
    int supfd = -1;
    bool gone = wait_gone(e, o->grace_ns, x, &supfd);
    if (gone) {
        /* The command is gone: the next entry may be signalled while its supervisor
         * records how it ended. */
        struct pending p = {e, supfd, (double)(ardb_mono_ns() - t0) / 1e9};
        if (pend) {
            pend[npend++] = p;
        } else {
            pend = &p, npend = 1;
            drain(b, o, true);
            pend = NULL;
        }
        return AK_OK;
    }
    if (supfd >= 0)
        close(supfd);
    drain(b, o, true);
    bool forced = false;
    if (!gone) {
        struct exit_fds k = open_exit_fds(e);
        signal_entry(e, SIGKILL, k.cmd);
        forced = true;
        gone = wait_gone(e, 5000000000LL, k, NULL);
    }
    double took = (double)(ardb_mono_ns() - t0) / 1e9;
    if (!gone) {
        fprintf(stderr,
                "ardkill: %s on %s (pid %ld, group %ld) still alive 5 s after SIGKILL "
                "(not permitted, or stuck in the kernel); kept in the books\n",
                e->path, e->host, e->pid, e->pgid);
        return AK_SURVIVED;
    }
    if (forced)
        say(o, "stopped %s on %s (pid %ld): killed by SIGKILL after %.1f s grace", e->path, e->host,
            e->pid, (double)o->grace_ns / 1e9);
    else
        say(o, "stopped %s on %s (pid %ld) by SIGTERM, %.3f s", e->path, e->host, e->pid, took);
    ardb_remove_seq(b, e->path, e->seq);
    return AK_OK;
}

/* Stops one entry of this host, whatever its state; returns the exit code. */
static int stop_local(struct ardb_books *b, const struct ak_opts *o, struct ardb_entry *e)
{
    char st[96];
    /* A running command without a restart policy: its exit descriptors first. When the
     * command's could be had (checked against its start time), it is running; no second look
     * at /proc. */
    struct exit_fds x = {-1, -1};
    enum ardb_state s;
    if (e->state == ARDB_RUNNING && !e->restart && e->pgid != 0 &&
        (x = open_exit_fds(e)).cmd >= 0) {
        s = ARDB_RUNNING;
    } else {
        close_exit_fds(&x);
        s = ardb_effective(e);
    }
    if (!((s == ARDB_RUNNING || s == ARDB_STARTING) && e->pgid != 0 && !e->restart))
        drain(b, o, true); /* its line comes after those of the entries stopped before */
    if (s == ARDB_STARTING && e->pgid == 0) {
        int rc = cancel_start(b, o, e, &s);
        if (rc >= 0)
            return rc;
    }
    if (e->restart) {
        int rc = mark_stopping(b, e);
        if (rc < 0) {
            fprintf(stderr, "ardkill: %s\n", ard_errdetail());
            return AK_SYS;
        }
        if (rc == 1)
            return AK_OK; /* gone meanwhile */
        s = ardb_effective(e);
        wake_supervisor(e); /* SIGUSR1: taken by its sigtimedwait in a restart delay */
    }
    if (s == ARDB_RESTARTING)
        return stop_restarting(b, o, e);
    if (s != ARDB_RUNNING && s != ARDB_STARTING) {
        ardb_state_text(s, e->code, st, sizeof st);
        if (s == ARDB_LOST)
            say(o, "%s on %s (pid %ld): already gone, status unknown", e->path, e->host, e->pid);
        else
            say(o, "%s on %s (pid %ld): had already %s", e->path, e->host, e->pid, st);
        ardb_remove_seq(b, e->path, e->seq);
        return AK_OK;
    }
    return stop_running(b, o, e, x);
}

/* A stopped entry whose supervisor is gone: say how the command ended (as the supervisor
 * recorded it) and remove the entry - by seq: once the command ended, a new start of the
 * path may already be recorded. One read, under the lock. */
static void finish(struct ardb_books *b, const struct ak_opts *o, struct pending *p)
{
    const struct ardb_entry *e = p->e;
    struct ardb_entry now;
    if (ardb_take_seq(b, e->path, e->seq, &now) == 0 &&
        (now.state == ARDB_EXITED || now.state == ARDB_KILLED)) {
        char st[96];
        ardb_state_text(now.state, now.code, st, sizeof st);
        say(o, "stopped %s on %s (pid %ld) in %.3f s: %s", e->path, e->host, e->pid, p->took, st);
    } else {
        say(o, "stopped %s on %s (pid %ld) by SIGTERM, %.3f s", e->path, e->host, e->pid, p->took);
    }
}

int ak_stop(struct ardb_books *b, const struct ak_opts *o, const char *path)
{
    struct ardb_entry *v;
    int n = ardb_list(b, path, &v);
    if (n < 0) {
        fprintf(stderr, "ardkill: %s\n", ard_errdetail());
        return AK_SYS;
    }
    char host[ARDB_MAX_HOST];
    ardb_host_label(host, sizeof host);
    int rc = AK_OK;
    if (b->damaged) {
        /* Its process is unknown: stopping it is left to the user, the rest is stopped. */
        fprintf(stderr,
                "ardkill: %s; %d such entr%s not stopped (remove the file once its "
                "process is stopped)\n",
                b->damage, b->damaged, b->damaged == 1 ? "y" : "ies");
        rc = AK_SYS;
    }
    if (n == 0) {
        free(v);
        /* The path may lie below an entry that was started on another host. */
        if (path) {
            n = ardb_list(b, NULL, &v);
            if (n < 0) {
                fprintf(stderr, "ardkill: %s\n", ard_errdetail());
                return AK_SYS;
            }
            bool found = false;
            for (int i = 0; i < n; i++)
                if (v[i].remote && ardb_under(path, v[i].path)) {
                    int r = stop_remote(o, v[i].host, v[i].rsh, v[i].bindir, path, NULL);
                    rc = r > rc ? r : rc;
                    found = true;
                }
            if (n > 0)
                free(v);
            if (found)
                return rc;
        }
        say(o, "nothing to stop%s%s in domain %s on %s", path ? " under " : "", path ? path : "",
            o->domain, host);
        return rc;
    }
    pend = calloc((size_t)n, sizeof *pend); /* without it, each entry is finished at once */
    for (int i = n - 1; i >= 0; i--) {
        int r;
        if (v[i].remote) {
            drain(b, o, true);
            r = stop_remote(o, v[i].host, v[i].rsh, v[i].bindir, v[i].path, NULL);
            /* The remote entry goes once its host confirmed (exit 0 or 1: it looked). */
            if (r == AK_OK || r == AK_SURVIVED)
                ardb_remove_seq(b, v[i].path, v[i].seq);
        } else {
            r = stop_local(b, o, &v[i]);
            drain(b, o, false);
        }
        rc = r > rc ? r : rc;
    }
    drain(b, o, true);
    free(pend);
    pend = NULL;
    free(v);
    return rc;
}
