/*
 * args.c - the command line of every mode of ardrun from one table (ardc_opt.h): a row per
 * option with the modes where it applies (ARDR_W_*), the help from the same rows, and the
 * standard --ard options set apart for ard_init, the library saying how many words each takes
 * (ardi_lib_option_words): ardrun keeps no list of them.
 */
#include "ardrun.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- values of the rows ------------------------------------------------------------------ */

static int set_ticks(void *dest, const struct ardc_opt *o, const char *v)
{
    (void)o;
    struct ardr_args *a = dest;
    char *end;
    errno = 0;
    long long t = strtoll(v, &end, 10);
    if (*end || errno || t < 1 || end == v)
        return ardi_fail(ARD_EOPTION, "--ticks '%s': not a count >= 1", v);
    a->ticks = t;
    return 0;
}

static int set_rate(void *dest, const struct ardc_opt *o, const char *v)
{
    (void)o;
    struct ardr_args *a = dest;
    char *end;
    a->rate = strtod(v, &end);
    if (*end || end == v || !(a->rate >= ARDR_HZ_MIN && a->rate <= ARDR_HZ_MAX))
        return ardi_fail(ARD_EOPTION, "--rate '%s': not a rate in Hz (0.001..100000)", v);
    return 0;
}

/* --param NAME=VALUE into the block's parameters. */
static int add_param(void *dest, const struct ardc_opt *o, const char *kv)
{
    (void)o;
    struct ardr_block *b = ((struct ardr_args *)dest)->b;
    const char *eq = strchr(kv, '=');
    if (eq == NULL || eq == kv || (size_t)(eq - kv) > ARDR_NAME_MAX ||
        strlen(eq + 1) > ARDR_STR_MAX)
        return ardi_fail(ARD_EOPTION, "--param '%s': not NAME=VALUE", kv);
    if (b->nparams == ARD_BLOCK_MAX_PARAMS)
        return ardi_fail(ARD_EOPTION, "too many --param (%d)", ARD_BLOCK_MAX_PARAMS);
    for (int k = 0; k < b->nparams; k++)
        if (!strncmp(b->params[k].key, kv, (size_t)(eq - kv)) && b->params[k].key[eq - kv] == '\0')
            return ardi_fail(ARD_EOPTION, "--param '%s': given twice", kv);
    snprintf(b->params[b->nparams].key, sizeof b->params[0].key, "%.*s", (int)(eq - kv), kv);
    snprintf(b->params[b->nparams].val, sizeof b->params[0].val, "%s", eq + 1);
    b->nparams++;
    return 0;
}

static int show_help(void *dest, const struct ardc_opt *o, const char *v)
{
    (void)v;
    struct ardr_args *a = dest;
    if (o->where == ARDR_W_CTL)
        ardc_opt_usage(stdout, &ardr_ctl_optset, ARDR_W_CTL);
    else
        ardr_usage(stdout);
    a->done = true;
    return ARDC_OPT_STOP;
}

static int show_version(void *dest, const struct ardc_opt *o, const char *v)
{
    (void)o, (void)v;
    printf("ardrun (ardnet) %d.%d.%d, block API %d\n", ARD_VERSION_MAJOR, ARD_VERSION_MINOR,
           ARD_VERSION_PATCH, ARD_BLOCK_API);
    ((struct ardr_args *)dest)->done = true;
    return ARDC_OPT_STOP;
}

/* A word that is no option: the mode's next argument (the group file, ctl's GROUP CMD
 * [BLOCK], --new's NAME, --describe's PLUGIN.so). */
static int add_word(void *dest, char *word)
{
    struct ardr_args *a = dest;
    if (a->nwords == a->maxwords) {
        a->usage = true;
        return ardi_fail(ARD_EOPTION, a->unknown, word);
    }
    a->words[a->nwords++] = word;
    return 0;
}

static const struct ardc_opt *row_of(const struct ardc_optset *s, unsigned where, const char *w);

/* ---- the table ----------------------------------------------------------------------------- */

#define W_RUN (ARDR_W_GROUP | ARDR_W_BLOCK)
#define A(field) ARDC_DEST(struct ardr_args, field)

static const struct ardc_opt opts[] = {
    {"help", 'h', NULL, "this help", ARDC_CALL, .call = show_help, .where = W_RUN},
    {"help", 'h', NULL, "this help", ARDC_CALL, .call = show_help, .where = ARDR_W_CTL},
    {"version", 0, NULL, "ardrun's version and block API", ARDC_CALL, .call = show_version,
     .where = W_RUN},
    {"ticks", 0, "N", "stop after N base ticks (a group) or N steps (--block)", ARDC_CALL,
     .call = set_ticks, .where = W_RUN},
    {"strict", 0, NULL, "inputs that nothing writes are errors (as 'strict: true')", ARDC_FLAG,
     A(strict), .where = ARDR_W_GROUP},
    {"block", 0, "PLUGIN.so", "run this plugin as a block of its own process", ARDC_TEXT, A(plugin),
     .complete = "@file", .where = ARDR_W_BLOCK},
    {"name", 0, "NAME", "--block: the instance name (default: the plugin's)", ARDC_TEXT, A(name),
     .where = ARDR_W_BLOCK},
    {"param", 0, "K=V", "--block: a parameter of the block (repeatable)", ARDC_CALL,
     .call = add_param, .where = ARDR_W_BLOCK},
    {"rate", 0, "HZ", "--block: step at HZ on absolute deadlines", ARDC_CALL, .call = set_rate,
     .where = ARDR_W_BLOCK},
    {"trigger", 0, "PORT", "--block: step on each new packet of IN port PORT", ARDC_TEXT,
     A(trigger), .where = ARDR_W_BLOCK},
    {"output", 'o', "FILE", "--new: the file written (default: NAME.c)", ARDC_TEXT, A(output),
     .complete = "@file", .where = ARDR_W_NEW},
    {0},
};

