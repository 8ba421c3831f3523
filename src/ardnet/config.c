/* config.c - the YAML route file (its keys are the rows of options.c), the checks of a route
 * and of the process options that have their own. */
#include "ard_common.h"
#include "ardc_opt.h"
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

/* A process option at the top level of the file. */
static int global_key(const struct ardy_doc *y, const yaml_node_t *k, const char *key,
                      yaml_node_t *v, struct ardn_conf *c)
{
    const struct ardc_opt *o = ardc_opt_find_yaml(&ardn_optset, ARDN_W_GLOBAL, key);
    if (!o) {
        char keys[512], known[600];
        ardn_yaml_keys(keys, sizeof keys);
        snprintf(known, sizeof known, "(expected %s)", keys);
        return ardy_unknown_key(y, k, key, known);
    }
    const char *s = ardy_text(v);
    if (!s)
        return ardy_fail(y, v, "'%s' must be a single value", key);
    if (ardc_opt_apply(o, key, s, c) < 0)
        return ardy_fail(y, v, "%s", ard_errdetail());
    return 0;
}

/* One value v of route key `key` (k its node); `single` says what v must be. */
static int route_key(const struct ardy_doc *y, const yaml_node_t *k, const char *key,
                     const yaml_node_t *v, const char *single, struct ardn_conf *c)
{
    if (!ardy_text(v))
        return ardy_fail(y, v, "%s", single);
    const struct ardc_opt *o = ardc_opt_find_yaml(&ardn_optset, ARDN_W_ROUTE, key);
    if (!o)
        return ardy_fail(y, k, "unknown route key '%s'", key);
    if (ardc_opt_apply(o, key, ardy_text(v), c) < 0)
        return ardy_fail(y, v, "%s", ard_errdetail());
    return 0;
}

static int load_route(const struct ardy_doc *y, yaml_node_t *m, struct ardn_conf *c)
{
    if (m->type != YAML_MAPPING_NODE)
        return ardy_fail(y, m, "a route must be a mapping (in: ..., out: ...)");
    ardn_route_init(c->route);
    ARDY_FOR_PAIRS(y, m, k, v)
    {
        const char *key = ardy_text(k);
        int rc;
        if (!key)
            return ardy_fail(y, k, "a key must be a plain word");
        if (strcmp(key, "out") == 0 && v->type == YAML_SEQUENCE_NODE) {
            ARDY_FOR_ITEMS(y, v, o)
            {
                if ((rc = route_key(y, k, key, o, "an output must be a single endpoint", c)) < 0)
                    return rc;
            }
            continue;
        }
        char single[1100];
        snprintf(single, sizeof single, "'%.1000s' must be a single value", key);
        if ((rc = route_key(y, k, key, v, single, c)) < 0)
            return rc;
    }
    if (ardn_route_finish(c->route) < 0)
        return ardy_fail(y, m, "%s", ard_errdetail());
    return 0;
}

/* The routes list: each route appended to *routes. */
static int load_routes(const struct ardy_doc *y, yaml_node_t *v, struct ardn_route **routes, int *n,
                       struct ardn_conf *c)
{
    if (v->type != YAML_SEQUENCE_NODE)
        return ardy_fail(y, v, "'routes' must be a list of routes");
    ARDY_FOR_ITEMS(y, v, item)
    {
        struct ardn_route *nr = realloc(*routes, (size_t)(*n + 1) * sizeof **routes);
        if (!nr)
            return ardi_fail(ARD_ENOMEM, "%s: out of memory", y->file);
        *routes = nr;
        c->route = &nr[*n];
        int rc = load_route(y, item, c);
        if (rc < 0)
            return rc;
        (*n)++;
    }
    return 0;
}

/* The top level of the file: the routes and the process options. */
static int load_doc(struct ardy_doc *y, struct ardn_route **routes, int *n, struct ardn_conf *c)
{
    yaml_node_t *root = ardy_root(y);
    if (!root)
        return ardi_fail(ARD_EINVAL, "%s:1:1: the file is empty", y->file);
    if (root->type != YAML_MAPPING_NODE)
        return ardy_fail(y, root, "the file must be a mapping with a 'routes' list");
    bool have_routes = false;
    ARDY_FOR_PAIRS(y, root, k, v)
    {
        const char *key = ardy_text(k);
        int rc;
        if (!key)
            return ardy_fail(y, k, "a key must be a plain word");
        if (strcmp(key, "routes") != 0)
            rc = global_key(y, k, key, v, c);
        else
            rc = load_routes(y, v, routes, n, c);
        if (rc < 0)
            return rc;
        have_routes |= strcmp(key, "routes") == 0;
    }
    if (!have_routes)
        return ardy_fail(y, root, "no 'routes' list");
    return 0;
}

int ardn_config_load(const char *path, struct ardn_route **routes, int *n, struct ardn_global *g)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return ardi_fail(ARD_EINVAL, "%s: cannot open: %s", path, strerror(errno));
    /* A route file needs 4 levels. */
    struct ardy_doc y;
    int rc = ardy_load(&y, path, &f, 16, true);
    fclose(f);
    if (rc < 0)
        return rc;
    /* The process options go to a copy of g, kept only when the whole file is good. */
    struct ardn_conf *c = malloc(sizeof *c);
    if (!c) {
        ardy_free(&y);
        return ardi_fail(ARD_ENOMEM, "%s: out of memory", path);
    }
    *c = (struct ardn_conf){.g = *g, .dash = ""};
    rc = load_doc(&y, routes, n, c);
    if (rc == 0)
        *g = c->g;
    free(c);
    ardy_free(&y);
    return rc;
}
