/*
 * tsrc - test source: sends packet k (k = 0, 1, ...) with x[i] = scale * sin(0.01 k (i+1)).
 * With lockstep=true it sends k+1 only once "ack" says packet k arrived at the end of the
 * chain, so the same chain gives the same packets in a group and as processes.
 */
#include "tplugins.h"

#include <math.h>
#include <stdlib.h>

enum { P_OUT, P_ACK };
static const struct ard_block_port ports[] = {
    [P_OUT] = {.name = "out", .dir = ARD_OUT, .size = sizeof(struct tpkt), .type = TPKT_TYPE},
    [P_ACK] = {.name = "ack", .dir = ARD_IN, .size = sizeof(uint64_t), .type = "u64"},
};
static const struct ard_block_param params[] = {
    {"scale", ARD_PARAM_F64, "1.0", "amplitude"},
    {"lockstep", ARD_PARAM_BOOL, "false", "send the next packet only when acked"},
    {"count", ARD_PARAM_I64, "0", "stop sending after this many packets (0: never)"},
};

struct st {
    double scale;
    int lockstep;
    int64_t count;
    uint64_t next;
};

static int init(ard_block_ctx *ctx)
{
    struct st *s = calloc(1, sizeof *s);
    if (!s)
        return ard_block_fail(ctx, ARD_ENOMEM, "out of memory");
    ctx->state = s;
    if (ard_block_param_f64(ctx, "scale", &s->scale) < 0 ||
        ard_block_param_bool(ctx, "lockstep", &s->lockstep) < 0 ||
        ard_block_param_i64(ctx, "count", &s->count) < 0)
        return ard_block_fail(ctx, ARD_EINVAL, "parameters");
    return 0;
}

static int step(ard_block_ctx *ctx)
{
    struct st *s = ctx->state;
    if (s->count > 0 && s->next >= (uint64_t)s->count)
        return 0;
    if (s->lockstep && s->next > 0) {
        const uint64_t *ack = ard_block_in(ctx, P_ACK);
        if (ack == NULL || *ack != s->next - 1)
            return 0;
    }
    struct tpkt *o = ard_block_out(ctx, P_OUT);
    o->k = s->next++;
    for (int i = 0; i < 8; i++)
        o->x[i] = s->scale * sin(0.01 * (double)o->k * (i + 1));
    return 0;
}

static void fini(ard_block_ctx *ctx)
{
    free(ctx->state);
}

static const struct ard_block_desc desc = {
    .api = ARD_BLOCK_API,
    .name = "tsrc",
    .version = "1",
    .ports = ports,
    .nports = 2,
    .params = params,
    .nparams = 3,
    .init = init,
    .step = step,
    .close = fini,
};
ARD_BLOCK_EXPORT(desc)
