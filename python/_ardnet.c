/*
 * _ardnet.c - the CPython extension behind `import ardnet` (python/ardnet/__init__.py).
 *
 * Written against the C API rather than through an FFI so that a call costs one argument parse
 * and the library call: send/rec/tryrec take no Python-level locks, build no objects and convert
 * no arguments per packet. Every port owns one numpy array (its packet), allocated when the port
 * is created; rec and tryrec copy into it and rec returns that same object, so the receive path
 * allocates nothing. A blocking rec releases the GIL; in the main thread it waits in slices so
 * that Ctrl-C raises KeyboardInterrupt even if SIGINT lands just before the futex wait.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include "ardnet.h"
#if ARD_HAVE_LOG
#include "ardnet_log.h"
#endif

#include <errno.h>
#include <string.h>
#include <time.h>

/* How long a blocking call in the main thread sleeps before it looks for a pending signal
 * that arrived before the sleep began (one that arrives during the sleep ends it at once). */
#define SIGNAL_SLICE_NS 50000000LL

static PyObject *Error;           /* ardnet.Error */
static PyTypeObject *InfoType;    /* ardnet.Info */
static PyObject *np_dtype;        /* numpy.dtype */
static PyObject *np_zeros;        /* numpy.zeros */
static PyObject *empty_shape;     /* () */
static unsigned long main_thread; /* ident of the thread that handles signals */

/* ---- errors ----------------------------------------------------------------------------- */

static const char *code_name(int code)
{
    switch (code) {
    case ARD_OK:
        return "ARD_OK";
    case ARD_EINVAL:
        return "ARD_EINVAL";
    case ARD_ENOMEM:
        return "ARD_ENOMEM";
    case ARD_ESYS:
        return "ARD_ESYS";
    case ARD_EOPTION:
        return "ARD_EOPTION";
    case ARD_ETYPE:
        return "ARD_ETYPE";
    case ARD_EBUSY:
        return "ARD_EBUSY";
    case ARD_ENODATA:
        return "ARD_ENODATA";
    case ARD_ETIMEDOUT:
        return "ARD_ETIMEDOUT";
    case ARD_EACCES:
        return "ARD_EACCES";
    case ARD_ENOENT:
        return "ARD_ENOENT";
    case ARD_ESTALE:
        return "ARD_ESTALE";
    case ARD_ERTREFUSED:
        return "ARD_ERTREFUSED";
    case ARD_ESTATE:
        return "ARD_ESTATE";
    case ARD_EINTR:
        return "ARD_EINTR";
    }
    return "ARD_E?";
}

/* Raise ardnet.Error(code, detail): str() is "ARD_EBUSY: <detail>", attributes code (the
 * negative number), name ("ARD_EBUSY") and detail (the text alone). Returns NULL. */
static PyObject *raise_error(int code, const char *detail)
{
    if (detail == NULL || *detail == '\0')
        detail = ard_strerror(code);
    PyObject *exc = PyObject_CallFunction(Error, "s", "");
    PyObject *msg = PyUnicode_FromFormat("%s: %s", code_name(code), detail);
    PyObject *c = PyLong_FromLong(code), *n = PyUnicode_FromString(code_name(code));
    PyObject *d = PyUnicode_FromString(detail);
    if (exc != NULL && msg != NULL && c != NULL && n != NULL && d != NULL) {
        PyObject *args = PyTuple_Pack(1, msg);
        if (args != NULL && PyObject_SetAttrString(exc, "args", args) == 0 &&
            PyObject_SetAttrString(exc, "code", c) == 0 &&
            PyObject_SetAttrString(exc, "name", n) == 0 &&
            PyObject_SetAttrString(exc, "detail", d) == 0)
            PyErr_SetObject(Error, exc);
        Py_XDECREF(args);
    }
    Py_XDECREF(exc);
    Py_XDECREF(msg);
    Py_XDECREF(c);
    Py_XDECREF(n);
    Py_XDECREF(d);
    return NULL;
}

/* The library's failure in this thread. */
static PyObject *raise_ard(int code)
{
    return raise_error(code, ard_errdetail());
}

static PyObject *raise_fmt(int code, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return raise_error(code, buf);
}

/* ---- descriptors -> numpy dtypes -------------------------------------------------------- */

/* numpy's code of each basic kind, by name: a reordered or extended enum ard_basic cannot
 * shift the codes (an unknown kind is one opaque byte, "V1"). */
static const char *np_code(enum ard_basic k)
{
    switch (k) {
    case ARD_I8:
        return "i1";
    case ARD_U8:
        return "u1";
    case ARD_I16:
        return "i2";
    case ARD_U16:
        return "u2";
    case ARD_I32:
        return "i4";
    case ARD_U32:
        return "u4";
    case ARD_I64:
        return "i8";
    case ARD_U64:
        return "u8";
    case ARD_F32:
        return "f4";
    case ARD_F64:
        return "f8";
    }
    return "V1";
}

/* Field name for numpy: the descriptor's name when it gives one, else f0, f1, ... */
static PyObject *field_name(const struct ard_field *f, size_t i)
{
    if (f->name[0] != '\0')
        return PyUnicode_FromString(f->name);
    return PyUnicode_FromFormat("f%zu", i);
}

/* numpy dtype of packets of `desc` (NULL: opaque bytes of `size`). *psize gets the size. */
static PyObject *make_dtype(const char *desc, size_t size, size_t *psize)
{
    if (desc == NULL) {
        if (psize)
            *psize = size;
        return PyObject_CallFunction(np_dtype, "((s(n)))", "u1", (Py_ssize_t)size);
    }
    size_t n = 0, total = 0;
    int rc = ard_type_parse(desc, NULL, 0, &n, &total);
    if (rc < 0)
        return raise_ard(rc);
    if (n == 0)
        return raise_fmt(ARD_ETYPE, "type '%s': no fields (give size= alone for opaque bytes)",
                         desc);
    struct ard_field *fields = PyMem_Calloc(n, sizeof *fields);
    if (fields == NULL)
        return PyErr_NoMemory();
    PyObject *names = NULL, *formats = NULL, *offsets = NULL, *spec = NULL, *dt = NULL;
    if ((rc = ard_type_parse(desc, fields, n, &n, &total)) < 0) {
        raise_ard(rc);
        goto out;
    }
    names = PyList_New((Py_ssize_t)n);
    formats = PyList_New((Py_ssize_t)n);
    offsets = PyList_New((Py_ssize_t)n);
    if (names == NULL || formats == NULL || offsets == NULL)
        goto out;
    for (size_t i = 0; i < n; i++) {
        PyObject *name = field_name(&fields[i], i), *fmt, *off;
        if (fields[i].count == 1)
            fmt = PyUnicode_FromString(np_code(fields[i].kind));
        else
            fmt = Py_BuildValue("(s(I))", np_code(fields[i].kind), (unsigned)fields[i].count);
        off = PyLong_FromUnsignedLong(fields[i].offset);
        if (name == NULL || fmt == NULL || off == NULL) {
            Py_XDECREF(name);
            Py_XDECREF(fmt);
            Py_XDECREF(off);
            goto out;
        }
        PyList_SET_ITEM(names, (Py_ssize_t)i, name);
        PyList_SET_ITEM(formats, (Py_ssize_t)i, fmt);
        PyList_SET_ITEM(offsets, (Py_ssize_t)i, off);
    }
    spec = Py_BuildValue("{sOsOsOsn}", "names", names, "formats", formats, "offsets", offsets,
                         "itemsize", (Py_ssize_t)total);
    if (spec != NULL)
        dt = PyObject_CallOneArg(np_dtype, spec);
    if (psize)
        *psize = total;
out:
    PyMem_Free(fields);
    Py_XDECREF(names);
    Py_XDECREF(formats);
    Py_XDECREF(offsets);
    Py_XDECREF(spec);
    return dt;
}

