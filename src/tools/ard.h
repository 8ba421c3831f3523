/*
 * ard.h - the `ard` command: shared core of the subcommands (one file each, cmd_*.c).
 *
 * The core (core.c) opens connections, reads their objects without attaching (for list and
 * hz), decodes packets by their type descriptor, parses field paths ("q[2]", "tick", "f0")
 * and values, and prints numbers, times and JSON strings. Exit codes are fixed (docs/ard.md).
 */
#ifndef ARD_TOOLS_H
#define ARD_TOOLS_H

#include "ard_common.h"
#include "ardc_buf.h"
#include "ardc_opt.h"
#include "ardnet_view.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Exit codes of every subcommand. */
enum {
    ARDT_OK = ARDC_EXIT_OK,
    ARDT_NOENT = 1,    /* connection does not exist (in this domain) */
    ARDT_BUSY = 2,     /* set/pub: the connection has a live writer */
    ARDT_STALE = 3,    /* object damaged, foreign, of another version, or not accessible */
    ARDT_NODATA = 4,   /* show: nothing was ever sent (and not following) */
    ARDT_NOTBUILT = 5, /* the subcommand's part was not built into this ard */
    ARDT_USAGE = ARDC_EXIT_USAGE, /* bad option, field path or value, unknown subcommand */
    ARDT_SYS = ARDC_EXIT_SYS,     /* system error */
};

/* Global options, parsed by main before the subcommand. */
struct ardt_global {
    const char *domain; /* never NULL after main's parsing */
};
extern struct ardt_global ardt_g;

/* One subcommand. `run` gets argv with argv[0] = the subcommand's name. */
struct ardt_cmd {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
    const struct ardc_optset *spec; /* usage and options */
    /* NULL, or (run and usage NULL) the part was configured out: what brings it, as in
     * "civetweb: apt-get install libcivetweb-dev" */
    const char *notbuilt;
};

