/*
 * tplugins.h - the packet of the test plugins: a counter and eight values.
 *
 * tsrc, tgain, tsink and tkeep declare their ports with designated initializers, so that the
 * same source builds against the current ardnet_block.h and against the API 1 one
 * (tests/ardrun/api1/, ports without `flags`) with -Wextra under gcc and clang.
 */
#ifndef TPLUGINS_H
#define TPLUGINS_H

#include "ardnet_block.h"

struct tpkt {
    uint64_t k;
    double x[8];
};
#define TPKT_TYPE "u64 f64[8]"

#endif
