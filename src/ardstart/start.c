/*
 * start.c - start a command on this host: reserve its entry, fork a supervisor that detaches,
 * starts the command in the supervisor's process group and records how it ends.
 *
 * Processes:  ardstart --fork--> supervisor (setsid: detached, ignores TERM/INT/HUP)
 * --fork--> command, leader of its own process group. The command is held before exec until
 * the supervisor has recorded its pid and group in the books; a supervisor that dies before
 * that takes the command with it (it reads EOF and exits). So nothing that ardstart starts
 * can escape the books and ardkill, whoever dies when. The supervisor is outside the group:
 * ardkill's signals never take it, it reaps the command at once and records how it ended.
 */
#include "ardstart.h"

#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int as_entry_path(const struct as_opts *o, const char *name, char *path, size_t len)
{
    const char *parent = o->parent ? o->parent : getenv("ARD_PATH");
    if (parent && *parent && ardb_check_path(parent) < 0) {
        char why[256]; /* the detail is rewritten from a copy */
        ardb_copy(why, sizeof why, ard_errdetail());
        return ardi_fail(ARD_EINVAL, "parent: %s", why);
    }
    int n = parent && *parent ? snprintf(path, len, "%s/%s", parent, name)
                              : snprintf(path, len, "%s", name);
    if (n < 0 || (size_t)n >= len)
        return ardi_fail(ARD_EINVAL, "path of the entry is too long");
    return ardb_check_path(path);
}

void as_quote_argv(char **argv, int argc, char *buf, size_t len)
{
    struct ardb_str s = {0};
    for (int i = 0; i < argc; i++)
        ardb_str_quote(&s, argv[i]);
    snprintf(buf, len, "%s", s.s ? s.s : "");
    ardb_str_free(&s);
}

/* Write one report line to the starter; it may be gone (EPIPE is ignored). */
static void report(int fd, const char *fmt, long v)
{
    char line[64];
    int n = snprintf(line, sizeof line, fmt, v);
    ssize_t w;
    do
        w = write(fd, line, (size_t)n);
    while (w < 0 && errno == EINTR);
}

static void log_line(const char *fmt, const char *a, const char *b)
{
    char when[32];
    time_t t = time(NULL);
    struct tm tm;
    strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", localtime_r(&t, &tm));
    printf("=== ardstart %s: ", when);
    printf(fmt, a, b);
    printf("\n");
    fflush(stdout);
}

/* Update our own entry under the lock; `seq` identifies it (a later start of the same path
 * has another seq, and a removed entry - ardkill - is never recreated). fn returns 0 to
 * write the entry, 1 to leave it as it is. Returns 0 if the entry was ours and updated, 1
 * if it is gone, not ours or fn refused, -1 on error. */
static int update(struct ardb_books *b, const char *path, uint64_t seq,
                  int (*fn)(struct ardb_entry *, void *), void *arg)
{
    if (ardb_lock(b) < 0)
        return -1;
    struct ardb_entry e;
    int rc = ardb_read(b, path, &e);
    if (rc == 0 && e.seq == seq && !e.remote) {
        rc = fn(&e, arg);
        if (rc == 0)
            rc = ardb_write(b, &e);
    } else if (rc == 0) {
        rc = 1;
    }
    ardb_unlock(b);
    return rc;
}

struct run {
    pid_t pid;
    bool await_ready; /* state "starting" until the command reports ready */
    bool again;       /* a restart: a new start time */
};

/* The command of this run is recorded - unless ardkill is stopping the entry: then it is
 * never started (it is held before exec until this is written). */
static int set_pid(struct ardb_entry *e, void *arg)
{
    const struct run *r = arg;
    if (e->stopping)
        return 1;
    if (!r->again) { /* the supervisor, with the first run's command: one write */
        e->sup = getpid();
        e->sup_start = ardb_proc_start(e->sup);
    }
    e->pid = r->pid;
    e->pid_start = ardb_proc_start(e->pid);
    e->pgid = e->pid;
    e->pgid_start = e->pid_start;
    e->state = r->await_ready ? ARDB_STARTING : ARDB_RUNNING;
    if (r->again) {
        e->start_ns = ardb_realtime_ns();
        e->end_ns = 0;
    }
    return 0;
}

