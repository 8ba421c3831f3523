/*
 * test_seal.c - sealed datagrams (src/ardnet/seal.c): the key file (both forms, and every way
 * it is refused, with the message), sealing and opening every datagram kind back to the exact
 * plain bytes (a packed one sealed in place), any one byte changed (header, seal block,
 * payload or tag) or another epoch's subkey refuses it, the exact bytes of a fixed sealed
 * datagram of either AEAD (the wire format), a subkey without AES never sealing or opening
 * it, the handshake's datagrams, and the table of sender epochs a receiver keeps.
 *
 *   test_seal --write-corpus DIR   write seeds for the fuzzer (tests/ardnet/fuzz_seal.c)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ard_common.h"
#include "ardnet.h"
#include "seal.h"
#include "wire.h"

static const char hex_key[] = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n";

static struct ards_key the_key(void)
{
    struct ards_key k;
    char why[160];
    assert_int_equal(ards_key_parse((const uint8_t *)hex_key, strlen(hex_key), &k, why, sizeof why),
                     0);
    return k;
}

static void test_both_key_forms_give_the_same_key(void **state)
{
    (void)state;
    struct ards_key a = the_key(), b;
    uint8_t raw[32];
    for (int i = 0; i < 32; i++)
        raw[i] = (uint8_t)(i + 0x80 * (i == 0)); /* not all hex digits: the raw form */
    char why[160];
    assert_int_equal(ards_key_parse(raw, 32, &b, why, sizeof why), 0);
    assert_memory_equal(b.k, raw, 32);
    assert_int_equal(a.k[31], 0x1f);
    assert_int_equal(a.k[0], 0);
    assert_true(a.id != b.id);
    struct ards_key c;
    assert_int_equal(ards_key_parse((const uint8_t *)hex_key, 64, &c, why, sizeof why), 0);
    assert_memory_equal(a.k, c.k, 32); /* without the newline */
    assert_int_equal(a.id, c.id);
}

static void refused(const char *text, size_t len, const char *expect)
{
    struct ards_key k;
    char why[160] = "";
    assert_int_equal(ards_key_parse((const uint8_t *)text, len, &k, why, sizeof why), -1);
    if (!strstr(why, expect))
        fail_msg("key '%.*s': '%s' does not say '%s'", (int)len, text, why, expect);
}

static void test_what_is_not_exactly_a_key_is_refused_with_the_reason(void **state)
{
    (void)state;
    refused(hex_key, 63, "63 hex digits, a key has 64 (truncated?)");
    refused(hex_key, 20, "20 hex digits");
    refused("", 0, "empty");
    char longer[80];
    snprintf(longer, sizeof longer, "%.64s00\n", hex_key);
    refused(longer, strlen(longer), "66 hex digits");
    char bad[80];
    snprintf(bad, sizeof bad, "%s", hex_key);
    bad[40] = 'x';
    refused(bad, strlen(bad), "byte 41 is not a hex digit");
    uint8_t raw33[33] = {0x80};
    refused((const char *)raw33, 33, "33 bytes");
}

static void test_key_file_mode_and_content_are_checked(void **state)
{
    (void)state;
    char dir[] = "/tmp/test_seal.XXXXXX", path[128];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/k", dir);
    assert_int_equal(ards_keygen(path), 0);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_int_equal(st.st_size, 65);
    struct ards_key k;
    assert_int_equal(ards_key_load(path, &k), 0);
    /* keygen never overwrites */
    assert_int_equal(ards_keygen(path), ARD_EINVAL);
    assert_non_null(strstr(ard_errdetail(), "exists"));
    struct ards_key k2;
    assert_int_equal(ards_key_load(path, &k2), 0);
    assert_memory_equal(k.k, k2.k, 32);
    /* readable by group or others: refused, naming the file and the mode */
    chmod(path, 0640);
    assert_int_equal(ards_key_load(path, &k2), ARD_EINVAL);
    assert_non_null(strstr(ard_errdetail(), path));
    assert_non_null(strstr(ard_errdetail(), "mode 0640 lets group or others at it"));
    chmod(path, 0400);
    assert_int_equal(ards_key_load(path, &k2), 0);
    /* truncated */
    chmod(path, 0600);
    assert_int_equal(truncate(path, 40), 0);
    assert_int_equal(ards_key_load(path, &k2), ARD_EINVAL);
    assert_non_null(strstr(ard_errdetail(), "not a key: it has 40 hex digits"));
    unlink(path);
    assert_int_equal(ards_key_load(path, &k2), ARD_EINVAL);
    assert_non_null(strstr(ard_errdetail(), "cannot read it"));
    rmdir(dir);
}

