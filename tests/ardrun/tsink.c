/*
 * tsink - test sink: writes one line per new packet to `file`: its own step number, then
 * the packet (k and the eight values in exact hex floats), and acknowledges k on "ack".
 * (It prints in step: a test plugin, not a realtime one.)
 */
#include "tplugins.h"

#include <stdio.h>

enum { P_IN, P_ACK };
static const struct ard_block_port ports[] = {
    [P_IN] = {.name = "in", .dir = ARD_IN, .size = sizeof(struct tpkt), .type = TPKT_TYPE},
    [P_ACK] = {.name = "ack", .dir = ARD_OUT, .size = sizeof(uint64_t), .type = "u64"},
};
static const struct ard_block_param params[] = {
    {"file", ARD_PARAM_STR, NULL, "where to write the packets"},
};

static int init(ard_block_ctx *ctx)
{
    const char *file;
    if (ard_block_param_str(ctx, "file", &file) < 0)
        return ard_block_fail(ctx, ARD_EINVAL, "parameter 'file'");
    FILE *f = fopen(file, "w");
    if (f == NULL)
        return ard_block_fail(ctx, ARD_ESYS, "cannot write '%s'", file);
    setvbuf(f, NULL, _IOLBF, 0);
    ctx->state = f;
    return 0;
}

static int step(ard_block_ctx *ctx)
{
    const struct tpkt *in = ard_block_in(ctx, P_IN);
    if (in == NULL || ard_block_is_new(ctx, P_IN) != 1)
        return 0;
    FILE *f = ctx->state;
    fprintf(f, "%llu %llu", (unsigned long long)ctx->steps, (unsigned long long)in->k);
    for (int i = 0; i < 8; i++)
        fprintf(f, " %a", in->x[i]);
    fputc('\n', f);
    *(uint64_t *)ard_block_out(ctx, P_ACK) = in->k;
    return 0;
}

static void fini(ard_block_ctx *ctx)
{
    if (ctx->state)
        fclose(ctx->state);
}

static const struct ard_block_desc desc = {
    .api = ARD_BLOCK_API,
    .name = "tsink",
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
