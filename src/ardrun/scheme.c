/*
 * scheme.c - DIMSART's type-matching check of a whole group before anything runs, and the
 * order of each tick by data flow.
 */
#include "ardrun.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SCHEME_ERR(...)                                                                            \
    do {                                                                                           \
        fprintf(stderr, "ardrun: %s: ", g->name);                                                  \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fputc('\n', stderr);                                                                       \
        errors++;                                                                                  \
    } while (0)

static const char *tname(const struct ard_block_port *p, char *buf, size_t n)
{
    if (p->type == NULL || ard_type_normalize(p->type, buf, n) < 0)
        snprintf(buf, n, "(opaque)");
    return buf;
}

static const char *dname(enum ard_dir d)
{
    return d == ARD_IN ? "in" : "out";
}

/* Load every plugin, check parameters and wiring. Returns the number of errors. */
static int load_all(struct ardr_group *g, int *plugin_errors)
{
    int errors = 0;
    for (int i = 0; i < g->nblocks; i++) {
        struct ardr_block *b = &g->blocks[i];
        char what[64];
        snprintf(what, sizeof what, "block '%s'", b->name);
        int rc = b->own_copy ? ardr_plugin_load_new(&b->pl, b->path, what)
                             : ardr_plugin_load(&b->pl, b->path, what);
        if (rc < 0 || ardr_block_alloc(b) < 0) {
            SCHEME_ERR("%s", ard_errdetail());
            (*plugin_errors)++;
            continue;
        }
        if (ardr_block_params(b) < 0)
            SCHEME_ERR("%s", ard_errdetail());
        const struct ard_block_desc *d = b->pl.d;
        for (uint32_t p = 0; p < d->nports; p++)
            snprintf(b->conn[p], sizeof b->conn[p], "%s", d->ports[p].name);
        for (int w = 0; w < b->nwires; w++) {
            uint32_t p = 0;
            while (p < d->nports && strcmp(d->ports[p].name, b->wires[w].key))
                p++;
            if (p == d->nports) {
                SCHEME_ERR("block '%s' (%s): 'ard' wires port '%s', which the plugin does not "
                           "have",
                           b->name, d->name, b->wires[w].key);
                continue;
            }
            if (ardi_check_name("connection", b->wires[w].val, true) < 0) {
                SCHEME_ERR("block '%s' port '%s': %s", b->name, b->wires[w].key, ard_errdetail());
                continue;
            }
            snprintf(b->conn[p], sizeof b->conn[p], "%.63s", b->wires[w].val); /* checked above */
        }
    }
    return errors;
}

/* Pairwise agreement and writers inside the group. */
static int check_pairs(struct ardr_group *g)
{
    int errors = 0;
    for (int i = 0; i < g->nblocks; i++) {
        struct ardr_block *a = &g->blocks[i];
        if (!a->pl.d)
            continue;
        for (uint32_t p = 0; p < a->pl.d->nports; p++) {
            const struct ard_block_port *pa = &a->pl.d->ports[p];
            /* compare with every later side of the same connection (each pair once) */
            for (int j = i; j < g->nblocks; j++) {
                struct ardr_block *b = &g->blocks[j];
                if (!b->pl.d)
                    continue;
                for (uint32_t q = (j == i ? p + 1 : 0); q < b->pl.d->nports; q++) {
                    if (strcmp(a->conn[p], b->conn[q]))
                        continue;
                    const struct ard_block_port *pb = &b->pl.d->ports[q];
                    char ta[ARD_MAX_TYPE + 1], tb[ARD_MAX_TYPE + 1];
                    tname(pa, ta, sizeof ta);
                    tname(pb, tb, sizeof tb);
                    if (pa->dir == ARD_OUT && pb->dir == ARD_OUT)
                        SCHEME_ERR("connection '%s' has two writers: block '%s' port '%s' and "
                                   "block '%s' port '%s' (%zu bytes '%s' / %zu bytes '%s')",
                                   a->conn[p], a->name, pa->name, b->name, pb->name, pa->size, ta,
                                   pb->size, tb);
                    if (pa->size != pb->size || strcmp(ta, tb))
                        SCHEME_ERR("connection '%s': block '%s' port '%s' (%s, %zu bytes, type "
                                   "'%s') and block '%s' port '%s' (%s, %zu bytes, type '%s') "
                                   "disagree",
                                   a->conn[p], a->name, pa->name, dname(pa->dir), pa->size, ta,
                                   b->name, pb->name, dname(pb->dir), pb->size, tb);
                }
            }
        }
    }
    return errors;
}

