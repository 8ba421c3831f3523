/* test_names.c - the ROS 2 name mapping of src/log/msgdef.c: connection <-> topic, reversible
 * where both are defined, every name ROS 2 forbids refused with the part named, and the type
 * names of DESIGN §11. */
#include "logi.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

static void topic_and_back(void **state)
{
    (void)state;
    static const char *const names[] = {"arm.state", "arm",   "Arm_1.cmd_vel",
                                        "a.b.c.d",   "_x.y_", "robot.arm.joint_states"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char topic[ARD_MAX_NAME + 2], conn[ARD_MAX_NAME + 1];
        assert_int_equal(ardl_ros2_topic(names[i], topic, sizeof topic), 0);
        assert_int_equal(topic[0], '/');
        assert_null(strchr(topic, '.'));
        assert_int_equal(ardl_ros2_conn(topic, conn, sizeof conn), 0);
        assert_string_equal(conn, names[i]);
    }
    char topic[ARD_MAX_NAME + 2];
    assert_int_equal(ardl_ros2_topic("arm.state", topic, sizeof topic), 0);
    assert_string_equal(topic, "/arm/state");
}

static void forbidden(void **state)
{
    (void)state;
    static const char *const conns[] = {"arm-1.state", "cam.0.image", ".arm", "arm.", "a..b"};
    for (size_t i = 0; i < sizeof conns / sizeof conns[0]; i++) {
        char topic[ARD_MAX_NAME + 2];
        assert_int_equal(ardl_ros2_topic(conns[i], topic, sizeof topic), ARD_EINVAL);
        assert_non_null(strstr(ard_errdetail(), "give the topic yourself"));
    }
    static const char *const topics[] = {"arm/state", "/",          "/arm/", "//arm",
                                         "/arm/0x",   "/arm.state", "/a-b",  ""};
    for (size_t i = 0; i < sizeof topics / sizeof topics[0]; i++) {
        char conn[ARD_MAX_NAME + 1];
        assert_int_equal(ardl_ros2_conn(topics[i], conn, sizeof conn), ARD_EINVAL);
    }
    char conn[ARD_MAX_NAME + 1];
    assert_int_equal(ardl_ros2_conn("/arm/0x", conn, sizeof conn), ARD_EINVAL);
    assert_non_null(strstr(ard_errdetail(), "part '0x'"));
    char longest[ARD_MAX_NAME + 3];
    memset(longest, 'a', sizeof longest - 1);
    longest[0] = '/';
    longest[sizeof longest - 1] = '\0'; /* one more than a connection name holds */
    assert_int_equal(ardl_ros2_conn(longest, conn, sizeof conn), ARD_EINVAL);
}

static void type_names(void **state)
{
    (void)state;
    char n[128];
    ardl_ros2_type_name("arm.state", n, sizeof n);
    assert_string_equal(n, "ardnet_msgs/msg/ArmState");
    ardl_ros2_dds_type_name("arm.state", n, sizeof n);
    assert_string_equal(n, "ardnet_msgs::msg::dds_::ArmState_");
    ardl_ros2_msg_name("robot.arm_1.cmd-vel", n, sizeof n);
    assert_string_equal(n, "RobotArm1CmdVel");
    ardl_ros2_msg_name("0.cam", n, sizeof n);
    assert_string_equal(n, "C0Cam");
    /* A type given by name (--ros2-type). */
    assert_int_equal(ardl_ros2_dds_type("ArmState", n, sizeof n), 0);
    assert_string_equal(n, "ardnet_msgs::msg::dds_::ArmState_");
    assert_int_equal(ardl_ros2_dds_type("geometry_msgs/msg/Point", n, sizeof n), 0);
    assert_string_equal(n, "geometry_msgs::msg::dds_::Point_");
    static const char *const bad[] = {"armState", "a/b/C",  "Geo/msg/P", "pkg/srv/X",  "",
                                      "pkg/msg/", "/msg/X", "Arm_State", "pkg/msg/X/Y"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(ardl_ros2_dds_type(bad[i], n, sizeof n), ARD_EINVAL);
    /* The recorder's schema name is the same CamelCase (unchanged by the ROS 2 names). */
    ardl_schema_name("arm.state", n, sizeof n);
    assert_string_equal(n, "ardnet/msg/ArmState");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(topic_and_back),
        cmocka_unit_test(forbidden),
        cmocka_unit_test(type_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
