/*
 * arm_ctrl - joint controller: PD on the error between reference ("ref") and measured state
 * ("state"), torques on "cmd". Runs at its own rate on the newest packets it has; holds the
 * last reference if the trajectory generator pauses, and sends zero torque until it has a
 * state (a controller must not act on nothing).
 */
#include "arm.h"

int main(int argc, char **argv)
{
    ard_port *ref = arm_port("arm_ctrl", "ref", ARD_IN, sizeof(struct arm_joints), ARM_JOINTS_TYPE);
    ard_port *state =
        arm_port("arm_ctrl", "state", ARD_IN, sizeof(struct arm_joints), ARM_JOINTS_TYPE);
    ard_port *cmd =
        arm_port("arm_ctrl", "cmd", ARD_OUT, sizeof(struct arm_torque), ARM_TORQUE_TYPE);
    double rate = arm_start("arm_ctrl", &argc, argv, 1000);
    const double kp = 100.0, kd = 9.0; /* about critically damped for 0.2 kg m^2 */
    struct arm_joints r = {0}, s = {0};
    bool have_state = false;
    ard_period p;
    if (ard_period_init(&p, (int64_t)(1e9 / rate)) < 0)
        return 111;
    for (;;) {
        (void)!ard_tryrec(ref, &r); /* ARD_ENODATA: keep the zero reference */
        int rc = ard_tryrec(state, &s);
        have_state = have_state || rc >= 0;
        struct arm_torque u = {{0}};
        if (have_state)
            for (int j = 0; j < ARM_JOINTS; j++)
                u.tau[j] = kp * (r.q[j] - s.q[j]) + kd * (r.qd[j] - s.qd[j]);
        if (ard_send(cmd, &u) < 0)
            return 111;
        ard_period_wait(&p);
    }
}
