/*
 * dds.c - ros2: endpoints: routes to and from ROS 2 topics over Cyclone DDS.
 *
 * A ros2:/arm/state endpoint is the DDS topic "rt/arm/state" of type
 * "ardnet_msgs::msg::dds_::<Name>_" (src/ros2 names it after the route's connection, by the
 * rule of docs/ros2.md#names that the recorder and the Foxglove protocol follow too).
 * Samples are XCDR1, little-endian, with their 4-byte encapsulation header: exactly the bytes
 * the recorder writes, made by the same encoder (src/ros2/cdr.c). Cyclone is given them
 * as they are through a sertype of our own whose serdata is that byte string: no second
 * encoder, no type descriptor to keep in step with cdr.c, and a received sample is checked and
 * decoded by the same code as a recorded one. The type is keyless (one instance per topic),
 * as a ROS 2 message is.
 *
 * A peer of another type on the same topic never matches (Cyclone matches endpoints by topic
 * and type name): the builtin publication and subscription topics show it, and each route
 * reports the first one and counts them (drop_type).
 */
#include "ard_common.h"
#include "ardn.h"
#include "ardros2.h"
#include "dds_security.h"

#include <dds/dds.h>
#include <dds/ddsi/ddsi_serdata.h>
#include <dds/ddsi/ddsi_sertype.h>
#include <dds/ddsi/q_radmin.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const bool ardn_have_ros2 = true;

int ardn_ros2_check_topic(const char *topic)
{
    char conn[ARD_MAX_NAME + 1];
    int rc = ardr2_topic_check(topic, NULL);
    return rc < 0 ? rc : ardr2_topic_conn(topic, conn, sizeof conn);
}

int ardn_ros2_type_parse(const char *val, char *out, size_t len)
{
    return ardr2_dds_type(val, out, len);
}

#define IDLE_NS 100000000LL     /* how often the DDS thread looks at the stop flag */
#define TAKE_MAX 16             /* samples per take */
#define INPUT_MAX 1024          /* samples an input's reader holds until they are taken */
#define INPUT_BYTES (64u << 20) /* ... and bytes: fewer samples of a large connection wait */
#define INPUT_MIN 2             /* ... but never fewer than this */
/* A route's qos bit of dds.c alone: best effort was asked for (--qos best-effort). */
#define QOS_BEST_EFFORT 0x100u

/* ---- the sertype: a connection's CDR as an opaque, fixed-size byte string -------------------- */

struct rtype {
    struct ddsi_sertype c;
    uint32_t len; /* CDR bytes of a sample, header included */
};

struct rdata {
    struct ddsi_serdata c;
    uint32_t len;   /* CDR bytes, header included (0: a key-only serdata) */
    uint8_t data[]; /* len bytes, then zeros up to a multiple of 4 */
};

static const struct ddsi_serdata_ops rdata_ops;

static struct rdata *rdata_new(const struct ddsi_sertype *t, enum ddsi_serdata_kind kind,
                               size_t len)
{
    size_t room = (len + 3) & ~(size_t)3;
    if (len > UINT32_MAX - 4)
        return NULL;
    struct rdata *d = malloc(sizeof *d + room);
    if (!d)
        return NULL;
    ddsi_serdata_init(&d->c, t, kind);
    d->c.hash = t ? t->serdata_basehash : 0; /* keyless: every sample is the one instance */
    d->len = (uint32_t)len;
    if (room > len)
        memset(d->data + len, 0, room - len);
    return d;
}

static bool rdata_eqkey(const struct ddsi_serdata *a, const struct ddsi_serdata *b)
{
    (void)a;
    (void)b;
    return true;
}

static uint32_t rdata_size(const struct ddsi_serdata *d)
{
    return ((const struct rdata *)d)->len;
}

/* A sample received from the network: the fragments of one message, in order, possibly
 * overlapping; the payload is copied out of them. */
static struct ddsi_serdata *rdata_from_ser(const struct ddsi_sertype *t,
                                           enum ddsi_serdata_kind kind, const struct nn_rdata *frag,
                                           size_t size)
{
    struct rdata *d = rdata_new(t, kind, size);
    if (!d)
        return NULL;
    uint32_t off = 0;
    for (; frag && off < size; frag = frag->nextfrag) {
        if (frag->maxp1 <= off || frag->min > off)
            continue;
        uint32_t end = frag->maxp1 < size ? frag->maxp1 : (uint32_t)size;
        const unsigned char *p = NN_RMSG_PAYLOADOFF(frag->rmsg, NN_RDATA_PAYLOAD_OFF(frag));
        memcpy(d->data + off, p + (off - frag->min), end - off);
        off = end;
    }
    if (off < size) {
        free(d);
        return NULL;
    }
    return &d->c;
}

static struct ddsi_serdata *rdata_from_ser_iov(const struct ddsi_sertype *t,
                                               enum ddsi_serdata_kind kind, ddsrt_msg_iovlen_t niov,
                                               const ddsrt_iovec_t *iov, size_t size)
{
    struct rdata *d = rdata_new(t, kind, size);
    if (!d)
        return NULL;
    size_t off = 0;
    for (ddsrt_msg_iovlen_t i = 0; i < niov && off < size; i++) {
        size_t n = iov[i].iov_len < size - off ? iov[i].iov_len : size - off;
        memcpy(d->data + off, iov[i].iov_base, n);
        off += n;
    }
    return &d->c;
}

static struct ddsi_serdata *rdata_from_keyhash(const struct ddsi_sertype *t,
                                               const struct ddsi_keyhash *kh)
{
    (void)kh;
    struct rdata *d = rdata_new(t, SDK_KEY, 0);
    return d ? &d->c : NULL;
}

/* A "sample" of this type is its CDR (the sertype's len bytes). */
static struct ddsi_serdata *rdata_from_sample(const struct ddsi_sertype *t,
                                              enum ddsi_serdata_kind kind, const void *sample)
{
    const struct rtype *rt = (const struct rtype *)t;
    struct rdata *d = rdata_new(t, kind, kind == SDK_DATA ? rt->len : 0);
    if (d && kind == SDK_DATA)
        memcpy(d->data, sample, rt->len);
    return d ? &d->c : NULL;
}

static void rdata_to_ser(const struct ddsi_serdata *d, size_t off, size_t sz, void *buf)
{
    memcpy(buf, ((const struct rdata *)d)->data + off, sz);
}

static struct ddsi_serdata *rdata_to_ser_ref(const struct ddsi_serdata *d, size_t off, size_t sz,
                                             ddsrt_iovec_t *ref)
{
    ref->iov_base = (void *)(((const struct rdata *)d)->data + off);
    ref->iov_len = (ddsrt_iov_len_t)sz;
    return ddsi_serdata_ref(d);
}

static void rdata_to_ser_unref(struct ddsi_serdata *d, const ddsrt_iovec_t *ref)
{
    (void)ref;
    ddsi_serdata_unref(d);
}

static bool rdata_to_sample(const struct ddsi_serdata *d, void *sample, void **bufptr, void *lim)
{
    (void)bufptr;
    (void)lim;
    const struct rdata *r = (const struct rdata *)d;
    memcpy(sample, r->data, r->len);
    return true;
}

static struct ddsi_serdata *rdata_to_untyped(const struct ddsi_serdata *d)
{
    struct rdata *k = rdata_new(d->type, SDK_KEY, 0);
    if (!k)
        return NULL;
    k->c.type = NULL;
    k->c.hash = d->hash;
    return &k->c;
}

