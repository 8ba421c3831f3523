/*
 * ardstart - start a block or a script, here or on another host, and keep books of it.
 * Options and exit codes: docs/ardstart.md.
 */
#include "ardstart.h"

#include "ard_common.h"
#include "ardnet.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: ardstart [OPTIONS] [--] COMMAND [ARGS...]   start COMMAND, detached\n"
        "       ardstart --list [--raw] [PATH]             show the tree of started entries\n"
        "       ardstart --log PATH                        print the path of an entry's log file\n"
        "       ardstart --ready                           (in a script) tell the starter\n"
        "       ardstart --system FILE.yaml [--set-host ROLE=HOST]... [--dry-run | --check]\n"
        "                                                  start a system description (--check:\n"
        "                                                  what it needs of /dev/shm)\n"
        "options:\n"
        "  -H, --host HOST          start on HOST through the transport (ssh)\n"
        "  -n, --name NAME          entry name (default: command name without extension)\n"
        "  -p, --parent PATH        parent in the hierarchy (default: $ARD_PATH)\n"
        "  -w, --wait[=SECONDS]     return when the command is ready (default 10 s; the\n"
        "                           time only attached: --wait=5 or -w5)\n"
        "  -d, --domain NAME        domain (default: $ARD_DOMAIN, else \"default\")\n"
        "  -e, --rsh COMMAND        transport (default: $ARD_RSH, else\n"
        "                           \"" ARDB_DEFAULT_RSH "\")\n"
        "      --remote-bindir DIR  ardstart/ardkill location on remote hosts\n"
        "                           (default: $ARD_REMOTE_BINDIR, else found in PATH)\n"
        "  -C, --chdir DIR          working directory of the command\n"
        "  -E, --env NAME=VALUE     set an environment variable for the command\n"
        "      --restart=POLICY     restart the command when it ends: on-failure, always\n"
        "                           or no (default no)\n"
        "      --restart-delay=S    wait S seconds before a restart (default 1)\n"
        "      --restart-limit=N/S  give up (state failed) after N restarts within S\n"
        "                           seconds (default 5/10; none: no limit)\n"
        "  -q, --quiet              print errors only\n"
        "  -h, --help               this text\n"
        "      --version            print the version\n"
        "exit codes: 0 ok, 1 cannot execute, 2 ended before ready, 3 not ready in time,\n"
        "            4 host unreachable, 5 already running, 100 usage, 111 system error\n");
}

static int parse_wait(const char *s, int *ms)
{
    int64_t ns;
    if (ardb_opt_seconds("--wait", s, false, 86400, &ns) < 0) {
        fprintf(stderr, "ardstart: %s\n", ard_errdetail());
        return -1;
    }
    *ms = (int)((ns + 999999) / 1000000); /* never 0: that would mean "do not wait" */
    return 0;
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
        fprintf(stderr, "ardstart: parent: %s\n", ard_errdetail());
        return -1;
    }
    int n = parent && *parent ? snprintf(path, len, "%s/%s", parent, name)
                              : snprintf(path, len, "%s", name);
    if (n < 0 || (size_t)n >= len || ardb_check_path(path) < 0) {
        fprintf(stderr, "ardstart: %s\n",
                n < 0 || (size_t)n >= len ? "path of the entry is too long" : ard_errdetail());
        return -1;
    }
    return 0;
}

static int open_books(struct ardb_books *b, const char *domain)
{
    if (ardb_open(b, domain) < 0) {
        fprintf(stderr, "ardstart: %s\n", ard_errdetail());
        return -1;
    }
    return 0;
}

enum mode { M_START, M_LIST, M_LOG, M_READY, M_SYSTEM, M_HELP, M_VERSION };

struct cmdline {
    struct as_opts o;
    enum mode mode;
    bool raw;
    const char *system;
    const char *env[64], *hostmap[64];
};

/* A bare -w/--wait followed by a number: the user meant the time ("--wait 5"), but an
 * optional value must be attached, and "5" would be run as the command. */