static int set_ready(struct ardb_entry *e, void *arg)
{
    if (e->pid != *(pid_t *)arg || e->state != ARDB_STARTING)
        return 1;
    e->state = ARDB_RUNNING;
    return 0;
}

struct ending {
    enum ardb_state state;
    int code;
};

static int set_end(struct ardb_entry *e, void *arg)
{
    const struct ending *end = arg;
    e->state = end->state;
    e->code = end->code;
    e->end_ns = ardb_realtime_ns();
    return 0;
}

enum outcome { END_STOP, END_RESTART, END_LIMIT };

struct decision {
    struct ending end;
    bool want;     /* the policy asks for a restart */
    bool limit_ok; /* and the restart limit allows it */
    enum outcome out;
};

/* How the run ended, and what comes next - decided under the lock, so that an ardkill that
 * marked the entry `stopping` is never answered by a restart. */
static int decide(struct ardb_entry *e, void *arg)
{
    struct decision *d = arg;
    if (e->stopping || !d->want) {
        d->out = END_STOP;
        return set_end(e, &d->end);
    }
    e->last_state = d->end.state;
    e->last_code = d->end.code;
    e->end_ns = ardb_realtime_ns();
    if (!d->limit_ok) {
        d->out = END_LIMIT;
        e->state = ARDB_FAILED;
        e->code = ARDB_CODE_LIMIT;
        return 0;
    }
    d->out = END_RESTART;
    e->state = ARDB_RESTARTING;
    e->code = 0;
    e->restarts++;
    return 0;
}

