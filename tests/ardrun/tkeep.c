/*
 * tkeep - test block for the in-place hand-off: it counts on its own previous output and
 * writes part of its packet only once, so it sees whether its OUT buffer kept its contents
 * between steps (ardnet_block.h), and records what it read:
 *   out.k    = previous out.k + 1 (the buffer's own contents, never re-read from anywhere)
 *   out.x[0] = in.k as seen this step (-1: nothing received yet)
 *   out.x[1] = 42, written in the first step only
 *   out.x[2] = ard_block_is_new of "in" this step
 */
#include "tplugins.h"

enum { P_IN, P_OUT };
static const struct ard_block_port ports[] = {
    [P_IN] = {"in", ARD_IN, sizeof(struct tpkt), TPKT_TYPE},
    [P_OUT] = {"out", ARD_OUT, sizeof(struct tpkt), TPKT_TYPE},
};

static int init(ard_block_ctx *ctx)
{
    (void)ctx;
    return 0;
}

static int step(ard_block_ctx *ctx)
{
    const struct tpkt *in = ard_block_in(ctx, P_IN);
    struct tpkt *o = ard_block_out(ctx, P_OUT);
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
    .init = init,
    .step = step,
    .close = fini,
};
ARD_BLOCK_EXPORT(desc)
