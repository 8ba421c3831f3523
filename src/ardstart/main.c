/*
 * ardstart - start a block or a script, here or on another host, and keep books of it.
 * Options and exit codes: docs/ardstart.md.
 */
#include "ardstart.h"

#include "ard_common.h"
#include "ardc_opt.h"
#include "ardnet.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum mode { M_START, M_LIST, M_LOG, M_READY, M_SYSTEM, M_HELP, M_VERSION };

struct cmdline {
    struct as_opts o;
    enum mode mode;
    bool raw;
    const char *system;
    const char *env[64], *hostmap[64];
    bool wait_bare;  /* -w/--wait without a time */
    const char *key; /* a YAML key being applied (as_yaml_option), named in the detail */
};

/* How the option of row opt was written, for the detail: its YAML key, else "--NAME". */
static const char *given(const struct cmdline *c, const struct ardc_opt *opt, char *buf, size_t len)
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
    struct cmdline *c = dest;
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
    struct cmdline *c = dest;
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
    struct cmdline *c = dest;
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
    struct cmdline *c = dest;
    char buf[40];
    c->o.restart_given = true;
    return as_parse_restart(given(c, opt, buf, sizeof buf), v, &c->o.restart);
}

static int on_restart_delay(void *dest, const struct ardc_opt *opt, const char *v)
{
    struct cmdline *c = dest;
    char buf[40];
    c->o.restart_given = true;
    return as_parse_restart_delay(given(c, opt, buf, sizeof buf), v, &c->o.restart_delay_ns);
}

static int on_restart_limit(void *dest, const struct ardc_opt *opt, const char *v)
{
    struct cmdline *c = dest;
    char buf[40];
    c->o.restart_given = true;
    return as_parse_restart_limit(given(c, opt, buf, sizeof buf), v, &c->o.restart_limit,
                                  &c->o.restart_window_ns);
}

/* --system FILE: its own mode. */
static int on_system(void *dest, const struct ardc_opt *opt, const char *v)
{
    (void)opt, (void)v;
    ((struct cmdline *)dest)->mode = M_SYSTEM;
    return 0;
}

/* --help, --version: the mode in .set, and nothing after it is looked at. */
static int on_stop(void *dest, const struct ardc_opt *opt, const char *v)
{
    (void)v;
    ((struct cmdline *)dest)->mode = opt->set;
    return ARDC_OPT_STOP;
}

#define CO(field) ARDC_DEST(struct cmdline, o.field)
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
    {"help", 'h', NULL, "this text", ARDC_CALL, .call = on_stop, .set = M_HELP},
    {"version", 0, NULL, "print the version", ARDC_CALL, .call = on_stop, .set = M_VERSION},
    {"list", 'l', NULL, NULL, ARDC_SET, ARDC_DEST(struct cmdline, mode), .set = M_LIST,
     .hidden = true},
    {"raw", 0, NULL, NULL, ARDC_FLAG, ARDC_DEST(struct cmdline, raw), .hidden = true},
    {"log", 0, NULL, NULL, ARDC_SET, ARDC_DEST(struct cmdline, mode), .set = M_LOG, .hidden = true},
    {"ready", 0, NULL, NULL, ARDC_SET, ARDC_DEST(struct cmdline, mode), .set = M_READY,
     .hidden = true},
    {"system", 0, "FILE", NULL, ARDC_TEXT, ARDC_DEST(struct cmdline, system), .call = on_system,
     .hidden = true},
    {"set-host", 0, "ROLE=HOST", NULL, ARDC_CALL, .call = on_set_host, .hidden = true},
    {"dry-run", 0, NULL, NULL, ARDC_FLAG, CO(dry_run), .hidden = true},
    {"check", 0, NULL, NULL, ARDC_FLAG, CO(check), .hidden = true},
    /* Given by the ardstart that starts us on another host. */
    {"cwd-if-exists", 0, "DIR", NULL, ARDC_TEXT, CO(cwd_if), .hidden = true},
    {"as-host", 0, "HOST", NULL, ARDC_TEXT, CO(as_host), .hidden = true},
    {NULL},
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
    struct cmdline c = {.key = key};
    return ardc_opt_apply(row, key, value, &c);
}

static void usage(FILE *f)
{
    ardc_opt_usage(f, &as_optset, 0);
}

/* Set for everything this ardstart starts, so that the next level (a script's ardstart,
 * here or on a remote host) finds the same domain, transport and binaries. */
