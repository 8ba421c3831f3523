/*
 * ardnet_mex.c - the Octave/MATLAB binding: one MEX function, ardnet_mex(COMMAND, ...), behind
 * the ard_*.m wrappers of this directory (docs/octave.md). Written against the MEX API only
 * (mex.h), so that the same source builds with Octave's `mkoctfile --mex` and MATLAB's `mex`;
 * the one exception, noticing Ctrl-C during a blocking receive, is marked where it is.
 *
 * Ports live in a table of this MEX file, addressed by a numeric handle. mexAtExit closes them
 * all (writer locks released) when the MEX file is cleared (`clear ardnet_mex`,
 * `clear functions`, `clear all`; MATLAB's `clear mex`) or the interpreter exits, and when
 * Ctrl-C interrupts a blocking receive. A script interrupted elsewhere (between calls of this
 * file) leaves its ports open; run again, it starts the block anew (cmd_port, cmd_init).
 */
#include "mex.h"

#include "ardnet.h"
#if ARD_HAVE_LOG
#include "ardnet_log.h"
#endif

#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Noticing Ctrl-C. The MEX API has no documented call for it. Octave exports its interrupt
 * flag `octave_interrupt_state` (C linkage, liboctave) and MATLAB an undocumented
 * utIsInterruptPending() (libut); both are referenced weakly, so whichever exists is used and
 * the file still links where neither does (then a blocking rec is interruptible only through
 * its timeout). */
#if defined(__GNUC__)
extern sig_atomic_t octave_interrupt_state __attribute__((weak));
extern bool utIsInterruptPending(void) __attribute__((weak));
#define ARDMEX_HAVE_WEAK 1
#endif

static bool interrupt_pending(void)
{
#ifdef ARDMEX_HAVE_WEAK
    if (&octave_interrupt_state != NULL && octave_interrupt_state > 0)
        return true;
    if (utIsInterruptPending != NULL && utIsInterruptPending())
        return true;
#endif
    return false;
}

#define SLICE_NS 50000000LL /* a blocking rec looks for Ctrl-C this often */
#define MAX_PORTS 1024

struct mport {
    ard_port *port;
    double handle;
    size_t nfields; /* 0: opaque (packet is a uint8 row vector) */
    struct ard_field *fields;
    char **names; /* field names as struct fields: the descriptor's, or fN */
    unsigned char *buf;
    size_t size;
    /* The declaration, to declare the port again when the block starts anew (restart). */
    char *decl_type; /* NULL: adopt the connection's */
    size_t decl_size;
    char *decl_conn; /* NULL: the port's name */
    enum ard_dir dir;
    bool since_init; /* declared after the last ard_init, or carried over by a second one */
};

static struct mport ports[MAX_PORTS];
static double next_handle;
static bool registered;
static bool initialized; /* ard_init succeeded since the last close_all */

/* ------------------------------------------------------------------------------------------
 * Errors: identifier "ardnet:ARD_EBUSY", message "ARD_EBUSY: <detail>"
 * ---------------------------------------------------------------------------------------- */

static const char *err_name(int code)
{
    static const char *const names[] = {
        "ARD_OK",     "ARD_EINVAL", "ARD_ENOMEM",     "ARD_ESYS",      "ARD_EOPTION",
        "ARD_ETYPE",  "ARD_EBUSY",  "ARD_ENODATA",    "ARD_ETIMEDOUT", "ARD_EACCES",
        "ARD_ENOENT", "ARD_ESTALE", "ARD_ERTREFUSED", "ARD_ESTATE",    "ARD_EINTR",
    };
    if (code <= 0 && -code < (int)(sizeof names / sizeof names[0]))
        return names[-code];
    return "ARD_EUNKNOWN";
}

/* Never returns. `detail` may be NULL for the library's own. */
static void fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void fail(int code, const char *fmt, ...)
{
    char id[64], msg[1024];
    snprintf(id, sizeof id, "ardnet:%s", err_name(code));
    if (fmt) {
        char detail[900];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(detail, sizeof detail, fmt, ap);
        va_end(ap);
        snprintf(msg, sizeof msg, "%s: %s", err_name(code), detail);
    } else {
        const char *d = ard_errdetail();
        snprintf(msg, sizeof msg, "%s: %s", err_name(code), d[0] ? d : ard_strerror(code));
    }
    mexErrMsgIdAndTxt(id, "%s", msg);
}

/* ------------------------------------------------------------------------------------------
 * The port table
 * ---------------------------------------------------------------------------------------- */

/* Forget the packet layout (mport_layout computes it again once the port is attached). */
static void mport_unlayout(struct mport *m)
{
    if (m->names)
        for (size_t i = 0; i < m->nfields; i++)
            free(m->names[i]);
    free(m->names);
    free(m->fields);
    free(m->buf);
    m->names = NULL;
    m->fields = NULL;
    m->buf = NULL;
    m->nfields = 0;
    m->size = 0;
}

static void mport_free(struct mport *m)
{
    ard_close(m->port);
    mport_unlayout(m);
    free(m->decl_type);
    free(m->decl_conn);
    memset(m, 0, sizeof *m);
}

