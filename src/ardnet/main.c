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

static const char usage_text[] =
    "usage: ardnet [OPTIONS] --in ENDPOINT --out ENDPOINT [--out ENDPOINT...] [--next ROUTE...]\n"
    "       ardnet [OPTIONS] --config FILE\n"
    "       ardnet --auto (--auto-peers HOST[:PORT],... | --auto-multicast GROUP:PORT --dev IF)\n"
    "\n"
    "Forward packets from one input endpoint to one or more outputs (bridge, multiplier,\n"
    "rate reducer). ENDPOINT is a local connection name, udp://HOST:PORT (send to) or, as\n"
    "input, udp://[ADDR]:PORT (listen on; udp://:PORT for any address), or a ROS 2 topic\n"
    "ros2:/TOPIC (DDS, when built with Cyclone DDS).\n"
    "\n"
    "Route (the command-line route; a YAML file has the same keys):\n"
    "  -i, --in ENDPOINT       input endpoint\n"
    "  -o, --out ENDPOINT      output endpoint (repeatable: a multiplier)\n"
    "  -s, --size N            packet size, when no local connection tells it\n"
    "  -t, --type DESC         type descriptor, e.g. \"f64[7] u32\" (with --size)\n"
    "      --conn-id N         connection id on the wire (default: hash of the local name)\n"
    "      --from HOST[:PORT]  accept datagrams only from this peer (UDP input)\n"
    "  -e, --every N           forward every N-th packet\n"
    "  -r, --max-rate HZ       forward at most HZ packets a second, always the newest\n"
    "      --max-datagram N    largest datagram sent, 512..65507 bytes (default 1472, IPv6\n"
    "                          1452: no IP fragmentation on Ethernet); larger packets are\n"
    "                          sent as fragments\n"
    "      --qos QOS           ros2: endpoints: best-effort (default), reliable,\n"
    "                          transient-local (reliable, kept for late readers)\n"
    "      --ros2-type TYPE    ros2: endpoints: the ROS 2 type, Name or package/msg/Name\n"
    "                          (default: ardnet_msgs/msg/ + the connection in CamelCase)\n"
    "      --name NAME         route name in counters and messages\n"
    "      --next              end this route, the options after it make another one\n"
    "Process:\n"
    "  -c, --config FILE       read routes (and the options below) from a YAML file\n"
    "      --bind ADDR         source address of all sockets\n"
    "      --dev IFACE         bind all sockets to a network interface (SO_BINDTODEVICE)\n"
    "      --dscp N            DSCP 0..63 of sent datagrams (e.g. 46 = EF)\n"
    "      --sock-prio N       SO_PRIORITY 0..6 of the sockets\n"
    "      --prio N            run with SCHED_FIFO priority N (1..99)\n"
    "      --cpu LIST          pin to CPUs, e.g. 1 or 0,2-3\n"
    "      --stats-file PATH   rewrite the counters to PATH every second and at exit\n"
    "      --counters CONN     write the counters to local connection CONN (and the\n"
    "                          route names to CONN.names) every 0.1 s and at exit\n"
    "      --ros-domain N      DDS domain of ros2: endpoints (default: ROS_DOMAIN_ID or 0)\n"
    "      --ard-domain NAME   domain of local connections (and the other --ard-* options)\n"
    "Catalog (docs/ardnet.md, \"Automatic: the catalog\"; with or without routes):\n"
    "      --auto              forward connections to and from the other hosts' ardnet --auto\n"
    "                          by name, on demand (what this host has and what it wants)\n"
    "      --auto-peers LIST   the other hosts, HOST[:PORT],... (only these are listened to)\n"
    "      --auto-multicast GROUP:PORT  find the other hosts by multicast on --dev IFACE\n"
    "      --auto-port N       UDP port of the catalog (default 7400)\n"
    "      --auto-limit N      most connections wanted from other hosts (default 256)\n"
    "  -h, --help              this text\n"
    "      --version           print the version\n"
    "Counters go to stderr on SIGUSR1 and at exit. SIGTERM/SIGINT exit cleanly.\n"
    "Exit codes: 0 clean exit, 100 usage or configuration error (also: ros2: endpoints in an\n"
    "ardnet built without ROS 2), 111 system error.\n";

int ardn_exit_code(int code)
{
    return code == ARD_EINVAL || code == ARD_EOPTION || code == ARD_ETYPE ? ARDN_EXIT_USAGE
                                                                          : ARDN_EXIT_SYSTEM;
}

static int usage_error(const char *fmt, const char *a)
{
    fprintf(stderr, "ardnet: ");
    fprintf(stderr, fmt, a);
    fprintf(stderr, "\n(ardnet --help for usage)\n");
    return ARDN_EXIT_USAGE;
}