/* A whole packet, a fragment, a descriptor: plain bytes. */
static size_t plain_datagram(uint8_t *b, int kind)
{
    struct ardw_hdr h = {.conn_id = 7,
                         .size = 100,
                         .epoch = 0x1122334455667788ull,
                         .seq = 42,
                         .mono_ns = 5,
                         .real_ns = 6,
                         .type_hash = 9};
    if (kind == 1) {
        h.frag_count = 2;
        h.frag_index = 1;
        h.frag_off = 60;
    }
    if (kind == 2)
        return ardw_put_desc(b, &h, "u8[100]");
    size_t n = ardw_put_hdr(b, &h);
    size_t len = kind == 1 ? 40 : 100;
    for (size_t i = 0; i < len; i++)
        b[n + i] = (uint8_t)(i * 7 + 1);
    return n + len;
}

static void test_every_kind_seals_and_opens_to_its_plain_bytes(void **state)
{
    (void)state;
    struct ards_key k = the_key();
    struct ards_sub sub;
    ards_subkey(&k, 0x1122334455667788ull, &sub);
    for (int kind = 0; kind < 3; kind++) {
        uint8_t plain[2048], out[2048];
        size_t len = plain_datagram(plain, kind);
        size_t hlen = ardw_get16(plain + 6);
        size_t n = ards_seal(&sub, k.id, 3, 1000 + (uint64_t)kind, plain, hlen, plain + hlen,
                             len - hlen, out);
        assert_int_equal(n, len + ARDS_OVERHEAD);
        assert_int_equal(out[4], ARDS_VERSION);
        assert_int_equal(ardw_get16(out + 6), hlen + 16);
        /* the header stays readable (connection id, epoch, sequence), the payload not */
        assert_memory_equal(out + 8, plain + 8, hlen - 8);
        assert_memory_not_equal(out + hlen + 16, plain + hlen, 16);
        struct ards_info i;
        assert_true(ards_peek(out, n, &i));
        assert_true(i.hlen == hlen + 16 && i.lane == 3 && i.ctr == 1000 + (uint64_t)kind &&
                    i.key_id == k.id && i.epoch == 0x1122334455667788ull);
        /* one byte changed anywhere: refused */
        for (size_t at = 0; at < n; at++) {
            uint8_t copy[2048];
            memcpy(copy, out, n);
            copy[at] ^= 0x20;
            struct ards_info j;
            size_t plen;
            if (ards_peek(copy, n, &j) && ards_open(&sub, copy, n, &j, &plen))
                fail_msg("kind %d: byte %zu changed, and it opened", kind, at);
        }
        /* another epoch's subkey: refused */
        struct ards_sub other;
        uint8_t copy[2048];
        ards_subkey(&k, 0x1122334455667789ull, &other);
        memcpy(copy, out, n);
        size_t plen;
        assert_null(ards_open(&other, copy, n, &i, &plen));
        uint8_t *p = ards_open(&sub, out, n, &i, &plen);
        assert_non_null(p);
        assert_int_equal(plen, len);
        assert_memory_equal(p, plain, len);
    }
}

/* AES-256-GCM (lane's top byte 1; where this CPU has AES-NI): the same framing, opens to the
 * plain bytes, any byte changed refuses it, and it does not open as ChaCha20 or vice versa. */