static void close_all(void)
{
    for (size_t i = 0; i < MAX_PORTS; i++)
        if (ports[i].port)
            mport_free(&ports[i]);
    ard_fini();
    initialized = false;
}

/* The block starts anew (a script run again, docs/octave.md): the ports declared before the
 * last ard_init are closed (their handles become unknown), the ones declared since are
 * declared again, with their handles, into a library that has forgotten its options
 * (ard_fini), so that the next ard_init wires and attaches them as a first one does. */
static void restart(void)
{
    for (size_t i = 0; i < MAX_PORTS; i++)
        if (ports[i].port && !ports[i].since_init)
            mport_free(&ports[i]);
    char *names[MAX_PORTS] = {0};
    bool kept[MAX_PORTS] = {0};
    for (size_t i = 0; i < MAX_PORTS; i++)
        if (ports[i].port) {
            kept[i] = true;
            const char *n = ard_port_name(ports[i].port);
            names[i] = malloc(strlen(n) + 1);
            if (names[i])
                memcpy(names[i], n, strlen(n) + 1);
            ard_close(ports[i].port);
            ports[i].port = NULL;
            mport_unlayout(&ports[i]);
        }
    ard_fini();
    initialized = false;
    int err = 0;
    for (size_t i = 0; i < MAX_PORTS; i++) {
        struct mport *m = &ports[i];
        if (!kept[i])
            continue;
        if (names[i])
            m->port = ard_create_on(names[i], m->decl_conn, m->dir, m->decl_size, m->decl_type);
        if (!m->port && !err)
            err = names[i] ? ard_lasterror() : ARD_ENOMEM;
        m->since_init = false;
        free(names[i]);
        if (!m->port)
            mport_free(m);
    }
    if (err)
        fail(err, NULL); /* not expected: the same declarations succeeded before */
}

static void at_exit(void)
{
    close_all();
}

static void ensure_registered(void)
{
    if (registered)
        return;
    mexAtExit(at_exit);
    /* Handles of an earlier load of this MEX file must not name ports of this one. */
    next_handle = (double)(ard_realtime_ns() / 1000000 % 100000000);
    registered = true;
}

/* A handle is N * MAX_PORTS + slot with N counting port creations from a start taken from
 * the clock: found in one step, and not mistaken for a port of another load of the file. */
static struct mport *find_port(double h)
{
    if (!(h >= 0 && h < 9e15) || h != (double)(int64_t)h)
        return NULL;
    struct mport *m = &ports[(int64_t)h % MAX_PORTS];
    return m->port && m->handle == h ? m : NULL;
}

static struct mport *get_port(const mxArray *a)
{
    if (!a || !mxIsDouble(a) || mxGetNumberOfElements(a) != 1 || mxIsComplex(a))
        fail(ARD_EINVAL, "a port handle is a scalar returned by ard_port");
    double h = mxGetScalar(a);
    struct mport *m = find_port(h);
    if (!m)
        fail(ARD_ESTATE,
             "port handle %.0f is closed or unknown (closed, replaced by a port of the same "
             "name, the block started anew by ard_init, or the MEX file cleared since)",
             h);
    return m;
}

/* Parse the port's descriptor into fields once the size is known (adopting ports learn it
 * when they attach). Returns false when the port is not attached yet. */
static bool mport_layout(struct mport *m)
{
    if (m->buf)
        return true;
    size_t size = ard_port_size(m->port);
    if (size == 0)
        return false;
    const char *type = ard_port_type(m->port);
    size_t n = 0;
    if (type[0]) {
        int rc = ard_type_parse(type, NULL, 0, &n, NULL);
        if (rc < 0)
            fail(rc, NULL);
    }
    unsigned char *buf = calloc(1, size);
    struct ard_field *fields = n ? calloc(n, sizeof *fields) : NULL;
    char **names = n ? calloc(n, sizeof *names) : NULL;
    if (!buf || (n && (!fields || !names))) {
        free(buf), free(fields), free(names);
        fail(ARD_ENOMEM, "port '%s': packet of %zu bytes", ard_port_name(m->port), size);
    }
    if (n) {
        int rc = ard_type_parse(type, fields, n, &n, NULL);
        if (rc < 0) {
            free(buf), free(fields), free(names);
            fail(rc, NULL);
        }
        for (size_t i = 0; i < n; i++) {
            char tmp[ARD_MAX_FIELD_NAME + 24];
            if (fields[i].name[0])
                snprintf(tmp, sizeof tmp, "%s", fields[i].name);
            else
                snprintf(tmp, sizeof tmp, "f%zu", i);
            names[i] = malloc(strlen(tmp) + 1);
            if (names[i])
                memcpy(names[i], tmp, strlen(tmp) + 1);
            if (!names[i]) {
                for (size_t j = 0; j < i; j++)
                    free(names[j]);
                free(buf), free(fields), free(names);
                fail(ARD_ENOMEM, "field names");
            }
        }
    }
    m->buf = buf;
    m->fields = fields;
    m->names = names;
    m->nfields = n;
    m->size = size;
    return true;
}

static void need_layout(struct mport *m)
{
    if (!mport_layout(m))
        fail(ARD_ESTATE, "port '%s' is not attached yet (call ard_init first)",
             ard_port_name(m->port));
}

