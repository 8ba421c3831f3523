/*
 * options.c - ardstart's options, in the one table form (ardc_opt.h): each row binds an option
 * to its destination in struct as_cmdline or to a callback that checks its value. The keys of a
 * system description that are options (restart, restart_delay, restart_limit) are the rows'
 * .yaml keys: the loader checks their values with the same rows (as_yaml_option).
 */
#include "ardstart.h"

#include "ard_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How the option of row opt was written, for the detail: its YAML key, else "--NAME". */
static const char *given(const struct as_cmdline *c, const struct ardc_opt *opt, char *buf,
                         size_t len)
{
    if (c->key)
        return c->key;
    snprintf(buf, len, "--%s", opt->name);
    return buf;
}

/* -w/--wait[=SECONDS]: the time only attached ("-w=5" too). */
static int on_wait(void *dest, const struct ardc_opt *opt, const char *v)
{
    (void)opt;
    struct as_cmdline *c = dest;
    c->o.wait_ms = 10000;
    c->wait_bare = !v;
    if (!v)
        return 0;
    if (*v == '=')
        v++; /* "-w=5" */
    int64_t ns;
    int rc = ardb_opt_seconds("--wait", v, false, 86400, &ns);
    if (rc < 0)
        return rc;
    c->o.wait_ms = (int)((ns + 999999) / 1000000); /* never 0: that would mean "do not wait" */
    return 0;
}

static int on_env(void *dest, const struct ardc_opt *opt, const char *v)
{
    (void)opt;
    struct as_cmdline *c = dest;
    if (!strchr(v, '=') || v[0] == '=')
        return ardi_fail(ARD_EOPTION, "--env '%s': expected NAME=VALUE", v);
    if (c->o.nenv == (int)(sizeof c->env / sizeof c->env[0]))
        return ardi_fail(ARD_EOPTION, "more than %d --env options", c->o.nenv);
    c->env[c->o.nenv++] = v;
    return 0;
}

static int on_set_host(void *dest, const struct ardc_opt *opt, const char *v)
{
    (void)opt;
    struct as_cmdline *c = dest;
    if (!strchr(v, '=') || v[0] == '=' ||
        c->o.nhostmap == (int)(sizeof c->hostmap / sizeof c->hostmap[0]))
        return ardi_fail(ARD_EOPTION, "--set-host '%s': expected ROLE=HOST", v);
    int rc = strchr(v, '=')[1] ? ardb_check_host("--set-host", strchr(v, '=') + 1) : 0;
    if (rc < 0)
        return rc;
    c->hostmap[c->o.nhostmap++] = v;
    return 0;
}

static int on_restart(void *dest, const struct ardc_opt *opt, const char *v)
{
    struct as_cmdline *c = dest;
    char buf[40];
    c->o.restart_given = true;
    return as_parse_restart(given(c, opt, buf, sizeof buf), v, &c->o.restart);
}

static int on_restart_delay(void *dest, const struct ardc_opt *opt, const char *v)
{
    struct as_cmdline *c = dest;
    char buf[40];
    c->o.restart_given = true;
    return as_parse_restart_delay(given(c, opt, buf, sizeof buf), v, &c->o.restart_delay_ns);
}

static int on_restart_limit(void *dest, const struct ardc_opt *opt, const char *v)
{
    struct as_cmdline *c = dest;
    char buf[40];
    c->o.restart_given = true;
    return as_parse_restart_limit(given(c, opt, buf, sizeof buf), v, &c->o.restart_limit,
                                  &c->o.restart_window_ns);
}

/* --system FILE: its own mode. */
static int on_system(void *dest, const struct ardc_opt *opt, const char *v)
{
    (void)opt, (void)v;
    ((struct as_cmdline *)dest)->mode = AS_MODE_SYSTEM;
    return 0;
}

/* --help, --version: the mode in .set, and nothing after it is looked at. */
static int on_stop(void *dest, const struct ardc_opt *opt, const char *v)
{
    (void)v;
    ((struct as_cmdline *)dest)->mode = opt->set;
    return ARDC_OPT_STOP;
}

#define CO(field) ARDC_DEST(struct as_cmdline, o.field)
/* The options; those that are also keys of a system description carry their .yaml key and
 * .set, their index in struct rpol (system.h). Modes other than a start are described in
 * the usage lines, not in the list (hidden). */
