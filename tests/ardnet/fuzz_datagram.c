/*
 * fuzz_datagram.c - libFuzzer target for the receive path of a route: header parsing, order
 * tracking and payload conversion (ardn_route_take). The first input byte picks the route's
 * type (typed or opaque) and whether the datagram comes from the configured peer.
 * Invariant checked: a datagram is only delivered when its framing and header are right.
 */
#include "ardn.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

static const char *const types[] = {"u32 f64 u16", "", "u8[24]", "i16 i64 f32"};
static struct ardn_route routes[4];
static struct ard_field fields[4][8];
static uint8_t bufs[4][24];

static void setup(void)
{
    static bool done;
    if (done)
        return;
    done = true;
    for (int i = 0; i < 4; i++) {
        struct ardn_route *r = &routes[i];
        ardn_route_init(r);
        r->size = 24;
        size_t size = 24;
        if (types[i][0] && ard_type_parse(types[i], fields[i], 8, &r->nfields, &size) < 0)
            abort();
        if (size != 24)
            abort();
        r->fields = fields[i];
        r->type_hash = types[i][0] ? ard_type_hash(types[i]) : 0;
        r->conn_id = i == 3 ? 0 : 0x00c0ffeeu; /* 0: any connection id */
        r->buf = bufs[i];
        char err[128];
        if (ardn_route_option(r, "from", "10.77.0.11", err, sizeof err) < 0)
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    setup();
    if (size < 1)
        return 0;
    struct ardn_route *r = &routes[data[0] & 3];
    struct sockaddr_storage src = {0};
    struct sockaddr_in *s = (struct sockaddr_in *)&src;
    s->sin_family = AF_INET;
    s->sin_addr.s_addr = (data[0] & 4) ? inet_addr("10.77.0.12") : inet_addr("10.77.0.11");
    /* Copy so that reading past the end is caught by ASan exactly at `size`. */
    size_t n = size - 1;
    uint8_t *d = malloc(n ? n : 1);
    if (!d)
        return 0;
    memcpy(d, data + 1, n);
    struct ardw_hdr h;
    enum ardw_cause c = ardn_route_take(r, d, n, &src, &h);
    if (c == ARDW_OK && (n != ARDW_HDR_SIZE + 24 || (data[0] & 4) || memcmp(d, "ARDN", 4) != 0))
        abort();
    free(d);
    return 0;
}