/* ------------------------------------------------------------------------------------------
 * Packets <-> arrays
 * ---------------------------------------------------------------------------------------- */

static mxClassID class_of(enum ard_basic k)
{
    switch (k) {
    case ARD_I8:
        return mxINT8_CLASS;
    case ARD_U8:
        return mxUINT8_CLASS;
    case ARD_I16:
        return mxINT16_CLASS;
    case ARD_U16:
        return mxUINT16_CLASS;
    case ARD_I32:
        return mxINT32_CLASS;
    case ARD_U32:
        return mxUINT32_CLASS;
    case ARD_I64:
        return mxINT64_CLASS;
    case ARD_U64:
        return mxUINT64_CLASS;
    case ARD_F32:
        return mxSINGLE_CLASS;
    case ARD_F64:
        return mxDOUBLE_CLASS;
    }
    return mxDOUBLE_CLASS;
}

/* The array of one field of `count` elements per packet, `rows` packets, one row each. */
static mxArray *field_array(const struct ard_field *f, size_t rows)
{
    return mxCreateNumericMatrix(rows, f->count, class_of(f->kind), mxREAL);
}

/* Copy field f of `packet` into row `row` of `a` (rows x count, column-major). */
static void put_row(mxArray *a, size_t rows, size_t row, const struct ard_field *f,
                    const unsigned char *packet)
{
    size_t es = ard_basic_size(f->kind);
    unsigned char *dst = (unsigned char *)mxGetData(a);
    const unsigned char *src = packet + f->offset;
    if (rows == 1) {
        memcpy(dst, src, es * f->count);
        return;
    }
    for (uint32_t j = 0; j < f->count; j++)
        memcpy(dst + (row + (size_t)j * rows) * es, src + (size_t)j * es, es);
}

static mxArray *packet_to_struct(const struct mport *m)
{
    if (m->nfields == 0) {
        mxArray *a = mxCreateNumericMatrix(1, m->size, mxUINT8_CLASS, mxREAL);
        memcpy(mxGetData(a), m->buf, m->size);
        return a;
    }
    mxArray *s = mxCreateStructMatrix(1, 1, (int)m->nfields, (const char **)m->names);
    for (size_t i = 0; i < m->nfields; i++) {
        mxArray *a = field_array(&m->fields[i], 1);
        put_row(a, 1, 0, &m->fields[i], m->buf);
        mxSetFieldByNumber(s, 0, (int)i, a);
    }
    return s;
}

/* Element i of numeric array `a` as double (for conversions between classes). */
static double elem_double(const mxArray *a, size_t i)
{
    const void *p = mxGetData(a);
    switch (mxGetClassID(a)) {
    case mxDOUBLE_CLASS:
        return ((const double *)p)[i];
    case mxSINGLE_CLASS:
        return ((const float *)p)[i];
    case mxINT8_CLASS:
        return ((const int8_t *)p)[i];
    case mxUINT8_CLASS:
        return ((const uint8_t *)p)[i];
    case mxINT16_CLASS:
        return ((const int16_t *)p)[i];
    case mxUINT16_CLASS:
        return ((const uint16_t *)p)[i];
    case mxINT32_CLASS:
        return ((const int32_t *)p)[i];
    case mxUINT32_CLASS:
        return ((const uint32_t *)p)[i];
    case mxINT64_CLASS:
        return (double)((const int64_t *)p)[i];
    case mxUINT64_CLASS:
        return (double)((const uint64_t *)p)[i];
    case mxLOGICAL_CLASS:
        return ((const mxLogical *)p)[i] ? 1.0 : 0.0;
    default:
        return 0.0;
    }
}

/* Round to nearest and saturate, as Octave and MATLAB convert to integer classes. */
static int64_t to_int(double v, double lo, double hi)
{
    if (v != v)
        return 0;
    v = v < 0 ? v - 0.5 : v + 0.5;
    if (v <= lo)
        return (int64_t)lo;
    if (v >= hi)
        return (int64_t)hi;
    return (int64_t)v;
}

static void store(enum ard_basic k, unsigned char *dst, double v)
{
    switch (k) {
    case ARD_I8: {
        int8_t x = (int8_t)to_int(v, INT8_MIN, INT8_MAX);
        memcpy(dst, &x, 1);
        break;
    }
    case ARD_U8: {
        uint8_t x = (uint8_t)to_int(v, 0, UINT8_MAX);
        memcpy(dst, &x, 1);
        break;
    }
    case ARD_I16: {
        int16_t x = (int16_t)to_int(v, INT16_MIN, INT16_MAX);
        memcpy(dst, &x, 2);
        break;
    }
    case ARD_U16: {
        uint16_t x = (uint16_t)to_int(v, 0, UINT16_MAX);
        memcpy(dst, &x, 2);
        break;
    }
    case ARD_I32: {
        int32_t x = (int32_t)to_int(v, INT32_MIN, INT32_MAX);
        memcpy(dst, &x, 4);
        break;
    }
    case ARD_U32: {
        uint32_t x = (uint32_t)to_int(v, 0, UINT32_MAX);
        memcpy(dst, &x, 4);
        break;
    }
    case ARD_I64: {
        int64_t x = v != v                        ? 0
                    : v >= 9223372036854775807.0  ? INT64_MAX
                    : v <= -9223372036854775808.0 ? INT64_MIN
                                                  : (int64_t)(v < 0 ? v - 0.5 : v + 0.5);
        memcpy(dst, &x, 8);
        break;
    }
    case ARD_U64: {
        uint64_t x = v != v || v <= 0              ? 0
                     : v >= 18446744073709551615.0 ? UINT64_MAX
                                                   : (uint64_t)(v + 0.5);
        memcpy(dst, &x, 8);
        break;
    }
    case ARD_F32: {
        float x = (float)v;
        memcpy(dst, &x, 4);
        break;
    }
    case ARD_F64:
        memcpy(dst, &v, 8);
        break;
    }
}

