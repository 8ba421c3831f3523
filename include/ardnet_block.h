/*
 * ardnet_block.h - the block plugin API: write a block once as a shared object, run it in an
 * `ardrun` group (many blocks in one realtime thread) or alone as its own process
 * (`ardrun --block PLUGIN.so`), chosen by configuration only.
 *
 * A plugin exports one function, ard_block_descriptor(), returning a static descriptor: the
 * block's name and version, the plugin API version it was built against, its ports (name,
 * direction, size, type descriptor) and parameters (name, type, default), and its callbacks.
 *
 *     init(ctx)   once, before the first step: read parameters, allocate state (ctx->state).
 *     start(ctx)  optional; when the block (re)starts running, before its next step.
 *     step(ctx)   once per tick of its rate group: read inputs, compute, write outputs.
 *     stop(ctx)   optional; when the block is stopped (it will not step until started again),
 *                 and at shutdown before close if it was running.
 *     close(ctx)  once, last: free what init allocated. Called after init even when init
 *                 failed, so it must cope with a partly built (or NULL) ctx->state.
 *
 * The host (ardrun) owns the ports; they are ordinary ardnet connections, so every tool sees
 * them. Before each step the host has already received every IN port's newest packet into the
 * port's buffer; after a step that returned 0 it sends every OUT port that the step asked for
 * with ard_block_out(). A block never calls ard_send/ard_rec itself.
 *
 * Errors are returned, never exit()ed: a callback returns 0 or a negative ARD_E* code, after
 * ard_block_fail() to say why. A step that fails stops that block (reported by the host; the
 * other blocks of the group continue). A block that crashes (SIGSEGV, abort) takes its whole
 * process down: a group shares one address space.
 *
 * The instances of an ardrun group loaded from the same file share one loaded copy of it, its
 * static variables included (as a process that loads a library once): keep an instance's data
 * in ctx->state, or give the block `own_copy: true` in the group file.
 *
 * Realtime rules for step: no allocation, no blocking call, no printing. The ard_block_in /
 * ard_block_out / ard_block_is_new helpers are inline and make no call.
 *
 * Start a new block with `ardrun --new NAME` (writes NAME.c from the template).
 */
#ifndef ARDNET_BLOCK_H
#define ARDNET_BLOCK_H

#include "ardnet.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Version of this API. A host loads plugins built against this version or an older one it
 * still knows (ardrun loads 1 and 2) and refuses any other, naming both.
 *   1  the first version.
 *   2  struct ard_block_port gained `flags` (ARD_PORT_*), appended: an API 1 plugin's port
 *      table (without it) is read with its own layout and has no flags. */
#define ARD_BLOCK_API 2

/* The one symbol a plugin exports (a function, so that C++ and C need no extern data). */
#define ARD_BLOCK_SYMBOL "ard_block_descriptor"

/* Parameter types. Values come as text from the group YAML (`params: {k: v}`) or the command
 * line (`--param k=v`) and are checked against the type before anything runs. */
enum ard_param_type {
    ARD_PARAM_I64 = 1,  /* integer, decimal or 0x hex, fits int64_t */
    ARD_PARAM_F64 = 2,  /* finite double */
    ARD_PARAM_BOOL = 3, /* true/false, yes/no, on/off, 1/0 */
    ARD_PARAM_STR = 4,  /* any text up to 255 bytes */
};

/* Port flags (struct ard_block_port's `flags`, API 2). A host refuses a bit it does not know,
 * naming block, port and bit. */

/* OUT port only: every step that marks this port with ard_block_out() writes the whole
 * packet (every byte of `size`), never reading what the buffer held before. In return the
 * host need not keep the buffer's contents between steps, and hands the packet over without
 * copying it: at the start of a step the buffer holds unspecified bytes (an older packet of
 * the port, or zeroes). Readers still never see what a failed step wrote. Declare it only
 * when it is true of every step: a block that updates part of its output (a counter kept in
 * the packet, a field written once) must not. */
#define ARD_PORT_WHOLE 0x1u

struct ard_block_port {
    const char *name; /* port name within the block: [A-Za-z0-9_-], at most 31 characters */
    enum ard_dir dir; /* ARD_IN or ARD_OUT */
    size_t size;      /* packet size in bytes, >= 1 */
    const char *type; /* type descriptor (see ardnet.h) whose size must equal `size`, or NULL */
    uint32_t flags;   /* ARD_PORT_* bits, 0 for none (API 2; an API 1 plugin has no flags) */
};

struct ard_block_param {
    const char *name; /* [A-Za-z0-9_-], at most 31 characters */
    enum ard_param_type type;
    const char *def; /* default value as text; NULL: the parameter must be given */
    const char *doc; /* one line for --help-block; may be NULL */
};

typedef struct ard_block_ctx ard_block_ctx;

struct ard_block_desc {
    uint32_t api;        /* ARD_BLOCK_API */
    const char *name;    /* the block type's name, e.g. "pid" */
    const char *version; /* the plugin's own version text, e.g. "1.2.0" */
    const struct ard_block_port *ports;
    uint32_t nports; /* at most ARD_BLOCK_MAX_PORTS */
    const struct ard_block_param *params;
    uint32_t nparams;                  /* at most ARD_BLOCK_MAX_PARAMS */
    int (*init)(ard_block_ctx *ctx);   /* required */
    int (*step)(ard_block_ctx *ctx);   /* required */
    void (*close)(ard_block_ctx *ctx); /* required (may do nothing) */
    int (*start)(ard_block_ctx *ctx);  /* optional, NULL */
    int (*stop)(ard_block_ctx *ctx);   /* optional, NULL */
};

