/* test_names.c - the outside names of src/ros2 (ardros2.h, docs/ros2.md#names): connection <->
 * topic, reversible; the topics ROS 2 refuses, with the part named; the type names of DESIGN
 * §11; the rule that keeps two layouts with one CamelCase apart. */
#include "ardros2.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

static void topic_and_back(void **state)
{
    (void)state;
    static const char *const names[] = {"arm.state", "arm",   "Arm_1.cmd_vel",
                                        "a.b.c.d",   "_x.y_", "robot.arm.joint_states"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char topic[ARDR2_TOPIC_MAX], conn[ARD_MAX_NAME + 1];
        assert_int_equal(ardr2_topic(names[i], topic, sizeof topic), 0);
        assert_int_equal(topic[0], '/');
        assert_null(strchr(topic, '.'));
        assert_int_equal(ardr2_topic_check(topic, names[i]), 0);
        assert_int_equal(ardr2_topic_conn(topic, conn, sizeof conn), 0);
        assert_string_equal(conn, names[i]);
    }
    char topic[ARDR2_TOPIC_MAX];
    assert_int_equal(ardr2_topic("arm.state", topic, sizeof topic), 0);
    assert_string_equal(topic, "/arm/state");
}

static void forbidden(void **state)
{
    (void)state;
    /* Connections whose topic (the one mapping) ROS 2 does not take. */
    static const char *const conns[] = {"arm-1.state", "cam.0.image", ".arm", "arm.", "a..b"};
    for (size_t i = 0; i < sizeof conns / sizeof conns[0]; i++) {
        char topic[ARDR2_TOPIC_MAX];
        assert_int_equal(ardr2_topic(conns[i], topic, sizeof topic), 0);
        assert_int_equal(ardr2_topic_check(topic, conns[i]), ARD_EINVAL);
        assert_non_null(strstr(ard_errdetail(), "give the topic yourself"));
        assert_non_null(strstr(ard_errdetail(), conns[i]));
    }
    static const char *const topics[] = {"arm/state", "/",          "/arm/", "//arm",
                                         "/arm/0x",   "/arm.state", "/a-b",  ""};
    for (size_t i = 0; i < sizeof topics / sizeof topics[0]; i++)
        assert_int_equal(ardr2_topic_check(topics[i], NULL), ARD_EINVAL);
    assert_int_equal(ardr2_topic_check("/arm/0x", NULL), ARD_EINVAL);
    assert_non_null(strstr(ard_errdetail(), "part '0x'"));
    char longest[ARD_MAX_NAME + 3];
    memset(longest, 'a', sizeof longest - 1);
    longest[0] = '/';
    longest[sizeof longest - 1] = '\0'; /* one more than a connection name holds */
    assert_int_equal(ardr2_topic_check(longest, NULL), ARD_EINVAL);
    char conn[ARD_MAX_NAME + 1];
    assert_int_equal(ardr2_topic_conn(longest, conn, sizeof conn), ARD_EINVAL);
}

