/* set.c - `ard set CONN FIELD=VALUE...`: write one packet by hand; fields not named keep the
 * connection's last value. */
#include "ard.h"

#include <string.h>

enum { O_TYPE = 1, O_SIZE };
static const struct ardt_opt opts[] = {ARDT_OPT_TYPE(O_TYPE), ARDT_OPT_SIZE(O_SIZE), {0}};
const struct ardt_spec ardt_set_spec = {
    "usage: ard set CONNECTION FIELD=VALUE... [--type DESC]\n"
    "       ard set CONNECTION --size BYTES\n"
    "  Write one packet on CONNECTION: the connection's last packet with the given fields\n"
    "  changed (zeros if nothing was sent yet). FIELD is a name, an element (q[2]) or fN for\n"
    "  unnamed field N; FIELD=V sets every element of an array, FIELD=V1,V2,... each one.\n"
    "  Integers are checked against their type's range; floats accept nan and inf.\n"
    "  Refused (exit 2) while a live writer owns the connection: its pid is named. With\n"
    "  --type (or --size for an opaque one, which gets one packet of zeros) a connection that\n"
    "  does not exist is created; one that exists must have that type (or size).\n",
    opts, 21, NULL, false};

struct assigns {
    char **v;
    int n;
};

/* Every assignment is checked on a scratch copy before the writer role is taken. */
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

int cmd_set(int argc, char **argv)
{
    const char *conn = NULL, *type = NULL;
    uint64_t size = 0;
    char *assign[argc];
    struct assigns a = {assign, 0};
    int rc = 0;
    struct ardt_optarg v;
    int id, ai = 0;
    while (rc == 0 && (id = ardt_opt_next(&ardt_set_spec, argc, argv, &ai, &v)) != ARDT_OPT_END) {
        if (id == ARDT_OPT_BAD)
            rc = ARDT_USAGE;
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
        return ardt_err(ARDT_USAGE, "which connection? (usage: ard set CONNECTION FIELD=VALUE...)");
    if (a.n == 0 && size == 0)
        return ardt_err(ARDT_USAGE, "nothing to set (usage: ard set CONNECTION FIELD=VALUE...)");
    struct ardt_writer w = {0};
    rc = ardt_writer_create(&w, conn, type, size, check, &a);
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
