/* config.c - route options (shared by the command line and YAML) and the YAML file. */
#include "ard_common.h"
#include "ardn.h"
#include "ardyaml.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

int ardn_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
    if (!s || *s < '0' || *s > '9')
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

int ardn_parse_double(const char *s, double min, double max, double *out)
{
    return ardy_double(s, min, max, out);
}

/* in: the route's one input. */
static int key_in(struct ardn_route *r, const char *val)
{
    if (r->cfg.in.text[0])
        return ardi_fail(ARD_EINVAL, "the route already has an input ('%s')", r->cfg.in.text);
    return ardn_ep_parse(&r->cfg.in, val, true);
}

/* out: one more output. */
static int key_out(struct ardn_route *r, const char *val)
{
    if (r->cfg.nout == ARDN_MAX_OUT)
        return ardi_fail(ARD_EINVAL, "too many outputs (at most %d)", ARDN_MAX_OUT);
    int rc = ardn_ep_parse(&r->cfg.out[r->cfg.nout], val, false);
    if (rc < 0)
        return rc;
    r->cfg.nout++;
    return 0;
}

/* name: the route's name. */
static int key_name(struct ardn_route *r, const char *val)
{
    if (!*val || strlen(val) > ARD_MAX_NAME)
        return ardi_fail(ARD_EINVAL, "name must have 1..%d characters", ARD_MAX_NAME);
    snprintf(r->cfg.name, sizeof r->cfg.name, "%s", val);
    return 0;
}

/* size: the packet size in bytes. */
static int key_size(struct ardn_route *r, const char *val)
{
    uint64_t u;
    if (ardn_parse_u64(val, 1, ARDW_MAX_PAYLOAD, &u) < 0)
        return ardi_fail(ARD_EINVAL, "size '%s' is not a number 1..%u", val, ARDW_MAX_PAYLOAD);
    r->cfg.size = (size_t)u;
    return 0;
}

/* type: the packet's type descriptor ("" for opaque). */
static int key_type(struct ardn_route *r, const char *val)
{
    size_t n;
    int rc;
    if (*val && (rc = ard_type_parse(val, NULL, 0, &n, NULL)) < 0)
        return rc; /* its detail names the problem */
    if (strlen(val) >= sizeof r->cfg.type)
        return ardi_fail(ARD_EINVAL, "type too long");
    strcpy(r->cfg.type, val);
    r->cfg.type_given = true;
    return 0;
}

/* conn-id: the connection's number on the wire. */
static int key_conn_id(struct ardn_route *r, const char *val)
{
    uint64_t u;
    if (ardn_parse_u64(val, 1, UINT32_MAX, &u) < 0)
        return ardi_fail(ARD_EINVAL, "conn-id '%s' is not a number 1..%u", val, UINT32_MAX);
    r->cfg.conn_id = (uint32_t)u;
    r->cfg.conn_id_given = true;
    return 0;
}

/* from: the only peer whose datagrams are taken. */
static int key_from(struct ardn_route *r, const char *val)
{
    if (strlen(val) >= sizeof r->cfg.from || !*val)
        return ardi_fail(ARD_EINVAL, "from: bad peer '%s'", val);
    int rc = ardn_resolve(val, &r->cfg.from_addr, &r->cfg.from_len, &r->cfg.from_port);
    if (rc < 0)
        return ardn_fail_prefix(rc, "from: ");
    strcpy(r->cfg.from, val);
    return 0;
}

/* every: send every Nth packet. */
static int key_every(struct ardn_route *r, const char *val)
{
    uint64_t u;
    if (ardn_parse_u64(val, 1, UINT32_MAX, &u) < 0)
        return ardi_fail(ARD_EINVAL, "every '%s' is not a number >= 1", val);
    r->cfg.every = u;
    return 0;
}

/* max-datagram: the largest datagram sent, in bytes. */
static int key_max_datagram(struct ardn_route *r, const char *val)
{
    uint64_t u;
    if (ardn_parse_u64(val, ARDW_MIN_DGRAM, ARDW_MAX_DGRAM, &u) < 0)
        return ardi_fail(ARD_EINVAL, "max-datagram '%s' is not a number %u..%u", val,
                         ARDW_MIN_DGRAM, ARDW_MAX_DGRAM);
    r->cfg.max_dgram = (size_t)u;
    return 0;
}

/* max-bandwidth: bits a second, with an SI suffix: 100M is 100 Mbit/s (12.5 MB/s). */
static int key_max_bandwidth(struct ardn_route *r, const char *val)
{
    char num[64];
    size_t n = strlen(val);
    double mult = 1;
    if (n > 0 && n < sizeof num) {
        char last = val[n - 1];
        mult = last == 'k' ? 1e3 : last == 'M' ? 1e6 : last == 'G' ? 1e9 : 1;
    }
    snprintf(num, sizeof num, "%.*s", (int)(n - (mult > 1)), val);
    double bits;
    if (n == 0 || n >= sizeof num || ardn_parse_double(num, 1e-3, 1e12, &bits) < 0 ||
        bits * mult < 1e4 || bits * mult > 1e12)
        return ardi_fail(ARD_EINVAL,
                         "max-bandwidth '%s' is not a rate in bits a second (10k..1000G, "
                         "e.g. 100M)",
                         val);
    r->cfg.max_bw = bits * mult / 8;
    return 0;
}