static void export_env(const struct as_opts *o)
{
    setenv("ARD_DOMAIN", o->domain, 1);
    if (o->as_host)
        setenv("ARD_HOST", o->as_host, 1);
    if (o->rsh)
        setenv("ARD_RSH", o->rsh, 1);
    if (o->bindir)
        setenv("ARD_REMOTE_BINDIR", o->bindir, 1);
}

int as_entry_path(const struct as_opts *o, const char *name, char *path, size_t len)
{
    const char *parent = o->parent ? o->parent : getenv("ARD_PATH");
    if (parent && *parent && ardb_check_path(parent) < 0) {
        char why[256]; /* the detail is rewritten from a copy */
        ardb_copy(why, sizeof why, ard_errdetail());
        return ardi_fail(ARD_EINVAL, "parent: %s", why);
    }
    int n = parent && *parent ? snprintf(path, len, "%s/%s", parent, name)
                              : snprintf(path, len, "%s", name);
    if (n < 0 || (size_t)n >= len)
        return ardi_fail(ARD_EINVAL, "path of the entry is too long");
    return ardb_check_path(path);
}

/* The library's failure detail, as "ardstart: DETAIL"; returns the exit code. */
static int report(int exit_code)
{
    fprintf(stderr, "ardstart: %s\n", ard_errdetail());
    return exit_code;
}

/* A bare -w/--wait followed by a number: the user meant the time ("--wait 5"), but an
 * optional value must be attached, and "5" would be run as the command. */
static bool looks_like_seconds(const char *s)
{
    char *end;
    (void)strtod(s, &end);
    return end != s && *end == '\0';
}

/* argv[k] ends with a bare -w or --wait ("-w", "-qw", "--wait"). */
static bool bare_wait_word(const char *a)
{
    size_t n = strlen(a);
    return !strcmp(a, "--wait") || (n >= 2 && a[0] == '-' && a[1] != '-' && a[n - 1] == 'w');
}