static bool looks_like_seconds(const char *s)
{
    char *end;
    (void)strtod(s, &end);
    return end != s && *end == '\0';
}

enum {
    OPT_BINDIR = 256,
    OPT_LOG,
    OPT_READY,
    OPT_RAW,
    OPT_CWD_IF,
    OPT_AS_HOST,
    OPT_SYSTEM,
    OPT_SET_HOST,
    OPT_DRY_RUN,
    OPT_CHECK,
    OPT_RESTART,
    OPT_RESTART_DELAY,
    OPT_RESTART_LIMIT,
    OPT_VERSION
};
static const struct option longopts[] = {
    {"host", required_argument, NULL, 'H'},
    {"name", required_argument, NULL, 'n'},
    {"parent", required_argument, NULL, 'p'},
    {"wait", optional_argument, NULL, 'w'},
    {"domain", required_argument, NULL, 'd'},
    {"rsh", required_argument, NULL, 'e'},
    {"chdir", required_argument, NULL, 'C'},
    {"env", required_argument, NULL, 'E'},
    {"list", no_argument, NULL, 'l'},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, OPT_VERSION},
    {"remote-bindir", required_argument, NULL, OPT_BINDIR},
    {"log", no_argument, NULL, OPT_LOG},
    {"ready", no_argument, NULL, OPT_READY},
    {"raw", no_argument, NULL, OPT_RAW},
    {"cwd-if-exists", required_argument, NULL, OPT_CWD_IF},
    {"as-host", required_argument, NULL, OPT_AS_HOST},
    {"system", required_argument, NULL, OPT_SYSTEM},
    {"set-host", required_argument, NULL, OPT_SET_HOST},
    {"dry-run", no_argument, NULL, OPT_DRY_RUN},
    {"check", no_argument, NULL, OPT_CHECK},
    {"restart", required_argument, NULL, OPT_RESTART},
    {"restart-delay", required_argument, NULL, OPT_RESTART_DELAY},
    {"restart-limit", required_argument, NULL, OPT_RESTART_LIMIT},
    {NULL, 0, NULL, 0},
};

/* -w/--wait[=SECONDS] (its value, if any, in optarg); -1 after printing why. */
static int take_wait(struct as_opts *o, int argc, char **argv)
{
    o->wait_ms = 10000;
    if (optarg && *optarg == '=')
        optarg++; /* "-w=5" */
    if (optarg && parse_wait(optarg, &o->wait_ms) < 0)
        return -1;
    if (!optarg && optind < argc && looks_like_seconds(argv[optind])) {
        fprintf(stderr,
                "ardstart: --wait %s: attach the time, as in --wait=%s or -w%s (a bare "
                "--wait waits 10 s, and '%s' would be taken as the command)\n",
                argv[optind], argv[optind], argv[optind], argv[optind]);
        return -1;
    }
    return 0;
}

/* -E NAME=VALUE; -1 after printing why. */
static int take_env(struct cmdline *c, const char *v)
{
    struct as_opts *o = &c->o;
    if (!strchr(v, '=') || v[0] == '=') {
        fprintf(stderr, "ardstart: --env '%s': expected NAME=VALUE\n", v);
        return -1;
    }
    if (o->nenv == (int)(sizeof c->env / sizeof c->env[0])) {
        fprintf(stderr, "ardstart: more than %d --env options\n", o->nenv);
        return -1;
    }
    c->env[o->nenv++] = v;
    return 0;
}

/* --set-host ROLE=HOST; -1 after printing why. */
static int take_set_host(struct cmdline *c, const char *v)
{
    struct as_opts *o = &c->o;
    if (!strchr(v, '=') || v[0] == '=' ||
        o->nhostmap == (int)(sizeof c->hostmap / sizeof c->hostmap[0])) {
        fprintf(stderr, "ardstart: --set-host '%s': expected ROLE=HOST\n", v);
        return -1;
    }
    if (strchr(v, '=')[1] && ardb_check_host("--set-host", strchr(v, '=') + 1) < 0) {
        fprintf(stderr, "ardstart: %s\n", ard_errdetail());
        return -1;
    }
    c->hostmap[o->nhostmap++] = v;
    return 0;
}

