/*
 * books.h - the books of ardstart/ardkill: what was started where, in which place of the
 * hierarchy, and how it ended. Internal to the two programs (static library ardbooks).
 *
 * Storage: one directory per host and domain (see ardb_open), holding
 *   lock          flock(2) target; every change of an entry happens under it
 *   seq           start counter of this host and domain (start order for ardkill)
 *   e/<P>.entry   one entry, P = hierarchy path with '/' written as '+'; key=value lines,
 *                 replaced atomically (written to e/.tmp, then renamed)
 *   log/<P>.log   stdout and stderr of the entry's process (appended, kept after stop)
 * An entry started on another host is recorded here as a *remote* entry (host, transport);
 * the real entry lives in that host's books under the same path.
 */
#ifndef ARDB_BOOKS_H
#define ARDB_BOOKS_H

#include "ardc_buf.h"

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#define ARDB_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define ARDB_NODISCARD __attribute__((warn_unused_result))

#define ARDB_MAX_NAME 63
#define ARDB_MAX_PATH 512
#define ARDB_MAX_HOST 256
#define ARDB_MAX_CMD 4096
#define ARDB_MAX_RSH 1024

/* Default transport: non-interactive ssh that gives up quickly on an unreachable host. */
#define ARDB_DEFAULT_RSH "ssh -o BatchMode=yes -o ConnectTimeout=3"

