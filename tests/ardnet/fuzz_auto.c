/*
 * fuzz_auto.c - libFuzzer target for the catalog's announcement parser (arda_parse, ardnet
 * --auto). Invariants checked: never a read beyond the datagram (ASan), and an accepted
 * announcement is exactly what the encoder writes for what was parsed (every byte of it is
 * accounted for: nothing ignored, nothing ambiguous), with names and types that passed the
 * library's checks (a valid connection name; a canonical type of the entry's size).
 */
#include "auto_wire.h"

#include <stdlib.h>
#include <string.h>

static struct arda_entry rx[ARDA_MAX_ENTRIES];
static uint8_t out[ARDA_MAX_DGRAM];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct arda_msg m;
    if (arda_parse(data, size, &m, rx, ARDA_MAX_ENTRIES) != ARDA_OK)
        return 0;
    size_t len = arda_put_hdr(out, &m);
    for (unsigned i = 0; i < m.count; i++) {
        if (len + arda_entry_len(&rx[i]) > sizeof out)
            abort();
        len = arda_put_entry(out, len, &rx[i]);
        if (rx[i].type[0]) {
            size_t tsize = 0;
            if (ard_type_parse(rx[i].type, NULL, 0, NULL, &tsize) < 0 || tsize != rx[i].size)
                abort();
        }
    }
    arda_set_part(out, m.part, m.nparts);
    if (len != size || memcmp(out, data, size) != 0)
        abort();
    return 0;
}
