/*
 * relay - the benchmark's block: a small computation on a 1 KiB packet (127 doubles scaled
 * and offset), passed from "in" to "out". Field 0 carries the time of the chain's first tick
 * (the block with first=true writes its tick time there, the others copy it).
 *
 * Its step writes every byte of its output (t0 and the 127 values: 8 + 1016 = 1024 bytes, no
 * padding) from its input alone, so "out" is declared ARD_PORT_WHOLE; built with
 * RELAY_FLAGS=0 (relay_partial.so) it declares nothing, for the benchmark's comparison.
 */
#include "ardnet_block.h"

#include <string.h>

#ifndef RELAY_FLAGS
#define RELAY_FLAGS ARD_PORT_WHOLE
#endif

struct relay_pkt {
    int64_t t0;
    double x[127];
};

enum { P_IN, P_OUT };
static const struct ard_block_port ports[] = {
    [P_IN] = {"in", ARD_IN, sizeof(struct relay_pkt), "i64 f64[127]", 0},
    [P_OUT] = {"out", ARD_OUT, sizeof(struct relay_pkt), "i64 f64[127]", RELAY_FLAGS},
};
_Static_assert(sizeof(struct relay_pkt) == 1024, "the packet is written whole: no padding");
static const struct ard_block_param params[] = {
    {"first", ARD_PARAM_BOOL, "false", "the chain's first block: stamp the tick time"},
};

static int init(ard_block_ctx *ctx)
{
    static int yes = 1, no = 0;
    int first = 0;
    if (ard_block_param_bool(ctx, "first", &first) < 0)
        return ard_block_fail(ctx, ARD_EINVAL, "parameter 'first'");
    ctx->state = first ? &yes : &no;
    return 0;
}

static int step(ard_block_ctx *ctx)
{
    static const struct relay_pkt zero;
    const struct relay_pkt *in = ard_block_in(ctx, P_IN);
    struct relay_pkt *out = ard_block_out(ctx, P_OUT);
    if (in == NULL)
        in = &zero;
    out->t0 = *(const int *)ctx->state ? ctx->now_ns : in->t0;
    for (int i = 0; i < 127; i++)
        out->x[i] = 0.999 * in->x[i] + 0.001 * (double)i;
    return 0;
}

static void fini(ard_block_ctx *ctx)
{
    (void)ctx;
}

static const struct ard_block_desc desc = {
    .api = ARD_BLOCK_API,
    .name = "relay",
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