static void fill_field(const struct mport *m, size_t i, const mxArray *a)
{
    const struct ard_field *f = &m->fields[i];
    const char *port = ard_port_name(m->port);
    if (!(mxIsNumeric(a) || mxIsLogical(a)) || mxIsComplex(a) || mxIsSparse(a))
        fail(ARD_ETYPE, "port '%s': field '%s' must be a real numeric array (%s[%u]), not %s", port,
             m->names[i], ard_basic_name(f->kind), f->count, mxGetClassName(a));
    if (mxGetNumberOfElements(a) != f->count)
        fail(ARD_ETYPE, "port '%s': field '%s' has %zu elements, the type says %s[%u]", port,
             m->names[i], mxGetNumberOfElements(a), ard_basic_name(f->kind), f->count);
    size_t es = ard_basic_size(f->kind);
    unsigned char *dst = m->buf + f->offset;
    if (mxGetClassID(a) == class_of(f->kind)) {
        memcpy(dst, mxGetData(a), es * f->count);
        return;
    }
    for (uint32_t j = 0; j < f->count; j++)
        store(f->kind, dst + (size_t)j * es, elem_double(a, j));
}

static void struct_to_packet(const struct mport *m, const mxArray *s)
{
    const char *port = ard_port_name(m->port);
    if (m->nfields == 0) {
        if (!(mxIsUint8(s) || mxIsInt8(s)) || mxGetNumberOfElements(s) != m->size)
            fail(ARD_ETYPE, "port '%s' is opaque: send a uint8 vector of %zu bytes", port, m->size);
        memcpy(m->buf, mxGetData(s), m->size);
        return;
    }
    if (!mxIsStruct(s) || mxGetNumberOfElements(s) != 1)
        fail(ARD_ETYPE, "port '%s': send takes one struct with the fields of '%s'", port,
             ard_port_type(m->port));
    int nf = mxGetNumberOfFields(s);
    for (int k = 0; k < nf; k++) {
        const char *fn = mxGetFieldNameByNumber(s, k);
        size_t i;
        for (i = 0; i < m->nfields; i++)
            if (strcmp(fn, m->names[i]) == 0)
                break;
        if (i == m->nfields)
            fail(ARD_ETYPE, "port '%s': the struct has field '%s', the type '%s' has not", port, fn,
                 ard_port_type(m->port));
    }
    for (size_t i = 0; i < m->nfields; i++) {
        const mxArray *a = mxGetField(s, 0, m->names[i]);
        if (!a)
            fail(ARD_ETYPE, "port '%s': the struct lacks field '%s' of type '%s'", port,
                 m->names[i], ard_port_type(m->port));
        fill_field(m, i, a);
    }
}

/* ------------------------------------------------------------------------------------------
 * Arguments
 * ---------------------------------------------------------------------------------------- */

/* A string argument into buf; false when `a` is not a (row) char array. */
static bool get_str(const mxArray *a, char *buf, size_t len)
{
    if (!a || !mxIsChar(a) || mxGetM(a) > 1)
        return false;
    if (mxGetNumberOfElements(a) == 0) {
        buf[0] = 0;
        return true;
    }
    return mxGetString(a, buf, len) == 0;
}

static void want_args(int nrhs, int lo, int hi, const char *usage)
{
    if (nrhs < lo || nrhs > hi)
        fail(ARD_EINVAL, "usage: %s", usage);
}

/* ------------------------------------------------------------------------------------------
 * Commands
 * ---------------------------------------------------------------------------------------- */