static PyObject *mod_dtype(PyObject *self, PyObject *args)
{
    const char *desc;
    if (!PyArg_ParseTuple(args, "s:dtype", &desc))
        return NULL;
    return make_dtype(desc, 0, NULL);
}

/* ---- Port ------------------------------------------------------------------------------- */

typedef struct PortObject {
    PyObject_HEAD ard_port *port; /* NULL once closed */
    PyObject *dtype;
    PyObject *packet; /* the port's own packet: rec/tryrec fill it, send() sends it */
    void *buf;        /* its data */
    size_t size;
    enum ard_dir dir;
    int busy; /* a call with the GIL released is using the port */
    char name[ARD_MAX_NAME + 1];
    struct PortObject *prev, *next; /* open ports, so that fini() can close them first */
} PortObject;

static PortObject *open_ports;

static void unlink_port(PortObject *p)
{
    if (p->prev)
        p->prev->next = p->next;
    else if (open_ports == p)
        open_ports = p->next;
    if (p->next)
        p->next->prev = p->prev;
    p->prev = p->next = NULL;
}

static void close_port(PortObject *p)
{
    if (p->port == NULL)
        return;
    unlink_port(p);
    ard_close(p->port);
    p->port = NULL;
}

/* The packet array of a port that adopts its connection's size and type, made once the port
 * is attached and they are known. 0 or -1 with an exception. */
static int ensure_packet(PortObject *p)
{
    if (p->packet != NULL)
        return 0;
    size_t size = ard_port_size(p->port);
    if (size == 0) {
        raise_fmt(ARD_ESTATE,
                  "port '%s' adopts its connection's size and type, known once it is attached "
                  "(call ardnet.init() first)",
                  p->name);
        return -1;
    }
    const char *type = ard_port_type(p->port);
    size_t tsize = size;
    PyObject *dt = make_dtype(*type ? type : NULL, size, &tsize);
    if (dt == NULL)
        return -1;
    PyObject *pkt = PyObject_CallFunctionObjArgs(np_zeros, empty_shape, dt, NULL);
    if (pkt == NULL || !PyArray_Check(pkt) ||
        (size_t)PyArray_NBYTES((PyArrayObject *)pkt) != size || tsize != size) {
        Py_DECREF(dt);
        Py_XDECREF(pkt);
        if (!PyErr_Occurred())
            raise_fmt(ARD_ETYPE, "port '%s': connection type '%s' does not make %zu bytes", p->name,
                      type, size);
        return -1;
    }
    p->dtype = dt;
    p->packet = pkt;
    p->buf = PyArray_DATA((PyArrayObject *)pkt);
    p->size = size;
    return 0;
}

/* 0 if the port can be used now, else raises and returns -1. */
static int usable(PortObject *p)
{
    if (p->port == NULL) {
        raise_fmt(ARD_ESTATE, "port '%s' is closed", p->name);
        return -1;
    }
    if (p->packet == NULL && ensure_packet(p) < 0)
        return -1;
    if (p->busy) {
        raise_fmt(ARD_ESTATE, "port '%s' is in use by a blocking rec in another thread", p->name);
        return -1;
    }
    return 0;
}

/* 0 if the port has direction `dir` for the call `what`, else raises and returns -1. */
static int check_dir(PortObject *p, enum ard_dir dir, const char *what)
{
    if (p->dir == dir)
        return 0;
    raise_fmt(ARD_EINVAL, "port '%s': %s on an %s port", p->name, what,
              p->dir == ARD_IN ? "IN" : "OUT");
    return -1;
}

/* The library's error for a call made as `what` from Python: ARD_ESTATE means the port is not
 * attached yet, which the library words in terms of its own function names. */
static PyObject *raise_call(PortObject *p, int rc, const char *what)
{
    if (rc == ARD_ESTATE)
        return raise_fmt(rc, "port '%s': %s before the port is attached (call ardnet.init() first)",
                         p->name, what);
    return raise_ard(rc);
}

static int parse_dir(PyObject *o, enum ard_dir *dir)
{
    if (PyUnicode_Check(o)) {
        if (PyUnicode_CompareWithASCIIString(o, "in") == 0) {
            *dir = ARD_IN;
            return 0;
        }
        if (PyUnicode_CompareWithASCIIString(o, "out") == 0) {
            *dir = ARD_OUT;
            return 0;
        }
    }
    PyErr_Format(PyExc_ValueError, "direction must be \"in\" or \"out\", not %R", o);
    return -1;
}

static int Port_init(PortObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"name", "direction", "type", "size", "connection", NULL};
    const char *name, *type = NULL, *conn = NULL;
    PyObject *diro, *sizeo = Py_None;
    if (self->port != NULL || self->dtype != NULL) {
        PyErr_SetString(PyExc_TypeError, "Port.__init__ called twice");
        return -1;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kw, "sO|zOz:Port", kwlist, &name, &diro, &type, &sizeo,
                                     &conn))
        return -1;
    enum ard_dir dir;
    if (parse_dir(diro, &dir) < 0)
        return -1;
    size_t size = 0;
    if (sizeo != Py_None) {
        Py_ssize_t sz = PyNumber_AsSsize_t(sizeo, PyExc_OverflowError);
        if (sz == -1 && PyErr_Occurred())
            return -1;
        if (sz <= 0 || (size_t)sz > ARD_MAX_PACKET) {
            raise_fmt(ARD_EINVAL, "port '%s': size %zd is not in 1..%u", name, sz, ARD_MAX_PACKET);
            return -1;
        }
        size = (size_t)sz;
    }
    /* Neither type nor size: adopt the connection's (made into a dtype once attached). */
    PyObject *dt = NULL, *pkt = NULL;
    if (type != NULL || size != 0) {
        size_t tsize = 0;
        dt = make_dtype(type, size, &tsize);
        if (dt == NULL)
            return -1;
        if (size == 0)
            size = tsize;
        pkt = PyObject_CallFunctionObjArgs(np_zeros, empty_shape, dt, NULL);
        if (pkt == NULL || !PyArray_Check(pkt) ||
            (size_t)PyArray_NBYTES((PyArrayObject *)pkt) != (type ? tsize : size)) {
            Py_DECREF(dt);
            Py_XDECREF(pkt);
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_RuntimeError, "numpy made a packet of the wrong size");
            return -1;
        }
    }
    ard_port *port = ard_create_on(name, conn, dir, size, type);
    if (port == NULL) {
        Py_XDECREF(dt);
        Py_XDECREF(pkt);
        raise_ard(ard_lasterror());
        return -1;
    }
    self->port = port;
    self->dtype = dt;
    self->packet = pkt;
    self->buf = pkt ? PyArray_DATA((PyArrayObject *)pkt) : NULL;
    self->size = size;
    self->dir = dir;
    snprintf(self->name, sizeof self->name, "%s", name);
    self->next = open_ports;
    if (open_ports)
        open_ports->prev = self;
    open_ports = self;
    return 0;
}