static bool rdata_untyped_to_sample(const struct ddsi_sertype *t, const struct ddsi_serdata *d,
                                    void *sample, void **bufptr, void *lim)
{
    (void)t;
    (void)d;
    (void)sample;
    (void)bufptr;
    (void)lim;
    return true; /* keyless: a key-only sample has nothing to fill in */
}

static void rdata_free(struct ddsi_serdata *d)
{
    free(d);
}

static size_t rdata_print(const struct ddsi_sertype *t, const struct ddsi_serdata *d, char *buf,
                          size_t size)
{
    (void)t;
    return (size_t)snprintf(buf, size, "ardnet CDR, %u bytes", ((const struct rdata *)d)->len);
}

static void rdata_keyhash(const struct ddsi_serdata *d, struct ddsi_keyhash *buf, bool md5)
{
    (void)d;
    (void)md5;
    memset(buf, 0, sizeof *buf);
}

static const struct ddsi_serdata_ops rdata_ops = {
    .eqkey = rdata_eqkey,
    .get_size = rdata_size,
    .from_ser = rdata_from_ser,
    .from_ser_iov = rdata_from_ser_iov,
    .from_keyhash = rdata_from_keyhash,
    .from_sample = rdata_from_sample,
    .to_ser = rdata_to_ser,
    .to_ser_ref = rdata_to_ser_ref,
    .to_ser_unref = rdata_to_ser_unref,
    .to_sample = rdata_to_sample,
    .to_untyped = rdata_to_untyped,
    .untyped_to_sample = rdata_untyped_to_sample,
    .free = rdata_free,
    .print = rdata_print,
    .get_keyhash = rdata_keyhash,
};

static void rtype_free(struct ddsi_sertype *t)
{
    ddsi_sertype_fini(t);
    free(t);
}

static void rtype_zero_samples(const struct ddsi_sertype *t, void *samples, size_t count)
{
    memset(samples, 0, count * ((const struct rtype *)t)->len);
}

static void rtype_realloc_samples(void **ptrs, const struct ddsi_sertype *t, void *old,
                                  size_t oldcount, size_t count)
{
    size_t len = ((const struct rtype *)t)->len;
    char *p = oldcount == count ? old : realloc(old, count * len);
    if (p && count > oldcount)
        memset(p + oldcount * len, 0, (count - oldcount) * len);
    for (size_t i = 0; i < count; i++)
        ptrs[i] = p ? p + i * len : NULL;
}

static void rtype_free_samples(const struct ddsi_sertype *t, void **ptrs, size_t count,
                               dds_free_op_t op)
{
    (void)t;
    if (count > 0 && (op & DDS_FREE_ALL_BIT))
        free(ptrs[0]);
}

static bool rtype_equal(const struct ddsi_sertype *a, const struct ddsi_sertype *b)
{
    return ((const struct rtype *)a)->len == ((const struct rtype *)b)->len;
}

static uint32_t rtype_hash(const struct ddsi_sertype *t)
{
    return ((const struct rtype *)t)->len;
}

static size_t rtype_ser_size(const struct ddsi_sertype *t, const void *sample)
{
    (void)sample;
    return ((const struct rtype *)t)->len;
}

static bool rtype_serialize(const struct ddsi_sertype *t, const void *sample, void *dst,
                            size_t size)
{
    size_t len = ((const struct rtype *)t)->len;
    if (size < len)
        return false;
    memcpy(dst, sample, len);
    return true;
}

static const struct ddsi_sertype_ops rtype_ops = {
    .version = ddsi_sertype_v0,
    .free = rtype_free,
    .zero_samples = rtype_zero_samples,
    .realloc_samples = rtype_realloc_samples,
    .free_samples = rtype_free_samples,
    .equal = rtype_equal,
    .hash = rtype_hash,
    .get_serialized_size = rtype_ser_size,
    .serialize_into = rtype_serialize,
};

/* ---- endpoints --------------------------------------------------------------------------------
 */

struct ardn_dds_ep {
    struct ardn_route *r;
    struct ardn_ep *ep;
    bool input;
    char topic[ARDN_EP_TEXT + 4];  /* DDS topic name: "rt" + the ROS 2 name */
    char type[ARDR2_TYPE_MAX];     /* DDS type name */
    dds_entity_t tp, wr, rd;       /* topic, writer (output), reader (input) */
    const struct ddsi_sertype *st; /* the topic's sertype */
    struct ardr2_layout lay;
    uint32_t len;        /* CDR bytes of a sample */
    uint64_t seq;        /* samples taken (input) */
    struct rdata *spare; /* output: the last sample written, with a reference of ours */
    bool write_reported, bad_reported, peer_reported;
    bool reliable; /* the endpoint's reliability: an output's default is reliable */
    /* Incompatible QoS: set by Cyclone's listener thread, reported by the DDS thread. */
    atomic_int qos_pending;
    int64_t qos_reported_ns; /* when the last report was printed (DDS thread) */
    int64_t qos_since_ns;    /* when a report began to wait for the peer's discovery data */
    char qos_peer[160];      /* the newest discovered peer whose QoS does not match */
};

static struct {
    dds_entity_t pp, ws, pubs, subs; /* participant, waitset, builtin readers */
    dds_entity_t wake;               /* guard condition: the thread is to stop */
    dds_entity_t qos_gc;             /* guard condition: an endpoint has an incompatible peer */
    dds_entity_t info_tp, info_wr;   /* ros_discovery_info: the node and its endpoints */
    dds_entity_t dom;                /* the domain, when made with a discovery configuration */
    dds_guid_t guid;
    struct ardn_dds_ep *eps;
    int neps;
    struct ardr2_names names; /* the routes' message names (docs/ros2.md#names) */
    pthread_t thread;
    bool started;
} dds;

int ardn_qos_parse(struct ardn_route *r, const char *val)
{
    unsigned q = 0;
    char buf[128];
    /* "best-effort" given: outputs too are best effort (their default is reliable). */
    if (strlen(val) >= sizeof buf || !*val)
        return ardi_fail(ARD_EINVAL, "qos '%s': expected best-effort, reliable, transient-local",
                         val);
    strcpy(buf, val);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (strcmp(t, "reliable") == 0)
            q |= ARDN_QOS_RELIABLE;
        else if (strcmp(t, "transient-local") == 0)
            q |= ARDN_QOS_TRANSIENT_LOCAL | ARDN_QOS_RELIABLE;
        else if (strcmp(t, "best-effort") == 0)
            q |= QOS_BEST_EFFORT;
        else if (strcmp(t, "volatile") != 0)
            return ardi_fail(ARD_EINVAL,
                             "qos '%s': unknown '%s' (expected best-effort, reliable, "
                             "transient-local, or several joined by commas)",
                             val, t);
    }
    r->cfg.qos = q;
    return 0;
}

/* The connection a route's DDS type is named after: its local input, else its first local
 * output, else the connection its first ros2: endpoint's topic maps to. */
static void route_conn(const struct ardn_route *r, char *conn, size_t len)
{
    if (r->cfg.in.kind == ARDN_EP_LOCAL) {
        snprintf(conn, len, "%s", r->cfg.in.conn);
        return;
    }
    for (int i = 0; i < r->cfg.nout; i++)
        if (r->cfg.out[i].kind == ARDN_EP_LOCAL) {
            snprintf(conn, len, "%s", r->cfg.out[i].conn);
            return;
        }
    const struct ardn_ep *ep = &r->cfg.in;
    for (int i = 0; ep->kind != ARDN_EP_ROS2 && i < r->cfg.nout; i++)
        ep = &r->cfg.out[i];
    if (ardr2_topic_conn(ep->topic, conn, len) < 0)
        snprintf(conn, len, "C");
}

