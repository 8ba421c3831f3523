/* df.c - `ard df`: how much of /dev/shm the domain's connection objects take, and how much of
 * /dev/shm is used and free; objects not reserved whole (sparse) are named. */
#include "ard.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

struct df_opts {
    bool json;
};
static const struct ardc_opt opts[] = {
    {"json", 0, NULL, "one JSON object", .kind = ARDC_FLAG, ARDC_DEST(struct df_opts, json)},
    {0},
};
const struct ardc_optset ardt_df_spec = {
    .see = "ard help df",
    .head =
        "usage: ard df [--json]\n"
        "  How much of " ARDI_SHM_DIR " the domain's connection objects take (their size, and the\n"
        "  memory reserved for them), and the size, use and free space of " ARDI_SHM_DIR " itself\n"
        "  (all domains and other programs together). An object whose pages are not all reserved\n"
        "  (sparse: made by an older ardnet or by hand) is named: the next attach reserves it.\n",
    .opts = opts,
    .col = 10,
    .arg = ardt_no_arg};

struct df {
    unsigned long objects;
    unsigned long long bytes, reserved;
    char **sparse; /* names of the sparse objects */
    unsigned long *missing;
    size_t nsparse;
    int rc;
};

static int add(const char *name, void *arg)
{
    struct df *d = arg;
    char shm[ARDI_SHM_NAME_MAX], path[ARDI_SHM_NAME_MAX + sizeof ARDI_SHM_DIR];
    ardi_shm_name(shm, ardt_g.domain, name);
    snprintf(path, sizeof path, ARDI_SHM_DIR "%s", shm);
    struct stat st;
    if (stat(path, &st) < 0)
        return 0; /* removed meanwhile */
    unsigned long long have = (unsigned long long)st.st_blocks * 512u;
    d->objects++;
    d->bytes += (unsigned long long)st.st_size;
    d->reserved += have;
    if (have < (unsigned long long)st.st_size) {
        char **nv = realloc(d->sparse, (d->nsparse + 1) * sizeof *nv);
        unsigned long *nm = nv ? realloc(d->missing, (d->nsparse + 1) * sizeof *nm) : NULL;
        if (nv)
            d->sparse = nv;
        if (nm)
            d->missing = nm;
        char *s = strdup(name);
        if (!nv || !nm || !s) {
            free(s);
            d->rc = ardi_fail(ARD_ENOMEM, "out of memory");
            return 1;
        }
        d->missing[d->nsparse] = (unsigned long)((unsigned long long)st.st_size - have);
        d->sparse[d->nsparse++] = s;
    }
    return 0;
}

/* "1.5 MiB" */
static const char *human(char *buf, size_t n, unsigned long long b)
{
    static const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)b;
    int u = 0;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, n, "%llu B", b);
    else
        snprintf(buf, n, "%.1f %s", v, unit[u]);
    return buf;
}

int cmd_df(int argc, char **argv)
{
    struct df_opts o = {0};
    int orc = ardt_opts(&ardt_df_spec, argc, argv, &o);
    if (orc)
        return ardt_liberr(orc);
    bool json = o.json;
    struct statvfs vfs;
    if (statvfs(ARDI_SHM_DIR, &vfs) < 0)
        return ardt_err(ARDT_SYS, "statvfs(" ARDI_SHM_DIR "): %s", strerror(errno));
    unsigned long long fr = vfs.f_frsize;
    unsigned long long size = (unsigned long long)vfs.f_blocks * fr;
    unsigned long long used = (unsigned long long)(vfs.f_blocks - vfs.f_bfree) * fr;
    unsigned long long avail = (unsigned long long)vfs.f_bavail * fr;
    struct df d = {0};
    int rc = ard_conn_list(ardt_g.domain, add, &d);
    if (rc < 0 && d.rc == 0)
        d.rc = ardt_liberr(rc);
    if (d.rc == 0) {
        char a[32], b[32], c[32];
        if (json) {
            printf("{\"domain\": ");
            ardt_put_json_str(stdout, ardt_g.domain);
            printf(", \"objects\": %lu, \"bytes\": %llu, \"reserved\": %llu, \"sparse\": [",
                   d.objects, d.bytes, d.reserved);
            for (size_t i = 0; i < d.nsparse; i++) {
                printf("%s{\"name\": ", i ? ", " : "");
                ardt_put_json_str(stdout, d.sparse[i]);
                printf(", \"missing\": %lu}", d.missing[i]);
            }
            printf("], \"shm\": {\"path\": \"" ARDI_SHM_DIR
                   "\", \"size\": %llu, \"used\": %llu, \"free\": %llu}}\n",
                   size, used, avail);
        } else {
            printf("domain '%s': %lu object%s, %s (%llu bytes), %s reserved\n", ardt_g.domain,
                   d.objects, d.objects == 1 ? "" : "s", human(a, sizeof a, d.bytes), d.bytes,
                   human(b, sizeof b, d.reserved));
            for (size_t i = 0; i < d.nsparse; i++)
                printf("  sparse: %s (%lu bytes not reserved; the next attach reserves them)\n",
                       d.sparse[i], d.missing[i]);
            printf(ARDI_SHM_DIR ": %s in all, %s used, %s free (%llu bytes)\n",
                   human(a, sizeof a, size), human(b, sizeof b, used), human(c, sizeof c, avail),
                   avail);
        }
        if (!ardt_flush(stdout))
            d.rc = ARDT_OK;
    }
    for (size_t i = 0; i < d.nsparse; i++)
        free(d.sparse[i]);
    free(d.sparse);
    free(d.missing);
    return d.rc;
}
