/*
 * arm_plant_block - the arm's plant simulator (examples/blocks/arm_plant.c) as a block plugin:
 * seven decoupled joints (inertia, viscous friction) driven by the torques on "cmd",
 * integrated with the block's own period (a fixed step: the same run gives the same
 * trajectory), positions and velocities on "state".
 */
#include "../blocks/arm.h"
#include "ardnet_block.h"

enum { P_CMD, P_STATE };
static const struct ard_block_port ports[] = {
    [P_CMD] = {"cmd", ARD_IN, sizeof(struct arm_torque), ARM_TORQUE_TYPE, 0},
    /* integrated in place from the previous state it holds: not ARD_PORT_WHOLE */
    [P_STATE] = {"state", ARD_OUT, sizeof(struct arm_joints), ARM_JOINTS_TYPE, 0},
};
static const struct ard_block_param params[] = {
    {"inertia", ARD_PARAM_F64, "0.2", "joint inertia [kg m^2]"},
    {"friction", ARD_PARAM_F64, "0.3", "viscous friction [Nm s/rad]"},
};

struct plant {
    double inertia, friction;
};

static int init(ard_block_ctx *ctx)
{
    struct plant *p = calloc(1, sizeof *p);
    if (p == NULL)
        return ard_block_fail(ctx, ARD_ENOMEM, "out of memory");
    ctx->state = p;
    if (ard_block_param_f64(ctx, "inertia", &p->inertia) < 0 ||
        ard_block_param_f64(ctx, "friction", &p->friction) < 0)
        return ard_block_fail(ctx, ARD_EINVAL, "parameters unreadable");
    if (!(p->inertia > 0))
        return ard_block_fail(ctx, ARD_EINVAL, "inertia must be > 0, not %g", p->inertia);
    return 0;
}

static int step(ard_block_ctx *ctx)
{
    const struct plant *p = ctx->state;
    static const struct arm_torque none;
    const struct arm_torque *u = ard_block_in(ctx, P_CMD);
    struct arm_joints *s = ard_block_out(ctx, P_STATE); /* keeps the previous state */
    double dt = ctx->period_ns > 0 ? (double)ctx->period_ns / 1e9 : 0.001;
    if (u == NULL)
        u = &none;
    for (int j = 0; j < ARM_JOINTS; j++) {
        s->qd[j] += dt * (u->tau[j] - p->friction * s->qd[j]) / p->inertia;
        s->q[j] += dt * s->qd[j];
    }
    return 0;
}

static void fini(ard_block_ctx *ctx)
{
    free(ctx->state);
}

static const struct ard_block_desc desc = {
    .api = ARD_BLOCK_API,
    .name = "arm_plant",
    .version = "1.0.0",
    .ports = ports,
    .nports = 2,
    .params = params,
    .nparams = 2,
    .init = init,
    .step = step,
    .close = fini,
};
ARD_BLOCK_EXPORT(desc)
