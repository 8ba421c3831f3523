/* msgdef.c - an ardnet type descriptor as a ROS 2 .msg definition ("float64[7] q"). */
#include "logi.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const ros_type[] = {
    [ARD_I8] = "int8",     [ARD_U8] = "uint8",    [ARD_I16] = "int16", [ARD_U16] = "uint16",
    [ARD_I32] = "int32",   [ARD_U32] = "uint32",  [ARD_I64] = "int64", [ARD_U64] = "uint64",
    [ARD_F32] = "float32", [ARD_F64] = "float64",
};

/* ROS 2 field names: [a-z] then [a-z0-9] runs joined by single underscores. */
static bool ros_name_ok(const char *s)
{
    if (!islower((unsigned char)s[0]))
        return false;
    for (size_t i = 1; s[i]; i++) {
        char ch = s[i];
        if (ch == '_') {
            if (s[i + 1] == '\0' || s[i + 1] == '_')
                return false;
        } else if (!islower((unsigned char)ch) && !isdigit((unsigned char)ch)) {
            return false;
        }
    }
    return true;
}

int ardl_msgdef(const char *type, size_t size, struct ardc_buf *b)
{
    b->len = 0;
    char line[96];
    if (!type || !type[0]) {
        snprintf(line, sizeof line, "# opaque ardnet packet of %zu bytes\nuint8[%zu] data\n", size,
                 size);
        ardc_put(b, line, strlen(line));
        return b->oom ? ARD_ENOMEM : 0;
    }
    size_t n = 0;
    int rc = ard_type_parse(type, NULL, 0, &n, NULL);
    if (rc < 0)
        return rc;
    struct ard_field *f = calloc(n ? n : 1, sizeof *f);
    if (!f)
        return ardi_fail(ARD_ENOMEM, "out of memory");
    rc = ard_type_parse(type, f, n, &n, NULL);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        char name[24 + ARD_MAX_FIELD_NAME];
        if (f[i].name[0] && ros_name_ok(f[i].name))
            snprintf(name, sizeof name, "%s", f[i].name);
        else
            snprintf(name, sizeof name, "f%zu", i);
        /* An own name "fK" elsewhere could collide with a replaced one: ardnet only allows fK
         * as the name of field K, so a replaced name never meets it. */
        if (f[i].count == 1)
            snprintf(line, sizeof line, "%s %s\n", ros_type[f[i].kind], name);
        else
            snprintf(line, sizeof line, "%s[%u] %s\n", ros_type[f[i].kind], f[i].count, name);
        ardc_put(b, line, strlen(line));
    }
    free(f);
    if (rc == 0 && b->oom)
        rc = ardi_fail(ARD_ENOMEM, "out of memory");
    return rc;
}

/* CamelCase of a connection name: its letters and digits, each run after another character
 * starting upper case, "C" first when it would start with a digit (or be empty). */
static size_t camel(const char *conn, char *out, size_t len)
{
    size_t o = 0;
    bool up = true;
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
    return o;
}

void ardl_schema_name(const char *conn, char *name, size_t len)
{
    size_t o = (size_t)snprintf(name, len, "ardnet/msg/");
    if (o < len)
        camel(conn, name + o, len - o);
}

void ardl_ros2_msg_name(const char *conn, char *name, size_t len)
{
    camel(conn, name, len);
}

void ardl_ros2_type_name(const char *conn, char *name, size_t len)
{
    size_t o = (size_t)snprintf(name, len, "ardnet_msgs/msg/");
    if (o < len)
        camel(conn, name + o, len - o);
}

void ardl_ros2_dds_type_name(const char *conn, char *name, size_t len)
{
    size_t o = (size_t)snprintf(name, len, "ardnet_msgs::msg::dds_::");
    if (o < len)
        o += camel(conn, name + o, len - o);
    if (o + 1 < len) {
        name[o++] = '_';
        name[o] = '\0';
    }
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

int ardl_ros2_topic(const char *conn, char *topic, size_t len)
{
    size_t n = strlen(conn);
    if (n == 0 || n + 2 > len)
        return ardi_fail(ARD_EINVAL, "connection name '%s' is empty or too long for a topic", conn);
    for (size_t a = 0, b; a <= n; a = b + 1) {
        b = a;
        while (b < n && conn[b] != '.')
            b++;
        if (!ros_token_ok(conn + a, b - a))
            return ardi_fail(ARD_EINVAL,
                             "connection '%s' has no ROS 2 topic name: part '%.*s' is %s (a ROS 2 "
                             "name part is A-Z a-z 0-9 _ and starts with no digit); give the topic "
                             "yourself (ros2:/TOPIC)",
                             conn, (int)(b - a), conn + a,
                             b == a                            ? "empty"
                             : isdigit((unsigned char)conn[a]) ? "started by a digit"
                                                               : "made of other characters");
    }
    topic[0] = '/';
    for (size_t i = 0; i <= n; i++)
        topic[i + 1] = conn[i] == '.' ? '/' : conn[i];
    return 0;
}

int ardl_ros2_conn(const char *topic, char *conn, size_t len)
{
    size_t n = strlen(topic);
    if (n < 2 || topic[0] != '/')
        return ardi_fail(ARD_EINVAL, "ROS 2 topic '%s' does not start with '/' and a name", topic);
    if (n - 1 > ARD_MAX_NAME || n > len)
        return ardi_fail(ARD_EINVAL, "ROS 2 topic '%s' is longer than a connection name (%d)",
                         topic, ARD_MAX_NAME);
    for (size_t a = 1, b; a <= n; a = b + 1) {
        b = a;
        while (b < n && topic[b] != '/')
            b++;
        if (!ros_token_ok(topic + a, b - a))
            return ardi_fail(ARD_EINVAL,
                             "'%s' is not a ROS 2 topic name: part '%.*s' must be A-Z a-z 0-9 _, "
                             "not empty, and start with no digit",
                             topic, (int)(b - a), topic + a);
    }
    for (size_t i = 1; i <= n; i++)
        conn[i - 1] = topic[i] == '/' ? '.' : topic[i];
    return 0;
}

int ardl_ros2_dds_type(const char *rtype, char *dds, size_t len)
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
