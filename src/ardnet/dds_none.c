/* dds_none.c - ardnet built without ROS 2 (ARD_ROS2 off or Cyclone DDS not found): a ros2:
 * endpoint is refused when it is parsed (endpoint.c), so none of these is ever reached with
 * one. */
#include "ard_common.h"
#include "ardn.h"

const bool ardn_have_ros2 = false;

int ardn_ros2_check_topic(const char *topic)
{
    (void)topic;
    return ardi_fail(ARD_EINVAL, "ros2: endpoints not built (configure with cyclonedds-dev)");
}

int ardn_ros2_type_parse(const char *val, char *out, size_t len)
{
    (void)val;
    (void)out;
    (void)len;
    return ardi_fail(ARD_EINVAL, "ros2: endpoints not built (configure with cyclonedds-dev)");
}

int ardn_qos_parse(struct ardn_route *r, const char *val)
{
    (void)r;
    (void)val;
    return ardi_fail(ARD_EINVAL, "ros2: endpoints not built (configure with cyclonedds-dev)");
}

int ardn_ros2_node_option(struct ardn_global *g, const char *val)
{
    (void)g;
    (void)val;
    return ardi_fail(ARD_EINVAL, "ros2: endpoints not built (configure with cyclonedds-dev)");
}

int ardn_dds_open(struct ardn_plan *p)
{
    (void)p;
    return 0;
}

int ardn_dds_start(struct ardn_plan *p)
{
    (void)p;
    return 0;
}

void ardn_dds_join(struct ardn_plan *p)
{
    (void)p;
}

void ardn_dds_close(struct ardn_plan *p)
{
    (void)p;
}

int ardn_dds_write(struct ardn_route *r, struct ardn_ep *ep, const void *packet,
                   const struct ardw_hdr *h)
{
    (void)r;
    (void)ep;
    (void)packet;
    (void)h;
    return -1;
}