/* The command's side of the fork: never returns. */
static void default_signals(void)
{
    for (int s = 1; s < NSIG; s++)
        signal(s, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
}

/* ready_fd: the pipe to give as ARD_READY_FD, or -1 for none. */
static void exec_command(const struct as_opts *o, const char *path, int report_fd, int ready_fd,
                         int exec_fd)
{
    if (ready_fd >= 0) {
        /* The command (or a script's `ardstart --ready`) writes "ready PID" here. */
        int fd = dup(ready_fd);
        struct stat ps;
        char v[80];
        if (fd >= 0 && fstat(fd, &ps) == 0) {
            snprintf(v, sizeof v, "%d:%ju:%ju", fd, (uintmax_t)ps.st_dev, (uintmax_t)ps.st_ino);
            setenv("ARD_READY_FD", v, 1);
        } else {
            unsetenv("ARD_READY_FD");
        }
        if (ready_fd != report_fd)
            close(ready_fd);
    } else {
        unsetenv("ARD_READY_FD");
    }
    close(report_fd);
    setenv("ARD_PATH", path, 1);
    setenv("ARD_DOMAIN", o->domain, 1);
    char host[ARDB_MAX_HOST];
    ardb_host_label(host, sizeof host);
    setenv("ARD_HOST", host, 1);
    for (int i = 0; i < o->nenv; i++) {
        char *kv = strdup(o->env[i]);
        if (kv) {
            char *eq = strchr(kv, '=');
            *eq = '\0';
            setenv(kv, eq + 1, 1);
            free(kv);
        }
    }
    const char *dir = o->chdir;
    struct stat st;
    if (!dir && o->cwd_if && stat(o->cwd_if, &st) == 0 && S_ISDIR(st.st_mode))
        dir = o->cwd_if;
    int e = 0;
    if (dir && chdir(dir) < 0)
        e = errno;
    if (!e) {
        execvp(o->argv[0], o->argv);
        e = errno;
    }
    ardb_exec_failed(exec_fd, e);
}

static int open_pidfd(pid_t pid)
{
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    (void)pid;
    return -1;
#endif
}

/* Wait for the command `pid` to end; meanwhile, with a restart policy, read its readiness
 * from ready_fd (the supervisor's own pipe), record it and pass it on to the starter. A
 * restarted command that is not ready within ready_ns (> 0) is stopped: TERM to its group,
 * KILL 2 s later. Returns the wait status; *not_ready tells whether it was stopped so. */
static int wait_command(struct ardb_books *b, const struct ardb_entry *en, pid_t pid, int ready_fd,
                        int report_fd, int64_t ready_ns, bool *not_ready)
{
    int pidfd = open_pidfd(pid);
    int64_t deadline = ready_ns > 0 ? ardb_mono_ns() + ready_ns : 0, kill_at = 0;
    bool ready = ready_fd < 0;
    char buf[256];
    size_t have = 0;
    *not_ready = false;
    for (;;) {
        struct pollfd pf[2];
        nfds_t n = 0;
        if (pidfd >= 0)
            pf[n++] = (struct pollfd){pidfd, POLLIN, 0};
        if (ready_fd >= 0)
            pf[n++] = (struct pollfd){ready_fd, POLLIN, 0};
        int64_t now = ardb_mono_ns();
        int64_t until = kill_at ? kill_at : !ready && deadline ? deadline : 0;
        int timeout = until ? (int)((until - now) / 1000000 + 1) : -1;
        if (until && until <= now)
            timeout = 0;
        if (pidfd < 0 && (timeout < 0 || timeout > 20))
            timeout = 20; /* no pidfd: look every 20 ms */
        int pr = n ? poll(pf, n, timeout) : (ardb_sleep_ns((int64_t)timeout * 1000000), 0);
        if (pr < 0 && errno != EINTR)
            ardb_sleep_ns(1000000);
        int st;
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid) {
            if (pidfd >= 0)
                close(pidfd);
            if (ready_fd >= 0)
                close(ready_fd);
            return st;
        }
        if (ready_fd >= 0 && pr > 0 && pf[n - 1].revents) {
            ssize_t r = read(ready_fd, buf + have, sizeof buf - 1 - have);
            if (r <= 0 && !(r < 0 && errno == EINTR)) {
                close(ready_fd); /* every writer is gone: nothing more to come */
                ready_fd = -1;
            } else if (r > 0) {
                have += (size_t)r;
                buf[have] = '\0';
                char *line = buf, *nl;
                while ((nl = strchr(line, '\n')) != NULL) {
                    *nl = '\0';
                    long v = 0;
                    if (sscanf(line, "ready %ld", &v) == 1) {
                        /* Recorded first: whoever the starter tells may look at the books. */
                        if (v == (long)pid && !ready) {
                            ready = true;
                            update(b, en->path, en->seq, set_ready, &pid);
                        }
                        report(report_fd, "ready %ld\n", v);
                    }
                    line = nl + 1;
                }
                have = strlen(line);
                memmove(buf, line, have + 1);
                if (have >= sizeof buf - 1)
                    have = 0;
            }
        }
        now = ardb_mono_ns();
        if (!ready && deadline && !*not_ready && now >= deadline) {
            *not_ready = true;
            char secs[32];
            snprintf(secs, sizeof secs, "%.1f", (double)ready_ns / 1e9);
            log_line("%s: not ready after %s s: stopping it", en->path, secs);
            kill(-pid, SIGTERM);
            kill_at = now + 2000000000LL;
        } else if (kill_at && now >= kill_at) {
            kill(-pid, SIGKILL);
            kill_at = 0;
        }
    }
}

/* The restart delay: cut short by SIGUSR1 (ardkill, once it marked the entry stopping). */
static void restart_delay(int64_t ns)
{
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    int64_t end = ardb_mono_ns() + ns;
    for (;;) {
        int64_t left = end - ardb_mono_ns();
        if (left <= 0)
            return;
        struct timespec ts = {(time_t)(left / 1000000000LL), (long)(left % 1000000000LL)};
        if (sigtimedwait(&usr1, NULL, &ts) == SIGUSR1)
            return;
    }
}

