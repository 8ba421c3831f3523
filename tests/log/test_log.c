/* test_log.c - the recording file API (include/ardnet_log.h, src/log/): write, read back,
 * and refuse damaged files with the offset and the cause. */
#include "ardnet_log.h"
#include "ardros2.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TYPE "q:f64[7] tick:u32 flags:u8[4] c:i16 Name:i8"

struct pkt {
    double q[7];
    uint32_t tick;
    uint8_t flags[4];
    int16_t c;
    int8_t name;
};

static char dir[64];

static const char *tmp(const char *name)
{
    static char p[128];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return p;
}

static void fill(struct pkt *p, int k)
{
    memset(p, 0, sizeof *p);
    for (int i = 0; i < 7; i++)
        p->q[i] = k * 0.5 + i;
    p->tick = (uint32_t)k;
    p->flags[3] = (uint8_t)k;
    p->c = (int16_t)-k;
    p->name = (int8_t)(k & 63);
}

/* Write n packets of "arm" and n/2 opaque "raw" ones; 1 ms apart from t0. */
static void write_file(const char *path, const char *comp, size_t queue, int n, size_t chunk)
{
    struct ard_logw_opts o = {
        .compression = comp, .queue_bytes = queue, .chunk_size = chunk, .domain = "testdom"};
    ard_logw *w = ard_logw_open(path, &o);
    assert_non_null(w);
    int arm = ard_logw_add(w, "arm", TYPE, sizeof(struct pkt));
    int raw = ard_logw_add(w, "raw", NULL, 5);
    assert_int_equal(arm, 0);
    assert_int_equal(raw, 1);
    for (int k = 1; k <= n; k++) {
        struct pkt p;
        fill(&p, k);
        int64_t t = 1000000000000ll + k * 1000000ll;
        assert_int_equal(ard_logw_write(w, arm, &p, (uint64_t)k, t + 7, t), 0);
        if (k % 2 == 0) {
            uint8_t b[5] = {1, 2, 3, 4, (uint8_t)k};
            assert_int_equal(ard_logw_write(w, raw, b, (uint64_t)k / 2, t + 9, t + 1), 0);
        }
    }
    ard_logw_missed(w, arm, 3);
    assert_int_equal(ard_logw_close(w), 0);
}

static void check_file(const char *path, int n, bool complete)
{
    ard_logr *r = ard_logr_open(path);
    assert_non_null(r);
    struct ard_log_summary s;
    ard_logr_summary(r, &s);
    assert_int_equal(s.complete, complete);
    assert_int_equal(ard_logr_nconns(r), 2);
    const struct ard_log_conn *arm = ard_logr_conn(r, 0), *raw = ard_logr_conn(r, 1);
    assert_string_equal(arm->name, "arm");
    assert_string_equal(arm->type, TYPE);
    assert_int_equal(arm->size, sizeof(struct pkt));
    assert_string_equal(raw->type, "");
    assert_true(strstr(arm->schema, "float64[7] q\n") != NULL);
    assert_true(strstr(arm->schema, "int8 f4\n") != NULL); /* "Name" is no ROS 2 name */
    if (complete) {
        assert_int_equal(arm->count, (uint64_t)n);
        assert_int_equal(raw->count, (uint64_t)n / 2);
        assert_int_equal(arm->missed, 3);
        assert_string_equal(ard_logr_meta(r, "ardnet", "domain"), "testdom");
    }
    struct ard_log_msg m;
    int k_arm = 0, k_raw = 0, rc;
    while ((rc = ard_logr_next(r, &m)) == 1) {
        if (m.conn == 0) {
            k_arm++;
            struct pkt want;
            fill(&want, k_arm);
            assert_memory_equal(m.packet, &want, sizeof want);
            assert_int_equal(m.seq, (uint64_t)k_arm);
            int64_t t = 1000000000000ll + k_arm * 1000000ll;
            assert_int_equal(m.real_ns, t);
            assert_int_equal(m.log_ns, t + 7);
        } else {
            k_raw++;
            assert_int_equal(((const uint8_t *)m.packet)[4], (uint8_t)(2 * k_raw));
        }
    }
    assert_int_equal(rc, 0);
    assert_int_equal((uint64_t)k_arm, arm->count);
    assert_int_equal((uint64_t)k_raw, raw->count);
    ard_logr_close(r);
}

static void test_roundtrip_every_mode(void **state)
{
    (void)state;
    const char *comps[] = {NULL, "zstd"};
    size_t queues[] = {0, 1 << 20};
    for (int c = 0; c < 2; c++)
        for (int q = 0; q < 2; q++) {
            write_file(tmp("rt.mcap"), comps[c], queues[q], 3000, 4096);
            check_file(tmp("rt.mcap"), 3000, true);
        }
}

