/* main.c - ardnet: command line, process set-up, signals, counters. */
#include "ardc_opt.h"
#include "ardc_ready.h"
#include "ardn.h"
#include "auto.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

static void usage(FILE *out)
{
    ardc_opt_usage(out, &ardn_optset, ARDN_W_CLI | ARDN_W_LIB);
}

int ardn_exit_code(int code)
{
    /* A size or type that differs from the connection's comes from the route file here. */
    return code == ARD_ETYPE ? ARDN_EXIT_USAGE : ardc_exit_code(code);
}

static int usage_error(const char *fmt, const char *a)
{
    fprintf(stderr, "ardnet: ");
    fprintf(stderr, fmt, a);
    fprintf(stderr, "\n(ardnet --help for usage)\n");
    return ARDN_EXIT_USAGE;
}

static struct ardn_route *routes;
static int nroutes;
static struct ardn_plan plan;

/* A local connection may be read by any number of routes, but written only once in the process
 * (it has one writer), and a route must not write its own input (a loop). */
static int check_local_names(void)
{
    for (int i = 0; i < nroutes; i++)
        for (int a = -1; a < routes[i].cfg.nout; a++) {
            const struct ardn_ep *x = a < 0 ? &routes[i].cfg.in : &routes[i].cfg.out[a];
            if (x->kind != ARDN_EP_LOCAL)
                continue;
            for (int j = i; j < nroutes; j++)
                for (int b = (j == i ? a + 1 : -1); b < routes[j].cfg.nout; b++) {
                    const struct ardn_ep *y = b < 0 ? &routes[j].cfg.in : &routes[j].cfg.out[b];
                    if (y->kind != ARDN_EP_LOCAL || strcmp(x->conn, y->conn) != 0)
                        continue;
                    bool twice = a >= 0 && b >= 0, loop = i == j && (a < 0) != (b < 0);
                    if (!twice && !loop)
                        continue;
                    return ardi_fail(ARD_EINVAL,
                                     "connection '%s' is %s (routes '%s' and '%s'); a "
                                     "connection has one writer, and a route must not write "
                                     "its own input",
                                     x->conn, twice ? "written twice" : "both input and output",
                                     routes[i].cfg.name, routes[j].cfg.name);
                }
        }
    return 0;
}

/* The command line into c (its routes into c->routes): 0, or the code with the detail. */
static int parse_args(int argc, char **argv, struct ardn_conf *c)
{
    int i = 1;
    int rc = ardc_opt_parse(&ardn_optset, ARDN_W_CLI, argc, argv, &i, c);
    if (rc == 0 && !c->stop && c->have_route)
        rc = ardn_conf_end_route(c);
    return rc;
}

/* --counters CONN: no route may write CONN or CONN.names (a connection has one writer). */
static int check_counters_name(void)
{
    char names[ARD_MAX_NAME + 8];
    snprintf(names, sizeof names, "%.*s.names", ARDN_COUNTERS_MAX_NAME, ardn_g.counters);
    for (int i = 0; i < nroutes; i++)
        for (int a = 0; a < routes[i].cfg.nout; a++) {
            const struct ardn_ep *x = &routes[i].cfg.out[a];
            if (x->kind == ARDN_EP_LOCAL &&
                (strcmp(x->conn, ardn_g.counters) == 0 || strcmp(x->conn, names) == 0)) {
                return ardi_fail(ARD_EINVAL,
                                 "connection '%s' is written by route '%s' and by --counters "
                                 "%s; a connection has one writer",
                                 x->conn, routes[i].cfg.name, ardn_g.counters);
            }
        }
    return 0;
}

/* --help, --version (then exit 0). */
static void print_stop(int stop)
{
    if (stop == ARDN_STOP_HELP)
        usage(stdout);
    else
        printf("ardnet (ardnet) %d.%d.%d\n", ARD_VERSION_MAJOR, ARD_VERSION_MINOR,
               ARD_VERSION_PATCH);
}

/* The command line, the route file and the process options of both (the command line's win):
 * 0, the exit code, or -1 for --help/--version (printed). */
static int read_options(int argc, char **argv, struct ardn_conf *cli)
{
    struct ardn_route cl;
    ardn_route_init(&cl);
    ardn_conf_init(cli);
    cli->route = &cl;
    int rc = parse_args(argc, argv, cli);
    cli->route = NULL; /* (cl ends here) */
    routes = cli->routes;
    nroutes = cli->nroutes;
    if (rc != 0)
        return usage_error("%s", ard_errdetail());
    if (cli->stop) {
        print_stop(cli->stop);
        return -1;
    }
    struct ardn_global file = {.dscp = -1, .sock_prio = -1, .ros_domain = -1};
    if (cli->config && (rc = ardn_config_load(cli->config, &routes, &nroutes, &file)) < 0) {
        fprintf(stderr, "%s\n", ard_errdetail()); /* (it starts with FILE:LINE:COLUMN) */
        return ARDN_EXIT_USAGE;
    }
    ardn_g = file; /* what the command line set wins over the file */
    ardn_global_merge(&ardn_g, &cli->g);
    return 0;
}

