/* pub.c - `ard pub CONN FIELD=VALUE... --rate HZ`: write packets by hand at a fixed rate. */
#include "ard.h"

#include <string.h>

enum { O_RATE = 1, O_COUNT, O_TYPE, O_SIZE };
static const struct ardt_opt opts[] = {
    {O_RATE, "-r", "--rate", "HZ", "packets per second, 0.001 to 100000 (default 1)",
     .kind = ARDT_REAL, .min = 0.001, .max = 100000},
    {O_COUNT, "-n", "--count", "N",
     "stop after N packets (1 or more); 'forever' (the default) runs until\n"
     "interrupted; 0 is refused",
     .kind = ARDT_PACKETS, .complete = "forever"},
    ARDT_OPT_TYPE(O_TYPE),
    ARDT_OPT_SIZE(O_SIZE),
    {0},
};
const struct ardt_spec ardt_pub_spec = {
    "usage: ard pub CONNECTION [FIELD=VALUE...] [--rate HZ] [-n COUNT|forever]\n"
    "                          [--type DESC | --size BYTES]\n"
    "  Write packets on CONNECTION at a fixed rate until interrupted (or COUNT packets): the\n"
    "  connection's last packet with the given fields changed, as for 'ard set'. The rate is\n"
    "  kept with ard_period (absolute deadlines; missed periods are skipped, not caught up).\n"
    "  Refused (exit 2) while a live writer owns the connection: its pid is named. With\n"
    "  --type (or --size for an opaque one) a connection that does not exist is created; one\n"
    "  that exists must have that type (or size).\n",
    opts, 21, NULL, false};

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
    struct ardt_optarg v;
    int id, ai = 0;
    while (rc == 0 && (id = ardt_opt_next(&ardt_pub_spec, argc, argv, &ai, &v)) != ARDT_OPT_END) {
        if (id == ARDT_OPT_BAD)
            rc = ARDT_USAGE;
        else if (id == O_RATE)
            rate = v.d;
        else if (id == O_COUNT)
            count = v.u;
        else if (id == O_TYPE)
            type = v.s;
        else if (id == O_SIZE)
            rc = (size = v.u)
                     ? 0
                     : ardt_err(ARDT_USAGE, "%s 0: a connection holds at least 1 byte", v.opt);
        else if (conn == NULL)
            conn = v.s;
        else
            a.v[a.n++] = argv[ai];
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
