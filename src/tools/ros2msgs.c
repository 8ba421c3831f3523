/* ros2msgs.c - `ard ros2-msgs DIR [CONN...]`: the ROS 2 interface package ardnet_msgs for the
 * connections' types, so that a ROS 2 workspace builds the messages ardnet's ros2: endpoints
 * carry. The .msg text and the names are src/ros2's (ardros2.h), the recorder's and ardnet's. */
#include "ard.h"
#include "ardros2.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The words of `ard ros2-msgs`: the directory, then the connections (into argv). */
struct r2_args {
    const char *dir;
    char **conns;
    int nconns;
};

static int add_word(void *dest, char *word)
{
    struct r2_args *a = dest;
    if (!a->dir)
        a->dir = word;
    else
        a->conns[a->nconns++] = word;
    return 0;
}

static const struct ardc_opt opts[] = {{0}};
const struct ardc_optset ardt_ros2msgs_spec = {
    .see = "ard help ros2-msgs",
    .head =
        "usage: ard ros2-msgs DIR [CONN...]\n"
        "  Write the ROS 2 interface package ardnet_msgs into DIR (made with its parents):\n"
        "  package.xml (format 3), CMakeLists.txt (rosidl_generate_interfaces) and msg/<Name>.msg\n"
        "  for the types of the connections named, or of every connection of the domain. <Name>\n"
        "  is the connection's name in CamelCase (arm.state: ArmState), the ROS 2 type\n"
        "  ardnet_msgs/msg/<Name> that ardnet's ros2: endpoints publish. A connection whose "
        "<Name>\n"
        "  an earlier one has with other fields gets <Name>H<8 hex digits of its layout hash>\n"
        "  (reported; docs/ros2.md#names). Files of other messages in DIR/msg are left.\n"
        "exit codes: 0 ok, 1 no such connection, 3 connection damaged or not accessible,\n"
        "            100 usage, 111 cannot write\n",
    .opts = opts,
    .arg = add_word};

struct msg {
    char conn[ARD_MAX_NAME + 1];
    char name[ARDR2_MSG_MAX];
    struct ardc_buf def;
};

struct set {
    struct msg *m;
    size_t n, cap;
    int rc;
    struct ardr2_names names;
};

static int add(const char *conn, void *arg)
{
    struct set *s = arg;
    struct ard_conn_stat st;
    int rc = ard_conn_stat(ardt_g.domain, conn, &st);
    if (rc < 0) {
        s->rc = rc;
        return 1;
    }
    char norm[ARD_MAX_TYPE + 1] = "";
    if (st.type[0] && ard_type_normalize(st.type, norm, sizeof norm) < 0) {
        s->rc = ardt_fail(ARD_ESTALE, "connection '%s': %s", conn, ard_errdetail());
        return 1;
    }
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        struct msg *m = realloc(s->m, cap * sizeof *m);
        if (!m) {
            s->rc = ardi_fail(ARD_ENOMEM, "out of memory");
            return 1;
        }
        s->m = m;
        s->cap = cap;
    }
    struct msg *m = &s->m[s->n];
    memset(m, 0, sizeof *m);
    snprintf(m->conn, sizeof m->conn, "%s", conn);
    if (ardr2_msgdef(norm, st.size, &m->def) < 0 || m->def.oom) {
        ardc_free(&m->def);
        s->rc = ardt_fail(ARD_ESYS, "connection '%s': %s", conn, ard_errdetail());
        return 1;
    }
    const char *other = NULL;
    rc = ardr2_names_add(&s->names, conn, ardr2_fnv1a(m->def.p, m->def.len), m->name,
                         sizeof m->name, &other);
    if (rc < 0) {
        ardc_free(&m->def);
        s->rc = ardi_fail(ARD_ENOMEM, "out of memory");
        return 1;
    }
    if (rc == 1) {
        char why[3 * ARD_MAX_NAME + 200];
        ardr2_clash_text(why, sizeof why, other, conn, m->name);
        ardt_err(0, "%s", why);
    }
    /* One file per name: the same fields under one name are one message. */
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->m[i].name, m->name) == 0) {
            ardc_free(&m->def);
            return 0;
        }
    s->n++;
    return 0;
}

/* mkdir -p: dir and every missing parent. */
static int mkdir_p(const char *dir)
{
    char p[4096];
    snprintf(p, sizeof p, "%s", dir);
    for (char *c = p + 1;; c++) {
        bool end = *c == '\0';
        if (*c != '/' && !end)
            continue;
        *c = '\0';
        if (mkdir(p, 0755) < 0 && errno != EEXIST)
            return -1;
        if (end)
            break;
        *c = '/';
    }
    struct stat sb;
    if (stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode))
        return 0;
    errno = ENOTDIR;
    return -1;
}

/* Write path from text (through path.tmp and a rename: never half a file). */
static int put_file(const char *path, const char *text, size_t len)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return ardi_fail(ARD_ESYS, "cannot write %s: %s", tmp, strerror(errno));
    bool ok = fwrite(text, 1, len, f) == len;
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, path) != 0) {
        int e = errno;
        remove(tmp);
        return ardi_fail(ARD_ESYS, "cannot write %s: %s", path, strerror(e));
    }
    return 0;
}

