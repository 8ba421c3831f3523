/*
 * ardrun.h - internal declarations of the group runner (never installed).
 */
#ifndef ARDRUN_H
#define ARDRUN_H

#include "ard_common.h"
#include "ardc_opt.h"
#include "ardc_ready.h"
#include "ardr_names.h"
#include "ardnet_block.h"
#include "ardnet_view.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define ARDR_HAVE_TSC 1
#endif
#include <stdbool.h>
#include <stdint.h>

/* Exit codes (docs/ardrun.md). */
#define ARDR_EXIT_USAGE ARDC_EXIT_USAGE /* bad command line or group YAML */
#define ARDR_EXIT_PLUGIN 101            /* a plugin could not be loaded or was refused */
#define ARDR_EXIT_SCHEME 102            /* the scheme check failed (nothing was run) */
#define ARDR_EXIT_INIT 103              /* a block's init (or first start) failed */
#define ARDR_EXIT_CTL 104    /* ctl: no reply from the group, or the command was refused */
#define ARDR_EXIT_FAILED 105 /* --block: the block's step failed */
#define ARDR_EXIT_HUNG 106   /* a block's tick did not end within the watchdog time */
#define ARDR_EXIT_SYS ARDC_EXIT_SYS

#define ARDR_DELAY_BINS 2048
/* Private connections nobody outside the group reads are published this often (ns). */
#define ARDR_REFRESH_NS 100000000
/* Watchdog: a rate thread whose tick has run for max(ARDR_WATCHDOG_NS, ARDR_WATCHDOG_PERIODS
 * periods) is hung; after SIGTERM, SIGINT or SIGHUP a tick gets at most ARDR_STOP_GRACE_NS. */
#define ARDR_WATCHDOG_NS 100000000
#define ARDR_WATCHDOG_PERIODS 20
#define ARDR_STOP_GRACE_NS 1000000000
#define ARDR_LABEL_MAX 128

/* ---- plugin.c: a loaded and checked plugin --------------------------------------------- */

/* One loaded copy of a plugin file (a memfd, so that a rebuilt .so is really loaded again:
 * dlopen of an already loaded path returns the old object). */
struct ardr_so;

struct ardr_plugin {
    struct ardr_so *so;
    const struct ard_block_desc *d; /* the plugin's, or its API 1 descriptor converted */
};

/* Load `path` and check its descriptor. The instances loaded from the same file (same device,
 * inode, size and modification time) share one loaded copy: its code and its static data,
 * as when one process dlopens a library once; a block keeps its own state in ctx->state.
 * `what` names the instance for messages. Returns 0 or ARD_E* with the detail set. */
int ardr_plugin_load(struct ardr_plugin *pl, const char *path, const char *what);
/* The same, but always a new copy of its own, shared with nobody (a reload: the new build,
 * and a restart of the code and static data of this one instance). */
int ardr_plugin_load_new(struct ardr_plugin *pl, const char *path, const char *what);
void ardr_plugin_unload(struct ardr_plugin *pl);
/* 0 when both descriptors have the same ports (names, directions, sizes, types). */
int ardr_plugin_same_ports(const struct ard_block_desc *a, const struct ard_block_desc *b,
                           const char *what);

/* A parameter's value, of one of the types a plugin declares. */
struct ardr_pval {
    enum ard_param_type type;
    int64_t i;
    double f;
    int b;
    char s[ARDR_STR_MAX + 1];
};

/* Parse `text` as a parameter value of `type` into v; `what` prefixes the message. */
int ardr_param_parse(const char *what, const char *name, enum ard_param_type type, const char *text,
                     struct ardr_pval *v);

/* ---- block.c: one block instance (shared by group and single-block mode) --------------- */

enum ardr_state { ARDR_INIT = 0, ARDR_RUNNING = 1, ARDR_STOPPED = 2, ARDR_FAILED = 3 };
enum ardr_req { ARDR_REQ_NONE = 0, ARDR_REQ_STOP = 1, ARDR_REQ_START = 2 };

struct ardr_kv {
    char key[ARDR_NAME_MAX + 1];
    char val[ARDR_STR_MAX + 1];
};

/* The hand-off of a connection private to one rate thread: its writer and every reader of
 * the group step in the same thread (ardr_scheme_handoff). The writer's OUT buffer is its own
 * (b->own) and a successful step's packet is copied to `pub`; for an ARD_PORT_WHOLE port the
 * writer writes into the one of pkt[] that is not `pub`, and a successful step swaps them (no
 * copy). Readers of the thread read `pub` in place; shared memory gets the packets for
 * readers outside the group: every packet while one is attached (`watched`), else the newest
 * about every 100 ms and when the writer stops (docs/ardrun.md, "Running"). */
