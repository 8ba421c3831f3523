/*
 * tkeep - test block for the in-place hand-off: it counts on its own previous output and
 * writes part of its packet only once, so it sees whether its OUT buffer kept its contents
 * between steps (ardnet_block.h), and records what it read:
 *   out.k    = previous out.k + 1 (the buffer's own contents, never re-read from anywhere)
 *   out.x[0] = in.k as seen this step (-1: nothing received yet)
 *   out.x[1] = 42, written in the first step only
 *   out.x[2] = ard_block_is_new of "in" this step
 * With fail_at = N it writes nonsense into its packet in its N-th step and fails it, so that
 * a test sees whether readers get a failed step's output (they must not).
 */
#include "tplugins.h"

enum { P_IN, P_OUT };
static const struct ard_block_port ports[] = {
    [P_IN] = {.name = "in", .dir = ARD_IN, .size = sizeof(struct tpkt), .type = TPKT_TYPE},
    [P_OUT] = {.name = "out", .dir = ARD_OUT, .size = sizeof(struct tpkt), .type = TPKT_TYPE},
};

static const struct ard_block_param params[] = {
    {"fail_at", ARD_PARAM_I64, "-1", "write nonsense and fail in this step (1 = the first)"},
};

static int init(ard_block_ctx *ctx)
{
    int64_t fail_at;
    if (ard_block_param_i64(ctx, "fail_at", &fail_at) < 0)
        return ard_block_fail(ctx, ARD_EINVAL, "parameter 'fail_at'");
    ctx->state = (void *)(intptr_t)fail_at; /* a number, not memory: nothing to free */
    return 0;
}

static int step(ard_block_ctx *ctx)
{
    const struct tpkt *in = ard_block_in(ctx, P_IN);
    struct tpkt *o = ard_block_out(ctx, P_OUT);
    if ((int64_t)(intptr_t)ctx->state == (int64_t)ctx->steps + 1) {
        o->k = 1000000;
        o->x[0] = -7;
        return ard_block_fail(ctx, ARD_EINVAL, "step %llu: told to fail here",
                              (unsigned long long)ctx->steps + 1);
    }
    if (ctx->steps == 0)
        o->x[1] = 42;
    o->k += 1;
    o->x[0] = in ? (double)in->k : -1;
    o->x[2] = ard_block_is_new(ctx, P_IN);
    return 0;
}

static void fini(ard_block_ctx *ctx)
{
    (void)ctx;
}

static const struct ard_block_desc desc = {
    .api = ARD_BLOCK_API,
    .name = "tkeep",
    .version = "1",
    .ports = ports,
    .nports = 2,
    .params = params,
    .nparams = 1,
    .init = init,
    .step = step,
    .close = fini,
};
ARD_BLOCK_EXPORT(desc)