static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    rewind(f);
    uint8_t *b = malloc(*len);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, *len, f), *len);
    fclose(f);
    return b;
}

static void test_foreign_file_refused_with_offset(void **state)
{
    (void)state;
    const char *txt = "this is not a recording\n";
    assert_int_equal(ard_log_check(txt, strlen(txt)), ARD_ESTALE);
    assert_non_null(strstr(ard_errdetail(), "at offset 0: not an MCAP file"));
    FILE *f = fopen(tmp("foreign.txt"), "w");
    fputs(txt, f);
    fclose(f);
    assert_null(ard_logr_open(tmp("foreign.txt")));
    assert_int_equal(ard_lasterror(), ARD_ESTALE);
    assert_non_null(strstr(ard_errdetail(), "foreign.txt"));
    assert_null(ard_logr_open(tmp("does-not-exist")));
    assert_int_equal(ard_lasterror(), ARD_ENOENT);
}

/* Every single-bit flip in a complete file is either harmless or refused with an offset;
 * flips in the chunk data are always caught (CRC or decompression). */
static void test_bit_flips_refused_never_crash(void **state)
{
    (void)state;
    for (int c = 0; c < 2; c++) {
        write_file(tmp("flip.mcap"), c ? "zstd" : NULL, 0, 60, 1 << 20);
        size_t len;
        uint8_t *b = slurp(tmp("flip.mcap"), &len);
        assert_int_equal(ard_log_check(b, len), 0);
        size_t refused = 0;
        for (size_t i = 0; i < len; i++) {
            for (int bit = 0; bit < 8; bit += 3) {
                b[i] ^= (uint8_t)(1u << bit);
                int rc = ard_log_check(b, len);
                b[i] ^= (uint8_t)(1u << bit);
                if (rc != 0) {
                    assert_int_equal(rc, ARD_ESTALE);
                    assert_non_null(strstr(ard_errdetail(), "at offset "));
                    refused++;
                }
            }
        }
        assert_true(refused > len / 2);
        free(b);
    }
}

/* A file cut anywhere after its header is read up to its last complete record; cut inside
 * the magic or header it is refused. */
static void test_truncated_read_up_to_last_chunk(void **state)
{
    (void)state;
    write_file(tmp("cut.mcap"), NULL, 0, 400, 2048);
    size_t len;
    uint8_t *b = slurp(tmp("cut.mcap"), &len);
    uint64_t prev = 0;
    for (size_t n = 0; n < len; n += 7) {
        FILE *f = fopen(tmp("cut2.mcap"), "wb");
        fwrite(b, 1, n, f);
        fclose(f);
        ard_logr *r = ard_logr_open(tmp("cut2.mcap"));
        if (n < 60) {
            if (!r)
                assert_non_null(strstr(ard_errdetail(), "at offset "));
            ard_logr_close(r);
            continue;
        }
        assert_non_null(r);
        struct ard_log_summary s;
        ard_logr_summary(r, &s);
        assert_false(s.complete);
        assert_true(s.cut[0] != '\0');
        assert_true(s.messages >= prev); /* never fewer messages from a longer file */
        prev = s.messages;
        struct ard_log_msg m;
        uint64_t k = 0;
        while (ard_logr_next(r, &m) == 1)
            k++;
        assert_int_equal(k, s.messages);
        ard_logr_close(r);
    }
    assert_true(prev > 300);
    free(b);
}

static void test_seek_skips_earlier_chunks(void **state)
{
    (void)state;
    write_file(tmp("seek.mcap"), "zstd", 0, 2000, 4096);
    ard_logr *r = ard_logr_open(tmp("seek.mcap"));
    assert_non_null(r);
    int64_t t = 1000000000000ll + 1500 * 1000000ll + 7;
    assert_int_equal(ard_logr_seek(r, t), 0);
    struct ard_log_msg m;
    assert_int_equal(ard_logr_next(r, &m), 1);
    assert_int_equal(m.conn, 0);
    assert_int_equal(m.seq, 1500);
    assert_int_equal(ard_logr_seek(r, 0), 0);
    assert_int_equal(ard_logr_next(r, &m), 1);
    assert_int_equal(m.seq, 1);
    ard_logr_close(r);
}

