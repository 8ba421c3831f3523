/* options.c - ardnet's options in one table: the command line (getopt), the YAML keys of a
 * route file, `ardnet --help` and the check of docs/ardnet.md all come from it. */
#include "ard_common.h"
#include "ardn.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define TEXT(field)                                                                                \
    ARDN_OPT_TEXT, 0, 0, offsetof(struct ardn_global, field),                                      \
        sizeof(((struct ardn_global *)0)->field), NULL
#define INT(field, lo, hi)                                                                         \
    ARDN_OPT_INT, lo, hi, offsetof(struct ardn_global, field), sizeof(int), NULL
#define CHECK(field, fn)                                                                           \
    ARDN_OPT_CHECK, 0, 0, offsetof(struct ardn_global, field),                                     \
        sizeof(((struct ardn_global *)0)->field), fn
#define ROUTE ARDN_OPT_ROUTE, 0, 0, 0, 0, NULL
#define ARGV ARDN_OPT_ARGV, 0, 0, 0, 0, NULL
#define LIB ARDN_OPT_LIB, 0, 0, 0, 0, NULL

/* In the order of `ardnet --help`. The route section ends with "next". */
const struct ardn_opt ardn_opts[] = {
    {"in", 'i', "ENDPOINT", ROUTE, "input endpoint"},
    {"out", 'o', "ENDPOINT", ROUTE, "output endpoint (repeatable: a multiplier)"},
    {"size", 's', "N", ROUTE, "packet size, when no local connection tells it"},
    {"type", 't', "DESC", ROUTE, "type descriptor, e.g. \"f64[7] u32\" (with --size)"},
    {"conn-id", 0, "N", ROUTE, "connection id on the wire (default: hash of the local name)"},
    {"from", 0, "HOST[:PORT]", ROUTE, "accept datagrams only from this peer (UDP input)"},
    {"every", 'e', "N", ROUTE, "forward every N-th packet"},
    {"max-rate", 'r', "HZ", ROUTE, "forward at most HZ packets a second, always the newest"},
    {"max-bandwidth", 0, "RATE", ROUTE,
     "send at most RATE bits a second (suffix k, M, G: x1000):\n"
     "a packet's fragments are paced out; a newer packet\n"
     "abandons the rest of an older one (drop_paced)"},
    {"max-datagram", 0, "N", ROUTE,
     "largest datagram sent, 512..65507 bytes (default 1472, IPv6\n"
     "1452: no IP fragmentation on Ethernet); larger packets are\n"
     "sent as fragments"},
    {"qos", 0, "QOS", ROUTE,
     "ros2: endpoints: best-effort, reliable, transient-local\n"
     "(reliable, kept for late readers); default: outputs\n"
     "reliable, inputs best effort"},
    {"ros2-type", 0, "TYPE", ROUTE,
     "ros2: endpoints: the ROS 2 type, Name or package/msg/Name\n"
     "(default: ardnet_msgs/msg/ + the connection in CamelCase)"},
    {"name", 0, "NAME", ROUTE, "route name in counters and messages"},
    {"next", 0, NULL, ARGV, "end this route, the options after it make another one"},
    {"config", 'c', "FILE", ARGV, "read routes (and the options below) from a YAML file"},
    {"bind", 0, "ADDR", TEXT(bind), "source address of all sockets"},
    {"dev", 0, "IFACE", TEXT(dev), "bind all sockets to a network interface (SO_BINDTODEVICE)"},
    {"dscp", 0, "N", INT(dscp, 0, 63), "DSCP 0..63 of sent datagrams (e.g. 46 = EF)"},
    {"sock-prio", 0, "N", INT(sock_prio, 0, 6), "SO_PRIORITY 0..6 of the sockets"},
    {"prio", 0, "N", INT(prio, 1, 99), "run with SCHED_FIFO priority N (1..99)"},
    {"cpu", 0, "LIST", TEXT(cpu), "pin to CPUs, e.g. 1 or 0,2-3"},
    {"stats-file", 0, "PATH", TEXT(stats_file),
     "rewrite the counters to PATH every second and at exit"},
    {"counters", 0, "CONN", CHECK(counters, ardn_counters_option),
     "write the counters to local connection CONN (and the\n"
     "route names to CONN.names) every 0.1 s and at exit"},
    {"ros-domain", 0, "N", CHECK(ros_domain, ardn_ros_domain_option),
     "DDS domain of ros2: endpoints (default: ROS_DOMAIN_ID or 0)"},
    {"key", 0, "FILE", TEXT(key),
     "seal every datagram with the key in FILE (ardnet keygen FILE\n"
     "makes one; mode 0600) and take only datagrams sealed with it"},
    {"ros2-node", 0, "NAME", CHECK(ros2_node, ardn_ros2_node_option),
     "ROS 2 node name of the process's ros2: endpoints\n"
     "(default: the program's name, ardnet)"},
    {"ard-domain", 0, "NAME", LIB, "domain of local connections (and the other --ard-* options)"},
    /* The catalog (docs/ardnet.md, "Automatic: the catalog"): command line only. */
    {"auto", 0, NULL, ARGV,
     "forward connections to and from the other hosts' ardnet --auto\n"
     "by name, on demand (what this host has and what it wants)"},
    {"auto-peers", 0, "LIST", ARGV,
     "the other hosts, HOST[:PORT],... (only these are listened to)"},
    {"auto-multicast", 0, "GROUP:PORT", ARGV,
     "find the other hosts by multicast on the interface of --dev"},
    {"auto-port", 0, "N", ARGV, "UDP port of the catalog (default 7400)"},
    {"auto-limit", 0, "N", ARGV, "most connections wanted from other hosts (default 256)"},
    {"help", 'h', NULL, ARGV, "this text"},
    {"version", 0, NULL, ARGV, "print the version"},
};
const int ardn_nopts = (int)(sizeof ardn_opts / sizeof ardn_opts[0]);
_Static_assert(sizeof ardn_opts / sizeof ardn_opts[0] <= 64, "ardn_global.given has 64 bits");

