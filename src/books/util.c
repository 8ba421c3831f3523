/*
 * util.c - names and paths of the hierarchy, process liveness, state words, time.
 */
#include "util.h"

#include "ard_common.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static bool name_char(char c, bool dots)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || (dots && c == '.');
}

int ardb_check_path(const char *path)
{
    if (strlen(path) >= ARDB_MAX_PATH)
        return ardi_fail(ARD_EINVAL, "path '%.40s...' is longer than %d characters", path,
                         ARDB_MAX_PATH - 1);
    if (!*path)
        return ardi_fail(ARD_EINVAL, "empty path");
    char buf[ARDB_MAX_PATH];
    ardb_copy(buf, sizeof buf, path);
    char *save = NULL;
    size_t parts = 0;
    for (char *tok = strtok_r(buf, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
        if (ardi_check_name("entry", tok, true) < 0)
            return ard_lasterror();
        parts++;
    }
    if (path[0] == '/' || path[strlen(path) - 1] == '/' || strstr(path, "//"))
        return ardi_fail(ARD_EINVAL, "path '%s': names must be joined by single '/'", path);
    return parts ? 0 : ardi_fail(ARD_EINVAL, "empty path");
}

int ardb_check_domain(const char *domain)
{
    return ardi_check_name("domain", domain, false);
}

int ardb_check_host(const char *what, const char *host)
{
    size_t n = strlen(host);
    if (n == 0 || n >= ARDB_MAX_HOST)
        return ardi_fail(ARD_EINVAL, "%s '%.40s': must have 1 to %d characters", what, host,
                         ARDB_MAX_HOST - 1);
    if (host[0] == '-')
        return ardi_fail(ARD_EINVAL, "%s '%s': must not start with '-'", what, host);
    for (const char *p = host; *p; p++)
        if (!name_char(*p, true) && !strchr(":@%", *p))
            return ardi_fail(ARD_EINVAL, "%s '%s': character '%c' is not one of [A-Za-z0-9_.:@%%-]",
                             what, host, *p);
    return 0;
}

bool ardb_under(const char *path, const char *prefix)
{
    size_t n = strlen(prefix);
    return strncmp(path, prefix, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

void ardb_default_name(const char *cmd, char *buf, size_t len)
{
    const char *base = strrchr(cmd, '/');
    base = base ? base + 1 : cmd;
    snprintf(buf, len, "%s", *base ? base : "block");
    char *dot = strrchr(buf, '.');
    if (dot && dot != buf)
        *dot = '\0';
    for (char *p = buf; *p; p++)
        if (!name_char(*p, true))
            *p = '_';
    if (strlen(buf) > ARDB_MAX_NAME)
        buf[ARDB_MAX_NAME] = '\0';
}

void ardb_host_label(char *buf, size_t len)
{
    const char *env = getenv("ARD_HOST");
    if (env && *env) {
        snprintf(buf, len, "%s", env);
        return;
    }
    if (gethostname(buf, len) < 0 || !*buf)
        snprintf(buf, len, "localhost");
    buf[len - 1] = '\0';
}

/* One read of /proc/PID/stat: its start time (0 if there is no such process) and its state
 * letter. open/read, not stdio: ardkill looks at hundreds of these when it stops a domain. */
static unsigned long long proc_stat(long pid, char *state)
{
    *state = '?';
    if (pid <= 0)
        return 0;
    char file[64], buf[1024];
    snprintf(file, sizeof file, "/proc/%ld/stat", pid);
    int fd = open(file, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n;
    do
        n = read(fd, buf, sizeof buf - 1);
    while (n < 0 && errno == EINTR);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    /* The command name may hold spaces and parentheses: fields start after the last ')'. */
    char *p = strrchr(buf, ')');
    if (!p || p[1] != ' ')
        return 0;
    *state = p[2];
    p++;
    /* Field 3 (state) is the first after ')'; starttime is field 22. */
    for (int field = 3; field < 22; field++) {
        p = strchr(p + 1, ' ');
        if (!p)
            return 0;
    }
    return strtoull(p + 1, NULL, 10);
}

unsigned long long ardb_proc_start(long pid)
{
    char state;
    return proc_stat(pid, &state);
}

bool ardb_proc_alive(long pid, unsigned long long start)
{
    char state;
    unsigned long long s = proc_stat(pid, &state);
    if (s == 0)
        return false;
    if (start != 0 && s != start)
        return false;
    /* A zombie is dead for our purposes. */
    return state != 'Z' && state != 'X';
}

/* true if some process of group pgid is not a zombie. kill(-pgid, 0) alone would count
 * zombies, which linger as long as their parent (init, for a supervisor whose starter is
 * gone) has not reaped them. */
static bool group_has_live_member(long pgid)
{
    DIR *d = opendir("/proc");
    if (!d)
        return true;
    bool found = false;
    struct dirent *de;
    while (!found && (de = readdir(d)) != NULL) {
        if (de->d_name[0] < '1' || de->d_name[0] > '9')
            continue;
        char file[300], buf[512];
        snprintf(file, sizeof file, "/proc/%s/stat", de->d_name);
        FILE *f = fopen(file, "re");
        if (!f)
            continue;
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = '\0';
        char *p = strrchr(buf, ')');
        char state;
        long ppid, pgrp;
        if (p && sscanf(p + 1, " %c %ld %ld", &state, &ppid, &pgrp) == 3 && pgrp == pgid &&
            state != 'Z' && state != 'X')
            found = true;
    }
    closedir(d);
    return found;
}

bool ardb_group_alive(long pgid, unsigned long long pgid_start)
{
    if (pgid <= 1)
        return false;
    if (kill((pid_t)-pgid, 0) < 0 && errno != EPERM)
        return false;
    /* While the group has members its id cannot be reused; if the leader is gone the group
     * is still ours. A leader with another start time means the id was reused. */
    unsigned long long s = ardb_proc_start(pgid);
    if (s != 0 && pgid_start != 0 && s != pgid_start)
        return false;
    return group_has_live_member(pgid);
}

enum ardb_state ardb_effective(const struct ardb_entry *e)
{
    if (e->remote)
        return e->state;
    if (e->state == ARDB_RUNNING) {
        /* A live supervisor records the end itself: between the command's death and that
         * write the entry is still running, not lost. */
        if (ardb_proc_alive(e->pid, e->pid_start) || ardb_group_alive(e->pgid, e->pgid_start) ||
            ardb_proc_alive(e->sup, e->sup_start))
            return ARDB_RUNNING;
        return ARDB_LOST;
    }
    if (e->state == ARDB_STARTING) {
        if (ardb_group_alive(e->pgid, e->pgid_start) || ardb_proc_alive(e->sup, e->sup_start))
            return ARDB_STARTING;
        /* Reserved, supervisor not there yet: give it time before calling it lost. */
        if (e->sup == 0 && ardb_realtime_ns() - e->start_ns < 30 * 1000000000LL)
            return ARDB_STARTING;
        return ARDB_LOST;
    }
    if (e->state == ARDB_RESTARTING)
        return ardb_proc_alive(e->sup, e->sup_start) ? ARDB_RESTARTING : ARDB_LOST;
    return e->state;
}

static const char *const words[] = {"starting", "running", "exited",    "killed",
                                    "failed",   "lost",    "restarting"};

const char *ardb_state_word(enum ardb_state st)
{
    return (unsigned)st < sizeof words / sizeof words[0] ? words[st] : "unknown";
}

int ardb_state_parse(const char *word, enum ardb_state *st)
{
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (!strcmp(word, words[i])) {
            *st = (enum ardb_state)i;
            return 0;
        }
    return ardi_fail(ARD_EINVAL, "unknown state '%s'", word);
}

void ardb_state_text(enum ardb_state st, int code, char *buf, size_t len)
{
    switch (st) {
    case ARDB_EXITED:
        snprintf(buf, len, "exited %d", code);
        break;
    case ARDB_KILLED:
        snprintf(buf, len, "killed by SIG%s", sigabbrev_np(code) ? sigabbrev_np(code) : "?");
        break;
    case ARDB_FAILED:
        if (code == ARDB_CODE_LIMIT)
            snprintf(buf, len, "failed: restart limit reached");
        else
            snprintf(buf, len, "failed: %s", strerror(code));
        break;
    default:
        snprintf(buf, len, "%s", ardb_state_word(st));
    }
}

int64_t ardb_realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int64_t ardb_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void ardb_sleep_ns(int64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000LL), (long)(ns % 1000000000LL)};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
    }
}

void ardb_exec_failed(int fd, int err)
{
    ssize_t w;
    do
        w = write(fd, &err, sizeof err);
    while (w < 0 && errno == EINTR);
    _exit(127);
}

int ardb_exec_result(int fd)
{
    int e = 0;
    ssize_t r;
    do
        r = read(fd, &e, sizeof e);
    while (r < 0 && errno == EINTR);
    close(fd);
    return r == (ssize_t)sizeof e ? e : 0;
}

void ardb_close_fds_except(const int *keep, size_t nkeep)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d) {
        for (int fd = 3; fd < 1024; fd++) {
            bool k = false;
            for (size_t i = 0; i < nkeep; i++)
                k = k || keep[i] == fd;
            if (!k)
                close(fd);
        }
        return;
    }
    int dfd = dirfd(d);
    int fds[1024];
    size_t n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL && n < 1024) {
        int fd = atoi(de->d_name);
        if (de->d_name[0] < '0' || de->d_name[0] > '9' || fd < 3 || fd == dfd)
            continue;
        bool k = false;
        for (size_t i = 0; i < nkeep; i++)
            k = k || keep[i] == fd;
        if (!k)
            fds[n++] = fd;
    }
    closedir(d);
    for (size_t i = 0; i < n; i++)
        close(fds[i]);
}
