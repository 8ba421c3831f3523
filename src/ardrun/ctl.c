/*
 * ctl.c - `ardrun ctl GROUP CMD [BLOCK]`: lifecycle commands through the group's control
 * connection ("<GROUP>.ctl", answered on "<GROUP>.ctl-reply"), and a status table from its
 * stats connection ("<GROUP>.stats").
 */
#include "ardrun.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- ownership of the control connections ------------------------------------------- */

/* The object of connection `conn` in the domain in force: its path under /dev/shm. */
static void shm_path(char *path, size_t n, const char *conn)
{
    char shm[ARDI_SHM_NAME_MAX];
    ardi_shm_name(shm, ard_domain(), conn);
    snprintf(path, n, ARDI_SHM_DIR "%s", shm);
}

static int refuse_foreign(const char *conn, const struct stat *st)
{
    char path[ARDI_SHM_NAME_MAX + 16];
    shm_path(path, sizeof path, conn);
    return ardi_fail(ARD_EACCES,
                     "connection '%s' is owned by uid %u with mode %04o, not by uid %u who "
                     "runs the group: a group's control connections (.ctl, .ctl-reply, .stats, "
                     ".names) are never accepted from another user, whatever allow-foreign "
                     "says; remove the object (as uid %u or root): rm %s",
                     conn, (unsigned)st->st_uid, (unsigned)(st->st_mode & 07777),
                     (unsigned)geteuid(), (unsigned)st->st_uid, path);
}

ard_port *ardr_ctl_open(const char *port, const char *conn, enum ard_dir dir, size_t size,
                        const char *type)
{
    char path[ARDI_SHM_NAME_MAX + 16];
    shm_path(path, sizeof path, conn);
    struct stat st;
    /* an object that exists already must be this user's: say so before the library's own
     * check (which names allow-foreign) */
    if (stat(path, &st) == 0 && st.st_uid != geteuid()) {
        refuse_foreign(conn, &st);
        return NULL;
    }
    ard_port *p = ard_create_on(port, conn, dir, size, type);
    if (p == NULL) {
        int e = ard_lasterror();
        if (e == ARD_EACCES && stat(path, &st) == 0 && st.st_uid != geteuid())
            refuse_foreign(conn, &st); /* another user's object appeared meanwhile */
        return NULL;
    }
    /* The object attached is the one checked: an object of another user that replaced the
     * one looked at above is refused here, even with --ard-allow-foreign. */
    uint32_t owner = ard_port_uid(p);
    if (owner != (uint32_t)geteuid()) {
        if (owner != (uint32_t)-1 && stat(path, &st) == 0 && st.st_uid == owner)
            refuse_foreign(conn, &st);
        else
            ardi_fail(ARD_EACCES,
                      "connection '%s' is owned by uid %u, not by uid %u who runs the group: "
                      "a group's control connections are never accepted from another user",
                      conn, (unsigned)owner, (unsigned)geteuid());
        int e = ard_lasterror();
        char why[512];
        snprintf(why, sizeof why, "%s", ard_errdetail());
        ard_close(p);
        ardi_fail(e, "%s", why);
        return NULL;
    }
    return p;
}

/* `ardrun ctl`: may this user open the group's connection `conn` at all? If not, fail saying
 * so (exit 104) rather than that the group is not running. */