enum ardb_state {
    ARDB_STARTING, /* reserved, process not (yet) known to run */
    ARDB_RUNNING,
    ARDB_EXITED,     /* code = exit status */
    ARDB_KILLED,     /* code = signal number */
    ARDB_FAILED,     /* could not be executed; code = errno */
    ARDB_LOST,       /* books say running, but neither process nor group exists (status unknown) */
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

struct ardb_books {
    char domain[ARDB_MAX_NAME + 1];
    char dir[PATH_MAX];
    int lockfd;
    int dirfd, efd;   /* the domain's directory and its e/ (every entry is opened relative) */
    int damaged;      /* entries ardb_list passed over because they could not be parsed */
    char damage[640]; /* why, for the last of them (names the file) */
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

/* Errors: like libardnet, every ardb_ function that can fail returns a negative ARD_E* code
 * (ardnet.h) and leaves a thread-local detail that names the file or thing and the cause
 * (ard_errdetail(); set with ardi_fail from "ard_common.h"). "-1" below means such a code. */

/* Books of `domain` on this host: $ARD_BOOKS_DIR/<domain>, else /run/ardnet/<domain> for
 * root, else $XDG_RUNTIME_DIR/ardnet/<domain>, else /tmp/ardnet-<uid>/<domain>. Created
 * (mode 0700) when missing. Returns 0 or -1. */
ARDB_NODISCARD int ardb_open(struct ardb_books *b, const char *domain);
/* The base and the domain's directory are opened without following a symbolic link and must
 * belong to us: the base not writable by others, the domain's directory mode 0700; else
 * ARD_EACCES naming the directory, owner and mode. Files inside are opened relative to it
 * (openat, O_NOFOLLOW). */
/* Like ardb_open, but creates nothing: 1 if these books do not exist (then b lists no entry
 * and no host), 0 if opened, or an error. For --list, --log and ardkill. */
ARDB_NODISCARD int ardb_open_existing(struct ardb_books *b, const char *domain);
void ardb_close(struct ardb_books *b);
/* In a forked child: its own descriptor of the lock file (flock belongs to the open file
 * description, which the child would otherwise share with its parent); the directories stay
 * open. 0 or an error. */
int ardb_reopen_lock(struct ardb_books *b);
ARDB_NODISCARD int ardb_lock(struct ardb_books *b); /* exclusive, blocks */
void ardb_unlock(struct ardb_books *b);

/* The following need the lock held by the caller (reads are safe without it). */
ARDB_NODISCARD int ardb_next_seq(struct ardb_books *b, uint64_t *seq);
/* 0, 1 if there is no such entry, ARD_ESTALE if the entry cannot be parsed, else another
 * negative code. */
ARDB_NODISCARD int ardb_read(const struct ardb_books *b, const char *path, struct ardb_entry *e);
ARDB_NODISCARD int ardb_write(const struct ardb_books *b, const struct ardb_entry *e);
/* 0, or 1 if there was no such entry. */
int ardb_remove(const struct ardb_books *b, const char *path);
/* Remove the entry only if it is still the start numbered `seq` (takes the lock): a later
 * start of the same path, recorded meanwhile, is never dropped from the books. 0 if
 * removed, 1 if there was no such entry or it was another start, -1 on error. */
int ardb_remove_seq(struct ardb_books *b, const char *path, uint64_t seq);
/* ardb_remove_seq that also gives the entry as it was when removed (*was, valid on 0), e.g.
 * how its command ended: one read under the lock. */
int ardb_take_seq(struct ardb_books *b, const char *path, uint64_t seq, struct ardb_entry *was);

/* Entries whose path is `prefix` or below it (NULL or "": all), sorted by seq ascending.
 * *out is malloc'ed (free it). Returns the count or -1. An entry that cannot be parsed (a
 * damaged file, or one written by a newer version) is passed over, so that the others can
 * still be listed and stopped: it is counted in b->damaged, with the cause in b->damage. */
ARDB_NODISCARD int ardb_list(struct ardb_books *b, const char *prefix, struct ardb_entry **out);

/* Hosts this host started something on (file "hosts": host TAB rsh TAB bindir per line), so
 * that stopping the whole domain reaches them even after their entries are gone. */
struct ardb_host {
    char host[ARDB_MAX_HOST];
    char rsh[ARDB_MAX_RSH];
    char bindir[PATH_MAX];
};
/* Add (under the lock, taken here) unless already there. Returns 0 or -1. */
ARDB_NODISCARD int ardb_note_host(struct ardb_books *b, const char *host, const char *rsh,
                                  const char *bindir);
/* *out malloc'ed; returns the count or -1. */
ARDB_NODISCARD int ardb_hosts(const struct ardb_books *b, struct ardb_host **out);
/* Forget one host (under the lock, taken here). */
void ardb_forget_host(struct ardb_books *b, const char *host);

void ardb_log_path(const struct ardb_books *b, const char *path, char *buf, size_t len);

/* Entry text (what ardb_write stores) and its parser; exposed for the unit tests. */
ARDB_NODISCARD int ardb_format(const struct ardb_entry *e, char *buf, size_t len);
ARDB_NODISCARD int ardb_parse(const char *text, struct ardb_entry *e);

/* ---- names and paths ---------------------------------------------------------------- */

/* Entry names are checked with the library's ardi_check_name("entry", name, true). */
/* 0 if a valid path: names joined by single '/', at most ARDB_MAX_PATH-1 chars. */
ARDB_NODISCARD int ardb_check_path(const char *path);
/* 0 if a valid domain ([A-Za-z0-9_-], 1..63). */
ARDB_NODISCARD int ardb_check_domain(const char *domain);
/* 0 if a usable host for the transport: 1..255 of [A-Za-z0-9_.:@%-] (names, user@host,
 * IPv4/IPv6 addresses), not starting with '-' (the transport would take it for an option). */
ARDB_NODISCARD int ardb_check_host(const char *what, const char *host);
/* true if path equals prefix or lies below it ("a/b" is under "a", "ab" is not). */
bool ardb_under(const char *path, const char *prefix);
/* Default entry name from a command: basename without a ".sh"/".py"/... extension, with
 * characters outside the name set replaced by '_'. */
void ardb_default_name(const char *cmd, char *buf, size_t len);
/* Host label of this host: $ARD_HOST, else the hostname. */
void ardb_host_label(char *buf, size_t len);

/* ---- processes ------------------------------------------------------------------------ */

/* starttime of pid from /proc (clock ticks since boot); 0 if the process does not exist. */
unsigned long long ardb_proc_start(long pid);
/* true if pid exists and (start == 0 or its starttime equals start). */
bool ardb_proc_alive(long pid, unsigned long long start);
/* true if process group pgid has members and is the one whose leader had pgid_start. */
bool ardb_group_alive(long pgid, unsigned long long pgid_start);
/* The recorded state corrected by a look at the processes (RUNNING may become LOST). */
enum ardb_state ardb_effective(const struct ardb_entry *e);
/* "running", "exited 3", "killed SIGTERM", "failed: No such file...", "lost". */
void ardb_state_text(enum ardb_state st, int code, char *buf, size_t len);
const char *ardb_state_word(enum ardb_state st);
ARDB_NODISCARD int ardb_state_parse(const char *word, enum ardb_state *st);

int64_t ardb_realtime_ns(void);
int64_t ardb_mono_ns(void);
void ardb_sleep_ns(int64_t ns);

/* Reporting a failed exec to the parent through a close-on-exec pipe: the child, after
 * exec failed with `err`, sends it and exits 127 (never returns); the parent reads 0 (EOF:
 * the exec succeeded and closed the pipe) or the child's errno, and closes fd. */
__attribute__((noreturn)) void ardb_exec_failed(int fd, int err);
int ardb_exec_result(int fd);

/* Close every descriptor >= 3 except those listed. */
void ardb_close_fds_except(const int *keep, size_t nkeep);

/* ---- command line (cli.c) ------------------------------------------------------------ */

/* First thing in main: descriptors 0-2 open (on /dev/null where closed, so that no
 * descriptor opened later becomes stdout or stderr), SIGCHLD at its default. */
void ardb_main_init(void);
/* Option value in seconds (> 0, or >= 0 if zero_ok; at most max) into *ns: 0, or ARD_EOPTION
 * with the detail "OPT 'S': expected seconds ...". */
ARDB_NODISCARD int ardb_opt_seconds(const char *opt, const char *s, bool zero_ok, double max,
                                    int64_t *ns);
/* Domain in force (ardi_default_domain: `opt` if not NULL, else $ARD_DOMAIN, else "default"),
 * checked, into *domain: 0, or ARD_EOPTION with the detail naming the cause. */
ARDB_NODISCARD int ardb_opt_domain(const char *opt, const char **domain);

/* ---- transport (rsh.c) --------------------------------------------------------------- */

/* Transport in force: `opt`, else $ARD_RSH, else ARDB_DEFAULT_RSH. */
const char *ardb_rsh(const char *opt);

/* A growing string: the shared growable buffer (ardc_buf.h), its text in .s. Running out of
 * memory aborts (a few KiB of command line; nothing sensible to do without them). */
#define ardb_str ardc_buf
void ardb_str_add(struct ardb_str *s, const char *text);
void ardb_str_addf(struct ardb_str *s, const char *fmt, ...) ARDB_PRINTF(2, 3);
/* Append `arg` quoted for a POSIX shell ('...'), preceded by a space unless s is empty. */
void ardb_str_quote(struct ardb_str *s, const char *arg);
void ardb_str_free(struct ardb_str *s);

/* argv for running `remote_cmd` (one shell command line) on host: the words of rsh (split at
 * blanks, '...' and "..." group), then host, then remote_cmd. Free with ardb_argv_free. */
ARDB_NODISCARD int ardb_rsh_argv(const char *rsh, const char *host, const char *remote_cmd,
                                 char ***argv);
void ardb_argv_free(char **argv);

/* Run argv with stdin from /dev/null. stdout goes to `out` (captured, NUL-terminated) when
 * out is not NULL, else it is inherited; stderr is inherited. Kills the process group after
 * timeout_ms (<= 0: no limit). *status gets the wait status (as waitpid). Returns 0, 1 on
 * timeout (process killed), -1 if it could not be started. */
ARDB_NODISCARD int ardb_run(char *const argv[], int64_t timeout_ms, struct ardb_str *out,
                            int *status);

#endif /* ARDB_BOOKS_H */