/* port(name, dir, type, size, connection): type '' + size 0 adopts the connection's. */
static void cmd_port(int nlhs, mxArray *plhs[], int nrhs, const mxArray *prhs[])
{
    (void)nlhs;
    want_args(nrhs, 5, 5, "ard_port(NAME, DIR, TYPE, 'size', N, 'connection', CONN)");
    char name[256], dir[8], conn[256];
    char *type = NULL;
    if (!get_str(prhs[0], name, sizeof name))
        fail(ARD_EINVAL, "ard_port: NAME must be a string");
    if (!get_str(prhs[1], dir, sizeof dir) || (strcmp(dir, "in") && strcmp(dir, "out")))
        fail(ARD_EINVAL, "ard_port '%s': DIR must be 'in' or 'out'", name);
    if (!mxIsEmpty(prhs[2])) {
        if (!mxIsChar(prhs[2]) || !(type = mxArrayToString(prhs[2])))
            fail(ARD_EINVAL, "ard_port '%s': TYPE must be a descriptor string", name);
    }
    if (!mxIsDouble(prhs[3]) || mxGetNumberOfElements(prhs[3]) != 1 || mxGetScalar(prhs[3]) < 0)
        fail(ARD_EINVAL, "ard_port '%s': size must be a non-negative scalar", name);
    size_t size = (size_t)mxGetScalar(prhs[3]);
    if (!get_str(prhs[4], conn, sizeof conn))
        fail(ARD_EINVAL, "ard_port '%s': connection must be a string", name);
    if (type && size == 0) {
        size_t n;
        int rc = ard_type_parse(type, NULL, 0, &n, &size);
        if (rc < 0) {
            mxFree(type);
            fail(rc, NULL);
        }
    }
    /* A name that is still open: a script run again (after Ctrl-C, say). The port is
     * replaced; if it was declared before the last ard_init, the block starts anew (restart)
     * so that the run wires and attaches its ports as the first run did. */
    for (size_t i = 0; i < MAX_PORTS; i++)
        if (ports[i].port && strcmp(ard_port_name(ports[i].port), name) == 0) {
            bool again = initialized && !ports[i].since_init;
            mport_free(&ports[i]);
            if (again)
                restart();
            break;
        }
    size_t slot;
    for (slot = 0; slot < MAX_PORTS && ports[slot].port; slot++)
        ;
    if (slot == MAX_PORTS) {
        mxFree(type);
        fail(ARD_ENOMEM, "ard_port '%s': %d ports are open, the most this binding holds", name,
             MAX_PORTS);
    }
    enum ard_dir d = strcmp(dir, "in") ? ARD_OUT : ARD_IN;
    char *dtype = type ? malloc(strlen(type) + 1) : NULL;
    char *dconn = conn[0] ? malloc(strlen(conn) + 1) : NULL;
    if ((type && !dtype) || (conn[0] && !dconn)) {
        free(dtype), free(dconn), mxFree(type);
        fail(ARD_ENOMEM, "ard_port '%s'", name);
    }
    if (dtype)
        memcpy(dtype, type, strlen(type) + 1);
    if (dconn)
        memcpy(dconn, conn, strlen(conn) + 1);
    mxFree(type);
    ard_port *p = ard_create_on(name, dconn, d, size, dtype);
    if (!p) {
        free(dtype), free(dconn);
        fail(ard_lasterror(), NULL);
    }
    struct mport *m = &ports[slot];
    m->port = p;
    m->handle = next_handle++ * MAX_PORTS + (double)slot;
    m->decl_type = dtype;
    m->decl_size = size;
    m->decl_conn = dconn;
    m->dir = d;
    m->since_init = initialized;
    plhs[0] = mxCreateDoubleScalar(m->handle);
}

/* init(args): args a cell of strings; returns them without the --ard* options. */
static void cmd_init(int nlhs, mxArray *plhs[], int nrhs, const mxArray *prhs[])
{
    (void)nlhs;
    want_args(nrhs, 1, 1, "ard_init(ARGS)");
    if (!mxIsCell(prhs[0]))
        fail(ARD_EINVAL, "ard_init: ARGS must be a cell array of strings");
    size_t n = mxGetNumberOfElements(prhs[0]);
    char **argv = mxCalloc(n + 2, sizeof *argv);
    argv[0] = "octave";
    for (size_t i = 0; i < n; i++) {
        const mxArray *e = mxGetCell(prhs[0], i);
        if (!e || !mxIsChar(e) || !(argv[i + 1] = mxArrayToString(e)))
            fail(ARD_EINVAL, "ard_init: ARGS{%zu} is not a string", i + 1);
    }
    /* Again after a successful ard_init (a script run again): the block starts anew, keeping
     * the ports declared since the last one. */
    bool again = initialized;
    if (again)
        restart();
    int argc = (int)n + 1;
    int rc = ard_init(&argc, argv);
    if (rc < 0)
        fail(rc, NULL);
    initialized = true;
    for (size_t i = 0; i < MAX_PORTS; i++)
        if (ports[i].port)
            ports[i].since_init = again;
    for (size_t i = 0; i < MAX_PORTS; i++)
        if (ports[i].port)
            (void)mport_layout(&ports[i]);
    plhs[0] = mxCreateCellMatrix(1, (size_t)argc - 1);
    for (int i = 1; i < argc; i++)
        mxSetCell(plhs[0], (size_t)i - 1, mxCreateString(argv[i]));
}

static void cmd_send(int nlhs, mxArray *plhs[], int nrhs, const mxArray *prhs[])
{
    (void)nlhs, (void)plhs;
    want_args(nrhs, 2, 2, "ard_send(PORT, PACKET)");
    struct mport *m = get_port(prhs[0]);
    need_layout(m);
    struct_to_packet(m, prhs[1]);
    int rc = ard_send(m->port, m->buf);
    if (rc < 0)
        fail(rc, NULL);
}

/* rec(port, timeout_s): timeout < 0 waits without limit. Returns the packet, or [] when the
 * timeout passed; ARD_EINTR error on Ctrl-C. */