static int dds_fail(const struct ardn_route *r, dds_return_t rc, const char *what,
                    const char *topic)
{
    return ardn_route_fail(r, ARD_ESYS, "%s %s: %s", what, topic, dds_strretcode(rc));
}

/* ---- incompatible QoS: counted at once, reported by the DDS thread (at most once a second
 * per endpoint), naming the topic, the policy and the peer --------------------------------- */

#define QOS_REPORT_NS 1000000000LL   /* one report a second per endpoint at most */
#define QOS_PEER_WAIT_NS 200000000LL /* how long a report waits for the peer's discovery data */

static const char *policy_name(dds_qos_policy_id_t id)
{
    switch (id) {
    case DDS_DURABILITY_QOS_POLICY_ID:
        return "DURABILITY";
    case DDS_PRESENTATION_QOS_POLICY_ID:
        return "PRESENTATION";
    case DDS_DEADLINE_QOS_POLICY_ID:
        return "DEADLINE";
    case DDS_LATENCYBUDGET_QOS_POLICY_ID:
        return "LATENCY_BUDGET";
    case DDS_OWNERSHIP_QOS_POLICY_ID:
        return "OWNERSHIP";
    case DDS_LIVELINESS_QOS_POLICY_ID:
        return "LIVELINESS";
    case DDS_PARTITION_QOS_POLICY_ID:
        return "PARTITION";
    case DDS_RELIABILITY_QOS_POLICY_ID:
        return "RELIABILITY";
    case DDS_DESTINATIONORDER_QOS_POLICY_ID:
        return "DESTINATION_ORDER";
    case DDS_DATA_REPRESENTATION_QOS_POLICY_ID:
        return "DATA_REPRESENTATION";
    case DDS_TYPE_CONSISTENCY_ENFORCEMENT_QOS_POLICY_ID:
        return "TYPE_CONSISTENCY_ENFORCEMENT";
    default:
        return "another policy";
    }
}

static void qos_incompatible(struct ardn_dds_ep *e, uint32_t change)
{
    if (change == 0)
        return;
    atomic_fetch_add_explicit(&e->r->cnt.c[ARDN_C_QOS_INCOMPATIBLE], change, memory_order_relaxed);
    atomic_store(&e->qos_pending, 1);
    dds_set_guardcondition(dds.qos_gc, true);
}

static void on_offered_incompatible(dds_entity_t wr, const dds_offered_incompatible_qos_status_t st,
                                    void *arg)
{
    (void)wr;
    qos_incompatible(arg, st.total_count_change);
}

static void on_requested_incompatible(dds_entity_t rd,
                                      const dds_requested_incompatible_qos_status_t st, void *arg)
{
    (void)rd;
    qos_incompatible(arg, st.total_count_change);
}

static const char *reliability_text(const dds_qos_t *q)
{
    dds_reliability_kind_t k;
    dds_duration_t b;
    if (!q || !dds_qget_reliability(q, &k, &b))
        return "best-effort";
    return k == DDS_RELIABILITY_RELIABLE ? "reliable" : "best-effort";
}

static const char *durability_text(const dds_qos_t *q)
{
    dds_durability_kind_t k;
    if (!q || !dds_qget_durability(q, &k))
        return "volatile";
    return k == DDS_DURABILITY_VOLATILE ? "volatile" : "transient-local (or stronger)";
}

/* Whether a peer endpoint (QoS q) on e's topic is incompatible with e, by reliability or
 * durability (what ROS 2 users meet; other policies are named by Cyclone's status only). */
static bool peer_incompatible(const struct ardn_dds_ep *e, const dds_qos_t *q)
{
    dds_reliability_kind_t rk = DDS_RELIABILITY_BEST_EFFORT;
    dds_durability_kind_t dk = DDS_DURABILITY_VOLATILE;
    dds_duration_t b;
    if (q) {
        if (!dds_qget_reliability(q, &rk, &b))
            rk = e->input ? DDS_RELIABILITY_RELIABLE : DDS_RELIABILITY_BEST_EFFORT;
        if (!dds_qget_durability(q, &dk))
            dk = DDS_DURABILITY_VOLATILE;
    }
    bool rel = e->reliable;
    bool tl = (e->r->cfg.qos & ARDN_QOS_TRANSIENT_LOCAL) != 0;
    bool prel = rk == DDS_RELIABILITY_RELIABLE, ptl = dk != DDS_DURABILITY_VOLATILE;
    if (e->input) /* we request, the peer writer offers */
        return (rel && !prel) || (tl && !ptl);
    return (prel && !rel) || (ptl && !tl); /* the peer reader requests, we offer */
}

/* Report e's incompatible peers (DDS thread): the policy from Cyclone's status, each peer found
 * among the discovered endpoints on the topic. */
static void qos_report(struct ardn_dds_ep *e, int64_t now)
{
    if (!atomic_load(&e->qos_pending) || now - e->qos_reported_ns < QOS_REPORT_NS)
        return;
    /* The peer's discovery data may come a moment after Cyclone's status: wait for it a little. */
    if (!e->qos_peer[0] && e->qos_since_ns == 0)
        e->qos_since_ns = now;
    if (!e->qos_peer[0] && now - e->qos_since_ns < QOS_PEER_WAIT_NS)
        return;
    e->qos_since_ns = 0;
    atomic_store(&e->qos_pending, 0);
    e->qos_reported_ns = now;
    dds_qos_policy_id_t pol = DDS_INVALID_QOS_POLICY_ID;
    uint32_t total = 0;
    if (e->input) {
        dds_requested_incompatible_qos_status_t st;
        if (dds_get_requested_incompatible_qos_status(e->rd, &st) == 0)
            pol = st.last_policy_id, total = st.total_count;
    } else {
        dds_offered_incompatible_qos_status_t st;
        if (dds_get_offered_incompatible_qos_status(e->wr, &st) == 0)
            pol = st.last_policy_id, total = st.total_count;
    }
    const char *peer = e->qos_peer;
    bool rel = e->reliable;
    bool tl = (e->r->cfg.qos & ARDN_QOS_TRANSIENT_LOCAL) != 0;
    ardn_route_warn(e->r,
                    "incompatible QoS on %s: policy %s: %s %s what this %s (%s, %s) %s; nothing "
                    "passes between them (%u such peer%s so far; qos_incompatible counts them)",
                    e->topic, policy_name(pol), peer[0] ? peer : "a DDS peer (not yet discovered)",
                    e->input ? "does not offer" : "requests", e->input ? "reader" : "writer",
                    rel ? "reliable" : "best-effort", tl ? "transient-local" : "volatile",
                    e->input ? "requests" : "does not offer", total, total == 1 ? "" : "s");
}

/* The DDS type name of the connection conn: --ros2-type, or its own type named in this
 * process's set of routes as the recorder and the Foxglove protocol name theirs (a clash is
 * reported, naming both connections); 0 or the route's failure. */
