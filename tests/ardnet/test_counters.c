/*
 * test_counters.c - the counters as a connection (--counters CONN, src/ardnet/counters.c):
 * the descriptor names one u64 array per counter and stays under the library's limit for
 * 1000 routes, 1000 shared destinations and 1000 shared inputs; arrays of length 0 are left
 * out; the packet of such a plan is written and reads back with every value at the offset of
 * its named field; CONN.names holds the texts in index order, cut at 64 bytes.
 * The plan is built by hand (no socket, no thread): only what counters.c reads is filled.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ardn.h"
#include "tmain.h"

#define R 1000
#define NFIELDS_ALL (4 + ARDN_C_NCOUNTERS + 1 + (ARDW_NCAUSES - 1) + 4 + 3)

static struct ardn_route routes[R];
static struct ardn_dest dests[R + 1];
static struct ardn_input inputs[R];
static struct ardn_plan plan;

/* r routes; d destinations shared by 2 routes (plus one of a single route, left out); i
 * inputs shared by 2. Every value distinct. */
static void make_plan(int r, int d, int i)
{
    memset(routes, 0, sizeof routes);
    memset(dests, 0, sizeof dests);
    memset(inputs, 0, sizeof inputs);
    for (int k = 0; k < r; k++) {
        snprintf(routes[k].cfg.name, sizeof routes[k].cfg.name, "route.%d", k);
        for (int c = 0; c < ARDN_C_NCOUNTERS; c++)
            routes[k].cnt.c[c] = (uint64_t)k * 1000 + (uint64_t)c;
        for (int c = 1; c < ARDW_NCAUSES; c++)
            routes[k].cnt.drop[c] = (uint64_t)k * 100000 + (uint64_t)c;
    }
    /* The destination of one route comes first: it has no index. */
    snprintf(dests[0].text, sizeof dests[0].text, "udp://alone:1");
    dests[0].nroutes = 1;
    dests[0].datagrams = 999999;
    for (int k = 1; k <= d; k++) {
        snprintf(dests[k].text, sizeof dests[k].text, "udp://host%d:7001", k - 1);
        dests[k].nroutes = 2;
        dests[k].datagrams = (uint64_t)k * 10 + 1;
        dests[k].packed = (uint64_t)k * 10 + 2;
        dests[k].packets = (uint64_t)k * 10 + 3;
        dests[k].send_errors = (uint64_t)k * 10 + 4;
    }
    for (int k = 0; k < i; k++) {
        snprintf(inputs[k].text, sizeof inputs[k].text, "udp://:%d", 7000 + k);
        inputs[k].nroutes = 2;
        inputs[k].datagrams = (uint64_t)k * 10 + 5;
        inputs[k].packed = (uint64_t)k * 10 + 6;
        inputs[k].drop[ARDW_MAGIC] = (uint64_t)k;
        inputs[k].drop[ARDW_CONN] = 3;
    }
    plan = (struct ardn_plan){.routes = routes,
                              .nroutes = r,
                              .dests = dests,
                              .ndests = d + 1,
                              .inputs = inputs,
                              .ninputs = i};
}

static const struct ard_field *field(const struct ard_field *f, size_t n, const char *name)
{
    for (size_t k = 0; k < n; k++)
        if (strcmp(f[k].name, name) == 0)
            return &f[k];
    fail_msg("no field '%s'", name);
    return NULL;
}

static uint64_t u64_at(const uint8_t *pkt, const struct ard_field *f, int i)
{
    assert_true(f->kind == ARD_U64 && (uint32_t)i < f->count);
    uint64_t v;
    memcpy(&v, pkt + f->offset + 8 * (size_t)i, sizeof v);
    return v;
}

static void test_descriptor_of_1000_routes_destinations_and_inputs_is_accepted(void **state)
{
    (void)state;
    make_plan(R, R, R);
    char type[ARD_MAX_TYPE + 1];
    assert_int_equal(ardn_counters_type(&plan, type, sizeof type), 0);
    printf("descriptor for %d routes: %zu characters (limit %d)\n", R, strlen(type), ARD_MAX_TYPE);
    struct ard_field f[64];
    size_t n, size;
    assert_int_equal(ard_type_parse(type, f, 64, &n, &size), 0);
    assert_int_equal(n, NFIELDS_ALL);
    assert_int_equal(size, 16 + 8 * (size_t)R * (ARDN_C_NCOUNTERS + ARDW_NCAUSES + 4 + 3));
    assert_string_equal(f[0].name, "routes");
    assert_string_equal(f[3].name, "pad");
    assert_string_equal(f[4].name, "received");
    assert_int_equal(f[4].offset, 16);
    assert_int_equal(f[4].count, R);
    assert_non_null(field(f, n, "drop_magic"));
    assert_non_null(field(f, n, "drop_pack_invalid"));
    assert_string_equal(f[NFIELDS_ALL - 1].name, "in_dropped");
    /* The same with a buffer one short of it: refused, not cut. */
    char small[ARD_MAX_TYPE + 1];
    assert_int_equal(ardn_counters_type(&plan, small, strlen(type)), ARD_EINVAL);
}