struct ardr_handoff {
    /* what a tick reads and writes, in the first cache line (the header is 64-byte aligned) */
    void *pub;            /* the last packet sent: pkt[0] or pkt[1] */
    struct ard_info info; /* its sequence number (counted here) and send times; seq 0: none */
    size_t size;
    bool dirty;           /* pub is newer than the connection's newest packet */
    _Atomic bool watched; /* a reader outside the group is attached: publish every packet */
    /* the rest: set up once, or the control thread's */
    void *pkt[2];       /* packet buffers after this header, cache-line aligned (pkt[1]
                         * only for a whole port, else NULL) */
    int readers;        /* IN ports of the group on the connection */
    uint32_t hint;      /* control thread: the header's reader count when last looked at */
    int64_t checked_ns; /* control thread: when the peers were last counted exactly */
};

struct ardr_block {
    /* What a step touches comes first and per port in one small allocation (ardr_block_alloc),
     * so that a step of a block reads a handful of cache lines, not pieces of a 50 KiB
     * structure: the context and the fields a tick reads in lines 0-3, and for a block of a
     * few ports, the arrays a tick of private hand-offs reads in lines 4-5 (`inl`). */
    ard_block_ctx ctx;
    int (*step)(ard_block_ctx *ctx); /* the plugin's step (its descriptor's, cached) */
    /* run time, written by its rate thread */
    _Atomic int state;
    _Atomic int req;
    uint32_t nports;
    int stagger; /* which tick of a refresh period publishes its private outputs */
    /* its statistics, in the same cache line as the end of the context */
    _Atomic uint64_t steps;
    _Atomic int64_t sum_ns, max_ns;
    bool said; /* ard_block_fail was called during the current callback (why is set) */

    /* Per port, arrays of nports in one allocation (the ones a tick reads first): */
    /* What the step sees (ctx->buf): an OUT port's loaned slot (written in place, committed
     * after the step) or, for a private connection, its own buffer; an IN port's own buffer,
     * or the writer's newest packet in place (src, hsrc). */
    void **bufs;
    uint8_t *dir; /* ARD_IN / ARD_OUT, from the descriptor */
    int8_t *fresh;
    uint8_t *send;
    uint8_t *whole; /* OUT port declared ARD_PORT_WHOLE: its buffer is not kept between steps */
    struct ard_info *info;
    /* OUT port of a connection private to this block's rate thread (NULL: the loan below) */
    struct ardr_handoff **ho;
    /* IN port of such a connection: its writer's hand-off (read in place, no system call) */
    const struct ardr_handoff **hsrc;
    /* IN port read in place: the OUT port of the block of the same rate thread that writes
     * its connection (set by ardr_scheme_handoff), NULL: received with ard_tryrec. */
    ard_port **src;
    ard_port **port;
    void **own;    /* private buffers (IN: received into; zeroes when none) */
    bool *delayed; /* IN port read one tick late (cycle broken here) */
    _Atomic uint64_t fails;
    void *hot; /* the allocation of the arrays above: `inl` when they fit */
    _Alignas(64) uint8_t inl[320];

    /* Configuration. The large parts (about 60 KiB) are in an allocation of their own
     * (ardr_block_new): a block is about 1 KiB, and the blocks of a group lie next to each
     * other, not one per 16 pages. */
    char name[ARDR_NAME_MAX + 1];
    char *path;             /* [ARDR_PATH_MAX] */
    struct ardr_kv *wires;  /* [ARD_BLOCK_MAX_PORTS] */
    struct ardr_kv *params; /* [ARD_BLOCK_MAX_PARAMS] */
    int rate;               /* index of its rate group */
    int nwires;
    int nparams;
    int line;      /* in the YAML, for messages */
    bool own_copy; /* load a copy of the plugin of its own, shared with no other instance */

    /* loaded */
    struct ardr_plugin pl;
    struct ardr_pval *pv;           /* [ARD_BLOCK_MAX_PARAMS] */
    char (*conn)[ARD_MAX_NAME + 1]; /* [ARD_BLOCK_MAX_PORTS] */
    void *cold;                     /* the allocation of path .. conn */
    bool inited;
    char why[256]; /* last failure, written by the thread that failed */
    _Atomic int reported;
    /* "block 'NAME' (PLUGIN) of rate 'RATE'", preformatted for the crash handler and the
     * watchdog (ardr_label), always NUL-terminated */
    char label[ARDR_LABEL_MAX];
};

