/*
 * seal.h - sealed datagrams (docs/security.md; layout in docs/wire.md, "Sealed datagrams").
 *
 * With a key (ardnet --key FILE), every datagram ardnet sends is sealed with
 * ChaCha20-Poly1305 (IETF, libsodium): the plain datagram's header stays readable and is
 * authenticated, with a 16-byte seal block after it (key id, lane, counter: the nonce), the
 * rest is encrypted, and a 16-byte tag ends the datagram. The key of a datagram is a subkey
 * derived from the key file's key and the sender's epoch (random per run), so that no nonce
 * is ever used twice with one key across restarts; the nonce is the sending thread's lane and
 * its counter (nanoseconds since the sender's start, strictly increasing per lane).
 *
 * Pure functions (no I/O but the key file's), so that cmocka and the fuzzer drive them.
 */
#ifndef ARDNET_SEAL_H
#define ARDNET_SEAL_H

#include <sodium/crypto_aead_aes256gcm.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ARDS_KEY_BYTES 32u
#define ARDS_KEY_HEX 64u     /* the text form: 64 hex digits (and a newline) */
#define ARDS_SEAL_BYTES 16u  /* seal block: key id u32, lane u32, counter u64 */
#define ARDS_TAG_BYTES 16u   /* Poly1305 tag at the end */
#define ARDS_OVERHEAD 32u    /* a sealed datagram is this much longer than the plain one */
#define ARDS_VERSION 2u      /* version byte of a sealed datagram (plain: 1) */
#define ARDS_NONCE_BYTES 16u /* the random challenge */
/* The AEAD of a datagram, in the top byte of its lane: ChaCha20-Poly1305-IETF (every host), or
 * AES-256-GCM, used only towards a receiver whose challenge said that it has it too. */
#define ARDS_ALG_CHACHA 0u
#define ARDS_ALG_AES 1u
#define ARDS_CAP_AES 1u /* a challenge's capabilities: it opens AES-256-GCM */
/* The handshake (flags of a version 2 ARDN datagram): a receiver's challenge to an epoch it
 * does not know yet, and the sender's answer. 24-byte plain header: magic, version, flags,
 * header length 24, the other end's epoch (u64 at 8), the sealer's epoch (u64 at 16). */
#define ARDS_CATALOG_MAGIC 0x43445241u /* 'A' 'R' 'D' 'C': an announcement of ardnet --auto */
#define ARDS_FLAG_CHALLENGE 0x08u
#define ARDS_FLAG_ANSWER 0x10u
#define ARDS_HS_HDR 24u
#define ARDS_CHALLENGE_LEN (ARDS_HS_HDR + ARDS_OVERHEAD + ARDS_NONCE_BYTES + 8u)
#define ARDS_ANSWER_LEN (ARDS_HS_HDR + ARDS_OVERHEAD + ARDS_NONCE_BYTES + 8u)

struct ards_key {
    uint8_t k[ARDS_KEY_BYTES];
    uint32_t id; /* first 4 bytes (little-endian) of a hash of the key: names it in messages */
};

/* libsodium's start-up (once; thread-safe). 0 or -1. */
int ards_init(void);
/* Whether this CPU seals and opens AES-256-GCM (libsodium: x86 with AES-NI), after ards_init. */
bool ards_aes_available(void);

/* A key from the bytes of a key file: exactly 32 bytes, or 64 hex digits with at most one
 * newline after them. 0, or -1 with why (a sentence) filled. */
int ards_key_parse(const uint8_t *buf, size_t len, struct ards_key *k, char *why, size_t whylen);
/* Read the key file: refused (ARD_EINVAL, detail naming the file and the cause) when it
 * cannot be read, when group or others have any access to it, or when it is not exactly a
 * key. */
int ards_key_load(const char *path, struct ards_key *k);
/* Write a new random key (text form) to path with mode 0600; an existing path is refused. */
int ards_keygen(const char *path);

/* The subkey of an epoch, ready to seal and open with: the key itself (ChaCha20-Poly1305) and,
 * where this CPU has AES-256-GCM, its key schedule and GHASH powers, made once here rather
 * than for every datagram. Plain bytes (no pointers): it may be copied. */
struct ards_sub {
    crypto_aead_aes256gcm_state aes; /* (16-byte aligned by its type) valid when has_aes */
    uint8_t k[ARDS_KEY_BYTES];
    bool has_aes;
};
/* The subkey of the epoch: BLAKE2b keyed with the key over "ardnet-seal-v2" and the epoch,
 * with AES-256-GCM's state where ards_aes_available (call ards_init first). */
void ards_subkey(const struct ards_key *k, uint64_t epoch, struct ards_sub *sub);
/* Wipe a subkey (the key and the AES state) when it is given up. */
void ards_sub_wipe(struct ards_sub *sub);
/* Zeroed memory for a structure holding subkeys, aligned as their AES state needs; free()d. */
void *ards_table_alloc(size_t size);

