/*
 * solo.c - one plugin as its own process: `ardrun --block PLUGIN.so ...` is an ordinary
 * block (ports named as in the plugin, wired with --ard, readiness by ard_init), so a block
 * moves between a group and its own process by configuration only.
 */
#include "ardrun.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
    if (!stop_signal)
        ardr_grace_start(); /* a step that hangs is named after 1 s */
    stop_signal = sig;
}

/* A usage error of `ardrun --block`: the top function shows the usage after the detail. */
#define SOLO_USAGE (-ARDR_EXIT_USAGE)

/* "block 'NAME': " before the current failure detail; returns `code`. */
static int block_fail(int code, const struct ardr_block *b)
{
    char why[512];
    snprintf(why, sizeof why, "%s", ard_errdetail());
    ardi_fail(ard_lasterror(), "block '%s': %s", b->name, why);
    return code;
}

/* The command line into a (--param into b's parameters, the --ard options kept in a->lib for
 * ard_init). 0 or SOLO_USAGE with the detail. */
static int parse_block_args(int argc, char **argv, struct ardr_block *b, struct ardr_args *a)
{
    *a = (struct ardr_args){.where = ARDR_W_BLOCK,
                            .first = 1,
                            .b = b,
                            .unknown = "unknown or incomplete argument '%s'"};
    if (ardr_args_parse(&ardr_optset, a, argc, argv) < 0)
        return SOLO_USAGE;
    if (a->done)
        return 0;
    if (a->plugin == NULL)
        return ardi_fail(ARD_EOPTION, "--block needs a plugin file"), SOLO_USAGE;
    if ((a->rate > 0) == (a->trigger != NULL))
        return ardi_fail(ARD_EOPTION, "give exactly one of --rate HZ and --trigger PORT"),
               SOLO_USAGE;
    return 0;
}

/* Loads the plugin and allocates the block under its name; 0 or the exit code. */
static int load_block(struct ardr_block *b, const struct ardr_args *a)
{
    static char path[4096];
    ardr_plugin_path(path, sizeof path, a->plugin, NULL);
    if (ardr_plugin_load(&b->pl, path, "ardrun --block") < 0)
        return ARDR_EXIT_PLUGIN;
    if (ardr_block_alloc(b) < 0)
        return ARDR_EXIT_SYS;
    snprintf(b->name, sizeof b->name, "%s", a->name ? a->name : b->pl.d->name);
    return 0;
}

/* Creates the plugin's ports; *tport: the index of the --trigger port. 0 or the exit code. */
static int create_ports(struct ardr_block *b, const char *trigger, int *tport)
{
    const struct ard_block_desc *d = b->pl.d;
    *tport = -1;
    for (uint32_t p = 0; p < d->nports; p++) {
        if (trigger && !strcmp(d->ports[p].name, trigger) && d->ports[p].dir == ARD_IN)
            *tport = (int)p;
        b->port[p] =
            ard_create(d->ports[p].name, d->ports[p].dir, d->ports[p].size, d->ports[p].type);
        if (b->port[p] == NULL)
            return block_fail(ARDR_EXIT_PLUGIN, b);
    }
    if (trigger && *tport < 0)
        return ardi_fail(ARD_EOPTION, "--trigger '%s': the plugin has no IN port of that name",
                         trigger),
               SOLO_USAGE;
    return 0;
}

/* ard_init with the --ard options, readiness held back until the block's init is done; 0 or
 * the exit code. */
static int init_block(struct ardr_block *b, struct ardr_args *a)
{
    const struct ard_block_desc *d = b->pl.d;
    int rc = ardr_init_unready(a); /* readiness after init, not at attach */
    if (rc < 0)
        return block_fail(rc == ARD_EOPTION                      ? ARDR_EXIT_USAGE
                          : (rc == ARD_ETYPE || rc == ARD_EBUSY) ? ARDR_EXIT_SCHEME
                                                                 : ARDR_EXIT_SYS,
                          b);
    if (ardr_block_prepare(b) < 0 || ardr_block_init(b) < 0) {
        char why[512];
        snprintf(why, sizeof why, "%s", b->why[0] ? b->why : ard_errdetail());
        ardi_fail(ARD_EINVAL, "block '%s' (%s): %s", b->name, d->name, why);
        ardr_block_free(b);
        return ARDR_EXIT_INIT;
    }
    if (ardc_ready_release(&a->ready))
        (void)!ard_ready();
    return 0;
}

/* The schedule of a solo block: its period (0: on each packet of its trigger port tport),
 * the overruns counted, and where the block in a step is shown to the crash handler. */
struct solo_run {
    int tport;
    int64_t period;
    ard_period per;
    uint64_t overruns;
    struct ardr_block *_Atomic *current;
};

/* Steps the block until a signal, --ticks or a failure; the exit code. */
static int run_block(struct ardr_block *b, const struct ardr_args *o, struct solo_run *u)
{
    int code = 0;
    int tport = u->tport;
    while (!stop_signal && (o->ticks == 0 || (int64_t)atomic_load(&b->steps) < o->ticks)) {
        if (u->period) {
            int missed = ard_period_wait(&u->per);
            u->overruns += (uint64_t)(missed > 0 ? missed : 0);
        } else {
            int rc = ard_rec_timed(b->port[tport], b->bufs[tport], 100000000);
            if (rc == ARD_ETIMEDOUT || rc == ARD_EINTR)
                continue;
            if (rc < 0) {
                code = block_fail(ARDR_EXIT_SYS, b);
                break;
            }
            b->info[tport] = ard_port_info(b->port[tport]);
        }
        struct ardr_tick tick;
        ardr_tick_start(&tick, u->period);
        atomic_store_explicit(u->current, b, memory_order_relaxed);
        int failed = ardr_block_step(b, &tick, tport) < 0;
        atomic_store_explicit(u->current, NULL, memory_order_relaxed);
        if (failed) {
            /* alone, a failed block is the whole process: report and stop */
            ardi_fail(ARD_EINVAL, "block '%s' (%s) failed: %s", b->name, b->pl.d->name, b->why);
            atomic_store(&b->state, ARDR_FAILED);
            code = ARDR_EXIT_FAILED;
            break;
        }
    }
    return code;
}