/* max-rate: at most this many packets a second. */
static int key_max_rate(struct ardn_route *r, const char *val)
{
    if (ardn_parse_double(val, 1e-3, 1e6, &r->cfg.max_rate) < 0)
        return ardi_fail(ARD_EINVAL, "max-rate '%s' is not a rate in Hz (0.001..1e6)", val);
    return 0;
}

/* ros2-type: the ROS 2 message type of the DDS endpoints. */
static int key_ros2_type(struct ardn_route *r, const char *val)
{
    if (!ardn_have_ros2)
        return ardi_fail(ARD_EINVAL, "ros2: endpoints not built (configure with cyclonedds-dev)");
    return ardn_ros2_type_parse(val, r->cfg.ros2_type, sizeof r->cfg.ros2_type);
}

/* qos: the DDS endpoints' QoS. */
static int key_qos(struct ardn_route *r, const char *val)
{
    int rc = ardn_qos_parse(r, val);
    if (rc == 0)
        r->cfg.qos_given = true;
    return rc;
}

/* The keys of a route, each with its parser. */
static const struct {
    const char *key;
    int (*take)(struct ardn_route *r, const char *val);
} route_keys[] = {
    {"in", key_in},
    {"out", key_out},
    {"name", key_name},
    {"size", key_size},
    {"type", key_type},
    {"conn-id", key_conn_id},
    {"from", key_from},
    {"every", key_every},
    {"max-datagram", key_max_datagram},
    {"max-bandwidth", key_max_bandwidth},
    {"max-rate", key_max_rate},
    {"ros2-type", key_ros2_type},
    {"qos", key_qos},
};

int ardn_route_option(struct ardn_route *r, const char *key, const char *val)
{
    for (size_t i = 0; i < sizeof route_keys / sizeof route_keys[0]; i++)
        if (strcmp(key, route_keys[i].key) == 0)
            return route_keys[i].take(r, val);
    return ardi_fail(ARD_EINVAL, "unknown route key '%s'", key);
}

int ardn_ros_domain_option(struct ardn_global *g, const char *val)
{
    uint64_t u;
    /* DDS port numbers leave room for domains 0..232 (ROS 2 says the same). */
    if (ardn_parse_u64(val, 0, 232, &u) < 0)
        return ardi_fail(ARD_EINVAL, "ros-domain '%s' is not a DDS domain id 0..232", val);
    g->ros_domain = (int)u;
    return 0;
}

int ardn_counters_option(struct ardn_global *g, const char *val)
{
    int rc = ardi_check_name("counters: connection", val, true);
    if (rc < 0)
        return rc;
    if (strlen(val) > ARDN_COUNTERS_MAX_NAME) /* CONN.names must be a name too */
        return ardi_fail(ARD_EINVAL,
                         "counters: connection name '%s' is longer than %d characters (its "
                         "names go to '%s.names')",
                         val, ARDN_COUNTERS_MAX_NAME, val);
    strcpy(g->counters, val);
    return 0;
}

int ardn_route_finish(struct ardn_route *r)
{
    if (!r->cfg.in.text[0])
        return ardi_fail(ARD_EINVAL, "the route has no input (in)");
    if (r->cfg.nout == 0)
        return ardi_fail(ARD_EINVAL, "the route has no output (out)");
    if (r->cfg.from[0] && r->cfg.in.kind != ARDN_EP_UDP)
        return ardi_fail(ARD_EINVAL, "from: only a udp:// input has a peer");
    bool ros2 = r->cfg.in.kind == ARDN_EP_ROS2;
    for (int i = 0; i < r->cfg.nout; i++)
        ros2 |= r->cfg.out[i].kind == ARDN_EP_ROS2;
    if (r->cfg.qos_given && !ros2)
        return ardi_fail(ARD_EINVAL, "qos: only ros2: endpoints have a DDS QoS");
    if (r->cfg.ros2_type[0] && !ros2)
        return ardi_fail(ARD_EINVAL, "ros2-type: only ros2: endpoints have a ROS 2 type");
    if (!r->cfg.name[0]) {
        const char *n = r->cfg.in.kind == ARDN_EP_LOCAL ? r->cfg.in.conn : r->cfg.in.text;
        for (int i = 0; i < r->cfg.nout && r->cfg.in.kind != ARDN_EP_LOCAL; i++)
            if (r->cfg.out[i].kind == ARDN_EP_LOCAL) {
                n = r->cfg.out[i].conn;
                break;
            }
        snprintf(r->cfg.name, sizeof r->cfg.name, "%.63s", n);
    }
    return 0;
}