static void Port_dealloc(PortObject *self)
{
    close_port(self);
    Py_XDECREF(self->dtype);
    Py_XDECREF(self->packet);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* "int64 (7,)": an array's dtype and shape for messages (a new reference or NULL). */
static PyObject *describe_array(PyArrayObject *a)
{
    PyObject *shape = PyObject_GetAttrString((PyObject *)a, "shape");
    if (shape == NULL)
        return NULL;
    PyObject *r = PyUnicode_FromFormat("%S %S", (PyObject *)PyArray_DESCR(a), shape);
    Py_DECREF(shape);
    return r;
}

/* 0 when array a holds a packet of the port without reinterpretation: the port's dtype
 * (numpy's equivalence: same fields, offsets, types and byte order) with one element; or,
 * for a port whose packet is one array (an opaque port, or a single field filling the whole
 * packet: "tau:f64[7]"), a flat array of that field's element dtype and count. Else raises
 * ARD_ETYPE naming both dtypes and returns -1. */
static int check_packet_dtype(PortObject *self, PyArrayObject *a)
{
    PyArray_Descr *pd = (PyArray_Descr *)self->dtype, *ad = PyArray_DESCR(a);
    if (PyArray_SIZE(a) == 1 && PyArray_EquivTypes(ad, pd))
        return 0;
    /* The port's packet as one array: its element dtype and count, if it is one. */
    PyObject *base = NULL;
    Py_ssize_t count = 0;
    PyObject *names = PyObject_GetAttrString(self->dtype, "names");
    if (names == NULL)
        return -1;
    PyObject *one = NULL; /* the dtype to look into: the port's, or its only field's */
    if (names == Py_None) {
        one = self->dtype;
        Py_INCREF(one);
    } else if (PyTuple_GET_SIZE(names) == 1) {
        PyObject *fields = PyObject_GetAttrString(self->dtype, "fields"); /* a mappingproxy */
        PyObject *f = fields ? PyObject_GetItem(fields, PyTuple_GET_ITEM(names, 0)) : NULL;
        if (f != NULL && PyTuple_Check(f) && PyTuple_GET_SIZE(f) >= 2 &&
            PyLong_AsLong(PyTuple_GET_ITEM(f, 1)) == 0) {
            one = PyTuple_GET_ITEM(f, 0);
            Py_INCREF(one);
        }
        Py_XDECREF(f);
        Py_XDECREF(fields);
    }
    Py_DECREF(names);
    if (PyErr_Occurred()) {
        Py_XDECREF(one);
        return -1;
    }
    if (one != NULL) {
        PyObject *b = PyObject_GetAttrString(one, "base");
        PyObject *shape = PyObject_GetAttrString(one, "shape");
        if (b != NULL && shape != NULL && PyTuple_Check(shape)) {
            count = 1;
            for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(shape); i++)
                count *= PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, i));
            if ((size_t)(count * ((PyArray_Descr *)b)->elsize) == self->size) {
                base = b;
                b = NULL;
            }
        }
        Py_XDECREF(b);
        Py_XDECREF(shape);
        Py_DECREF(one);
        if (PyErr_Occurred()) {
            Py_XDECREF(base);
            return -1;
        }
    }
    int ok = base != NULL && PyArray_NDIM(a) <= 1 && PyArray_SIZE(a) == count &&
             PyArray_EquivTypes(ad, (PyArray_Descr *)base);
    if (ok) {
        Py_DECREF(base);
        return 0;
    }
    PyObject *got = describe_array(a);
    PyObject *want;
    if (base != NULL)
        want = PyUnicode_FromFormat("%S (or a flat array of %zd %S)", self->dtype, count, base);
    else
        want = PyObject_Str(self->dtype);
    Py_XDECREF(base);
    if (got != NULL && want != NULL)
        raise_fmt(ARD_ETYPE,
                  "port '%s': packet of dtype %s, the port sends %s; numpy would reinterpret "
                  "the bytes: convert the values first (e.g. port.packet[...] = values)",
                  self->name, PyUnicode_AsUTF8(got), PyUnicode_AsUTF8(want));
    Py_XDECREF(got);
    Py_XDECREF(want);
    return -1;
}

/* Bytes of a packet to send: the port's own packet; a numpy array or scalar holding the
 * port's packet without reinterpretation (check_packet_dtype); a buffer of typed elements
 * (array.array, memoryview.cast, ctypes) by the same rule, through numpy; or an untyped
 * buffer (bytes, bytearray, memoryview of bytes) of exactly the port's size, taken as the
 * packet's bytes as they are. view->obj is set when view must be released. */
static int packet_bytes(PortObject *self, PyObject *obj, Py_buffer *view, const void **data)
{
    view->obj = NULL;
    if (obj == NULL || obj == Py_None || obj == self->packet) {
        *data = self->buf;
        return 0;
    }
    PyObject *conv = NULL; /* a numpy array made from a scalar or a typed buffer */
    if (!PyArray_Check(obj) && PyArray_IsScalar(obj, Generic)) {
        conv = PyArray_FromScalar(obj, NULL);
        if (conv == NULL)
            return -1;
    } else if (!PyArray_Check(obj)) {
        if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
            return -1;
        const char *f = view->format ? view->format : "B";
        if (*f && strchr("@=<>!", *f))
            f++;
        if (strcmp(f, "B") == 0 || strcmp(f, "c") == 0) { /* bytes: no type to check */
            if ((size_t)view->len != self->size) {
                raise_fmt(ARD_EINVAL, "port '%s': packet has %zd bytes, the port sends %zu",
                          self->name, view->len, self->size);
                PyBuffer_Release(view);
                return -1;
            }
            *data = view->buf;
            return 0;
        }
        PyBuffer_Release(view);
        view->obj = NULL;
        conv = PyArray_FromAny(obj, NULL, 0, 0, 0, NULL);
        if (conv == NULL)
            return -1;
    }
    PyArrayObject *a = (PyArrayObject *)(conv ? conv : obj);
    int rc = -1;
    if (check_packet_dtype(self, a) < 0) {
        /* raised */
    } else if ((size_t)PyArray_NBYTES(a) != self->size) { /* (the dtype check implies it) */
        PyObject *got = describe_array(a);
        if (got != NULL)
            raise_fmt(ARD_EINVAL, "port '%s': packet of dtype %s has %zd bytes, the port sends %zu",
                      self->name, PyUnicode_AsUTF8(got), (Py_ssize_t)PyArray_NBYTES(a), self->size);
        Py_XDECREF(got);
    } else if (!PyArray_IS_C_CONTIGUOUS(a)) {
        raise_fmt(ARD_EINVAL, "port '%s': packet array is not C-contiguous", self->name);
    } else if (conv == NULL) {
        *data = PyArray_DATA(a);
        rc = 0;
    } else if (PyObject_GetBuffer(conv, view, PyBUF_C_CONTIGUOUS) == 0) {
        *data = view->buf; /* the view keeps the converted array alive */
        rc = 0;
    }
    Py_XDECREF(conv);
    return rc;
}

