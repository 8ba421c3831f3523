/*
 * ardstart - start a block or a script, here or on another host, and keep books of it.
 * Options and exit codes: docs/ardstart.md.
 */
#include "ardstart.h"

#include "ard_common.h"
#include "ardnet.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* The library's failure detail, as "ardstart: DETAIL"; returns the exit code. */
static int report(int exit_code)
{
    fprintf(stderr, "ardstart: %s\n", ard_errdetail());
    return exit_code;
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
    static struct as_cmdline c;
    if (as_parse_args(argc, argv, &c) != 0)
        return report(AS_USAGE);
    switch (c.mode) {
    case AS_MODE_HELP:
        usage(stdout);
        return AS_OK;
    case AS_MODE_VERSION:
        printf("ardstart (ardnet) %s\n", ARD_VERSION);
        return AS_OK;
    case AS_MODE_READY:
        return cmd_ready(&c.o);
    case AS_MODE_LIST:
        return cmd_list(&c.o, c.raw);
    case AS_MODE_LOG:
        return cmd_log(&c.o);
    case AS_MODE_SYSTEM:
        return cmd_system(&c.o, c.system);
    case AS_MODE_START:
        if (c.o.check) {
            fprintf(stderr, "ardstart: --check goes with --system FILE\n");
            return AS_USAGE;
        }
        break;
    }
    return cmd_start(&c.o);
}
