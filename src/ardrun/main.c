/*
 * ardrun - the group runner: many block plugins in SCHED_FIFO threads of one process
 * (`ardrun GROUP.yaml`), one plugin as its own process (`ardrun --block PLUGIN.so`), run-time
 * lifecycle commands (`ardrun ctl GROUP stop BLOCK`), and a new plugin from the template
 * (`ardrun --new NAME`). docs/ardrun.md is the manual.
 */
#include "ardrun.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The modes named by the first word; any other command line is a group's, or --block's. */
static const struct {
    const char *word;
    int (*cmd)(int argc, char **argv);
} modes[] = {
    {"ctl", ardr_cmd_ctl},
    {"--new", ardr_cmd_new},
    {"--describe", ardr_cmd_describe},
};

int main(int argc, char **argv)
{
    ardc_nofile_raise(); /* every block's ports and the group's objects keep a descriptor */
    if (argc < 2) {
        ardr_usage(stderr);
        return ARDR_EXIT_USAGE;
    }
    for (size_t k = 0; k < sizeof modes / sizeof modes[0]; k++)
        if (strcmp(argv[1], modes[k].word) == 0)
            return modes[k].cmd(argc, argv);
    if (ardr_args_block(argc, argv))
        return ardr_cmd_block(argc, argv);
    return ardr_cmd_group(argc, argv);
}

/* The group's file and options into a (the standard ones kept for ard_init); the exit code
 * after saying why not, or -1 to go on. */
static int group_args(struct ardr_args *a, int argc, char **argv)
{
    *a = (struct ardr_args){
        .where = ARDR_W_GROUP, .first = 1, .maxwords = 1, .unknown = "unknown argument '%s'"};
    int rc = ardr_args_parse(&ardr_optset, a, argc, argv);
    if (rc == 0 && a->done)
        return 0;
    if (rc == 0 && a->nwords == 0) {
        rc = ardi_fail(ARD_EOPTION, "no group file");
        a->usage = true;
    }
    if (rc == 0)
        return -1;
    fprintf(stderr, "ardrun: %s\n", ard_errdetail());
    if (a->usage)
        ardr_usage(stderr);
    return ardc_exit_code(rc);
}

/* The group of file `file`, loaded, with the command line's ticks and strictness. */
static int group_load(struct ardr_group *g, const struct ardr_args *a)
{
    const char *file = a->words[0];
    int rc = ardr_config_load(g, file);
    if (rc < 0)
        return rc;
    g->ticks = a->ticks;
    g->strict = g->strict || a->strict;
    if (g->domain[0] && (rc = ard_set_domain(g->domain)) < 0) {
        char why[512];
        snprintf(why, sizeof why, "%s", ard_errdetail());
        ardr_config_free(g);
        return ardi_fail(rc, "%s: domain: %s", file, why);
    }
    return 0;
}

int ardr_cmd_group(int argc, char **argv)
{
    struct ardr_args a;
    int code = group_args(&a, argc, argv);
    if (code >= 0) {
        ardr_args_free(&a);
        return code;
    }
    struct ardr_group *g = calloc(1, sizeof *g);
    int rc = g ? group_load(g, &a) : ardi_fail(ARD_ENOMEM, "out of memory");
    code = g ? ARDR_EXIT_USAGE : ARDR_EXIT_SYS;
    /* readiness is told after the scheme check and the first tick, not by ard_init */
    if (rc == 0 && (rc = ardr_init_unready(&a)) < 0) {
        ardr_config_free(g);
        code = ardc_exit_code(rc);
    }
    if (rc < 0) {
        fprintf(stderr, "ardrun: %s\n", ard_errdetail());
        free(g);
        ardr_args_free(&a);
        return code;
    }
    ardc_ready_release(&a.ready);
    code = ardr_run_group(g);
    ardr_config_free(g);
    free(g);
    ard_fini();
    ardr_args_free(&a);
    return code;
}
