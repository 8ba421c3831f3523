/* main.c - ardnet: command line, process set-up, signals, counters. */
#include "ardn.h"
#include "auto.h"

#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

static const char usage_head[] =
    "usage: ardnet [OPTIONS] --in ENDPOINT --out ENDPOINT [--out ENDPOINT...] [--next ROUTE...]\n"
    "       ardnet [OPTIONS] --config FILE\n"
    "       ardnet --auto (--auto-peers HOST[:PORT],... | --auto-multicast GROUP:PORT --dev IF)\n"
    "       ardnet keygen FILE   (write a new key for --key, mode 0600)\n"
    "\n"
    "Forward packets from one input endpoint to one or more outputs (bridge, multiplier,\n"
    "rate reducer). ENDPOINT is a local connection name, udp://HOST:PORT (send to) or, as\n"
    "input, udp://[ADDR]:PORT (listen on; udp://:PORT for any address), or a ROS 2 topic\n"
    "ros2:/TOPIC (DDS, when built with Cyclone DDS).\n"
    "\n"
    "Route (the command-line route; a YAML file has the same keys):\n";
static const char usage_tail[] =
    "Counters go to stderr on SIGUSR1 and at exit. SIGTERM/SIGINT exit cleanly.\n"
    "Exit codes: 0 clean exit, 100 usage or configuration error (also: ros2: endpoints in an\n"
    "ardnet built without ROS 2), 111 system error.\n";

static void usage(FILE *out)
{
    fputs(usage_head, out);
    ardn_usage_options(out, true);
    fputs("Process:\n", out);
    ardn_usage_options(out, false);
    fputs(usage_tail, out);
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

/* getopt's view of the table: an option's val is 256 + its index (its letter for -LETTER). */
static struct option long_opts[64];
static char short_opts[64];

static void getopt_tables(void)
{
    int n = 0, k = 0;
    short_opts[k++] = ':';
    for (int i = 0; i < ardn_nopts && n < (int)(sizeof long_opts / sizeof long_opts[0]) - 1; i++) {
        const struct ardn_opt *o = &ardn_opts[i];
        if (o->kind == ARDN_OPT_LIB)
            continue; /* ard_init took it */
        long_opts[n++] =
            (struct option){o->name, o->arg ? required_argument : no_argument, NULL, 256 + i};
        if (o->letter && k < (int)sizeof short_opts - 3) {
            short_opts[k++] = o->letter;
            if (o->arg)
                short_opts[k++] = ':';
        }
    }
    long_opts[n] = (struct option){NULL, 0, NULL, 0};
    short_opts[k] = '\0';
}

/* The table entry of getopt's answer, NULL for '?' and ':'. */
static const struct ardn_opt *opt_of(int opt)
{
    if (opt >= 256 && opt < 256 + ardn_nopts)
        return &ardn_opts[opt - 256];
    for (int i = 0; opt > 0 && opt < 256 && i < ardn_nopts; i++)
        if (ardn_opts[i].letter == opt)
            return &ardn_opts[i];
    return NULL;
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
                    fprintf(stderr,
                            "ardnet: connection '%s' is %s (routes '%s' and '%s'); a "
                            "connection has one writer, and a route must not write its own "
                            "input\n",
                            x->conn, twice ? "written twice" : "both input and output",
                            routes[i].cfg.name, routes[j].cfg.name);
                    return ARDN_EXIT_USAGE;
                }
        }
    return 0;
}

/* A complete command-line route joins the list. */
static int push_route(struct ardn_route *cl)
{
    if (ardn_route_finish(cl) < 0)
        return usage_error("%s", ard_errdetail());
    struct ardn_route *n = realloc(routes, (size_t)(nroutes + 1) * sizeof *routes);
    if (!n)
        return usage_error("%s", "out of memory");
    routes = n;
    routes[nroutes++] = *cl;
    return 0;
}

