/* dds_security.h - the SROS2 enclave of ros2: endpoints (dds_security.c), for dds.c only. */
#ifndef ARDN_DDS_SECURITY_H
#define ARDN_DDS_SECURITY_H

#include <dds/dds.h>

#include <limits.h>
#include <stdbool.h>

#define ARDN_ENCLAVE_MAX 256

struct ardn_security {
    bool on;                        /* join the domain with the enclave's files */
    char enclave[ARDN_ENCLAVE_MAX]; /* ROS_SECURITY_ENCLAVE_OVERRIDE, else "/" */
    char dir[PATH_MAX];             /* the enclave's directory (when on) */
};

/* Read ROS_SECURITY_ENABLE, _STRATEGY, _KEYSTORE and _ENCLAVE_OVERRIDE into *s: the enclave
 * always; with security enabled, its directory, every file of it checked readable. A file or
 * directory missing: under Enforce, ARD_EINVAL naming it; under Permissive, a warning on stderr
 * and s->on false. A malformed variable: ARD_EINVAL. */
int ardn_security_read(struct ardn_security *s);

/* The participant QoS properties for Cyclone's security plugins and the enclave's files. */
void ardn_security_qos(const struct ardn_security *s, dds_qos_t *q);

#endif
