/* seal.c - the key file and sealed datagrams (seal.h). */
#include "seal.h"
#include "ard_common.h"
#include "wire.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int ards_init(void)
{
    return sodium_init() < 0 ? -1 : 0;
}

bool ards_aes_available(void)
{
    return crypto_aead_aes256gcm_is_available() != 0;
}

static int hexval(uint8_t c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static void key_id(struct ards_key *k)
{
    uint8_t h[16];
    crypto_generichash(h, sizeof h, (const uint8_t *)"ardnet-key-id", 13, k->k, sizeof k->k);
    k->id = ardw_get32(h);
}

int ards_key_parse(const uint8_t *b, size_t len, struct ards_key *k, char *why, size_t whylen)
{
    if (len == ARDS_KEY_BYTES) {
        /* 32 raw bytes, unless they read as the start of the text form (cut short). */
        bool text = true;
        for (size_t i = 0; i < len; i++)
            text &= hexval(b[i]) >= 0;
        if (!text) {
            memcpy(k->k, b, ARDS_KEY_BYTES);
            key_id(k);
            return 0;
        }
    }
    size_t n = len;
    if (n > 0 && b[n - 1] == '\n')
        n--;
    if (n > 0 && b[n - 1] == '\r')
        n--;
    size_t digits = 0;
    while (digits < n && hexval(b[digits]) >= 0)
        digits++;
    if (digits == n && n == ARDS_KEY_HEX) {
        for (size_t i = 0; i < ARDS_KEY_BYTES; i++)
            k->k[i] = (uint8_t)(hexval(b[2 * i]) << 4 | hexval(b[2 * i + 1]));
        key_id(k);
        return 0;
    }
    if (len == 0)
        snprintf(why, whylen, "it is empty");
    else if (digits == n && n < ARDS_KEY_HEX)
        snprintf(why, whylen, "it has %zu hex digits, a key has %u (truncated?)", n, ARDS_KEY_HEX);
    else if (digits == n)
        snprintf(why, whylen, "it has %zu hex digits, a key has %u", n, ARDS_KEY_HEX);
    else if (digits >= ARDS_KEY_HEX / 2)
        snprintf(why, whylen,
                 "byte %zu is not a hex digit: a key is 64 hex digits and a newline, or 32 "
                 "raw bytes",
                 digits + 1);
    else
        snprintf(why, whylen,
                 "it has %zu bytes: a key is 64 hex digits and a newline, or exactly 32 raw "
                 "bytes",
                 len);
    return -1;
}

int ards_key_load(const char *path, struct ards_key *k)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0 && errno == ELOOP)
        fd = open(path, O_RDONLY | O_CLOEXEC); /* a symbolic link: its target is checked */
    if (fd < 0)
        return ardi_fail(ARD_EINVAL, "key file %s: cannot read it: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return ardi_fail(ARD_EINVAL, "key file %s: not a regular file", path);
    }
    if (st.st_mode & 077) {
        close(fd);
        return ardi_fail(ARD_EINVAL,
                         "key file %s: mode %04o lets group or others at it; a key must be "
                         "private (chmod 600 %s)",
                         path, (unsigned)(st.st_mode & 07777), path);
    }
    uint8_t buf[ARDS_KEY_HEX + 4];
    ssize_t n = read(fd, buf, sizeof buf);
    int e = errno;
    close(fd);
    if (n < 0)
        return ardi_fail(ARD_EINVAL, "key file %s: cannot read it: %s", path, strerror(e));
    char why[160];
    if ((size_t)n == sizeof buf) {
        sodium_memzero(buf, sizeof buf);
        return ardi_fail(ARD_EINVAL,
                         "key file %s: it is longer than a key (64 hex digits and a newline, "
                         "or 32 raw bytes)",
                         path);
    }
    int rc = ards_key_parse(buf, (size_t)n, k, why, sizeof why);
    sodium_memzero(buf, sizeof buf);
    if (rc < 0)
        return ardi_fail(ARD_EINVAL, "key file %s: not a key: %s", path, why);
    return 0;
}

