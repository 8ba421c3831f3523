/*
 * ardnet_sealcost.c - what sealing costs per datagram, next to what sending it costs: for
 * datagrams of 120 bytes (a 64-byte packet with its 56-byte header), 1080 (1 KiB) and 1472
 * (the default largest), the time of sealing one and of opening it (ChaCha20-Poly1305-IETF,
 * and AES-256-GCM where this CPU has AES-NI, each called as ardnet calls it: ChaCha20 with the
 * subkey itself, AES with its key schedule made once per subkey (libsodium's beforenm, then
 * the _afternm calls); and, for comparison, AES with the key schedule made per call (the
 * plain _detached calls)), and of one sendto + recvfrom pair of the same datagram over
 * loopback UDP (the baseline of one hop).
 * Median and, in parentheses, minimum of 9 rounds of 20000 each (the columns' rounds
 * interleaved), in ns; on a loaded machine the minimum is the steadier figure of the AEADs.
 * Usage: ardnet_sealcost [ROUNDS] (docs/performance.md, "Sealed links").
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sodium.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define N 20000

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return v[n / 2];
}

enum what {
    CHACHA_SEAL,
    CHACHA_OPEN,
    AES_SEAL,
    AES_OPEN,
    AES_SEAL_PERCALL,
    AES_OPEN_PERCALL,
    SYSCALL
};
#define NWHAT 7

static int tx = -1, rx = -1;

static double round_ns(enum what w, size_t len)
{
    static uint8_t key[32], nonce[12], in[2048], out[2048 + 16], mac[16], dec[2048];
    static crypto_aead_aes256gcm_state st;
    static int ready;
    if (!ready) {
        randombytes_buf(key, sizeof key);
        randombytes_buf(in, sizeof in);
        if (crypto_aead_aes256gcm_is_available())
            crypto_aead_aes256gcm_beforenm(&st, key);
        ready = 1;
    }
    size_t ad = len < 200 ? 40 : 72, body = len - ad - 32; /* header+seal block as AD */
    unsigned long long mlen;
    /* What the open cases open: sealed once, with nonce 0, by the same algorithm. */
    memset(nonce, 0, sizeof nonce);
    if (w == AES_OPEN || w == AES_OPEN_PERCALL)
        crypto_aead_aes256gcm_encrypt_detached(out + ad, mac, &mlen, in + ad, body, in, ad, NULL,
                                               nonce, key);
    else
        crypto_aead_chacha20poly1305_ietf_encrypt_detached(out + ad, mac, NULL, in + ad, body, in,
                                                           ad, NULL, nonce, key);
    memcpy(out, in, ad);
    int64_t t0 = now_ns();
    for (int i = 0; i < N; i++) {
        nonce[0] = (uint8_t)i;
        switch (w) {
        case CHACHA_SEAL:
            crypto_aead_chacha20poly1305_ietf_encrypt_detached(out + ad, mac, NULL, in + ad, body,
                                                               in, ad, NULL, nonce, key);
            break;
        case CHACHA_OPEN:
            nonce[0] = 0;
            if (crypto_aead_chacha20poly1305_ietf_decrypt_detached(dec, NULL, out + ad, body, mac,
                                                                   out, ad, nonce, key) != 0)
                abort();
            break;
        case AES_SEAL:
            crypto_aead_aes256gcm_encrypt_detached_afternm(out + ad, mac, &mlen, in + ad, body, in,
                                                           ad, NULL, nonce, &st);
            break;
        case AES_OPEN:
            nonce[0] = 0;
            if (crypto_aead_aes256gcm_decrypt_detached_afternm(dec, NULL, out + ad, body, mac, out,
                                                               ad, nonce, &st) != 0)
                abort();
            break;
        case AES_SEAL_PERCALL:
            crypto_aead_aes256gcm_encrypt_detached(out + ad, mac, &mlen, in + ad, body, in, ad,
                                                   NULL, nonce, key);
            break;
        case AES_OPEN_PERCALL:
            nonce[0] = 0;
            if (crypto_aead_aes256gcm_decrypt_detached(dec, NULL, out + ad, body, mac, out, ad,
                                                       nonce, key) != 0)
                abort();
            break;
        case SYSCALL:
            if (send(tx, in, len, 0) != (ssize_t)len ||
                recv(rx, out, sizeof out, 0) != (ssize_t)len)
                abort();
            break;
        }
    }
    return (double)(now_ns() - t0) / N;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 9;
    if (sodium_init() < 0 || rounds < 1 || rounds > 99)
        return 100;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    rx = socket(AF_INET, SOCK_DGRAM, 0);
    tx = socket(AF_INET, SOCK_DGRAM, 0);
    if (bind(rx, (struct sockaddr *)&a, sizeof a) < 0 ||
        getsockname(rx, (struct sockaddr *)&a, &alen) < 0 ||
        connect(tx, (struct sockaddr *)&a, sizeof a) < 0)
        return 111;
    static const size_t lens[] = {120, 1080, 1472};
    static const char *names[] = {"chacha20poly1305 seal",
                                  "chacha20poly1305 open",
                                  "aes256gcm seal",
                                  "aes256gcm open",
                                  "aes256gcm seal (schedule per call)",
                                  "aes256gcm open (schedule per call)",
                                  "sendto+recvfrom"};
    int aes = crypto_aead_aes256gcm_is_available();
    printf("# ns per datagram, median (minimum) of %d rounds of %d; AES-NI %s\n", rounds, N,
           aes ? "available" : "not available (AES-256-GCM not measured)");
    printf("| datagram |");
    for (int w = 0; w < NWHAT; w++)
        printf(" %s |", names[w]);
    printf("\n|---|");
    for (int w = 0; w < NWHAT; w++)
        printf("---|");
    printf("\n");
    for (size_t l = 0; l < 3; l++) {
        /* the rounds of all columns interleaved: a change of the machine's load meets them alike */
        static double v[NWHAT][99];
        for (int r = 0; r < rounds; r++)
            for (int w = 0; w < NWHAT; w++)
                if (aes || w == CHACHA_SEAL || w == CHACHA_OPEN || w == SYSCALL)
                    v[w][r] = round_ns((enum what)w, lens[l]);
        printf("| %zu B |", lens[l]);
        for (int w = 0; w < NWHAT; w++) {
            if (!aes && w != CHACHA_SEAL && w != CHACHA_OPEN && w != SYSCALL)
                printf(" - |");
            else {
                double med = median(v[w], rounds); /* (sorts: v[w][0] is then the minimum) */
                printf(" %.0f (%.0f) |", med, v[w][0]);
            }
        }
        printf("\n");
    }
    return 0;
}
