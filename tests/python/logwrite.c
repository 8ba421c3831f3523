/*
 * logwrite.c - writes the recording that test_log.py reads back, with the C writer API
 * (include/ardnet_log.h). Every value is a formula of the message number; test_log.py
 * computes the same formulas with numpy and compares every element.
 *
 *   py_logwrite FILE [zstd|none] [N]
 *
 * (N messages of arm.state, default 300: a larger N makes a file to time ardnet.log.read.)
 *
 * Connections (channels in this order):
 *   arm.state  "q:f64[7] tick:u32"  every message i = 0..N-1; seq jumps by 4 at i = 100
 *              (4 packets missed, also counted with ard_logw_missed)
 *   all        ALL (each basic type once)  every i % 3 == 0, k = i / 3
 *   blob       opaque, 5 bytes             every i % 2 == 0, k = i / 2
 *   quiet      "x:f64"                     no message at all
 * Times: publish (writer's realtime) = BASE + i ms, log (receive) = publish + 20 us + i ns.
 */
#include "ardnet.h"
#include "ardnet_log.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BASE 1790000000123456789LL
#define ALL "i8 u8[3] i16 u16 i32 u32 i64 u64 f32 f64[3]"

static int die(const char *what, int rc)
{
    fprintf(stderr, "logwrite: %s: %s (%s)\n", what, ard_strerror(rc), ard_errdetail());
    return 1;
}

/* Store element e of field f, given as a signed or unsigned integer or a double. */
static void put(uint8_t *pkt, const struct ard_field *f, uint32_t e, int64_t iv, uint64_t uv,
                double dv)
{
    uint8_t *p = pkt + f->offset + e * ard_basic_size(f->kind);
    switch (f->kind) {
    case ARD_I8: {
        int8_t v = (int8_t)iv;
        memcpy(p, &v, sizeof v);
    } break;
    case ARD_U8: {
        uint8_t v = (uint8_t)uv;
        memcpy(p, &v, sizeof v);
    } break;
    case ARD_I16: {
        int16_t v = (int16_t)iv;
        memcpy(p, &v, sizeof v);
    } break;
    case ARD_U16: {
        uint16_t v = (uint16_t)uv;
        memcpy(p, &v, sizeof v);
    } break;
    case ARD_I32: {
        int32_t v = (int32_t)iv;
        memcpy(p, &v, sizeof v);
    } break;
    case ARD_U32: {
        uint32_t v = (uint32_t)uv;
        memcpy(p, &v, sizeof v);
    } break;
    case ARD_I64:
        memcpy(p, &iv, sizeof iv);
        break;
    case ARD_U64:
        memcpy(p, &uv, sizeof uv);
        break;
    case ARD_F32: {
        float v = (float)dv;
        memcpy(p, &v, sizeof v);
    } break;
    case ARD_F64:
        memcpy(p, &dv, sizeof dv);
        break;
    }
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: logwrite FILE [zstd|none] [N]\n");
        return 100;
    }
    const char *comp = argc >= 3 && strcmp(argv[2], "none") != 0 ? argv[2] : NULL;
    int64_t N = argc == 4 ? strtoll(argv[3], NULL, 10) : 300;
    if (N <= 0) {
        fprintf(stderr, "logwrite: bad count '%s'\n", argv[3]);
        return 100;
    }
    struct ard_field arm_f[2], all_f[10];
    size_t arm_n, arm_size, all_n, all_size;
    int rc;
    if ((rc = ard_type_parse("q:f64[7] tick:u32", arm_f, 2, &arm_n, &arm_size)) < 0 ||
        (rc = ard_type_parse(ALL, all_f, 10, &all_n, &all_size)) < 0)
        return die("type", rc);

    /* Small chunks: the file has many, so reading crosses chunk boundaries. */
    struct ard_logw_opts o = {.compression = comp, .chunk_size = 2048, .domain = "pytest"};
    ard_logw *w = ard_logw_open(argv[1], &o);
    if (w == NULL)
        return die(argv[1], ard_lasterror());
    int arm = ard_logw_add(w, "arm.state", "q:f64[7] tick:u32", arm_size);
    int all = ard_logw_add(w, "all", ALL, all_size);
    int blob = ard_logw_add(w, "blob", NULL, 5);
    int quiet = ard_logw_add(w, "quiet", "x:f64", 8);
    if (arm < 0 || all < 0 || blob < 0 || quiet < 0)
        return die("add", arm < 0 ? arm : all < 0 ? all : blob < 0 ? blob : quiet);

    uint8_t pkt[256];
    for (int64_t i = 0; i < N; i++) {
        int64_t real = BASE + i * 1000000;
        int64_t log = real + 20000 + i;
        memset(pkt, 0, sizeof pkt);
        for (uint32_t j = 0; j < 7; j++)
            put(pkt, &arm_f[0], j, 0, 0, (double)i * 0.5 + j * 0.001 - 3.0);
        put(pkt, &arm_f[1], 0, 0, (uint64_t)(1000 + i), 0);
        if ((rc = ard_logw_write(w, arm, pkt, (uint64_t)(i + 1 + (i >= 100 ? 4 : 0)), log, real)) <
            0)
            return die("write arm.state", rc);
        if (i % 3 == 0) {
            int64_t k = i / 3;
            memset(pkt, 0, sizeof pkt);
            put(pkt, &all_f[0], 0, -128 + k, 0, 0);
            for (uint32_t m = 0; m < 3; m++)
                put(pkt, &all_f[1], m, 0, (uint64_t)(k * 3 + m) & 255, 0);
            put(pkt, &all_f[2], 0, -32768 + k * 7, 0, 0);
            put(pkt, &all_f[3], 0, 0, (uint64_t)(65535 - k), 0);
            put(pkt, &all_f[4], 0, INT32_MIN + k, 0, 0);
            put(pkt, &all_f[5], 0, 0, (uint64_t)(UINT32_MAX - k), 0);
            put(pkt, &all_f[6], 0, INT64_MIN + k, 0, 0);
            put(pkt, &all_f[7], 0, 0, UINT64_MAX - (uint64_t)k, 0);
            put(pkt, &all_f[8], 0, 0, 0, (double)k * 0.25);
            for (uint32_t m = 0; m < 3; m++)
                put(pkt, &all_f[9], m, 0, 0, -(double)k * 1e-3 + m * 1e6);
            if ((rc = ard_logw_write(w, all, pkt, (uint64_t)(k + 1), log, real)) < 0)
                return die("write all", rc);
        }
        if (i % 2 == 0) {
            int64_t k = i / 2;
            uint8_t b[5];
            for (int m = 0; m < 5; m++)
                b[m] = (uint8_t)((k * 7 + m * 31) & 255);
            if ((rc = ard_logw_write(w, blob, b, (uint64_t)(k + 1), log + 1, real + 1)) < 0)
                return die("write blob", rc);
        }
    }
    ard_logw_missed(w, arm, 4);
    if ((rc = ard_logw_close(w)) < 0)
        return die("close", rc);
    return 0;
}
