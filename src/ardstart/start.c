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

#include "ardi.h"

#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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
 * has another seq, and a removed entry - ardkill - is never recreated). Returns 0 if the
 * entry was ours and updated, 1 if it is gone or not ours, -1 on error. */
static int update(struct ardb_books *b, const char *path, uint64_t seq,
                  void (*fn)(struct ardb_entry *, void *), void *arg)
{
    if (ardb_lock(b) < 0)
        return -1;
    struct ardb_entry e;
    int rc = ardb_read(b, path, &e);
    if (rc == 0 && e.seq == seq && !e.remote) {
        fn(&e, arg);
        rc = ardb_write(b, &e);
    } else if (rc == 0) {
        rc = 1;
    }
    ardb_unlock(b);
    return rc;
}

static void set_sup(struct ardb_entry *e, void *arg)
{
    (void)arg;
    e->sup = getpid();
    e->sup_start = ardb_proc_start(e->sup);
}

static void set_pid(struct ardb_entry *e, void *arg)
{
    e->pid = *(pid_t *)arg;
    e->pid_start = ardb_proc_start(e->pid);
    e->pgid = e->pid;
    e->pgid_start = e->pid_start;
    e->state = ARDB_RUNNING;
}

struct ending {
    enum ardb_state state;
    int code;
};

static void set_end(struct ardb_entry *e, void *arg)
{
    const struct ending *end = arg;
    e->state = end->state;
    e->code = end->code;
    e->end_ns = ardb_realtime_ns();
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

static void exec_command(const struct as_opts *o, const char *path, int report_fd, int exec_fd)
{
    if (o->wait_ms > 0) {
        /* The command (or a script's `ardstart --ready`) writes "ready PID" here. */
        int fd = dup(report_fd);
        struct stat ps;
        char v[80];
        if (fd >= 0 && fstat(fd, &ps) == 0) {
            snprintf(v, sizeof v, "%d:%ju:%ju", fd, (uintmax_t)ps.st_dev, (uintmax_t)ps.st_ino);
            setenv("ARD_READY_FD", v, 1);
        } else {
            unsetenv("ARD_READY_FD");
        }
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

/* The supervisor: never returns. */
static void supervise(struct ardb_books *b, const struct as_opts *o, const struct ardb_entry *en,
                      int report_fd)
{
    setsid();
    /* The supervisor stays until the command ended, to record how. SIGPIPE: the starter may
     * have gone. */
    signal(SIGTERM, SIG_IGN);
    signal(SIGINT, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
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
    /* A new open file description: flock belongs to it, not to the starter's. */
    ardb_close(b);
    int keep[] = {report_fd};
    ardb_close_fds_except(keep, 1);
    if (ardb_open(b, o->domain) < 0)
        _exit(111);

    if (update(b, en->path, en->seq, set_sup, NULL) != 0) {
        log_line("%s: entry vanished before start (%s)", en->path, "stopped by ardkill?");
        report(report_fd, "failed %ld\n", ECANCELED);
        _exit(0);
    }
    log_line("starting %s: %s", en->path, en->cmd);

    int ex[2], go[2];
    if (pipe2(ex, O_CLOEXEC) < 0 || pipe2(go, O_CLOEXEC) < 0) {
        report(report_fd, "failed %ld\n", errno);
        _exit(111);
    }
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        struct ending end = {ARDB_FAILED, e};
        update(b, en->path, en->seq, set_end, &end);
        report(report_fd, "failed %ld\n", e);
        _exit(111);
    }
    if (pid == 0) {
        /* At once: a SIGTERM from ardkill must count from the moment the pid is recorded. */
        default_signals();
        setpgid(0, 0);
        close(ex[0]);
        close(go[1]);
        ardb_close(b);
        char c;
        ssize_t g;
        do
            g = read(go[0], &c, 1);
        while (g < 0 && errno == EINTR);
        if (g != 1)
            _exit(127); /* not recorded (supervisor died, or ardkill cancelled the start) */
        close(go[0]);
        exec_command(o, en->path, report_fd, ex[1]);
    }
    setpgid(pid, pid); /* also here: the group exists whichever side runs first */
    close(ex[1]);
    close(go[0]);
    if (update(b, en->path, en->seq, set_pid, &pid) != 0) {
        close(go[1]);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
        }
        log_line("%s: entry vanished before start (%s)", en->path, "stopped by ardkill?");
        report(report_fd, "failed %ld\n", ECANCELED);
        _exit(0);
    }
    ssize_t gw;
    do
        gw = write(go[1], "g", 1);
    while (gw < 0 && errno == EINTR);
    close(go[1]);
    int e = ardb_exec_result(ex[0]);
    int st;
    if (e != 0) {
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
        }
        struct ending end = {ARDB_FAILED, e};
        update(b, en->path, en->seq, set_end, &end);
        log_line("%s: cannot execute: %s", en->path, strerror(e));
        report(report_fd, "failed %ld\n", e);
        _exit(0);
    }
    report(report_fd, "started %ld\n", pid);

    while (waitpid(pid, &st, 0) < 0) {
        if (errno != EINTR) {
            st = 0;
            break;
        }
    }
    struct ending end;
    if (WIFSIGNALED(st))
        end = (struct ending){ARDB_KILLED, WTERMSIG(st)};
    else
        end = (struct ending){ARDB_EXITED, WEXITSTATUS(st)};
    update(b, en->path, en->seq, set_end, &end);
    char text[64];
    ardb_state_text(end.state, end.code, text, sizeof text);
    log_line("%s: %s", en->path, text);
    report(report_fd, end.state == ARDB_KILLED ? "killed %ld\n" : "exited %ld\n", end.code);
    _exit(0);
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
        fprintf(stderr,
                "ardstart: '%s' is already started on host %s; stop it first (ardkill %s)\n",
                e->path, old->host, e->path);
        return AS_RUNNING;
    }
    if (had == 0 && !old->remote) {
        enum ardb_state st = ardb_effective(old);
        if (st == ARDB_RUNNING || st == ARDB_STARTING) {
            ardb_unlock(b);
            fprintf(stderr,
                    "ardstart: '%s' is already running here (pid %ld); stop it first "
                    "(ardkill %s) or choose another name (-n)\n",
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
    fprintf(stderr, "ardstart: %s\n", ard_errdetail());
    return AS_SYS;
}

int as_start_local(struct ardb_books *b, const struct as_opts *o, const char *path)
{
    struct ardb_entry e = {0};
    ardb_copy(e.path, sizeof e.path, path);
    ardb_host_label(e.host, sizeof e.host);
    e.state = ARDB_STARTING;
    e.start_ns = ardb_realtime_ns();
    as_quote_argv(o->argv, o->argc, e.cmd, sizeof e.cmd);
    ardb_log_path(b, path, e.log, sizeof e.log);

    int rc = as_reserve(b, &e, false, NULL);
    if (rc != AS_OK)
        return rc;

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