static int ep_type_name(struct ardn_dds_ep *e, const char *conn)
{
    struct ardn_route *r = e->r;
    if (r->cfg.ros2_type[0]) {
        snprintf(e->type, sizeof e->type, "%s", r->cfg.ros2_type);
        return 0;
    }
    struct ardc_buf def = {0};
    char msg[ARDR2_MSG_MAX];
    const char *other = NULL;
    int rc = ardr2_msgdef(r->type, r->size, &def);
    if (rc == 0 && def.oom)
        rc = ARD_ENOMEM;
    if (rc == 0)
        rc =
            ardr2_names_add(&dds.names, conn, ardr2_fnv1a(def.p, def.len), msg, sizeof msg, &other);
    ardc_free(&def);
    if (rc < 0)
        return ardn_route_fail(r, rc, "%s", ard_errdetail());
    if (rc == 1) {
        char why[3 * ARD_MAX_NAME + 200];
        ardr2_clash_text(why, sizeof why, other, conn, msg);
        ardn_route_warn(r, "%s", why);
    }
    ardr2_dds_type_name(msg, e->type, sizeof e->type);
    return 0;
}

/* The DDS topic of fixed-size samples; one that another route made with another size is
 * refused. 0 or the route's failure. */
static int ep_topic(struct ardn_dds_ep *e)
{
    struct ardn_route *r = e->r;
    struct rtype *t = calloc(1, sizeof *t);
    if (!t)
        return ardn_route_fail(r, ARD_ENOMEM, "out of memory");
    ddsi_sertype_init_flags(&t->c, e->type, &rtype_ops, &rdata_ops,
                            DDSI_SERTYPE_FLAG_TOPICKIND_NO_KEY | DDSI_SERTYPE_FLAG_FIXED_SIZE);
    t->c.allowed_data_representation = DDS_DATA_REPRESENTATION_FLAG_XCDR1;
    t->len = e->len;
    struct ddsi_sertype *st = &t->c;
    e->tp = dds_create_topic_sertype(dds.pp, e->topic, &st, NULL, NULL, NULL);
    if (e->tp < 0) {
        ddsi_sertype_unref(&t->c);
        return dds_fail(r, e->tp, "cannot create DDS topic", e->topic);
    }
    e->st = st;
    if (((const struct rtype *)st)->len != e->len)
        return ardn_route_fail(r, ARD_EINVAL,
                               "DDS topic %s of type %s is used by another route with another size",
                               e->topic, e->type);
    return 0;
}

/* The QoS of the endpoint's reader or writer (sets e->reliable); NULL when out of memory. */
static dds_qos_t *ep_qos(struct ardn_dds_ep *e)
{
    struct ardn_route *r = e->r;
    dds_qos_t *q = dds_create_qos();
    if (!q)
        return NULL;
    /* An output is reliable unless best effort was asked for: a reliable keep-last-1 writer
     * matches reliable readers (ROS 2's default profile) and best-effort ones, and stays a
     * latest value (docs/ros2.md, "QoS and domain"). An input is best effort unless reliable
     * was asked for: a best-effort reader matches every writer. */
    e->reliable =
        (r->cfg.qos & ARDN_QOS_RELIABLE) || (!e->input && !(r->cfg.qos & QOS_BEST_EFFORT));
    dds_qset_reliability(q, e->reliable ? DDS_RELIABILITY_RELIABLE : DDS_RELIABILITY_BEST_EFFORT,
                         DDS_MSECS(100));
    dds_qset_durability(q, (r->cfg.qos & ARDN_QOS_TRANSIENT_LOCAL) ? DDS_DURABILITY_TRANSIENT_LOCAL
                                                                   : DDS_DURABILITY_VOLATILE);
    /* A large connection's reader holds fewer samples (INPUT_BYTES of them, INPUT_MIN at
     * least): a burst of 4 MiB point clouds must not make the reader hold gigabytes. */
    size_t depth = INPUT_BYTES / (r->size ? r->size : 1);
    depth = depth > INPUT_MAX ? INPUT_MAX : depth < INPUT_MIN ? INPUT_MIN : depth;
    if (e->input && e->reliable) {
        /* Every sample of a reliable writer is accounted for: the reader keeps all until the
         * DDS thread takes them (received; all but the newest of a take superseded). When
         * depth samples wait, Cyclone refuses the next and the writer sends it again:
         * nothing is overwritten unseen. */
        dds_qset_history(q, DDS_HISTORY_KEEP_ALL, 0);
        dds_qset_resource_limits(q, (int32_t)depth, DDS_LENGTH_UNLIMITED, DDS_LENGTH_UNLIMITED);
    } else if (e->input) {
        /* Best effort: what is lost on the way is not known; what arrives waits depth deep
         * for the take, so that a burst is counted, not overwritten. */
        dds_qset_history(q, DDS_HISTORY_KEEP_LAST, (int32_t)depth);
    } else {
        dds_qset_history(q, DDS_HISTORY_KEEP_LAST, 1);
    }
    dds_data_representation_id_t rep = DDS_DATA_REPRESENTATION_XCDR1;
    dds_qset_data_representation(q, 1, &rep);
    return q;
}

/* The reader (attached to the waitset) or the writer of the endpoint, with QoS q (deleted
 * here); 0 or the route's failure. */
static int ep_entity(struct ardn_dds_ep *e, dds_qos_t *q)
{
    struct ardn_route *r = e->r;
    int rc = 0;
    dds_listener_t *l = dds_create_listener(e);
    if (!l) {
        dds_delete_qos(q);
        return ardn_route_fail(r, ARD_ENOMEM, "out of memory");
    }
    if (e->input) {
        dds_lset_requested_incompatible_qos(l, on_requested_incompatible);
        e->rd = dds_create_reader(dds.pp, e->tp, q, l);
        if (e->rd < 0)
            rc = dds_fail(r, e->rd, "cannot create DDS reader on", e->topic);
    } else {
        dds_lset_offered_incompatible_qos(l, on_offered_incompatible);
        e->wr = dds_create_writer(dds.pp, e->tp, q, l);
        if (e->wr < 0)
            rc = dds_fail(r, e->wr, "cannot create DDS writer on", e->topic);
    }
    dds_delete_listener(l);
    dds_delete_qos(q);
    if (rc == 0 && e->input) {
        dds_entity_t c = dds_create_readcondition(e->rd, DDS_ANY_STATE);
        dds_return_t a = c < 0 ? c : dds_waitset_attach(dds.ws, c, (dds_attach_t)(e - dds.eps));
        if (a < 0)
            rc = dds_fail(r, a, "cannot wait for DDS reader on", e->topic);
    }
    return rc;
}

/* Opens a route's DDS endpoint: its layout, type name, topic, QoS and reader or writer;
 * 0 or the route's failure. */
static int open_ep(struct ardn_dds_ep *e)
{
    struct ardn_route *r = e->r;
    char conn[ARD_MAX_NAME + 1];
    route_conn(r, conn, sizeof conn);
    snprintf(e->topic, sizeof e->topic, "rt%s", e->ep->topic);
    if (ardr2_layout_init(&e->lay, r->type, r->size) < 0)
        return ardn_route_fail(r, ARD_EINVAL, "%s", ard_errdetail());
    int rc = ep_type_name(e, conn);
    if (rc != 0)
        return rc;
    e->len = (uint32_t)(ARDR2_CDR_HDR + e->lay.body);
    if ((rc = ep_topic(e)) != 0)
        return rc;
    dds_qos_t *q = ep_qos(e);
    if (!q)
        return ardn_route_fail(r, ARD_ENOMEM, "out of memory");
    return ep_entity(e, q);
}