static void test_rotate_declares_channels_again(void **state)
{
    (void)state;
    ard_logw *w = ard_logw_open(tmp("r0.mcap"), &(struct ard_logw_opts){.queue_bytes = 1 << 20});
    assert_non_null(w);
    int ch = ard_logw_add(w, "a", "x:f32", 4);
    float v = 1;
    assert_int_equal(ard_logw_write(w, ch, &v, 1, 10, 5), 0);
    assert_int_equal(ard_logw_rotate(w, tmp("r1.mcap")), 0);
    v = 2;
    assert_int_equal(ard_logw_write(w, ch, &v, 2, 20, 15), 0);
    assert_int_equal(ard_logw_close(w), 0);
    for (int i = 0; i < 2; i++) {
        ard_logr *r = ard_logr_open(tmp(i ? "r1.mcap" : "r0.mcap"));
        assert_non_null(r);
        assert_int_equal(ard_logr_nconns(r), 1);
        struct ard_log_msg m;
        assert_int_equal(ard_logr_next(r, &m), 1);
        float got;
        memcpy(&got, m.packet, 4);
        assert_true(got == (float)(i + 1));
        assert_int_equal(ard_logr_next(r, &m), 0);
        ard_logr_close(r);
    }
}

/* ard_logw_finish ends the file; ard_logw_written then gives what the files hold per channel
 * (over a rotation), and every other call but close is refused. */
static void test_finish_then_written_counts(void **state)
{
    (void)state;
    ard_logw *w = ard_logw_open(tmp("f0.mcap"), &(struct ard_logw_opts){.queue_bytes = 1 << 20});
    assert_non_null(w);
    int a = ard_logw_add(w, "a", "x:f32", 4), b = ard_logw_add(w, "b", NULL, 2);
    float v = 1;
    uint8_t two[2] = {1, 2};
    for (int k = 1; k <= 10; k++)
        assert_int_equal(ard_logw_write(w, a, &v, (uint64_t)k, 10 * k, 10 * k), 0);
    assert_int_equal(ard_logw_rotate(w, tmp("f1.mcap")), 0);
    for (int k = 1; k <= 3; k++) {
        assert_int_equal(ard_logw_write(w, b, two, (uint64_t)k, 200 + k, 200 + k), 0);
        assert_int_equal(ard_logw_write(w, a, &v, (uint64_t)(10 + k), 200 + k, 200 + k), 0);
    }
    assert_true(ard_logw_written(w, a) <= 10); /* the open chunk is not on disk yet */
    assert_int_equal(ard_logw_finish(w), 0);
    assert_int_equal(ard_logw_written(w, a), 13);
    assert_int_equal(ard_logw_written(w, b), 3);
    assert_int_equal(ard_logw_written(w, 7), 0);
    assert_int_equal(ard_logw_write(w, a, &v, 99, 999, 999), ARD_EINVAL);
    assert_int_equal(ard_logw_flush(w), ARD_EINVAL);
    assert_int_equal(ard_logw_finish(w), 0);
    assert_int_equal(ard_logw_close(w), 0);
    ard_logr *r = ard_logr_open(tmp("f1.mcap"));
    assert_non_null(r);
    assert_int_equal(ard_logr_conn(r, 0)->count + ard_logr_conn(r, 1)->count, 6);
    ard_logr_close(r);
}

struct src {
    const uint8_t *p;
    size_t n;
    bool ok;
};

static bool copy_src(void *dst, void *arg)
{
    struct src *s = arg;
    memcpy(dst, s->p, s->n);
    return s->ok;
}

/* write_with: the packet's trailing padding is not stored (CDR ends at the last field); a
 * declined copy records nothing. */
static void test_write_with_trims_padding_and_cancels(void **state)
{
    (void)state;
    ard_logw *w = ard_logw_open(tmp("ww.mcap"), NULL);
    assert_non_null(w);
    int ch = ard_logw_add(w, "p", "x:f64 b:u8", 16);
    assert_int_equal(ch, 0);
    uint8_t pkt[16] = {0};
    double x = 2.5;
    memcpy(pkt, &x, 8);
    pkt[8] = 7;
    pkt[9] = 0xee; /* padding: not recorded */
    struct src s = {pkt, 16, true};
    assert_int_equal(ard_logw_write_with(w, ch, 1, 100, 90, copy_src, &s), 1);
    s.ok = false;
    assert_int_equal(ard_logw_write_with(w, ch, 2, 200, 190, copy_src, &s), 0);
    s.ok = true;
    pkt[8] = 8;
    assert_int_equal(ard_logw_write_with(w, ch, 3, 300, 290, copy_src, &s), 1);
    assert_int_equal(ard_logw_close(w), 0);
    ard_logr *r = ard_logr_open(tmp("ww.mcap"));
    assert_non_null(r);
    assert_int_equal(ard_logr_conn(r, 0)->count, 2);
    struct ard_log_msg m;
    assert_int_equal(ard_logr_next(r, &m), 1);
    assert_int_equal(m.data_len, 4 + 9);
    assert_int_equal(((const uint8_t *)m.packet)[8], 7);
    assert_int_equal(((const uint8_t *)m.packet)[9], 0);
    assert_int_equal(ard_logr_next(r, &m), 1);
    assert_int_equal(m.seq, 3);
    assert_int_equal(m.log_ns, 300);
    assert_int_equal(((const uint8_t *)m.packet)[8], 8);
    assert_int_equal(ard_logr_next(r, &m), 0);
    ard_logr_close(r);
}

