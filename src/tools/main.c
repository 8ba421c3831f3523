/*
 * ard - look at, follow, set and draw a running ardnet net. A git-style dispatcher over one
 * function per subcommand (cmd_*.c); options and exit codes: docs/ard.md, ard(1).
 */
#include "ard.h"

#include <stdlib.h>
#include <string.h>

/* The recording subcommands and `ard web` are parts of their own (cmake/parts.cmake): built
 * without them, ard still lists them and says what would bring them. */
#if ARD_HAVE_LOG
#define LOG_CMD(name, fn, summary, usage)                                                          \
    {                                                                                              \
        name, fn, summary, usage, NULL                                                             \
    }
#else
#define LOG_CMD(name, fn, summary, usage)                                                          \
    {                                                                                              \
        name, NULL, summary, NULL, "libzstd: apt-get install libzstd-dev zlib1g-dev liblz4-dev"    \
    }
#endif
#if ARD_HAVE_WEB
#define WEB_CMD(name, fn, summary, usage)                                                          \
    {                                                                                              \
        name, fn, summary, usage, NULL                                                             \
    }
#else
#define WEB_CMD(name, fn, summary, usage)                                                          \
    {                                                                                              \
        name, NULL, summary, NULL, "civetweb: apt-get install libcivetweb-dev"                     \
    }
#endif

static const struct ardt_cmd cmds[] = {
    {"list", cmd_list, "every connection of the domain: type, writer, readers, rate, age",
     &ardt_list_spec, NULL},
    {"df", cmd_df, "how much of /dev/shm the domain uses, and how much is free", &ardt_df_spec,
     NULL},
    {"show", cmd_show, "the newest packet decoded by its type; -f follows every new one",
     &ardt_show_spec, NULL},
    {"hz", cmd_hz, "packet rate and the statistics of the period", &ardt_hz_spec, NULL},
    {"bw", cmd_bw, "bytes per second: mean, min and max over each interval", &ardt_bw_spec, NULL},
    {"delay", cmd_delay, "age of packets when they are received", &ardt_delay_spec, NULL},
    {"set", cmd_set, "write one packet by hand: FIELD=VALUE...", &ardt_set_spec, NULL},
    {"pub", cmd_pub, "write packets by hand at a fixed rate", &ardt_pub_spec, NULL},
    {"graph", cmd_graph, "the running net as Graphviz dot, svg or json", &ardt_graph_spec, NULL},
    {"siggen", cmd_siggen, "signal generator block (sine, square, noise, ...)", &ardt_siggen_spec,
     NULL},
    LOG_CMD("record", cmd_record, "record connections into an MCAP file", &ardt_record_spec),
    LOG_CMD("info", cmd_info, "what a recording holds: connections, counts, missed, duration",
            &ardt_info_spec),
    LOG_CMD("export", cmd_export, "a recording's fields as CSV, optionally resampled",
            &ardt_export_spec),
    LOG_CMD("play", cmd_play, "republish a recording at its recorded timing", &ardt_play_spec),
    LOG_CMD("ros2-msgs", cmd_ros2msgs, "the ROS 2 package ardnet_msgs of the connections' types",
            &ardt_ros2msgs_spec),
    WEB_CMD("web", cmd_web, "the live net and an oscilloscope in a browser", &ardt_web_spec),
};
#define NCMDS (sizeof cmds / sizeof cmds[0])

/* ard's own options, before or after the subcommand (main, take_domain and cmd_sub look their
 * spellings up in this table). */
enum { RUN, HELP, VERSION };
struct ard_main {
    const char *domain;
    int mode;
};

static const struct ardc_opt main_opts[] = {
    {"domain", 'd', "NAME", "domain (default: $ARD_DOMAIN, else \"default\")", .kind = ARDC_TEXT,
     ARDC_DEST(struct ard_main, domain)},
    {"help", 'h', NULL, "help (of the subcommand after it)", .kind = ARDC_SET,
     ARDC_DEST(struct ard_main, mode), .set = HELP},
    {"version", 'V', NULL, "version", .kind = ARDC_SET, ARDC_DEST(struct ard_main, mode),
     .set = VERSION},
    {0},
};
static const struct ardc_optset main_set = {
    .see = "ard help",
    .head = "\nard's options go before or after the subcommand.\n",
    .opts = main_opts,
    .col = 21,
    .tail = "exit codes: 0 ok, 1 no such connection, 2 connection has a live writer,\n"
            "            3 object damaged, foreign or not accessible, 4 nothing sent yet,\n"
            "            5 subcommand not built, 100 usage, 111 system error\n",
};

static void usage(FILE *f)
{
    fprintf(f, "usage: ard [--domain NAME] SUBCOMMAND [ARGS...]\n"
               "       ard help [SUBCOMMAND] | ard help --options [SUBCOMMAND] | ard --version\n\n"
               "subcommands:\n");
    for (size_t i = 0; i < NCMDS; i++)
        fprintf(f, "  %-9s %s%s\n", cmds[i].name, cmds[i].summary,
                cmds[i].notbuilt ? " (not built)" : "");
    ardc_opt_usage(f, &main_set, 0);
}

