/*
 * arm_ctrl_block - the arm's joint controller (examples/blocks/arm_ctrl.c) as a block plugin:
 * PD on the error between reference ("ref") and measured state ("state"), torques on "cmd";
 * zero torque until a state arrived. Runs in an ardrun group or alone:
 *     ardrun --block arm_ctrl_block.so --rate 1000 --ard ref=arm.ref --ard state=arm.state ...
 */
#include "../blocks/arm.h"
#include "ardnet_block.h"

enum { P_REF, P_STATE, P_CMD };
static const struct ard_block_port ports[] = {
    [P_REF] = {"ref", ARD_IN, sizeof(struct arm_joints), ARM_JOINTS_TYPE, 0},
    [P_STATE] = {"state", ARD_IN, sizeof(struct arm_joints), ARM_JOINTS_TYPE, 0},
    /* every step writes all seven torques: handed over without a copy (ARD_PORT_WHOLE) */
    [P_CMD] = {"cmd", ARD_OUT, sizeof(struct arm_torque), ARM_TORQUE_TYPE, ARD_PORT_WHOLE},
};
static const struct ard_block_param params[] = {
    {"kp", ARD_PARAM_F64, "100", "position gain [Nm/rad]"},
    {"kd", ARD_PARAM_F64, "9", "velocity gain [Nm s/rad]"},
};

struct ctrl {
    double kp, kd;
};

static int init(ard_block_ctx *ctx)
{
    struct ctrl *c = calloc(1, sizeof *c);
    if (c == NULL)
        return ard_block_fail(ctx, ARD_ENOMEM, "out of memory");
    ctx->state = c;
    if (ard_block_param_f64(ctx, "kp", &c->kp) < 0 || ard_block_param_f64(ctx, "kd", &c->kd) < 0)
        return ard_block_fail(ctx, ARD_EINVAL, "gains unreadable");
    if (c->kp < 0 || c->kd < 0)
        return ard_block_fail(ctx, ARD_EINVAL, "gains must be >= 0 (kp %g, kd %g)", c->kp, c->kd);
    return 0;
}

static int step(ard_block_ctx *ctx)
{
    const struct ctrl *c = ctx->state;
    static const struct arm_joints zero;
    const struct arm_joints *r = ard_block_in(ctx, P_REF), *s = ard_block_in(ctx, P_STATE);
    struct arm_torque *u = ard_block_out(ctx, P_CMD);
    if (r == NULL)
        r = &zero; /* no reference yet: hold zero */
    for (int j = 0; j < ARM_JOINTS; j++)
        u->tau[j] = s ? c->kp * (r->q[j] - s->q[j]) + c->kd * (r->qd[j] - s->qd[j]) : 0.0;
    return 0;
}

static void fini(ard_block_ctx *ctx)
{
    free(ctx->state);
}

static const struct ard_block_desc desc = {
    .api = ARD_BLOCK_API,
    .name = "arm_ctrl",
    .version = "1.0.0",
    .ports = ports,
    .nports = 3,
    .params = params,
    .nparams = 2,
    .init = init,
    .step = step,
    .close = fini,
};
ARD_BLOCK_EXPORT(desc)
