/*
 * test_plan.c - how ardn_plan_open shares sockets and threads between routes: routes to one
 * UDP destination share its socket, routes on one listening address share its socket (their
 * connection ids sorted, a duplicate or an any-id relay refused naming the routes), and the
 * local inputs are waited on in threads of at most ARD_WAIT_SLEEP_MAX routes, whole
 * destination groups together.
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

static struct ardn_route routes[400];
static int nroutes;
static struct ardn_plan plan;

static void route(const char *in, const char *out, const char *conn_id)
{
    struct ardn_route *r = &routes[nroutes++];
    ardn_route_init(r);
    assert_int_equal(ardn_route_option(r, "in", in), 0);
    assert_int_equal(ardn_route_option(r, "out", out), 0);
    assert_int_equal(ardn_route_option(r, "size", "8"), 0);
    if (conn_id)
        assert_int_equal(ardn_route_option(r, "conn-id", conn_id), 0);
    assert_int_equal(ardn_route_finish(r), 0);
}

static int teardown(void **state)
{
    (void)state;
    if (plan.routes)
        ardn_plan_close(&plan);
    else
        for (int i = 0; i < nroutes; i++)
            ardn_route_close(&routes[i]);
    nroutes = 0;
    return 0;
}

static const struct ardn_sender *sender_of(const struct ardn_route *r)
{
    for (int k = 0; k < plan.nsenders; k++)
        for (int j = 0; j < plan.senders[k].n; j++)
            if (plan.senders[k].routes[j] == r)
                return &plan.senders[k];
    return NULL;
}

static void test_routes_to_one_destination_share_a_socket_and_a_thread(void **state)
{
    (void)state;
    char in[32];
    for (int i = 0; i < 300; i++) { /* 300 to one port: threads of 128, 128, 44 */
        snprintf(in, sizeof in, "plan.a%d", i);
        route(in, "udp://127.0.0.1:9", NULL);
    }
    for (int i = 0; i < 60; i++) { /* two groups of 30 that fit one thread together */
        snprintf(in, sizeof in, "plan.b%d", i);
        route(in, i % 2 ? "udp://127.0.0.1:10" : "udp://127.0.0.1:11", NULL);
    }
    route("plan.c0", "plan.c0.copy", NULL); /* local only */
    assert_int_equal(ardn_plan_open(&plan, routes, nroutes), 0);
    assert_int_equal(plan.ndests, 3);
    for (int i = 1; i < 300; i++)
        assert_int_equal(routes[i].out_fd[0], routes[0].out_fd[0]);
    assert_true(routes[0].out_fd[0] >= 0);
    assert_int_equal(routes[300].dest[0]->nroutes, 30);
    int big = 0, sizes = 0;
    for (int k = 0; k < plan.nsenders; k++) {
        assert_true(plan.senders[k].n <= ARD_WAIT_SLEEP_MAX);
        sizes += plan.senders[k].n;
        big += plan.senders[k].n == ARD_WAIT_SLEEP_MAX;
    }
    assert_int_equal(sizes, nroutes);
    assert_true(big >= 2);
    assert_true(plan.nsenders <= 5); /* whole groups while they fit, the big one cut */
    /* the two groups of 30 are in one thread, with one queue each */
    const struct ardn_sender *s = sender_of(&routes[300]);
    assert_ptr_equal(sender_of(&routes[301]), s);
    for (int i = 300; i < 360; i++)
        assert_ptr_equal(sender_of(&routes[i]), s);
    assert_true(s->nq >= 2); /* one queue per destination */
    assert_int_not_equal(routes[300].txq[0], routes[301].txq[0]);
    assert_int_equal(routes[300].txq[0], routes[302].txq[0]);
}

static void test_routes_on_one_port_share_it_sorted_by_connection_id(void **state)
{
    (void)state;
    char out[32], id[16];
    int port = 30000 + (int)(getpid() % 20000);
    char in[64];
    snprintf(in, sizeof in, "udp://127.0.0.1:%d", port);
    for (int i = 0; i < 5; i++) {
        snprintf(out, sizeof out, "plan.r%d", i);
        snprintf(id, sizeof id, "%d", 50 - i * 7);
        route(in, out, id);
    }
    assert_int_equal(ardn_plan_open(&plan, routes, nroutes), 0);
    assert_int_equal(plan.ninputs, 1);
    assert_int_equal(plan.inputs[0].nroutes, 5);
    for (int i = 1; i < 5; i++)
        assert_true(plan.inputs[0].routes[i - 1]->conn_id < plan.inputs[0].routes[i]->conn_id);
    for (int i = 0; i < 5; i++)
        assert_int_equal(routes[i].fd_in, plan.inputs[0].fd);
}

static void test_a_shared_port_refuses_a_duplicate_id_and_an_any_id_relay(void **state)
{
    (void)state;
    int port = 30000 + (int)(getpid() % 20000) + 1;
    char in[64];
    snprintf(in, sizeof in, "udp://127.0.0.1:%d", port);
    route(in, "plan.d0", "7");
    route(in, "plan.d1", "7");
    assert_int_equal(ardn_plan_open(&plan, routes, nroutes), ARD_EINVAL);
    assert_non_null(strstr(ard_errdetail(), "routes 'plan.d0' and 'plan.d1' both listen on"));
    assert_non_null(strstr(ard_errdetail(), "connection id 7"));
    ardn_plan_close(&plan);
    nroutes = 0;
    route(in, "plan.e0", "7");
    struct ardn_route *relay = &routes[nroutes++];
    ardn_route_init(relay);
    assert_int_equal(ardn_route_option(relay, "in", in), 0);
    assert_int_equal(ardn_route_option(relay, "out", "udp://127.0.0.1:9"), 0);
    assert_int_equal(ardn_route_option(relay, "size", "8"), 0);
    assert_int_equal(ardn_route_option(relay, "name", "relay"), 0);
    assert_int_equal(ardn_route_finish(relay), 0);
    assert_int_equal(ardn_plan_open(&plan, routes, nroutes), ARD_EINVAL);
    assert_non_null(strstr(ard_errdetail(), "route 'relay' takes any connection id"));
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_routes_to_one_destination_share_a_socket_and_a_thread,
                                  teardown),
        cmocka_unit_test_teardown(test_routes_on_one_port_share_it_sorted_by_connection_id,
                                  teardown),
        cmocka_unit_test_teardown(test_a_shared_port_refuses_a_duplicate_id_and_an_any_id_relay,
                                  teardown),
    };
    return TMAIN_RUN("plan", tests, argc, argv);
}