int ards_keygen(const char *path)
{
    if (ards_init() < 0)
        return ardi_fail(ARD_ESYS, "libsodium cannot start");
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0 && errno == EEXIST)
        return ardi_fail(ARD_EINVAL, "%s exists: ardnet keygen never overwrites a key file", path);
    if (fd < 0)
        return ardi_fail(ARD_ESYS, "%s: %s", path, strerror(errno));
    uint8_t k[ARDS_KEY_BYTES];
    char text[ARDS_KEY_HEX + 2];
    randombytes_buf(k, sizeof k);
    sodium_bin2hex(text, sizeof text, k, sizeof k);
    text[ARDS_KEY_HEX] = '\n';
    sodium_memzero(k, sizeof k);
    bool ok = fchmod(fd, 0600) == 0 && write(fd, text, ARDS_KEY_HEX + 1) == ARDS_KEY_HEX + 1;
    int e = errno;
    sodium_memzero(text, sizeof text);
    if (close(fd) < 0 || !ok) {
        unlink(path);
        return ardi_fail(ARD_ESYS, "%s: %s", path, strerror(e));
    }
    return 0;
}

void *ards_table_alloc(size_t size)
{
    void *p = NULL;
    /* (malloc aligns to max_align_t only: 8 bytes on s390x, less than the AES state's 16) */
    if (posix_memalign(&p,
                       _Alignof(struct ards_sub) > sizeof(void *) ? _Alignof(struct ards_sub)
                                                                  : sizeof(void *),
                       size) != 0)
        return NULL;
    memset(p, 0, size);
    return p;
}

void ards_subkey(const struct ards_key *k, uint64_t epoch, struct ards_sub *sub)
{
    uint8_t in[16 + 8] = "ardnet-seal-v2";
    ardw_put64(in + 16, epoch);
    crypto_generichash(sub->k, ARDS_KEY_BYTES, in, sizeof in, k->k, sizeof k->k);
    /* AES-256-GCM's key schedule and GHASH powers, once per epoch, not per datagram */
    sub->has_aes = ards_aes_available() && crypto_aead_aes256gcm_beforenm(&sub->aes, sub->k) == 0;
    if (!sub->has_aes)
        sodium_memzero(&sub->aes, sizeof sub->aes);
}

void ards_sub_wipe(struct ards_sub *sub)
{
    sodium_memzero(sub, sizeof *sub);
}

size_t ards_seal(const struct ards_sub *sub, uint32_t key_id, uint32_t lane, uint64_t ctr,
                 const uint8_t *hdr, size_t hlen, const uint8_t *body, size_t blen, uint8_t *out)
{
    size_t sh = hlen + ARDS_SEAL_BYTES;
    bool aes = lane >> 24 == ARDS_ALG_AES && sub->has_aes;
    if (lane >> 24 == ARDS_ALG_AES && !aes)
        lane = (lane & 0xffffffu) | ARDS_ALG_CHACHA << 24; /* (never sealed with no state) */
    memmove(out, hdr, hlen); /* (in place: the header moves back over the seal block's room) */
    out[4] = ARDS_VERSION;
    ardw_put16(out + 6, (uint16_t)sh);
    ardw_put32(out + hlen, key_id);
    ardw_put32(out + hlen + 4, lane);
    ardw_put64(out + hlen + 8, ctr);
    /* The nonce is the last 12 bytes of the seal block: lane and counter. */
    if (aes)
        crypto_aead_aes256gcm_encrypt_detached_afternm(out + sh, out + sh + blen, NULL, body, blen,
                                                       out, sh, NULL, out + hlen + 4, &sub->aes);
    else
        crypto_aead_chacha20poly1305_ietf_encrypt_detached(
            out + sh, out + sh + blen, NULL, body, blen, out, sh, NULL, out + hlen + 4, sub->k);
    return sh + blen + ARDS_TAG_BYTES;
}

bool ards_peek(const uint8_t *d, size_t len, struct ards_info *i)
{
    if (len < 24 + ARDS_OVERHEAD || d[4] != ARDS_VERSION)
        return false;
    uint32_t magic = ardw_get32(d);
    bool catalog = magic == ARDS_CATALOG_MAGIC;
    if (magic != ARDW_MAGIC_WORD && !catalog)
        return false;
    size_t hlen = ardw_get16(d + 6);
    if (hlen < (catalog ? 32u : 24u) + ARDS_SEAL_BYTES || hlen > len - ARDS_TAG_BYTES)
        return false;
    i->magic = magic;
    i->hlen = hlen;
    i->key_id = ardw_get32(d + hlen - 16);
    i->lane = ardw_get32(d + hlen - 12);
    i->alg = i->lane >> 24;
    i->ctr = ardw_get64(d + hlen - 8);
    i->epoch = ardw_get64(d + (catalog ? 8 : 16));
    return true;
}