static const char usage_head[] =
    "usage: ardrun [--ticks N] [--strict] [--ard-domain D] [--ard-lock] GROUP.yaml\n"
    "       ardrun --block PLUGIN.so [--name NAME] [--param K=V]... [--rate HZ | --trigger "
    "PORT]\n"
    "              [--ticks N] [--ard PORT=CONNECTION]... [--ard-*]\n"
    "       ardrun ctl [--ard-domain D] GROUP stop|start|reload BLOCK\n"
    "       ardrun ctl [--ard-domain D] GROUP status\n"
    "       ardrun --new NAME [-o FILE]\n"
    "       ardrun --describe PLUGIN.so\n"
    "       ardrun --help | --version\n";

static const char usage_tail[] =
    "  --ard PORT=CONNECTION, --ard-*\n"
    "                      the standard options of ardnet's library (--ard-help)\n"
    "exit codes: 0 ok, 100 usage or bad YAML, 101 plugin refused, 102 scheme check failed,\n"
    "            103 block init failed, 104 ctl command refused or unanswered,\n"
    "            105 --block: the block's step failed, 106 a block hung (watchdog),\n"
    "            111 system error\n";

const struct ardc_optset ardr_optset = {
    .see = "ardrun --help",
    .head = usage_head,
    .opts = opts,
    .col = 22,
    .tail = usage_tail,
    .arg = add_word,
};

const struct ardc_optset ardr_ctl_optset = {
    .see = "ardrun ctl --help",
    .head = "usage: ardrun ctl [--ard-domain D] GROUP stop|start|reload BLOCK\n"
            "       ardrun ctl [--ard-domain D] GROUP status\n",
    .opts = opts,
    .col = 22,
    .arg = add_word,
};

void ardr_usage(FILE *f)
{
    ardc_opt_usage(f, &ardr_optset, ARDR_W_GROUP | ARDR_W_BLOCK | ARDR_W_NEW);
}

bool ardr_args_block(int argc, char **argv)
{
    const struct ardc_opt *block = ardc_opt_find(&ardr_optset, ARDR_W_BLOCK, "block");
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (argv[i][0] == '-' && argv[i][1] == '-' &&
            row_of(&ardr_optset, ARDR_W_BLOCK, argv[i]) == block)
            return true;
    return false;
}

/* ---- the command line ------------------------------------------------------------------- */

/* The row of option word `w` ("--name", "--name=v", "-o", "-oFILE") for `where`, or NULL. */
static const struct ardc_opt *row_of(const struct ardc_optset *s, unsigned where, const char *w)
{
    if (w[1] != '-') {
        for (const struct ardc_opt *o = s->opts; o->name; o++)
            if (o->shrt == w[1] && (o->where == 0 || (o->where & where)))
                return o;
        return NULL;
    }
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)strcspn(w + 2, "="), w + 2);
    return ardc_opt_find(s, where, name);
}

/* Does option word w (of row o) take the next word as its value? */
static bool takes_next(const struct ardc_opt *o, const char *w)
{
    if (!o->arg || o->optional)
        return false;
    return w[1] == '-' ? strchr(w, '=') == NULL : w[2] == '\0';
}

/* The standard options (and their values) from argv into a->lib, for ard_init; the rest stays
 * in argv, in order. An option of s whose value is the next word keeps that word whatever it
 * looks like, as the parser will. A word that is neither ardrun's nor the library's, or an
 * option without its value, is the usage's fault (a->usage, the detail `unknown` names it). */
static int split(const struct ardc_optset *s, struct ardr_args *a, int *argc, char **argv)
{
    int n = a->first, i = a->first;
    while (i < *argc) {
        char *w = argv[i];
        int words = ardi_lib_option_words(w);
        if (words < 0)
            return words;
        if (words > 0) {
            for (int k = 0; k < words && i < *argc; k++)
                a->lib[a->nlib++] = argv[i++];
            continue;
        }
        if (w[0] == '-' && w[1] == '-' && w[2] == '\0')
            break; /* the rest are arguments */
        const struct ardc_opt *o = w[0] == '-' && w[1] ? row_of(s, a->where, w) : NULL;
        bool next = o && takes_next(o, w);
        if ((w[0] == '-' && w[1] && o == NULL) || (next && i + 1 == *argc)) {
            a->usage = true;
            return ardi_fail(ARD_EOPTION, a->unknown, w);
        }
        argv[n++] = argv[i++];
        if (next)
            argv[n++] = argv[i++];
    }
    while (i < *argc)
        argv[n++] = argv[i++];
    argv[n] = NULL;
    a->lib[a->nlib] = NULL;
    *argc = n;
    return 0;
}

int ardr_args_parse(const struct ardc_optset *s, struct ardr_args *a, int argc, char **argv)
{
    a->lib = calloc((size_t)argc + 1, sizeof *a->lib);
    if (a->lib == NULL)
        return ardi_fail(ARD_ENOMEM, "out of memory");
    a->lib[a->nlib++] = argv[0];
    int rc = split(s, a, &argc, argv);
    int i = a->first;
    if (rc == 0)
        rc = ardc_opt_parse(s, a->where, argc, argv, &i, a);
    return rc;
}

void ardr_args_free(struct ardr_args *a)
{
    free(a->lib);
    a->lib = NULL;
}

/* ---- readiness -------------------------------------------------------------------------- */

int ardr_init_unready(struct ardr_args *a)
{
    ardc_ready_hold(&a->ready);
    return ard_init(&a->nlib, a->lib);
}
