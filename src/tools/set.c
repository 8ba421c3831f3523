/* set.c - `ard set CONN FIELD=VALUE...`: write one packet by hand; fields not named keep the
 * connection's last value. */
#include "ard.h"

#include <string.h>

const char ardt_set_usage[] =
    "usage: ard set CONNECTION FIELD=VALUE...\n"
    "  Write one packet on CONNECTION: the connection's last packet with the given fields\n"
    "  changed (zeros if nothing was sent yet). FIELD is a name, an element (q[2]) or fN for\n"
    "  unnamed field N; FIELD=V sets every element of an array, FIELD=V1,V2,... each one.\n"
    "  Integers are checked against their type's range; floats accept nan and inf.\n"
    "  Refused (exit 2) while a live writer owns the connection: its pid is named.\n";

struct assigns {
    char **v;
    int n;
};

/* Every assignment is checked on a scratch copy before the writer role is taken. */
static int check(struct ardt_writer *w, void *arg)
{
    const struct assigns *a = arg;
    if (w->t.nfields == 0)
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
    if (argc < 2 || argv[1][0] == '-')
        return ardt_err(ARDT_USAGE,
                        argc < 2 ? "which connection? (usage: ard set CONNECTION "
                                   "FIELD=VALUE...)"
                                 : "unknown option '%s' (see 'ard help set')",
                        argv[1]);
    if (argc < 3)
        return ardt_err(ARDT_USAGE, "nothing to set (usage: ard set CONNECTION FIELD=VALUE...)");
    struct assigns a = {argv + 2, argc - 2};
    struct ardt_writer w;
    int rc = ardt_writer_open(&w, argv[1], check, &a);
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
