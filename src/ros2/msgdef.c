/* msgdef.c - an ardnet type descriptor as a ROS 2 .msg text ("float64[7] q"): the one generator
 * of the recorder, the Foxglove protocol, ard ros2-msgs and ardnet's ros2: endpoints. */
#include "ardros2.h"

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

int ardr2_msgdef(const char *type, size_t size, struct ardc_buf *b)
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
