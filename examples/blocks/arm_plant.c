/*
 * arm_plant - plant simulator: seven decoupled joints (inertia, viscous friction) driven by
 * the torques on "cmd", integrated at the block's rate; publishes positions and velocities
 * on "state". Without torques the joints coast to rest.
 */
#include "arm.h"

int main(int argc, char **argv)
{
    ard_port *cmd =
        arm_port("arm_plant", "cmd", ARD_IN, sizeof(struct arm_torque), ARM_TORQUE_TYPE);
    ard_port *state =
        arm_port("arm_plant", "state", ARD_OUT, sizeof(struct arm_joints), ARM_JOINTS_TYPE);
    double rate = arm_start("arm_plant", &argc, argv, 1000);
    const double inertia = 0.2, friction = 0.3;
    struct arm_joints s = {0};
    struct arm_torque u = {{0}};
    ard_period p;
    if (ard_period_init(&p, (int64_t)(1e9 / rate)) < 0)
        return 111;
    int64_t last = ard_now_ns();
    for (;;) {
        (void)!ard_tryrec(cmd, &u);
        int64_t now = ard_now_ns();
        double dt = (double)(now - last) / 1e9;
        last = now;
        if (dt > 0.01)
            dt = 0.01; /* after a stall: do not jump */
        for (int j = 0; j < ARM_JOINTS; j++) {
            /* semi-implicit Euler: stable for this stiff-ish loop at 1 kHz */
            s.qd[j] += dt * (u.tau[j] - friction * s.qd[j]) / inertia;
            s.q[j] += dt * s.qd[j];
        }
        if (ard_send(state, &s) < 0)
            return 111;
        ard_period_wait(&p);
    }
}