int cmd_list(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_hz(int argc, char **argv);
int cmd_bw(int argc, char **argv);
int cmd_delay(int argc, char **argv);
int cmd_set(int argc, char **argv);
int cmd_pub(int argc, char **argv);
int cmd_graph(int argc, char **argv);
int cmd_siggen(int argc, char **argv);
int cmd_web(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_df(int argc, char **argv);
int cmd_play(int argc, char **argv);
int cmd_ros2msgs(int argc, char **argv);
extern const struct ardc_optset ardt_list_spec, ardt_df_spec, ardt_show_spec, ardt_hz_spec,
    ardt_bw_spec, ardt_delay_spec, ardt_set_spec, ardt_pub_spec, ardt_graph_spec, ardt_siggen_spec,
    ardt_web_spec, ardt_record_spec, ardt_info_spec, ardt_export_spec, ardt_play_spec,
    ardt_ros2msgs_spec;

/* ---- options (opts.c) ------------------------------------------------------------------------
 * Each subcommand declares its options once, as rows of a struct ardc_optset (ardc_opt.h) with
 * their destinations: the parser, the help text (ard help SUB, ard SUB --help) and the bash
 * completion (`ard help --options SUB`) read the same rows. */

/* Parse the subcommand's argv[1..] (argv[0] is its name) with s into dest. 0, or the library's
 * code (ARD_EOPTION for what the user wrote wrong) with ard_errdetail() naming the option; the
 * subcommand prints it (ardt_liberr: exit ARDT_USAGE). */
int ardt_opts(const struct ardc_optset *s, int argc, char **argv, void *dest);
/* ARDC_CALL of a repeatable option kept in an array of argc entries (room for every word):
 * appends the value (a word of argv) to the char ** at .off, counted by the int at .count. */
ardc_opt_fn ardt_push;
#define ARDT_PUSH(type, field, n)                                                                  \
    .kind = ARDC_CALL, .call = ardt_push, .off = offsetof(type, field), .count = offsetof(type, n)
/* The positional callback of a subcommand that takes no arguments: "unexpected 'WORD'". */
int ardt_no_arg(void *dest, char *word);
/* After --size: 0 is refused (a connection holds at least 1 byte). */
ardc_opt_fn ardt_size_given;
/* -t/--type DESC and -s/--size BYTES of the writers (set, pub, siggen), into the fields `type`
 * (const char *) and `size` (uint64_t) of T. */
#define ARDT_OPT_TYPE(T) ARDT_OPT_TYPE_YAML(T, NULL)
/* The same, with its key in the subcommand's YAML file (siggen --config). */
#define ARDT_OPT_TYPE_YAML(T, key)                                                                 \
    {                                                                                              \
        "type", 't', "DESC", "create the connection with this type if it does not exist",          \
            .kind = ARDC_TEXT, ARDC_DEST(T, type), .yaml = key                                     \
    }
#define ARDT_OPT_SIZE(T)                                                                           \
    {                                                                                              \
        "size", 's', "BYTES", "create an opaque connection of this size if it does not exist",     \
            .kind = ARDC_UINT, ARDC_DEST(T, size), .umax = UINT32_MAX, .call = ardt_size_given     \
    }
/* The options of hz, bw and delay (into struct ardt_watch), and their positional callback. */
extern const struct ardc_opt ardt_watch_opts[];
int ardt_watch_name(void *dest, char *word);

/* ---- messages and exit codes ---------------------------------------------------------------- */

/* The error convention: helpers fail, the subcommand prints.
 * - A helper (anything but a subcommand's cmd_* and main.c) never prints an error. It fails
 *   like the library: it returns a negative ARD_E* code with ard_errdetail() holding the
 *   message (ardi_fail, ardi_fail_errno, ardt_fail), or passes on a library call's code and
 *   detail. The code chooses the exit code (ardt_code): ARD_ENOENT 1, ARD_EBUSY 2, ARD_ESTALE
 *   (ARD_EACCES, ARD_ETYPE) 3, ARD_ENODATA 4, ARD_EOPTION (ARD_EINVAL) 100, any other 111.
 * - A subcommand's cmd_* returns an exit code (>= 0, its message printed with ardt_err or
 *   ardt_liberr) or such a negative code, which main prints once as "ard SUB: DETAIL" and
 *   maps with ardt_code (ardt_liberr).
 * - Messages that are not failures (warnings, progress) are printed where they arise, with
 *   ardt_err(0, ...). */

/* "ard SUB: message\n" on stderr; returns code. */
int ardt_err(int code, const char *fmt, ...) ARDI_PRINTF(2, 3);
/* ardi_fail whose arguments may include ard_errdetail() (formatted before it is replaced). */
int ardt_fail(int code, const char *fmt, ...) ARDI_PRINTF(2, 3);
/* Exit code for a library error code. */
int ardt_code(int ard_err);
/* Print the library's last error detail ("ard SUB: DETAIL") and return the exit code for
 * ard_err (ardt_code). */
int ardt_liberr(int ard_err);
/* Which subcommand is running (for messages). */
extern const char *ardt_sub;
/* The command line of the subcommands that watch connections over intervals (hz, bw, delay,
 * spec s with ardt_watch_opts and ardt_watch_name): --json, -i/--interval S, -n/--count N, and
 * at least one connection name. names[] must have room for argc entries; they point into argv.
 * Returns 0 or ARD_EOPTION with the detail (the command prints it). */
struct ardt_watch {
    double interval;  /* seconds between reports (default 1) */
    uint64_t reports; /* 0: until stopped */
    bool json;
    const char **names;
    size_t n;
};
int ardt_parse_watch(const struct ardc_optset *s, int argc, char **argv, struct ardt_watch *w);

/* Install SIGINT/SIGTERM handlers setting ardt_stop (no SA_RESTART: blocking calls return
 * ARD_EINTR), and ignore SIGPIPE so that a closed pipe is a write error we end on quietly. */
void ardt_signals(void);
extern volatile int ardt_stop;
/* After writing a batch: flush; false when the reader went away (EPIPE) or another error. */
bool ardt_flush(FILE *f);

/* ---- reading a connection's object without attaching ----------------------------------------- */

/* Entries of a connection's table of attached ports (ard_conn_peers). */
#define ARDT_MAX_PEERS 64

struct ardt_probe {
    char name[ARD_MAX_NAME + 1];
    char type[ARD_MAX_TYPE + 1];
    size_t size;
    int32_t writer_pid; /* live writer (holds the writer lock), 0 if none */
    char writer_program[16];
    uint32_t readers;  /* live attached IN ports */
    uint32_t unlisted; /* live ports the object's peer table had no room for */
    bool attached;     /* anybody attached (false: orphaned object) */
    uint64_t seq;      /* newest sequence number, 0: nothing sent */
    int64_t mono_ns, real_ns;
    double rate_hz; /* from the send times in the ring; 0 when unknown */
    uint32_t mode;  /* permission bits */
    uint32_t uid;   /* owner */
    uint64_t ino;   /* inode of the object (changes when re-created) */
};

/* Open connection `name` of the global domain as a read-only view (ardnet_view.h). Returns 0
 * or an ARD_E* code with ard_errdetail() naming the connection and the cause. */
int ardt_view_open(const char *name, ard_view **v);
/* Open, probe (header, writer, readers, newest packet, rate from the ring), close. */
int ardt_probe(const char *name, struct ardt_probe *p);

/* Program name (comm) of a pid, "?" if it is gone. */
void ardt_comm(int32_t pid, char *buf, size_t len);

/* ---- who is attached ---------------------------------------------------------------------- */

/* Live peers of a connection as its object records them (ard_conn_peers), writer first.
 * Returns the count listed (<= max) or an ARD_E* code; *unlisted (may be NULL) counts live
 * ports the object's table had no room for. */
int ardt_peers(const char *conn, struct ard_peer *out, size_t max, uint32_t *unlisted);

/* The other host of a port that `ardnet --auto` attached, named "auto-N-from-HOST" when it
 * writes what comes from HOST and "auto-N-to-HOST" when it reads what it forwards to HOST
 * (N tells the ports of one catalog apart; src/ardnet/auto.c names them), or NULL for any
 * other port. *to says which. */
const char *ardt_auto_host(const struct ard_peer *pe, bool *to);

/* ---- opening ports ------------------------------------------------------------------------ */

/* ard_init once, in the global domain, with no options. 0 or an ARD_E* code (detail). */
int ardt_lib_init(void);
/* Attach a port on connection `conn` of the global domain, adopting its size and type.
 * On failure returns NULL with *code set to an ARD_E* code (detail set;
 * ARD_ENOENT names the connection and the domain). */
ard_port *ardt_attach(const char *conn, enum ard_dir dir, int *code);

/* ---- decoding, field paths, values --------------------------------------------------------- */

struct ardt_type {
    char desc[ARD_MAX_TYPE + 1]; /* "" for opaque */
    size_t size;
    size_t nfields;
    struct ard_field *fields; /* nfields entries (NULL when opaque) */
};

/* Parse a connection's descriptor (or opaque when desc is ""). 0 or ARD_ESTALE (bad
 * descriptor, or its size differs), ARD_ENOMEM; the detail says which. */
int ardt_type_init(struct ardt_type *t, const char *desc, size_t size);
void ardt_type_free(struct ardt_type *t);
/* Name of field i: its own, or "fI". */
const char *ardt_field_name(const struct ardt_type *t, size_t i, char *buf, size_t len);

/* A selected part of a packet: field `field`, elements [first, first+count). */
struct ardt_sel {
    size_t field;
    uint32_t first, count;
    bool whole; /* the path named the field without an index */
};

/* Parse a field path ("q", "q[2]", "f1", "tick") against a type. Returns 0 or ARD_EOPTION
 * with the detail naming the path and what is wrong. */
int ardt_sel_parse(const struct ardt_type *t, const char *path, struct ardt_sel *sel);

/* Read element `idx` of field `f` in `pkt` as double / as exact integer. */
double ardt_get_f(const struct ard_field *f, const void *pkt, uint32_t idx);
/* Store a value given as text into element idx of field f. Returns 0 or ARD_EOPTION with
 * the detail naming `what` (the path) and the value. */
int ardt_set_text(const struct ard_field *f, void *pkt, uint32_t idx, const char *what,
                  const char *text);
/* Store a double (rounded and clamped to the field's range for integers). */
void ardt_set_f(const struct ard_field *f, void *pkt, uint32_t idx, double v);
/* Print element idx of field f: exact integers, floats with the shortest text that reads
 * back to the same value; json: NaN/Inf as null. */
void ardt_put_value(FILE *o, const struct ard_field *f, const void *pkt, uint32_t idx, bool json);
/* A JSON string literal (ardc_json_str). */
void ardt_put_json_str(FILE *o, const char *s);
/* A packet's fields as a JSON object, {"KEY":VALUE,...}, one member per selection (sel NULL:
 * every field whole): KEY the field's name (NAME[FIRST] for an element), VALUE a number (NaN
 * and Inf null), or an array for a whole array field. text, when not NULL, may print a
 * selection's value itself (returning true). `ard show --json` and `ard web` write this. */
void ardt_put_fields_json(
    FILE *o, const struct ardt_type *t, const struct ardt_sel *sel, size_t nsel, const uint8_t *pkt,
    bool (*text)(FILE *o, const struct ardt_sel *sel, const uint8_t *pkt, void *arg), void *arg);

/* Times. */
void ardt_put_age(FILE *o, int64_t ns);               /* "1.23 ms" */
void ardt_put_real(FILE *o, int64_t real_ns);         /* "2026-11-22T15:08:33.123456789Z" */
void ardt_fmt_rate(char *buf, size_t len, double hz); /* "1000 Hz", "0.1 Hz", "-" */

#endif /* ARD_TOOLS_H */

/* ---- writing by hand (write.c: set, pub, siggen) -----------------------------------------------
 */

struct ardt_writer {
    const char *conn;
    ard_port *in, *out;
    struct ardt_type t;
    uint8_t *pkt; /* the connection's last value, then our changes */
};

/* Attach to an existing connection: read its type and last value (zeros if nothing was sent),
 * then take the writer role. A live writer refuses with ARD_EBUSY, naming its pid. `check`
 * runs (when not NULL) after the type is known and before anything is written or the writer
 * role taken, to refuse bad assignments early. Returns 0 or an ARD_E* code (detail set). */
int ardt_writer_open(struct ardt_writer *w, const char *conn,
                     int (*check)(struct ardt_writer *w, void *arg), void *arg);
void ardt_writer_close(struct ardt_writer *w);
/* ardt_writer_open, after creating `conn` when it does not exist and --type DESC or --size N
 * (opaque when DESC is NULL) was given; the connection, created or existing, must then match
 * them. 0 or an ARD_E* code (detail set). */
int ardt_writer_create(struct ardt_writer *w, const char *conn, const char *type, uint64_t size,
                       int (*check)(struct ardt_writer *w, void *arg), void *arg);
/* The assignments of set and pub ("PATH=VALUE" words, into argv). */
struct ardt_assigns {
    const char **v;
    int n;
};
/* The `check` of ardt_writer_open for a struct ardt_assigns: each assignment is tried on the
 * scratch copy of the packet before the writer role is taken; an opaque connection has no
 * fields to set. 0 or ARD_EOPTION (detail set). */
int ardt_assigns_check(struct ardt_writer *w, void *arg);
/* Apply "PATH=VALUE" to pkt: q[2]=1.5, tick=3, q=0.5 (every element), q=1,2,3 (each).
 * Returns 0 or ARD_EOPTION (ARD_ENOMEM) with the detail naming the path or value. */
int ardt_assign(const struct ardt_type *t, void *pkt, const char *arg);

/* ---- show --filter (filter.c; grammar in docs/ard.md) ------------------------------------ */

struct ardt_filter;
/* Compile `src` against type t (which must outlive the filter). 0, or the library's code
 * (ARD_EOPTION, ARD_ENOMEM) with ard_errdetail() naming the column of the bad token; the caller
 * prints it (ardt_liberr). */
int ardt_filter_new(const struct ardt_type *t, const char *src, struct ardt_filter **out);
/* Does the packet pass (the expression's value is neither 0 nor NaN)? */
bool ardt_filter_pass(const struct ardt_filter *x, const void *pkt);
void ardt_filter_free(struct ardt_filter *x);

/* ---- statistics and waiting ------------------------------------------------------------------ */

struct ardt_stats {
    uint64_t n;
    double mean, m2, min, max; /* Welford: numerically stable at any rate */
};
void ardt_stats_add(struct ardt_stats *s, double v);
double ardt_stats_std(const struct ardt_stats *s);

/* ard_period_wait that an interrupt (ardt_stop) ends within 100 ms even at slow rates. */
void ardt_period_wait(ard_period *p);
/* Sleep ns, ending early on ardt_stop. */
void ardt_sleep(int64_t ns);
