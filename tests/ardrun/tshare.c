/*
 * tshare - test block for how instances share a loaded plugin: it counts its inits in a static
 * variable, which is shared by every instance that uses the same loaded copy of this file.
 *   out.k    = steps, counting from 1
 *   out.x[0] = the count when this instance's init ran (its number among the copy's users)
 *   out.x[1] = the count now (how many instances have used this copy)
 */
#include "tplugins.h"

static uint64_t inits; /* per loaded copy: what the test looks at */

static const struct ard_block_port ports[] = {
    {.name = "out", .dir = ARD_OUT, .size = sizeof(struct tpkt), .type = TPKT_TYPE},
};

static int init(ard_block_ctx *ctx)
{
    ctx->state = (void *)(uintptr_t)++inits; /* a number, not memory: nothing to free */
    return 0;
}

static int step(ard_block_ctx *ctx)
{
    struct tpkt *o = ard_block_out(ctx, 0);
    o->k = ctx->steps + 1;
    o->x[0] = (double)(uintptr_t)ctx->state;
    o->x[1] = (double)inits;
    return 0;
}

static void fini(ard_block_ctx *ctx)
{
    (void)ctx;
}

static const struct ard_block_desc desc = {
    .api = ARD_BLOCK_API,
    .name = "tshare",
    .version = "1",
    .ports = ports,
    .nports = 1,
    .init = init,
    .step = step,
    .close = fini,
};
ARD_BLOCK_EXPORT(desc)