#define ARDR_PATH_MAX 4096
/* A new block: zeroes *b and allocates its configuration's arrays. Returns 0 or ARD_ENOMEM. */
int ardr_block_new(struct ardr_block *b);
/* Allocate the per-port arrays for the loaded plugin's ports (zeroed). Returns 0 or
 * ARD_ENOMEM. */
int ardr_block_alloc(struct ardr_block *b);
/* Parse and check the block's parameter values against its descriptor (defaults filled in). */
int ardr_block_params(struct ardr_block *b);
/* Set up buffers and the context (after the plugin is loaded and ports exist). */
int ardr_block_prepare(struct ardr_block *b);
void ardr_block_free(struct ardr_block *b);
/* Times of one tick, shared by the blocks a thread steps one after another. */
struct ardr_tick {
    int64_t tick_ns;     /* the tick's wake-up time (ctx->now_ns), CLOCK_MONOTONIC */
    int64_t period_ns;   /* the block's period (ctx->period_ns) */
    int64_t clock_ns;    /* in: CLOCK_MONOTONIC now (the step's start); out: after the step */
    int64_t real_off_ns; /* CLOCK_REALTIME - CLOCK_MONOTONIC, read once per tick */
    uint64_t raw;        /* ardr_clock_raw() at tick_ns */
    bool refresh;        /* publish the block's private outputs not yet published */
};
/* A tick starting now. */
void ardr_tick_start(struct ardr_tick *t, int64_t period_ns);
/* One step: receive the IN ports (except `skip`, already received by the caller in trigger
 * mode; -1: none), step, send the marked OUT ports stamped with the step's start; times it.
 * Returns 0 or the error (b->why says why); t->clock_ns is updated either way. */
int ardr_block_step(struct ardr_block *b, struct ardr_tick *t, int skip);
/* Publish the block's private outputs that shared memory does not have yet (b->ho), e.g.
 * when it stops. Called by the block's thread. */
void ardr_block_flush(struct ardr_block *b);

/* A block's entry in its rate thread's tick (run.c): a thread's records lie in one array in
 * tick order, two to a cache line, so that a tick walks them in one sweep and never reads the
 * block's own pointer fields. Built by the thread before its first tick from what stays fixed
 * while the group runs (a reload keeps the ports, their arrays and hand-offs). */
struct ardr_rec {
    struct ardr_block *b;
    uint8_t *hot;  /* b->hot: bufs, ho, hsrc (nports each), dir, fresh, send, whole */
    uint32_t info; /* b->info - b->hot */
    uint16_t nports;
    bool private; /* every port is a private hand-off (b->ho, b->hsrc): ardr_rec_step */
};
_Static_assert(sizeof(struct ardr_rec) <= 32, "two records to a cache line");
/* Fill r for block b (after ardr_scheme_handoff). */
void ardr_rec_init(struct ardr_rec *r, struct ardr_block *b);
/* ardr_block_step for a block whose ports are all private hand-offs (r->private), reading
 * the per-port arrays from the record; the same results. */
int ardr_rec_step(const struct ardr_rec *r, struct ardr_tick *t);

/* ---- clock.c: the clock of the execution times -------------------------------------- */

/* Choose the clock: the TSC, scaled to ns by a calibration against CLOCK_MONOTONIC, when
 * the kernel itself uses it as its clocksource (constant rate, synchronised across CPUs);
 * else CLOCK_MONOTONIC. Calibrates for about 10 ms. */
void ardr_clock_init(void);
/* A reading of the chosen clock, and the nanoseconds between two readings (inline: they are
 * read once per block and step). */
extern bool ardr_use_tsc;
extern double ardr_ns_per_tick;
static inline uint64_t ardr_clock_raw(void)
{
#ifdef ARDR_HAVE_TSC
    if (ardr_use_tsc)
        return __rdtsc();
#endif
    return (uint64_t)ard_now_ns();
}
static inline int64_t ardr_clock_ns(uint64_t from, uint64_t to)
{
    if (!ardr_use_tsc)
        return (int64_t)(to - from);
    return (int64_t)((double)(int64_t)(to - from) * ardr_ns_per_tick);
}
/* "TSC (x.xxx GHz)" or "CLOCK_MONOTONIC", for the start-up message. */
const char *ardr_clock_name(void);
/* Call init (and start), close. Return 0 or the callback's error with b->why set. */
int ardr_block_init(struct ardr_block *b);
void ardr_block_close(struct ardr_block *b);
/* The plugin's close callback alone (a crash in it names the block). */
void ardr_block_close_cb(struct ardr_block *b);
int ardr_block_call(struct ardr_block *b, int (*cb)(ard_block_ctx *), const char *what);

