/*
 * fuzz_types.c - libFuzzer target for type descriptors: ard_type_parse, ard_type_normalize and
 * ard_type_hash on arbitrary text (the input, cut at its first NUL). Only the fields' kind,
 * count and offset are looked at, so the target does not depend on the descriptor syntax.
 * Invariants checked:
 *   - parse and normalize agree on what is valid; a failure leaves a detail message;
 *   - a parsed layout is C's natural one: each field aligned to its element size, placed at
 *     the first such offset after the previous field, the size the end of the last field
 *     padded to the largest alignment, at most ARD_MAX_PACKET;
 *   - parsing with room for fewer fields writes the same first fields and the same count;
 *   - normalize is idempotent, and the canonical form parses to the same layout and hashes to
 *     the same value as the original.
 */
#include "ardnet.h"
#include "fuzz.h"

#include <string.h>

#define MAX_LEN 4096
#define MAX_FIELDS (MAX_LEN / 2 + 1)

static struct ard_field fields[MAX_FIELDS], fields2[MAX_FIELDS];
static char text[MAX_LEN + 1], canon[2 * MAX_LEN + 64], canon2[2 * MAX_LEN + 64];

static void check_layout(const struct ard_field *f, size_t n, size_t size)
{
    uint64_t end = 0, align = 1;
    for (size_t i = 0; i < n; i++) {
        uint64_t es = ard_basic_size(f[i].kind);
        FUZZ_CHECK(es == 1 || es == 2 || es == 4 || es == 8);
        FUZZ_CHECK(f[i].count >= 1);
        FUZZ_CHECK(f[i].offset % es == 0);
        FUZZ_CHECK(f[i].offset >= end && f[i].offset - end < es);
        end = f[i].offset + es * f[i].count;
        if (es > align)
            align = es;
    }
    FUZZ_CHECK(n >= 1);
    FUZZ_CHECK(size == (end + align - 1) / align * align);
    FUZZ_CHECK(size >= 1 && size <= ARD_MAX_PACKET);
}

static bool same_fields(const struct ard_field *a, const struct ard_field *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (a[i].kind != b[i].kind || a[i].count != b[i].count || a[i].offset != b[i].offset)
            return false;
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > MAX_LEN)
        return -1;
    memcpy(text, data, size);
    text[size] = '\0';

    size_t n = 0, psize = 0;
    int rc = ard_type_parse(text, fields, MAX_FIELDS, &n, &psize);
    int nl = ard_type_normalize(text, canon, sizeof canon);
    if (rc < 0) {
        FUZZ_CHECK(rc == ARD_ETYPE);
        FUZZ_CHECK(ard_errdetail()[0] != '\0');
        FUZZ_CHECK(nl == ARD_ETYPE);
        (void)ard_type_hash(text); /* defined for any text */
        return 0;
    }
    FUZZ_CHECK(n <= MAX_FIELDS);
    check_layout(fields, n, psize);

    /* Room for fewer fields: the same first ones, the same count and size. */
    size_t n2 = 0, psize2 = 0, max = n / 2;
    FUZZ_CHECK(ard_type_parse(text, fields2, max, &n2, &psize2) == 0);
    FUZZ_CHECK(n2 == n && psize2 == psize && same_fields(fields, fields2, max));
    FUZZ_CHECK(ard_type_parse(text, NULL, 0, &n2, NULL) == 0 && n2 == n);

    FUZZ_CHECK(nl > 0 && (size_t)nl == strlen(canon));
    /* The canonical form: valid, the same layout, a fixed point, the same hash. */
    FUZZ_CHECK(ard_type_parse(canon, fields2, MAX_FIELDS, &n2, &psize2) == 0);
    FUZZ_CHECK(n2 == n && psize2 == psize && same_fields(fields, fields2, n));
    int nl2 = ard_type_normalize(canon, canon2, sizeof canon2);
    FUZZ_CHECK(nl2 == nl && strcmp(canon, canon2) == 0);
    /* The hash normalises into an ARD_MAX_TYPE buffer: longer descriptors (which no port
     * accepts) hash as written. */
    if (nl <= ARD_MAX_TYPE)
        FUZZ_CHECK(ard_type_hash(text) == ard_type_hash(canon));
    FUZZ_CHECK(ard_type_hash(text) != 0);

    /* A buffer one byte too small is refused, not overrun. */
    char *small = malloc((size_t)nl);
    FUZZ_CHECK(small != NULL);
    FUZZ_CHECK(ard_type_normalize(text, small, (size_t)nl) < 0);
    free(small);
    return 0;
}