/* Seal a plain datagram: its header (hlen bytes, with the version byte at 4 and the header
 * length u16 at 6) and body (blen bytes), with the AEAD named by lane's top byte (ARDS_ALG_*;
 * AES only where ards_aes_available). out receives the header with version 2 and header
 * length hlen + 16, the seal block, the body encrypted and the tag: hlen + blen + 32 bytes,
 * returned. An AES lane with a subkey made without AES (no AES-NI) is sealed with
 * ChaCha20-Poly1305 instead, its top byte saying so. hdr may lie anywhere (it is moved); body
 * must not overlap out, or be exactly out + hlen + 16 (sealed in place). */
size_t ards_seal(const struct ards_sub *sub, uint32_t key_id, uint32_t lane, uint64_t ctr,
                 const uint8_t *hdr, size_t hlen, const uint8_t *body, size_t blen, uint8_t *out);

/* What the plain part of a sealed datagram says. */
struct ards_info {
    uint32_t magic;        /* ARDW_MAGIC_WORD (ARDN: routes, handshake) or ARDC (the catalog's) */
    size_t hlen;           /* header length, seal block included */
    uint32_t key_id, lane; /* lane as on the wire, its top byte the AEAD */
    unsigned alg;          /* ARDS_ALG_* */
    uint64_t ctr;
    uint64_t epoch; /* the sealer's epoch (u64 at offset 16; ARDC: its host id at 8) */
};
/* Check the framing of a sealed datagram, ARDN or ARDC (magic, version 2, header length of at
 * least 24 + 16, ARDC 32 + 16, that leaves room for the tag) and read its seal block. Never
 * reads beyond len. */
bool ards_peek(const uint8_t *d, size_t len, struct ards_info *i);
/* Verify the tag (subkey sub, the datagram's AEAD; AES with a subkey made without it fails) and
 * decrypt in place, then rewrite the datagram as its plain form (version 1, the original header
 * length) ending where the body ends: returns it (at d + 16) and its length in *plen, or NULL when
 * the tag is wrong (then the body may have been overwritten: libsodium clears what it would have
 * decrypted). */
uint8_t *ards_open(const struct ards_sub *sub, uint8_t *d, size_t len, const struct ards_info *i,
                   size_t *plen);

/* The handshake's plain datagrams (to be sealed with ards_seal: header ARDS_HS_HDR bytes,
 * then the body): a challenge (body: nonce, then the challenger's capabilities u64,
 * ARDS_CAP_*) and an answer (body: nonce, then the answerer's time u64). They return the
 * plain length. */
size_t ards_put_challenge(uint8_t *buf, uint64_t my_epoch, uint64_t their_epoch,
                          const uint8_t nonce[ARDS_NONCE_BYTES], uint64_t caps);
size_t ards_put_answer(uint8_t *buf, uint64_t my_epoch, uint64_t their_epoch,
                       const uint8_t nonce[ARDS_NONCE_BYTES], uint64_t t_ns);
/* Read an opened (plain) handshake datagram: its flags (ARDS_FLAG_CHALLENGE or _ANSWER), the
 * other end's epoch, the nonce and the last field (*t_ns: an answer's time, a challenge's
 * capabilities). false: not a valid one. */
bool ards_get_handshake(const uint8_t *p, size_t len, unsigned *flags, uint64_t *their_epoch,
                        uint8_t nonce[ARDS_NONCE_BYTES], uint64_t *t_ns);

/* The epochs a receiver has seen (one table per listening socket): whose subkey it holds,
 * and whether the epoch proved that it has the key now (answered a challenge). */
#define ARDS_PEERS 16
#define ARDS_HOLD_MAX 2048u /* a datagram of an epoch not proven yet is held if this short */
#define ARDS_RECHALLENGE_NS 100000000LL /* an unanswered challenge is repeated after this */
struct ards_peer {
    bool used, proven;
    uint64_t epoch;
    struct ards_sub sub;
    int64_t used_ns;   /* receiver time of its last datagram */
    int64_t chal_ns;   /* when the last challenge went out */
    int64_t proven_ns; /* when it was proven */
    uint64_t floor;    /* its datagrams with a smaller counter are refused (recorded earlier) */
    uint8_t nonce[ARDS_NONCE_BYTES];
    /* The newest datagrams before the proof (plain form): [0] a descriptor, [1] any other;
     * hold_len 0: none. */
    size_t hold_len[2];
    uint64_t hold_ctr[2];
    uint8_t hold[2][ARDS_HOLD_MAX];
};
struct ards_table {
    struct ards_peer p[ARDS_PEERS];
};
struct ards_peer *ards_find(struct ards_table *t, uint64_t epoch);
/* A slot for a new epoch: a free one, else the least recently used one not proven, else the
 * least recently used. Its previous content is given up (*dropped_holds: datagrams it held;
 * its subkey wiped). */
struct ards_peer *ards_take_slot(struct ards_table *t, unsigned *dropped_holds);
/* n random bytes (libsodium's generator). */
void ards_random(void *buf, size_t n);

#endif /* ARDNET_SEAL_H */