static const struct ardc_opt rows[] = {
    {"host", 'H', "HOST", "start on HOST through the transport (ssh)", ARDC_TEXT, CO(host)},
    {"name", 'n', "NAME", "entry name (default: command name without extension)", ARDC_TEXT,
     CO(name)},
    {"parent", 'p', "PATH", "parent in the hierarchy (default: $ARD_PATH)", ARDC_TEXT, CO(parent)},
    {"wait", 'w', "SECONDS",
     "return when the command is ready (default 10 s; the\ntime only attached: --wait=5 or -w5)",
     ARDC_CALL, .call = on_wait, .optional = true},
    {"domain", 'd', "NAME", "domain (default: $ARD_DOMAIN, else \"default\")", ARDC_TEXT,
     CO(domain)},
    {"rsh", 'e', "COMMAND", "transport (default: $ARD_RSH, else\n\"" ARDB_DEFAULT_RSH "\")",
     ARDC_TEXT, CO(rsh)},
    {"remote-bindir", 0, "DIR",
     "ardstart/ardkill location on remote hosts\n(default: $ARD_REMOTE_BINDIR, else found in "
     "PATH)",
     ARDC_TEXT, CO(bindir)},
    {"chdir", 'C', "DIR", "working directory of the command", ARDC_TEXT, CO(chdir)},
    {"env", 'E', "NAME=VALUE", "set an environment variable for the command", ARDC_CALL,
     .call = on_env},
    {"restart", 0, "POLICY",
     "restart the command when it ends: on-failure, always\nor no (default no)", ARDC_CALL,
     .call = on_restart, .yaml = "restart", .set = AS_RPOL_RESTART},
    {"restart-delay", 0, "S", "wait S seconds before a restart (default 1)", ARDC_CALL,
     .call = on_restart_delay, .yaml = "restart_delay", .set = AS_RPOL_DELAY},
    {"restart-limit", 0, "N/S",
     "give up (state failed) after N restarts within S\nseconds (default 5/10; none: no limit)",
     ARDC_CALL, .call = on_restart_limit, .yaml = "restart_limit", .set = AS_RPOL_LIMIT},
    {"quiet", 'q', NULL, "print errors only", ARDC_FLAG, CO(quiet)},
    {"help", 'h', NULL, "this text", ARDC_CALL, .call = on_stop, .set = AS_MODE_HELP},
    {"version", 0, NULL, "print the version", ARDC_CALL, .call = on_stop, .set = AS_MODE_VERSION},
    {"list", 'l', NULL, NULL, ARDC_SET, ARDC_DEST(struct as_cmdline, mode), .set = AS_MODE_LIST,
     .hidden = true},
    {"raw", 0, NULL, NULL, ARDC_FLAG, ARDC_DEST(struct as_cmdline, raw), .hidden = true},
    {"log", 0, NULL, NULL, ARDC_SET, ARDC_DEST(struct as_cmdline, mode), .set = AS_MODE_LOG,
     .hidden = true},
    {"ready", 0, NULL, NULL, ARDC_SET, ARDC_DEST(struct as_cmdline, mode), .set = AS_MODE_READY,
     .hidden = true},
    {"system", 0, "FILE", NULL, ARDC_TEXT, ARDC_DEST(struct as_cmdline, system), .call = on_system,
     .hidden = true},
    {"set-host", 0, "ROLE=HOST", NULL, ARDC_CALL, .call = on_set_host, .hidden = true},
    {"dry-run", 0, NULL, NULL, ARDC_FLAG, CO(dry_run), .hidden = true},
    {"check", 0, NULL, NULL, ARDC_FLAG, CO(check), .hidden = true},
    /* Given by the ardstart that starts us on another host. */
    {"cwd-if-exists", 0, "DIR", NULL, ARDC_TEXT, CO(cwd_if), .hidden = true},
    {"as-host", 0, "HOST", NULL, ARDC_TEXT, CO(as_host), .hidden = true},
    {0},
};

const struct ardc_optset as_optset = {
    .see = "ardstart --help",
    .head =
        "usage: ardstart [OPTIONS] [--] COMMAND [ARGS...]   start COMMAND, detached\n"
        "       ardstart --list [--raw] [PATH]             show the tree of started entries\n"
        "       ardstart --log PATH                        print the path of an entry's log file\n"
        "       ardstart --ready                           (in a script) tell the starter\n"
        "       ardstart --system FILE.yaml [--set-host ROLE=HOST]... [--dry-run | --check]\n"
        "                                                  start a system description (--check:\n"
        "                                                  what it needs of /dev/shm)\n",
    .opts = rows,
    .col = 27,
    .tail = "exit codes: 0 ok, 1 cannot execute, 2 ended before ready, 3 not ready in time,\n"
            "            4 host unreachable, 5 already running, 100 usage, 111 system error\n",
};

int as_yaml_option(const struct ardc_opt *row, const char *key, const char *value)
{
    struct as_cmdline c = {.key = key};
    return ardc_opt_apply(row, key, value, &c);
}

/* A bare -w/--wait followed by a number: the user meant the time ("--wait 5"), but an
 * optional value must be attached, and "5" would be run as the command. */
static bool looks_like_seconds(const char *s)
{
    char *end;
    (void)strtod(s, &end);
    return end != s && *end == '\0';
}

/* The word a ends with a bare -w or --wait ("-w", "-qw", "--wait"). */
static bool bare_wait_word(const char *a)
{
    size_t n = strlen(a);
    return !strcmp(a, "--wait") || (n >= 2 && a[0] == '-' && a[1] != '-' && a[n - 1] == 'w');
}

/* Options into c; 0, or the failing code with its detail (a usage error). */
int as_parse_args(int argc, char **argv, struct as_cmdline *c)
{
    struct as_opts *o = &c->o;
    o->env = c->env;
    o->hostmap = c->hostmap;
    o->restart_delay_ns = AS_RESTART_DELAY_NS;
    o->restart_limit = AS_RESTART_LIMIT_N;
    o->restart_window_ns = AS_RESTART_LIMIT_NS;
    int i = 1;
    int rc = ardc_opt_parse(&as_optset, 0, argc, argv, &i, c);
    if (rc || c->mode == AS_MODE_HELP || c->mode == AS_MODE_VERSION)
        return rc;
    if (c->wait_bare && i < argc && bare_wait_word(argv[i - 1]) && looks_like_seconds(argv[i]))
        return ardi_fail(ARD_EOPTION,
                         "--wait %s: attach the time, as in --wait=%s or -w%s (a bare "
                         "--wait waits 10 s, and '%s' would be taken as the command)",
                         argv[i], argv[i], argv[i], argv[i]);
    o->argv = argv + i;
    o->argc = argc - i;
    if ((rc = ardb_opt_domain(o->domain, &o->domain)) < 0)
        return rc;
    if (o->as_host && (rc = ardb_check_host("--as-host", o->as_host)) < 0)
        return rc;
    return 0;
}
