/* counters.c - per-route counters as text (on SIGUSR1, at exit, and in --stats-file) and as
 * a local connection (--counters CONN) that the tools read while ardnet runs. */
#include "ard_common.h"
#include "ardn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const counter_names[ARDN_C_NCOUNTERS] = {
    [ARDN_C_RECEIVED] = "received",       [ARDN_C_SENT] = "sent",
    [ARDN_C_SEND_ERRORS] = "send_errors", [ARDN_C_RECV_ERRORS] = "recv_errors",
    [ARDN_C_REDUCED] = "reduced",         [ARDN_C_SKIPPED] = "skipped",
    [ARDN_C_SUPERSEDED] = "superseded",   [ARDN_C_FRAGMENTS] = "fragments",
    [ARDN_C_PACKED] = "packed",           [ARDN_C_QOS_INCOMPATIBLE] = "qos_incompatible",
    [ARDN_C_PACED] = "drop_paced",
};

static uint64_t get(_Atomic uint64_t *v)
{
    return atomic_load_explicit(v, memory_order_relaxed);
}

/* One line per route: "route NAME: received=.. sent=.. ... dropped=TOTAL cause=.. ...",
 * then one per shared destination ("output ...") and shared listening address ("input ..."). */
void ardn_counters_print(FILE *f, const struct ardn_plan *p)
{
    for (int i = 0; i < p->nroutes; i++) {
        struct ardn_route *r = &p->routes[i];
        fprintf(f, "route %s:", r->cfg.name);
        for (int c = 0; c < ARDN_C_NCOUNTERS; c++)
            fprintf(f, " %s=%llu", counter_names[c], (unsigned long long)get(&r->cnt.c[c]));
        uint64_t total = 0;
        for (int c = 1; c < ARDW_NCAUSES; c++)
            total += get(&r->cnt.drop[c]);
        fprintf(f, " dropped=%llu", (unsigned long long)total);
        for (int c = 1; c < ARDW_NCAUSES; c++)
            fprintf(f, " drop_%s=%llu", ardw_cause_name((enum ardw_cause)c),
                    (unsigned long long)get(&r->cnt.drop[c]));
        fputc('\n', f);
    }
    for (int k = 0; k < p->ndests; k++) {
        struct ardn_dest *d = &p->dests[k];
        if (d->nroutes > 1)
            fprintf(f, "output %s: datagrams=%llu packed=%llu packets=%llu send_errors=%llu\n",
                    d->text, (unsigned long long)get(&d->datagrams),
                    (unsigned long long)get(&d->packed), (unsigned long long)get(&d->packets),
                    (unsigned long long)get(&d->send_errors));
    }
    for (int k = 0; k < p->ninputs; k++) {
        struct ardn_input *in = &p->inputs[k];
        if (in->nroutes < 2)
            continue;
        uint64_t total = 0;
        for (int c = 1; c < ARDW_NCAUSES; c++)
            total += get(&in->drop[c]);
        fprintf(f, "input %s: datagrams=%llu packed=%llu dropped=%llu", in->text,
                (unsigned long long)get(&in->datagrams), (unsigned long long)get(&in->packed),
                (unsigned long long)total);
        for (int c = 1; c < ARDW_NCAUSES; c++)
            fprintf(f, " drop_%s=%llu", ardw_cause_name((enum ardw_cause)c),
                    (unsigned long long)get(&in->drop[c]));
        fputc('\n', f);
    }
    fflush(f);
}

