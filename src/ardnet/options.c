/* options.c - ardnet's options in one table (src/common/ardc_opt.h): the command line, the
 * YAML keys of a route file, `ardnet --help` and the check of docs/ardnet.md all come from it.
 * The route options are callbacks into the route being built; the process and catalog options
 * land in their fields of struct ardn_conf. */
#include "ard_common.h"
#include "ardc_opt.h"
#include "ardn.h"
#include "auto.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the route options: into the route being built ---------------------------------------- */

static struct ardn_route *route_of(void *dest)
{
    struct ardn_conf *c = dest;
    c->have_route = true;
    return c->route;
}

/* in: the route's one input. */
static int key_in(void *d, const struct ardc_opt *o, const char *val)
{
    (void)o;
    struct ardn_route *r = route_of(d);
    if (r->cfg.in.text[0])
        return ardi_fail(ARD_EINVAL, "the route already has an input ('%s')", r->cfg.in.text);
    return ardn_ep_parse(&r->cfg.in, val, true);
}

/* out: one more output. */
static int key_out(void *d, const struct ardc_opt *o, const char *val)
{
    (void)o;
    struct ardn_route *r = route_of(d);
    if (r->cfg.nout == ARDN_MAX_OUT)
        return ardi_fail(ARD_EINVAL, "too many outputs (at most %d)", ARDN_MAX_OUT);
    int rc = ardn_ep_parse(&r->cfg.out[r->cfg.nout], val, false);
    if (rc < 0)
        return rc;
    r->cfg.nout++;
    return 0;
}

/* name: the route's name. */
static int key_name(void *d, const struct ardc_opt *o, const char *val)
{
    (void)o;
    struct ardn_route *r = route_of(d);
    if (!*val || strlen(val) > ARD_MAX_NAME)
        return ardi_fail(ARD_EINVAL, "name must have 1..%d characters", ARD_MAX_NAME);
    snprintf(r->cfg.name, sizeof r->cfg.name, "%s", val);
    return 0;
}

/* size: the packet size in bytes. */
static int key_size(void *d, const struct ardc_opt *o, const char *val)
{
    (void)o;
    struct ardn_route *r = route_of(d);
    uint64_t u;
    if (ardn_parse_u64(val, 1, ARDW_MAX_PAYLOAD, &u) < 0)
        return ardi_fail(ARD_EINVAL, "size '%s' is not a number 1..%u", val, ARDW_MAX_PAYLOAD);
    r->cfg.size = (size_t)u;
    return 0;
}

