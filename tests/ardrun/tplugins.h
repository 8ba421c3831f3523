/*
 * tplugins.h - the packet of the test plugins: a counter and eight values.
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