/* ---- guard.c: naming a block that crashes or hangs ------------------------------------ */

/* Preformat b->label: "block 'NAME' (PLUGIN)" and, when rate is not NULL, " of rate 'RATE'". */
void ardr_label(struct ardr_block *b, const char *rate);
/* Install the handlers of SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT: they write
 * "<prefix><label of the running block>: crashed with SIGSEGV ..." to stderr with write(2)
 * only, then let the process die of the same signal. `prefix` is copied. */
void ardr_crash_init(const char *prefix);
/* The calling thread names *slot when it crashes (NULL: nothing); sets up an alternate signal
 * stack for the thread, so that a stack overflow is named too. ardr_crash_thread(NULL) before
 * the thread ends frees that stack. */
void ardr_crash_thread(struct ardr_block *_Atomic *slot);
/* The slot of the calling thread (NULL if none): ardr_block_call sets it around callbacks. */
struct ardr_block *_Atomic *ardr_crash_slot(void);
/* The signals whose handlers ardr_crash_init installs, for a thread's signal mask: they must
 * stay unblocked in every thread (a fault with its signal blocked kills without a word). */
void ardr_crash_sigdel(sigset_t *set);
/* --block mode: ardr_grace_init installs a SIGALRM handler; ardr_grace_start (async-signal-
 * safe, called by the stop signal's handler) gives the running callback ARDR_STOP_GRACE_NS,
 * after which the block in the thread's slot is named and the process ends with
 * ARDR_EXIT_HUNG; ardr_grace_end cancels that once the process stops on its own. */
void ardr_grace_init(void);
void ardr_grace_start(void);
void ardr_grace_end(void);

/* ---- config.c: the group YAML -------------------------------------------------------- */

struct ardr_rate {
    char name[ARDR_NAME_MAX + 1];
    int divide; /* period = base period * divide */
    int prio;   /* SCHED_FIFO priority, 0 = leave the policy alone */
    char cpus[ARDR_CPUS_MAX + 1];
    int order[ARDR_MAX_BLOCKS]; /* block indices in tick order */
    int n;
    /* run time */
    pthread_t thread;
    _Atomic uint64_t cycles, overruns;
    /* wake-up delay (now - deadline) of each tick: 1 us bins, the last one open */
    uint32_t delay_hist[ARDR_DELAY_BINS];
    int64_t delay_min, delay_max;
    _Atomic int first_done;
    _Atomic int tid; /* its thread's id (the watchdog reads its state), written once */
    /* the block its thread runs (step or lifecycle callback), for the watchdog and the crash
     * handler; written before each block of a tick, NULL between ticks */
    struct ardr_block *_Atomic current;
    int error;
    char why[256];
};

struct ardr_group {
    char file[4096];
    char name[ARDR_NAME_MAX + 1];
    char domain[ARD_MAX_NAME + 1];
    int64_t period_ns;
    bool lock;
    bool strict; /* inputs nothing writes are errors, not warnings */
    struct ardr_rate rates[ARDR_MAX_RATES];
    int nrates;
    struct ardr_block *blocks;
    int nblocks;
    int64_t ticks; /* run this many base ticks then stop (0: until signalled) */
};

/* Parse `file` into g (blocks allocated). Returns 0 or ARD_EINVAL with a detail naming the
 * file, line and key. */
int ardr_config_load(struct ardr_group *g, const char *file);
void ardr_config_free(struct ardr_group *g);
/* Where plugin `name` is: a bare file name is looked up in $ARDRUN_PLUGIN_PATH (a colon list)
 * first; a relative path is relative to the directory of `yaml` (NULL: the working one). */
void ardr_plugin_path(char *out, size_t n, const char *name, const char *yaml);

/* ---- scheme.c: the scheme check and the tick order ---------------------------------- */

/* Check descriptors against each other (sizes, types, writers, unwritten inputs), then create
 * the ports (which checks against connections outside the group: types, writer lock).
 * Prints every problem to stderr. Returns 0, or the number of errors found (> 0). */
int ardr_scheme_check(struct ardr_group *g);
/* Order each rate group's blocks by data flow; prints broken cycles. */
void ardr_scheme_order(struct ardr_group *g);
/* Choose how each connection is handed over (after ardr_scheme_check): a connection whose
 * writer and every reader of the group step in one rate thread is private to it (b->ho,
 * b->hsrc); an IN port whose writer steps in the same thread but that other threads read too
 * reads the writer's slot in place (b->src). Then prepares every block's buffers. Returns 0
 * or the number of errors (printed). */
