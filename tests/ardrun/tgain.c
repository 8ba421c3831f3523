/*
 * tgain - test filter: out.x = k * in.x (+ a first-order low-pass when alpha < 1), out.k =
 * in.k, and x[7] = the build's VERSION (compiled twice, for the reload test). Fails its step
 * on the packet with k == fail_at. Counts its start/stop callbacks in x[6] (starts*10+stops)
 * when mark_lifecycle is true.
 */
#include "tplugins.h"

#include <stdlib.h>

#ifndef VERSION
#define VERSION 1
#endif
#define STR2(x) #x
#define STR(x) STR2(x)

enum { P_IN, P_OUT };
static const struct ard_block_port ports[] = {
    [P_IN] = {.name = "in", .dir = ARD_IN, .size = sizeof(struct tpkt), .type = TPKT_TYPE},
    [P_OUT] = {.name = "out", .dir = ARD_OUT, .size = sizeof(struct tpkt), .type = TPKT_TYPE},
};
static const struct ard_block_param params[] = {
    {"k", ARD_PARAM_F64, "1.0", "gain"},
    {"fail_at", ARD_PARAM_I64, "-1", "fail the step on this packet"},
    {"mark_lifecycle", ARD_PARAM_BOOL, "false", "x[6] = 10 * starts + stops"},
};

struct st {
    double k;
    int64_t fail_at;
    int mark;
    int starts, stops;
};

static int init(ard_block_ctx *ctx)
{
    struct st *s = calloc(1, sizeof *s);
    if (!s)
        return ard_block_fail(ctx, ARD_ENOMEM, "out of memory");
    ctx->state = s;
    if (ard_block_param_f64(ctx, "k", &s->k) < 0 ||
        ard_block_param_i64(ctx, "fail_at", &s->fail_at) < 0 ||
        ard_block_param_bool(ctx, "mark_lifecycle", &s->mark) < 0)
        return ard_block_fail(ctx, ARD_EINVAL, "parameters");
    return 0;
}

static int step(ard_block_ctx *ctx)
{
    struct st *s = ctx->state;
    const struct tpkt *in = ard_block_in(ctx, P_IN);
    if (in == NULL || ard_block_is_new(ctx, P_IN) != 1)
        return 0;
    if (s->fail_at >= 0 && in->k == (uint64_t)s->fail_at)
        return ard_block_fail(ctx, ARD_EINVAL, "packet %llu: told to fail here",
                              (unsigned long long)in->k);
    struct tpkt *o = ard_block_out(ctx, P_OUT);
    o->k = in->k;
    for (int i = 0; i < 8; i++)
        o->x[i] = s->k * in->x[i];
    if (s->mark)
        o->x[6] = 10 * s->starts + s->stops;
    o->x[7] = VERSION;
    return 0;
}

static int start(ard_block_ctx *ctx)
{
    ((struct st *)ctx->state)->starts++;
    return 0;
}

static int stop(ard_block_ctx *ctx)
{
    ((struct st *)ctx->state)->stops++;
    return 0;
}

static void fini(ard_block_ctx *ctx)
{
    free(ctx->state);
}

static const struct ard_block_desc desc = {
    .api = ARD_BLOCK_API,
    .name = "tgain",
    .version = STR(VERSION),
    .ports = ports,
    .nports = 2,
    .params = params,
    .nparams = 3,
    .init = init,
    .step = step,
    .close = fini,
    .start = start,
    .stop = stop,
};
ARD_BLOCK_EXPORT(desc)