/* Merge: what the command line set wins over the file. */
static void merge_globals(const struct ardn_global *file, const struct ardn_global *cli)
{
    ardn_g = *file;
    if (cli->bind[0])
        strcpy(ardn_g.bind, cli->bind);
    if (cli->dev[0])
        strcpy(ardn_g.dev, cli->dev);
    if (cli->dscp >= 0)
        ardn_g.dscp = cli->dscp;
    if (cli->sock_prio >= 0)
        ardn_g.sock_prio = cli->sock_prio;
    if (cli->prio > 0)
        ardn_g.prio = cli->prio;
    if (cli->cpu[0])
        strcpy(ardn_g.cpu, cli->cpu);
    if (cli->stats_file[0])
        strcpy(ardn_g.stats_file, cli->stats_file);
    if (cli->counters[0])
        strcpy(ardn_g.counters, cli->counters);
    if (cli->ros_domain >= 0)
        ardn_g.ros_domain = cli->ros_domain;
}

static int copy_opt(char *dst, size_t len, const char *val, const char *opt)
{
    if (strlen(val) >= len)
        return usage_error("%s: value too long", opt);
    strcpy(dst, val);
    return 0;
}

enum {
    OPT_CONN_ID = 256,
    OPT_FROM,
    OPT_NAME,
    OPT_BIND,
    OPT_DEV,
    OPT_DSCP,
    OPT_SOCK_PRIO,
    OPT_PRIO,
    OPT_CPU,
    OPT_STATS,
    OPT_COUNTERS,
    OPT_VERSION,
    OPT_MAX_DGRAM,
    OPT_NEXT,
    OPT_QOS,
    OPT_ROS_DOMAIN,
    OPT_ROS2_TYPE,
    OPT_AUTO,
    OPT_AUTO_PEERS,
    OPT_AUTO_MCAST,
    OPT_AUTO_PORT,
    OPT_AUTO_LIMIT
};

static const struct option long_opts[] = {
    {"in", required_argument, NULL, 'i'},
    {"out", required_argument, NULL, 'o'},
    {"size", required_argument, NULL, 's'},
    {"type", required_argument, NULL, 't'},
    {"conn-id", required_argument, NULL, OPT_CONN_ID},
    {"from", required_argument, NULL, OPT_FROM},
    {"every", required_argument, NULL, 'e'},
    {"max-rate", required_argument, NULL, 'r'},
    {"name", required_argument, NULL, OPT_NAME},
    {"max-datagram", required_argument, NULL, OPT_MAX_DGRAM},
    {"next", no_argument, NULL, OPT_NEXT},
    {"qos", required_argument, NULL, OPT_QOS},
    {"ros2-type", required_argument, NULL, OPT_ROS2_TYPE},
    {"ros-domain", required_argument, NULL, OPT_ROS_DOMAIN},
    {"config", required_argument, NULL, 'c'},
    {"bind", required_argument, NULL, OPT_BIND},
    {"dev", required_argument, NULL, OPT_DEV},
    {"dscp", required_argument, NULL, OPT_DSCP},
    {"sock-prio", required_argument, NULL, OPT_SOCK_PRIO},
    {"prio", required_argument, NULL, OPT_PRIO},
    {"cpu", required_argument, NULL, OPT_CPU},
    {"stats-file", required_argument, NULL, OPT_STATS},
    {"counters", required_argument, NULL, OPT_COUNTERS},
    {"auto", no_argument, NULL, OPT_AUTO},
    {"auto-peers", required_argument, NULL, OPT_AUTO_PEERS},
    {"auto-multicast", required_argument, NULL, OPT_AUTO_MCAST},
    {"auto-port", required_argument, NULL, OPT_AUTO_PORT},
    {"auto-limit", required_argument, NULL, OPT_AUTO_LIMIT},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, OPT_VERSION},
    {NULL, 0, NULL, 0},
};

static const char *route_key(int opt)
{
    switch (opt) {
    case 'i':
        return "in";
    case 'o':
        return "out";
    case 's':
        return "size";
    case 't':
        return "type";
    case 'e':
        return "every";
    case 'r':
        return "max-rate";
    case OPT_CONN_ID:
        return "conn-id";
    case OPT_FROM:
        return "from";
    case OPT_NAME:
        return "name";
    case OPT_MAX_DGRAM:
        return "max-datagram";
    case OPT_QOS:
        return "qos";
    case OPT_ROS2_TYPE:
        return "ros2-type";
    default:
        return NULL;
    }
}

static struct ardn_route *routes;
static int nroutes;
static struct ardn_plan plan;

/* A local connection may be read by any number of routes, but written only once in the process
 * (it has one writer), and a route must not write its own input (a loop). */