static PyObject *Port_send(PortObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs > 1)
        return PyErr_Format(PyExc_TypeError, "send() takes at most 1 argument (%zd given)", nargs);
    if (usable(self) < 0 || check_dir(self, ARD_OUT, "send") < 0)
        return NULL;
    Py_buffer view;
    const void *data;
    if (packet_bytes(self, nargs ? args[0] : NULL, &view, &data) < 0)
        return NULL;
    int rc = ard_send(self->port, data); /* never blocks: no reason to release the GIL */
    if (view.obj)
        PyBuffer_Release(&view);
    if (rc < 0)
        return raise_call(self, rc, "send");
    Py_RETURN_NONE;
}

/* Wait for a new packet with the GIL released. timeout_ns < 0: no limit. Returns 0 (a packet
 * is in the buffer), 1 (timed out), or -1 with a Python exception set. */
static int wait_packet(PortObject *self, int64_t timeout_ns)
{
    int64_t deadline = timeout_ns < 0 ? -1 : ard_now_ns() + timeout_ns;
    int sliced = PyThread_get_thread_ident() == main_thread;
    self->busy = 1;
    for (;;) {
        int rc;
        int64_t wait = -1;
        if (deadline >= 0) {
            wait = deadline - ard_now_ns();
            if (wait < 0)
                wait = 0;
        }
        if (sliced && (wait < 0 || wait > SIGNAL_SLICE_NS))
            wait = SIGNAL_SLICE_NS;
        Py_BEGIN_ALLOW_THREADS;
        rc = wait < 0 ? ard_rec(self->port, self->buf) : ard_rec_timed(self->port, self->buf, wait);
        Py_END_ALLOW_THREADS;
        if (rc == 0) {
            self->busy = 0;
            return 0;
        }
        if (rc == ARD_EINTR || rc == ARD_ETIMEDOUT) {
            if (PyErr_CheckSignals() < 0) {
                self->busy = 0;
                return -1;
            }
            if (rc == ARD_ETIMEDOUT && deadline >= 0 && ard_now_ns() >= deadline) {
                self->busy = 0;
                return 1;
            }
            continue;
        }
        self->busy = 0;
        raise_ard(rc);
        return -1;
    }
}

/* METH_FASTCALL | METH_KEYWORDS: a call with timeout= builds no dict or tuple. */
static PyObject *Port_rec(PortObject *self, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames)
{
    PyObject *to = Py_None;
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    if (nargs + nkw > 1)
        return PyErr_Format(PyExc_TypeError, "rec() takes at most 1 argument (%zd given)",
                            nargs + nkw);
    if (nkw == 1 && PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), "timeout"))
        return PyErr_Format(PyExc_TypeError, "rec() got an unexpected keyword argument '%U'",
                            PyTuple_GET_ITEM(kwnames, 0));
    if (nargs + nkw == 1)
        to = args[0];
    if (usable(self) < 0 || check_dir(self, ARD_IN, "rec") < 0)
        return NULL;
    int64_t timeout_ns = -1;
    if (to != Py_None) {
        double t = PyFloat_AsDouble(to);
        if (t == -1.0 && PyErr_Occurred())
            return NULL;
        if (!(t == t))
            return PyErr_Format(PyExc_ValueError, "timeout is NaN");
        timeout_ns = t <= 0 ? 0 : t > 9.2e9 ? INT64_MAX / 2 : (int64_t)(t * 1e9);
    }
    /* Something newer already there: take it without giving up the GIL. */
    int rc = ard_tryrec(self->port, self->buf);
    if (rc == 1) {
        Py_INCREF(self->packet);
        return self->packet;
    }
    if (rc < 0 && rc != ARD_ENODATA)
        return raise_call(self, rc, "rec");
    if (timeout_ns == 0)
        Py_RETURN_NONE;
    rc = wait_packet(self, timeout_ns);
    if (rc < 0)
        return NULL;
    if (rc == 1)
        Py_RETURN_NONE;
    Py_INCREF(self->packet);
    return self->packet;
}

static PyObject *Port_tryrec(PortObject *self, PyObject *unused)
{
    if (usable(self) < 0 || check_dir(self, ARD_IN, "tryrec") < 0)
        return NULL;
    int rc = ard_tryrec(self->port, self->buf);
    if (rc == 1)
        Py_RETURN_TRUE;
    if (rc == 0)
        Py_RETURN_FALSE;
    if (rc == ARD_ENODATA)
        Py_RETURN_NONE;
    return raise_call(self, rc, "tryrec");
}

static PyObject *Port_new(PortObject *self, PyObject *unused)
{
    if (self->dtype == NULL && usable(self) < 0)
        return NULL;
    return PyObject_CallFunctionObjArgs(np_zeros, empty_shape, self->dtype, NULL);
}

static PyObject *Port_close(PortObject *self, PyObject *unused)
{
    if (self->busy)
        return raise_fmt(ARD_ESTATE, "port '%s' is in use by a blocking rec in another thread",
                         self->name);
    close_port(self);
    Py_RETURN_NONE;
}

static PyObject *Port_enter(PortObject *self, PyObject *unused)
{
    Py_INCREF(self);
    return (PyObject *)self;
}

static PyObject *Port_exit(PortObject *self, PyObject *args)
{
    PyObject *r = Port_close(self, NULL);
    if (r == NULL)
        return NULL;
    Py_DECREF(r);
    Py_RETURN_FALSE;
}

static PyObject *Port_set_spin(PortObject *self, PyObject *arg)
{
    if (usable(self) < 0)
        return NULL;
    long long ns = PyLong_AsLongLong(arg);
    if (ns == -1 && PyErr_Occurred())
        return NULL;
    int rc = ard_port_set_spin(self->port, ns);
    if (rc < 0)
        return raise_ard(rc);
    Py_RETURN_NONE;
}

static PyObject *Port_get_info(PortObject *self, void *closure)
{
    if (usable(self) < 0)
        return NULL;
    struct ard_info i = ard_port_info(self->port);
    PyObject *r = PyStructSequence_New(InfoType);
    if (r == NULL)
        return NULL;
    PyObject *v[4] = {PyLong_FromUnsignedLongLong(i.seq), PyLong_FromLongLong(i.mono_ns),
                      PyLong_FromLongLong(i.real_ns), PyLong_FromUnsignedLongLong(i.skipped)};
    for (int k = 0; k < 4; k++) {
        if (v[k] == NULL) {
            for (int j = 0; j < 4; j++)
                Py_XDECREF(v[j]);
            Py_DECREF(r);
            return NULL;
        }
    }
    for (int k = 0; k < 4; k++)
        PyStructSequence_SET_ITEM(r, k, v[k]);
    return r;
}

static PyObject *Port_get_dtype(PortObject *self, void *closure)
{
    if (self->dtype == NULL && (self->port == NULL || ensure_packet(self) < 0)) {
        if (!PyErr_Occurred())
            raise_fmt(ARD_ESTATE, "port '%s' is closed", self->name);
        return NULL;
    }
    Py_INCREF(self->dtype);
    return self->dtype;
}

static PyObject *Port_get_packet(PortObject *self, void *closure)
{
    if (self->packet == NULL && (self->port == NULL || ensure_packet(self) < 0)) {
        if (!PyErr_Occurred())
            raise_fmt(ARD_ESTATE, "port '%s' is closed", self->name);
        return NULL;
    }
    Py_INCREF(self->packet);
    return self->packet;
}

static PyObject *Port_get_name(PortObject *self, void *closure)
{
    return PyUnicode_FromString(self->name);
}

static PyObject *Port_get_connection(PortObject *self, void *closure)
{
    if (self->port == NULL)
        return raise_fmt(ARD_ESTATE, "port '%s' is closed", self->name);
    return PyUnicode_FromString(ard_port_connection(self->port));
}