static void cmd_rec(int nlhs, mxArray *plhs[], int nrhs, const mxArray *prhs[])
{
    (void)nlhs;
    want_args(nrhs, 2, 2, "ard_rec(PORT, TIMEOUT)");
    struct mport *m = get_port(prhs[0]);
    need_layout(m);
    if (!mxIsDouble(prhs[1]) || mxGetNumberOfElements(prhs[1]) != 1)
        fail(ARD_EINVAL, "ard_rec: TIMEOUT must be a scalar in seconds");
    double t = mxGetScalar(prhs[1]);
    bool forever = t < 0 || t != t || t > 1e9;
    int64_t left = forever ? 0 : (int64_t)(t * 1e9);
    int64_t deadline = ard_now_ns() + left;
    for (;;) {
        int64_t slice = forever || left > SLICE_NS ? SLICE_NS : left;
        int rc = ard_rec_timed(m->port, m->buf, slice);
        if (rc == 0)
            break;
        if (rc != ARD_ETIMEDOUT && rc != ARD_EINTR)
            fail(rc, NULL);
        if (interrupt_pending()) {
            /* Ctrl-C stops the block: every port is closed and every writer role released
             * before the interpreter unwinds (docs/octave.md), so nothing is left held. */
            char name[ARD_MAX_NAME + 1];
            snprintf(name, sizeof name, "%s", ard_port_name(m->port));
            close_all();
            fail(ARD_EINTR,
                 "port '%s': receive interrupted (Ctrl-C): every port of the block "
                 "closed, writer roles released",
                 name);
        }
        if (!forever) {
            left = deadline - ard_now_ns();
            if (left <= 0) {
                plhs[0] = mxCreateDoubleMatrix(0, 0, mxREAL);
                return;
            }
        }
    }
    plhs[0] = packet_to_struct(m);
}

/* tryrec(port) -> [packet, isnew]: isnew true/false, [] (and packet []) when nothing was ever
 * sent. */
static void cmd_tryrec(int nlhs, mxArray *plhs[], int nrhs, const mxArray *prhs[])
{
    want_args(nrhs, 1, 1, "ard_tryrec(PORT)");
    struct mport *m = get_port(prhs[0]);
    need_layout(m);
    int rc = ard_tryrec(m->port, m->buf);
    if (rc == ARD_ENODATA) {
        plhs[0] = mxCreateDoubleMatrix(0, 0, mxREAL);
        if (nlhs > 1)
            plhs[1] = mxCreateDoubleMatrix(0, 0, mxREAL);
        return;
    }
    if (rc < 0)
        fail(rc, NULL);
    plhs[0] = packet_to_struct(m);
    if (nlhs > 1)
        plhs[1] = mxCreateLogicalScalar(rc == 1);
}

static mxArray *scalar_u64(uint64_t v)
{
    mxArray *a = mxCreateNumericMatrix(1, 1, mxUINT64_CLASS, mxREAL);
    memcpy(mxGetData(a), &v, 8);
    return a;
}

static mxArray *scalar_i64(int64_t v)
{
    mxArray *a = mxCreateNumericMatrix(1, 1, mxINT64_CLASS, mxREAL);
    memcpy(mxGetData(a), &v, 8);
    return a;
}

static void cmd_info(int nlhs, mxArray *plhs[], int nrhs, const mxArray *prhs[])
{
    (void)nlhs;
    want_args(nrhs, 1, 1, "ard_info(PORT)");
    struct mport *m = get_port(prhs[0]);
    static const char *names[] = {"seq",        "mono_ns",   "real_ns", "skipped", "name",
                                  "connection", "direction", "type",    "size"};
    struct ard_info in = ard_port_info(m->port);
    mxArray *s = mxCreateStructMatrix(1, 1, 9, names);
    mxSetField(s, 0, "seq", scalar_u64(in.seq));
    mxSetField(s, 0, "mono_ns", scalar_i64(in.mono_ns));
    mxSetField(s, 0, "real_ns", scalar_i64(in.real_ns));
    mxSetField(s, 0, "skipped", scalar_u64(in.skipped));
    mxSetField(s, 0, "name", mxCreateString(ard_port_name(m->port)));
    mxSetField(s, 0, "connection", mxCreateString(ard_port_connection(m->port)));
    mxSetField(s, 0, "direction", mxCreateString(ard_port_dir(m->port) == ARD_IN ? "in" : "out"));
    mxSetField(s, 0, "type", mxCreateString(ard_port_type(m->port)));
    mxSetField(s, 0, "size", mxCreateDoubleScalar((double)ard_port_size(m->port)));
    plhs[0] = s;
}

static void cmd_close(int nlhs, mxArray *plhs[], int nrhs, const mxArray *prhs[])
{
    (void)nlhs, (void)plhs;
    want_args(nrhs, 1, 1, "ard_close(PORT)");
    if (mxIsDouble(prhs[0]) && mxGetNumberOfElements(prhs[0]) == 1) {
        struct mport *m = find_port(mxGetScalar(prhs[0]));
        if (m)
            mport_free(m);
        return; /* closing twice is fine */
    }
    fail(ARD_EINVAL, "ard_close: PORT must be a port handle");
}

