/*
 * system.c - start a whole system from a YAML description (ardstart --system FILE).
 *
 * The description is turned into what a user would write by hand: a master script that
 * starts one script per subsystem (on its host, level by level with readiness), each of
 * which starts its blocks with their wiring. Where a connection's writer and a reader are
 * mapped to different hosts, the connection is bridged: one ardnet pair per pair of hosts
 * carries all of their connections (a receiving ardnet in the first subsystem that reads
 * one, before its blocks; a sending one after the last block that writes one).
 * The master runs as the system's entry, so `ardstart --list` shows the tree and
 * `ardkill NAME` stops it. Format: docs/ardstart.md, "System description".
 *
 * A block may be a plugin (`plugin:`): alone it runs as `ardrun --block`; with `group: G` it
 * runs inside the ardrun group G (`groups:`), which is one entry started where its first
 * block is listed, with the group YAML that ardrun reads generated here and handed to it on
 * its standard input. All blocks of a group run on one host.
 */
#include "system.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The description's loading (system_load.c) and its scripts (system_script.c). */
static int build(struct sys *s, const struct as_opts *o, struct ardb_str *master)
{
    if (sys_load(s, o) < 0)
        return -1;
    return sys_scripts(s, o, master);
}

int as_start_system(struct ardb_books *b, const struct as_opts *o, const char *file)
{
    struct sys *s = calloc(1, sizeof *s);
    if (!s)
        return AS_SYS;
    /* The name goes into comments of the generated scripts: a line break there would start
     * a command. */
    ardb_copy(s->shown, sizeof s->shown, file);
    for (char *p = s->shown; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
    FILE *f = fopen(file, "re");
    if (!f) {
        fprintf(stderr, "ardstart: cannot open '%s': %s\n", file, strerror(errno));
        free(s);
        return AS_USAGE;
    }
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fprintf(stderr, "ardstart: cannot read '%s': %s\n", file, strerror(EISDIR));
        fclose(f);
        free(s);
        return AS_USAGE;
    }
    /* A description needs 6 levels. */
    int rc = ardy_load(&s->y, file, &f, 16, false);
    fclose(f);
    if (rc < 0) {
        fprintf(stderr, "ardstart: %s\n", ard_errdetail());
        free(s);
        return rc == ARD_ENOMEM ? AS_SYS : AS_USAGE;
    }
    rc = AS_USAGE;
    /* Plugin paths are relative to the description's directory. */
    char *full = realpath(file, NULL);
    if (full) {
        *strrchr(full, '/') = '\0';
        ardb_copy(s->dir, sizeof s->dir, full[0] ? full : "/");
        free(full);
    } else {
        ardb_copy(s->dir, sizeof s->dir, ".");
    }
    struct ardb_str master = {0};
    if (build(s, o, &master) < 0) {
        fprintf(stderr, "ardstart: %s\n", ard_errdetail());
    } else {
        if (o->check) {
            rc = sys_sizes(s) == 0 ? AS_OK : AS_SYS;
        } else if (o->dry_run) {
            printf("%s", master.s);
            rc = AS_OK;
        } else {
            const char *name = o->name ? o->name : s->name;
            char path[ARDB_MAX_PATH];
            if (as_entry_path(o, name, path, sizeof path) < 0) {
                fprintf(stderr, "ardstart: %s\n", ard_errdetail());
                goto out;
            }
            char *argv[] = {"bash", "-c", master.s, (char *)name, NULL};
            struct as_opts mo = *o;
            mo.argv = argv;
            mo.argc = 4;
            /* The master is ready when every subsystem is: each may take 4 block waits. */
            int64_t ms = (int64_t)(o->wait_ms > 0 ? o->wait_ms : 20000) * (s->nsubs + 1) * 4;
            mo.wait_ms = ms > INT_MAX ? INT_MAX : (int)ms;
            rc = as_start_local(b, &mo, path);
        }
    }
out:
    ardb_str_free(&master);
    ardy_free(&s->y);
    free(s);
    return rc;
}
