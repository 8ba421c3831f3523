/* pub.c - `ard pub CONN FIELD=VALUE... --rate HZ`: write packets by hand at a fixed rate. */
#include "ard.h"

#include <string.h>

const char ardt_pub_usage[] =
    "usage: ard pub CONNECTION [FIELD=VALUE...] [--rate HZ] [-n COUNT|forever]\n"
    "                          [--type DESC | --size BYTES]\n"
    "  Write packets on CONNECTION at a fixed rate until interrupted (or COUNT packets): the\n"
    "  connection's last packet with the given fields changed, as for 'ard set'. The rate is\n"
    "  kept with ard_period (absolute deadlines; missed periods are skipped, not caught up).\n"
    "  Refused (exit 2) while a live writer owns the connection: its pid is named. With\n"
    "  --type (or --size for an opaque one) a connection that does not exist is created; one\n"
    "  that exists must have that type (or size).\n"
    "options:\n"
    "  -r, --rate HZ      packets per second, 0.001 to 100000 (default 1)\n"
    "  -n, --count N      stop after N packets (1 or more); 'forever' (the default) runs until\n"
    "                     interrupted; 0 is refused\n"
    "  -t, --type DESC    create the connection with this type if it does not exist\n"
    "  -s, --size BYTES   create an opaque connection of this size if it does not exist\n";

struct assigns {
    char **v;
    int n;
};

static int check(struct ardt_writer *w, void *arg)
{
    const struct assigns *a = arg;
    if (w->t.nfields == 0 && a->n > 0)
        return ardt_err(ARDT_USAGE, "connection '%s' is opaque (no type): no fields to set",
                        w->conn);
    for (int i = 0; i < a->n; i++) {
        int rc = ardt_assign(&w->t, w->pkt, a->v[i]);
        if (rc)
            return rc;
    }
    return 0;
}

int cmd_pub(int argc, char **argv)
{
    double rate = 1;
    uint64_t count = 0, size = 0;
    const char *conn = NULL, *type = NULL;
    char *assign[argc];
    struct assigns a = {assign, 0};
    int rc = 0;
    for (int i = 1; i < argc && rc == 0; i++) {
        const char *o = argv[i];
        bool r_ = !strcmp(o, "-r") || !strcmp(o, "--rate");
        bool n_ = !strcmp(o, "-n") || !strcmp(o, "--count");
        bool t_ = !strcmp(o, "-t") || !strcmp(o, "--type");
        bool s_ = !strcmp(o, "-s") || !strcmp(o, "--size");
        if (r_ || n_ || t_ || s_) {
            if (i + 1 >= argc)
                return ardt_err(ARDT_USAGE, "%s needs a value", o);
            const char *v = argv[++i];
            if (r_)
                rc = ardt_parse_double(o, v, 0.001, 100000, &rate);
            else if (n_)
                rc = ardt_parse_packets(o, v, &count);
            else if (t_)
                type = v;
            else if ((rc = ardt_parse_count(o, v, UINT32_MAX, &size)) == 0 && size == 0)
                rc = ardt_err(ARDT_USAGE, "%s 0: a connection holds at least 1 byte", o);
        } else if (o[0] == '-' && o[1] != '\0')
            rc = ardt_err(ARDT_USAGE, "unknown option '%s' (see 'ard help pub')", o);
        else if (conn == NULL)
            conn = o;
        else
            a.v[a.n++] = argv[i];
    }
    if (rc)
        return rc;
    if (conn == NULL)
        return ardt_err(ARDT_USAGE, "which connection? (usage: ard pub CONNECTION FIELD=VALUE...)");
    ardt_signals();
    struct ardt_writer w = {0};
    rc = ardt_writer_create(&w, conn, type, size, check, &a);
    for (int i = 0; rc == 0 && i < a.n; i++)
        rc = ardt_assign(&w.t, w.pkt, a.v[i]);
    ard_period per;
    if (rc == 0 && ard_period_init(&per, (int64_t)(1e9 / rate + 0.5)) < 0)
        rc = ardt_liberr(ard_lasterror());
    for (uint64_t sent = 0; rc == 0 && !ardt_stop && (count == 0 || sent < count); sent++) {
        int r = ard_send(w.out, w.pkt);
        if (r < 0)
            rc = ardt_liberr(r);
        else if (count == 0 || sent + 1 < count)
            ardt_period_wait(&per);
    }
    ardt_writer_close(&w);
    return rc;
}