int ardr_scheme_handoff(struct ardr_group *g);

/* ---- run.c ------------------------------------------------------------------------- */

int ardr_run_group(struct ardr_group *g);

/* ---- args.c: the command line of every mode (one table, ardc_opt.h) ---------------- */

/* The modes, for the rows' `where`. */
enum {
    ARDR_W_GROUP = 1,    /* ardrun GROUP.yaml */
    ARDR_W_BLOCK = 2,    /* ardrun --block PLUGIN.so */
    ARDR_W_CTL = 4,      /* ardrun ctl GROUP CMD [BLOCK] */
    ARDR_W_NEW = 8,      /* ardrun --new NAME */
    ARDR_W_DESCRIBE = 16 /* ardrun --describe PLUGIN.so */
};

/* A mode's command line: set where, first, maxwords and unknown, then ardr_args_parse. */
struct ardr_args {
    unsigned where;      /* the mode (ARDR_W_*) */
    int first;           /* the first word of argv to parse */
    int maxwords;        /* the arguments (words that are no option) the mode takes */
    const char *unknown; /* the detail of a word the mode does not take ("unknown argument
                          * '%s'") */
    /* ardrun's options and arguments */
    const char *plugin, *name, *trigger, *output;
    double rate;
    int64_t ticks;
    bool strict;
    struct ardr_block *b; /* --block: --param goes into its parameters */
    const char *words[3];
    int nwords;
    /* the standard options, for ard_init: lib[0] is argv[0] */
    char **lib;
    int nlib;
    struct ardc_ready ready; /* $ARD_READY_FD held back from ard_init (ardr_init_unready) */
    bool usage;              /* the failure is the command line's form: show the usage */
    bool done;               /* --help or --version answered: exit 0 */
};
/* Every option of every mode (main and --block, --new, --describe), and ctl's. */
extern const struct ardc_optset ardr_optset, ardr_ctl_optset;
/* Parse argv[a->first..] into a: the standard options (ardi_lib_option_words says which words
 * they take) into a->lib, ardrun's through the table. Prints nothing: 0, or the failing code
 * with its detail (a->usage when the usage is to be shown). ardr_args_free frees a->lib. */
int ardr_args_parse(const struct ardc_optset *s, struct ardr_args *a, int argc, char **argv);
void ardr_args_free(struct ardr_args *a);
/* Is this the command line of `ardrun --block` (a --block before any "--")? */
bool ardr_args_block(int argc, char **argv);
/* ardrun's help (usage, options, exit codes). */
void ardr_usage(FILE *f);
/* ard_init with a->lib, $ARD_READY_FD hidden from it (ardrun says ready itself, after the
 * scheme check or the block's init): its value is held in a->ready (ardc_ready_release). */
int ardr_init_unready(struct ardr_args *a);

/* ---- modes (main.c dispatches) ----------------------------------------------------- */

int ardr_cmd_group(int argc, char **argv);
int ardr_cmd_block(int argc, char **argv);
int ardr_cmd_ctl(int argc, char **argv);
int ardr_cmd_new(int argc, char **argv);
int ardr_cmd_describe(int argc, char **argv);

/* ---- control packets: connection "<group>.ctl" (in) and "<group>.ctl-reply" (out) --- */

#define ARDR_CTL_TYPE "u32 u32 u8[32]"
struct ardr_ctl {
    uint32_t id;  /* chosen by the client, echoed in the reply */
    uint32_t cmd; /* ARDR_CMD_* */
    char block[32];
};
#define ARDR_CTL_REPLY_TYPE "u32 i32 u8[248]"
struct ardr_ctl_reply {
    uint32_t id;
    int32_t result; /* 0 or ARD_E* */
    char text[248];
};
enum { ARDR_CMD_STOP = 1, ARDR_CMD_START = 2, ARDR_CMD_RELOAD = 3 };

/* Create or attach the group's control connection `conn` (.ctl, .ctl-reply, .stats, .names)
 * as ard_create_on does, but only an object of this process's user: another user's is
 * refused whatever --ard-allow-foreign or $ARD_ALLOW_FOREIGN say, ARD_EACCES with a detail
 * naming its owner and mode and how to remove it. */
ard_port *ardr_ctl_open(const char *port, const char *conn, enum ard_dir dir, size_t size,
                        const char *type);

/* stats: connection "<group>.stats", layout in run.c (stats_open) and docs/ardrun.md */

#endif /* ARDRUN_H */