static void cmd_fini(int nlhs, mxArray *plhs[], int nrhs, const mxArray *prhs[])
{
    (void)nlhs, (void)plhs, (void)nrhs, (void)prhs;
    close_all();
}

static void cmd_nports(int nlhs, mxArray *plhs[], int nrhs, const mxArray *prhs[])
{
    (void)nlhs, (void)nrhs, (void)prhs;
    size_t n = 0;
    for (size_t i = 0; i < MAX_PORTS; i++)
        n += ports[i].port != NULL;
    plhs[0] = mxCreateDoubleScalar((double)n);
}

static void cmd_nop(int nlhs, mxArray *plhs[], int nrhs, const mxArray *prhs[])
{
    (void)nlhs, (void)plhs, (void)nrhs, (void)prhs;
}

static void cmd_now(int nlhs, mxArray *plhs[], int nrhs, const mxArray *prhs[])
{
    (void)nlhs, (void)nrhs, (void)prhs;
    plhs[0] = scalar_i64(ard_now_ns());
}

#if ARD_HAVE_LOG /* the recording library (part ARD_LOG, libardnet_log) */
/* ------------------------------------------------------------------------------------------
 * load(file): struct with one field per connection (docs/octave.md, ard_load)
 * ---------------------------------------------------------------------------------------- */

/* A valid, unique struct field name for a connection name: [A-Za-z0-9_], letter first. */
static void valid_name(const char *in, char *out, size_t len)
{
    size_t o = 0;
    if (!((in[0] >= 'A' && in[0] <= 'Z') || (in[0] >= 'a' && in[0] <= 'z')))
        o = (size_t)snprintf(out, len, "c_");
    for (size_t i = 0; in[i] && o + 1 < len && o < 60; i++) {
        char c = in[i];
        bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        out[o++] = ok ? c : '_';
    }
    out[o] = 0;
}

static const char *const meta_names[] = {"name", "type", "t", "log_ns", "real_ns", "seq"};
#define NMETA 6

struct lconn {
    size_t nfields;
    struct ard_field *fields;
    mxArray *s;     /* the connection's struct */
    mxArray **data; /* per field */
    int64_t *log_ns, *real_ns;
    uint64_t *seq;
    double *t;
    size_t n, rows;
};