static bool written_in_group(const struct ardr_group *g, const char *conn, int *who, int *port)
{
    for (int i = 0; i < g->nblocks; i++) {
        const struct ardr_block *b = &g->blocks[i];
        for (uint32_t p = 0; b->pl.d && p < b->pl.d->nports; p++)
            if (b->pl.d->ports[p].dir == ARD_OUT && !strcmp(b->conn[p], conn)) {
                if (who)
                    *who = i;
                if (port)
                    *port = (int)p;
                return true;
            }
    }
    return false;
}

/* Create every port: the library checks each against the connection as it exists outside
 * the group (size, type) and takes the writer lock (a live writer elsewhere is refused). Ports
 * refused for want of a descriptor (each keeps one) are one error, naming the limit. */
static int attach_all(struct ardr_group *g)
{
    int errors = 0, warnings = 0;
    unsigned long fd_short = 0;
    for (int i = 0; i < g->nblocks; i++) {
        struct ardr_block *b = &g->blocks[i];
        const struct ard_block_desc *d = b->pl.d;
        for (uint32_t p = 0; p < d->nports; p++) {
            const struct ard_block_port *pp = &d->ports[p];
            char t[ARD_MAX_TYPE + 1], pname[ARD_MAX_NAME + 1];
            tname(pp, t, sizeof t);
            if (pp->dir == ARD_IN && !written_in_group(g, b->conn[p], NULL, NULL)) {
                struct ard_conn_stat st;
                int rc = ard_conn_stat(NULL, b->conn[p], &st);
                if (rc < 0 || st.writer_pid == 0) {
                    if (g->strict)
                        SCHEME_ERR("block '%s' port '%s' (in, %zu bytes, type '%s'): nothing "
                                   "writes connection '%s' (no block of the group, no live "
                                   "writer)",
                                   b->name, pp->name, pp->size, t, b->conn[p]);
                    else {
                        fprintf(stderr,
                                "ardrun: %s: warning: block '%s' port '%s' (in, %zu bytes, type "
                                "'%s'): nothing writes connection '%s' yet (no block of the "
                                "group, no live writer)\n",
                                g->name, b->name, pp->name, pp->size, t, b->conn[p]);
                        warnings++;
                    }
                }
            }
            snprintf(pname, sizeof pname, "%s.%s", b->name, pp->name);
            b->port[p] = ard_create_on(pname, b->conn[p], pp->dir, pp->size, pp->type);
            if (b->port[p] == NULL && ardc_nofile_exhausted()) {
                fd_short++; /* (said once, after the others) */
            } else if (b->port[p] == NULL) {
                int code = ard_lasterror();
                struct ard_conn_stat st;
                char other[ARD_MAX_TYPE + 80] = "";
                if (code == ARD_ETYPE && ard_conn_stat(NULL, b->conn[p], &st) == 0)
                    snprintf(other, sizeof other, "; the connection has %zu bytes, type '%s'",
                             st.size, st.type[0] ? st.type : "(opaque)");
                SCHEME_ERR("block '%s' port '%s' (%s, %zu bytes, type '%s'), connection '%s': "
                           "%s%s",
                           b->name, pp->name, dname(pp->dir), pp->size, t, b->conn[p],
                           ard_errdetail(), other);
            }
        }
    }
    if (fd_short > 0) {
        char prog[ARD_MAX_NAME + 16], what[96];
        snprintf(prog, sizeof prog, "ardrun: %s", g->name);
        snprintf(what, sizeof what, "%lu ports of the group cannot be attached", fd_short);
        ardc_nofile_say_skipped(prog, fd_short, 16, what);
        errors++;
    }
    return errors;
}

int ardr_scheme_check(struct ardr_group *g)
{
    int plugin_errors = 0;
    int errors = load_all(g, &plugin_errors);
    if (plugin_errors)
        return -plugin_errors; /* cannot check a scheme whose blocks are unknown */
    errors += check_pairs(g);
    if (errors)
        return errors;
    return attach_all(g);
}

