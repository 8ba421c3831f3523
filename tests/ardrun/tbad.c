/*
 * tbad - broken plugins for the refusal tests, one per BAD_* macro:
 *   BAD_NOSYM   exports no ard_block_descriptor
 *   BAD_API     built against another block API version
 *   BAD_LIAR    a port declares 48 bytes with type "f64[7]" (56)
 *   BAD_UNDEF   needs a symbol that nothing defines
 *   BAD_NOSTEP  has no step callback
 *   BAD_CRASH   dereferences NULL in its step after `after` steps
 *   BAD_INITFAIL fails its init
 *   BAD_INITHANG (with BAD_ACT) never returns from its init
 *   BAD_ACT     misbehaves in its step after `after` steps as its parameter `act` says: hang
 *               (an endless loop), sleep (blocks in a system call), segv, bus, fpe, abort,
 *               positive (returns 1), none. The
 *               faults are real ones that no sanitizer takes for undefined behaviour (a
 *               store to address 0x10, a floating-point division by zero with the trap on).
 */
#if defined(BAD_ACT) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* feenableexcept */
#endif
#include "ardnet_block.h"

#include <stddef.h>
#ifdef BAD_ACT
#include <fenv.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#endif

#ifdef BAD_UNDEF
void ardrun_test_nowhere(void);
#endif

static const struct ard_block_port ports[] = {
#ifdef BAD_LIAR
    {"out", ARD_OUT, 48, "f64[7]", 0},
#else
    {"out", ARD_OUT, 56, "f64[7]", 0},
#endif
};
static const struct ard_block_param params[] = {
    {"after", ARD_PARAM_I64, "10", "steps before the crash"},
#ifdef BAD_ACT
    {"act", ARD_PARAM_STR, "none", "hang, sleep, segv, bus, fpe, abort, positive or none"},
#endif
};

static int init(ard_block_ctx *ctx)
{
#ifdef BAD_INITHANG
    for (volatile int spin = 1; spin;)
        ;
#endif
#ifdef BAD_UNDEF
    ardrun_test_nowhere();
#endif
#ifdef BAD_INITFAIL
    return ard_block_fail(ctx, ARD_EINVAL, "this block never initialises");
#else
    (void)ctx;
    return 0;
#endif
}

__attribute__((unused)) static int step(ard_block_ctx *ctx)
{
#ifdef BAD_ACT
    int64_t after = 10;
    const char *act = "none";
    (void)!ard_block_param_i64(ctx, "after", &after);
    (void)!ard_block_param_str(ctx, "act", &act);
    if (ctx->steps >= (uint64_t)after) {
        if (!strcmp(act, "hang")) {
            for (volatile int spin = 1; spin;)
                ;
        } else if (!strcmp(act, "sleep")) {
            sleep(1000); /* blocks in a system call */
        } else if (!strcmp(act, "segv")) {
            volatile uintptr_t at = 0x10;
            *(volatile int *)at = 1;
        } else if (!strcmp(act, "bus")) {
            /* a page of a file beyond its end */
            FILE *f = tmpfile();
            volatile char *m =
                f ? mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fileno(f), 0) : NULL;
            if (m != NULL && m != MAP_FAILED)
                m[0] = 1;
        } else if (!strcmp(act, "fpe")) {
            volatile double zero = 0, one = 1;
            feenableexcept(FE_DIVBYZERO);
            one = one / zero;
        } else if (!strcmp(act, "abort")) {
            abort();
        } else if (!strcmp(act, "positive")) {
            return 1;
        }
    }
#endif
#ifdef BAD_CRASH
    int64_t after = 10;
    (void)!ard_block_param_i64(ctx, "after", &after);
    if (ctx->steps >= (uint64_t)after) {
        volatile int *nowhere = NULL;
        *nowhere = 1;
    }
#endif
    double *o = ard_block_out(ctx, 0);
    o[0] = (double)ctx->steps;
    return 0;
}

static void fini(ard_block_ctx *ctx)
{
    (void)ctx;
}

static const struct ard_block_desc desc = {
#ifdef BAD_API
    .api = 99,
#else
    .api = ARD_BLOCK_API,
#endif
    .name = "tbad",
    .version = "1",
    .ports = ports,
    .nports = 1,
    .params = params,
    .nparams = sizeof params / sizeof params[0],
    .init = init,
#ifndef BAD_NOSTEP
    .step = step,
#endif
    .close = fini,
};

#ifndef BAD_NOSYM
ARD_BLOCK_EXPORT(desc)
#else
const struct ard_block_desc *tbad_descriptor(void);
const struct ard_block_desc *tbad_descriptor(void)
{
    return &desc;
}
#endif