bool ardn_opt_is_global(const struct ardn_opt *o)
{
    return o->kind == ARDN_OPT_TEXT || o->kind == ARDN_OPT_INT || o->kind == ARDN_OPT_CHECK;
}

bool ardn_opt_in_route_section(const struct ardn_opt *o)
{
    return o->kind == ARDN_OPT_ROUTE || strcmp(o->name, "next") == 0;
}

const struct ardn_opt *ardn_opt_find(const char *name)
{
    for (int i = 0; i < ardn_nopts; i++)
        if (strcmp(ardn_opts[i].name, name) == 0)
            return &ardn_opts[i];
    return NULL;
}

int ardn_global_option(struct ardn_global *g, const struct ardn_opt *o, const char *val)
{
    char *field = (char *)g + o->off;
    uint64_t u;
    switch (o->kind) {
    case ARDN_OPT_TEXT:
        if (strlen(val) >= o->size)
            return ardi_fail(ARD_EINVAL, "%s: '%s' is too long (at most %zu characters)", o->name,
                             val, o->size - 1);
        memcpy(field, val, strlen(val) + 1);
        break;
    case ARDN_OPT_INT:
        if (ardn_parse_u64(val, (uint64_t)o->min, (uint64_t)o->max, &u) < 0)
            return ardi_fail(ARD_EINVAL, "%s '%s': expected a number %ld..%ld", o->name, val,
                             o->min, o->max);
        *(int *)(void *)field = (int)u;
        break;
    case ARDN_OPT_CHECK: {
        int rc = o->check(g, val);
        if (rc < 0)
            return rc;
        break;
    }
    default:
        return ardi_fail(ARD_EINVAL, "'%s' is not a process option", o->name);
    }
    g->given |= UINT64_C(1) << (o - ardn_opts);
    return 0;
}

void ardn_global_merge(struct ardn_global *dst, const struct ardn_global *src)
{
    for (int i = 0; i < ardn_nopts; i++) {
        const struct ardn_opt *o = &ardn_opts[i];
        if (!(src->given & (UINT64_C(1) << i)))
            continue;
        memcpy((char *)dst + o->off, (const char *)src + o->off, o->size);
        dst->given |= UINT64_C(1) << i;
    }
}

void ardn_usage_options(FILE *out, bool route)
{
    for (int i = 0; i < ardn_nopts; i++) {
        const struct ardn_opt *o = &ardn_opts[i];
        if (ardn_opt_in_route_section(o) != route)
            continue;
        char shortname[8] = "";
        if (o->letter)
            snprintf(shortname, sizeof shortname, "-%c,", o->letter);
        char longname[40];
        snprintf(longname, sizeof longname, "--%s%s%s", o->name, o->arg ? " " : "",
                 o->arg ? o->arg : "");
        fprintf(out, "  %-4s%-18s  ", shortname, longname);
        for (const char *d = o->doc; *d; d++) {
            fputc(*d, out);
            if (*d == '\n')
                fprintf(out, "%26s", "");
        }
        fputc('\n', out);
    }
}

void ardn_yaml_keys(char *buf, size_t len)
{
    size_t n = (size_t)snprintf(buf, len, "routes");
    for (int i = 0; i < ardn_nopts && n < len; i++)
        if (ardn_opt_is_global(&ardn_opts[i]))
            n += (size_t)snprintf(buf + n, len - n, ", %s", ardn_opts[i].name);
}