#define ARD_BLOCK_MAX_PORTS 64
#define ARD_BLOCK_MAX_PARAMS 64

/* Services of the host, reached through the context (a plugin links no host symbol). */
struct ard_block_host {
    /* Value of parameter `name` (declared with type `type`) into *out: int64_t, double, int
     * (bool) or const char * (valid until close). Returns 0, ARD_EINVAL (no such parameter
     * or another type; the detail says which). For init/start, not for step. */
    int (*param)(ard_block_ctx *ctx, const char *name, enum ard_param_type type, void *out);
    /* Record why a callback failed; returns `code`. Usable from step (no allocation). */
    int (*fail)(ard_block_ctx *ctx, int code, const char *fmt, va_list ap);
};

/* The context of one block instance. Fields are read-only for the block except `state`
 * and what ard_block_out() marks. */
struct ard_block_ctx {
    uint32_t api;         /* ARD_BLOCK_API of the host */
    uint32_t nports;      /* = the descriptor's nports */
    const char *instance; /* the instance's name ("ctrl" in a group; the plugin's name alone) */
    void *state;          /* the block's own data: set it in init, free it in close */
    void *const *buf;     /* buf[i]: port i's packet buffer (IN: the newest packet received;
                           * OUT: what will be sent, kept from the previous step unless the
                           * port is ARD_PORT_WHOLE). The
                           * addresses may change from one step to the next (ardrun hands
                           * packets over in place): take them anew each step, through
                           * ard_block_in/ard_block_out, and never write into an IN packet */
    const int8_t *fresh;  /* IN port i: 1 a new packet this tick, 0 the same one as before,
                           * -1 nothing was ever received (buf[i] is all zeroes) */
    uint8_t *send;        /* OUT port i: nonzero = send buf[i] after this step */
    const struct ard_info *info; /* per port: sequence and times of the packet in buf[i] */
    uint64_t steps;              /* steps this instance completed before the current one */
    int64_t now_ns;              /* CLOCK_MONOTONIC time of this tick's wake-up */
    int64_t period_ns;           /* the block's period (0 in trigger mode: driven by a port) */
    const struct ard_block_host *host;
};

/* Newest packet of IN port i, or NULL if nothing was ever received. */
static inline const void *ard_block_in(const ard_block_ctx *ctx, unsigned i)
{
    return ctx->fresh[i] < 0 ? NULL : ctx->buf[i];
}

/* 1 if IN port i got a new packet this tick, 0 the same again, -1 nothing yet. */
static inline int ard_block_is_new(const ard_block_ctx *ctx, unsigned i)
{
    return ctx->fresh[i];
}

/* Buffer of OUT port i, marked to be sent after this step (if the step returns 0). The buffer
 * keeps its contents between steps, so a block may update only part of it; except for a port
 * declared ARD_PORT_WHOLE, whose buffer holds unspecified bytes: write all of it. */
static inline void *ard_block_out(ard_block_ctx *ctx, unsigned i)
{
    ctx->send[i] = 1;
    return ctx->buf[i];
}

/* Parameter accessors (for init and start). */
static inline int ard_block_param_i64(ard_block_ctx *ctx, const char *name, int64_t *v)
{
    return ctx->host->param(ctx, name, ARD_PARAM_I64, v);
}
static inline int ard_block_param_f64(ard_block_ctx *ctx, const char *name, double *v)
{
    return ctx->host->param(ctx, name, ARD_PARAM_F64, v);
}
static inline int ard_block_param_bool(ard_block_ctx *ctx, const char *name, int *v)
{
    return ctx->host->param(ctx, name, ARD_PARAM_BOOL, v);
}
static inline int ard_block_param_str(ard_block_ctx *ctx, const char *name, const char **v)
{
    return ctx->host->param(ctx, name, ARD_PARAM_STR, (void *)v);
}

/* Say why a callback fails: `return ard_block_fail(ctx, ARD_EINVAL, "gain %g < 0", g);` */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 3, 4)))
#endif
static inline int
ard_block_fail(ard_block_ctx *ctx, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = ctx->host->fail(ctx, code, fmt, ap);
    va_end(ap);
    return rc;
}

/* Define the descriptor function of a plugin:  ARD_BLOCK_EXPORT(my_desc)  */
#if defined(__GNUC__) || defined(__clang__)
#define ARD_BLOCK_VISIBLE __attribute__((visibility("default")))
#else
#define ARD_BLOCK_VISIBLE
#endif
#define ARD_BLOCK_EXPORT(desc)                                                                     \
    ARD_BLOCK_VISIBLE const struct ard_block_desc *ard_block_descriptor(void);                     \
    ARD_BLOCK_VISIBLE const struct ard_block_desc *ard_block_descriptor(void)                      \
    {                                                                                              \
        return &(desc);                                                                            \
    }

#ifdef __cplusplus
}
#endif

#endif /* ARDNET_BLOCK_H */