static void test_aes_datagrams_seal_and_open_where_the_cpu_has_it(void **state)
{
    (void)state;
    if (!ards_aes_available())
        skip();
    struct ards_key k = the_key();
    struct ards_sub sub;
    uint8_t plain[2048], out[2048];
    ards_subkey(&k, 0x1122334455667788ull, &sub);
    size_t len = plain_datagram(plain, 0), hlen = ARDW_HDR_SIZE;
    size_t n = ards_seal(&sub, k.id, 3u | ARDS_ALG_AES << 24, 77, plain, hlen, plain + hlen,
                         len - hlen, out);
    assert_int_equal(n, len + ARDS_OVERHEAD);
    struct ards_info i;
    assert_true(ards_peek(out, n, &i));
    assert_true(i.alg == ARDS_ALG_AES && i.lane == (3u | ARDS_ALG_AES << 24));
    for (size_t at = 0; at < n; at++) {
        uint8_t copy[2048];
        memcpy(copy, out, n);
        copy[at] ^= 0x01;
        struct ards_info j;
        size_t plen;
        if (ards_peek(copy, n, &j) && ards_open(&sub, copy, n, &j, &plen))
            fail_msg("AES: byte %zu changed, and it opened", at);
    }
    /* the AEAD byte is authenticated: the same bytes claimed as ChaCha20 do not open */
    uint8_t copy[2048];
    memcpy(copy, out, n);
    copy[hlen + 4 + 3] = ARDS_ALG_CHACHA; /* lane's top byte, in the seal block */
    struct ards_info j;
    size_t plen;
    assert_true(ards_peek(copy, n, &j));
    assert_null(ards_open(&sub, copy, n, &j, &plen));
    uint8_t *p = ards_open(&sub, out, n, &i, &plen);
    assert_non_null(p);
    assert_int_equal(plen, len);
    assert_memory_equal(p, plain, len);
}

/* The wire format, pinned: a datagram sealed with a fixed key, epoch, lane and counter is
 * exactly these bytes (ChaCha20-Poly1305, and AES-256-GCM where the CPU has it), and opens to
 * its plain bytes. (AES's key schedule is made once per subkey: the bytes are those of sealing
 * with the subkey itself.) */
static const char chacha_vector[] =
    "4152444e020028006d7a8794a1aebbc8d5e2effc09162330d4c3b2a1050000000807060504030201d48ce7a0a8"
    "e9ad3f0bba4ac1b82b0c4b78aa5c999b2bf0d6a9cd678cefea59e8ec57d9f546d08da88adc5bd7c3452306193814"
    "e71c68bfb794350e020dc8b2c6e5c8b3af6efc58413562deb9a2495fdb";
static const char aes_vector[] =
    "4152444e020028006d7a8794a1aebbc8d5e2effc09162330d4c3b2a1050000010807060504030201c9da7bf449"
    "e6702accf27a036c1c45c7fddbaecc287432170dd48818a66f230aabf1cd91f225e15ca5bfc225ffc2bd930bd55f"
    "3b57535c5f01ac9c781920b98dd269dfeb7276c07b3cf3eb634f41ad07";

static void vector_plain(uint8_t *plain)
{
    for (int i = 0; i < 88; i++)
        plain[i] = (uint8_t)(i * 13 + 5);
    ardw_put32(plain, ARDW_MAGIC_WORD);
    plain[4] = ARDW_WIRE_VERSION;
    plain[5] = 0;
    ardw_put16(plain + 6, 24);
}

static void check_vector(unsigned alg, const char *vector)
{
    struct ards_key k;
    for (int i = 0; i < 32; i++)
        k.k[i] = (uint8_t)i;
    k.id = 0xa1b2c3d4u;
    struct ards_sub sub;
    ards_subkey(&k, 0x1122334455667788ull, &sub);
    uint8_t plain[88], want[120], out[200];
    vector_plain(plain);
    for (size_t i = 0; i < sizeof want; i++) {
        unsigned v;
        assert_int_equal(sscanf(vector + 2 * i, "%2x", &v), 1);
        want[i] = (uint8_t)v;
    }
    size_t n = ards_seal(&sub, k.id, 5u | alg << 24, 0x0102030405060708ull, plain, 24, plain + 24,
                         64, out);
    assert_int_equal(n, sizeof want);
    assert_memory_equal(out, want, sizeof want);
    struct ards_info i;
    size_t plen;
    assert_true(ards_peek(out, n, &i));
    uint8_t *p = ards_open(&sub, out, n, &i, &plen);
    assert_non_null(p);
    assert_int_equal(plen, sizeof plain);
    assert_memory_equal(p, plain, sizeof plain);
    ards_sub_wipe(&sub);
    for (size_t b = 0; b < sizeof sub; b++)
        assert_int_equal(((const uint8_t *)&sub)[b], 0);
}

static void test_the_wire_format_is_pinned_by_fixed_vectors(void **state)
{
    (void)state;
    check_vector(ARDS_ALG_CHACHA, chacha_vector);
    if (ards_aes_available())
        check_vector(ARDS_ALG_AES, aes_vector);
}

/* A subkey made without AES-256-GCM (a CPU without AES-NI): an AES lane is sealed with
 * ChaCha20-Poly1305 instead (saying so in its lane), and an AES datagram does not open. */
