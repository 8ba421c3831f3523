/*
 * arm_monitor - prints a compact line a few times a second: time, joint positions in
 * degrees, the largest tracking error, and how many state packets arrived (and were
 * skipped) since the last line.
 */
#include "arm.h"

#include <math.h>

int main(int argc, char **argv)
{
    ard_port *ref =
        arm_port("arm_monitor", "ref", ARD_IN, sizeof(struct arm_joints), ARM_JOINTS_TYPE);
    ard_port *state =
        arm_port("arm_monitor", "state", ARD_IN, sizeof(struct arm_joints), ARM_JOINTS_TYPE);
    double rate = arm_start("arm_monitor", &argc, argv, 4);
    struct arm_joints r = {0}, s = {0};
    uint64_t last_seq = 0;
    ard_period p;
    if (ard_period_init(&p, (int64_t)(1e9 / rate)) < 0)
        return 111;
    int64_t t0 = ard_now_ns();
    for (;;) {
        ard_period_wait(&p);
        int rr = ard_tryrec(ref, &r), rs = ard_tryrec(state, &s);
        double t = (double)(ard_now_ns() - t0) / 1e9;
        if (rs < 0 || rr < 0) {
            printf("t=%7.2fs  waiting for %s\n", t, rs < 0 ? "state" : "reference");
            fflush(stdout);
            continue;
        }
        struct ard_info info = ard_port_info(state);
        double err = 0;
        printf("t=%7.2fs  q[deg]", t);
        for (int j = 0; j < ARM_JOINTS; j++) {
            printf(" %6.1f", s.q[j] * 180 / M_PI);
            err = fmax(err, fabs(r.q[j] - s.q[j]));
        }
        printf("  max|err| %5.2f deg  state packets %llu\n", err * 180 / M_PI,
               (unsigned long long)(info.seq - last_seq));
        last_seq = info.seq;
        fflush(stdout);
    }
}
