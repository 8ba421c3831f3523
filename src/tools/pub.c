/* pub.c - `ard pub CONN FIELD=VALUE... --rate HZ`: write packets by hand at a fixed rate. */
#include "ard.h"

#include <string.h>

/* The command line of `ard pub`. */
struct pub_opts {
    const char *conn, *type;
    double rate;
    uint64_t count, size;
    struct ardt_assigns a; /* room for argc words */
};

static int add_word(void *dest, char *word)
{
    struct pub_opts *o = dest;
    if (o->conn == NULL)
        o->conn = word;
    else
        o->a.v[o->a.n++] = word;
    return 0;
}

static const struct ardc_opt opts[] = {
    {"rate", 'r', "HZ", "packets per second, 0.001 to 100000 (default 1)", .kind = ARDC_REAL,
     ARDC_DEST(struct pub_opts, rate), .min = 0.001, .max = 100000},
    {"count", 'n', "N",
     "stop after N packets (1 or more); 'forever' (the default) runs until\n"
     "interrupted; 0 is refused",
     .kind = ARDC_PACKETS, ARDC_DEST(struct pub_opts, count), .complete = "forever"},
    ARDT_OPT_TYPE(struct pub_opts),
    ARDT_OPT_SIZE(struct pub_opts),
    {0},
};
const struct ardc_optset ardt_pub_spec = {
    .see = "ard help pub",
    .head =
        "usage: ard pub CONNECTION [FIELD=VALUE...] [--rate HZ] [-n COUNT|forever]\n"
        "                          [--type DESC | --size BYTES]\n"
        "  Write packets on CONNECTION at a fixed rate until interrupted (or COUNT packets): the\n"
        "  connection's last packet with the given fields changed, as for 'ard set'. The rate is\n"
        "  kept with ard_period (absolute deadlines; missed periods are skipped, not caught up).\n"
        "  Refused (exit 2) while a live writer owns the connection: its pid is named. With\n"
        "  --type (or --size for an opaque one) a connection that does not exist is created; one\n"
        "  that exists must have that type (or size).\n",
    .opts = opts,
    .col = 21,
    .arg = add_word};

int cmd_pub(int argc, char **argv)
{
    const char *assign[argc];
    struct pub_opts o = {.rate = 1, .a = {assign, 0}};
    int rc = ardt_opts(&ardt_pub_spec, argc, argv, &o);
    if (rc)
        return ardt_liberr(rc);
    const char *conn = o.conn;
    const double rate = o.rate;
    const uint64_t count = o.count;
    struct ardt_assigns a = o.a;
    if (conn == NULL)
        return ardt_err(ARDT_USAGE, "which connection? (usage: ard pub CONNECTION FIELD=VALUE...)");
    ardt_signals();
    struct ardt_writer w = {0};
    rc = ardt_writer_create(&w, conn, o.type, o.size, ardt_assigns_check, &a);
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