/* ---- the ROS 2 graph: ros_discovery_info ------------------------------------------------------
 *
 * ROS 2 tools (`ros2 node list`, `ros2 topic info -v`) learn which node owns which DDS reader
 * and writer from rmw_dds_common's ParticipantEntitiesInfo, which every ROS 2 participant
 * publishes on the DDS topic "ros_discovery_info" (no "rt/"): reliable, transient local, keep
 * last 1. ardnet's participant is one node: its name (--ros2-node, else the program's name made
 * a ROS 2 node name), namespace "/", the GIDs (DDS GUIDs, 16 bytes as from ROS 2 Iron on) of the
 * readers of its ros2: inputs and the writers of its ros2: outputs. XCDR1, little-endian:
 *
 *   Gid gid (uint8[16]); sequence<NodeEntitiesInfo> { string node_namespace; string node_name;
 *   sequence<Gid> reader_gid_seq; sequence<Gid> writer_gid_seq; }
 */
#define INFO_TOPIC "ros_discovery_info"
#define INFO_TYPE "rmw_dds_common::msg::dds_::ParticipantEntitiesInfo_"

int ardn_ros2_node_option(struct ardn_global *g, const char *val)
{
    size_t n = strlen(val);
    const char *why = NULL;
    if (n == 0)
        why = "it is empty";
    else if (n >= sizeof g->ros2_node)
        why = "it is longer than 255 characters";
    else if (*val >= '0' && *val <= '9')
        why = "it starts with a digit";
    for (size_t i = 0; !why && i < n; i++)
        if (!(val[i] == '_' || (val[i] >= 'a' && val[i] <= 'z') ||
              (val[i] >= 'A' && val[i] <= 'Z') || (val[i] >= '0' && val[i] <= '9')))
            why = "it has a character other than A-Z a-z 0-9 _";
    if (why)
        return ardi_fail(ARD_EINVAL,
                         "ros2-node '%s' is not a ROS 2 node name: %s (letters, digits and _, "
                         "not starting with a digit, at most 255 characters)",
                         val, why);
    memcpy(g->ros2_node, val, n + 1);
    return 0;
}

/* The node's name: --ros2-node, else the program's name with every character ROS 2 does not
 * take in a node name as '_' (and '_' before a leading digit): "ardnet". */
static void node_name(char *out, size_t len)
{
    if (ardn_g.ros2_node[0]) {
        snprintf(out, len, "%s", ardn_g.ros2_node);
        return;
    }
    extern char *program_invocation_short_name;
    const char *p = program_invocation_short_name;
    size_t o = 0;
    if (!p || !*p)
        p = "ardnet";
    if (*p >= '0' && *p <= '9')
        out[o++] = '_';
    for (; *p && o + 1 < len; p++)
        out[o++] =
            ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9'))
                ? *p
                : '_';
    out[o] = 0;
}

static void put_u32(uint8_t *b, size_t *o, uint32_t v)
{
    *o = (*o + 3) & ~(size_t)3; /* CDR: aligned from the body's start (b + 4) */
    for (int i = 0; i < 4; i++)
        b[ARDR2_CDR_HDR + (*o)++] = (uint8_t)(v >> (8 * i));
}

static void put_bytes(uint8_t *b, size_t *o, const void *p, size_t n)
{
    memcpy(b + ARDR2_CDR_HDR + *o, p, n);
    *o += n;
}

static void put_string(uint8_t *b, size_t *o, const char *s)
{
    size_t n = strlen(s) + 1;
    put_u32(b, o, (uint32_t)n);
    put_bytes(b, o, s, n);
}

/* The GIDs of our readers (input) or writers into b at *o, their count first. */
static void put_gids(uint8_t *b, size_t *o, bool input)
{
    uint32_t n = 0;
    for (int i = 0; i < dds.neps; i++)
        n += dds.eps[i].input == input;
    put_u32(b, o, n);
    for (int i = 0; i < dds.neps; i++) {
        if (dds.eps[i].input != input)
            continue;
        dds_guid_t g;
        if (dds_get_guid(input ? dds.eps[i].rd : dds.eps[i].wr, &g) < 0)
            memset(&g, 0, sizeof g);
        put_bytes(b, o, g.v, sizeof g.v);
    }
}

/* Create the ros_discovery_info writer and publish the node. */
static int publish_info(const char *node)
{
    size_t len = ARDR2_CDR_HDR + 16 + 4 + 4 + 2 + 3 + 4 + strlen(node) + 1 + 3 + 4 + 4 +
                 16 * (size_t)dds.neps;
    struct rtype *t = calloc(1, sizeof *t);
    if (!t)
        return ardi_fail(ARD_ENOMEM, "out of memory");
    ddsi_sertype_init_flags(&t->c, INFO_TYPE, &rtype_ops, &rdata_ops,
                            DDSI_SERTYPE_FLAG_TOPICKIND_NO_KEY);
    t->c.allowed_data_representation = DDS_DATA_REPRESENTATION_FLAG_XCDR1;
    struct ddsi_sertype *st = &t->c;
    dds.info_tp = dds_create_topic_sertype(dds.pp, INFO_TOPIC, &st, NULL, NULL, NULL);
    if (dds.info_tp < 0) {
        ddsi_sertype_unref(&t->c);
        return ardi_fail(ARD_ESYS, "cannot create DDS topic " INFO_TOPIC ": %s",
                         dds_strretcode(dds.info_tp));
    }
    dds_qos_t *q = dds_create_qos();
    if (!q)
        return ardi_fail(ARD_ENOMEM, "out of memory");
    dds_qset_reliability(q, DDS_RELIABILITY_RELIABLE, DDS_MSECS(100));
    dds_qset_durability(q, DDS_DURABILITY_TRANSIENT_LOCAL);
    dds_qset_history(q, DDS_HISTORY_KEEP_LAST, 1);
    dds_data_representation_id_t rep = DDS_DATA_REPRESENTATION_XCDR1;
    dds_qset_data_representation(q, 1, &rep);
    dds.info_wr = dds_create_writer(dds.pp, dds.info_tp, q, NULL);
    dds_delete_qos(q);
    if (dds.info_wr < 0)
        return ardi_fail(ARD_ESYS, "cannot create DDS writer on " INFO_TOPIC ": %s",
                         dds_strretcode(dds.info_wr));
    struct rdata *d = rdata_new(st, SDK_DATA, len);
    if (!d)
        return ardi_fail(ARD_ENOMEM, "out of memory");
    uint8_t *b = d->data;
    size_t o = 0;
    memset(b, 0, len);
    b[1] = 0x01; /* CDR_LE */
    put_bytes(b, &o, dds.guid.v, sizeof dds.guid.v);
    put_u32(b, &o, 1); /* one node */
    put_string(b, &o, "/");
    put_string(b, &o, node);
    put_gids(b, &o, true);
    put_gids(b, &o, false);
    d->len = (uint32_t)(ARDR2_CDR_HDR + o);
    d->c.timestamp.v = dds_time();
    d->c.statusinfo = 0;
    dds_return_t rc = dds_forwardcdr(dds.info_wr, &d->c); /* takes our reference */
    if (rc < 0)
        return ardi_fail(ARD_ESYS, "cannot publish " INFO_TOPIC ": %s", dds_strretcode(rc));
    return 0;
}

