/* names.c - the outside names of a connection (docs/ros2.md#names), the same in recordings, in
 * the Foxglove protocol and on ROS 2:
 *
 * Topic: "/" then the connection name with every '.' as '/' ("arm.state" -> "/arm/state").
 * Connection names are A-Z a-z 0-9 _ - . (never '/'), so the mapping is one to one and
 * ardr2_topic_conn undoes it. ROS 2 accepts fewer topics (ardr2_topic_check): a name with '-',
 * an empty part or a part starting with a digit keeps its topic in a recording and a viewer,
 * and is given a topic by hand on ROS 2.
 *
 * Type: "ardnet_msgs/msg/<Name>", DDS "ardnet_msgs::msg::dds_::<Name>_", <Name> the CamelCase
 * of the connection name. CamelCase is not one to one ("s.pose", "s_pose", "sPose" are all
 * SPose): in one set of connections (a recording, a server, an ardnet process, a package),
 * the first connection met keeps the CamelCase for its layout, and a later one with another
 * .msg text gets "H" and 8 hex digits of its layout hash after it (SPoseH1f0c33a2), a name
 * that depends only on the CamelCase and the layout. */
#include "ardros2.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ardr2_topic(const char *conn, char *topic, size_t len)
{
    size_t n = strlen(conn);
    if (n == 0 || n + 2 > len)
        return ardi_fail(ARD_EINVAL, "connection name '%s' is empty or too long for a topic", conn);
    topic[0] = '/';
    for (size_t i = 0; i <= n; i++)
        topic[i + 1] = conn[i] == '.' ? '/' : conn[i];
    return 0;
}

int ardr2_topic_conn(const char *topic, char *conn, size_t len)
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

/* A ROS 2 topic name token: [A-Za-z_][A-Za-z0-9_]*, not empty. */
static bool ros_token_ok(const char *s, size_t n)
{
    if (n == 0 || isdigit((unsigned char)s[0]))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '_')
            return false;
    return true;
}

int ardr2_topic_check(const char *topic, const char *conn)
{
    size_t n = strlen(topic);
    if (n < 2 || topic[0] != '/')
        return ardi_fail(ARD_EINVAL, "ROS 2 topic '%s' does not start with '/' and a name", topic);
    if (n - 1 > ARD_MAX_NAME)
        return ardi_fail(ARD_EINVAL, "ROS 2 topic '%s' is longer than a connection name (%d)",
                         topic, ARD_MAX_NAME);
    for (size_t a = 1, b; a <= n; a = b + 1) {
        b = a;
        while (b < n && topic[b] != '/')
            b++;
        if (ros_token_ok(topic + a, b - a))
            continue;
        const char *why = b == a                             ? "empty"
                          : isdigit((unsigned char)topic[a]) ? "started by a digit"
                                                             : "made of other characters";
        if (conn)
            return ardi_fail(ARD_EINVAL,
                             "connection '%s' has no ROS 2 topic name: part '%.*s' is %s (a ROS 2 "
                             "name part is A-Z a-z 0-9 _ and starts with no digit); give the topic "
                             "yourself (ros2:/TOPIC)",
                             conn, (int)(b - a), topic + a, why);
        return ardi_fail(ARD_EINVAL,
                         "'%s' is not a ROS 2 topic name: part '%.*s' must be A-Z a-z 0-9 _, "
                         "not empty, and start with no digit",
                         topic, (int)(b - a), topic + a);
    }
    return 0;
}

void ardr2_camel(const char *conn, char *out, size_t len)
{
    size_t o = 0;
    bool up = true;
    if (len == 0)
        return;
    for (const char *p = conn; *p && o + 1 < len; p++) {
        if (!isalnum((unsigned char)*p)) {
            up = true;
            continue;
        }
        if (o == 0 && isdigit((unsigned char)*p))
            out[o++] = 'C';
        if (o + 1 < len)
            out[o++] = up ? (char)toupper((unsigned char)*p) : *p;
        up = false;
    }
    if (o == 0 && o + 1 < len)
        out[o++] = 'C';
    out[o] = '\0';
}

void ardr2_type_name(const char *msg, char *type, size_t len)
{
    snprintf(type, len, "ardnet_msgs/msg/%s", msg);
}

void ardr2_dds_type_name(const char *msg, char *type, size_t len)
{
    snprintf(type, len, "ardnet_msgs::msg::dds_::%s_", msg);
}