static void test_arrays_of_length_zero_are_left_out(void **state)
{
    (void)state;
    make_plan(1, 0, 0);
    char type[ARD_MAX_TYPE + 1];
    assert_int_equal(ardn_counters_type(&plan, type, sizeof type), 0);
    assert_null(strstr(type, "out_"));
    assert_null(strstr(type, "in_"));
    size_t n;
    assert_int_equal(ard_type_parse(type, NULL, 0, &n, NULL), 0);
    assert_int_equal(n, NFIELDS_ALL - 7);
}

static void test_packet_of_1000_routes_reads_back_by_field_name(void **state)
{
    (void)state;
    make_plan(R, R, R);
    /* A destination text longer than a name's 64 bytes is cut. */
    memset(dests[1].text, 'h', 100);
    dests[1].text[100] = '\0';
    assert_int_equal(ardn_counters_open("ctr.big", &plan), 0);

    ard_port *in = ard_create_on("rd", "ctr.big", ARD_IN, 0, NULL);
    assert_non_null(in);
    struct ard_field f[64];
    size_t n, size = ard_port_size(in);
    assert_int_equal(ard_type_parse(ard_port_type(in), f, 64, &n, NULL), 0);
    uint8_t *pkt = malloc(size);
    assert_non_null(pkt);
    assert_int_equal(ard_tryrec(in, pkt), 1);
    uint32_t hdr[4];
    memcpy(hdr, pkt, sizeof hdr);
    assert_int_equal(hdr[0], R);
    assert_int_equal(hdr[1], R);
    assert_int_equal(hdr[2], R);
    assert_int_equal(u64_at(pkt, field(f, n, "received"), 999), 999000 + ARDN_C_RECEIVED);
    assert_int_equal(u64_at(pkt, field(f, n, "packed"), 3), 3000 + ARDN_C_PACKED);
    assert_int_equal(u64_at(pkt, field(f, n, "drop_magic"), 5), 500000 + ARDW_MAGIC);
    assert_int_equal(u64_at(pkt, field(f, n, "drop_pack_invalid"), 999),
                     99900000 + ARDW_PACK_INVALID);
    uint64_t dropped = 0;
    for (int c = 1; c < ARDW_NCAUSES; c++)
        dropped += 700000 + (uint64_t)c;
    assert_int_equal(u64_at(pkt, field(f, n, "dropped"), 7), dropped);
    /* Destination 0 of the counters is the first shared one (dests[1]). */
    assert_int_equal(u64_at(pkt, field(f, n, "out_datagrams"), 0), 11);
    assert_int_equal(u64_at(pkt, field(f, n, "out_send_errors"), 999), 10004);
    assert_int_equal(u64_at(pkt, field(f, n, "out_packets"), 500), 5013);
    assert_int_equal(u64_at(pkt, field(f, n, "in_datagrams"), 998), 9985);
    assert_int_equal(u64_at(pkt, field(f, n, "in_packed"), 2), 26);
    assert_int_equal(u64_at(pkt, field(f, n, "in_dropped"), 40), 43);

    /* A later publish carries the new values. */
    routes[999].cnt.c[ARDN_C_RECEIVED] = 123456789;
    assert_int_equal(ardn_counters_publish(&plan, false), 0);
    assert_int_equal(ard_tryrec(in, pkt), 1);
    assert_int_equal(u64_at(pkt, field(f, n, "received"), 999), 123456789);

    /* The names: routes, then shared destinations, then shared inputs, 64 bytes each. */
    ard_port *nm = ard_create_on("rdn", "ctr.big.names", ARD_IN, 0, NULL);
    assert_non_null(nm);
    assert_int_equal(ard_port_size(nm), 64 * 3 * R);
    uint8_t *names = malloc(64 * 3 * R);
    assert_non_null(names);
    assert_int_equal(ard_tryrec(nm, names), 1);
    assert_string_equal((char *)names, "route.0");
    assert_string_equal((char *)names + 64 * 999, "route.999");
    assert_memory_equal(names + 64 * R, dests[1].text, 64); /* cut, no NUL: the next starts */
    assert_string_equal((char *)names + 64 * (R + 1), "udp://host1:7001");
    assert_string_equal((char *)names + 64 * (2 * R), "udp://:7000");
    assert_string_equal((char *)names + 64 * (3 * R - 1), "udp://:7999");
    free(names);
    free(pkt);
    ard_close(nm);
    ard_close(in);
    ardn_counters_close();
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_descriptor_of_1000_routes_destinations_and_inputs_is_accepted),
        cmocka_unit_test(test_arrays_of_length_zero_are_left_out),
        cmocka_unit_test(test_packet_of_1000_routes_reads_back_by_field_name),
    };
    return TMAIN_RUN("counters", tests, argc, argv);
}
