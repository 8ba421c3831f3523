/*
 * system_check.c - `ardstart --system FILE --check`: how much of /dev/shm the description
 * needs, host by host, for the connections whose sizes it gives (their types under
 * `connections:`). A connection is on every host where a block wires it (a bridged one on
 * the writer's host and on each reader's); each takes its whole object, reserved when made.
 */
#include "system.h"

#include <stdio.h>
#include <string.h>
#include <sys/statvfs.h>

struct hostsum {
    const char *host; /* "" = the starting host */
    unsigned long long bytes;
    int sized, unsized;
};

static struct hostsum *host_entry(struct hostsum *h, int *nh, const char *host)
{
    for (int i = 0; i < *nh; i++)
        if (!strcmp(h[i].host, host))
            return &h[i];
    h[*nh] = (struct hostsum){.host = host};
    return &h[(*nh)++];
}

/* Does a block on `host` other than those before index `upto` wire `conn`? (each
 * connection counted once per host) */
static bool wired_before(const struct sys *s, int upto, const char *host, const char *conn)
{
    for (int i = 0; i < upto; i++) {
        const struct block *b = &s->blocks[i];
        if (strcmp(sys_host_of(s, b), host) != 0)
            continue;
        for (int k = 0; k < b->nwires; k++)
            if (!strcmp(b->wires[k].conn, conn))
                return true;
    }
    return false;
}

static const char *shown(const char *host, const char *local)
{
    return host[0] ? host : local;
}

static void human(char *buf, size_t n, unsigned long long b)
{
    if (b >= 10ull << 30)
        snprintf(buf, n, "%.1f GiB", (double)b / (1 << 30));
    else if (b >= 10ull << 20)
        snprintf(buf, n, "%.1f MiB", (double)b / (1 << 20));
    else
        snprintf(buf, n, "%.1f KiB", (double)b / 1024);
}

int sys_sizes(const struct sys *s)
{
    struct hostsum h[MAXB + 1];
    int nh = 0;
    host_entry(h, &nh, ""); /* the starting host first, also when it runs nothing */
    printf("%-32s %10s %12s  %s\n", "CONNECTION", "PACKET", "OBJECT", "HOSTS");
    for (int c = 0; c < s->nconns; c++) {
        const struct conn *cn = &s->conns[c];
        size_t obj = ardi_object_bytes(cn->size);
        char hosts[512] = "";
        size_t len = 0;
        for (int i = 0; i < s->nblocks; i++) {
            const struct block *b = &s->blocks[i];
            const char *host = sys_host_of(s, b);
            bool wires = false;
            for (int k = 0; k < b->nwires && !wires; k++)
                wires = !strcmp(b->wires[k].conn, cn->name);
            if (!wires || wired_before(s, i, host, cn->name))
                continue;
            struct hostsum *e = host_entry(h, &nh, host);
            e->bytes += obj;
            e->sized++;
            if (len < sizeof hosts)
                len += (size_t)snprintf(hosts + len, sizeof hosts - len, "%s%s", len ? " " : "",
                                        shown(host, s->local));
        }
        printf("%-32s %10zu %12zu  %s\n", cn->name, cn->size, obj, len ? hosts : "(no block)");
    }
    /* Connections wired by blocks without a size in the description. */
    for (int i = 0; i < s->nblocks; i++) {
        const struct block *b = &s->blocks[i];
        const char *host = sys_host_of(s, b);
        for (int k = 0; k < b->nwires; k++) {
            const char *conn = b->wires[k].conn;
            bool dup = false;
            for (int j = 0; j < k && !dup; j++)
                dup = !strcmp(b->wires[j].conn, conn);
            if (!sys_find_conn(s, conn) && !dup && !wired_before(s, i, host, conn))
                host_entry(h, &nh, host)->unsized++;
        }
    }
    printf("\n%-32s %12s  %s\n", "HOST", "/DEV/SHM", "CONNECTIONS");
    for (int i = 0; i < nh; i++) {
        char hb[32];
        human(hb, sizeof hb, h[i].bytes);
        printf("%-32s %12llu  %d (%s)", shown(h[i].host, s->local), h[i].bytes, h[i].sized, hb);
        if (h[i].unsized)
            printf(", and %d without a size in the description", h[i].unsized);
        putchar('\n');
    }
    printf("(not counted: connections without a size here, the bridges' counters and ardrun's "
           "group objects, a few KiB each)\n");
    struct statvfs vfs;
    if (statvfs(ARDI_SHM_DIR, &vfs) == 0) {
        unsigned long long avail = (unsigned long long)vfs.f_bavail * vfs.f_frsize;
        char hb[32];
        human(hb, sizeof hb, avail);
        printf("%s here (%s): %llu bytes free (%s)\n", ARDI_SHM_DIR, s->local, avail, hb);
        if (h[0].bytes > avail)
            printf("%s: does not fit here: %llu bytes more than " ARDI_SHM_DIR " has free\n",
                   s->local, h[0].bytes - avail);
    }
    return 0;
}
