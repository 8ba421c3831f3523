/* write.c - writing packets by hand, shared by set, pub and siggen: adopt the connection's
 * type and last value, refuse a live writer, apply PATH=VALUE assignments. */
#include "ard.h"

#include <stdlib.h>
#include <string.h>

int ardt_assign(const struct ardt_type *t, void *pkt, const char *arg)
{
    const char *eq = strchr(arg, '=');
    if (eq == NULL || eq == arg)
        return ardi_fail(ARD_EOPTION, "'%s': expected FIELD=VALUE (e.g. q[2]=1.5)", arg);
    char path[128];
    size_t pl = (size_t)(eq - arg);
    if (pl >= sizeof path)
        return ardi_fail(ARD_EOPTION, "'%.40s...': field path too long", arg);
    memcpy(path, arg, pl);
    path[pl] = '\0';
    struct ardt_sel sel;
    int rc = ardt_sel_parse(t, path, &sel);
    if (rc)
        return rc;
    const struct ard_field *f = &t->fields[sel.field];
    const char *val = eq + 1;
    size_t nvals = 1;
    for (const char *c = val; *c; c++)
        nvals += *c == ',';
    if (nvals > 1 && nvals != sel.count)
        return ardi_fail(ARD_EOPTION, "%s: %zu values given, the field has %u element%s", arg,
                         nvals, sel.count, sel.count == 1 ? "" : "s");
    char *copy = strdup(val);
    if (!copy)
        return ardi_fail(ARD_ENOMEM, "out of memory");
    char *save = NULL, *tok = nvals > 1 ? strtok_r(copy, ",", &save) : copy;
    for (uint32_t k = 0; k < sel.count && rc == 0; k++) {
        char what[160];
        if (sel.count == 1 || f->count == 1)
            snprintf(what, sizeof what, "%s", path);
        else {
            char b[24];
            snprintf(what, sizeof what, "%s[%u]", ardt_field_name(t, sel.field, b, sizeof b),
                     sel.first + k);
        }
        if (tok == NULL || *tok == '\0') {
            rc = ardi_fail(ARD_EOPTION, "%s: empty value", what);
            break;
        }
        rc = ardt_set_text(f, pkt, sel.first + k, what, tok);
        if (nvals > 1)
            tok = strtok_r(NULL, ",", &save);
    }
    free(copy);
    return rc;
}

int ardt_writer_open(struct ardt_writer *w, const char *conn,
                     int (*check)(struct ardt_writer *w, void *arg), void *arg)
{
    int rc = 0;
    memset(w, 0, sizeof *w);
    w->conn = conn;
    if ((w->in = ardt_attach(conn, ARD_IN, &rc)) == NULL)
        return rc;
    size_t size = ard_port_size(w->in);
    if ((rc = ardt_type_init(&w->t, ard_port_type(w->in), size)) != 0)
        return rc;
    if ((w->pkt = calloc(1, size)) == NULL)
        return ardi_fail(ARD_ENOMEM, "out of memory");
    if (check && (rc = check(w, arg)) != 0)
        return rc;
    int r = ard_tryrec(w->in, w->pkt);
    if (r < 0 && r != ARD_ENODATA)
        return r;
    if ((w->out = ardt_attach(conn, ARD_OUT, &rc)) == NULL)
        return rc;
    /* The last value again, now that nobody else can write: nothing is lost in between. */
    r = ard_tryrec(w->in, w->pkt);
    if (r < 0 && r != ARD_ENODATA)
        return r;
    ard_close(w->in); /* a writer from here on: not counted among the readers */
    w->in = NULL;
    return 0;
}

void ardt_writer_close(struct ardt_writer *w)
{
    ard_close(w->out);
    ard_close(w->in);
    free(w->pkt);
    ardt_type_free(&w->t);
    memset(w, 0, sizeof *w);
}

/* Create `conn` unless it exists, through a port returned in *tmp that the caller closes once
 * its writer is attached (NULL when nothing was created or neither option was given). */
static int create(const char *conn, const char *type, uint64_t size, ard_port **tmp)
{
    *tmp = NULL;
    if (type == NULL && size == 0)
        return 0;
    size_t tsize = (size_t)size;
    if (type && ard_type_parse(type, NULL, 0, NULL, &tsize) < 0)
        return ardt_fail(ARD_EOPTION, "--type: %s", ard_errdetail());
    if (type && size && tsize != size)
        return ardi_fail(ARD_EOPTION, "--size %llu: type '%s' is %zu bytes (leave --size out)",
                         (unsigned long long)size, type, tsize);
    struct ardt_probe pr;
    int rc = ardt_probe(conn, &pr);
    if (rc == 0)
        return 0;
    if (rc != ARD_ENOENT)
        return rc;
    if ((rc = ardt_lib_init()) != 0)
        return rc;
    *tmp = ard_create_on("create", conn, ARD_IN, tsize, type);
    return *tmp ? 0 : ard_lasterror();
}

/* The connection (created or existing) matches --type / --size. */
static int check_created(const struct ardt_writer *w, const char *type, uint64_t size)
{
    const char *have = ard_port_type(w->out);
    size_t hsize = ard_port_size(w->out);
    if (type) {
        char a[ARD_MAX_TYPE + 1];
        if (ardi_type_layout(type, a, sizeof a) < 0 || !ardi_type_same_layout(a, have))
            return ardi_fail(ARD_EOPTION, "connection '%s' exists with type '%s', --type says '%s'",
                             w->conn, have[0] ? have : "(opaque)", type);
    } else if (size && (have[0] || hsize != size)) {
        return ardi_fail(ARD_EOPTION,
                         "connection '%s' exists with type '%s' (%zu bytes), --size says an "
                         "opaque %llu",
                         w->conn, have[0] ? have : "(opaque)", hsize, (unsigned long long)size);
    }
    return 0;
}

int ardt_assigns_check(struct ardt_writer *w, void *arg)
{
    const struct ardt_assigns *a = arg;
    if (w->t.nfields == 0 && a->n > 0)
        return ardi_fail(ARD_EOPTION, "connection '%s' is opaque (no type): no fields to set",
                         w->conn);
    for (int i = 0; i < a->n; i++) {
        int rc = ardt_assign(&w->t, w->pkt, a->v[i]);
        if (rc)
            return rc;
    }
    return 0;
}

int ardt_writer_create(struct ardt_writer *w, const char *conn, const char *type, uint64_t size,
                       int (*check)(struct ardt_writer *w, void *arg), void *arg)
{
    ard_port *tmp = NULL;
    int rc = create(conn, type, size, &tmp);
    if (rc == 0)
        rc = ardt_writer_open(w, conn, check, arg);
    ard_close(tmp); /* the writer holds the connection now */
    if (rc == 0)
        rc = check_created(w, type, size);
    return rc;
}