/* ---- YAML --------------------------------------------------------------------------------- */

/* An error at node n of the file: printed (FILE:LINE:COLUMN: ...), -1. */
static int yerr(const struct ardy_doc *y, const yaml_node_t *n, const char *fmt, const char *a)
{
    ardy_fail(y, n, fmt, a);
    fprintf(stderr, "%s\n", ard_errdetail());
    return -1;
}

static int global_key(const struct ardy_doc *y, const yaml_node_t *k, const char *key,
                      yaml_node_t *v, struct ardn_global *g)
{
    const struct ardn_opt *o = ardn_opt_find(key);
    if (!o || !ardn_opt_is_global(o)) {
        char keys[512], known[600];
        ardn_yaml_keys(keys, sizeof keys);
        snprintf(known, sizeof known, "(expected %s)", keys);
        ardy_unknown_key(y, k, key, known);
        fprintf(stderr, "%s\n", ard_errdetail());
        return -1;
    }
    const char *s = ardy_text(v);
    if (!s)
        return yerr(y, v, "'%s' must be a single value", key);
    if (ardn_global_option(g, o, s) < 0)
        return yerr(y, v, "%s", ard_errdetail());
    return 0;
}

static int load_route(const struct ardy_doc *y, yaml_node_t *m, struct ardn_route *r)
{
    if (m->type != YAML_MAPPING_NODE)
        return yerr(y, m, "%s", "a route must be a mapping (in: ..., out: ...)");
    ardn_route_init(r);
    ARDY_FOR_PAIRS(y, m, k, v)
    {
        const char *key = ardy_text(k);
        if (!key)
            return yerr(y, k, "%s", "a key must be a plain word");
        if (strcmp(key, "out") == 0 && v->type == YAML_SEQUENCE_NODE) {
            ARDY_FOR_ITEMS(y, v, o)
            {
                if (!ardy_text(o))
                    return yerr(y, o, "%s", "an output must be a single endpoint");
                if (ardn_route_option(r, "out", ardy_text(o)) < 0)
                    return yerr(y, o, "%s", ard_errdetail());
            }
            continue;
        }
        if (!ardy_text(v))
            return yerr(y, v, "'%s' must be a single value", key);
        if (ardn_route_option(r, key, ardy_text(v)) < 0)
            return yerr(y, strncmp(ard_errdetail(), "unknown route key", 17) == 0 ? k : v, "%s",
                        ard_errdetail());
    }
    if (ardn_route_finish(r) < 0)
        return yerr(y, m, "%s", ard_errdetail());
    return 0;
}

int ardn_config_load(const char *path, struct ardn_route **routes, int *n, struct ardn_global *g)
{
    FILE *f = fopen(path, "re");
    if (!f) {
        fprintf(stderr, "%s: cannot open: %s\n", path, strerror(errno));
        return -1;
    }
    /* A route file needs 4 levels. */
    struct ardy_doc y;
    int rc = ardy_load(&y, path, &f, 16, true);
    fclose(f);
    if (rc < 0) {
        fprintf(stderr, "%s\n", ard_errdetail());
        return -1;
    }
    rc = -1;
    yaml_node_t *root = ardy_root(&y);
    if (!root) {
        fprintf(stderr, "%s:1:1: the file is empty\n", path);
        goto out;
    }
    if (root->type != YAML_MAPPING_NODE) {
        yerr(&y, root, "%s", "the file must be a mapping with a 'routes' list");
        goto out;
    }
    bool have_routes = false;
    ARDY_FOR_PAIRS(&y, root, k, v)
    {
        const char *key = ardy_text(k);
        if (!key) {
            yerr(&y, k, "%s", "a key must be a plain word");
            goto out;
        }
        if (strcmp(key, "routes") != 0) {
            if (global_key(&y, k, key, v, g) < 0)
                goto out;
            continue;
        }
        if (v->type != YAML_SEQUENCE_NODE) {
            yerr(&y, v, "%s", "'routes' must be a list of routes");
            goto out;
        }
        have_routes = true;
        ARDY_FOR_ITEMS(&y, v, item)
        {
            struct ardn_route *nr = realloc(*routes, (size_t)(*n + 1) * sizeof **routes);
            if (!nr) {
                fprintf(stderr, "%s: out of memory\n", path);
                goto out;
            }
            *routes = nr;
            if (load_route(&y, item, &nr[*n]) < 0)
                goto out;
            (*n)++;
        }
    }
    if (!have_routes) {
        yerr(&y, root, "%s", "no 'routes' list");
        goto out;
    }
    rc = 0;
out:
    ardy_free(&y);
    return rc;
}