static void cmd_load(int nlhs, mxArray *plhs[], int nrhs, const mxArray *prhs[])
{
    (void)nlhs;
    want_args(nrhs, 1, 1, "ard_load(FILE)");
    char *path = mxIsChar(prhs[0]) ? mxArrayToString(prhs[0]) : NULL;
    if (!path)
        fail(ARD_EINVAL, "ard_load: FILE must be a string");
    ard_logr *r = ard_logr_open(path);
    if (!r)
        fail(ard_lasterror(), NULL);
    struct ard_log_summary sum;
    ard_logr_summary(r, &sum);
    size_t nc = ard_logr_nconns(r);
    struct lconn *lc = mxCalloc(nc ? nc : 1, sizeof *lc);
    char **cnames = mxCalloc(nc ? nc : 1, sizeof *cnames);
    for (size_t c = 0; c < nc; c++) {
        const struct ard_log_conn *k = ard_logr_conn(r, c);
        char base[64], nm[72];
        valid_name(k->name, base, sizeof base);
        snprintf(nm, sizeof nm, "%s", base);
        for (int dup = 2;; dup++) {
            size_t j;
            for (j = 0; j < c && strcmp(cnames[j], nm); j++)
                ;
            if (j == c)
                break;
            snprintf(nm, sizeof nm, "%.58s_%d", base, dup % 100000);
        }
        cnames[c] = mxCalloc(strlen(nm) + 1, 1);
        strcpy(cnames[c], nm);
        /* Fields: the descriptor's, or one uint8 row "data" for opaque packets. */
        size_t nf = 0;
        struct lconn *L = &lc[c];
        L->rows = (size_t)k->count;
        if (k->ardnet && k->type[0]) {
            if (ard_type_parse(k->type, NULL, 0, &nf, NULL) < 0) {
                ard_logr_close(r);
                fail(ARD_ESTALE, "%s: connection '%s' has a descriptor that does not parse", path,
                     k->name);
            }
            L->fields = mxCalloc(nf, sizeof *L->fields);
            if (ard_type_parse(k->type, L->fields, nf, &nf, NULL) < 0) {
                ard_logr_close(r);
                fail(ARD_ESTALE, "%s: connection '%s': bad descriptor", path, k->name);
            }
        } else if (k->ardnet) {
            nf = 1;
            L->fields = mxCalloc(1, sizeof *L->fields);
            L->fields[0].kind = ARD_U8;
            L->fields[0].count = (uint32_t)k->size;
            strcpy(L->fields[0].name, "data");
        }
        L->nfields = nf;
        const char **fn = mxCalloc(NMETA + nf, sizeof *fn);
        char **own = mxCalloc(nf ? nf : 1, sizeof *own);
        for (size_t i = 0; i < NMETA; i++)
            fn[i] = meta_names[i];
        for (size_t i = 0; i < nf; i++) {
            char tmp[ARD_MAX_FIELD_NAME + 24];
            if (L->fields[i].name[0])
                snprintf(tmp, sizeof tmp, "%s", L->fields[i].name);
            else
                snprintf(tmp, sizeof tmp, "f%zu", i);
            for (size_t j = 0; j < NMETA; j++)
                if (strcmp(tmp, meta_names[j]) == 0) {
                    strcat(tmp, "_"); /* a field named like a time column gets a '_' */
                    break;
                }
            own[i] = mxCalloc(strlen(tmp) + 1, 1);
            strcpy(own[i], tmp);
            fn[NMETA + i] = own[i];
        }
        L->s = mxCreateStructMatrix(1, 1, (int)(NMETA + nf), fn);
        mxSetField(L->s, 0, "name", mxCreateString(k->name));
        mxSetField(L->s, 0, "type", mxCreateString(k->type));
        mxArray *t = mxCreateDoubleMatrix(L->rows, 1, mxREAL);
        mxArray *ln = mxCreateNumericMatrix(L->rows, 1, mxINT64_CLASS, mxREAL);
        mxArray *rn = mxCreateNumericMatrix(L->rows, 1, mxINT64_CLASS, mxREAL);
        mxArray *sq = mxCreateNumericMatrix(L->rows, 1, mxUINT64_CLASS, mxREAL);
        L->t = mxGetPr(t);
        L->log_ns = mxGetData(ln);
        L->real_ns = mxGetData(rn);
        L->seq = mxGetData(sq);
        mxSetField(L->s, 0, "t", t);
        mxSetField(L->s, 0, "log_ns", ln);
        mxSetField(L->s, 0, "real_ns", rn);
        mxSetField(L->s, 0, "seq", sq);
        L->data = mxCalloc(nf ? nf : 1, sizeof *L->data);
        for (size_t i = 0; i < nf; i++) {
            L->data[i] = field_array(&L->fields[i], L->rows);
            mxSetFieldByNumber(L->s, 0, (int)(NMETA + i), L->data[i]);
        }
    }
    struct ard_log_msg msg;
    int rc;
    while ((rc = ard_logr_next(r, &msg)) == 1) {
        if (msg.conn >= nc)
            continue;
        struct lconn *L = &lc[msg.conn];
        if (L->n >= L->rows || !msg.packet)
            continue;
        size_t row = L->n++;
        L->log_ns[row] = msg.log_ns;
        L->real_ns[row] = msg.real_ns;
        L->seq[row] = msg.seq;
        L->t[row] = (double)(msg.log_ns - sum.start_ns) * 1e-9;
        for (size_t i = 0; i < L->nfields; i++)
            put_row(L->data[i], L->rows, row, &L->fields[i], msg.packet);
    }
    ard_logr_close(r);
    if (rc < 0)
        fail(rc, NULL);
    mxArray *out = mxCreateStructMatrix(1, 1, (int)nc, (const char **)cnames);
    for (size_t c = 0; c < nc; c++)
        mxSetFieldByNumber(out, 0, (int)c, lc[c].s);
    plhs[0] = out;
    if (nlhs > 1) {
        static const char *in[] = {"file", "start_ns", "end_ns", "messages", "complete"};
        mxArray *s = mxCreateStructMatrix(1, 1, 5, in);
        mxSetField(s, 0, "file", mxCreateString(path));
        mxSetField(s, 0, "start_ns", scalar_i64(sum.start_ns));
        mxSetField(s, 0, "end_ns", scalar_i64(sum.end_ns));
        mxSetField(s, 0, "messages", mxCreateDoubleScalar((double)sum.messages));
        mxSetField(s, 0, "complete", mxCreateLogicalScalar(sum.complete));
        plhs[1] = s;
    }
}

#else
static void cmd_load(int nlhs, mxArray *plhs[], int nrhs, const mxArray *prhs[])
{
    (void)nlhs, (void)plhs, (void)nrhs, (void)prhs;
    fail(ARD_EINVAL, "ard_load: not built (configure ardnet with libzstd: "
                     "apt-get install libzstd-dev zlib1g-dev liblz4-dev)");
}
#endif /* ARD_HAVE_LOG */

/* ------------------------------------------------------------------------------------------ */

typedef void cmd_fn(int, mxArray *[], int, const mxArray *[]);

static const struct {
    const char *name;
    cmd_fn *fn;
} commands[] = {
    {"port", cmd_port},     {"init", cmd_init}, {"send", cmd_send},   {"rec", cmd_rec},
    {"tryrec", cmd_tryrec}, {"info", cmd_info}, {"close", cmd_close}, {"fini", cmd_fini},
    {"nports", cmd_nports}, {"nop", cmd_nop},   {"now", cmd_now},     {"load", cmd_load},
};

void mexFunction(int nlhs, mxArray *plhs[], int nrhs, const mxArray *prhs[])
{
    ensure_registered();
    char cmd[16];
    if (nrhs < 1 || !get_str(prhs[0], cmd, sizeof cmd))
        fail(ARD_EINVAL, "ardnet_mex: first argument is a command; use the ard_*.m functions");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(cmd, commands[i].name) == 0) {
            commands[i].fn(nlhs, plhs, nrhs - 1, prhs + 1);
            return;
        }
    fail(ARD_EINVAL, "ardnet_mex: unknown command '%s'", cmd);
}
