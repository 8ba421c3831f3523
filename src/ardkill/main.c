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
               "  -g, --grace SECONDS     time between SIGTERM and SIGKILL (default 2)\n"
               "  -e, --rsh COMMAND       transport to other hosts (default: the one recorded\n"
               "                          at start)\n"
               "  -u, --unlink-domain     also remove the domain's shared memory (implied\n"
               "                          without PATH)\n"
               "  -q, --quiet             print errors only\n"
               "  -h, --help              this text\n"
               "exit codes: 0 stopped (or nothing was running), 1 a process survived,\n"
               "            2 a host was unreachable, 100 usage, 111 system error\n");
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"domain", required_argument, NULL, 'd'},
        {"grace", required_argument, NULL, 'g'},
        {"rsh", required_argument, NULL, 'e'},
        {"unlink-domain", no_argument, NULL, 'u'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {"as-host", required_argument, NULL, 'A'},
        {"visited", required_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    ardb_main_init();
    struct ak_opts o = {.grace_ns = 2000000000LL};
    int c;
    while ((c = getopt_long(argc, argv, "d:g:e:uqh", longopts, NULL)) != -1) {
        switch (c) {
        case 'd':
            o.domain = optarg;
            break;
        case 'g':
            if (ardb_opt_seconds("ardkill", "--grace", optarg, true, 3600, &o.grace_ns) < 0)
                return AK_USAGE;
            break;
        case 'e':
            o.rsh = optarg;
            break;
        case 'u':
            o.unlink = true;
            break;
        case 'q':
            o.quiet = true;
            break;
        case 'h':
            usage(stdout);
            return AK_OK;
        case 'A': /* host label given by the ardkill that called us through the transport */
            if (ardb_check_host("--as-host", optarg) < 0) {
                fprintf(stderr, "ardkill: %s\n", ardb_err());
                return AK_USAGE;
            }
            setenv("ARD_HOST", optarg, 1);
            break;
        case 'V':
            o.visited = optarg;
            break;
        default:
            usage(stderr);
            return AK_USAGE;
        }
    }
    if (!(o.domain = ardb_opt_domain("ardkill", o.domain)))
        return AK_USAGE;
    for (int i = optind; i < argc; i++)
        if (ardb_check_path(argv[i]) < 0) {
            fprintf(stderr, "ardkill: %s\n", ardb_err());
            return AK_USAGE;
        }
    struct ardb_books b;
    if (ardb_open(&b, o.domain) < 0) {
        fprintf(stderr, "ardkill: %s\n", ardb_err());
        return AK_SYS;
    }
    int rc = AK_OK;
    bool all = optind == argc;
    if (all) {
        o.unlink = true;
        rc = ak_stop(&b, &o, NULL);
    } else {
        for (int i = optind; i < argc; i++) {
            int r = ak_stop(&b, &o, argv[i]);
            rc = r > rc ? r : rc;
        }
    }
    if (o.unlink) {
        char host[ARDB_MAX_HOST];
        ardb_host_label(host, sizeof host);
        int n = ard_domain_unlink(o.domain);
        if (n < 0) {
            fprintf(stderr, "ardkill: removing shared memory of domain %s on %s: %s\n", o.domain,
                    host, ard_errdetail());
            rc = rc > AK_SYS ? rc : AK_SYS;
        } else if (!o.quiet) {
            printf("ardkill: removed %d shared memory object%s of domain %s on %s\n", n,
                   n == 1 ? "" : "s", o.domain, host);
        }
    }
    if (all) {
        int r = ak_sweep_hosts(&b, &o);
        rc = r > rc ? r : rc;
    }
    ardb_close(&b);
    return rc;
}
