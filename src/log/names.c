/* names.c - the names a recording and the live Foxglove server give a connection
 * (docs/recording.md, "Names in viewers"): one mapping, used by the MCAP writer and by `ard web`'s
 * Foxglove protocol alike.
 *
 * Topic: "/" then the connection name with every '.' as '/' ("arm.state" -> "/arm/state").
 * Connection names are A-Z a-z 0-9 _ - . (never '/'), so the mapping is one to one and
 * ardl_topic_conn undoes it. The channel's metadata also keeps the name itself
 * ("ardnet.name"): readers take the name from there, and files written before the mapping
 * (topic = name, no "ardnet.name") read as they always did.
 *
 * Schema name: "ardnet/msg/" + the CamelCase of the name + "_" + 12 hex digits of a 64-bit
 * FNV-1a hash of the .msg definition. Names whose CamelCase agree ("s.pose", "s_pose",
 * "sPose") get different schema names as soon as their definitions differ, the same schema
 * name when the definitions are the same, and the name depends on nothing but the name and
 * the layout: stable across runs and hosts. */
#include "logi.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

int ardl_topic(const char *conn, char *topic, size_t len)
{
    size_t n = strlen(conn);
    if (n == 0 || n + 2 > len)
        return ardi_fail(ARD_EINVAL, "connection name '%s' is empty or too long for a topic", conn);
    topic[0] = '/';
    for (size_t i = 0; i <= n; i++)
        topic[i + 1] = conn[i] == '.' ? '/' : conn[i];
    return 0;
}

int ardl_topic_conn(const char *topic, char *conn, size_t len)
{
    size_t n = strlen(topic);
    if (n < 2 || topic[0] != '/' || n - 1 > ARD_MAX_NAME || n > len)
        return ardi_fail(ARD_EINVAL,
                         "topic '%s' is not '/' and a connection name of at most %d characters",
                         topic, ARD_MAX_NAME);
    for (size_t i = 1; i <= n; i++) {
        char c = topic[i] == '/' ? '.' : topic[i];
        if (c && !isalnum((unsigned char)c) && c != '_' && c != '-' && c != '.')
            return ardi_fail(ARD_EINVAL,
                             "topic '%s' is no connection's: '%c' (a connection name is A-Z a-z "
                             "0-9 _ - and '.' for '/')",
                             topic, c);
        conn[i - 1] = c;
    }
    if (strcmp(conn, ".") == 0 || strcmp(conn, "..") == 0)
        return ardi_fail(ARD_EINVAL, "topic '%s' is no connection's", topic);
    return 0;
}

uint64_t ardl_fnv1a(const void *p, size_t n)
{
    const uint8_t *b = p;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

void ardl_schema_name_def(const char *conn, const void *def, size_t deflen, char *name, size_t len)
{
    ardl_schema_name(conn, name, len);
    size_t o = strlen(name);
    if (o < len)
        snprintf(name + o, len - o, "_%012llx",
                 (unsigned long long)(ardl_fnv1a(def, deflen) >> 16));
}

/* rosbag2's offered_qos_profiles (rosbag2_storage's qos.cpp): every key its reader takes, in
 * the integer form of metadata version 8, which rosbag2 Humble reads and Iron, Jazzy and
 * Rolling detect and read too (they write names instead since version 9). Values: keep last
 * 1 (history 1), best effort (reliability 2), volatile (durability 2), automatic liveliness
 * (1), no deadline, lifespan or lease (RMW_DURATION_INFINITE), ROS namespace conventions
 * kept. */
const char ardl_qos_profiles[] = "- history: 1\n"
                                 "  depth: 1\n"
                                 "  reliability: 2\n"
                                 "  durability: 2\n"
                                 "  deadline:\n"
                                 "    sec: 9223372036\n"
                                 "    nsec: 854775807\n"
                                 "  lifespan:\n"
                                 "    sec: 9223372036\n"
                                 "    nsec: 854775807\n"
                                 "  liveliness: 1\n"
                                 "  liveliness_lease_duration:\n"
                                 "    sec: 9223372036\n"
                                 "    nsec: 854775807\n"
                                 "  avoid_ros_namespace_conventions: false\n";