/* A supervisor's context: the books, the options, its entry and the pipe to the starter. */
struct sup {
    struct ardb_books *b;
    const struct as_opts *o;
    const struct ardb_entry *en;
    int report_fd;
    bool own_ready; /* readiness comes to the supervisor (restart policy and --wait) */
    struct as_restarts rs;
};

/* The supervisor detaches: its own session, signals ignored, stdin from /dev/null, stdout
 * and stderr to the entry's log, only the descriptors it needs, its own lock. */
static void detach_supervisor(struct ardb_books *b, const struct ardb_entry *en, int report_fd)
{
    setsid();
    /* The supervisor stays until the command ended, to record how. SIGPIPE: the starter may
     * have gone. SIGUSR1 (ardkill: "stopping, do not restart") is taken by sigtimedwait. */
    signal(SIGTERM, SIG_IGN);
    signal(SIGINT, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    sigprocmask(SIG_BLOCK, &usr1, NULL);
    int fd = open("/dev/null", O_RDONLY);
    if (fd >= 0 && fd != 0) {
        dup2(fd, 0);
        close(fd);
    }
    fd = open(en->log, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        fd = open("/dev/null", O_WRONLY);
    dup2(fd, 1);
    dup2(fd, 2);
    if (fd > 2)
        close(fd);
    /* A new open file description of the lock: flock belongs to it, not to the starter's.
     * The books' directories stay open (checked when the starter opened them). */
    int keep[] = {report_fd, b->dirfd, b->efd};
    ardb_close_fds_except(keep, 3);
    if (ardb_reopen_lock(b) < 0)
        _exit(111);
}

/* A run could not be started (error e): recorded as failed, reported, the supervisor ends. */
static void run_failed(const struct sup *s, int e)
{
    struct ending end = {ARDB_FAILED, e};
    update(s->b, s->en->path, s->en->seq, set_end, &end);
    report(s->report_fd, "failed %ld\n", e);
    _exit(111);
}

/* The command's side of the fork: held until the supervisor recorded its pid, then exec'd.
 * Never returns. */
static void run_child(const struct sup *s, const int ex[2], const int go[2], const int rp[2])
{
    /* At once: a SIGTERM from ardkill must count from the moment the pid is recorded. */
    default_signals();
    setpgid(0, 0);
    close(ex[0]);
    close(go[1]);
    ardb_close(s->b);
    char c;
    ssize_t g;
    do
        g = read(go[0], &c, 1);
    while (g < 0 && errno == EINTR);
    if (g != 1)
        _exit(127); /* not recorded (supervisor died, or ardkill cancelled the start) */
    close(go[0]);
    exec_command(s->o, s->en->path, s->report_fd,
                 s->own_ready        ? rp[1]
                 : s->o->wait_ms > 0 ? s->report_fd
                                     : -1,
                 ex[1]);
}

/* Starts run number `run` of the command and reports it started; *ready_fd: the read end of
 * its readiness pipe (-1 without). Returns its pid; the supervisor ends when it cannot be
 * started, was stopped by ardkill meanwhile or cannot be executed. */
static pid_t start_run(const struct sup *s, int run, int *ready_fd)
{
    const struct ardb_entry *en = s->en;
    int ex[2], go[2], rp[2] = {-1, -1};
    if (pipe2(ex, O_CLOEXEC) < 0 || pipe2(go, O_CLOEXEC) < 0 ||
        (s->own_ready && pipe2(rp, O_CLOEXEC) < 0))
        run_failed(s, errno);
    pid_t pid = fork();
    if (pid < 0)
        run_failed(s, errno);
    if (pid == 0)
        run_child(s, ex, go, rp);
    setpgid(pid, pid); /* also here: the group exists whichever side runs first */
    close(ex[1]);
    close(go[0]);
    if (rp[1] >= 0)
        close(rp[1]);
    struct run r = {pid, s->own_ready, run > 0};
    if (update(s->b, en->path, en->seq, set_pid, &r) != 0) {
        close(go[1]);
        if (rp[0] >= 0)
            close(rp[0]);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
        }
        log_line("%s: %s", en->path,
                 run ? "stopped by ardkill: not restarted"
                     : "entry vanished before start (stopped by ardkill?)");
        report(s->report_fd, "failed %ld\n", ECANCELED);
        _exit(0);
    }
    if (run)
        log_line("restarting %s: %s", en->path, en->cmd);
    ssize_t gw;
    do
        gw = write(go[1], "g", 1);
    while (gw < 0 && errno == EINTR);
    close(go[1]);
    int e = ardb_exec_result(ex[0]);
    if (e != 0) {
        /* Never restarted: the command cannot be executed. */
        int st;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
        }
        if (rp[0] >= 0)
            close(rp[0]);
        struct ending end = {ARDB_FAILED, e};
        update(s->b, en->path, en->seq, set_end, &end);
        log_line("%s: cannot execute: %s", en->path, strerror(e));
        report(s->report_fd, "failed %ld\n", e);
        _exit(0);
    }
    report(s->report_fd, "started %ld\n", pid);
    *ready_fd = rp[0];
    return pid;
}