static PyObject *Port_get_type(PortObject *self, void *closure)
{
    if (self->port == NULL)
        return raise_fmt(ARD_ESTATE, "port '%s' is closed", self->name);
    const char *t = ard_port_type(self->port);
    if (*t == '\0')
        Py_RETURN_NONE;
    return PyUnicode_FromString(t);
}

static PyObject *Port_get_size(PortObject *self, void *closure)
{
    return PyLong_FromSize_t(self->port ? ard_port_size(self->port) : self->size);
}

static PyObject *Port_get_direction(PortObject *self, void *closure)
{
    return PyUnicode_FromString(self->dir == ARD_IN ? "in" : "out");
}

static PyObject *Port_get_closed(PortObject *self, void *closure)
{
    return PyBool_FromLong(self->port == NULL);
}

static PyObject *Port_repr(PortObject *self)
{
    if (self->port == NULL)
        return PyUnicode_FromFormat("<ardnet.Port '%s' closed>", self->name);
    const char *t = ard_port_type(self->port);
    return PyUnicode_FromFormat("<ardnet.Port '%s' %s, connection '%s', %zu bytes, %s>", self->name,
                                self->dir == ARD_IN ? "in" : "out", ard_port_connection(self->port),
                                self->size, *t ? t : "opaque");
}