/* type: the packet's type descriptor ("" for opaque). */
static int key_type(void *d, const struct ardc_opt *o, const char *val)
{
    (void)o;
    struct ardn_route *r = route_of(d);
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
static int key_conn_id(void *d, const struct ardc_opt *o, const char *val)
{
    (void)o;
    struct ardn_route *r = route_of(d);
    uint64_t u;
    if (ardn_parse_u64(val, 1, UINT32_MAX, &u) < 0)
        return ardi_fail(ARD_EINVAL, "conn-id '%s' is not a number 1..%u", val, UINT32_MAX);
    r->cfg.conn_id = (uint32_t)u;
    r->cfg.conn_id_given = true;
    return 0;
}

/* from: the only peer whose datagrams are taken. */
static int key_from(void *d, const struct ardc_opt *o, const char *val)
{
    (void)o;
    struct ardn_route *r = route_of(d);
    if (strlen(val) >= sizeof r->cfg.from || !*val)
        return ardi_fail(ARD_EINVAL, "from: bad peer '%s'", val);
    int rc = ardn_resolve(val, &r->cfg.from_addr, &r->cfg.from_len, &r->cfg.from_port);
    if (rc < 0)
        return ardn_fail_prefix(rc, "from: ");
    strcpy(r->cfg.from, val);
    return 0;
}

/* every: send every Nth packet. */
static int key_every(void *d, const struct ardc_opt *o, const char *val)
{
    (void)o;
    struct ardn_route *r = route_of(d);
    uint64_t u;
    if (ardn_parse_u64(val, 1, UINT32_MAX, &u) < 0)
        return ardi_fail(ARD_EINVAL, "every '%s' is not a number >= 1", val);
    r->cfg.every = u;
    return 0;
}

/* max-datagram: the largest datagram sent, in bytes. */
static int key_max_datagram(void *d, const struct ardc_opt *o, const char *val)
{
    (void)o;
    struct ardn_route *r = route_of(d);
    uint64_t u;
    if (ardn_parse_u64(val, ARDW_MIN_DGRAM, ARDW_MAX_DGRAM, &u) < 0)
        return ardi_fail(ARD_EINVAL, "max-datagram '%s' is not a number %u..%u", val,
                         ARDW_MIN_DGRAM, ARDW_MAX_DGRAM);
    r->cfg.max_dgram = (size_t)u;
    return 0;
}

/* max-bandwidth: bits a second, with an SI suffix: 100M is 100 Mbit/s (12.5 MB/s). */
static int key_max_bandwidth(void *d, const struct ardc_opt *o, const char *val)
{
    (void)o;
    struct ardn_route *r = route_of(d);
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
static int key_max_rate(void *d, const struct ardc_opt *o, const char *val)
{
    (void)o;
    struct ardn_route *r = route_of(d);
    if (ardn_parse_double(val, 1e-3, 1e6, &r->cfg.max_rate) < 0)
        return ardi_fail(ARD_EINVAL, "max-rate '%s' is not a rate in Hz (0.001..1e6)", val);
    return 0;
}

/* ros2-type: the ROS 2 message type of the DDS endpoints. */
static int key_ros2_type(void *d, const struct ardc_opt *o, const char *val)
{
    (void)o;
    struct ardn_route *r = route_of(d);
    if (!ardn_have_ros2)
        return ardi_fail(ARD_EINVAL, "ros2: endpoints not built (configure with cyclonedds-dev)");
    return ardn_ros2_type_parse(val, r->cfg.ros2_type, sizeof r->cfg.ros2_type);
}

/* qos: the DDS endpoints' QoS. */
static int key_qos(void *d, const struct ardc_opt *o, const char *val)
{
    (void)o;
    struct ardn_route *r = route_of(d);
    int rc = ardn_qos_parse(r, val);
    if (rc == 0)
        r->cfg.qos_given = true;
    return rc;
}

/* ---- the process options: their fields of struct ardn_global, each marked given ----------- */

/* After a process option's value was stored: mark it given (the command line's win). */
static int given(void *d, const struct ardc_opt *o, const char *val)
{
    (void)val;
    ((struct ardn_conf *)d)->g.given |= UINT64_C(1) << (o - ardn_opts);
    return 0;
}

/* The checks of counters, ros-domain and ros2-node name the option as the file spells it; on
 * the command line with its dashes. */
static int checked(void *d, const struct ardc_opt *o, int rc)
{
    struct ardn_conf *c = d;
    return rc < 0 ? ardn_fail_prefix(rc, c->dash) : given(d, o, NULL);
}

static int opt_counters(void *d, const struct ardc_opt *o, const char *val)
{
    return checked(d, o, ardn_counters_option(&((struct ardn_conf *)d)->g, val));
}

static int opt_ros_domain(void *d, const struct ardc_opt *o, const char *val)
{
    return checked(d, o, ardn_ros_domain_option(&((struct ardn_conf *)d)->g, val));
}

static int opt_ros2_node(void *d, const struct ardc_opt *o, const char *val)
{
    return checked(d, o, ardn_ros2_node_option(&((struct ardn_conf *)d)->g, val));
}

/* ---- command line only -------------------------------------------------------------------- */

int ardn_conf_end_route(struct ardn_conf *c)
{
    int rc = ardn_route_finish(c->route);
    if (rc < 0)
        return rc;
    struct ardn_route *n = realloc(c->routes, (size_t)(c->nroutes + 1) * sizeof *n);
    if (!n)
        return ardi_fail(ARD_ENOMEM, "out of memory");
    c->routes = n;
    c->routes[c->nroutes++] = *c->route;
    ardn_route_init(c->route);
    c->have_route = false;
    return 0;
}

/* --next: the route so far is complete, the route options after it make another one. */
static int opt_next(void *d, const struct ardc_opt *o, const char *val)
{
    (void)o, (void)val;
    struct ardn_conf *c = d;
    if (!c->have_route)
        return ardi_fail(ARD_EOPTION, "--next: no route before it (give --in and --out first)");
    return ardn_conf_end_route(c);
}

/* --help, --version: main prints them (o->set says which) and exits. */
static int opt_stop(void *d, const struct ardc_opt *o, const char *val)
{
    (void)val;
    ((struct ardn_conf *)d)->stop = o->set;
    return ARDC_OPT_STOP;
}

static int unexpected(void *d, char *word)
{
    (void)d;
    return ardi_fail(ARD_EOPTION, "unexpected argument '%s'", word);
}

/* ---- the table ---------------------------------------------------------------------------- */

#define ROUTE(fn) ARDC_CALL, .call = fn, .where = ARDN_W_ROUTE
#define BUF(field) ARDC_BUF, ARDC_DEST(struct ardn_conf, g.field), .call = given
#define INT(field, lo, hi)                                                                         \
    ARDC_INT, ARDC_DEST(struct ardn_conf, g.field), .min = lo, .max = hi, .call = given
#define CHECK(field, fn) ARDC_CALL, ARDC_DEST(struct ardn_conf, g.field), .call = fn
#define GLOBAL .where = ARDN_W_GLOBAL
#define CATALOG .where = ARDN_W_CATALOG
#define ARGV .where = ARDN_W_ARGV

/* In the order of `ardnet --help`: the route options and --next, then the process's. The
 * YAML key of a route or process option is its name. */
const struct ardc_opt ardn_opts[] = {
    {"in", 'i', "ENDPOINT", "input endpoint", ROUTE(key_in), .yaml = "in"},
    {"out", 'o', "ENDPOINT", "output endpoint (repeatable: a multiplier)", ROUTE(key_out),
     .yaml = "out"},
    {"size", 's', "N", "packet size, when no local connection tells it", ROUTE(key_size),
     .yaml = "size"},
    {"type", 't', "DESC", "type descriptor, e.g. \"f64[7] u32\" (with --size)", ROUTE(key_type),
     .yaml = "type"},
    {"conn-id", 0, "N", "connection id on the wire (default: hash of the local name)",
     ROUTE(key_conn_id), .yaml = "conn-id"},
    {"from", 0, "HOST[:PORT]", "accept datagrams only from this peer (UDP input)", ROUTE(key_from),
     .yaml = "from"},
    {"every", 'e', "N", "forward every N-th packet", ROUTE(key_every), .yaml = "every"},
    {"max-rate", 'r', "HZ", "forward at most HZ packets a second, always the newest",
     ROUTE(key_max_rate), .yaml = "max-rate"},
    {"max-bandwidth", 0, "RATE",
     "send at most RATE bits a second (suffix k, M, G: x1000):\n"
     "a packet's fragments are paced out; a newer packet\n"
     "abandons the rest of an older one (drop_paced)",
     ROUTE(key_max_bandwidth), .yaml = "max-bandwidth"},
    {"max-datagram", 0, "N",
     "largest datagram sent, 512..65507 bytes (default 1472, IPv6\n"
     "1452: no IP fragmentation on Ethernet); larger packets are\n"
     "sent as fragments",
     ROUTE(key_max_datagram), .yaml = "max-datagram"},
    {"qos", 0, "QOS",
     "ros2: endpoints: best-effort, reliable, transient-local\n"
     "(reliable, kept for late readers); default: outputs\n"
     "reliable, inputs best effort",
     ROUTE(key_qos), .yaml = "qos"},
    {"ros2-type", 0, "TYPE",
     "ros2: endpoints: the ROS 2 type, Name or package/msg/Name\n"
     "(default: ardnet_msgs/msg/ + the connection in CamelCase)",
     ROUTE(key_ros2_type), .yaml = "ros2-type"},
    {"name", 0, "NAME", "route name in counters and messages", ROUTE(key_name), .yaml = "name"},
    {"next", 0, NULL, "end this route, the options after it make another one", ARDC_CALL,
     .call = opt_next, ARGV},
    {"config", 'c', "FILE", "read routes (and the options below) from a YAML file", ARDC_TEXT,
     ARDC_DEST(struct ardn_conf, config), .complete = "@file", ARGV},
    {"bind", 0, "ADDR", "source address of all sockets", BUF(bind), GLOBAL, .yaml = "bind"},
    {"dev", 0, "IFACE", "bind all sockets to a network interface (SO_BINDTODEVICE)", BUF(dev),
     GLOBAL, .yaml = "dev"},
    {"dscp", 0, "N", "DSCP 0..63 of sent datagrams (e.g. 46 = EF)", INT(dscp, 0, 63), GLOBAL,
     .yaml = "dscp"},
    {"sock-prio", 0, "N", "SO_PRIORITY 0..6 of the sockets", INT(sock_prio, 0, 6), GLOBAL,
     .yaml = "sock-prio"},
    {"prio", 0, "N", "run with SCHED_FIFO priority N (1..99)", INT(prio, 1, 99), GLOBAL,
     .yaml = "prio"},
    {"cpu", 0, "LIST", "pin to CPUs, e.g. 1 or 0,2-3", BUF(cpu), GLOBAL, .yaml = "cpu"},
    {"stats-file", 0, "PATH", "rewrite the counters to PATH every second and at exit",
     BUF(stats_file), .complete = "@file", GLOBAL, .yaml = "stats-file"},
    {"counters", 0, "CONN",
     "write the counters to local connection CONN (and the\n"
     "route names to CONN.names) every 0.1 s and at exit",
     CHECK(counters, opt_counters), GLOBAL, .yaml = "counters"},
    {"ros-domain", 0, "N", "DDS domain of ros2: endpoints (default: ROS_DOMAIN_ID or 0)",
     CHECK(ros_domain, opt_ros_domain), GLOBAL, .yaml = "ros-domain"},
    {"key", 0, "FILE",
     "seal every datagram with the key in FILE (ardnet keygen FILE\n"
     "makes one; mode 0600) and take only datagrams sealed with it",
     BUF(key), .complete = "@file", GLOBAL, .yaml = "key"},
    {"ros2-node", 0, "NAME",
     "ROS 2 node name of the process's ros2: endpoints\n"
     "(default: the program's name, ardnet)",
     CHECK(ros2_node, opt_ros2_node), GLOBAL, .yaml = "ros2-node"},
    {"ard-domain", 0, "NAME", "domain of local connections (and the other --ard-* options)",
     ARDC_TEXT, .where = ARDN_W_LIB},
    /* The catalog (docs/ardnet.md, "Automatic: the catalog"): command line only. */
    {"auto", 0, NULL,
     "forward connections to and from the other hosts' ardnet --auto\n"
     "by name, on demand (what this host has and what it wants)",
     ARDC_FLAG, ARDC_DEST(struct ardn_conf, cat.enabled), CATALOG},
    {"auto-peers", 0, "LIST", "the other hosts, HOST[:PORT],... (only these are listened to)",
     ARDC_BUF, ARDC_DEST(struct ardn_conf, cat.peers), CATALOG},
    {"auto-multicast", 0, "GROUP:PORT",
     "find the other hosts by multicast on the interface of --dev", ARDC_BUF,
     ARDC_DEST(struct ardn_conf, cat.mcast), CATALOG},
    {"auto-port", 0, "N", "UDP port of the catalog (default 7400)", ARDC_INT,
     ARDC_DEST(struct ardn_conf, cat.port), .min = 1, .max = 65535, CATALOG},
    {"auto-limit", 0, "N", "most connections wanted from other hosts (default 256)", ARDC_INT,
     ARDC_DEST(struct ardn_conf, cat.limit), .min = 1, .max = ARDA_MAX_LOCAL, CATALOG},
    {"help", 'h', NULL, "this text", ARDC_CALL, .call = opt_stop, .set = ARDN_STOP_HELP, ARGV},
    {"version", 0, NULL, "print the version", ARDC_CALL, .call = opt_stop, .set = ARDN_STOP_VERSION,
     ARGV},
    {.name = NULL},
};
const int ardn_nopts = (int)(sizeof ardn_opts / sizeof ardn_opts[0]) - 1;
_Static_assert(sizeof ardn_opts / sizeof ardn_opts[0] <= 65, "ardn_global.given has 64 bits");
/* The process options' destinations are those of struct ardn_global too. */
_Static_assert(offsetof(struct ardn_conf, g) == 0, "struct ardn_conf starts with its ardn_global");

const struct ardc_optset ardn_optset = {
    .see = "ardnet --help",
    .head =
        "usage: ardnet [OPTIONS] --in ENDPOINT --out ENDPOINT [--out ENDPOINT...] [--next "
        "ROUTE...]\n"
        "       ardnet [OPTIONS] --config FILE\n"
        "       ardnet --auto (--auto-peers HOST[:PORT],... | --auto-multicast GROUP:PORT --dev "
        "IF)\n"
        "       ardnet keygen FILE   (write a new key for --key, mode 0600)\n"
        "\n"
        "Forward packets from one input endpoint to one or more outputs (bridge, multiplier,\n"
        "rate reducer). ENDPOINT is a local connection name, udp://HOST:PORT (send to) or, as\n"
        "input, udp://[ADDR]:PORT (listen on; udp://:PORT for any address), or a ROS 2 topic\n"
        "ros2:/TOPIC (DDS, when built with Cyclone DDS).\n"
        "\n"
        "The route options (--in to --next) make the command-line route; a YAML file's routes\n"
        "have the same keys, its top level those of the process options (--bind to --ros2-node).\n"
        "\n",
    .opts = ardn_opts,
    .col = 26,
    .tail = "Counters go to stderr on SIGUSR1 and at exit. SIGTERM/SIGINT exit cleanly.\n"
            "Exit codes: 0 clean exit, 100 usage or configuration error (also: ros2: endpoints "
            "in an\n"
            "ardnet built without ROS 2), 111 system error.\n",
    .arg = unexpected,
};

/* ---- the conf ------------------------------------------------------------------------------ */

void ardn_conf_init(struct ardn_conf *c)
{
    memset(c, 0, sizeof *c);
    c->g.dscp = c->g.sock_prio = c->g.ros_domain = -1;
    c->dash = "--";
}

void ardn_global_merge(struct ardn_global *dst, const struct ardn_global *src)
{
    for (int i = 0; i < ardn_nopts; i++) {
        const struct ardc_opt *o = &ardn_opts[i];
        if (!(o->where & ARDN_W_GLOBAL) || !(src->given & (UINT64_C(1) << i)))
            continue;
        memcpy((char *)dst + o->off, (const char *)src + o->off, o->size);
        dst->given |= UINT64_C(1) << i;
    }
}

int ardn_route_option(struct ardn_route *r, const char *key, const char *val)
{
    const struct ardc_opt *o = ardc_opt_find_yaml(&ardn_optset, ARDN_W_ROUTE, key);
    if (!o)
        return ardi_fail(ARD_EINVAL, "unknown route key '%s'", key);
    struct ardn_conf c = {.route = r, .dash = ""};
    return ardc_opt_apply(o, key, val, &c);
}

void ardn_yaml_keys(char *buf, size_t len)
{
    size_t n = (size_t)snprintf(buf, len, "routes");
    for (int i = 0; i < ardn_nopts && n < len; i++)
        if ((ardn_opts[i].where & ARDN_W_GLOBAL) && ardn_opts[i].yaml)
            n += (size_t)snprintf(buf + n, len - n, ", %s", ardn_opts[i].yaml);
}