/* --no-crc files store CRC 0 (readers skip the check): a flipped payload byte then reads. */
static void test_no_crc_skips_the_check(void **state)
{
    (void)state;
    for (int crc = 0; crc < 2; crc++) {
        ard_logw *w = ard_logw_open(tmp("nc.mcap"), &(struct ard_logw_opts){.no_crc = !crc});
        assert_non_null(w);
        int ch = ard_logw_add(w, "v", "x:f64", 8);
        double x = 1.0;
        assert_int_equal(ard_logw_write(w, ch, &x, 1, 10, 5), 0);
        assert_int_equal(ard_logw_close(w), 0);
        size_t len;
        uint8_t *b = slurp(tmp("nc.mcap"), &len);
        uint8_t want[8];
        memcpy(want, &x, 8);
        uint8_t *p = memmem(b, len, want, 8);
        assert_non_null(p);
        p[7] ^= 0x40;
        int rc = ard_log_check(b, len);
        if (crc) {
            assert_int_equal(rc, ARD_ESTALE);
            assert_non_null(strstr(ard_errdetail(), "chunk CRC does not match"));
        } else {
            assert_int_equal(rc, 0);
        }
        free(b);
    }
}

static void test_bad_arguments(void **state)
{
    (void)state;
    assert_null(ard_logw_open(tmp("x.mcap"), &(struct ard_logw_opts){.compression = "lz4"}));
    assert_int_equal(ard_lasterror(), ARD_EINVAL);
    ard_logw *w = ard_logw_open(tmp("x.mcap"), NULL);
    assert_non_null(w);
    assert_int_equal(ard_logw_add(w, "a", "f64[2]", 8), ARD_ETYPE);
    assert_int_equal(ard_logw_add(w, "a", "f65", 8), ARD_ETYPE);
    assert_int_equal(ard_logw_write(w, 0, "x", 1, 1, 1), ARD_EINVAL);
    assert_int_equal(ard_logw_close(w), 0);
    assert_null(ard_logw_open("/nonexistent-dir/x.mcap", NULL));
    assert_int_equal(ard_lasterror(), ARD_ESYS);
    assert_non_null(strstr(ard_errdetail(), "/nonexistent-dir/x.mcap"));
}

/* The topics of src/ros2 (ardros2.h) as the recorder uses them: one to one with connection
 * names, every name has one (its ROS 2 validity is tests/ros2/test_names.c's). */
static void test_names_topics(void **state)
{
    (void)state;
    static const char *const names[] = {"arm.state", "a",  "s_pose", "sPose",
                                        "x-1.y_2.Z", ".a", "a..b",   "0.cam"};
    char topic[ARDR2_TOPIC_MAX], back[ARD_MAX_NAME + 1];
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        assert_int_equal(ardr2_topic(names[i], topic, sizeof topic), 0);
        assert_int_equal(topic[0], '/');
        assert_null(strchr(topic, '.'));
        assert_int_equal(ardr2_topic_conn(topic, back, sizeof back), 0);
        assert_string_equal(back, names[i]);
    }
    assert_int_equal(ardr2_topic("arm.state", topic, sizeof topic), 0);
    assert_string_equal(topic, "/arm/state");
    static const char *const bad[] = {"",   "/",  "arm/state", "/arm state", "/arm/st\xc3\xa4te",
                                      "/.", "/.."};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_int_equal(ardr2_topic_conn(bad[i], back, sizeof back), ARD_EINVAL);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/ard_test_log.XXXXXX");
    if (!mkdtemp(dir))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip_every_mode),
        cmocka_unit_test(test_foreign_file_refused_with_offset),
        cmocka_unit_test(test_bit_flips_refused_never_crash),
        cmocka_unit_test(test_truncated_read_up_to_last_chunk),
        cmocka_unit_test(test_seek_skips_earlier_chunks),
        cmocka_unit_test(test_rotate_declares_channels_again),
        cmocka_unit_test(test_write_with_trims_padding_and_cancels),
        cmocka_unit_test(test_no_crc_skips_the_check),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_finish_then_written_counts),
        cmocka_unit_test(test_names_topics),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        rc = rc ? rc : 1;
    return rc;
}
