/*
 * twhole - test block for ARD_PORT_WHOLE: it declares its OUT port whole and writes every
 * byte of its packet in every step, from its step count and its input only (never from what
 * its buffer held), so that every packet it sends can be checked on its own:
 *   out.k       = steps + 1 (this step's number)
 *   out.x[0]    = in.k as seen this step (-1: nothing received yet)
 *   out.x[1]    = 1 if the input packet was a whole twhole packet (or none), 0 if not
 *   out.x[2..7] = k * 8 + i (the pattern of packet k)
 * With fail_at = N it writes nonsense into the whole packet in its N-th step and fails it:
 * no reader may see that packet. Built with BAD_FLAG it declares an unknown flag bit (0x8),
 * with BAD_INFLAG ARD_PORT_WHOLE on its IN port: both must be refused.
 */
#include "tplugins.h"

enum { P_IN, P_OUT };
static const struct ard_block_port ports[] = {
#ifdef BAD_INFLAG
    [P_IN] = {"in", ARD_IN, sizeof(struct tpkt), TPKT_TYPE, ARD_PORT_WHOLE},
#else
    [P_IN] = {"in", ARD_IN, sizeof(struct tpkt), TPKT_TYPE, 0},
#endif
#ifdef BAD_FLAG
    [P_OUT] = {"out", ARD_OUT, sizeof(struct tpkt), TPKT_TYPE, ARD_PORT_WHOLE | 0x8u},
#else
    [P_OUT] = {"out", ARD_OUT, sizeof(struct tpkt), TPKT_TYPE, ARD_PORT_WHOLE},
#endif
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

static int whole(const struct tpkt *p)
{
    for (int i = 2; i < 8; i++)
        if (p->x[i] != (double)(p->k * 8 + (uint64_t)i))
            return 0;
    return p->x[1] == 0 || p->x[1] == 1;
}

static int step(ard_block_ctx *ctx)
{
    const struct tpkt *in = ard_block_in(ctx, P_IN);
    struct tpkt *o = ard_block_out(ctx, P_OUT);
    uint64_t k = ctx->steps + 1;
    if ((int64_t)(intptr_t)ctx->state == (int64_t)k) {
        o->k = 1000000;
        for (int i = 0; i < 8; i++)
            o->x[i] = -7;
        return ard_block_fail(ctx, ARD_EINVAL, "step %llu: told to fail here",
                              (unsigned long long)k);
    }
    o->k = k;
    o->x[0] = in ? (double)in->k : -1;
    o->x[1] = in == NULL || whole(in);
    for (int i = 2; i < 8; i++)
        o->x[i] = (double)(k * 8 + (uint64_t)i);
    return 0;
}

static void fini(ard_block_ctx *ctx)
{
    (void)ctx;
}

static const struct ard_block_desc desc = {
    .api = ARD_BLOCK_API,
    .name = "twhole",
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