static int check_local_names(void)
{
    for (int i = 0; i < nroutes; i++)
        for (int a = -1; a < routes[i].nout; a++) {
            const struct ardn_ep *x = a < 0 ? &routes[i].in : &routes[i].out[a];
            if (x->kind != ARDN_EP_LOCAL)
                continue;
            for (int j = i; j < nroutes; j++)
                for (int b = (j == i ? a + 1 : -1); b < routes[j].nout; b++) {
                    const struct ardn_ep *y = b < 0 ? &routes[j].in : &routes[j].out[b];
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
                            routes[i].name, routes[j].name);
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
    uint64_t u;
    ardn_route_init(&cl);
    int opt;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, ":i:o:s:t:e:r:c:h", long_opts, NULL)) != -1) {
        const char *key = route_key(opt);
        if (key) {
            if (ardn_route_option(&cl, key, optarg) < 0)
                return usage_error("%s", ard_errdetail());
            have_cl = true;
            continue;
        }
        int rc = 0;
        switch (opt) {
        case OPT_NEXT:
            if (!have_cl)
                return usage_error("%s", "--next: no route before it (give --in and --out first)");
            if ((rc = push_route(&cl)) != 0)
                return rc;
            ardn_route_init(&cl);
            have_cl = false;
            break;
        case 'c':
            *config = optarg;
            break;
        case OPT_BIND:
            rc = copy_opt(cli->bind, sizeof cli->bind, optarg, "--bind");
            break;
        case OPT_DEV:
            rc = copy_opt(cli->dev, sizeof cli->dev, optarg, "--dev");
            break;
        case OPT_CPU:
            rc = copy_opt(cli->cpu, sizeof cli->cpu, optarg, "--cpu");
            break;
        case OPT_STATS:
            rc = copy_opt(cli->stats_file, sizeof cli->stats_file, optarg, "--stats-file");
            break;
        case OPT_ROS_DOMAIN:
            if (ardn_ros_domain_option(cli, optarg) < 0)
                return usage_error("--%s", ard_errdetail());
            break;
        case OPT_COUNTERS:
            if (ardn_counters_option(cli, optarg) < 0)
                return usage_error("--%s", ard_errdetail());
            break;
        case OPT_DSCP:
            if (ardn_parse_u64(optarg, 0, 63, &u) < 0)
                return usage_error("--dscp '%s': expected a number 0..63", optarg);
            cli->dscp = (int)u;
            break;
        case OPT_SOCK_PRIO:
            if (ardn_parse_u64(optarg, 0, 6, &u) < 0)
                return usage_error("--sock-prio '%s': expected a number 0..6", optarg);
            cli->sock_prio = (int)u;
            break;
        case OPT_PRIO:
            if (ardn_parse_u64(optarg, 1, 99, &u) < 0)
                return usage_error("--prio '%s': expected a number 1..99", optarg);
            cli->prio = (int)u;
            break;
        case OPT_AUTO:
        case OPT_AUTO_PEERS:
        case OPT_AUTO_MCAST:
        case OPT_AUTO_PORT:
        case OPT_AUTO_LIMIT: {
            const char *n = NULL;
            for (const struct option *o = long_opts; o->name && !n; o++)
                n = o->val == opt ? o->name : NULL;
            if (ardn_auto_option(n, optarg) < 0)
                return usage_error("%s", ard_errdetail());
            break;
        }
        case 'h':
            fputs(usage_text, stdout);
            exit(0);
        case OPT_VERSION:
            printf("ardnet (ardnet) %d.%d.%d\n", ARD_VERSION_MAJOR, ARD_VERSION_MINOR,
                   ARD_VERSION_PATCH);
            exit(0);
        case ':':
            return usage_error("option '%s' needs a value", argv[optind - 1]);
        default:
            return usage_error("unknown option '%s'", argv[optind - 1]);
        }
        if (rc)
            return rc;
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
        for (int a = 0; a < routes[i].nout; a++) {
            const struct ardn_ep *x = &routes[i].out[a];
            if (x->kind == ARDN_EP_LOCAL &&
                (strcmp(x->conn, ardn_g.counters) == 0 || strcmp(x->conn, names) == 0)) {
                fprintf(stderr,
                        "ardnet: connection '%s' is written by route '%s' and by --counters %s; a "
                        "connection has one writer\n",
                        x->conn, routes[i].name, ardn_g.counters);
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
    merge_globals(&file, &cli);
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
                plan.routes[i].name);
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
    /* Before the threads exist: they inherit affinity and policy. */
    int rc = ard_realtime(ardn_g.cpu[0] ? ardn_g.cpu : NULL, 0, ardn_g.prio);
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
    /* ard_init would signal readiness before any route exists: hold it back until then. */
    char *ready_fd = getenv("ARD_READY_FD");
    ready_fd = ready_fd ? strdup(ready_fd) : NULL;
    unsetenv("ARD_READY_FD");

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
