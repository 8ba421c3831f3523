/*
 * arm_traj - trajectory generator: a sine per joint (each joint its own frequency),
 * position and velocity, on port "ref".
 */
#include "arm.h"

#include <math.h>

int main(int argc, char **argv)
{
    ard_port *ref =
        arm_port("arm_traj", "ref", ARD_OUT, sizeof(struct arm_joints), ARM_JOINTS_TYPE);
    double rate = arm_start("arm_traj", &argc, argv, 200);
    ard_period p;
    if (ard_period_init(&p, (int64_t)(1e9 / rate)) < 0)
        return 111;
    int64_t t0 = ard_now_ns();
    for (;;) {
        double t = (double)(ard_now_ns() - t0) / 1e9;
        struct arm_joints r;
        for (int j = 0; j < ARM_JOINTS; j++) {
            double amp = 0.6 - 0.05 * j, w = 2 * M_PI * (0.2 + 0.05 * j);
            r.q[j] = amp * sin(w * t);
            r.qd[j] = amp * w * cos(w * t);
        }
        if (ard_send(ref, &r) < 0)
            return 111;
        ard_period_wait(&p);
    }
}
