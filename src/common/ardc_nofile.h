/*
 * ardc_nofile.h - the descriptor limit of programs that attach many connections (ard,
 * ardnet, ardrun): every attached connection or open view keeps one descriptor (its locks
 * live on it), so RLIMIT_NOFILE's usual soft value of 1024 caps them long before memory does.
 * Header-only, for the programs; never installed.
 */
#ifndef ARDC_NOFILE_H
#define ARDC_NOFILE_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

/* Raise the soft RLIMIT_NOFILE to the hard limit (a program may, unprivileged). Called once at
 * start; children started later inherit the raised limit. */
static inline void ardc_nofile_raise(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        (void)setrlimit(RLIMIT_NOFILE, &rl);
    }
}

/* After an open failed: true when the process has no descriptor left (EMFILE), whatever
 * error text the failed call gave. */
static inline bool ardc_nofile_exhausted(void)
{
    int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        close(fd);
        return false;
    }
    return errno == EMFILE;
}

/* Descriptors this process has open now (-1 when /proc is missing). */
static inline long ardc_nofile_open(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (d == NULL)
        return -1;
    long n = -1; /* the directory's own descriptor */
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}

/* How many more descriptors the process may open and still keep `headroom` free for its own
 * work (a directory scan, a new file): the soft limit less those open now. (size_t)-1 when
 * unlimited or unknown. */
static inline size_t ardc_nofile_room(unsigned headroom)
{
    struct rlimit rl;
    long open_now = ardc_nofile_open();
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY || open_now < 0)
        return (size_t)-1;
    unsigned long long used = (unsigned long long)open_now + headroom;
    return rl.rlim_cur > used ? (size_t)(rl.rlim_cur - used) : 0;
}

/* "RLIMIT_NOFILE is S (hard limit H)" into buf; returns about how many descriptors the process
 * needs when `short_by` more did not fit: those open now, those, and the `keep` it leaves free
 * for its own work. */
static inline unsigned long ardc_nofile_need(char *buf, size_t len, unsigned long short_by,
                                             unsigned keep)
{
    struct rlimit rl = {0, 0};
    (void)getrlimit(RLIMIT_NOFILE, &rl);
    char hard[32];
    if (rl.rlim_max == RLIM_INFINITY)
        snprintf(hard, sizeof hard, "unlimited");
    else
        snprintf(hard, sizeof hard, "%llu", (unsigned long long)rl.rlim_max);
    snprintf(buf, len, "RLIMIT_NOFILE is %llu (hard limit %s)", (unsigned long long)rl.rlim_cur,
             hard);
    long open_now = ardc_nofile_open();
    if (open_now < 0 && errno == EMFILE && rl.rlim_cur != RLIM_INFINITY)
        open_now = (long)rl.rlim_cur; /* (none left to count them with: all are open) */
    return (open_now > 0 ? (unsigned long)open_now : 0) + short_by + keep;
}

#define ARDC_NOFILE_RAISE                                                                          \
    "raise the limit (ulimit -n, LimitNOFILE= in a systemd unit, docker run --ulimit nofile=N:N)"

/* Say, on stderr as "PROG: ...", that `short_by` more connections (`what`) did not get a
 * descriptor: the limit, the hard limit and about how many the program needs (with the `keep`
 * it leaves free, as for ardc_nofile_room), and how to raise it. The caller says it once. */
static inline void ardc_nofile_say(const char *prog, const char *what, unsigned long short_by,
                                   unsigned keep)
{
    char lim[96];
    unsigned long need = ardc_nofile_need(lim, sizeof lim, short_by, keep);
    fprintf(stderr,
            "%s: out of descriptors: %s and %lu more %s need one each, about %lu in all: they "
            "are skipped; " ARDC_NOFILE_RAISE "\n",
            prog, lim, short_by, what, need);
}

/* The same when what did not fit is not one descriptor per thing: `short_by` descriptors in
 * all, and `skipped` says what was left undone. */
static inline void ardc_nofile_say_skipped(const char *prog, unsigned long short_by, unsigned keep,
                                           const char *skipped)
{
    char lim[96];
    unsigned long need = ardc_nofile_need(lim, sizeof lim, short_by, keep);
    fprintf(stderr,
            "%s: out of descriptors: %s and %lu more are needed, about %lu in all: "
            "%s; " ARDC_NOFILE_RAISE "\n",
            prog, lim, short_by, need, skipped);
}

#endif /* ARDC_NOFILE_H */
