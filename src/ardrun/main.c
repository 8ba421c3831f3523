/*
 * ardrun - the group runner: many block plugins in SCHED_FIFO threads of one process
 * (`ardrun GROUP.yaml`), one plugin as its own process (`ardrun --block PLUGIN.so`), run-time
 * lifecycle commands (`ardrun ctl GROUP stop BLOCK`), and a new plugin from the template
 * (`ardrun --new NAME`). docs/ardrun.md is the manual.
 */
#include "ardrun.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: ardrun [--ticks N] [--strict] [--ard-domain D] [--ard-lock] GROUP.yaml\n"
    "       ardrun --block PLUGIN.so [--name NAME] [--param K=V]... [--rate HZ | --trigger "
    "PORT]\n"
    "              [--ticks N] [--ard PORT=CONNECTION]... [--ard-*]\n"
    "       ardrun ctl [--ard-domain D] GROUP stop|start|reload BLOCK\n"
    "       ardrun ctl [--ard-domain D] GROUP status\n"
    "       ardrun --new NAME [-o FILE]\n"
    "       ardrun --describe PLUGIN.so\n"
    "       ardrun --help | --version\n"
    "exit codes: 0 ok, 100 usage or bad YAML, 101 plugin refused, 102 scheme check failed,\n"
    "            103 block init failed, 104 ctl command refused or unanswered,\n"
    "            105 --block: the block's step failed, 106 a block hung (watchdog),\n"
    "            111 system error\n";

int main(int argc, char **argv)
{
    ardc_nofile_raise(); /* every block's ports and the group's objects keep a descriptor */
    if (argc < 2) {
        fputs(usage, stderr);
        return ARDR_EXIT_USAGE;
    }
    const char *a = argv[1];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
        fputs(usage, stdout);
        return 0;
    }
    if (!strcmp(a, "--version")) {
        printf("ardrun (ardnet) %d.%d.%d, block API %d\n", ARD_VERSION_MAJOR, ARD_VERSION_MINOR,
               ARD_VERSION_PATCH, ARD_BLOCK_API);
        return 0;
    }
    if (!strcmp(a, "ctl"))
        return ardr_cmd_ctl(argc - 1, argv + 1);
    if (!strcmp(a, "--new"))
        return ardr_cmd_new(argc, argv);
    if (!strcmp(a, "--describe"))
        return ardr_cmd_describe(argc, argv);
    for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
        if (!strcmp(argv[i], "--block"))
            return ardr_cmd_block(argc, argv);
    return ardr_cmd_group(argc, argv);
}

int ardr_cmd_group(int argc, char **argv)
{
    /* our own options first; --ard-* are the library's (domain, lock, mode) */
    const char *file = NULL;
    int64_t ticks = 0;
    bool strict = false;
    int n = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--ticks") && i + 1 < argc) {
            char *end;
            errno = 0;
            ticks = strtoll(argv[++i], &end, 10);
            if (*end || errno || ticks < 1) {
                fprintf(stderr, "ardrun: --ticks '%s': not a count >= 1\n", argv[i]);
                return ARDR_EXIT_USAGE;
            }
        } else if (!strcmp(argv[i], "--strict")) {
            strict = true;
        } else if (!strncmp(argv[i], "--ard", 5)) {
            argv[n++] = argv[i];
            if (!strchr(argv[i], '=') && i + 1 < argc && strcmp(argv[i], "--ard-lock") &&
                strcmp(argv[i], "--ard-help") && strcmp(argv[i], "--ard-allow-foreign"))
                argv[n++] = argv[++i];
        } else if (argv[i][0] == '-' || file) {
            fprintf(stderr, "ardrun: unknown argument '%s'\n%s", argv[i], usage);
            return ARDR_EXIT_USAGE;
        } else {
            file = argv[i];
        }
    }
    argv[n] = NULL;
    argc = n;
    if (file == NULL) {
        fprintf(stderr, "ardrun: no group file\n%s", usage);
        return ARDR_EXIT_USAGE;
    }
    struct ardr_group *g = calloc(1, sizeof *g);
    if (g == NULL)
        return ARDR_EXIT_SYS;
    if (ardr_config_load(g, file) < 0) {
        fprintf(stderr, "ardrun: %s\n", ard_errdetail());
        free(g);
        return ARDR_EXIT_USAGE;
    }
    g->ticks = ticks;
    g->strict = g->strict || strict;
    if (g->domain[0] && ard_set_domain(g->domain) < 0) {
        fprintf(stderr, "ardrun: %s: domain: %s\n", file, ard_errdetail());
        ardr_config_free(g);
        free(g);
        return ARDR_EXIT_USAGE;
    }
    /* readiness is told after the scheme check and the first tick, not by ard_init */
    char *ready = getenv("ARD_READY_FD");
    char readyfd[32] = "";
    if (ready) {
        snprintf(readyfd, sizeof readyfd, "%s", ready);
        unsetenv("ARD_READY_FD");
    }
    int rc = ard_init(&argc, argv);
    if (rc < 0) {
        fprintf(stderr, "ardrun: %s\n", ard_errdetail());
        ardr_config_free(g);
        free(g);
        return ardc_exit_code(rc);
    }
    if (readyfd[0])
        setenv("ARD_READY_FD", readyfd, 1);
    int code = ardr_run_group(g);
    ardr_config_free(g);
    free(g);
    ard_fini();
    return code;
}