/* Waits for run number `run` (pid) to end; returns its wait status, *not_ready when a
 * restarted run was stopped for not being ready in time. */
static int wait_run(const struct sup *s, int run, pid_t pid, int ready_fd, bool *not_ready)
{
    int st;
    *not_ready = false;
    if (s->o->restart == AS_RESTART_NO) {
        while (waitpid(pid, &st, 0) < 0) {
            if (errno != EINTR) {
                st = 0;
                break;
            }
        }
    } else {
        /* The first run's readiness is the starter's to wait for (it leaves a slow
         * command running); a restarted one that is not ready in time has failed. */
        st = wait_command(s->b, s->en, pid, ready_fd, s->report_fd,
                          run > 0 && s->own_ready ? (int64_t)s->o->wait_ms * 1000000LL : 0,
                          not_ready);
    }
    return st;
}

/* After a run ended with wait status st: recorded as ended (the supervisor ends), as failed
 * for the restart limit (it ends too), or as restarting after the delay (it returns). */
static void after_run(struct sup *s, int st, bool not_ready)
{
    const struct as_opts *o = s->o;
    const struct ardb_entry *en = s->en;
    struct decision d = {0};
    if (WIFSIGNALED(st))
        d.end = (struct ending){ARDB_KILLED, WTERMSIG(st)};
    else
        d.end = (struct ending){ARDB_EXITED, WEXITSTATUS(st)};
    bool failure = not_ready || d.end.state != ARDB_EXITED || d.end.code != 0;
    d.want = as_restart_wanted(o, failure);
    int64_t now = ardb_mono_ns();
    d.limit_ok = as_restart_limit_ok(&s->rs, o, now);
    char text[64];
    ardb_state_text(d.end.state, d.end.code, text, sizeof text);
    if (update(s->b, en->path, en->seq, decide, &d) != 0 || d.out == END_STOP) {
        log_line("%s: %s", en->path, text);
        report(s->report_fd, d.end.state == ARDB_KILLED ? "killed %ld\n" : "exited %ld\n",
               d.end.code);
        _exit(0);
    }
    if (d.out == END_LIMIT) {
        char lim[160];
        snprintf(lim, sizeof lim, "%s; %d restarts within %.1f s: restart limit reached, failed",
                 text, o->restart_limit, (double)o->restart_window_ns / 1e9);
        log_line("%s: %s", en->path, lim);
        report(s->report_fd, "limit %ld\n", o->restart_limit);
        _exit(0);
    }
    as_restart_note(&s->rs, o, now);
    char next[96];
    snprintf(next, sizeof next, "%s; restart %d in %.1f s", text, s->rs.n,
             (double)o->restart_delay_ns / 1e9);
    log_line("%s: %s", en->path, next);
    report(s->report_fd, d.end.state == ARDB_KILLED ? "rkilled %ld\n" : "rexited %ld\n",
           d.end.code);
    restart_delay(o->restart_delay_ns);
}