int ardr2_dds_type(const char *rtype, char *dds, size_t len)
{
    const char *name = rtype, *slash = strrchr(rtype, '/');
    char pkg[ARD_MAX_NAME + 1] = "ardnet_msgs";
    if (slash) {
        const char *s1 = strchr(rtype, '/');
        size_t n = (size_t)(s1 - rtype);
        if (s1 + 4 != slash || strncmp(s1, "/msg/", 5) != 0 || n == 0 || n >= sizeof pkg)
            return ardi_fail(ARD_EINVAL,
                             "ROS 2 type '%s' is not NAME or PACKAGE/msg/NAME (e.g. "
                             "ardnet_msgs/msg/ArmState)",
                             rtype);
        memcpy(pkg, rtype, n);
        pkg[n] = '\0';
        name = slash + 1;
        for (size_t i = 0; i < n; i++)
            if (!(islower((unsigned char)pkg[i]) || pkg[i] == '_' ||
                  (i > 0 && isdigit((unsigned char)pkg[i]))))
                return ardi_fail(ARD_EINVAL,
                                 "ROS 2 type '%s': package '%s' must be a-z 0-9 _ and start "
                                 "with a letter",
                                 rtype, pkg);
    }
    bool ok = isupper((unsigned char)name[0]) && strlen(name) <= ARD_MAX_NAME;
    for (size_t i = 1; ok && name[i]; i++)
        ok = isalnum((unsigned char)name[i]);
    if (!ok)
        return ardi_fail(ARD_EINVAL,
                         "ROS 2 type '%s': message name '%s' must be A-Z then A-Z a-z 0-9", rtype,
                         name);
    if ((size_t)snprintf(dds, len, "%s::msg::dds_::%s_", pkg, name) >= len)
        return ardi_fail(ARD_EINVAL, "ROS 2 type '%s' is too long", rtype);
    return 0;
}

uint64_t ardr2_fnv1a(const void *p, size_t n)
{
    const uint8_t *b = p;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

void ardr2_hash_hex(uint64_t hash, char *hex, size_t len)
{
    snprintf(hex, len, "%016llx", (unsigned long long)hash);
}

int ardr2_names_add(struct ardr2_names *s, const char *conn, uint64_t hash, char *msg, size_t len,
                    const char **other)
{
    char camel[ARDR2_MSG_MAX];
    ardr2_camel(conn, camel, sizeof camel);
    const struct ardr2_named *holder = NULL;
    for (size_t i = 0; i < s->n; i++) {
        const struct ardr2_named *e = &s->v[i];
        if (strcmp(e->conn, conn) == 0 && e->hash == hash) {
            snprintf(msg, len, "%s", e->msg); /* named before: the same name, told before */
            return 0;
        }
        if (!holder && strcmp(e->msg, camel) == 0)
            holder = e;
    }
    int rc = 0;
    if (!holder || holder->hash == hash) {
        snprintf(msg, len, "%s", camel);
    } else {
        snprintf(msg, len, "%sH%08llx", camel, (unsigned long long)(hash >> 32));
        rc = 1;
    }
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        struct ardr2_named *v = realloc(s->v, cap * sizeof *v);
        if (!v)
            return ardi_fail(ARD_ENOMEM, "out of memory");
        holder = holder ? v + (holder - s->v) : NULL;
        s->v = v;
        s->cap = cap;
    }
    struct ardr2_named *e = &s->v[s->n++];
    snprintf(e->conn, sizeof e->conn, "%s", conn);
    snprintf(e->msg, sizeof e->msg, "%s", msg);
    e->hash = hash;
    if (rc == 1 && other)
        *other = holder->conn;
    return rc;
}

void ardr2_clash_text(char *buf, size_t len, const char *first, const char *conn, const char *msg)
{
    char camel[ARDR2_MSG_MAX];
    ardr2_camel(conn, camel, sizeof camel);
    if (strcmp(first, conn) == 0)
        snprintf(buf, len,
                 "connection '%s' came back with other fields: the new layout is "
                 "ardnet_msgs/msg/%s, the first keeps %s (docs/ros2.md#names)",
                 conn, msg, camel);
    else
        snprintf(buf, len,
                 "connections '%s' and '%s' both have the ROS 2 message name %s with different "
                 "fields: '%s' is ardnet_msgs/msg/%s (docs/ros2.md#names)",
                 first, conn, camel, conn, msg);
}

void ardr2_names_drop(struct ardr2_names *s, const char *conn)
{
    for (size_t i = 0; i < s->n;)
        if (strcmp(s->v[i].conn, conn) == 0)
            s->v[i] = s->v[--s->n];
        else
            i++;
}

void ardr2_names_free(struct ardr2_names *s)
{
    free(s->v);
    memset(s, 0, sizeof *s);
}