/* --restart, --restart-delay or --restart-limit (ch) with value v; -1 after printing why. */
static int take_restart(struct as_opts *o, int ch, const char *v)
{
    const char *what = ch == OPT_RESTART         ? "--restart"
                       : ch == OPT_RESTART_DELAY ? "--restart-delay"
                                                 : "--restart-limit";
    int r = ch == OPT_RESTART ? as_parse_restart(what, v, &o->restart)
            : ch == OPT_RESTART_DELAY
                ? as_parse_restart_delay(what, v, &o->restart_delay_ns)
                : as_parse_restart_limit(what, v, &o->restart_limit, &o->restart_window_ns);
    if (r < 0) {
        fprintf(stderr, "ardstart: %s\n", ard_errdetail());
        return -1;
    }
    o->restart_given = true;
    return 0;
}

/* The option ch (getopt_long's answer) into c; 0 to go on, 1 when parsing ends here (--help,
 * --version), -1 after printing why. */
static int take_option(struct cmdline *c, int ch, int argc, char **argv)
{
    struct as_opts *o = &c->o;
    switch (ch) {
    case 'H':
        o->host = optarg;
        return 0;
    case 'n':
        o->name = optarg;
        return 0;
    case 'p':
        o->parent = optarg;
        return 0;
    case 'w':
        return take_wait(o, argc, argv);
    case 'd':
        o->domain = optarg;
        return 0;
    case 'e':
        o->rsh = optarg;
        return 0;
    case 'C':
        o->chdir = optarg;
        return 0;
    case 'E':
        return take_env(c, optarg);
    case 'l':
        c->mode = M_LIST;
        return 0;
    case 'q':
        o->quiet = true;
        return 0;
    case 'h':
        c->mode = M_HELP;
        return 1;
    case OPT_VERSION:
        c->mode = M_VERSION;
        return 1;
    case OPT_BINDIR:
        o->bindir = optarg;
        return 0;
    case OPT_LOG:
        c->mode = M_LOG;
        return 0;
    case OPT_READY:
        c->mode = M_READY;
        return 0;
    case OPT_RAW:
        c->raw = true;
        return 0;
    case OPT_CWD_IF:
        o->cwd_if = optarg;
        return 0;
    case OPT_AS_HOST:
        o->as_host = optarg;
        return 0;
    case OPT_SYSTEM:
        c->mode = M_SYSTEM;
        c->system = optarg;
        return 0;
    case OPT_SET_HOST:
        return take_set_host(c, optarg);
    case OPT_DRY_RUN:
        o->dry_run = true;
        return 0;
    case OPT_CHECK:
        o->check = true;
        return 0;
    case OPT_RESTART:
    case OPT_RESTART_DELAY:
    case OPT_RESTART_LIMIT:
        return take_restart(o, ch, optarg);
    default:
        usage(stderr);
        return -1;
    }
}

