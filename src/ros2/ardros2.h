/*
 * ardros2.h - the ROS 2 representation of a connection (DESIGN §11, docs/ros2.md#names): its
 * topic, its message and type names, its .msg text, its CDR bytes. One module, used by the
 * recorder (libardnet_log), `ard web`'s Foxglove protocol, `ard ros2-msgs` and ardnet's ros2:
 * endpoints, so that a connection has one outside name and one outside type in all of them.
 * A static library (libardros2, src/ros2/), never installed; its failures are recorded in
 * libardnet's thread-local detail (ardi_fail).
 *
 * names.c   topics, message names, type names, the rule that keeps two layouts apart
 * msgdef.c  an ardnet type descriptor as a ROS 2 .msg text
 * cdr.c     packets to and from little-endian CDR (XCDR1)
 */
#ifndef ARDROS2_H
#define ARDROS2_H

#include "ard_common.h"
#include "ardc_buf.h"
#include "ardnet.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- names.c ------------------------------------------------------------------------------ */

/* Room for a topic ("/" + the name), a message name (the CamelCase, at most ARD_MAX_NAME + 1
 * characters, and the clash suffix "H" + 8 hex digits), a ROS 2 or DDS type name (ours, or one
 * given as ardnet's --ros2-type). */
#define ARDR2_TOPIC_MAX (ARD_MAX_NAME + 2)
#define ARDR2_MSG_MAX (ARD_MAX_NAME + 12)
#define ARDR2_TYPE_MAX (ARD_MAX_NAME + 64)

/* The topic of a connection: "/" then the name with every '.' as '/' ("arm.state" ->
 * "/arm/state"). Connection names have no '/', so this is one to one and ardr2_topic_conn
 * undoes it (ARD_EINVAL naming the topic when it is no connection's). topic needs
 * ARDR2_TOPIC_MAX bytes, conn ARD_MAX_NAME + 1. */
ARDI_HIDDEN int ardr2_topic(const char *conn, char *topic, size_t len);
ARDI_HIDDEN int ardr2_topic_conn(const char *topic, char *conn, size_t len);
/* Whether ROS 2 accepts a topic: "/" then parts of A-Z a-z 0-9 _, none empty, none starting
 * with a digit. 0, or ARD_EINVAL with the detail naming the part (and, when conn is given,
 * that connection: its topic is not a ROS 2 name). */
ARDI_HIDDEN int ardr2_topic_check(const char *topic, const char *conn);

/* The CamelCase of a connection's name, its message name unless two layouts clash ("arm.state"
 * -> "ArmState"; letters and digits kept, each run after another character starting upper
 * case, "C" before a leading digit). */
ARDI_HIDDEN void ardr2_camel(const char *conn, char *msg, size_t len);
/* "ardnet_msgs/msg/<msg>" and "ardnet_msgs::msg::dds_::<msg>_". */
ARDI_HIDDEN void ardr2_type_name(const char *msg, char *type, size_t len);
ARDI_HIDDEN void ardr2_dds_type_name(const char *msg, char *type, size_t len);
/* The DDS type of a ROS 2 type given as "Name" (in ardnet_msgs) or "package/msg/Name":
 * "package::msg::dds_::Name_". 0 or ARD_EINVAL naming what is wrong. */
ARDI_HIDDEN int ardr2_dds_type(const char *rtype, char *dds, size_t len);

/* The layout hash: 64-bit FNV-1a of the .msg text (field types, counts and names), the same on
 * every host and in every run; as text, 16 lower-case hex digits (hex needs 17 bytes). */
ARDI_HIDDEN uint64_t ardr2_fnv1a(const void *p, size_t n);
ARDI_HIDDEN void ardr2_hash_hex(uint64_t hash, char *hex, size_t len);

/* The connections that one recording, one `ard web` server, one ardnet process or one
 * `ard ros2-msgs` package names, in the order met (the rule of docs/ros2.md#names): a
 * connection's message name is its CamelCase, unless a connection met before holds that name
 * with another .msg text: then it is the CamelCase, "H" and the first 8 hex digits of its
 * layout hash. */
struct ardr2_named {
    char conn[ARD_MAX_NAME + 1];
    char msg[ARDR2_MSG_MAX];
    uint64_t hash;
};
struct ardr2_names {
    struct ardr2_named *v;
    size_t n, cap;
};
/* Name connection conn (layout hash `hash`) in s: its message name into msg (ARDR2_MSG_MAX
 * bytes). Returns 0, or 1 when the CamelCase was taken by another layout (the name has the
 * suffix; *other, when given, is the connection holding the CamelCase, valid while s is), or
 * ARD_ENOMEM. A connection named again with the same hash gets the same name again (and 0).
 */
ARDI_HIDDEN int ardr2_names_add(struct ardr2_names *s, const char *conn, uint64_t hash, char *msg,
                                size_t len, const char **other);
/* The report of a clash (ardr2_names_add returned 1), the same words in every program:
 * "connections 'FIRST' and 'CONN' both have the ROS 2 message name <CamelCase> with different
 * fields: 'CONN' is ardnet_msgs/msg/<msg> (docs/ros2.md#names)"; when FIRST is CONN (a
 * connection re-created with other fields), says that. */
ARDI_HIDDEN void ardr2_clash_text(char *buf, size_t len, const char *first, const char *conn,
                                  const char *msg);
/* Forget conn (it disappeared: its name is free again). */
ARDI_HIDDEN void ardr2_names_drop(struct ardr2_names *s, const char *conn);
ARDI_HIDDEN void ardr2_names_free(struct ardr2_names *s);

/* ---- msgdef.c ----------------------------------------------------------------------------- */

/* The .msg text of a descriptor ("" or NULL: opaque of `size` bytes) into b (b->len reset).
 * Field names that ROS 2 does not accept ([a-z][a-z0-9_]*, no "__", no trailing "_") are
 * replaced by fN. Returns 0, ARD_ETYPE or ARD_ENOMEM. */
ARDI_HIDDEN int ardr2_msgdef(const char *type, size_t size, struct ardc_buf *b);

/* ---- cdr.c -------------------------------------------------------------------------------- */

#define ARDR2_CDR_HDR 4

/* A connection's layout for CDR: the fields, and the CDR body length (the packet up to the
 * end of its last field; the packet's own trailing padding is not part of CDR). */
struct ardr2_layout {
    size_t size; /* packet size */
    size_t body; /* CDR body bytes (without the 4-byte encapsulation header) */
    size_t nfields;
    struct ard_field *fields; /* NULL for opaque */
};

ARDI_HIDDEN int ardr2_layout_init(struct ardr2_layout *l, const char *type, size_t size);
ARDI_HIDDEN void ardr2_layout_free(struct ardr2_layout *l);
/* Encode: header + body, ARDR2_CDR_HDR + l->body bytes at out. */
ARDI_HIDDEN void ardr2_cdr_encode(const struct ardr2_layout *l, const void *packet, uint8_t *out);
/* Turn out[4 ..] holding a packet into CDR in place: the header, and swapped elements on a
 * big-endian host. */
ARDI_HIDDEN void ardr2_cdr_inplace(const struct ardr2_layout *l, uint8_t *out);
/* Decode len bytes of CDR into packet (l->size bytes, padding zeroed). Returns NULL or a
 * static text naming what is wrong. */
ARDI_HIDDEN const char *ardr2_cdr_decode(const struct ardr2_layout *l, const uint8_t *cdr,
                                         size_t len, void *packet);

#endif /* ARDROS2_H */
