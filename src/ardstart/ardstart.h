/*
 * ardstart.h - declarations shared by ardstart's source files.
 */
#ifndef ARDSTART_H
#define ARDSTART_H

#include "ard_common.h"
#include "ardc_opt.h"
#include "books.h"

/* Exit codes (documented in docs/ardstart.md). */
enum {
    AS_OK = ARDC_EXIT_OK,
    AS_EXEC = 1,    /* the command could not be executed */
    AS_DIED = 2,    /* --wait: the command ended before it was ready */
    AS_TIMEOUT = 3, /* --wait: not ready in time (left running) */
    AS_HOST = 4,    /* the host could not be reached through the transport */
    AS_RUNNING = 5, /* an entry of that path is already running */
    AS_USAGE = ARDC_EXIT_USAGE,
    AS_SYS = ARDC_EXIT_SYS,
};

/* Restart policy of an entry (--restart). */
enum { AS_RESTART_NO, AS_RESTART_ON_FAILURE, AS_RESTART_ALWAYS };
#define AS_RESTART_MAX_N 1000            /* --restart-limit N */
#define AS_RESTART_MAX_S 86400           /* seconds of --restart-delay and --restart-limit */
#define AS_RESTART_DELAY_NS 1000000000LL /* default --restart-delay: 1 s */
#define AS_RESTART_LIMIT_N 5             /* default --restart-limit: 5/10 */
#define AS_RESTART_LIMIT_NS 10000000000LL

struct as_opts {
    const char *host;   /* -H: start there through the transport */
    const char *name;   /* -n */
    const char *parent; /* -p, else $ARD_PATH */
    const char *domain;
    const char *rsh;     /* -e */
    const char *bindir;  /* --remote-bindir */
    const char *chdir;   /* -C */
    const char *cwd_if;  /* --cwd-if-exists (remote starts: the starter's directory) */
    const char *as_host; /* --as-host: host label given by the starter */
    const char **env;    /* -E NAME=VALUE, nenv of them */
    int nenv;
    int wait_ms; /* -w: 0 = do not wait */
    bool quiet;
    bool dry_run;         /* --system: print the generated master script, start nothing */
    bool check;           /* --system: print what it needs of /dev/shm, start nothing */
    const char **hostmap; /* --set-host ROLE=HOST, nhostmap of them */
    int nhostmap;
    char **argv; /* command and arguments */
    int argc;
    int restart;               /* AS_RESTART_* */
    int64_t restart_delay_ns;  /* --restart-delay */
    int restart_limit;         /* --restart-limit N (0: no limit) */
    int64_t restart_window_ns; /* ... within SECONDS */
    bool restart_given;        /* any --restart* option (refused with --system) */
};

/* start.c: PARENT/NAME (parent: -p, else $ARD_PATH) into path, checked; 0, or the failing code
 * with its detail. */
int as_entry_path(const struct as_opts *o, const char *name, char *path, size_t len);
/* start.c: record the start `e` of e->path (numbered here) unless that path is running or
 * started on another host - replace_remote: a remote entry may be replaced (the remote
 * ardstart refuses if it still runs there), and is copied to *old (else old->path is "") so
 * that it can be put back. Returns AS_OK, or AS_RUNNING / AS_SYS with the failure detail. */
int as_reserve(struct ardb_books *b, struct ardb_entry *e, bool replace_remote,
               struct ardb_entry *old);
/* start.c: start on this host, with a supervisor; returns an exit code. */
int as_start_local(struct ardb_books *b, const struct as_opts *o, const char *path);
/* remote.c: start on o->host through the transport; records a remote entry here. */
int as_start_remote(struct ardb_books *b, const struct as_opts *o, const char *path);
/* ready.c: wait for the supervisor's and the block's report lines on fd. */
int as_wait_report(int fd, const struct as_opts *o, const struct ardb_entry *e);
void as_print_log_tail(const char *log, int lines);
/* system.c: start a system described in a YAML file. */
int as_start_system(struct ardb_books *b, const struct as_opts *o, const char *file);
/* list.c */
int as_list(struct ardb_books *b, const char *prefix, bool raw);

/* options.c: ardstart's command line (docs/ardstart.md). */
enum as_mode {
    AS_MODE_START,
    AS_MODE_LIST,
    AS_MODE_LOG,
    AS_MODE_READY,
    AS_MODE_SYSTEM,
    AS_MODE_HELP,
    AS_MODE_VERSION
};
struct as_cmdline {
    struct as_opts o;
    enum as_mode mode;
    bool raw;
    const char *system;
    const char *env[64], *hostmap[64];
    bool wait_bare;  /* -w/--wait without a time */
    const char *key; /* a YAML key being applied (as_yaml_option), named in the detail */
};
/* The options. Those that are also keys of a system description have their .yaml key, and
 * their index in struct rpol (system.h) in .set. */
extern const struct ardc_optset as_optset;
enum { AS_RPOL_RESTART, AS_RPOL_DELAY, AS_RPOL_LIMIT, AS_RPOL_N };
/* The command line into c (zeroed); 0, or the failing code with its detail (a usage error). */
int as_parse_args(int argc, char **argv, struct as_cmdline *c);
/* The value of such a key checked as its option's (row: ardc_opt_find_yaml's): 0, or
 * ARD_EOPTION with the detail "KEY 'VALUE': expected ...". */
int as_yaml_option(const struct ardc_opt *row, const char *key, const char *value);

/* restart.c: values of --restart, --restart-delay and --restart-limit (also the YAML keys
 * restart, restart_delay, restart_limit); `what` names the option or key in the detail. 0, or
 * ARD_EOPTION with the detail "WHAT 'VALUE': expected ...". */
int as_parse_restart(const char *what, const char *v, int *policy);
int as_parse_restart_delay(const char *what, const char *v, int64_t *ns);
int as_parse_restart_limit(const char *what, const char *v, int *n, int64_t *ns);
const char *as_restart_word(int policy);

/* restart.c: the restart decision of a supervisor after a run of its command ended. */
struct as_restarts {
    int64_t *times; /* the last restart_limit restarts (monotonic), a ring; NULL: no limit */
    int n;          /* restarts so far */
};
/* Counting starts; the ring exists when the policy restarts with a limit. */
void as_restarts_init(struct as_restarts *r, const struct as_opts *o);
/* The policy asks for a restart after a run that ended in failure (or not). */
bool as_restart_wanted(const struct as_opts *o, bool failure);
/* The limit allows a restart at now: fewer than N restarts within the window before it. */
bool as_restart_limit_ok(const struct as_restarts *r, const struct as_opts *o, int64_t now);
/* A restart at now. */
void as_restart_note(struct as_restarts *r, const struct as_opts *o, int64_t now);

void as_quote_argv(char **argv, int argc, char *buf, size_t len);

#endif /* ARDSTART_H */
