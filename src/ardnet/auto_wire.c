/* auto_wire.c - encode and check catalog announcements (auto_wire.h, docs/wire.md). */
#include "auto_wire.h"
#include "ard_common.h"
#include "wire.h"

#include <string.h>

/* Header layout (little-endian):
 *   0 u32 magic 'ARDC'   4 u8 version   5 u8 flags (0)   6 u16 header length (32)
 *   8 u64 host id       16 u32 domain hash   20 u32 snapshot seq
 *  24 u16 part          26 u16 nparts        28 u16 entry count
 *  30 u8 host name length (1..63)   31 u8 reserved (0)
 * then the host name, then the entries:
 *   0 u8 kind  1 u8 order  2 u16 port  4 u32 size  8 u8 name length (1..63)  9 u8 reserved (0)
 *  10 u16 type length (0..1023)  12 name  12+name type */

const char *arda_cause_name(enum arda_cause c)
{
    static const char *const names[ARDA_NCAUSES] = {
        "ok",    "truncated", "oversized", "magic", "version",
        "parts", "host",      "entry",     "name",  "type",
    };
    return (unsigned)c < ARDA_NCAUSES ? names[c] : "?";
}

uint32_t arda_domain_hash(const char *domain)
{
    uint32_t h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)domain; *p; p++)
        h = (h ^ *p) * 16777619u;
    return h;
}

enum arda_order arda_host_order(void)
{
    const uint16_t one = 1;
    return *(const uint8_t *)&one ? ARDA_LITTLE : ARDA_BIG;
}

size_t arda_entry_len(const struct arda_entry *e)
{
    return ARDA_ENTRY_HDR_SIZE + strlen(e->name) + strlen(e->type);
}

size_t arda_put_hdr(uint8_t *buf, const struct arda_msg *m)
{
    size_t hl = strnlen(m->host, ARDA_MAX_HOST);
    memset(buf, 0, ARDA_HDR_SIZE);
    ardw_put32(buf, ARDA_MAGIC_WORD);
    buf[4] = ARDA_WIRE_VERSION;
    ardw_put16(buf + 6, ARDA_HDR_SIZE);
    ardw_put64(buf + 8, m->host_id);
    ardw_put32(buf + 16, m->domain);
    ardw_put32(buf + 20, m->seq);
    ardw_put16(buf + 24, 0);
    ardw_put16(buf + 26, 1);
    buf[30] = (uint8_t)hl;
    memcpy(buf + ARDA_HDR_SIZE, m->host, hl);
    return ARDA_HDR_SIZE + hl;
}

size_t arda_put_entry(uint8_t *buf, size_t len, const struct arda_entry *e)
{
    size_t nl = strlen(e->name), tl = strlen(e->type);
    uint8_t *p = buf + len;
    p[0] = e->kind;
    p[1] = e->order;
    ardw_put16(p + 2, e->port);
    ardw_put32(p + 4, e->size);
    p[8] = (uint8_t)nl;
    p[9] = 0;
    ardw_put16(p + 10, (uint16_t)tl);
    memcpy(p + ARDA_ENTRY_HDR_SIZE, e->name, nl);
    memcpy(p + ARDA_ENTRY_HDR_SIZE + nl, e->type, tl);
    ardw_put16(buf + 28, (uint16_t)(ardw_get16(buf + 28) + 1));
    return len + ARDA_ENTRY_HDR_SIZE + nl + tl;
}

void arda_set_part(uint8_t *buf, uint16_t part, uint16_t nparts)
{
    ardw_put16(buf + 24, part);
    ardw_put16(buf + 26, nparts);
}

static bool host_char(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
}