static dds_domainid_t domain_id(void)
{
    if (ardn_g.ros_domain >= 0)
        return (dds_domainid_t)ardn_g.ros_domain;
    const char *s = getenv("ROS_DOMAIN_ID");
    uint64_t v;
    if (s && *s && ardn_parse_u64(s, 0, 232, &v) == 0)
        return (dds_domainid_t)v;
    return 0;
}

/* ---- discovery as ROS 2 Jazzy's rmw_cyclonedds sets it from the environment (docs/ros2.md,
 * "Discovery range") --------------------------------------------------------------------------- */

#define PEERS_MAX 32 /* ROS_STATIC_PEERS entries */
#define PEER_LEN 256 /* characters of one */
#define CONFIG_MAX (PEERS_MAX * (PEER_LEN + 24) + 1024)

enum range { RANGE_SUBNET, RANGE_LOCALHOST, RANGE_OFF, RANGE_SYSTEM_DEFAULT };

/* Whether c may be in a peer's address or host name (no XML markup, no blanks). */
static bool peer_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           strchr(".-_:[]%", c) != NULL;
}

/* The Cyclone configuration fragment that ROS_LOCALHOST_ONLY, ROS_AUTOMATIC_DISCOVERY_RANGE and
 * ROS_STATIC_PEERS ask for, into buf ("" when Cyclone's own defaults are asked for). 0, or
 * ARD_EINVAL naming the variable and its value. */
static int discovery_config(char *buf, size_t len)
{
    const char *lo = getenv("ROS_LOCALHOST_ONLY");
    const char *rg = getenv("ROS_AUTOMATIC_DISCOVERY_RANGE");
    const char *sp = getenv("ROS_STATIC_PEERS");
    bool localhost_only = false;
    enum range range = RANGE_SUBNET;
    buf[0] = 0;
    if (lo && *lo && strcmp(lo, "0") != 0) {
        if (strcmp(lo, "1") != 0)
            return ardi_fail(ARD_EINVAL, "ROS_LOCALHOST_ONLY '%s': expected 1 (or 0, or unset)",
                             lo);
        localhost_only = true;
    }
    if (rg && *rg) {
        if (strcmp(rg, "SUBNET") == 0)
            range = RANGE_SUBNET;
        else if (strcmp(rg, "LOCALHOST") == 0)
            range = RANGE_LOCALHOST;
        else if (strcmp(rg, "OFF") == 0)
            range = RANGE_OFF;
        else if (strcmp(rg, "SYSTEM_DEFAULT") == 0)
            range = RANGE_SYSTEM_DEFAULT;
        else
            return ardi_fail(ARD_EINVAL,
                             "ROS_AUTOMATIC_DISCOVERY_RANGE '%s': expected SUBNET, LOCALHOST, "
                             "OFF or SYSTEM_DEFAULT (or unset: SUBNET)",
                             rg);
    }
    char peers[PEERS_MAX * (PEER_LEN + 24)] = "";
    size_t pl = 0;
    int npeers = 0;
    for (const char *p = sp ? sp : ""; *p;) {
        size_t n = strcspn(p, ";");
        if (n > 0) {
            if (n > PEER_LEN)
                return ardi_fail(ARD_EINVAL,
                                 "ROS_STATIC_PEERS: '%.*s' is longer than %d characters", (int)n, p,
                                 PEER_LEN);
            for (size_t i = 0; i < n; i++)
                if (!peer_char(p[i]))
                    return ardi_fail(ARD_EINVAL,
                                     "ROS_STATIC_PEERS: '%.*s' is not an address or host name "
                                     "(expected ADDR;ADDR;...)",
                                     (int)n, p);
            if (++npeers > PEERS_MAX)
                return ardi_fail(ARD_EINVAL, "ROS_STATIC_PEERS: more than %d peers", PEERS_MAX);
            pl += (size_t)snprintf(peers + pl, sizeof peers - pl, "<Peer address=\"%.*s\"/>",
                                   (int)n, p);
        }
        p += n + (p[n] == ';');
    }
    if (localhost_only) {
        if (rg && *rg)
            fprintf(stderr, "ardnet: ROS_LOCALHOST_ONLY=1: ROS_AUTOMATIC_DISCOVERY_RANGE is "
                            "ignored (as ROS 2 does)\n");
        if (npeers)
            fprintf(stderr,
                    "ardnet: ROS_LOCALHOST_ONLY=1: ROS_STATIC_PEERS is ignored (as ROS 2 does)\n");
        range = RANGE_LOCALHOST;
        npeers = 0;
        peers[0] = 0;
    } else if (npeers && (range == RANGE_OFF || range == RANGE_SYSTEM_DEFAULT)) {
        fprintf(stderr,
                "ardnet: ROS_AUTOMATIC_DISCOVERY_RANGE=%s: ROS_STATIC_PEERS is ignored (as "
                "ROS 2 does)\n",
                rg);
        npeers = 0;
        peers[0] = 0;
    }
    switch (range) {
    case RANGE_SYSTEM_DEFAULT:
        break;
    case RANGE_OFF:
        /* No multicast, no peers, and a discovery tag no other process has. */
        snprintf(buf, len,
                 "<CycloneDDS><Domain><General><AllowMulticast>false</AllowMulticast></General>"
                 "<Discovery><ParticipantIndex>none</ParticipantIndex>"
                 "<Tag>ros_discovery_off_%ld</Tag></Discovery></Domain></CycloneDDS>",
                 (long)getpid());
        break;
    case RANGE_LOCALHOST:
    case RANGE_SUBNET:
        /* LOCALHOST: no multicast, this host's participant ports as peers: nothing is sent
         * to another host but to the static peers. The interface is not narrowed to the
         * loopback one: a ROS 2 node on this host advertises its other addresses, and a
         * participant on loopback alone does not reach them (docs/ros2.md). */
        snprintf(buf, len,
                 "<CycloneDDS><Domain>%s%s<Discovery><ParticipantIndex>auto</ParticipantIndex>"
                 "<MaxAutoParticipantIndex>32</MaxAutoParticipantIndex>%s%s%s%s</Discovery>"
                 "</Domain></CycloneDDS>",
                 range == RANGE_LOCALHOST ? "<General>" : "",
                 range == RANGE_LOCALHOST ? "<AllowMulticast>false</AllowMulticast></General>" : "",
                 range == RANGE_LOCALHOST || npeers ? "<Peers>" : "",
                 range == RANGE_LOCALHOST ? "<Peer address=\"localhost\"/>" : "", peers,
                 range == RANGE_LOCALHOST || npeers ? "</Peers>" : "");
        break;
    }
    return 0;
}

/* The domain with the discovery the environment asks for, then CYCLONEDDS_URI (which may
 * override it, as with rmw_cyclonedds). */
static int create_domain(void)
{
    char *cfg = malloc(CONFIG_MAX);
    if (!cfg)
        return ardi_fail(ARD_ENOMEM, "out of memory");
    int rc = discovery_config(cfg, CONFIG_MAX);
    if (rc == 0 && cfg[0]) {
        const char *uri = getenv("CYCLONEDDS_URI");
        size_t n = strlen(cfg);
        char *all = malloc(n + 2 + (uri ? strlen(uri) : 0));
        if (!all) {
            free(cfg);
            return ardi_fail(ARD_ENOMEM, "out of memory");
        }
        sprintf(all, "%s,%s", cfg, uri ? uri : "");
        dds.dom = dds_create_domain(domain_id(), all);
        free(all);
        if (dds.dom < 0)
            rc = ardi_fail(ARD_ESYS,
                           "cannot create the DDS domain %u with the discovery ROS_LOCALHOST_ONLY, "
                           "ROS_AUTOMATIC_DISCOVERY_RANGE and ROS_STATIC_PEERS ask for: %s "
                           "(check CYCLONEDDS_URI)",
                           (unsigned)domain_id(), dds_strretcode(dds.dom));
    }
    free(cfg);
    return rc;
}

