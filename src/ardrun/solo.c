/*
 * solo.c - one plugin as its own process: `ardrun --block PLUGIN.so ...` is an ordinary
 * block (ports named as in the plugin, wired with --ard, readiness by ard_init), so a block
 * moves between a group and its own process by configuration only.
 */
#include "ardrun.h"

#include <signal.h>
#include <errno.h>
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

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "ardrun: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(usage: ardrun --block PLUGIN.so [--name NAME] [--param K=V]... "
                    "[--rate HZ | --trigger PORT] [--ticks N] [--ard ...])\n");
    return ARDR_EXIT_USAGE;
}

/* The options of `ardrun --block` (the parameters go into the block). */
struct solo_opts {
    const char *plugin, *trigger, *name;
    double rate;
    int64_t ticks;
};

/* --param NAME=VALUE into b's parameters; 0 or the usage error. */
static int take_param(struct ardr_block *b, const char *kv)
{
    const char *eq = strchr(kv, '=');
    if (eq == NULL || eq == kv || (size_t)(eq - kv) > ARDR_NAME_MAX ||
        strlen(eq + 1) > ARDR_STR_MAX)
        return usage_error("--param '%s': not NAME=VALUE", kv);
    if (b->nparams == ARD_BLOCK_MAX_PARAMS)
        return usage_error("too many --param (%s)", "64");
    for (int k = 0; k < b->nparams; k++)
        if (!strncmp(b->params[k].key, kv, (size_t)(eq - kv)) && b->params[k].key[eq - kv] == '\0')
            return usage_error("--param '%s': given twice", kv);
    snprintf(b->params[b->nparams].key, sizeof b->params[0].key, "%.*s", (int)(eq - kv), kv);
    snprintf(b->params[b->nparams].val, sizeof b->params[0].val, "%s", eq + 1);
    b->nparams++;
    return 0;
}

/* The command line into o and b; the --ard options stay in argv (*argc of them, for
 * ard_init). 0 or the usage error. */
static int parse_block_args(int *argc, char **argv, struct ardr_block *b, struct solo_opts *o)
{
    int n = 1;
    for (int i = 1; i < *argc; i++) {
        const char *a = argv[i];
        bool has = i + 1 < *argc;
        if (!strcmp(a, "--block") && has) {
            o->plugin = argv[++i];
        } else if (!strcmp(a, "--name") && has) {
            o->name = argv[++i];
        } else if (!strcmp(a, "--rate") && has) {
            char *end;
            o->rate = strtod(argv[++i], &end);
            if (*end || !(o->rate >= ARDR_HZ_MIN && o->rate <= ARDR_HZ_MAX))
                return usage_error("--rate '%s': not a rate in Hz (0.001..100000)", argv[i]);
        } else if (!strcmp(a, "--trigger") && has) {
            o->trigger = argv[++i];
        } else if (!strcmp(a, "--ticks") && has) {
            char *end;
            errno = 0;
            o->ticks = strtoll(argv[++i], &end, 10);
            if (*end || errno || o->ticks < 1)
                return usage_error("--ticks '%s': not a count >= 1", argv[i]);
        } else if (!strcmp(a, "--param") && has) {
            int rc = take_param(b, argv[++i]);
            if (rc)
                return rc;
        } else if (!strcmp(a, "--")) {
            break;
        } else if (!strncmp(a, "--ard", 5)) {
            argv[n++] = argv[i]; /* the library's, applied by ard_init */
            if (!strchr(a, '=') && has && strcmp(a, "--ard-lock") && strcmp(a, "--ard-help") &&
                strcmp(a, "--ard-allow-foreign"))
                argv[n++] = argv[++i];
        } else {
            return usage_error("unknown or incomplete argument '%s'", a);
        }
    }
    argv[n] = NULL;
    *argc = n;
    if (o->plugin == NULL)
        return usage_error("%s", "--block needs a plugin file");
    if ((o->rate > 0) == (o->trigger != NULL))
        return usage_error("%s", "give exactly one of --rate HZ and --trigger PORT");
    return 0;
}