/* One entry at *off: checked and copied into e, *off moved past it. */
static enum arda_cause parse_entry(const uint8_t *buf, size_t len, size_t *off,
                                   struct arda_entry *e)
{
    const uint8_t *p = buf + *off;
    if (len - *off < ARDA_ENTRY_HDR_SIZE)
        return ARDA_TRUNCATED;
    size_t nl = p[8], tl = ardw_get16(p + 10);
    if (nl == 0 || nl > ARD_MAX_NAME)
        return ARDA_NAME;
    if (tl > ARD_MAX_TYPE)
        return ARDA_TYPE;
    if (len - *off - ARDA_ENTRY_HDR_SIZE < nl + tl)
        return ARDA_TRUNCATED;
    e->kind = p[0];
    e->order = p[1];
    e->port = ardw_get16(p + 2);
    e->size = ardw_get32(p + 4);
    if ((e->kind != ARDA_HAS && e->kind != ARDA_WANT) || e->order > ARDA_BIG || p[9] != 0 ||
        e->size == 0 || e->size > ARDW_MAX_PAYLOAD || (e->kind == ARDA_HAS) != (e->port == 0))
        return ARDA_ENTRY;
    memcpy(e->name, p + ARDA_ENTRY_HDR_SIZE, nl);
    e->name[nl] = '\0';
    memcpy(e->type, p + ARDA_ENTRY_HDR_SIZE + nl, tl);
    e->type[tl] = '\0';
    if (strlen(e->name) != nl || ardi_check_name("connection", e->name, true) < 0)
        return ARDA_NAME;
    if (strlen(e->type) != tl)
        return ARDA_TYPE;
    if (tl > 0) {
        char norm[ARD_MAX_TYPE + 1];
        size_t tsize = 0;
        if (ard_type_normalize(e->type, norm, sizeof norm) < 0 || strcmp(norm, e->type) != 0 ||
            ard_type_parse(e->type, NULL, 0, NULL, &tsize) < 0 || tsize != e->size)
            return ARDA_TYPE;
    }
    *off += ARDA_ENTRY_HDR_SIZE + nl + tl;
    return ARDA_OK;
}

enum arda_cause arda_parse(const uint8_t *buf, size_t len, struct arda_msg *m, struct arda_entry *e,
                           size_t max)
{
    if (len < 4)
        return ARDA_TRUNCATED;
    if (ardw_get32(buf) != ARDA_MAGIC_WORD)
        return ARDA_MAGIC;
    if (len < ARDA_HDR_SIZE)
        return ARDA_TRUNCATED;
    if (len > ARDA_MAX_DGRAM)
        return ARDA_OVERSIZED;
    if (buf[4] != ARDA_WIRE_VERSION || buf[5] != 0 || ardw_get16(buf + 6) != ARDA_HDR_SIZE ||
        buf[31] != 0)
        return ARDA_VERSION;
    m->host_id = ardw_get64(buf + 8);
    m->domain = ardw_get32(buf + 16);
    m->seq = ardw_get32(buf + 20);
    m->part = ardw_get16(buf + 24);
    m->nparts = ardw_get16(buf + 26);
    m->count = ardw_get16(buf + 28);
    if (m->host_id == 0 || m->nparts == 0 || m->nparts > ARDA_MAX_PARTS || m->part >= m->nparts)
        return ARDA_PARTS;
    size_t hl = buf[30];
    if (hl == 0 || hl > ARDA_MAX_HOST)
        return ARDA_HOST;
    if (len < ARDA_HDR_SIZE + hl)
        return ARDA_TRUNCATED;
    for (size_t i = 0; i < hl; i++)
        if (!host_char(buf[ARDA_HDR_SIZE + i]))
            return ARDA_HOST;
    memcpy(m->host, buf + ARDA_HDR_SIZE, hl);
    m->host[hl] = '\0';
    if (m->count > max)
        return ARDA_OVERSIZED;
    size_t off = ARDA_HDR_SIZE + hl;
    for (unsigned i = 0; i < m->count; i++) {
        enum arda_cause c = parse_entry(buf, len, &off, &e[i]);
        if (c != ARDA_OK)
            return c;
    }
    return off == len ? ARDA_OK : ARDA_OVERSIZED;
}