/* The supervisor: never returns. */
static void supervise(struct ardb_books *b, const struct as_opts *o, const struct ardb_entry *en,
                      int report_fd)
{
    detach_supervisor(b, en, report_fd);
    log_line("starting %s: %s", en->path, en->cmd);
    /* With a restart policy and --wait, readiness comes to the supervisor (which records
     * it and passes it on), so that it is awaited again after each restart. */
    struct sup s = {b, o, en, report_fd, o->restart != AS_RESTART_NO && o->wait_ms > 0, {0}};
    as_restarts_init(&s.rs, o);
    for (int run = 0;; run++) {
        int ready_fd;
        pid_t pid = start_run(&s, run, &ready_fd);
        bool not_ready;
        int st = wait_run(&s, run, pid, ready_fd, &not_ready);
        after_run(&s, st, not_ready);
    }
}

int as_reserve(struct ardb_books *b, struct ardb_entry *e, bool replace_remote,
               struct ardb_entry *old)
{
    struct ardb_entry prev;
    if (!old)
        old = &prev;
    if (ardb_lock(b) < 0)
        goto sys;
    int had = ardb_read(b, e->path, old);
    if (had < 0) {
        ardb_unlock(b);
        goto sys;
    }
    if (had == 0 && old->remote && !replace_remote) {
        ardb_unlock(b);
        ardi_fail(ARD_EBUSY, "'%s' is already started on host %s; stop it first (ardkill %s)",
                  e->path, old->host, e->path);
        return AS_RUNNING;
    }
    if (had == 0 && !old->remote) {
        enum ardb_state st = ardb_effective(old);
        if (st == ARDB_RUNNING || st == ARDB_STARTING || st == ARDB_RESTARTING) {
            ardb_unlock(b);
            ardi_fail(ARD_EBUSY,
                      "'%s' is already running here (pid %ld); stop it first (ardkill %s) or "
                      "choose another name (-n)",
                      e->path, old->pid, e->path);
            return AS_RUNNING;
        }
    }
    if (had != 0)
        memset(old, 0, sizeof *old);
    if (ardb_next_seq(b, &e->seq) < 0 || ardb_write(b, e) < 0) {
        ardb_unlock(b);
        goto sys;
    }
    ardb_unlock(b);
    return AS_OK;
sys:
    return AS_SYS; /* the books' detail */
}

int as_start_local(struct ardb_books *b, const struct as_opts *o, const char *path)
{
    struct ardb_entry e = {0};
    ardb_copy(e.path, sizeof e.path, path);
    ardb_host_label(e.host, sizeof e.host);
    e.state = ARDB_STARTING;
    e.start_ns = ardb_realtime_ns();
    e.restart = o->restart;
    as_quote_argv(o->argv, o->argc, e.cmd, sizeof e.cmd);
    ardb_log_path(b, path, e.log, sizeof e.log);

    int rc = as_reserve(b, &e, false, NULL);
    if (rc != AS_OK) {
        fprintf(stderr, "ardstart: %s\n", ard_errdetail());
        return rc;
    }

    int rep[2];
    if (pipe2(rep, O_CLOEXEC) < 0) {
        fprintf(stderr, "ardstart: %s: pipe: %s\n", path, strerror(errno));
        ardb_remove_seq(b, path, e.seq);
        return AS_SYS;
    }
    fflush(NULL);
    pid_t sup = fork();
    if (sup < 0) {
        fprintf(stderr, "ardstart: %s: fork: %s\n", path, strerror(errno));
        ardb_remove_seq(b, path, e.seq);
        close(rep[0]);
        close(rep[1]);
        return AS_SYS;
    }
    if (sup == 0) {
        close(rep[0]);
        supervise(b, o, &e, rep[1]);
    }
    close(rep[1]);
    rc = as_wait_report(rep[0], o, &e);
    close(rep[0]);
    return rc;
}