/* As rmw_cyclonedds makes a ROS 2 context's participant: the enclave in the user data
 * ("enclave=/;"), the node's name as the participant's name, and with ROS_SECURITY_ENABLE the
 * enclave's security files (dds_security.c). */
static int create_participant(const char *node)
{
    struct ardn_security sec;
    int rc = ardn_security_read(&sec);
    if (rc < 0)
        return rc;
    dds_qos_t *pq = dds_create_qos();
    if (!pq)
        return ardi_fail(ARD_ENOMEM, "out of memory");
    char ud[ARDN_ENCLAVE_MAX + 16];
    int n = snprintf(ud, sizeof ud, "enclave=%s;", sec.enclave);
    dds_qset_userdata(pq, ud, (size_t)n);
    dds_qset_entity_name(pq, node);
    if (sec.on)
        ardn_security_qos(&sec, pq);
    dds.pp = dds_create_participant(domain_id(), pq, NULL);
    dds_delete_qos(pq);
    if (dds.pp >= 0)
        return 0;
    if (sec.on)
        return ardi_fail(ARD_EINVAL,
                         "cannot create the DDS participant (domain %u) with the security files "
                         "of enclave %s in %s: %s (the DDS security plugins refused them: check "
                         "that cert.pem is signed by identity_ca.cert.pem and matches key.pem, "
                         "that governance.p7s and permissions.p7s are signed by "
                         "permissions_ca.cert.pem, and that the permissions grant this domain "
                         "to cert.pem's subject; Cyclone's message above says which)",
                         (unsigned)domain_id(), sec.enclave, sec.dir, dds_strretcode(dds.pp));
    return ardi_fail(ARD_ESYS,
                     "cannot create the DDS participant (domain %u): %s (check CYCLONEDDS_URI)",
                     (unsigned)domain_id(), dds_strretcode(dds.pp));
}

int ardn_dds_open(struct ardn_plan *p)
{
    int n = 0;
    for (int i = 0; i < p->nroutes; i++) {
        struct ardn_route *r = &p->routes[i];
        n += r->cfg.in.kind == ARDN_EP_ROS2;
        for (int o = 0; o < r->cfg.nout; o++)
            n += r->cfg.out[o].kind == ARDN_EP_ROS2;
    }
    if (n == 0)
        return 0;
    const char *s = getenv("ROS_DOMAIN_ID");
    uint64_t v;
    if (ardn_g.ros_domain < 0 && s && *s && ardn_parse_u64(s, 0, 232, &v) < 0)
        return ardi_fail(ARD_EINVAL, "ROS_DOMAIN_ID '%s' is not a DDS domain id 0..232", s);
    int drc = create_domain();
    if (drc < 0)
        return drc;
    dds.eps = calloc((size_t)n, sizeof *dds.eps);
    if (!dds.eps)
        return ardi_fail(ARD_ENOMEM, "out of memory");
    char node[ARDN_ROS2_NODE_MAX];
    node_name(node, sizeof node);
    int prc = create_participant(node);
    if (prc < 0)
        return prc;
    dds_get_guid(dds.pp, &dds.guid);
    dds.ws = dds_create_waitset(dds.pp);
    dds.pubs = dds_create_reader(dds.pp, DDS_BUILTIN_TOPIC_DCPSPUBLICATION, NULL, NULL);
    dds.subs = dds_create_reader(dds.pp, DDS_BUILTIN_TOPIC_DCPSSUBSCRIPTION, NULL, NULL);
    /* Always attached: a waitset with nothing attached does not wait. */
    dds.wake = dds_create_guardcondition(dds.pp);
    dds.qos_gc = dds_create_guardcondition(dds.pp);
    /* The waitset's attachments: input i is i; then the stop condition and the discovery
     * readers (looked at only when they have something). */
    if (dds.ws < 0 || dds.pubs < 0 || dds.subs < 0 || dds.wake < 0 || dds.qos_gc < 0 ||
        dds_waitset_attach(dds.ws, dds.wake, (dds_attach_t)n) < 0 ||
        dds_waitset_attach(dds.ws, dds.qos_gc, (dds_attach_t)n + 3) < 0 ||
        dds_waitset_attach(dds.ws, dds_create_readcondition(dds.pubs, DDS_ANY_STATE),
                           (dds_attach_t)n + 1) < 0 ||
        dds_waitset_attach(dds.ws, dds_create_readcondition(dds.subs, DDS_ANY_STATE),
                           (dds_attach_t)n + 2) < 0)
        return ardi_fail(ARD_ESYS, "cannot set up the DDS waitset and discovery readers");
    for (int i = 0; i < p->nroutes; i++) {
        struct ardn_route *r = &p->routes[i];
        for (int o = -1; o < r->cfg.nout; o++) {
            struct ardn_ep *ep = o < 0 ? &r->cfg.in : &r->cfg.out[o];
            if (ep->kind != ARDN_EP_ROS2)
                continue;
            struct ardn_dds_ep *e = &dds.eps[dds.neps++];
            e->r = r;
            e->ep = ep;
            e->input = o < 0;
            ep->dds = e;
            int rc = open_ep(e);
            if (rc < 0)
                return rc;
        }
    }
    return publish_info(node);
}

/* ---- the DDS thread: ros2: inputs, and peers of another type ------------------------------- */

/* Take what a reader has; the newest valid sample goes on (the others are superseded). */
static void take_input(struct ardn_dds_ep *e, int64_t now)
{
    struct ardn_route *r = e->r;
    struct ddsi_serdata *sd[TAKE_MAX];
    dds_sample_info_t si[TAKE_MAX];
    bool have = false;
    int64_t real_ns = 0;
    for (;;) {
        int n = dds_takecdr(e->rd, sd, TAKE_MAX, si, DDS_ANY_STATE);
        if (n <= 0)
            break;
        for (int k = 0; k < n; k++) {
            const struct rdata *d = (const struct rdata *)sd[k];
            if (si[k].valid_data && sd[k]->ops == &rdata_ops) {
                const char *bad = NULL;
                enum ardw_cause c = ARDW_OK;
                if (d->len >= ARDR2_CDR_HDR && (d->data[0] != 0x00 || d->data[1] != 0x01)) {
                    c = ARDW_MAGIC;
                    bad = "its encapsulation is not CDR_LE (00 01)";
                } else if (d->len < e->len) {
                    c = ARDW_TRUNCATED;
                    bad = "it is shorter than the connection's fields";
                } else if (d->len > ((e->len + 3) & ~3u)) {
                    c = ARDW_OVERSIZED;
                    bad = "it is longer than the connection's fields";
                } else {
                    bad = ardr2_cdr_decode(&e->lay, d->data, d->len, r->buf);
                    c = bad ? ARDW_TRUNCATED : ARDW_OK;
                }
                if (c != ARDW_OK) {
                    ardn_count_drop(r, c);
                    if (!e->bad_reported)
                        ardn_route_warn(r,
                                        "a DDS sample of %u bytes on %s cannot be this "
                                        "connection's (%u bytes of CDR): %s; drop_%s counts them",
                                        d->len, e->topic, e->len, bad, ardw_cause_name(c));
                    e->bad_reported = true;
                } else {
                    ardn_count(r, ARDN_C_RECEIVED, 1);
                    if (have)
                        ardn_count(r, ARDN_C_SUPERSEDED, 1);
                    have = true;
                    real_ns = si[k].source_timestamp;
                }
            }
            ddsi_serdata_unref(sd[k]);
        }
    }
    if (!have)
        return;
    struct ardw_hdr h = {.conn_id = r->conn_id,
                         .size = (uint32_t)r->size,
                         .epoch = ardn_g.epoch,
                         .seq = ++e->seq,
                         .mono_ns = now,
                         .real_ns = real_ns,
                         .type_hash = r->type_hash};
    r->wire = NULL;
    ardn_offer(r, &h, now, NULL);
}

