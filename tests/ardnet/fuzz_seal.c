/*
 * fuzz_seal.c - libFuzzer target for sealed datagrams (src/ardnet/seal.c). The first byte
 * picks what the rest is given to:
 *   0  the key file's parser (ards_key_parse)
 *   1  a received datagram: ards_peek, ards_open with the subkey of the epoch it names (a
 *      fixed key), and the handshake's parser on what opened; the plain form must lie inside
 *      the datagram and be 32 bytes shorter
 *   2  a plain datagram to seal (ChaCha20-Poly1305, or AES-256-GCM where the CPU has it): sealed,
 *      it must open again to exactly these bytes, and with any one byte changed not at all
 * Build with -DARD_FUZZ=ON (clang); seeds: test_seal --write-corpus DIR.
 */
#include "seal.h"
#include "wire.h"

#include <stdlib.h>
#include <string.h>

static struct ards_key key;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready;
    if (!ready) {
        if (ards_init() < 0)
            abort();
        for (int i = 0; i < 32; i++)
            key.k[i] = (uint8_t)i;
        ready = 1;
    }
    if (size < 1 || size > 4200)
        return 0;
    uint8_t mode = data[0];
    data++;
    size--;
    static uint8_t buf[4300], copy[4300];
    if (mode == 0) {
        struct ards_key k;
        char why[160];
        (void)ards_key_parse(data, size, &k, why, sizeof why);
        return 0;
    }
    if (mode == 1) {
        memcpy(buf, data, size);
        struct ards_info i;
        if (!ards_peek(buf, size, &i))
            return 0;
        struct ards_sub sub;
        ards_subkey(&key, i.epoch, &sub);
        size_t plen;
        uint8_t *p = ards_open(&sub, buf, size, &i, &plen);
        if (!p)
            return 0;
        if (p != buf + ARDS_SEAL_BYTES || plen + ARDS_OVERHEAD != size)
            abort();
        unsigned flags;
        uint64_t theirs, t;
        uint8_t nonce[ARDS_NONCE_BYTES];
        (void)ards_get_handshake(p, plen, &flags, &theirs, nonce, &t);
        return 0;
    }
    /* mode 2: a header of 24..64 bytes (its own length in byte 6), the rest body */
    if (size < 24)
        return 0;
    size_t hlen = 24 + data[0] % 41;
    if (hlen > size)
        hlen = size;
    memcpy(copy, data, size);
    ardw_put32(copy, ARDW_MAGIC_WORD);
    copy[4] = ARDW_WIRE_VERSION;
    ardw_put16(copy + 6, (uint16_t)hlen);
    struct ards_sub sub;
    ards_subkey(&key, ardw_get64(copy + 16), &sub);
    uint32_t lane = 1u | (data[2] & 1u && ards_aes_available() ? ARDS_ALG_AES << 24 : 0u);
    size_t n = ards_seal(&sub, key.id, lane, 2, copy, hlen, copy + hlen, size - hlen, buf);
    if (n != size + ARDS_OVERHEAD)
        abort();
    struct ards_info i;
    size_t plen;
    static uint8_t bad[4300];
    memcpy(bad, buf, n);
    bad[data[1] % n] ^= 1;
    if (ards_peek(bad, n, &i) && ards_open(&sub, bad, n, &i, &plen))
        abort();
    if (!ards_peek(buf, n, &i))
        abort();
    uint8_t *p = ards_open(&sub, buf, n, &i, &plen);
    if (!p || plen != size || memcmp(p, copy, size) != 0)
        abort();
    return 0;
}
