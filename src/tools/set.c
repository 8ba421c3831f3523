/* set.c - `ard set CONN FIELD=VALUE...`: write one packet by hand; fields not named keep the
 * connection's last value. */
#include "ard.h"

#include <string.h>

/* The command line of `ard set`: the connection, its assignments, --type and --size. */
struct set_opts {
    const char *conn, *type;
    uint64_t size;
    struct ardt_assigns a; /* room for argc words */
};

static int add_word(void *dest, char *word)
{
    struct set_opts *o = dest;
    if (o->conn == NULL)
        o->conn = word;
    else
        o->a.v[o->a.n++] = word;
    return 0;
}

static const struct ardc_opt opts[] = {
    ARDT_OPT_TYPE(struct set_opts),
    ARDT_OPT_SIZE(struct set_opts),
    {0},
};
const struct ardc_optset ardt_set_spec = {
    .see = "ard help set",
    .head =
        "usage: ard set CONNECTION FIELD=VALUE... [--type DESC]\n"
        "       ard set CONNECTION --size BYTES\n"
        "  Write one packet on CONNECTION: the connection's last packet with the given fields\n"
        "  changed (zeros if nothing was sent yet). FIELD is a name, an element (q[2]) or fN for\n"
        "  unnamed field N; FIELD=V sets every element of an array, FIELD=V1,V2,... each one.\n"
        "  Integers are checked against their type's range; floats accept nan and inf.\n"
        "  Refused (exit 2) while a live writer owns the connection: its pid is named. With\n"
        "  --type (or --size for an opaque one, which gets one packet of zeros) a connection that\n"
        "  does not exist is created; one that exists must have that type (or size).\n",
    .opts = opts,
    .col = 21,
    .arg = add_word};

int cmd_set(int argc, char **argv)
{
    const char *assign[argc];
    struct set_opts o = {.a = {assign, 0}};
    int rc = ardt_opts(&ardt_set_spec, argc, argv, &o);
    if (rc)
        return ardt_liberr(rc);
    const char *conn = o.conn;
    struct ardt_assigns a = o.a;
    if (conn == NULL)
        return ardt_err(ARDT_USAGE, "which connection? (usage: ard set CONNECTION FIELD=VALUE...)");
    if (a.n == 0 && o.size == 0)
        return ardt_err(ARDT_USAGE, "nothing to set (usage: ard set CONNECTION FIELD=VALUE...)");
    struct ardt_writer w = {0};
    rc = ardt_writer_create(&w, conn, o.type, o.size, ardt_assigns_check, &a);
    for (int i = 0; rc == 0 && i < a.n; i++)
        rc = ardt_assign(&w.t, w.pkt, a.v[i]);
    if (rc == 0) {
        int r = ard_send(w.out, w.pkt);
        if (r < 0)
            rc = ardt_liberr(r);
    }
    ardt_writer_close(&w);
    return rc;
}