/* Write to PATH.tmp and rename, so a reader never sees half a file. */
int ardn_counters_write_file(const char *path, const struct ardn_plan *p)
{
    char tmp[1100];
    if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp)
        return -1;
    FILE *f = fopen(tmp, "w");
    if (!f)
        return -1;
    ardn_counters_print(f, p);
    if (fclose(f) != 0 || rename(tmp, path) != 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

/* ---- --counters CONN --------------------------------------------------------------------- */

/* The packet: routes, outputs, inputs, pad (u32 each), then one u64 array per counter, indexed
 * like the lines of the text: R routes, D shared destinations, I shared listening addresses.
 * An array of length 0 is left out (a descriptor has no [0]). */
static const char *const dest_names[] = {"out_datagrams", "out_packed", "out_packets",
                                         "out_send_errors"};
static const char *const input_names[] = {"in_datagrams", "in_packed", "in_dropped"};
#define NDEST (sizeof dest_names / sizeof dest_names[0])
#define NINPUT (sizeof input_names / sizeof input_names[0])

static struct {
    ard_port *port, *names;
    uint8_t *pkt, *text;
    size_t size, text_size;
} cp;

static int shared_dests(const struct ardn_plan *p)
{
    int n = 0;
    for (int k = 0; k < p->ndests; k++)
        n += p->dests[k].nroutes > 1;
    return n;
}

static int shared_inputs(const struct ardn_plan *p)
{
    int n = 0;
    for (int k = 0; k < p->ninputs; k++)
        n += p->inputs[k].nroutes > 1;
    return n;
}

/* Append "NAME:u64[N] " (nothing for N 0); false when it does not fit. */
static bool add_field(char *buf, size_t len, size_t *at, const char *prefix, const char *name,
                      int n)
{
    if (n == 0)
        return true;
    int w = snprintf(buf + *at, len - *at, "%s%s%s:u64[%d]", *at ? " " : "", prefix, name, n);
    if (w < 0 || (size_t)w >= len - *at)
        return false;
    *at += (size_t)w;
    return true;
}

int ardn_counters_type(const struct ardn_plan *p, char *buf, size_t len)
{
    int r = p->nroutes, d = shared_dests(p), in = shared_inputs(p);
    int w = snprintf(buf, len, "routes:u32 outputs:u32 inputs:u32 pad:u32");
    bool ok = w > 0 && (size_t)w < len;
    size_t at = ok ? (size_t)w : 0;
    for (int c = 0; ok && c < ARDN_C_NCOUNTERS; c++)
        ok = add_field(buf, len, &at, "", counter_names[c], r);
    ok = ok && add_field(buf, len, &at, "", "dropped", r);
    for (int c = 1; ok && c < ARDW_NCAUSES; c++)
        ok = add_field(buf, len, &at, "drop_", ardw_cause_name((enum ardw_cause)c), r);
    for (size_t k = 0; ok && k < NDEST; k++)
        ok = add_field(buf, len, &at, "", dest_names[k], d);
    for (size_t k = 0; ok && k < NINPUT; k++)
        ok = add_field(buf, len, &at, "", input_names[k], in);
    if (!ok)
        return ardi_fail(ARD_EINVAL, "the counters' descriptor is longer than %zu characters",
                         len - 1);
    return 0;
}

static uint8_t *put_u32(uint8_t *o, uint32_t v)
{
    memcpy(o, &v, sizeof v);
    return o + sizeof v;
}

static uint8_t *put_u64(uint8_t *o, uint64_t v)
{
    memcpy(o, &v, sizeof v);
    return o + sizeof v;
}

/* The packet, in the order of ardn_counters_type (host order, as every local packet). */
static void fill(const struct ardn_plan *p, uint8_t *o)
{
    int r = p->nroutes;
    o = put_u32(o, (uint32_t)r);
    o = put_u32(o, (uint32_t)shared_dests(p));
    o = put_u32(o, (uint32_t)shared_inputs(p));
    o = put_u32(o, 0);
    for (int c = 0; c < ARDN_C_NCOUNTERS; c++)
        for (int i = 0; i < r; i++)
            o = put_u64(o, get(&p->routes[i].cnt.c[c]));
    for (int i = 0; i < r; i++) {
        uint64_t total = 0;
        for (int c = 1; c < ARDW_NCAUSES; c++)
            total += get(&p->routes[i].cnt.drop[c]);
        o = put_u64(o, total);
    }
    for (int c = 1; c < ARDW_NCAUSES; c++)
        for (int i = 0; i < r; i++)
            o = put_u64(o, get(&p->routes[i].cnt.drop[c]));
    for (size_t f = 0; f < NDEST; f++)
        for (int k = 0; k < p->ndests; k++) {
            struct ardn_dest *d = &p->dests[k];
            if (d->nroutes < 2)
                continue;
            _Atomic uint64_t *v[NDEST] = {&d->datagrams, &d->packed, &d->packets, &d->send_errors};
            o = put_u64(o, get(v[f]));
        }
    for (size_t f = 0; f < NINPUT; f++)
        for (int k = 0; k < p->ninputs; k++) {
            struct ardn_input *in = &p->inputs[k];
            if (in->nroutes < 2)
                continue;
            uint64_t total = 0;
            for (int c = 1; c < ARDW_NCAUSES; c++)
                total += get(&in->drop[c]);
            o = put_u64(o, f == 0 ? get(&in->datagrams) : f == 1 ? get(&in->packed) : total);
        }
}

/* One name, NUL-padded to ARDN_NAME_BYTES (cut when longer). */
static uint8_t *put_name(uint8_t *o, const char *s)
{
    size_t n = strnlen(s, ARDN_NAME_BYTES);
    memcpy(o, s, n);
    memset(o + n, 0, ARDN_NAME_BYTES - n);
    return o + ARDN_NAME_BYTES;
}

/* Route names, then destination texts, then input texts. */
static void fill_names(const struct ardn_plan *p, uint8_t *o)
{
    for (int i = 0; i < p->nroutes; i++)
        o = put_name(o, p->routes[i].cfg.name);
    for (int k = 0; k < p->ndests; k++)
        if (p->dests[k].nroutes > 1)
            o = put_name(o, p->dests[k].text);
    for (int k = 0; k < p->ninputs; k++)
        if (p->inputs[k].nroutes > 1)
            o = put_name(o, p->inputs[k].text);
}

/* The writer of `conn`. A connection left by an earlier run with another layout (no port
 * attached) is removed and created anew: it is ardnet's own. */
static ard_port *open_writer(const char *port, const char *conn, size_t size, const char *type)
{
    ard_port *pt = ard_create_on(port, conn, ARD_OUT, size, type);
    if (!pt && ard_lasterror() == ARD_ETYPE) {
        struct ard_conn_stat st = {.size = 0};
        if (ard_conn_stat(NULL, conn, &st) < 0)
            ; /* its detail says why */
        else if (st.writer_pid != 0)
            ardi_fail(ARD_EBUSY, "connection '%s' has a live writer (pid %d)", conn,
                      (int)st.writer_pid);
        else {
            int u = ard_conn_unlink(NULL, conn);
            if (u == 0 || u == ARD_ENOENT)
                pt = ard_create_on(port, conn, ARD_OUT, size, type);
            else if (u == ARD_EBUSY)
                ardi_fail(ARD_EBUSY,
                          "connection '%s' exists with another layout (%zu bytes, ardnet's "
                          "counters need %zu) and ports are still attached to it",
                          conn, st.size, size);
            /* else the unlink's detail says why */
        }
    }
    if (!pt) {
        int e = ard_lasterror();
        char why[512];
        snprintf(why, sizeof why, "%s", ard_errdetail()[0] ? ard_errdetail() : ard_strerror(e));
        return ardi_fail(e, "--counters: cannot write connection '%s': %s", conn, why), NULL;
    }
    return pt;
}

int ardn_counters_open(const char *conn, const struct ardn_plan *p)
{
    char type[ARD_MAX_TYPE + 1], names_conn[ARD_MAX_NAME + 8], names_type[64];
    int rc = ardn_counters_type(p, type, sizeof type);
    size_t size;
    if (rc == 0)
        rc = ard_type_parse(type, NULL, 0, NULL, &size);
    if (rc < 0)
        return rc;
    size_t nnames = (size_t)(p->nroutes + shared_dests(p) + shared_inputs(p));
    cp.size = size;
    cp.text_size = ARDN_NAME_BYTES * nnames;
    snprintf(names_conn, sizeof names_conn, "%.*s.names", ARDN_COUNTERS_MAX_NAME, conn);
    snprintf(names_type, sizeof names_type, "names:u8[%zu]", cp.text_size);
    cp.pkt = malloc(cp.size);
    cp.text = malloc(cp.text_size);
    if (!cp.pkt || !cp.text)
        return ardi_fail(ARD_ENOMEM, "--counters: out of memory");
    if (!(cp.port = open_writer("counters", conn, cp.size, type)) ||
        !(cp.names = open_writer("counters.names", names_conn, cp.text_size, names_type)))
        return ard_lasterror();
    return ardn_counters_publish(p, true);
}

int ardn_counters_publish(const struct ardn_plan *p, bool names)
{
    if (!cp.port)
        return 0;
    int rc = 0;
    if (names) {
        fill_names(p, cp.text);
        rc = ard_send(cp.names, cp.text);
    }
    fill(p, cp.pkt);
    int rc2 = ard_send(cp.port, cp.pkt);
    return rc < 0 ? rc : rc2;
}

void ardn_counters_close(void)
{
    if (cp.port)
        ard_close(cp.port);
    if (cp.names)
        ard_close(cp.names);
    free(cp.pkt);
    free(cp.text);
    memset(&cp, 0, sizeof cp);
}