/* Options, the route file, and the routes' consistency: 0 or the exit code (or -1: --help). */
static int configure(int argc, char **argv, struct ardn_conf *cli)
{
    int rc = ard_init(&argc, argv);
    if (rc < 0) {
        fprintf(stderr, "ardnet: %s\n", ard_errdetail()[0] ? ard_errdetail() : ard_strerror(rc));
        return ardn_exit_code(rc);
    }
    if ((rc = read_options(argc, argv, cli)) != 0)
        return rc;
    if (ardn_g.counters[0] && (rc = check_counters_name()) < 0)
        return fprintf(stderr, "ardnet: %s\n", ard_errdetail()), ARDN_EXIT_USAGE;
    if (!cli->cat.enabled && ardn_auto_open(&cli->cat, NULL, 0) < 0) /* (--auto-* alone) */
        return usage_error("%s", ard_errdetail());
    if (nroutes == 0 && cli->cat.enabled)
        return 0;
    if (nroutes == 0 && cli->config)
        return usage_error("no route: the 'routes' list of %s is empty (and the command line "
                           "gives no --in/--out)",
                           cli->config);
    if (nroutes == 0)
        return usage_error("%s", "no route: give --in and --out, or --config FILE");
    if (check_local_names() < 0)
        return fprintf(stderr, "ardnet: %s\n", ard_errdetail()), ARDN_EXIT_USAGE;
    return 0;
}

/* --counters CONN: say which index of CONN's arrays is which route, destination and input. */
static void print_counters_index(void)
{
    for (int i = 0; i < plan.nroutes; i++)
        fprintf(stderr, "ardnet: counters %s: route %d '%s'\n", ardn_g.counters, i,
                plan.routes[i].cfg.name);
    for (int k = 0, n = 0; k < plan.ndests; k++)
        if (plan.dests[k].nroutes > 1)
            fprintf(stderr, "ardnet: counters %s: output %d '%s'\n", ardn_g.counters, n++,
                    plan.dests[k].text);
    for (int k = 0, n = 0; k < plan.ninputs; k++)
        if (plan.inputs[k].nroutes > 1)
            fprintf(stderr, "ardnet: counters %s: input %d '%s'\n", ardn_g.counters, n++,
                    plan.inputs[k].text);
}

/* The epoch, the realtime settings, then every route open and running: 0 or the exit code. */
static int start_routes(const struct arda_conf *cat)
{
    /* The epoch names this run of the sender: random, so that no clock step, restart or
     * stray sender can make it compare as older or newer than another (docs/wire.md). */
    if (getrandom(&ardn_g.epoch, sizeof ardn_g.epoch, 0) != (ssize_t)sizeof ardn_g.epoch) {
        fprintf(stderr, "ardnet: getrandom: %s\n", strerror(errno));
        return ARDN_EXIT_SYSTEM;
    }
    /* With --key: the key file is read and this run's subkey derived (from the epoch). */
    int rc = ardn_seal_open();
    if (rc < 0) {
        fprintf(stderr, "ardnet: %s\n", ard_errdetail());
        return ardn_exit_code(rc);
    }
    /* Before the threads exist: they inherit affinity and policy. */
    rc = ard_realtime(ardn_g.cpu[0] ? ardn_g.cpu : NULL, 0, ardn_g.prio);
    if (rc < 0) {
        fprintf(stderr, "ardnet: --cpu/--prio: %s\n", ard_errdetail());
        return ardn_exit_code(rc);
    }
    rc = ardn_auto_open(cat, routes, nroutes);
    if (rc < 0) {
        fprintf(stderr, "ardnet: %s\n", ard_errdetail());
        return ardn_exit_code(rc);
    }
    if (nroutes == 0)
        return ARDN_EXIT_OK; /* the catalog alone */
    rc = ardn_plan_open(&plan, routes, nroutes);
    if (rc == 0 && ardn_g.counters[0]) {
        rc = ardn_counters_open(ardn_g.counters, &plan);
        if (rc == 0)
            print_counters_index();
    }
    if (rc == 0)
        rc = ardn_plan_start(&plan);
    if (rc < 0) {
        fprintf(stderr, "ardnet: %s\n", ard_errdetail());
        return ardn_exit_code(rc);
    }
    return ARDN_EXIT_OK;
}

