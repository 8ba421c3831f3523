/* cdr.c - ardnet packets to and from little-endian CDR (ROS 2's XCDR1, encapsulation CDR_LE).
 *
 * ardnet lays out fields at their natural alignment from offset 0, and CDR aligns each
 * primitive (at most 8 bytes) to its size from the start of the body: the offsets agree, so
 * on a little-endian host the body is the packet itself up to the end of its last field. */
#include "ardros2.h"

#include <stdlib.h>
#include <string.h>

static bool host_le(void)
{
    const uint16_t one = 1;
    uint8_t b;
    memcpy(&b, &one, 1);
    return b == 1;
}

int ardr2_layout_init(struct ardr2_layout *l, const char *type, size_t size)
{
    memset(l, 0, sizeof *l);
    l->size = size;
    if (!type || !type[0]) {
        l->body = size;
        return 0;
    }
    size_t n = 0, sz = 0;
    int rc = ard_type_parse(type, NULL, 0, &n, &sz);
    if (rc < 0)
        return rc;
    if (sz != size)
        return ardi_fail(ARD_ETYPE, "descriptor '%s' is %zu bytes, the connection %zu", type, sz,
                         size);
    l->fields = calloc(n ? n : 1, sizeof *l->fields);
    if (!l->fields)
        return ardi_fail(ARD_ENOMEM, "out of memory");
    rc = ard_type_parse(type, l->fields, n, &l->nfields, NULL);
    if (rc < 0) {
        ardr2_layout_free(l);
        return rc;
    }
    for (size_t i = 0; i < n; i++) {
        size_t e = l->fields[i].offset + l->fields[i].count * ard_basic_size(l->fields[i].kind);
        if (e > l->body)
            l->body = e;
    }
    return 0;
}

void ardr2_layout_free(struct ardr2_layout *l)
{
    free(l->fields);
    l->fields = NULL;
}

/* Copy the body, swapping every element to little-endian on a big-endian host. */
static void copy_swapped(const struct ardr2_layout *l, const uint8_t *src, uint8_t *dst)
{
    memset(dst, 0, l->body);
    for (size_t i = 0; i < l->nfields; i++) {
        const struct ard_field *f = &l->fields[i];
        size_t es = ard_basic_size(f->kind);
        for (uint32_t k = 0; k < f->count; k++) {
            const uint8_t *s = src + f->offset + k * es;
            uint8_t *d = dst + f->offset + k * es;
            for (size_t j = 0; j < es; j++)
                d[j] = s[es - 1 - j];
        }
    }
}

void ardr2_cdr_encode(const struct ardr2_layout *l, const void *packet, uint8_t *out)
{
    out[0] = 0x00; /* CDR_LE */
    out[1] = 0x01;
    out[2] = 0x00; /* options */
    out[3] = 0x00;
    if (host_le() || !l->fields)
        memcpy(out + ARDR2_CDR_HDR, packet, l->body);
    else
        copy_swapped(l, packet, out + ARDR2_CDR_HDR);
}

void ardr2_cdr_inplace(const struct ardr2_layout *l, uint8_t *out)
{
    out[0] = 0x00;
    out[1] = 0x01;
    out[2] = 0x00;
    out[3] = 0x00;
    if (host_le() || !l->fields)
        return;
    for (size_t i = 0; i < l->nfields; i++) {
        const struct ard_field *f = &l->fields[i];
        size_t es = ard_basic_size(f->kind);
        for (uint32_t k = 0; k < f->count; k++) {
            uint8_t *d = out + ARDR2_CDR_HDR + f->offset + k * es;
            for (size_t j = 0; j < es / 2; j++) {
                uint8_t t = d[j];
                d[j] = d[es - 1 - j];
                d[es - 1 - j] = t;
            }
        }
    }
}

const char *ardr2_cdr_decode(const struct ardr2_layout *l, const uint8_t *cdr, size_t len,
                             void *packet)
{
    if (len < ARDR2_CDR_HDR)
        return "CDR message shorter than its 4-byte header";
    if (cdr[0] != 0x00 || cdr[1] != 0x01)
        return "CDR encapsulation is not CDR_LE (00 01)";
    if (len - ARDR2_CDR_HDR < l->body)
        return "CDR message shorter than the connection's fields";
    memset(packet, 0, l->size);
    if (host_le() || !l->fields)
        memcpy(packet, cdr + ARDR2_CDR_HDR, l->body);
    else
        copy_swapped(l, cdr + ARDR2_CDR_HDR, packet);
    return NULL;
}