/* Loads the plugin and allocates the block under its name; 0 or the exit code. */
static int load_block(struct ardr_block *b, const struct solo_opts *o)
{
    static char path[4096];
    ardr_plugin_path(path, sizeof path, o->plugin, NULL);
    if (ardr_plugin_load(&b->pl, path, "ardrun --block") < 0) {
        fprintf(stderr, "ardrun: %s\n", ard_errdetail());
        return ARDR_EXIT_PLUGIN;
    }
    if (ardr_block_alloc(b) < 0) {
        fprintf(stderr, "ardrun: %s\n", ard_errdetail());
        return ARDR_EXIT_SYS;
    }
    snprintf(b->name, sizeof b->name, "%s", o->name ? o->name : b->pl.d->name);
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
        if (b->port[p] == NULL) {
            fprintf(stderr, "ardrun: block '%s': %s\n", b->name, ard_errdetail());
            return ARDR_EXIT_PLUGIN;
        }
    }
    if (trigger && *tport < 0)
        return usage_error("--trigger '%s': the plugin has no IN port of that name", trigger);
    return 0;
}

/* ard_init with the --ard options, readiness held back until the block's init is done; 0 or
 * the exit code. */
static int init_block(struct ardr_block *b, int argc, char **argv)
{
    const struct ard_block_desc *d = b->pl.d;
    /* readiness after init, not at attach */
    char *ready = getenv("ARD_READY_FD");
    char readyfd[32] = "";
    if (ready) {
        snprintf(readyfd, sizeof readyfd, "%s", ready);
        unsetenv("ARD_READY_FD");
    }
    int rc = ard_init(&argc, argv);
    if (rc < 0) {
        fprintf(stderr, "ardrun: block '%s': %s\n", b->name, ard_errdetail());
        return rc == ARD_EOPTION                      ? ARDR_EXIT_USAGE
               : (rc == ARD_ETYPE || rc == ARD_EBUSY) ? ARDR_EXIT_SCHEME
                                                      : ARDR_EXIT_SYS;
    }
    if (argc > 1)
        return usage_error("unknown argument '%s'", argv[1]);
    if (ardr_block_prepare(b) < 0 || ardr_block_init(b) < 0) {
        fprintf(stderr, "ardrun: block '%s' (%s): %s\n", b->name, d->name,
                b->why[0] ? b->why : ard_errdetail());
        ardr_block_free(b);
        return ARDR_EXIT_INIT;
    }
    if (readyfd[0]) {
        setenv("ARD_READY_FD", readyfd, 1);
        (void)!ard_ready();
    }
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
static int run_block(struct ardr_block *b, const struct solo_opts *o, struct solo_run *u)
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
                fprintf(stderr, "ardrun: block '%s': %s\n", b->name, ard_errdetail());
                code = ARDR_EXIT_SYS;
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
            fprintf(stderr, "ardrun: block '%s' (%s) failed: %s\n", b->name, b->pl.d->name, b->why);
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

int ardr_cmd_block(int argc, char **argv)
{
    static struct ardr_block blk;
    struct ardr_block *b = &blk;
    if (ardr_block_new(b) < 0) {
        fprintf(stderr, "ardrun: %s\n", ard_errdetail());
        return ARDR_EXIT_SYS;
    }
    struct solo_opts o = {0};
    int rc = parse_block_args(&argc, argv, b, &o);
    if (rc == 0)
        rc = load_block(b, &o);
    if (rc)
        return rc;
    /* a crash, or a step that hangs after a stop signal, names the block */
    static struct ardr_block *_Atomic current;
    ardr_label(b, NULL);
    ardr_crash_init("ardrun: ");
    ardr_crash_thread(&current);
    ardr_grace_init();
    if (ardr_block_params(b) < 0) {
        fprintf(stderr, "ardrun: %s\n", ard_errdetail());
        return ARDR_EXIT_USAGE;
    }
    struct solo_run u = {.current = &current};
    if ((rc = create_ports(b, o.trigger, &u.tport)) != 0 || (rc = init_block(b, argc, argv)) != 0)
        return rc;
    catch_stop_signals();
    u.period = o.rate > 0 ? (int64_t)(1e9 / o.rate + 0.5) : 0;
    if (u.period && ard_period_init(&u.per, u.period) < 0)
        return ARDR_EXIT_SYS;
    int code = run_block(b, &o, &u);
    ardr_grace_end();
    uint64_t steps = atomic_load(&b->steps);
    fprintf(stderr, "ardrun: block '%s': steps %llu mean %lld ns max %lld ns overruns %llu\n",
            b->name, (unsigned long long)steps,
            (long long)(steps ? atomic_load(&b->sum_ns) / (int64_t)steps : 0),
            (long long)atomic_load(&b->max_ns), (unsigned long long)u.overruns);
    ardr_block_free(b);
    ard_fini();
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
    if (argc != 3) {
        fprintf(stderr, "usage: ardrun --describe PLUGIN.so\n");
        return ARDR_EXIT_USAGE;
    }
    struct ardr_plugin pl;
    if (ardr_plugin_load(&pl, argv[2], "ardrun --describe") < 0) {
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