static void type_names(void **state)
{
    (void)state;
    char m[ARDR2_MSG_MAX], n[ARDR2_TYPE_MAX];
    ardr2_camel("arm.state", m, sizeof m);
    assert_string_equal(m, "ArmState");
    ardr2_type_name(m, n, sizeof n);
    assert_string_equal(n, "ardnet_msgs/msg/ArmState");
    ardr2_dds_type_name(m, n, sizeof n);
    assert_string_equal(n, "ardnet_msgs::msg::dds_::ArmState_");
    ardr2_camel("robot.arm_1.cmd-vel", m, sizeof m);
    assert_string_equal(m, "RobotArm1CmdVel");
    ardr2_camel("0.cam", m, sizeof m);
    assert_string_equal(m, "C0Cam");
    /* A type given by name (--ros2-type). */
    assert_int_equal(ardr2_dds_type("ArmState", n, sizeof n), 0);
    assert_string_equal(n, "ardnet_msgs::msg::dds_::ArmState_");
    assert_int_equal(ardr2_dds_type("geometry_msgs/msg/Point", n, sizeof n), 0);
    assert_string_equal(n, "geometry_msgs::msg::dds_::Point_");
    static const char *const bad[] = {"armState", "a/b/C",  "Geo/msg/P", "pkg/srv/X",  "",
                                      "pkg/msg/", "/msg/X", "Arm_State", "pkg/msg/X/Y"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(ardr2_dds_type(bad[i], n, sizeof n), ARD_EINVAL);
    /* FNV-1a of "a" (the published test vector): the hash does not depend on the host. */
    assert_true(ardr2_fnv1a("a", 1) == 0xaf63dc4c8601ec8cull);
    char hex[17];
    ardr2_hash_hex(0x00ab00cd00ef0012ull, hex, sizeof hex);
    assert_string_equal(hex, "00ab00cd00ef0012");
}

static uint64_t hash_of(const char *type, size_t size)
{
    struct ardc_buf def = {0};
    assert_int_equal(ardr2_msgdef(type, size, &def), 0);
    uint64_t h = ardr2_fnv1a(def.p, def.len);
    ardc_free(&def);
    return h;
}

/* The rule of docs/ros2.md#names: the first connection met keeps its CamelCase; a later one of
 * another layout gets "H" and the first 8 hex digits of its layout hash; one of the same layout
 * shares the name; the holder is named in the report. */
static void clash_rule(void **state)
{
    (void)state;
    uint64_t hxy = hash_of("x:f64 y:f64", 16), ha = hash_of("a:i32", 4),
             hq = hash_of("q:f32[3]", 12);
    assert_true(hxy != ha && ha != hq);
    struct ardr2_names s = {0};
    char m[ARDR2_MSG_MAX], want[ARDR2_MSG_MAX];
    const char *other = NULL;
    assert_int_equal(ardr2_names_add(&s, "s.pose", hxy, m, sizeof m, &other), 0);
    assert_string_equal(m, "SPose");
    assert_int_equal(ardr2_names_add(&s, "s_pose", ha, m, sizeof m, &other), 1);
    snprintf(want, sizeof want, "SPoseH%08llx", (unsigned long long)(ha >> 32));
    assert_string_equal(m, want);
    assert_string_equal(other, "s.pose");
    char why[512];
    ardr2_clash_text(why, sizeof why, other, "s_pose", m);
    assert_non_null(strstr(why, "'s.pose' and 's_pose'"));
    assert_non_null(strstr(why, want));
    /* The same layout as the holder: the same name, no clash. */
    assert_int_equal(ardr2_names_add(&s, "sPose", hxy, m, sizeof m, &other), 0);
    assert_string_equal(m, "SPose");
    /* Named again: the same name again. */
    assert_int_equal(ardr2_names_add(&s, "s_pose", ha, m, sizeof m, &other), 0);
    assert_string_equal(m, want);
    /* A third layout: its own suffix. */
    assert_int_equal(ardr2_names_add(&s, "S.Pose", hq, m, sizeof m, &other), 1);
    snprintf(want, sizeof want, "SPoseH%08llx", (unsigned long long)(hq >> 32));
    assert_string_equal(m, want);
    /* Another order, another set: the name depends on the order met, never on anything else. */
    struct ardr2_names t = {0};
    assert_int_equal(ardr2_names_add(&t, "s_pose", ha, m, sizeof m, &other), 0);
    assert_string_equal(m, "SPose");
    assert_int_equal(ardr2_names_add(&t, "s.pose", hxy, m, sizeof m, &other), 1);
    snprintf(want, sizeof want, "SPoseH%08llx", (unsigned long long)(hxy >> 32));
    assert_string_equal(m, want);
    /* The holder gone (a server's connection disappeared): the CamelCase is free again. */
    ardr2_names_drop(&t, "s_pose");
    ardr2_names_drop(&t, "s.pose");
    assert_int_equal(ardr2_names_add(&t, "s.pose", hxy, m, sizeof m, &other), 0);
    assert_string_equal(m, "SPose");
    /* The same connection back with other fields (re-created). */
    assert_int_equal(ardr2_names_add(&t, "s.pose", ha, m, sizeof m, &other), 1);
    assert_string_equal(other, "s.pose");
    ardr2_clash_text(why, sizeof why, other, "s.pose", m);
    assert_non_null(strstr(why, "came back with other fields"));
    ardr2_names_free(&s);
    ardr2_names_free(&t);
}

static void msg_text(void **state)
{
    (void)state;
    struct ardc_buf b = {0};
    assert_int_equal(ardr2_msgdef("q:f64[7] qd:f64[7]", 112, &b), 0);
    assert_string_equal((const char *)b.p, "float64[7] q\nfloat64[7] qd\n");
    assert_int_equal(ardr2_msgdef("Big:u8 i16 ok_1:u32", 8, &b), 0);
    assert_string_equal((const char *)b.p, "uint8 f0\nint16 f1\nuint32 ok_1\n");
    assert_int_equal(ardr2_msgdef("", 5, &b), 0);
    assert_string_equal((const char *)b.p, "# opaque ardnet packet of 5 bytes\nuint8[5] data\n");
    ardc_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(topic_and_back), cmocka_unit_test(forbidden), cmocka_unit_test(type_names),
        cmocka_unit_test(clash_rule),     cmocka_unit_test(msg_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