/* Stop signals end the loop (the handler names a step that then hangs). */
static void catch_stop_signals(void)
{
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigaddset(&sa.sa_mask, SIGTERM);
    sigaddset(&sa.sa_mask, SIGINT);
    sigaddset(&sa.sa_mask, SIGHUP);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

/* Says why `ardrun --block` stops (the usage after a usage error); the exit code. */
static int block_said(int code)
{
    fprintf(stderr, "ardrun: %s\n", ard_errdetail());
    if (code != SOLO_USAGE)
        return code;
    fprintf(stderr, "(usage: ardrun --block PLUGIN.so [--name NAME] [--param K=V]... "
                    "[--rate HZ | --trigger PORT] [--ticks N] [--ard ...])\n");
    return ARDR_EXIT_USAGE;
}

/* The block of the command line, loaded, its ports created and initialised; 0 or the exit
 * code (with the detail). */
static int block_start(struct ardr_block *b, struct ardr_args *a, struct solo_run *u, int argc,
                       char **argv)
{
    int rc = ardr_block_new(b) < 0 ? ARDR_EXIT_SYS : parse_block_args(argc, argv, b, a);
    if (rc || a->done || (rc = load_block(b, a)) != 0)
        return rc;
    /* a crash, or a step that hangs after a stop signal, names the block */
    ardr_label(b, NULL);
    ardr_crash_init("ardrun: ");
    ardr_crash_thread(u->current);
    ardr_grace_init();
    if (ardr_block_params(b) < 0)
        return ARDR_EXIT_USAGE;
    if ((rc = create_ports(b, a->trigger, &u->tport)) != 0 || (rc = init_block(b, a)) != 0)
        return rc;
    u->period = a->rate > 0 ? (int64_t)(1e9 / a->rate + 0.5) : 0;
    if (u->period && ard_period_init(&u->per, u->period) < 0)
        return ARDR_EXIT_SYS;
    return 0;
}

int ardr_cmd_block(int argc, char **argv)
{
    static struct ardr_block blk;
    static struct ardr_block *_Atomic current;
    struct ardr_block *b = &blk;
    struct ardr_args a = {0};
    struct solo_run u = {.current = &current};
    int code = block_start(b, &a, &u, argc, argv);
    if (code || a.done) {
        ardr_args_free(&a);
        return code ? block_said(code) : 0;
    }
    catch_stop_signals();
    code = run_block(b, &a, &u);
    ardr_grace_end();
    if (code)
        fprintf(stderr, "ardrun: %s\n", ard_errdetail());
    uint64_t steps = atomic_load(&b->steps);
    fprintf(stderr, "ardrun: block '%s': steps %llu mean %lld ns max %lld ns overruns %llu\n",
            b->name, (unsigned long long)steps,
            (long long)(steps ? atomic_load(&b->sum_ns) / (int64_t)steps : 0),
            (long long)atomic_load(&b->max_ns), (unsigned long long)u.overruns);
    ardr_block_free(b);
    ard_fini();
    ardr_args_free(&a);
    return code;
}

static const char *ptype(enum ard_param_type t)
{
    return t == ARD_PARAM_I64    ? "i64"
           : t == ARD_PARAM_F64  ? "f64"
           : t == ARD_PARAM_BOOL ? "bool"
                                 : "str";
}

int ardr_cmd_describe(int argc, char **argv)
{
    struct ardr_args a = {
        .where = ARDR_W_DESCRIBE, .first = 2, .maxwords = 1, .unknown = "unknown argument '%s'"};
    int rc = ardr_args_parse(&ardr_optset, &a, argc, argv);
    bool form = rc == 0 && a.nwords == 1 && a.nlib == 1;
    ardr_args_free(&a);
    if (!form) {
        fprintf(stderr, "usage: ardrun --describe PLUGIN.so\n");
        return ARDR_EXIT_USAGE;
    }
    struct ardr_plugin pl;
    if (ardr_plugin_load(&pl, a.words[0], "ardrun --describe") < 0) {
        fprintf(stderr, "ardrun: %s\n", ard_errdetail());
        return ARDR_EXIT_PLUGIN;
    }
    const struct ard_block_desc *d = pl.d;
    printf("block %s version %s (block API %u)\n", d->name, d->version, d->api);
    for (uint32_t i = 0; i < d->nports; i++)
        printf("  port  %-16s %-3s %8zu  %s%s\n", d->ports[i].name,
               d->ports[i].dir == ARD_IN ? "in" : "out", d->ports[i].size,
               d->ports[i].type ? d->ports[i].type : "(opaque)",
               d->ports[i].flags & ARD_PORT_WHOLE ? "  whole" : "");
    for (uint32_t i = 0; i < d->nparams; i++)
        printf("  param %-16s %-4s default %-10s %s\n", d->params[i].name, ptype(d->params[i].type),
               d->params[i].def ? d->params[i].def : "(required)",
               d->params[i].doc ? d->params[i].doc : "");
    printf("  callbacks: init step close%s%s\n", d->start ? " start" : "", d->stop ? " stop" : "");
    ardr_plugin_unload(&pl);
    return 0;
}