/* Options into c; returns -1 after printing why (usage error). */
static int parse_args(int argc, char **argv, struct cmdline *c)
{
    struct as_opts *o = &c->o;
    o->env = c->env;
    o->hostmap = c->hostmap;
    o->restart_delay_ns = AS_RESTART_DELAY_NS;
    o->restart_limit = AS_RESTART_LIMIT_N;
    o->restart_window_ns = AS_RESTART_LIMIT_NS;
    int ch;
    while ((ch = getopt_long(argc, argv, "+H:n:p:w::d:e:C:E:lqh", longopts, NULL)) != -1) {
        int r = take_option(c, ch, argc, argv);
        if (r != 0)
            return r > 0 ? 0 : -1;
    }
    o->argv = argv + optind;
    o->argc = argc - optind;
    if (ardb_opt_domain(o->domain, &o->domain) < 0) {
        fprintf(stderr, "ardstart: %s\n", ard_errdetail());
        return -1;
    }
    if (o->as_host && ardb_check_host("--as-host", o->as_host) < 0) {
        fprintf(stderr, "ardstart: %s\n", ard_errdetail());
        return -1;
    }
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

/* --list [PATH] and --log PATH: the path argument, checked. */
static int list_path(const struct as_opts *o, bool required, const char **path)
{
    if (o->argc > 1 || (required && o->argc != 1)) {
        usage(stderr);
        return -1;
    }
    *path = o->argc ? o->argv[0] : NULL;
    if (*path && ardb_check_path(*path) < 0) {
        fprintf(stderr, "ardstart: %s\n", ard_errdetail());
        return -1;
    }
    return 0;
}

static int cmd_list(const struct as_opts *o, bool raw)
{
    const char *path;
    if (list_path(o, false, &path) < 0)
        return AS_USAGE;
    struct ardb_books b;
    int r = ardb_open_existing(&b, o->domain);
    if (r < 0) {
        fprintf(stderr, "ardstart: %s\n", ard_errdetail());
        return AS_SYS;
    }
    int rc = as_list(&b, path, raw); /* books that do not exist yet list nothing */
    ardb_close(&b);
    return rc;
}

static int cmd_log(const struct as_opts *o)
{
    const char *path;
    if (list_path(o, true, &path) < 0)
        return AS_USAGE;
    struct ardb_books b;
    int r = ardb_open_existing(&b, o->domain);
    if (r < 0) {
        fprintf(stderr, "ardstart: %s\n", ard_errdetail());
        return AS_SYS;
    }
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

static int cmd_system(struct as_opts *o, const char *system)
{
    if (o->argc > 0 || o->host) {
        fprintf(stderr, "ardstart: --system takes no command and no -H (hosts are in the "
                        "file, or --set-host)\n");
        return AS_USAGE;
    }
    if (o->restart_given) {
        fprintf(stderr, "ardstart: --system: give the restart policy in the file (keys "
                        "restart, restart_delay, restart_limit), not as an option\n");
        return AS_USAGE;
    }
    if (o->name && ardi_check_name("entry", o->name, true) < 0) {
        fprintf(stderr, "ardstart: %s\n", ard_errdetail());
        return AS_USAGE;
    }
    export_env(o);
    struct ardb_books b;
    if (o->check && o->dry_run) {
        fprintf(stderr, "ardstart: --check and --dry-run exclude each other\n");
        return AS_USAGE;
    }
    bool starts = !o->dry_run && !o->check;
    if (starts && open_books(&b, o->domain) < 0)
        return AS_SYS;
    int rc = as_start_system(&b, o, system);
    if (starts)
        ardb_close(&b);
    return rc;
}

static int cmd_start(struct as_opts *o)
{
    if (o->argc < 1) {
        usage(stderr);
        return AS_USAGE;
    }
    char name[ARDB_MAX_NAME + 1];
    if (o->name) {
        if (ardi_check_name("entry", o->name, true) < 0) {
            fprintf(stderr, "ardstart: %s\n", ard_errdetail());
            return AS_USAGE;
        }
        ardb_copy(name, sizeof name, o->name);
    } else {
        ardb_default_name(o->argv[0], name, sizeof name);
    }
    char path[ARDB_MAX_PATH];
    if (as_entry_path(o, name, path, sizeof path) < 0)
        return AS_USAGE;
    if (o->host && ardb_check_host("host", o->host) < 0) {
        fprintf(stderr, "ardstart: %s\n", ard_errdetail());
        return AS_USAGE;
    }
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
    if (open_books(&b, o->domain) < 0)
        return AS_SYS;
    int rc = o->host ? as_start_remote(&b, o, path) : as_start_local(&b, o, path);
    ardb_close(&b);
    return rc;
}

int main(int argc, char **argv)
{
    ardb_main_init();
    static struct cmdline c;
    if (parse_args(argc, argv, &c) < 0)
        return AS_USAGE;
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