static int write_package(const char *dir, const struct set *s)
{
    char path[4096];
    if (strlen(dir) > 3000)
        return ardi_fail(ARD_EOPTION, "directory name too long");
    snprintf(path, sizeof path, "%s/msg", dir);
    if (mkdir_p(dir) < 0 || mkdir_p(path) < 0)
        return ardi_fail(ARD_ESYS, "cannot make %s: %s", path, strerror(errno));
    int rc = 0;
    for (size_t i = 0; i < s->n && rc == 0; i++) {
        snprintf(path, sizeof path, "%s/msg/%s.msg", dir, s->m[i].name);
        rc = put_file(path, (const char *)s->m[i].def.p, s->m[i].def.len);
    }
    if (rc)
        return rc;

    struct ardc_buf b = {0};
    char line[256];
    snprintf(line, sizeof line,
             "<?xml version=\"1.0\"?>\n"
             "<package format=\"3\">\n"
             "  <name>ardnet_msgs</name>\n"
             "  <version>%d.%d.%d</version>\n",
             ARD_VERSION_MAJOR, ARD_VERSION_MINOR, ARD_VERSION_PATCH);
    ardc_put(&b, line, strlen(line));
    static const char rest[] =
        "  <description>Messages of ardnet connections, as ardnet's ros2: endpoints publish "
        "them (written by ard ros2-msgs)</description>\n"
        "  <maintainer email=\"nobody@localhost\">ardnet</maintainer>\n"
        "  <license>the license of ardnet</license>\n"
        "  <buildtool_depend>ament_cmake</buildtool_depend>\n"
        "  <buildtool_depend>rosidl_default_generators</buildtool_depend>\n"
        "  <exec_depend>rosidl_default_runtime</exec_depend>\n"
        "  <member_of_group>rosidl_interface_packages</member_of_group>\n"
        "  <export>\n"
        "    <build_type>ament_cmake</build_type>\n"
        "  </export>\n"
        "</package>\n";
    ardc_put(&b, rest, sizeof rest - 1);
    snprintf(path, sizeof path, "%s/package.xml", dir);
    rc = b.oom ? ardi_fail(ARD_ENOMEM, "out of memory") : put_file(path, (const char *)b.p, b.len);

    b.len = 0;
    static const char head[] = "# Written by ard ros2-msgs: the messages of ardnet connections.\n"
                               "cmake_minimum_required(VERSION 3.8)\n"
                               "project(ardnet_msgs)\n"
                               "find_package(ament_cmake REQUIRED)\n"
                               "find_package(rosidl_default_generators REQUIRED)\n"
                               "rosidl_generate_interfaces(${PROJECT_NAME}\n";
    ardc_put(&b, head, sizeof head - 1);
    for (size_t i = 0; i < s->n; i++) {
        snprintf(line, sizeof line, "  \"msg/%s.msg\"\n", s->m[i].name);
        ardc_put(&b, line, strlen(line));
    }
    static const char tail[] = ")\n"
                               "ament_export_dependencies(rosidl_default_runtime)\n"
                               "ament_package()\n";
    ardc_put(&b, tail, sizeof tail - 1);
    snprintf(path, sizeof path, "%s/CMakeLists.txt", dir);
    if (rc == 0)
        rc = b.oom ? ardi_fail(ARD_ENOMEM, "out of memory")
                   : put_file(path, (const char *)b.p, b.len);
    ardc_free(&b);
    return rc;
}

int cmd_ros2msgs(int argc, char **argv)
{
    struct r2_args a = {.conns = calloc((size_t)argc, sizeof(char *))};
    if (!a.conns)
        return ardt_err(ARDT_SYS, "out of memory");
    int rc = ardt_opts(&ardt_ros2msgs_spec, argc, argv, &a);
    const char *dir = a.dir;
    if (rc || !dir || !dir[0]) {
        free(a.conns);
        return rc ? ardt_liberr(rc)
                  : ardt_err(ARDT_USAGE, "no directory given (see 'ard help ros2-msgs')");
    }
    struct set s = {0};
    if (a.nconns > 0) {
        for (int i = 0; i < a.nconns && s.rc == 0; i++)
            add(a.conns[i], &s);
    } else {
        rc = ard_conn_list(ardt_g.domain, add, &s);
        if (rc < 0 && s.rc == 0)
            s.rc = ardt_liberr(rc);
        if (rc == 0 && s.rc == 0)
            s.rc = ardt_err(ARDT_NOENT, "domain '%s' has no connection", ardt_g.domain);
    }
    if (s.rc == 0)
        s.rc = write_package(dir, &s);
    if (s.rc == 0)
        for (size_t i = 0; i < s.n; i++)
            printf("%s/msg/%s.msg\n", dir, s.m[i].name);
    for (size_t i = 0; i < s.n; i++)
        ardc_free(&s.m[i].def);
    free(s.m);
    free(a.conns);
    ardr2_names_free(&s.names);
    return s.rc;
}
