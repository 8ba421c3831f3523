/*
 * remote.c - start on another host: record a remote entry here, then run ardstart there
 * through the transport; the real entry lives in that host's books under the same path.
 */
#include "ardstart.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The remote command line: the remote ardstart with everything that must travel. */
static void remote_command(const struct as_opts *o, const char *path, struct ardb_str *s)
{
    const char *bindir = o->bindir ? o->bindir : getenv("ARD_REMOTE_BINDIR");
    char prog[PATH_MAX + 16];
    if (bindir && *bindir)
        snprintf(prog, sizeof prog, "%s/ardstart", bindir);
    else
        snprintf(prog, sizeof prog, "ardstart");
    ardb_str_quote(s, prog);
    ardb_str_quote(s, "--as-host");
    ardb_str_quote(s, o->host);
    ardb_str_quote(s, "--domain");
    ardb_str_quote(s, o->domain);
    char parent[ARDB_MAX_PATH];
    ardb_copy(parent, sizeof parent, path);
    char *slash = strrchr(parent, '/');
    if (slash)
        *slash = '\0';
    else
        parent[0] = '\0';
    ardb_str_quote(s, "--parent");
    ardb_str_quote(s, parent);
    ardb_str_quote(s, "--name");
    ardb_str_quote(s, strrchr(path, '/') ? strrchr(path, '/') + 1 : path);
    ardb_str_quote(s, "--rsh");
    ardb_str_quote(s, ardb_rsh(o->rsh));
    if (bindir && *bindir) {
        ardb_str_quote(s, "--remote-bindir");
        ardb_str_quote(s, bindir);
    }
    if (o->wait_ms > 0)
        ardb_str_addf(s, " --wait=%.3f", o->wait_ms / 1000.0);
    if (o->quiet)
        ardb_str_quote(s, "--quiet");
    if (o->restart != AS_RESTART_NO) {
        ardb_str_addf(s, " --restart=%s --restart-delay=%.3f", as_restart_word(o->restart),
                      (double)o->restart_delay_ns / 1e9);
        if (o->restart_limit > 0)
            ardb_str_addf(s, " --restart-limit=%d/%.3f", o->restart_limit,
                          (double)o->restart_window_ns / 1e9);
        else
            ardb_str_add(s, " --restart-limit=none");
    }
    if (o->chdir) {
        ardb_str_quote(s, "--chdir");
        ardb_str_quote(s, o->chdir);
    } else {
        char cwd[PATH_MAX];
        if (getcwd(cwd, sizeof cwd)) {
            ardb_str_quote(s, "--cwd-if-exists");
            ardb_str_quote(s, cwd);
        }
    }
    for (int i = 0; i < o->nenv; i++) {
        ardb_str_quote(s, "--env");
        ardb_str_quote(s, o->env[i]);
    }
    ardb_str_quote(s, "--");
    for (int i = 0; i < o->argc; i++)
        ardb_str_quote(s, o->argv[i]);
}

int as_start_remote(struct ardb_books *b, const struct as_opts *o, const char *path)
{
    struct ardb_entry e = {0};
    ardb_copy(e.path, sizeof e.path, path);
    ardb_copy(e.host, sizeof e.host, o->host);
    e.remote = true;
    ardb_copy(e.rsh, sizeof e.rsh, ardb_rsh(o->rsh));
    const char *bindir = o->bindir ? o->bindir : getenv("ARD_REMOTE_BINDIR");
    ardb_copy(e.bindir, sizeof e.bindir, bindir ? bindir : "");
    e.state = ARDB_STARTING;
    e.start_ns = ardb_realtime_ns();
    as_quote_argv(o->argv, o->argc, e.cmd, sizeof e.cmd);

    struct ardb_str cmd = {0};
    remote_command(o, path, &cmd);
    char **argv;
    if (ardb_rsh_argv(e.rsh, o->host, cmd.s, &argv) < 0) {
        ardb_str_free(&cmd);
        fprintf(stderr, "ardstart: %s\n", ard_errdetail());
        return AS_USAGE;
    }
    /* Recorded before the remote start, so a starter killed meanwhile leaves a trace that
     * ardkill follows. A previous remote entry (old.path set) is put back if this start is
     * refused there. */
    struct ardb_entry old;
    int code = as_reserve(b, &e, true, &old);
    if (code != AS_OK) {
        fprintf(stderr, "ardstart: %s\n", ard_errdetail());
        ardb_str_free(&cmd);
        ardb_argv_free(argv);
        return code;
    }
    ardb_str_free(&cmd);
    fflush(NULL);
    /* Connecting is bounded by the transport (ConnectTimeout); this bounds the rest. */
    int64_t limit = 30000 + (int64_t)o->wait_ms;
    int status = 0;
    int rc = ardb_run(argv, limit, NULL, &status);
    ardb_argv_free(argv);

    if (rc < 0) {
        fprintf(stderr, "ardstart: %s: %s\n", path, ard_errdetail());
        code = AS_HOST;
    } else if (rc == 1) {
        fprintf(stderr,
                "ardstart: %s: no answer from %s within %.0f s (it may be running "
                "there; ardkill %s stops it)\n",
                path, o->host, (double)limit / 1000, path);
        code = AS_HOST;
    } else if (WIFEXITED(status) && WEXITSTATUS(status) == 255) {
        fprintf(stderr, "ardstart: %s: cannot reach host %s through '%s'\n", path, o->host, e.rsh);
        code = AS_HOST;
    } else if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
        fprintf(stderr,
                "ardstart: %s: no ardstart on host %s (set --remote-bindir or "
                "ARD_REMOTE_BINDIR)\n",
                path, o->host);
        code = AS_HOST;
    } else if (WIFEXITED(status)) {
        code = WEXITSTATUS(status);
    } else {
        fprintf(stderr, "ardstart: %s: transport to %s killed by signal %d\n", path, o->host,
                WTERMSIG(status));
        code = AS_HOST;
    }

    /* Keep the remote entry whenever the remote host has an entry for it (started, could not
     * execute or ended before ready - so the status shows in listings -, not ready yet, no
     * answer); drop it when the remote side recorded nothing (unreachable, refused). */
    bool keep =
        code == AS_OK || code == AS_EXEC || code == AS_DIED || code == AS_TIMEOUT || rc == 1;
    if (ardb_lock(b) < 0)
        goto sys;
    struct ardb_entry now;
    if (ardb_read(b, path, &now) == 0 && now.seq == e.seq) {
        if (keep) {
            now.state = ARDB_RUNNING;
            if (ardb_write(b, &now) < 0)
                fprintf(stderr, "ardstart: %s\n", ard_errdetail());
        } else if (old.path[0]) {
            if (ardb_write(b, &old) < 0)
                fprintf(stderr, "ardstart: %s\n", ard_errdetail());
        } else {
            ardb_remove(b, path);
        }
    }
    ardb_unlock(b);
    /* Remembered for "ardkill" of the whole domain, which sweeps every such host. */
    if (keep && ardb_note_host(b, o->host, e.rsh, e.bindir) < 0)
        fprintf(stderr, "ardstart: %s\n", ard_errdetail());
    return code;
sys:
    fprintf(stderr, "ardstart: %s\n", ard_errdetail());
    return AS_SYS;
}
