/*
 * TEMPLATE - an ardnet block plugin (written by `ardrun --new TEMPLATE`; edit freely).
 *
 * Build:  cc -shared -fPIC -O2 -o TEMPLATE.so TEMPLATE.c $(pkg-config --cflags ardnet)
 * Run in a group (YAML `plugin: TEMPLATE.so`) or alone:
 *         ardrun --block ./TEMPLATE.so --rate 1000 --ard in=some.input --ard out=some.output
 *
 * This one multiplies a vector of 7 doubles by a gain; replace ports, parameters and step.
 */
#include "ardnet_block.h"

#include <stdlib.h>

/* Port indices, in the order of the port table below. */
enum { P_IN, P_OUT };

/* name, direction, size, type, flags. Flags: ARD_PORT_WHOLE on an OUT port promises that
 * every step marking it (ard_block_out) writes all of its bytes; ardrun then hands it over
 * without copying it, and its buffer no longer keeps the previous packet. This step writes
 * all 7 values, so "out" could declare it; a block that updates only part of an output must
 * leave it 0. */
static const struct ard_block_port ports[] = {
    [P_IN] = {"in", ARD_IN, 7 * sizeof(double), "f64[7]", 0},
    [P_OUT] = {"out", ARD_OUT, 7 * sizeof(double), "f64[7]", 0},
};

static const struct ard_block_param params[] = {
    {"gain", ARD_PARAM_F64, "1.0", "factor applied to every element"},
};

struct state {
    double gain;
};

static int init(ard_block_ctx *ctx)
{
    struct state *s = calloc(1, sizeof *s);
    if (s == NULL)
        return ard_block_fail(ctx, ARD_ENOMEM, "out of memory");
    ctx->state = s;
    int rc = ard_block_param_f64(ctx, "gain", &s->gain);
    if (rc < 0)
        return ard_block_fail(ctx, rc, "parameter 'gain' unreadable");
    return 0;
}

/* Realtime: no allocation, no blocking call, no printing. */
static int step(ard_block_ctx *ctx)
{
    const struct state *s = ctx->state;
    const double *in = ard_block_in(ctx, P_IN);
    if (in == NULL)
        return 0; /* nothing received yet: send nothing */
    double *out = ard_block_out(ctx, P_OUT);
    for (int i = 0; i < 7; i++)
        out[i] = s->gain * in[i];
    return 0;
}

static void close_block(ard_block_ctx *ctx)
{
    free(ctx->state);
    ctx->state = NULL;
}

static const struct ard_block_desc desc = {
    .api = ARD_BLOCK_API,
    .name = "TEMPLATE",
    .version = "0.1.0",
    .ports = ports,
    .nports = sizeof ports / sizeof ports[0],
    .params = params,
    .nparams = sizeof params / sizeof params[0],
    .init = init,
    .step = step,
    .close = close_block,
};

ARD_BLOCK_EXPORT(desc)