/* The row of ard's own options that `word` spells ("-d", "--domain", "--domain=NAME"), or
 * NULL; *value: the text after '=', or NULL. */
static const struct ardc_opt *own_option(const char *word, const char **value)
{
    *value = NULL;
    if (word[0] != '-' || word[1] == '\0')
        return NULL;
    if (word[1] != '-') {
        for (const struct ardc_opt *o = main_opts; o->name && !word[2]; o++)
            if (o->shrt == word[1])
                return o;
        return NULL;
    }
    char name[32];
    size_t n = strcspn(word + 2, "=");
    if (n >= sizeof name)
        return NULL;
    memcpy(name, word + 2, n);
    name[n] = '\0';
    if (word[2 + n] == '=')
        *value = word + 3 + n;
    return ardc_opt_find(&main_set, 0, name);
}

/* A subcommand whose part was configured out: says so, whatever its arguments. */
static int not_built(const struct ardt_cmd *c)
{
    ardt_sub = c->name;
    return ardt_err(ARDT_NOTBUILT, "not built (configure with %s)", c->notbuilt);
}

static const struct ardt_cmd *find(const char *name)
{
    for (size_t i = 0; i < NCMDS; i++)
        if (strcmp(cmds[i].name, name) == 0)
            return &cmds[i];
    return NULL;
}

/* Take --domain out of argv wherever it is (before "--"), so subcommands never see it. */
static int take_domain(int *argc, char **argv)
{
    struct ard_main m = {0};
    int o = 1;
    for (int i = 1; i < *argc; i++) {
        const char *a = argv[i], *v;
        const struct ardc_opt *opt = own_option(a, &v);
        if (strcmp(a, "--") == 0) {
            while (i < *argc)
                argv[o++] = argv[i++];
            break;
        }
        if (!opt || opt->set != RUN) { /* a word of the subcommand, or its --help */
            argv[o++] = argv[i];
            continue;
        }
        if (!v && i + 1 >= *argc)
            return ardt_err(ARDT_USAGE, "%s needs a domain name", a);
        int rc = ardc_opt_apply(opt, a, v ? v : argv[++i], &m);
        if (rc)
            return ardt_liberr(rc);
    }
    argv[o] = NULL;
    *argc = o;
    if (m.domain)
        ardt_g.domain = m.domain;
    if (ardi_default_domain(ardt_g.domain, "option '--domain'", &ardt_g.domain) < 0)
        return ardt_err(ARDT_USAGE, "%s", ard_errdetail());
    return 0;
}

/* ard help [SUB], ard help --options [SUB] (the options of SUB, or without SUB ard's own, for
 * the completion, ard.bash). */
static int cmd_help(int argc, char **argv)
{
    bool list = argc > 2 && strcmp(argv[2], "--options") == 0;
    if (argc < 3 + list) {
        if (list)
            ardc_opt_list(stdout, &main_set, 0);
        else
            usage(stdout);
        return ARDT_OK;
    }
    const struct ardt_cmd *c = find(argv[2 + list]);
    if (!c)
        return ardt_err(ARDT_USAGE, "help: no subcommand '%s' (see 'ard help')", argv[2 + list]);
    if (c->notbuilt)
        return not_built(c);
    if (list)
        ardc_opt_list(stdout, c->spec, 0);
    else
        ardc_opt_usage(stdout, c->spec, 0);
    return ARDT_OK;
}

/* ard SUB ARGS...: its --help anywhere before "--", else the subcommand itself. */
static int cmd_sub(int argc, char **argv)
{
    const struct ardt_cmd *c = find(argv[1]);
    if (!c)
        return ardt_err(ARDT_USAGE, "'%s' is not a subcommand (see 'ard help')", argv[1]);
    if (c->notbuilt)
        return not_built(c);
    ardt_sub = c->name;
    for (int i = 2; i < argc && strcmp(argv[i], "--") != 0; i++) {
        const char *v;
        const struct ardc_opt *o = own_option(argv[i], &v);
        if (o && o->set == HELP && !v) {
            ardc_opt_usage(stdout, c->spec, 0);
            return ARDT_OK;
        }
    }
    int rc = c->run(argc - 1, argv + 1);
    return rc < 0 ? ardt_liberr(rc) : rc; /* a failure's detail, printed once */
}

int main(int argc, char **argv)
{
    ardc_nofile_raise(); /* record, web, show and list may hold a view of every connection */
    int rc = take_domain(&argc, argv);
    if (rc)
        return rc;
    if (argc < 2) {
        usage(stderr);
        return ARDT_USAGE;
    }
    const char *sub = argv[1], *v;
    const struct ardc_opt *o = own_option(sub, &v);
    if (o && o->set == HELP && !v) {
        usage(stdout);
        return ARDT_OK;
    }
    if (o && o->set == VERSION && !v) {
        printf("ard (ardnet) %d.%d.%d\n", ARD_VERSION_MAJOR, ARD_VERSION_MINOR, ARD_VERSION_PATCH);
        return ARDT_OK;
    }
    return strcmp(sub, "help") == 0 ? cmd_help(argc, argv) : cmd_sub(argc, argv);
}
