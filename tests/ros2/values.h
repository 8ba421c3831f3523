/*
 * values.h - the test messages of tests/ros2: every value a function of a counter, exact in its
 * type and never the same with its bytes swapped, so that a reader checks each field. Shared by
 * the DDS peers (idlc's structs; the Fast DDS peer, C++, copies fastddsgen's classes into these
 * structs) and the ardnet side (the same layouts as type descriptors). Valid C and C++.
 */
#ifndef ROS2_VALUES_H
#define ROS2_VALUES_H

#include <stdint.h>
#include <string.h>

/* "q:f64[7] qd:f64[7]": q[0] is the counter. */
struct arm {
    double q[7];
    double qd[7];
};
#define ARM_DESC "q:f64[7] qd:f64[7]"

struct all {
    uint64_t counter;
    int8_t a;
    uint8_t b;
    int16_t c;
    uint16_t d;
    int32_t e;
    uint32_t f;
    int64_t g;
    float x;
    double y;
    int8_t ai[3];
    uint16_t au[5];
    float af[3];
    double ad[2];
    int64_t ag[2];
    uint8_t ab[7];
};
#define ALL_DESC                                                                                   \
    "counter:u64 a:i8 b:u8 c:i16 d:u16 e:i32 f:u32 g:i64 x:f32 y:f64 ai:i8[3] au:u16[5] "          \
    "af:f32[3] ad:f64[2] ag:i64[2] ab:u8[7]"

static inline void fill_arm(struct arm *p, uint64_t n)
{
    memset(p, 0, sizeof *p);
    p->q[0] = (double)n;
    for (int k = 1; k < 7; k++)
        p->q[k] = (double)(n % 1000003) * 0.125 - 17.75 * k;
    for (int k = 0; k < 7; k++)
        p->qd[k] = -(double)(n % 999983) * 0.5 + 1024.25 * k;
}

static inline uint64_t arm_counter(const struct arm *p)
{
    return (uint64_t)p->q[0];
}

static inline void fill_all(struct all *p, uint64_t n)
{
    memset(p, 0, sizeof *p);
    p->counter = n;
    p->a = (int8_t)(-(int)(n % 100) - 1);
    p->b = (uint8_t)(n * 7 + 3);
    p->c = (int16_t)(-(int32_t)(n % 30000) - 2);
    p->d = (uint16_t)(0x1234 + n * 5);
    p->e = -(int32_t)(n % 100000007) - 0x01020304;
    p->f = (uint32_t)(0x0a0b0c0d + n * 11);
    p->g = -(int64_t)(n * 3) - 0x0102030405060708LL;
    p->x = (float)(n % 65521) / 8.0f - 0.5f;
    p->y = (double)(n % 1000003) * 0.25 - 1024.5;
    for (int k = 0; k < 3; k++)
        p->ai[k] = (int8_t)(-(int)(n % 50) - 10 * k - 1);
    for (int k = 0; k < 5; k++)
        p->au[k] = (uint16_t)(0x0102 + n * 3 + (uint64_t)k * 0x0101);
    for (int k = 0; k < 3; k++)
        p->af[k] = (float)(n % 4093) * 0.75f - 3.0f * (float)k;
    for (int k = 0; k < 2; k++)
        p->ad[k] = (double)(n % 999983) * -0.0625 + 7.5 * k;
    for (int k = 0; k < 2; k++)
        p->ag[k] = (int64_t)(n * (uint64_t)(k + 5)) + 0x0807060504030201LL;
    for (int k = 0; k < 7; k++)
        p->ab[k] = (uint8_t)(n + (uint64_t)k * 37);
}

/* The first field of a packet that is not the one of its counter, or NULL. */
static inline const char *bad_arm(const struct arm *got)
{
    struct arm want;
    fill_arm(&want, arm_counter(got));
    if (memcmp(got->q, want.q, sizeof want.q) != 0)
        return "q";
    if (memcmp(got->qd, want.qd, sizeof want.qd) != 0)
        return "qd";
    return NULL;
}

static inline const char *bad_all(const struct all *got)
{
    struct all want;
    fill_all(&want, got->counter);
#define CHECK(f)                                                                                   \
    do {                                                                                           \
        if (memcmp(&got->f, &want.f, sizeof want.f) != 0)                                          \
            return #f;                                                                             \
    } while (0)
    CHECK(a);
    CHECK(b);
    CHECK(c);
    CHECK(d);
    CHECK(e);
    CHECK(f);
    CHECK(g);
    CHECK(x);
    CHECK(y);
    CHECK(ai);
    CHECK(au);
    CHECK(af);
    CHECK(ad);
    CHECK(ag);
    CHECK(ab);
#undef CHECK
    return NULL;
}

/* The large samples: a counter, then bytes of a pseudo-random stream seeded by it (every byte
 * depends on its position and the counter, so a fragment lost, repeated or put in the wrong place
 * shows). image is 1 MiB in all ("counter:u64 data:u8[1048568]"), cloud 4 MiB. */
#define IMAGE_SIZE (1u << 20)
#define CLOUD_SIZE (4u << 20)
#define IMAGE_DESC "counter:u64 data:u8[1048568]"
#define CLOUD_DESC "counter:u64 data:u8[4194296]"

static inline uint64_t big_next(uint64_t *s)
{
    uint64_t x = *s; /* xorshift64* */
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1DULL;
}

/* Fill a large sample of size bytes (a multiple of 8) for counter n. */
static inline void fill_big(void *p, size_t size, uint64_t n)
{
    uint8_t *b = (uint8_t *)p;
    uint64_t s = n * 0x9E3779B97F4A7C15ULL + 1;
    memcpy(b, &n, 8);
    for (size_t o = 8; o + 8 <= size; o += 8) {
        uint64_t v = big_next(&s);
        memcpy(b + o, &v, 8);
    }
}

static inline uint64_t big_counter(const void *p)
{
    uint64_t n;
    memcpy(&n, p, 8);
    return n;
}

/* The offset of the first byte of a large sample that is not its counter's, or 0 when all are. */
static inline size_t bad_big(const void *p, size_t size)
{
    const uint8_t *b = (const uint8_t *)p;
    uint64_t s = big_counter(p) * 0x9E3779B97F4A7C15ULL + 1;
    for (size_t o = 8; o + 8 <= size; o += 8) {
        uint64_t v = big_next(&s);
        if (memcmp(b + o, &v, 8) != 0)
            return o;
    }
    return 0;
}

#endif