static int parse_args(int argc, char **argv, struct ardn_global *cli, const char **config)
{
    struct ardn_route cl;
    bool have_cl = false;
    ardn_route_init(&cl);
    getopt_tables();
    int opt;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, short_opts, long_opts, NULL)) != -1) {
        const struct ardn_opt *o = opt_of(opt);
        if (opt == ':')
            return usage_error("option '%s' needs a value", argv[optind - 1]);
        if (!o)
            return usage_error("unknown option '%s'", argv[optind - 1]);
        int rc = 0;
        if (o->kind == ARDN_OPT_ROUTE) {
            if (ardn_route_option(&cl, o->name, optarg) < 0)
                return usage_error("%s", ard_errdetail());
            have_cl = true;
        } else if (ardn_opt_is_global(o)) {
            if (ardn_global_option(cli, o, optarg) < 0)
                return usage_error("--%s", ard_errdetail());
        } else if (!strcmp(o->name, "next")) {
            if (!have_cl)
                return usage_error("%s", "--next: no route before it (give --in and --out first)");
            if ((rc = push_route(&cl)) != 0)
                return rc;
            ardn_route_init(&cl);
            have_cl = false;
        } else if (!strcmp(o->name, "config")) {
            *config = optarg;
        } else if (!strncmp(o->name, "auto", 4)) {
            if (ardn_auto_option(o->name, optarg) < 0)
                return usage_error("%s", ard_errdetail());
        } else if (!strcmp(o->name, "help")) {
            usage(stdout);
            exit(0);
        } else if (!strcmp(o->name, "version")) {
            printf("ardnet (ardnet) %d.%d.%d\n", ARD_VERSION_MAJOR, ARD_VERSION_MINOR,
                   ARD_VERSION_PATCH);
            exit(0);
        }
    }
    if (optind < argc)
        return usage_error("unexpected argument '%s'", argv[optind]);
    return have_cl ? push_route(&cl) : 0;
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
                fprintf(stderr,
                        "ardnet: connection '%s' is written by route '%s' and by --counters %s; a "
                        "connection has one writer\n",
                        x->conn, routes[i].cfg.name, ardn_g.counters);
                return ARDN_EXIT_USAGE;
            }
        }
    return 0;
}

/* Options, the route file, and the routes' consistency: 0 or the exit code. */
static int configure(int argc, char **argv)
{
    int rc = ard_init(&argc, argv);
    if (rc < 0) {
        fprintf(stderr, "ardnet: %s\n", ard_errdetail()[0] ? ard_errdetail() : ard_strerror(rc));
        return ardn_exit_code(rc);
    }
    struct ardn_global cli = {.dscp = -1, .sock_prio = -1, .ros_domain = -1}, file = cli;
    const char *config = NULL;
    if ((rc = parse_args(argc, argv, &cli, &config)) != 0)
        return rc;
    if (config && ardn_config_load(config, &routes, &nroutes, &file) < 0)
        return ARDN_EXIT_USAGE;
    ardn_g = file; /* what the command line set wins over the file */
    ardn_global_merge(&ardn_g, &cli);
    if (ardn_g.counters[0] && (rc = check_counters_name()) != 0)
        return rc;
    if (!ardn_auto_enabled() && ardn_auto_open(NULL, 0) < 0) /* (--auto-* without --auto) */
        return usage_error("%s", ard_errdetail());
    if (nroutes == 0 && ardn_auto_enabled())
        return 0;
    if (nroutes == 0 && config)
        return usage_error("no route: the 'routes' list of %s is empty (and the command line "
                           "gives no --in/--out)",
                           config);
    if (nroutes == 0)
        return usage_error("%s", "no route: give --in and --out, or --config FILE");
    return check_local_names();
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
static int start_routes(void)
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
    rc = ardn_auto_open(routes, nroutes);
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
static void serve(const char *ready_fd, const sigset_t *sigs)
{
    if (ready_fd) {
        setenv("ARD_READY_FD", ready_fd, 1);
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

int main(int argc, char **argv)
{
    ardc_nofile_raise(); /* every route's connection and the catalog's keep a descriptor */
    /* ard_init would signal readiness before any route exists: hold it back until then. */
    char *ready_fd = getenv("ARD_READY_FD");
    ready_fd = ready_fd ? strdup(ready_fd) : NULL;
    unsetenv("ARD_READY_FD");

    if (argc >= 2 && strcmp(argv[1], "keygen") == 0) {
        if (argc != 3)
            return usage_error("%s", "usage: ardnet keygen FILE");
        int krc = ards_keygen(argv[2]);
        if (krc < 0) {
            fprintf(stderr, "ardnet: keygen: %s\n", ard_errdetail());
            return free(ready_fd), ardn_exit_code(krc);
        }
        return free(ready_fd), ARDN_EXIT_OK;
    }
    int rc = configure(argc, argv);
    if (rc != 0)
        return free(ready_fd), rc;
    /* Signals are taken by the main thread only (sigtimedwait), blocked before any thread. */
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGUSR1);
    sigaddset(&sigs, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    signal(SIGPIPE, SIG_IGN);

    rc = start_routes();
    if (rc == ARDN_EXIT_OK && ardn_auto_enabled())
        ardn_auto_serve(&plan, ready_fd, &sigs);
    else if (rc == ARDN_EXIT_OK)
        serve(ready_fd, &sigs);
    stop_routes(rc == ARDN_EXIT_OK);
    free(ready_fd);
    return rc;
}