/* Options into c; 0, or the failing code with its detail (a usage error). */
static int parse_args(int argc, char **argv, struct cmdline *c)
{
    struct as_opts *o = &c->o;
    o->env = c->env;
    o->hostmap = c->hostmap;
    o->restart_delay_ns = AS_RESTART_DELAY_NS;
    o->restart_limit = AS_RESTART_LIMIT_N;
    o->restart_window_ns = AS_RESTART_LIMIT_NS;
    int i = 1;
    int rc = ardc_opt_parse(&as_optset, 0, argc, argv, &i, c);
    if (rc || c->mode == M_HELP || c->mode == M_VERSION)
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

static int cmd_ready(const struct as_opts *o)
{
    /* On behalf of the script that runs us: its starter takes readiness from the command's
     * own process only (docs/ardstart.md, Readiness). Same code as libardnet's ard_ready. */
    int rc = ardi_ready_for((long)getppid());
    if (rc < 0) {
        fprintf(stderr, "ardstart: --ready: %s\n", ard_errdetail());
        return AS_SYS;
    }
    if (rc == 0 && !o->quiet)
        fprintf(stderr, "ardstart: --ready: not started by ardstart --wait; nothing to do\n");
    return AS_OK;
}

/* --list [PATH] and --log PATH: the path argument; 1 when the count is wrong (the usage is
 * the answer), else 0 or the failing code with its detail. */
static int list_path(const struct as_opts *o, bool required, const char **path)
{
    if (o->argc > 1 || (required && o->argc != 1))
        return 1;
    *path = o->argc ? o->argv[0] : NULL;
    return *path ? ardb_check_path(*path) : 0;
}

/* The books of o's domain that exist (r: 0, or 1: none yet), or AS_SYS after printing why. */
static int open_existing(struct ardb_books *b, const struct as_opts *o, int *r)
{
    *r = ardb_open_existing(b, o->domain);
    return *r < 0 ? report(AS_SYS) : AS_OK;
}

static int cmd_list(const struct as_opts *o, bool raw)
{
    const char *path;
    int r = list_path(o, false, &path);
    if (r > 0)
        usage(stderr);
    if (r != 0)
        return r > 0 ? AS_USAGE : report(AS_USAGE);
    struct ardb_books b;
    if (open_existing(&b, o, &r) != AS_OK)
        return AS_SYS;
    int rc = as_list(&b, path, raw); /* books that do not exist yet list nothing */
    ardb_close(&b);
    return rc;
}

static int cmd_log(const struct as_opts *o)
{
    const char *path;
    int r = list_path(o, true, &path);
    if (r > 0)
        usage(stderr);
    if (r != 0)
        return r > 0 ? AS_USAGE : report(AS_USAGE);
    struct ardb_books b;
    if (open_existing(&b, o, &r) != AS_OK)
        return AS_SYS;
    struct ardb_entry e;
    r = r == 0 ? ardb_read(&b, path, &e) : 1;
    int rc = AS_USAGE;
    if (r == 0 && e.remote) {
        fprintf(stderr, "ardstart: '%s' runs on %s; its log is there: %s\n", path, e.host,
                e.log[0] ? e.log : "(ask: ardstart --log there)");
    } else if (r == 0) {
        printf("%s\n", e.log);
        rc = AS_OK;
    } else {
        fprintf(stderr, "ardstart: no entry '%s' in domain %s here%s%s\n", path, o->domain,
                r < 0 ? ": " : "", r < 0 ? ard_errdetail() : "");
    }
    ardb_close(&b);
    return rc;
}

/* --system FILE's command line: what goes with it. 0, or ARD_EOPTION with the detail. */
static int system_args(const struct as_opts *o)
{
    if (o->argc > 0 || o->host)
        return ardi_fail(ARD_EOPTION, "--system takes no command and no -H (hosts are in the "
                                      "file, or --set-host)");
    if (o->restart_given)
        return ardi_fail(ARD_EOPTION, "--system: give the restart policy in the file (keys "
                                      "restart, restart_delay, restart_limit), not as an option");
    if (o->name && ardi_check_name("entry", o->name, true) < 0)
        return ARD_EOPTION;
    if (o->check && o->dry_run)
        return ardi_fail(ARD_EOPTION, "--check and --dry-run exclude each other");
    return 0;
}

static int cmd_system(struct as_opts *o, const char *system)
{
    if (system_args(o) != 0)
        return report(AS_USAGE);
    export_env(o);
    struct ardb_books b;
    bool starts = !o->dry_run && !o->check;
    if (starts && ardb_open(&b, o->domain) < 0)
        return report(AS_SYS);
    int rc = as_start_system(&b, o, system);
    if (starts)
        ardb_close(&b);
    return rc;
}

/* The entry's path of a start: -n (checked) or the command's name, under its parent. 0, or the
 * failing code with its detail. */
static int start_path(const struct as_opts *o, char *path, size_t len)
{
    char name[ARDB_MAX_NAME + 1];
    if (o->name) {
        int rc = ardi_check_name("entry", o->name, true);
        if (rc < 0)
            return rc;
        ardb_copy(name, sizeof name, o->name);
    } else {
        ardb_default_name(o->argv[0], name, sizeof name);
    }
    int rc = as_entry_path(o, name, path, len);
    if (rc == 0 && o->host)
        rc = ardb_check_host("host", o->host);
    return rc;
}

static int cmd_start(struct as_opts *o)
{
    if (o->argc < 1) {
        usage(stderr);
        return AS_USAGE;
    }
    char path[ARDB_MAX_PATH];
    if (start_path(o, path, sizeof path) < 0)
        return report(AS_USAGE);
    /* Checked before anything is recorded, so that the message names the directory (the
     * command itself is fine) and no failed entry is left. A remote start is checked there. */
    struct stat st;
    if (!o->host && o->chdir && (stat(o->chdir, &st) < 0 || !S_ISDIR(st.st_mode))) {
        fprintf(stderr, "ardstart: %s: cannot change to directory '%s': %s\n", path, o->chdir,
                strerror(errno ? errno : ENOTDIR));
        return AS_EXEC;
    }
    export_env(o);
    struct ardb_books b;
    if (ardb_open(&b, o->domain) < 0)
        return report(AS_SYS);
    int rc = o->host ? as_start_remote(&b, o, path) : as_start_local(&b, o, path);
    ardb_close(&b);
    return rc;
}

int main(int argc, char **argv)
{
    ardb_main_init();
    static struct cmdline c;
    if (parse_args(argc, argv, &c) != 0)
        return report(AS_USAGE);
    switch (c.mode) {
    case M_HELP:
        usage(stdout);
        return AS_OK;
    case M_VERSION:
        printf("ardstart (ardnet) %s\n", ARD_VERSION);
        return AS_OK;
    case M_READY:
        return cmd_ready(&c.o);
    case M_LIST:
        return cmd_list(&c.o, c.raw);
    case M_LOG:
        return cmd_log(&c.o);
    case M_SYSTEM:
        return cmd_system(&c.o, c.system);
    case M_START:
        if (c.o.check) {
            fprintf(stderr, "ardstart: --check goes with --system FILE\n");
            return AS_USAGE;
        }
        break;
    }
    return cmd_start(&c.o);
}