void ardr_scheme_order(struct ardr_group *g)
{
    bool done[ARDR_MAX_BLOCKS] = {false};
    for (int r = 0; r < g->nrates; r++) {
        struct ardr_rate *rt = &g->rates[r];
        rt->n = 0;
        int total = 0;
        for (int i = 0; i < g->nblocks; i++)
            total += g->blocks[i].rate == r;
        while (rt->n < total) {
            /* the first block (in YAML order) whose same-rate writers have all run */
            int pick = -1;
            for (int i = 0; i < g->nblocks && pick < 0; i++) {
                struct ardr_block *b = &g->blocks[i];
                if (b->rate != r || done[i])
                    continue;
                bool ready = true;
                for (uint32_t p = 0; ready && p < b->pl.d->nports; p++) {
                    int w;
                    if (b->pl.d->ports[p].dir == ARD_IN && !b->delayed[p] &&
                        written_in_group(g, b->conn[p], &w, NULL) && w != i &&
                        g->blocks[w].rate == r && !done[w])
                        ready = false;
                }
                if (ready)
                    pick = i;
            }
            if (pick < 0) {
                /* a cycle: the first waiting block reads its unscheduled inputs one tick late */
                for (int i = 0; i < g->nblocks && pick < 0; i++)
                    if (g->blocks[i].rate == r && !done[i])
                        pick = i;
                struct ardr_block *b = &g->blocks[pick];
                for (uint32_t p = 0; p < b->pl.d->nports; p++) {
                    int w, wp;
                    if (b->pl.d->ports[p].dir == ARD_IN &&
                        written_in_group(g, b->conn[p], &w, &wp) && w != pick &&
                        g->blocks[w].rate == r && !done[w]) {
                        b->delayed[p] = true;
                        fprintf(stderr,
                                "ardrun: %s: cycle: block '%s' port '%s' reads connection '%s' "
                                "(written by block '%s' port '%s') with a one-tick delay\n",
                                g->name, b->name, b->pl.d->ports[p].name, b->conn[p],
                                g->blocks[w].name, g->blocks[w].pl.d->ports[wp].name);
                    }
                }
            }
            done[pick] = true;
            rt->order[rt->n++] = pick;
        }
    }
}

/* Is connection `conn`, written by block w, read only by blocks of w's rate? Counts the
 * group's IN ports on it into *readers. */
static bool private_to_rate(const struct ardr_group *g, int w, const char *conn, int *readers)
{
    bool priv = true;
    *readers = 0;
    for (int j = 0; j < g->nblocks; j++) {
        const struct ardr_block *b = &g->blocks[j];
        for (uint32_t q = 0; q < b->pl.d->nports; q++)
            if (b->pl.d->ports[q].dir == ARD_IN && !strcmp(b->conn[q], conn)) {
                (*readers)++;
                priv = priv && b->rate == g->blocks[w].rate;
            }
    }
    return priv;
}

/* The hand-off of OUT port p of block b, private to its thread. Readers of the thread see
 * the connection's newest packet (a previous writer's) until b's first send, as they would
 * on shared memory. An ARD_PORT_WHOLE port gets two packet buffers (swapped after each
 * successful step), another one; a reload keeps the hand-off, and the port's flags with it
 * (ardr_plugin_same_ports). */
static int make_handoff(struct ardr_block *b, uint32_t p, int readers)
{
    /* the packets right after the hand-off's header, cache-line aligned: one allocation */
    size_t size = b->pl.d->ports[p].size, head = (sizeof(struct ardr_handoff) + 63) & ~(size_t)63;
    bool whole = (b->pl.d->ports[p].flags & ARD_PORT_WHOLE) != 0;
    size_t padded = (size + 63) & ~(size_t)63, n = head + (whole ? 2 : 1) * padded;
    struct ardr_handoff *h = aligned_alloc(64, n);
    if (h == NULL)
        return ardi_fail(ARD_ENOMEM, "block '%s': out of memory", b->name);
    memset(h, 0, n);
    uint8_t *pub = (uint8_t *)h + head;
    h->pkt[0] = pub;
    h->pkt[1] = whole ? pub + padded : NULL;
    h->pub = pub;
    h->size = size;
    h->readers = readers;
    struct ard_info in;
    const void *last = ard_sent(b->port[p], &in);
    if (last != NULL) {
        memcpy(pub, last, size);
        h->info = in;
    }
    b->ho[p] = h;
    return 0;
}

int ardr_scheme_handoff(struct ardr_group *g)
{
    int errors = 0;
    for (int i = 0; i < g->nblocks; i++) {
        struct ardr_block *b = &g->blocks[i];
        for (uint32_t p = 0; p < b->pl.d->nports; p++) {
            int readers;
            if (b->pl.d->ports[p].dir == ARD_OUT && b->ho[p] == NULL &&
                private_to_rate(g, i, b->conn[p], &readers) && make_handoff(b, p, readers) < 0)
                SCHEME_ERR("%s", ard_errdetail());
        }
    }
    for (int i = 0; i < g->nblocks; i++) {
        struct ardr_block *b = &g->blocks[i];
        for (uint32_t p = 0; p < b->pl.d->nports; p++) {
            int w, wp;
            b->src[p] = NULL;
            b->hsrc[p] = NULL;
            if (b->pl.d->ports[p].dir == ARD_IN && written_in_group(g, b->conn[p], &w, &wp) &&
                g->blocks[w].rate == b->rate) {
                if (g->blocks[w].ho[wp] != NULL)
                    b->hsrc[p] = g->blocks[w].ho[wp];
                else
                    b->src[p] = g->blocks[w].port[wp];
            }
        }
    }
    for (int i = 0; i < g->nblocks; i++)
        if (ardr_block_prepare(&g->blocks[i]) < 0)
            SCHEME_ERR("%s", ard_errdetail());
    return errors;
}
