/*
 * ardkill - stop what ardstart started: a subsystem and everything below it, on every host,
 * or with no name the whole system of the domain. Options and exit codes: docs/ardkill.md.
 */
#include "ardkill.h"

#include "ardnet.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f, "usage: ardkill [OPTIONS] [PATH...]\n"
               "  Stops PATH and everything below it on every host, in reverse start order:\n"
               "  SIGTERM to each process group, SIGKILL after the grace time. Without PATH:\n"
               "  everything of the domain, and its shared memory is removed on every host.\n"
               "options:\n"
               "  -d, --domain NAME       domain (default: $ARD_DOMAIN, else \"default\")\n"
               "  -g, --grace SECONDS     time between SIGTERM and SIGKILL (default 2;\n"
               "                          --grace 0.5 and --grace=0.5 alike)\n"
               "  -e, --rsh COMMAND       transport to other hosts (default: the one recorded\n"
               "                          at start)\n"
               "  -u, --unlink-domain     also remove the domain's shared memory (implied\n"
               "                          without PATH)\n"
               "  -q, --quiet             print errors only\n"
               "  -h, --help              this text\n"
               "      --version           print the version\n"
               "exit codes: 0 stopped (or nothing was running), 1 a process survived,\n"
               "            2 a host was unreachable, 100 usage, 111 system error (also:\n"
               "            shared memory kept because it is still attached)\n");
}

enum mode { M_STOP, M_HELP, M_VERSION };

/* Options into o; the paths to stop start at *first. -1 after printing why. */
static int parse_args(int argc, char **argv, struct ak_opts *o, enum mode *mode, int *first)
{
    enum { OPT_VERSION = 256 };
    static const struct option longopts[] = {
        {"domain", required_argument, NULL, 'd'},    {"grace", required_argument, NULL, 'g'},
        {"rsh", required_argument, NULL, 'e'},       {"unlink-domain", no_argument, NULL, 'u'},
        {"quiet", no_argument, NULL, 'q'},           {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, OPT_VERSION}, {"as-host", required_argument, NULL, 'A'},
        {"visited", required_argument, NULL, 'V'},   {NULL, 0, NULL, 0},
    };
    *mode = M_STOP;
    int c;
    while ((c = getopt_long(argc, argv, "d:g:e:uqh", longopts, NULL)) != -1) {
        switch (c) {
        case 'd':
            o->domain = optarg;
            break;
        case 'g':
            if (ardb_opt_seconds("--grace", optarg, true, 3600, &o->grace_ns) < 0) {
                fprintf(stderr, "ardkill: %s\n", ard_errdetail());
                return -1;
            }
            break;
        case 'e':
            o->rsh = optarg;
            break;
        case 'u':
            o->unlink = true;
            break;
        case 'q':
            o->quiet = true;
            break;
        case 'h':
            *mode = M_HELP;
            return 0;
        case OPT_VERSION:
            *mode = M_VERSION;
            return 0;
        case 'A': /* host label given by the ardkill that called us through the transport */
            if (ardb_check_host("--as-host", optarg) < 0) {
                fprintf(stderr, "ardkill: %s\n", ard_errdetail());
                return -1;
            }
            setenv("ARD_HOST", optarg, 1);
            break;
        case 'V':
            o->visited = optarg;
            break;
        default:
            usage(stderr);
            return -1;
        }
    }
    if (ardb_opt_domain(o->domain, &o->domain) < 0) {
        fprintf(stderr, "ardkill: %s\n", ard_errdetail());
        return -1;
    }
    for (int i = optind; i < argc; i++)
        if (ardb_check_path(argv[i]) < 0) {
            fprintf(stderr, "ardkill: %s\n", ard_errdetail());
            return -1;
        }
    *first = optind;
    return 0;
}

struct unlink_count {
    const struct ak_opts *o;
    const char *host;
    int removed, kept, failed;
};

static int unlink_one(const char *name, void *arg)
{
    struct unlink_count *u = arg;
    int rc = ard_conn_unlink(u->o->domain, name);
    if (rc == 0) {
        u->removed++;
    } else if (rc == ARD_EBUSY) {
        /* Still attached (a block outside the books, a tool watching it): removing it would
         * split that process from every later one. Kept, and said so. */
        u->kept++;
        fprintf(stderr, "ardkill: kept shared memory '%s' of domain %s on %s: %s\n", name,
                u->o->domain, u->host, ard_errdetail());
    } else if (rc != ARD_ENOENT) { /* ENOENT: removed meanwhile */
        u->failed++;
        fprintf(stderr, "ardkill: removing shared memory '%s' of domain %s on %s: %s\n", name,
                u->o->domain, u->host, ard_errdetail());
    }
    return 0;
}

/* Remove the domain's shared-memory objects here, one by one, so that each refusal (an
 * object still attached) is named. Returns an exit code. */
static int unlink_domain(const struct ak_opts *o)
{
    char host[ARDB_MAX_HOST];
    ardb_host_label(host, sizeof host);
    struct unlink_count u = {o, host, 0, 0, 0};
    int n = ard_conn_list(o->domain, unlink_one, &u);
    if (n < 0) {
        fprintf(stderr, "ardkill: removing shared memory of domain %s on %s: %s\n", o->domain, host,
                ard_errdetail());
        return AK_SYS;
    }
    if (!o->quiet)
        printf("ardkill: removed %d shared memory object%s of domain %s on %s%s\n", u.removed,
               u.removed == 1 ? "" : "s", o->domain, host,
               u.kept ? " (others kept: still attached)" : "");
    return u.kept || u.failed ? AK_SYS : AK_OK;
}

static int worst(int a, int b)
{
    return a > b ? a : b;
}

static int cmd_stop(struct ak_opts *o, char **paths, int npaths)
{
    struct ardb_books b;
    /* Books that do not exist hold nothing to stop: none are created for a domain that
     * never had any (ardkill -d typo). */
    if (ardb_open_existing(&b, o->domain) < 0) {
        fprintf(stderr, "ardkill: %s\n", ard_errdetail());
        return AK_SYS;
    }
    int rc = AK_OK;
    bool all = npaths == 0;
    if (all) {
        o->unlink = true;
        o->all = true;
        rc = ak_stop(&b, o, NULL);
    } else {
        for (int i = 0; i < npaths; i++)
            rc = worst(rc, ak_stop(&b, o, paths[i]));
    }
    /* The whole domain: the other hosts first, so that this host's memory goes last, when
     * nothing anywhere is left running. */
    if (all)
        rc = worst(rc, ak_sweep_hosts(&b, o));
    if (o->unlink)
        rc = worst(rc, unlink_domain(o));
    ardb_close(&b);
    return rc;
}

int main(int argc, char **argv)
{
    ardb_main_init();
    struct ak_opts o = {.grace_ns = 2000000000LL};
    enum mode mode;
    int first;
    if (parse_args(argc, argv, &o, &mode, &first) < 0)
        return AK_USAGE;
    switch (mode) {
    case M_HELP:
        usage(stdout);
        return AK_OK;
    case M_VERSION:
        printf("ardkill (ardnet) %s\n", ARD_VERSION);
        return AK_OK;
    case M_STOP:
        break;
    }
    return cmd_stop(&o, argv + first, argc - first);
}