/* Report readiness, then take signals until SIGTERM/SIGINT (the routes never see them). */
static void serve(const struct ardc_ready *ready, const sigset_t *sigs)
{
    if (ardc_ready_release(ready)) {
        if (ard_ready() < 0)
            fprintf(stderr, "ardnet: readiness: %s\n", ard_errdetail());
    }
    /* The counters connection every 0.1 s, the stats file every second (and on SIGUSR1). */
    struct timespec now, stats_at;
    clock_gettime(CLOCK_MONOTONIC, &stats_at);
    for (;;) {
        struct timespec ts = {0, ardn_g.counters[0] ? 100000000L : 999999999L};
        int sig = sigtimedwait(sigs, NULL, &ts);
        if (sig == SIGTERM || sig == SIGINT)
            return;
        if (sig == SIGUSR1)
            ardn_counters_print(stderr, &plan);
        ardn_counters_publish(&plan, false);
        clock_gettime(CLOCK_MONOTONIC, &now);
        int64_t since =
            (int64_t)(now.tv_sec - stats_at.tv_sec) * 1000000000 + (now.tv_nsec - stats_at.tv_nsec);
        if (ardn_g.stats_file[0] && (sig == SIGUSR1 || since >= 999000000)) {
            ardn_counters_write_file(ardn_g.stats_file, &plan);
            stats_at = now;
        }
    }
}

/* Stop and join every route; after a clean run, print and write the final counters. */
static void stop_routes(bool report)
{
    atomic_store(&ardn_stop, true);
    ardn_plan_join(&plan);
    if (report) {
        ardn_counters_print(stderr, &plan);
        /* The last packet equals the text above: the threads are joined. */
        if (ardn_counters_publish(&plan, true) < 0)
            fprintf(stderr, "ardnet: --counters %s: %s\n", ardn_g.counters, ard_errdetail());
        if (ardn_g.stats_file[0] && ardn_counters_write_file(ardn_g.stats_file, &plan) < 0)
            fprintf(stderr, "ardnet: --stats-file %s: cannot write: %s\n", ardn_g.stats_file,
                    strerror(errno));
    }
    ardn_auto_close(&plan); /* (with the catalog's lines in --stats-file) */
    ardn_counters_close();
    if (plan.routes)
        ardn_plan_close(&plan);
    else /* (the plan failed before it took them) */
        for (int i = 0; i < nroutes; i++)
            ardn_route_close(&routes[i]);
    free(routes);
    ard_fini();
}

/* ardnet keygen FILE */
static int cmd_keygen(int argc, char **argv)
{
    if (argc != 3)
        return usage_error("%s", "usage: ardnet keygen FILE");
    int rc = ards_keygen(argv[2]);
    if (rc < 0) {
        fprintf(stderr, "ardnet: keygen: %s\n", ard_errdetail());
        return ardn_exit_code(rc);
    }
    return ARDN_EXIT_OK;
}

/* The signals the main thread takes (sigtimedwait), blocked before any thread starts. */
static void block_signals(sigset_t *sigs)
{
    sigemptyset(sigs);
    sigaddset(sigs, SIGTERM);
    sigaddset(sigs, SIGINT);
    sigaddset(sigs, SIGUSR1);
    sigaddset(sigs, SIGHUP);
    pthread_sigmask(SIG_BLOCK, sigs, NULL);
    signal(SIGPIPE, SIG_IGN);
}

/* The routes (and the catalog) of the command line, run until a signal ends them; readiness
 * is told (the held $ARD_READY_FD) once every route exists. */
static int cmd_routes(int argc, char **argv, const struct ardc_ready *ready)
{
    static struct ardn_conf cli; /* (the command line's options, read by the catalog) */
    int rc = configure(argc, argv, &cli);
    if (rc != 0)
        return rc < 0 ? ARDN_EXIT_OK : rc;
    sigset_t sigs;
    block_signals(&sigs);
    rc = start_routes(&cli.cat);
    if (rc == ARDN_EXIT_OK && cli.cat.enabled)
        ardn_auto_serve(&plan, ready, &sigs);
    else if (rc == ARDN_EXIT_OK)
        serve(ready, &sigs);
    stop_routes(rc == ARDN_EXIT_OK);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "keygen") == 0)
        return cmd_keygen(argc, argv);
    ardc_nofile_raise(); /* every route's connection and the catalog's keep a descriptor */
    /* ard_init would signal readiness before any route exists: hold it back until then. */
    struct ardc_ready ready;
    ardc_ready_hold(&ready);
    return cmd_routes(argc, argv, &ready);
}