/* New endpoints of other participants: one of our topics with another type is reported once
 * per route and counted (drop_type). Writers matter to our readers, readers to our writers. */
static void check_peers(dds_entity_t rd, bool writers)
{
    void *buf[TAKE_MAX];
    dds_sample_info_t si[TAKE_MAX];
    for (;;) {
        buf[0] = NULL;
        int n = dds_take(rd, buf, si, TAKE_MAX, TAKE_MAX);
        if (n <= 0)
            return;
        for (int k = 0; k < n; k++) {
            const dds_builtintopic_endpoint_t *b = buf[k];
            if (!si[k].valid_data || si[k].instance_state != DDS_IST_ALIVE ||
                memcmp(&b->participant_key, &dds.guid, sizeof dds.guid) == 0 || !b->topic_name ||
                !b->type_name)
                continue;
            for (int i = 0; i < dds.neps; i++) {
                struct ardn_dds_ep *e = &dds.eps[i];
                if (e->input != writers || strcmp(e->topic, b->topic_name) != 0)
                    continue;
                if (peer_incompatible(e, b->qos)) { /* for qos_report */
                    const uint8_t *g = b->key.v;
                    snprintf(
                        e->qos_peer, sizeof e->qos_peer,
                        "DDS %s %02x%02x%02x%02x:%02x%02x%02x%02x:%02x%02x%02x%02x:%02x%02x%02x"
                        "%02x (%s, %s)",
                        writers ? "writer" : "reader", g[0], g[1], g[2], g[3], g[4], g[5], g[6],
                        g[7], g[8], g[9], g[10], g[11], g[12], g[13], g[14], g[15],
                        reliability_text(b->qos), durability_text(b->qos));
                }
                if (strcmp(e->type, b->type_name) == 0)
                    continue;
                ardn_count_drop(e->r, ARDW_TYPE);
                if (e->peer_reported)
                    continue;
                e->peer_reported = true;
                ardn_route_warn(e->r,
                                "a DDS %s on %s has type '%s', this route's is '%s': they do not "
                                "match and nothing passes between them (drop_type counts such "
                                "peers)",
                                writers ? "writer" : "reader", b->topic_name, b->type_name,
                                e->type);
            }
        }
        dds_return_loan(rd, buf, n);
    }
}

static void *dds_main(void *arg)
{
    (void)arg;
    dds_attach_t trig[TAKE_MAX];
    while (!atomic_load_explicit(&ardn_stop, memory_order_relaxed)) {
        int64_t now = ard_now_ns(), timeout = IDLE_NS;
        for (int i = 0; i < dds.neps; i++)
            if (dds.eps[i].input)
                timeout = ardn_reducer_timeout(&dds.eps[i].r->red, now, timeout);
        int n = dds_waitset_wait(dds.ws, trig, TAKE_MAX, timeout > 0 ? timeout : 0);
        now = ard_now_ns();
        bool peers = n > TAKE_MAX;
        if (n > TAKE_MAX) { /* more ready than reported: look at every input */
            for (int i = 0; i < dds.neps; i++)
                if (dds.eps[i].input)
                    take_input(&dds.eps[i], now);
        } else {
            for (int k = 0; k < n; k++) {
                if (trig[k] < (dds_attach_t)dds.neps)
                    take_input(&dds.eps[trig[k]], now);
                peers |= trig[k] > (dds_attach_t)dds.neps;
            }
        }
        if (peers) {
            check_peers(dds.pubs, true);
            check_peers(dds.subs, false);
        }
        /* Incompatible QoS (a listener set the guard): reported here, rate-limited. */
        bool qos_now = false;
        dds_read_guardcondition(dds.qos_gc, &qos_now);
        if (qos_now)
            dds_set_guardcondition(dds.qos_gc, false);
        for (int i = 0; i < dds.neps; i++)
            qos_report(&dds.eps[i], now);
        for (int i = 0; i < dds.neps; i++)
            if (dds.eps[i].input)
                ardn_tick(dds.eps[i].r, now, NULL);
    }
    return NULL;
}

int ardn_dds_start(struct ardn_plan *p)
{
    if (dds.neps == 0)
        return 0;
    int rc = pthread_create(&dds.thread, NULL, dds_main, NULL);
    if (rc != 0)
        return ardn_route_fail(&p->routes[0], ARD_ESYS, "cannot start thread: %s", strerror(rc));
    dds.started = true;
    return 0;
}

void ardn_dds_join(struct ardn_plan *p)
{
    (void)p;
    if (dds.started) {
        dds_set_guardcondition(dds.wake, true);
        pthread_join(dds.thread, NULL);
    }
    dds.started = false;
}

void ardn_dds_close(struct ardn_plan *p)
{
    (void)p;
    if (dds.pp > 0)
        dds_delete(dds.pp);
    if (dds.dom > 0)
        dds_delete(dds.dom);
    for (int i = 0; i < dds.neps; i++) {
        if (dds.eps[i].spare)
            ddsi_serdata_unref(&dds.eps[i].spare->c);
        ardr2_layout_free(&dds.eps[i].lay);
        dds.eps[i].ep->dds = NULL;
    }
    free(dds.eps);
    ardr2_names_free(&dds.names);
    memset(&dds, 0, sizeof dds);
}

int ardn_dds_write(struct ardn_route *r, struct ardn_ep *ep, const void *packet,
                   const struct ardw_hdr *h)
{
    struct ardn_dds_ep *e = ep->dds;
    /* The sample of the previous write is written over when Cyclone let go of it (our
     * reference is the only one left): in steady state no allocation per packet. */
    struct rdata *d = e->spare;
    if (!d || ddsrt_atomic_ld32(&d->c.refc) != 1) {
        if (d)
            ddsi_serdata_unref(&d->c);
        d = e->spare = rdata_new(e->st, SDK_DATA, e->len);
        if (!d)
            return -1;
    }
    ardr2_cdr_encode(&e->lay, packet, d->data);
    /* The source timestamp is the writer's CLOCK_REALTIME stamp of the packet. */
    d->c.timestamp.v = h->real_ns;
    d->c.statusinfo = 0;
    dds_return_t rc = dds_forwardcdr(e->wr, ddsi_serdata_ref(&d->c)); /* takes that reference */
    if (rc >= 0)
        return 0;
    if (!e->write_reported)
        ardn_route_warn(r, "DDS write on %s: %s", e->topic, dds_strretcode(rc));
    e->write_reported = true;
    return -1;
}