static int may_open(const char *conn)
{
    char path[ARDI_SHM_NAME_MAX + 16];
    shm_path(path, sizeof path, conn);
    struct stat st;
    if (stat(path, &st) < 0 || faccessat(AT_FDCWD, path, R_OK | W_OK, AT_EACCESS) == 0)
        return 0;
    ardi_fail(ARD_EACCES, "permission denied: connection '%s' is owned by uid %u with mode %04o",
              conn, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
    return ARDR_EXIT_CTL;
}

/* `ardrun ctl`: attach to an existing control connection of the running group (never create
 * one: an object left by this user would then stand in the group's way). */
static ard_port *attach(const char *port, const char *conn, enum ard_dir dir, size_t size)
{
    ard_port *p = ard_create_on(port, conn, dir, 0, NULL);
    if (p != NULL && ard_port_size(p) != size) {
        ard_close(p);
        ardi_fail(ARD_ETYPE, "connection '%s' has %zu-byte packets, not %zu: not ardrun's", conn,
                  ard_port_size(p), size);
        return NULL;
    }
    return p;
}

/* ---- the commands ---------------------------------------------------------------------- */

static int status(const char *group)
{
    char conn[ARD_MAX_NAME + 1];
    snprintf(conn, sizeof conn, "%s.stats", group);
    ard_port *in = ard_create_on("stats", conn, ARD_IN, 0, NULL);
    size_t size = ard_port_size(in);
    uint8_t *buf = calloc(1, size);
    int rc = buf ? ard_rec_timed(in, buf, 2000000000) : ARD_ENOMEM;
    if (rc < 0 || size < 16) {
        ardi_fail(rc < 0 ? rc : ARD_EINVAL, "group '%s': no statistics (%s)", group,
                  ard_strerror(rc));
        free(buf);
        return ARDR_EXIT_CTL;
    }
    uint64_t tick;
    uint32_t nb, nr;
    memcpy(&tick, buf, 8);
    memcpy(&nb, buf + 8, 4);
    memcpy(&nr, buf + 12, 4);
    if (16 + (size_t)nr * 16 + (size_t)nb * 40 != size) {
        ardi_fail(ARD_ETYPE, "'%s' is not an ardrun statistics connection", conn);
        free(buf);
        return ARDR_EXIT_CTL;
    }
    /* names of rates and blocks, if the group published them */
    char(*names)[32] = calloc(nr + nb, 32);
    snprintf(conn, sizeof conn, "%s.names", group);
    ard_port *np =
        names ? ard_create_on("names", conn, ARD_IN, 32 * ((size_t)nr + nb), NULL) : NULL;
    if (np == NULL || ard_tryrec(np, names) < 0)
        for (uint32_t i = 0; names && i < nr + nb; i++)
            snprintf(names[i], 32, "%u", i < nr ? i : i - nr);
    for (uint32_t i = 0; names && i < nr + nb; i++)
        names[i][31] = '\0';
    ard_close(np);
    if (names == NULL) {
        free(buf);
        return ardi_fail(ARD_ENOMEM, "out of memory"), ARDR_EXIT_SYS;
    }
    static const char *st[] = {"init", "running", "stopped", "failed"};
    printf("group %s: base tick %llu\n", group, (unsigned long long)tick);
    const uint8_t *cyc = buf + 16, *ovr = cyc + 8 * nr, *steps = ovr + 8 * nr;
    const uint8_t *fails = steps + 8 * nb, *mean = fails + 8 * nb, *max = mean + 8 * nb;
    const uint8_t *state = max + 8 * nb, *rate = state + 4 * nb;
    for (uint32_t r = 0; r < nr; r++) {
        uint64_t c, o;
        memcpy(&c, cyc + 8 * r, 8);
        memcpy(&o, ovr + 8 * r, 8);
        printf("  rate %s: cycles %llu overruns %llu\n", names[r], (unsigned long long)c,
               (unsigned long long)o);
    }
    printf("  %-16s %-10s %12s %8s %10s %10s  %s\n", "BLOCK", "RATE", "STEPS", "FAILS", "MEAN_NS",
           "MAX_NS", "STATE");
    for (uint32_t i = 0; i < nb; i++) {
        uint64_t sv, fv;
        int64_t mv, xv;
        int32_t s, r;
        memcpy(&sv, steps + 8 * i, 8);
        memcpy(&fv, fails + 8 * i, 8);
        memcpy(&mv, mean + 8 * i, 8);
        memcpy(&xv, max + 8 * i, 8);
        memcpy(&s, state + 4 * i, 4);
        memcpy(&r, rate + 4 * i, 4);
        printf("  %-16s %-10s %12llu %8llu %10lld %10lld  %s\n", names[nr + i],
               r >= 0 && (uint32_t)r < nr ? names[r] : "?", (unsigned long long)sv,
               (unsigned long long)fv, (long long)mv, (long long)xv,
               s >= 0 && s <= 3 ? st[s] : "?");
    }
    free(names);
    free(buf);
    return 0;
}

/* The group runs: its connection for the command may be opened and its stats connection
 * has a writer. 0 or the exit code with the detail. */
static int check_running(const char *group, bool is_status)
{
    struct ard_conn_stat st;
    char conn[ARD_MAX_NAME + 1];
    snprintf(conn, sizeof conn, "%s.%s", group, is_status ? "stats" : "ctl");
    int rc = may_open(conn);
    if (rc != 0)
        return rc;
    snprintf(conn, sizeof conn, "%s.stats", group);
    rc = ard_conn_stat(NULL, conn, &st);
    if (rc < 0 && rc != ARD_ENOENT) {
        char why[512];
        snprintf(why, sizeof why, "%s", ard_errdetail());
        return ardi_fail(rc, "group '%s': %s", group, why), ARDR_EXIT_CTL;
    }
    if (rc < 0 || st.writer_pid == 0)
        return ardi_fail(ARD_ENOENT, "group '%s' is not running in domain '%s'", group,
                         ard_domain()),
               ARDR_EXIT_CTL;
    return 0;
}

/* Sends command c to the group and prints its answer (10 s at most); the exit code (with the
 * detail). */
static int send_command(const char *group, const struct ardr_ctl *c)
{
    char conn[ARD_MAX_NAME + 1];
    snprintf(conn, sizeof conn, "%s.ctl-reply", group);
    ard_port *rep = attach("reply", conn, ARD_IN, sizeof(struct ardr_ctl_reply));
    snprintf(conn, sizeof conn, "%s.ctl", group);
    ard_port *out = rep ? attach("ctl", conn, ARD_OUT, sizeof(struct ardr_ctl)) : NULL;
    if (out == NULL) {
        int e = ard_lasterror();
        return e == ARD_EBUSY || e == ARD_ENOENT || e == ARD_EACCES || e == ARD_ETYPE
                   ? ARDR_EXIT_CTL
                   : ARDR_EXIT_SYS;
    }
    struct ardr_ctl_reply r;
    (void)!ard_tryrec(rep, &r); /* an old reply is not ours */
    if (ard_send(out, c) < 0)
        return ARDR_EXIT_SYS;
    int64_t deadline = ard_now_ns() + 10000000000LL; /* a reload runs init: give it time */
    for (;;) {
        int64_t left = deadline - ard_now_ns();
        int rc = ard_rec_timed(rep, &r, left);
        if (rc == ARD_ETIMEDOUT || left <= 0)
            return ardi_fail(ARD_ETIMEDOUT, "group '%s' did not answer within 10 s", group),
                   ARDR_EXIT_CTL;
        if (rc == 0 && r.id == c->id)
            break;
    }
    r.text[sizeof r.text - 1] = '\0';
    if (r.result < 0)
        return ardi_fail(r.result, "%s: %s", group, r.text), ARDR_EXIT_CTL;
    printf("%s\n", r.text);
    return 0;
}

/* The commands that name a block, by their ARDR_CMD_* number. */
static const char *const block_cmds[] = {
    [ARDR_CMD_STOP] = "stop",
    [ARDR_CMD_START] = "start",
    [ARDR_CMD_RELOAD] = "reload",
};

static void ctl_usage(FILE *f)
{
    ardc_opt_usage(f, &ardr_ctl_optset, ARDR_W_CTL);
}

/* The command of `ardrun ctl GROUP CMD [BLOCK]` (words[1..]) into c, or the usage error. */
static int ctl_command(const struct ardr_args *a, struct ardr_ctl *c)
{
    const char *cmd = a->words[1], *block = a->nwords == 3 ? a->words[2] : NULL;
    for (uint32_t k = 1; k < sizeof block_cmds / sizeof block_cmds[0]; k++)
        if (block_cmds[k] && strcmp(cmd, block_cmds[k]) == 0)
            c->cmd = k;
    if (c->cmd == 0 || block == NULL || strlen(block) >= sizeof c->block)
        return ardi_fail(ARD_EINVAL, "bad command '%s%s%s'", cmd, block ? " " : "",
                         block ? block : "");
    memcpy(c->block, block, strlen(block));
    c->id = (uint32_t)getpid() ^ (uint32_t)ard_now_ns();
    return 0;
}

/* The command line (the standard options applied), or the exit code after saying why not;
 * -1 to go on. */
static int ctl_args(struct ardr_args *a, int argc, char **argv)
{
    *a = (struct ardr_args){
        .where = ARDR_W_CTL, .first = 2, .maxwords = 3, .unknown = "unknown argument '%s'"};
    int rc = ardr_args_parse(&ardr_ctl_optset, a, argc, argv);
    if (rc == 0 && a->done)
        return 0;
    /* the starter's readiness belongs to whoever runs this command, never to it */
    if (rc == 0 && (rc = ardr_init_unready(a)) == 0 && a->nwords >= 2)
        return -1;
    if (rc < 0)
        fprintf(stderr, "ardrun ctl: %s\n", ard_errdetail());
    if (rc == 0 || a->usage)
        ctl_usage(stderr);
    return ARDR_EXIT_USAGE;
}

int ardr_cmd_ctl(int argc, char **argv)
{
    struct ardr_args a;
    int code = ctl_args(&a, argc, argv);
    ardr_args_free(&a);
    if (code >= 0)
        return code;
    const char *group = a.words[0];
    if (ardi_check_name("group", group, false) < 0 || strlen(group) > ARDR_NAME_MAX) {
        fprintf(stderr, "ardrun ctl: bad group name '%s'\n", group);
        return ARDR_EXIT_USAGE;
    }
    bool is_status = !strcmp(a.words[1], "status") && a.nwords == 2;
    code = check_running(group, is_status);
    if (code == 0 && is_status)
        code = status(group);
    struct ardr_ctl c = {0};
    if (code == 0 && !is_status && ctl_command(&a, &c) < 0) {
        fprintf(stderr, "ardrun ctl: %s\n", ard_errdetail());
        ctl_usage(stderr);
        return ARDR_EXIT_USAGE;
    }
    if (code == 0 && !is_status)
        code = send_command(group, &c);
    if (code != 0)
        fprintf(stderr, "ardrun ctl: %s\n", ard_errdetail());
    return code;
}
