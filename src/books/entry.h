/*
 * entry.h - one entry of the books (books.h): where a command was started, its processes and
 * how it ended, with the limits of its fields. Internal to ardstart, ardkill and ard graph.
 */
#ifndef ARDB_ENTRY_H
#define ARDB_ENTRY_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define ARDB_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define ARDB_NODISCARD __attribute__((warn_unused_result))

#define ARDB_MAX_NAME 63
#define ARDB_MAX_PATH 512
#define ARDB_MAX_HOST 256
#define ARDB_MAX_CMD 4096
#define ARDB_MAX_RSH 1024

enum ardb_state {
    ARDB_STARTING, /* reserved, process not (yet) known to run */
    ARDB_RUNNING,
    ARDB_EXITED, /* code = exit status */
    ARDB_KILLED, /* code = signal number */
    ARDB_FAILED, /* could not be executed; code = errno */
    ARDB_LOST,   /* books say running, but neither process, group nor supervisor exists (unknown) */
    ARDB_RESTARTING, /* ended; its supervisor restarts it after the restart delay */
};

/* code of ARDB_FAILED when the restart limit was reached (else code is an errno). */
#define ARDB_CODE_LIMIT (-1)

struct ardb_entry {
    char path[ARDB_MAX_PATH]; /* hierarchy path, e.g. "robot/arm/driver" */
    char host[ARDB_MAX_HOST]; /* host label it runs on */
    bool remote;              /* true: the real entry is in host's books */
    char rsh[ARDB_MAX_RSH];   /* remote: transport command used to reach host */
    char bindir[PATH_MAX];    /* remote: directory of ardstart/ardkill there ("" = PATH) */
    long pid;                 /* the started program */
    long pgid;                /* its process group (the program leads it: pgid = pid) */
    long sup;                 /* the supervisor that waits for it and records its end */
    unsigned long long pid_start, pgid_start, sup_start; /* /proc starttime: no pid reuse */
    uint64_t seq;                                        /* start order on this host */
    int64_t start_ns, end_ns; /* CLOCK_REALTIME of start and end (0: not ended) */
    enum ardb_state state;
    int code;
    char cmd[ARDB_MAX_CMD]; /* command line, shell-quoted, for display */
    char log[PATH_MAX];
    /* Restart policy (ardstart --restart): how often the supervisor restarted the command,
     * how its last run ended, and whether ardkill is stopping it (then it is never
     * restarted again). Entries of older versions have none of these: 0. */
    int restart; /* policy: 0 none, 1 on-failure, 2 always (ardstart's AS_RESTART_*) */
    int restarts;
    enum ardb_state last_state; /* ARDB_EXITED or ARDB_KILLED when restarts > 0 */
    int last_code;
    bool stopping;
};

/* strcpy that truncates to fit (size >= 1). */
static inline void ardb_copy(char *dst, size_t size, const char *src)
{
    size_t n = strlen(src);
    if (n >= size)
        n = size - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

#endif
