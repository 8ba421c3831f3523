/*
 * arm.h - packets of the simulated 7-joint arm, shared by the example blocks.
 * Each packet has a type descriptor, so tools can print it and ardnet can carry it across
 * hosts of any byte order.
 */
#ifndef ARM_H
#define ARM_H

#include "ardnet.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ARM_JOINTS 7

/* Joint positions [rad] and velocities [rad/s]: trajectory reference and measured state. */
struct arm_joints {
    double q[ARM_JOINTS];
    double qd[ARM_JOINTS];
};
#define ARM_JOINTS_TYPE "q:f64[7] qd:f64[7]"

/* Joint torques [Nm] from the controller to the plant. */
struct arm_torque {
    double tau[ARM_JOINTS];
};
#define ARM_TORQUE_TYPE "tau:f64[7]"

/* Common block start: declare ports first, then this; returns the loop rate in Hz from
 * "--rate HZ" (the block's own option, after ard_init removed the --ard-* ones). */
static inline double arm_start(const char *block, int *argc, char **argv, double rate)
{
    int rc = ard_init(argc, argv);
    if (rc < 0) {
        fprintf(stderr, "%s: %s\n", block, ard_errdetail());
        exit(111);
    }
    for (int i = 1; i < *argc; i++) {
        if (!strcmp(argv[i], "--rate") && i + 1 < *argc) {
            rate = atof(argv[++i]);
        } else {
            fprintf(stderr, "%s: unknown argument '%s' (usage: %s [--rate HZ] [--ard ...])\n",
                    block, argv[i], block);
            exit(100);
        }
    }
    if (!(rate > 0 && rate <= 100000)) {
        fprintf(stderr, "%s: --rate must be in (0, 100000] Hz\n", block);
        exit(100);
    }
    return rate;
}

static inline ard_port *arm_port(const char *block, const char *name, enum ard_dir dir, size_t size,
                                 const char *type)
{
    ard_port *p = ard_create(name, dir, size, type);
    if (!p) {
        fprintf(stderr, "%s: %s\n", block, ard_errdetail());
        exit(111);
    }
    return p;
}

#endif /* ARM_H */