static void test_a_subkey_without_aes_never_seals_or_opens_aes(void **state)
{
    (void)state;
    struct ards_key k = the_key();
    struct ards_sub sub, noaes;
    ards_subkey(&k, 9, &sub);
    noaes = sub;
    noaes.has_aes = false;
    uint8_t plain[2048], out[2048], copy[2048];
    size_t len = plain_datagram(plain, 0), hlen = ARDW_HDR_SIZE;
    size_t n = ards_seal(&noaes, k.id, 3u | ARDS_ALG_AES << 24, 8, plain, hlen, plain + hlen,
                         len - hlen, out);
    struct ards_info i;
    size_t plen;
    assert_true(ards_peek(out, n, &i));
    assert_true(i.alg == ARDS_ALG_CHACHA && i.lane == 3u);
    memcpy(copy, out, n);
    assert_non_null(ards_open(&noaes, copy, n, &i, &plen));
    assert_memory_equal(copy + ARDS_SEAL_BYTES, plain, len);
    if (!sub.has_aes)
        return;
    n = ards_seal(&sub, k.id, 3u | ARDS_ALG_AES << 24, 9, plain, hlen, plain + hlen, len - hlen,
                  out);
    assert_true(ards_peek(out, n, &i));
    assert_true(i.alg == ARDS_ALG_AES);
    memcpy(copy, out, n);
    assert_null(ards_open(&noaes, copy, n, &i, &plen));
    assert_non_null(ards_open(&sub, out, n, &i, &plen));
}

static void test_a_packed_datagram_is_sealed_in_place(void **state)
{
    (void)state;
    struct ards_key k = the_key();
    struct ards_sub sub;
    ards_subkey(&k, 77, &sub);
    uint8_t buf[512], plain[512];
    uint8_t *pb = buf + ARDS_SEAL_BYTES;
    size_t len = ardw_pack_begin(pb, 77);
    uint8_t pay[3][20];
    for (int e = 0; e < 3; e++) {
        memset(pay[e], 0x30 + e, sizeof pay[e]);
        struct ardw_hdr h = {.conn_id = 10u + (uint32_t)e, .size = 20, .seq = 5};
        len = ardw_pack_add(pb, len, &h, pay[e]);
    }
    memcpy(plain, pb, len);
    size_t n = ards_seal(&sub, k.id, 1, 99, pb, ARDW_PACK_HDR_SIZE, pb + ARDW_PACK_HDR_SIZE,
                         len - ARDW_PACK_HDR_SIZE, buf);
    assert_int_equal(n, len + ARDS_OVERHEAD);
    struct ards_info i;
    size_t plen;
    assert_true(ards_peek(buf, n, &i));
    uint8_t *p = ards_open(&sub, buf, n, &i, &plen);
    assert_non_null(p);
    assert_int_equal(plen, len);
    assert_memory_equal(p, plain, len);
    uint64_t epoch;
    unsigned count;
    assert_int_equal(ardw_parse_packed(p, plen, &epoch, &count), ARDW_OK);
    assert_true(epoch == 77 && count == 3);
}

static void test_the_handshake_datagrams(void **state)
{
    (void)state;
    struct ards_key k = the_key();
    struct ards_sub subb, suba;
    ards_subkey(&k, 200, &subb);
    ards_subkey(&k, 100, &suba);
    uint8_t nonce[16], plain[64], out[128];
    ards_random(nonce, sizeof nonce);
    /* B (epoch 200) challenges A (epoch 100) */
    size_t n = ards_put_challenge(plain, 200, 100, nonce, ARDS_CAP_AES);
    n = ards_seal(&subb, k.id, 1, 5, plain, ARDS_HS_HDR, plain + ARDS_HS_HDR, n - ARDS_HS_HDR, out);
    assert_int_equal(n, ARDS_CHALLENGE_LEN);
    struct ards_info i;
    size_t plen;
    assert_true(ards_peek(out, n, &i));
    assert_true(i.epoch == 200);
    uint8_t *p = ards_open(&subb, out, n, &i, &plen);
    assert_non_null(p);
    unsigned flags;
    uint64_t theirs, t;
    uint8_t got[16];
    assert_true(ards_get_handshake(p, plen, &flags, &theirs, got, &t));
    assert_true(flags == ARDS_FLAG_CHALLENGE && theirs == 100 && t == ARDS_CAP_AES);
    assert_memory_equal(got, nonce, 16);
    /* A answers, with its time */
    n = ards_put_answer(plain, 100, 200, got, 123456789);
    n = ards_seal(&suba, k.id, 2, 6, plain, ARDS_HS_HDR, plain + ARDS_HS_HDR, n - ARDS_HS_HDR, out);
    assert_int_equal(n, ARDS_ANSWER_LEN);
    assert_true(ards_peek(out, n, &i));
    p = ards_open(&suba, out, n, &i, &plen);
    assert_non_null(p);
    assert_true(ards_get_handshake(p, plen, &flags, &theirs, got, &t));
    assert_true(flags == ARDS_FLAG_ANSWER && theirs == 200 && t == 123456789);
    assert_memory_equal(got, nonce, 16);
    /* a cut or lengthened one is not a handshake */
    assert_false(ards_get_handshake(p, plen - 1, &flags, &theirs, got, &t));
    p[5] = 0x18;
    assert_false(ards_get_handshake(p, plen, &flags, &theirs, got, &t));
}