static PyMethodDef Port_methods[] = {
    {"send", (PyCFunction)(void (*)(void))Port_send, METH_FASTCALL,
     "send(packet=None): publish a packet (default: this port's own .packet). Accepts a numpy\n"
     "array of the port's dtype, or any contiguous buffer of the port's size. Never blocks."},
    {"rec", (PyCFunction)(void (*)(void))Port_rec, METH_FASTCALL | METH_KEYWORDS,
     "rec(timeout=None): wait for a packet newer than the last one this port returned and\n"
     "return it (the port's own .packet array, overwritten by the next rec). With a timeout in\n"
     "seconds, return None if none came in time. Releases the GIL while waiting; Ctrl-C\n"
     "raises KeyboardInterrupt."},
    {"tryrec", (PyCFunction)Port_tryrec, METH_NOARGS,
     "tryrec(): copy the newest packet into .packet without waiting. Returns True (newer than\n"
     "the last one returned), False (the same packet again) or None (nothing was ever sent)."},
    {"new", (PyCFunction)Port_new, METH_NOARGS, "new(): a fresh zeroed packet of this port."},
    {"set_spin", (PyCFunction)Port_set_spin, METH_O,
     "set_spin(ns): spin up to ns nanoseconds before sleeping in rec (IN ports)."},
    {"close", (PyCFunction)Port_close, METH_NOARGS,
     "close(): detach the port (an OUT port gives up the writer role at once)."},
    {"__enter__", (PyCFunction)Port_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)Port_exit, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Port_getset[] = {
    {"info", (getter)Port_get_info, NULL,
     "ardnet.Info(seq, mono_ns, real_ns, skipped) of the packet last returned (IN) or sent (OUT)",
     NULL},
    {"dtype", (getter)Port_get_dtype, NULL, "numpy dtype of this port's packets", NULL},
    {"packet", (getter)Port_get_packet, NULL,
     "the port's own packet: filled by rec/tryrec, sent by send() without argument", NULL},
    {"name", (getter)Port_get_name, NULL, "the port's name", NULL},
    {"connection", (getter)Port_get_connection, NULL, "the connection it is wired to", NULL},
    {"type", (getter)Port_get_type, NULL, "normalised type descriptor, None if opaque", NULL},
    {"size", (getter)Port_get_size, NULL, "packet size in bytes", NULL},
    {"direction", (getter)Port_get_direction, NULL, "\"in\" or \"out\"", NULL},
    {"closed", (getter)Port_get_closed, NULL, "True after close()", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject PortType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ardnet.Port",
    .tp_basicsize = sizeof(PortObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Port(name, direction, type=None, size=None, connection=None)\n\n"
              "A port of this block: direction \"in\" or \"out\"; type a descriptor such as\n"
              "\"f64[7] u32\" (size follows from it) or size= alone for opaque bytes, or\n"
              "neither to adopt the size and type of the existing connection;\n"
              "connection the default connection (else the name; --ard NAME=CONN wins).\n"
              "Before ardnet.init() the port is only declared, init() attaches it;\n"
              "created after init() it attaches at once.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Port_init,
    .tp_dealloc = (destructor)Port_dealloc,
    .tp_repr = (reprfunc)Port_repr,
    .tp_methods = Port_methods,
    .tp_getset = Port_getset,
};

/* ---- Period ----------------------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD ard_period p;
} PeriodObject;

static int Period_init(PeriodObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"hz", NULL};
    double hz;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "d:Period", kwlist, &hz))
        return -1;
    if (!(hz > 0 && hz <= 1e9)) {
        raise_fmt(ARD_EINVAL, "Period: rate %g Hz is not in (0, 1e9]", hz);
        return -1;
    }
    int rc = ard_period_init(&self->p, (int64_t)(1e9 / hz + 0.5));
    if (rc < 0) {
        raise_ard(rc);
        return -1;
    }
    return 0;
}

/* Sleep until the next deadline; returns the periods missed. Long waits in the main thread
 * are first slept in interruptible pieces up to SIGNAL_SLICE_NS before the deadline, then
 * ard_period_wait does the rest and the bookkeeping. */
static PyObject *Period_wait(PeriodObject *self, PyObject *unused)
{
    if (self->p.period_ns <= 0)
        return raise_fmt(ARD_ESTATE, "Period was not initialised");
    int missed;
    if (PyThread_get_thread_ident() == main_thread) {
        for (;;) {
            int64_t until = self->p.next_ns - SIGNAL_SLICE_NS;
            if (ard_now_ns() >= until)
                break;
            struct timespec ts = {.tv_sec = until / 1000000000, .tv_nsec = until % 1000000000};
            int rc;
            Py_BEGIN_ALLOW_THREADS;
            rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
            Py_END_ALLOW_THREADS;
            if (rc == EINTR && PyErr_CheckSignals() < 0)
                return NULL;
        }
    }
    Py_BEGIN_ALLOW_THREADS;
    missed = ard_period_wait(&self->p);
    Py_END_ALLOW_THREADS;
    if (PyErr_CheckSignals() < 0)
        return NULL;
    return PyLong_FromLong(missed);
}

static PyMethodDef Period_methods[] = {
    {"wait", (PyCFunction)Period_wait, METH_NOARGS,
     "wait(): sleep until the next deadline (absolute, no drift); returns the number of\n"
     "periods missed (0 when on time). Releases the GIL; Ctrl-C raises KeyboardInterrupt."},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef Period_members[] = {
    {"period_ns", T_LONGLONG, offsetof(PeriodObject, p.period_ns), READONLY, "period in ns"},
    {"next_ns", T_LONGLONG, offsetof(PeriodObject, p.next_ns), READONLY,
     "CLOCK_MONOTONIC deadline of the next wake-up, ns"},
    {"overruns", T_ULONGLONG, offsetof(PeriodObject, p.overruns), READONLY,
     "periods missed in total"},
    {"cycles", T_ULONGLONG, offsetof(PeriodObject, p.cycles), READONLY, "completed waits"},
    {NULL, 0, 0, 0, NULL},
};

static PyTypeObject PeriodType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ardnet.Period",
    .tp_basicsize = sizeof(PeriodObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Period(hz): a fixed-rate loop on absolute CLOCK_MONOTONIC deadlines; the first\n"
              "deadline is one period from now. wait() returns the periods missed.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Period_init,
    .tp_methods = Period_methods,
    .tp_members = Period_members,
};

/* ---- module functions ------------------------------------------------------------------- */

static void flush_std(const char *name)
{
    PyObject *f = PySys_GetObject(name); /* borrowed */
    if (f != NULL && f != Py_None) {
        PyObject *r = PyObject_CallMethod(f, "flush", NULL);
        if (r == NULL)
            PyErr_Clear();
        Py_XDECREF(r);
    }
}

static PyObject *mod_init(PyObject *self, PyObject *args)
{
    PyObject *list = NULL;
    if (!PyArg_ParseTuple(args, "|O:init", &list))
        return NULL;
    if (list == NULL || list == Py_None)
        list = PySys_GetObject("argv"); /* borrowed */
    if (list == NULL || !PyList_Check(list))
        return PyErr_Format(PyExc_TypeError, "init() needs a list like sys.argv");
    Py_INCREF(list);
    Py_ssize_t n = PyList_GET_SIZE(list);
    PyObject *items = PyList_GetSlice(list, 0, n); /* keeps the originals alive */
    PyObject *enc = PyList_New(n);
    char **argv = PyMem_Calloc((size_t)n + 1, sizeof *argv);
    PyObject *result = NULL, *kept = NULL;
    if (items == NULL || enc == NULL || argv == NULL) {
        if (argv == NULL)
            PyErr_NoMemory();
        goto out;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *it = PyList_GET_ITEM(items, i), *b;
        if (PyUnicode_Check(it)) {
            b = PyUnicode_EncodeFSDefault(it);
        } else if (PyBytes_Check(it)) {
            b = it;
            Py_INCREF(b);
        } else {
            PyErr_Format(PyExc_TypeError, "init(): argument %zd is %.50s, not str", i,
                         Py_TYPE(it)->tp_name);
            goto out;
        }
        if (b == NULL)
            goto out;
        PyList_SET_ITEM(enc, i, b);
        argv[i] = PyBytes_AS_STRING(b);
    }
    flush_std("stdout"); /* --ard-help prints from C and exits */
    flush_std("stderr");
    int argc = (int)n;
    int rc = ard_init(&argc, argv);
    if (rc < 0) {
        raise_ard(rc);
        goto out;
    }
    /* The library kept the remaining entries in order: map them back to the list's objects. */
    kept = PyList_New(0);
    if (kept == NULL)
        goto out;
    Py_ssize_t j = 0;
    for (int i = 0; i < argc; i++) {
        while (j < n && PyBytes_AS_STRING(PyList_GET_ITEM(enc, j)) != argv[i])
            j++;
        if (j == n) {
            PyErr_SetString(PyExc_RuntimeError, "init(): argv entries were reordered");
            goto out;
        }
        if (PyList_Append(kept, PyList_GET_ITEM(items, j)) < 0)
            goto out;
        j++;
    }
    if (PyList_SetSlice(list, 0, n, kept) < 0)
        goto out;
    result = list;
    Py_INCREF(result);
out:
    PyMem_Free(argv);
    Py_XDECREF(kept);
    Py_XDECREF(enc);
    Py_XDECREF(items);
    Py_DECREF(list);
    return result;
}

static PyObject *mod_fini(PyObject *self, PyObject *unused)
{
    for (PortObject *p = open_ports; p; p = p->next)
        if (p->busy)
            return raise_fmt(ARD_ESTATE, "fini(): port '%s' is in a blocking rec", p->name);
    while (open_ports)
        close_port(open_ports);
    ard_fini();
    Py_RETURN_NONE;
}

static PyObject *mod_domain(PyObject *self, PyObject *unused)
{
    return PyUnicode_FromString(ard_domain());
}

static PyObject *mod_set_domain(PyObject *self, PyObject *args)
{
    const char *d;
    if (!PyArg_ParseTuple(args, "s:set_domain", &d))
        return NULL;
    int rc = ard_set_domain(d);
    if (rc < 0)
        return raise_ard(rc);
    Py_RETURN_NONE;
}

static PyObject *mod_domain_unlink(PyObject *self, PyObject *args)
{
    const char *d = NULL;
    if (!PyArg_ParseTuple(args, "|z:domain_unlink", &d))
        return NULL;
    int rc = ard_domain_unlink(d);
    if (rc < 0)
        return raise_ard(rc);
    return PyLong_FromLong(rc);
}

static PyObject *mod_now_ns(PyObject *self, PyObject *unused)
{
    return PyLong_FromLongLong(ard_now_ns());
}

static PyObject *mod_realtime_ns(PyObject *self, PyObject *unused)
{
    return PyLong_FromLongLong(ard_realtime_ns());
}

static PyObject *mod_strerror(PyObject *self, PyObject *arg)
{
    long c = PyLong_AsLong(arg);
    if (c == -1 && PyErr_Occurred())
        return NULL;
    return PyUnicode_FromString(ard_strerror((int)c));
}

#if ARD_HAVE_LOG /* the recording library (part ARD_LOG, libardnet_log) */
/* ---- log files (ardnet.log.read) -------------------------------------------------------- */

/* A new 1-D numpy array of n elements of dtype `descr` (a dtype object). */
static PyArrayObject *new_array(size_t n, PyObject *descr)
{
    PyArray_Descr *d = NULL;
    if (!PyArray_DescrConverter(descr, &d))
        return NULL;
    npy_intp dim = (npy_intp)n;
    /* A subarray dtype (opaque "u1" x size) becomes a 2-D array (n, size) of u1. */
    return (PyArrayObject *)PyArray_Empty(1, &dim, d, 0);
}

/* A new 1-D numpy array of n elements of a plain numpy type. */
static PyArrayObject *new_plain(size_t n, int typenum)
{
    npy_intp dim = (npy_intp)n;
    return (PyArrayObject *)PyArray_Empty(1, &dim, PyArray_DescrFromType(typenum), 0);
}

static int set_item(PyObject *dict, const char *key, PyObject *value)
{
    if (value == NULL)
        return -1;
    int rc = PyDict_SetItemString(dict, key, value);
    Py_DECREF(value);
    return rc;
}

static PyObject *str_or_none(const char *s)
{
    if (s == NULL)
        Py_RETURN_NONE;
    return PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "replace");
}

/* Per connection while filling: where the next message goes. */
struct log_fill {
    size_t n, cap, size;
    uint64_t *seq;
    uint64_t *log_ns, *real_ns; /* MCAP times are unsigned: 2^63 and more are kept */
    char *packets;              /* NULL for a connection whose packets are not decoded */
};

/* A channel's schema whole: str when its bytes are UTF-8 (zero bytes included), else bytes
 * (a binary schema, e.g. a protobuf FileDescriptorSet). */
static PyObject *schema_object(const struct ard_log_conn *c)
{
    PyObject *s = PyUnicode_DecodeUTF8(c->schema, (Py_ssize_t)c->schema_len, "strict");
    if (s != NULL || !PyErr_ExceptionMatches(PyExc_UnicodeDecodeError))
        return s;
    PyErr_Clear();
    return PyBytes_FromStringAndSize(c->schema, (Py_ssize_t)c->schema_len);
}

/* The arrays of one connection: a dict of its description, times and packets. */
static PyObject *log_conn_dict(const struct ard_log_conn *c, struct log_fill *f)
{
    PyObject *d = PyDict_New();
    if (d == NULL)
        return NULL;
    PyObject *seq = NULL, *lt = NULL, *rt = NULL, *pk = NULL;
    seq = (PyObject *)new_plain(c->count, NPY_UINT64);
    lt = (PyObject *)new_plain(c->count, NPY_UINT64);
    rt = (PyObject *)new_plain(c->count, NPY_UINT64);
    if (seq == NULL || lt == NULL || rt == NULL)
        goto fail;
    f->n = 0;
    f->cap = c->count;
    f->size = c->size;
    f->seq = PyArray_DATA((PyArrayObject *)seq);
    f->log_ns = PyArray_DATA((PyArrayObject *)lt);
    f->real_ns = PyArray_DATA((PyArrayObject *)rt);
    f->packets = NULL;
    if (c->ardnet && c->size > 0) {
        PyObject *dt = make_dtype(c->type[0] ? c->type : NULL, c->size, NULL);
        if (dt == NULL)
            goto fail;
        pk = (PyObject *)new_array(c->count, dt);
        Py_DECREF(dt);
        if (pk == NULL)
            goto fail;
        if (!PyArray_IS_C_CONTIGUOUS((PyArrayObject *)pk) ||
            (size_t)PyArray_NBYTES((PyArrayObject *)pk) != c->count * c->size) {
            raise_fmt(ARD_ETYPE, "connection '%s': packets of type '%s' are not %zu bytes", c->name,
                      c->type, c->size);
            goto fail;
        }
        f->packets = PyArray_DATA((PyArrayObject *)pk);
    } else {
        pk = Py_None;
        Py_INCREF(pk);
    }
    if (set_item(d, "name", str_or_none(c->name)) < 0 ||
        set_item(d, "type", str_or_none(c->type)) < 0 ||
        set_item(d, "size", PyLong_FromSize_t(c->size)) < 0 ||
        set_item(d, "ardnet", PyBool_FromLong(c->ardnet)) < 0 ||
        set_item(d, "schema", schema_object(c)) < 0 ||
        set_item(d, "schema_data",
                 PyBytes_FromStringAndSize(c->schema, (Py_ssize_t)c->schema_len)) < 0 ||
        set_item(d, "schema_name", str_or_none(c->schema_name)) < 0 ||
        set_item(d, "schema_encoding", str_or_none(c->schema_encoding)) < 0 ||
        set_item(d, "channel_id", PyLong_FromUnsignedLong(c->channel_id)) < 0 ||
        set_item(d, "encoding", str_or_none(c->encoding)) < 0 ||
        set_item(d, "count", PyLong_FromUnsignedLongLong(c->count)) < 0 ||
        set_item(d, "missed", PyLong_FromUnsignedLongLong(c->missed)) < 0 ||
        set_item(d, "seq", seq) < 0 || set_item(d, "log_ns", lt) < 0 ||
        set_item(d, "real_ns", rt) < 0 || set_item(d, "packets", pk) < 0) {
        Py_DECREF(d);
        return NULL;
    }
    return d;
fail:
    Py_XDECREF(seq);
    Py_XDECREF(lt);
    Py_XDECREF(rt);
    Py_XDECREF(pk);
    Py_DECREF(d);
    return NULL;
}

static PyObject *log_summary_dict(ard_logr *r)
{
    struct ard_log_summary s;
    ard_logr_summary(r, &s);
    PyObject *d = PyDict_New();
    if (d == NULL)
        return NULL;
    if (set_item(d, "messages", PyLong_FromUnsignedLongLong(s.messages)) < 0 ||
        set_item(d, "chunks", PyLong_FromUnsignedLongLong(s.chunks)) < 0 ||
        set_item(d, "file_size", PyLong_FromUnsignedLongLong(s.file_size)) < 0 ||
        set_item(d, "start_ns", PyLong_FromUnsignedLongLong(s.start_ns)) < 0 ||
        set_item(d, "end_ns", PyLong_FromUnsignedLongLong(s.end_ns)) < 0 ||
        set_item(d, "compression", str_or_none(s.compression)) < 0 ||
        set_item(d, "complete", PyBool_FromLong(s.complete)) < 0 ||
        set_item(d, "valid_end", PyLong_FromUnsignedLongLong(s.valid_end)) < 0 ||
        set_item(d, "cut", str_or_none(s.cut)) < 0) {
        Py_DECREF(d);
        return NULL;
    }
    return d;
}

static PyObject *log_meta_dict(ard_logr *r)
{
    static const char *const keys[] = {"host", "domain", "version", "start_ns", "format"};
    PyObject *d = PyDict_New();
    if (d == NULL)
        return NULL;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const char *v = ard_logr_meta(r, "ardnet", keys[i]);
        if (v != NULL && set_item(d, keys[i], str_or_none(v)) < 0) {
            Py_DECREF(d);
            return NULL;
        }
    }
    return d;
}

/* Read every message into the arrays (GIL released: the arrays are not shared yet).
 * Returns 0, a negative ARD_E* code from the reader, or 1 when a connection has more
 * messages than its count said (*bad gets its index). */
static int log_fill_all(ard_logr *r, struct log_fill *fills, size_t nconns, size_t *bad)
{
    struct ard_log_msg m;
    int rc;
    while ((rc = ard_logr_next(r, &m)) == 1) {
        if (m.conn >= nconns || fills[m.conn].n >= fills[m.conn].cap) {
            *bad = m.conn;
            return 1;
        }
        struct log_fill *f = &fills[m.conn];
        f->seq[f->n] = m.seq;
        f->log_ns[f->n] = m.log_ns;
        f->real_ns[f->n] = m.real_ns;
        if (f->packets != NULL && m.packet != NULL)
            memcpy(f->packets + f->n * f->size, m.packet, f->size);
        else if (f->packets != NULL)
            memset(f->packets + f->n * f->size, 0, f->size);
        f->n++;
    }
    return rc;
}

/* _log_read(path) -> {"meta": {...}, "summary": {...}, "conns": [dict per connection]}.
 * One pass over the messages through the C reader (ard_logr_*), straight into numpy arrays
 * sized from the file's per-connection counts: no Python object per message. */
static PyObject *mod_log_read(PyObject *self, PyObject *arg)
{
    PyObject *bytes = NULL;
    if (!PyUnicode_FSConverter(arg, &bytes))
        return NULL;
    const char *path = PyBytes_AS_STRING(bytes);
    PyThreadState *ts = PyEval_SaveThread();
    ard_logr *r = ard_logr_open(path);
    int code = r == NULL ? ard_lasterror() : 0; /* thread-local: read before anything else */
    PyEval_RestoreThread(ts);
    if (r == NULL) {
        Py_DECREF(bytes);
        return raise_ard(code < 0 ? code : ARD_ESYS);
    }
    size_t n = ard_logr_nconns(r);
    struct log_fill *fills = PyMem_Calloc(n ? n : 1, sizeof *fills);
    PyObject *out = PyDict_New(), *conns = PyList_New((Py_ssize_t)n);
    if (fills == NULL || out == NULL || conns == NULL) {
        if (fills == NULL)
            PyErr_NoMemory();
        goto fail;
    }
    for (size_t i = 0; i < n; i++) {
        PyObject *d = log_conn_dict(ard_logr_conn(r, i), &fills[i]);
        if (d == NULL)
            goto fail;
        PyList_SET_ITEM(conns, (Py_ssize_t)i, d);
    }
    size_t bad = 0;
    ts = PyEval_SaveThread();
    int rc = log_fill_all(r, fills, n, &bad);
    PyEval_RestoreThread(ts);
    if (rc == 1) {
        raise_fmt(ARD_ESTALE, "%s: connection %zu has more messages than the file's index says",
                  path, bad);
        goto fail;
    }
    if (rc < 0) {
        raise_ard(rc);
        goto fail;
    }
    for (size_t i = 0; i < n; i++) {
        /* Fewer messages than counted (a file cut short): the arrays keep the ones read. */
        if (set_item(PyList_GET_ITEM(conns, (Py_ssize_t)i), "n", PyLong_FromSize_t(fills[i].n)) < 0)
            goto fail;
    }
    if (set_item(out, "meta", log_meta_dict(r)) < 0 ||
        set_item(out, "summary", log_summary_dict(r)) < 0 ||
        PyDict_SetItemString(out, "conns", conns) < 0)
        goto fail;
    Py_DECREF(conns);
    PyMem_Free(fills);
    ard_logr_close(r);
    Py_DECREF(bytes);
    return out;
fail:
    Py_XDECREF(out);
    Py_XDECREF(conns);
    PyMem_Free(fills);
    ard_logr_close(r);
    Py_DECREF(bytes);
    return NULL;
}

#endif /* ARD_HAVE_LOG */

/* The smallest call into C there is: the baseline of the benchmark (bench/python). */
static PyObject *mod_noop(PyObject *self, PyObject *unused)
{
    Py_RETURN_NONE;
}

static PyMethodDef mod_methods[] = {
    {"init", mod_init, METH_VARARGS,
     "init(argv=None): apply and remove the --ard* options from the list (default sys.argv,\n"
     "changed in place and returned), then attach every port. Call once."},
    {"fini", mod_fini, METH_NOARGS,
     "fini(): close every port and forget the options; init() may be called again."},
    {"dtype", mod_dtype, METH_VARARGS, "dtype(descriptor): numpy dtype of its packets."},
    {"domain", mod_domain, METH_NOARGS, "domain(): the domain in force."},
    {"set_domain", mod_set_domain, METH_VARARGS,
     "set_domain(name): set the domain before init() (--ard-domain still wins)."},
    {"domain_unlink", mod_domain_unlink, METH_VARARGS,
     "domain_unlink(domain=None): remove every connection of the domain; returns the count."},
    {"now_ns", mod_now_ns, METH_NOARGS, "now_ns(): CLOCK_MONOTONIC in ns."},
    {"realtime_ns", mod_realtime_ns, METH_NOARGS, "realtime_ns(): CLOCK_REALTIME in ns."},
    {"strerror", mod_strerror, METH_O, "strerror(code): short text of an ARD_E* code."},
#if ARD_HAVE_LOG
    {"_log_read", mod_log_read, METH_O,
     "_log_read(path): every message of a recording as numpy arrays (use ardnet.log.read)."},
#endif
    {"_noop", mod_noop, METH_NOARGS, "does nothing (benchmark baseline)"},
    {NULL, NULL, 0, NULL},
};

static PyStructSequence_Field info_fields[] = {
    {"seq", "sequence number (1 for the first packet ever sent)"},
    {"mono_ns", "writer's CLOCK_MONOTONIC at send, ns"},
    {"real_ns", "writer's CLOCK_REALTIME at send, ns"},
    {"skipped", "packets sent between the previous one this port returned and this one"},
    {NULL, NULL},
};

static PyStructSequence_Desc info_desc = {
    "ardnet.Info", "Per-packet information: seq, mono_ns, real_ns, skipped.", info_fields, 4};

static struct PyModuleDef moddef = {
    PyModuleDef_HEAD_INIT,
    "ardnet._ardnet",
    "C core of the ardnet binding (import ardnet, not this).",
    -1,
    mod_methods,
    NULL,
    NULL,
    NULL,
    NULL,
};

static int add_codes(PyObject *m)
{
    static const int codes[] = {ARD_EINVAL, ARD_ENOMEM,     ARD_ESYS,      ARD_EOPTION, ARD_ETYPE,
                                ARD_EBUSY,  ARD_ENODATA,    ARD_ETIMEDOUT, ARD_EACCES,  ARD_ENOENT,
                                ARD_ESTALE, ARD_ERTREFUSED, ARD_ESTATE,    ARD_EINTR};
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
        if (PyModule_AddIntConstant(m, code_name(codes[i]) + 4, codes[i]) < 0)
            return -1;
    return 0;
}

static PyObject *main_thread_ident(void)
{
    PyObject *threading = PyImport_ImportModule("threading");
    if (threading == NULL)
        return NULL;
    PyObject *t = PyObject_CallMethod(threading, "main_thread", NULL);
    Py_DECREF(threading);
    if (t == NULL)
        return NULL;
    PyObject *ident = PyObject_GetAttrString(t, "ident");
    Py_DECREF(t);
    return ident;
}

PyMODINIT_FUNC PyInit__ardnet(void);

PyMODINIT_FUNC PyInit__ardnet(void)
{
    import_array();
    PyObject *np = PyImport_ImportModule("numpy");
    if (np == NULL)
        return NULL;
    np_dtype = PyObject_GetAttrString(np, "dtype");
    np_zeros = PyObject_GetAttrString(np, "zeros");
    Py_DECREF(np);
    empty_shape = PyTuple_New(0);
    if (np_dtype == NULL || np_zeros == NULL || empty_shape == NULL)
        return NULL;
    PyObject *ident = main_thread_ident();
    if (ident == NULL)
        return NULL;
    main_thread = PyLong_AsUnsignedLong(ident);
    Py_DECREF(ident);
    if (PyErr_Occurred())
        return NULL;

    if (PyType_Ready(&PortType) < 0 || PyType_Ready(&PeriodType) < 0)
        return NULL;
    InfoType = PyStructSequence_NewType(&info_desc);
    if (InfoType == NULL)
        return NULL;

    PyObject *m = PyModule_Create(&moddef);
    if (m == NULL)
        return NULL;
    PyObject *dict = Py_BuildValue(
        "{ss}", "__doc__",
        "An ardnet call failed: .code (negative ARD_E* number), .name ('ARD_EBUSY'), .detail");
    Error = dict ? PyErr_NewException("ardnet.Error", NULL, dict) : NULL;
    Py_XDECREF(dict);
    if (Error == NULL || PyModule_AddObjectRef(m, "Error", Error) < 0 ||
        PyModule_AddObjectRef(m, "Port", (PyObject *)&PortType) < 0 ||
        PyModule_AddObjectRef(m, "Period", (PyObject *)&PeriodType) < 0 ||
        PyModule_AddObjectRef(m, "Info", (PyObject *)InfoType) < 0 || add_codes(m) < 0 ||
        PyModule_AddObject(m, "LIBRARY_VERSION",
                           PyUnicode_FromFormat("%d.%d.%d", ARD_VERSION_MAJOR, ARD_VERSION_MINOR,
                                                ARD_VERSION_PATCH)) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
