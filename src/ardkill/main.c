/*
 * ardkill - stop what ardstart started: a subsystem and everything below it, on every host,
 * or with no name the whole system of the domain. Options and exit codes: docs/ardkill.md.
 */
#include "ardkill.h"

#include "ardc_opt.h"
#include "ardnet.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum mode { M_STOP, M_HELP, M_VERSION };

/* The command line: the options into o, the paths to stop in order (options may follow them). */
struct cmdline {
    struct ak_opts o;
    enum mode mode;
    char **paths;
    int npaths;
};

static int on_grace(void *dest, const struct ardc_opt *opt, const char *v)
{
    (void)opt;
    return ardb_opt_seconds("--grace", v, true, 3600, &((struct cmdline *)dest)->o.grace_ns);
}

/* --as-host: the host label given by the ardkill that called us through the transport. */
static int on_as_host(void *dest, const struct ardc_opt *opt, const char *v)
{
    (void)dest, (void)opt;
    int rc = ardb_check_host("--as-host", v);
    if (rc < 0)
        return rc;
    setenv("ARD_HOST", v, 1);
    return 0;
}

static int on_stop(void *dest, const struct ardc_opt *opt, const char *v)
{
    (void)v;
    ((struct cmdline *)dest)->mode = opt->set;
    return ARDC_OPT_STOP;
}

static int on_path(void *dest, char *word)
{
    struct cmdline *c = dest;
    c->paths[c->npaths++] = word;
    return 0;
}

#define KO(field) ARDC_DEST(struct cmdline, o.field)
static const struct ardc_opt rows[] = {
    {"domain", 'd', "NAME", "domain (default: $ARD_DOMAIN, else \"default\")", ARDC_TEXT,
     KO(domain)},
    {"grace", 'g', "SECONDS",
     "time between SIGTERM and SIGKILL (default 2;\n--grace 0.5 and --grace=0.5 alike)", ARDC_CALL,
     .call = on_grace},
    {"rsh", 'e', "COMMAND", "transport to other hosts (default: the one recorded\nat start)",
     ARDC_TEXT, KO(rsh)},
    {"unlink-domain", 'u', NULL, "also remove the domain's shared memory (implied\nwithout PATH)",
     ARDC_FLAG, KO(unlink)},
    {"quiet", 'q', NULL, "print errors only", ARDC_FLAG, KO(quiet)},
    {"help", 'h', NULL, "this text", ARDC_CALL, .call = on_stop, .set = M_HELP},
    {"version", 0, NULL, "print the version", ARDC_CALL, .call = on_stop, .set = M_VERSION},
    /* Given by the ardkill that calls us on another host. */
    {"as-host", 0, "HOST", NULL, ARDC_CALL, .call = on_as_host, .hidden = true},
    {"visited", 0, "HOSTS", NULL, ARDC_TEXT, KO(visited), .hidden = true},
    {0},
};

static const struct ardc_optset optset = {
    .see = "ardkill --help",
    .head = "usage: ardkill [OPTIONS] [PATH...]\n"
            "  Stops PATH and everything below it on every host, in reverse start order:\n"
            "  SIGTERM to each process group, SIGKILL after the grace time. Without PATH:\n"
            "  everything of the domain, and its shared memory is removed on every host.\n",
    .opts = rows,
    .col = 26,
    .tail = "exit codes: 0 stopped (or nothing was running), 1 a process survived,\n"
            "            2 a host was unreachable, 100 usage, 111 system error (also:\n"
            "            shared memory kept because it is still attached)\n",
    .arg = on_path,
};

/* The command line into c (c->paths holds argc entries); 0, or the failing code with its
 * detail. */
static int parse_args(int argc, char **argv, struct cmdline *c)
{
    int i = 1;
    int rc = ardc_opt_parse(&optset, 0, argc, argv, &i, c);
    if (rc || c->mode != M_STOP)
        return rc;
    if ((rc = ardb_opt_domain(c->o.domain, &c->o.domain)) < 0)
        return rc;
    for (int k = 0; k < c->npaths; k++)
        if ((rc = ardb_check_path(c->paths[k])) < 0)
            return rc;
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
    struct cmdline c = {.o = {.grace_ns = 2000000000LL}, .mode = M_STOP};
    if (!(c.paths = calloc((size_t)argc, sizeof *c.paths))) {
        fprintf(stderr, "ardkill: out of memory\n");
        return AK_SYS;
    }
    int rc = parse_args(argc, argv, &c);
    if (rc != 0) {
        fprintf(stderr, "ardkill: %s\n", ard_errdetail());
        rc = AK_USAGE;
    } else if (c.mode == M_HELP) {
        ardc_opt_usage(stdout, &optset, 0);
    } else if (c.mode == M_VERSION) {
        printf("ardkill (ardnet) %s\n", ARD_VERSION);
    } else {
        rc = cmd_stop(&c.o, c.paths, c.npaths);
    }
    free(c.paths);
    return rc;
}