uint8_t *ards_open(const struct ards_sub *sub, uint8_t *d, size_t len, const struct ards_info *i,
                   size_t *plen)
{
    size_t blen = len - i->hlen - ARDS_TAG_BYTES;
    uint8_t *body = d + i->hlen;
    int rc = -1;
    if (i->alg == ARDS_ALG_CHACHA)
        rc = crypto_aead_chacha20poly1305_ietf_decrypt_detached(
            body, NULL, body, blen, body + blen, d, i->hlen, d + i->hlen - 12, sub->k);
    else if (i->alg == ARDS_ALG_AES && sub->has_aes)
        rc = crypto_aead_aes256gcm_decrypt_detached_afternm(body, NULL, body, blen, body + blen, d,
                                                            i->hlen, d + i->hlen - 12, &sub->aes);
    if (rc != 0)
        return NULL;
    /* The plain form: the original header right before the body. */
    size_t hlen = i->hlen - ARDS_SEAL_BYTES;
    uint8_t *p = d + ARDS_SEAL_BYTES;
    memmove(p, d, hlen);
    p[4] = ARDW_WIRE_VERSION;
    ardw_put16(p + 6, (uint16_t)hlen);
    *plen = hlen + blen;
    return p;
}

static size_t put_hs(uint8_t *b, unsigned flags, uint64_t my_epoch, uint64_t their_epoch,
                     const uint8_t nonce[ARDS_NONCE_BYTES])
{
    ardw_put32(b, ARDW_MAGIC_WORD);
    b[4] = ARDW_WIRE_VERSION;
    b[5] = (uint8_t)flags;
    ardw_put16(b + 6, ARDS_HS_HDR);
    ardw_put64(b + 8, their_epoch);
    ardw_put64(b + 16, my_epoch);
    memcpy(b + ARDS_HS_HDR, nonce, ARDS_NONCE_BYTES);
    return ARDS_HS_HDR + ARDS_NONCE_BYTES;
}

size_t ards_put_challenge(uint8_t *b, uint64_t my_epoch, uint64_t their_epoch,
                          const uint8_t nonce[ARDS_NONCE_BYTES], uint64_t caps)
{
    size_t n = put_hs(b, ARDS_FLAG_CHALLENGE, my_epoch, their_epoch, nonce);
    ardw_put64(b + n, caps);
    return n + 8;
}

size_t ards_put_answer(uint8_t *b, uint64_t my_epoch, uint64_t their_epoch,
                       const uint8_t nonce[ARDS_NONCE_BYTES], uint64_t t_ns)
{
    size_t n = put_hs(b, ARDS_FLAG_ANSWER, my_epoch, their_epoch, nonce);
    ardw_put64(b + n, t_ns);
    return n + 8;
}

bool ards_get_handshake(const uint8_t *p, size_t len, unsigned *flags, uint64_t *their_epoch,
                        uint8_t nonce[ARDS_NONCE_BYTES], uint64_t *t_ns)
{
    if (len < ARDS_HS_HDR + ARDS_NONCE_BYTES || ardw_get32(p) != ARDW_MAGIC_WORD ||
        p[4] != ARDW_WIRE_VERSION || ardw_get16(p + 6) != ARDS_HS_HDR)
        return false;
    *flags = p[5];
    if (len != ARDS_HS_HDR + ARDS_NONCE_BYTES + 8 ||
        (*flags != ARDS_FLAG_CHALLENGE && *flags != ARDS_FLAG_ANSWER))
        return false;
    *their_epoch = ardw_get64(p + 8);
    memcpy(nonce, p + ARDS_HS_HDR, ARDS_NONCE_BYTES);
    *t_ns = ardw_get64(p + ARDS_HS_HDR + ARDS_NONCE_BYTES);
    return true;
}

struct ards_peer *ards_find(struct ards_table *t, uint64_t epoch)
{
    for (int i = 0; i < ARDS_PEERS; i++)
        if (t->p[i].used && t->p[i].epoch == epoch)
            return &t->p[i];
    return NULL;
}

struct ards_peer *ards_take_slot(struct ards_table *t, unsigned *dropped_holds)
{
    struct ards_peer *best = NULL;
    for (int i = 0; i < ARDS_PEERS; i++) {
        struct ards_peer *p = &t->p[i];
        if (!p->used) {
            best = p;
            break;
        }
        if (!best || (best->proven && !p->proven) ||
            (best->proven == p->proven && p->used_ns < best->used_ns))
            best = p;
    }
    *dropped_holds = best->used ? (best->hold_len[0] > 0) + (best->hold_len[1] > 0) : 0;
    if (best->used)
        ards_sub_wipe(&best->sub);
    best->used = best->proven = false;
    best->hold_len[0] = best->hold_len[1] = 0;
    return best;
}

void ards_random(void *buf, size_t n)
{
    randombytes_buf(buf, n);
}
