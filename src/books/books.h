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
#include "entry.h"
#include "util.h"

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

/* Default transport: non-interactive ssh that gives up quickly on an unreachable host. */
#define ARDB_DEFAULT_RSH "ssh -o BatchMode=yes -o ConnectTimeout=3"

struct ardb_books {
    char domain[ARDB_MAX_NAME + 1];
    char dir[PATH_MAX];
    int lockfd;
    int dirfd, efd;   /* the domain's directory and its e/ (every entry is opened relative) */
    int damaged;      /* entries ardb_list passed over because they could not be parsed */
    char damage[640]; /* why, for the last of them (names the file) */
};

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