static void test_the_epoch_table_keeps_proven_epochs(void **state)
{
    (void)state;
    static struct ards_table t;
    unsigned dropped;
    for (int e = 0; e < ARDS_PEERS; e++) {
        struct ards_peer *p = ards_take_slot(&t, &dropped);
        assert_int_equal(dropped, 0);
        p->used = true;
        p->epoch = (uint64_t)e + 1;
        p->used_ns = e;
        p->proven = e < 2; /* epochs 1 and 2 are proven */
        p->hold_len[1] = e == 2 ? 10 : 0;
        memset(p->sub.k, 0xa5, sizeof p->sub.k);
    }
    assert_non_null(ards_find(&t, 5));
    assert_null(ards_find(&t, 99));
    /* a new epoch takes the least recently used one not proven: epoch 3, which held one */
    struct ards_peer *p = ards_take_slot(&t, &dropped);
    assert_int_equal(dropped, 1);
    assert_false(p->used);
    for (size_t b = 0; b < sizeof p->sub.k; b++)
        assert_int_equal(p->sub.k[b], 0); /* the given-up epoch's subkey is wiped */
    assert_null(ards_find(&t, 3));
    assert_non_null(ards_find(&t, 1));
    assert_non_null(ards_find(&t, 2));
}

static int write_corpus(const char *dir)
{
    struct ards_key k = the_key();
    struct ards_sub sub;
    char path[512];
    int n = 0;
    for (int kind = 0; kind < 3; kind++) {
        uint8_t plain[2048], out[2100];
        size_t len = plain_datagram(plain, kind);
        size_t hlen = ardw_get16(plain + 6);
        ards_subkey(&k, ardw_get64(plain + 16), &sub);
        size_t s = ards_seal(&sub, k.id, 1, 7, plain, hlen, plain + hlen, len - hlen, out + 1);
        out[0] = 1; /* the fuzzer's first byte: open */
        snprintf(path, sizeof path, "%s/seal%d", dir, n++);
        FILE *f = fopen(path, "wb");
        if (!f || fwrite(out, 1, s + 1, f) != s + 1 || fclose(f) != 0)
            return 1;
    }
    snprintf(path, sizeof path, "%s/seal%d", dir, n++);
    FILE *f = fopen(path, "wb");
    if (!f || fputc(0, f) == EOF || fputs(hex_key, f) == EOF || fclose(f) != 0)
        return 1;
    return 0;
}

int main(int argc, char **argv)
{
    if (ards_init() < 0)
        return 1;
    if (argc == 3 && strcmp(argv[1], "--write-corpus") == 0)
        return write_corpus(argv[2]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_both_key_forms_give_the_same_key),
        cmocka_unit_test(test_what_is_not_exactly_a_key_is_refused_with_the_reason),
        cmocka_unit_test(test_key_file_mode_and_content_are_checked),
        cmocka_unit_test(test_every_kind_seals_and_opens_to_its_plain_bytes),
        cmocka_unit_test(test_aes_datagrams_seal_and_open_where_the_cpu_has_it),
        cmocka_unit_test(test_the_wire_format_is_pinned_by_fixed_vectors),
        cmocka_unit_test(test_a_subkey_without_aes_never_seals_or_opens_aes),
        cmocka_unit_test(test_a_packed_datagram_is_sealed_in_place),
        cmocka_unit_test(test_the_handshake_datagrams),
        cmocka_unit_test(test_the_epoch_table_keeps_proven_epochs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
