/*
 * test_socket_errors.c - a route whose socket fails for good (here: its descriptor replaced
 * by one that is no socket) does not spin: its receive loop pauses after each failed
 * call (counted in recv_errors), reports the error once, and still stops on request; a
 * failing UDP output counts each failed send and the route goes on.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "ardn.h"
#include "tmain.h"

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

static struct ardn_plan plan; /* the route's sockets and thread */

static uint64_t counter(struct ardn_route *r, enum ardn_counter c)
{
    return atomic_load(&r->cnt.c[c]);
}

/* A UDP input route on loopback, started. */
static void udp_in_route(struct ardn_route *r, const char *out)
{
    char in[64];
    static int next;
    snprintf(in, sizeof in, "udp://127.0.0.1:%d", 20000 + (int)(getpid() % 20000) + next++);
    ardn_route_init(r);
    assert_int_equal(ardn_route_option(r, "in", in), 0);
    assert_int_equal(ardn_route_option(r, "out", out), 0);
    assert_int_equal(ardn_route_option(r, "size", "16"), 0);
    assert_int_equal(ardn_route_finish(r), 0);
    assert_int_equal(ardn_plan_open(&plan, r, 1), 0);
    atomic_store(&ardn_stop, false);
    assert_int_equal(ardn_plan_start(&plan), 0);
}

/* Over one second, a spinning loop would fail millions of times; a paced one about ten. */
static void assert_paced(struct ardn_route *r)
{
    sleep_ms(1000);
    atomic_store(&ardn_stop, true);
    ardn_plan_join(&plan);
    uint64_t n = counter(r, ARDN_C_RECV_ERRORS);
    print_message("recv_errors after 1 s: %llu\n", (unsigned long long)n);
    assert_true(n >= 1);
    assert_true(n <= 50);
    ardn_plan_close(&plan);
}

static void test_an_input_that_is_no_socket_does_not_spin(void **state)
{
    (void)state;
    static struct ardn_route r;
    udp_in_route(&r, "err.out2");
    sleep_ms(50);
    int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    assert_true(fd >= 0);
    assert_true(dup2(fd, r.fd_in) == r.fd_in); /* recvmmsg: ENOTSOCK from now on */
    close(fd);
    assert_paced(&r);
}

static void test_a_failing_output_counts_and_goes_on(void **state)
{
    (void)state;
    static struct ardn_route r;
    ard_port *w = ard_create_on("w", "err.src", ARD_OUT, 16, NULL);
    assert_non_null(w);
    ardn_route_init(&r);
    assert_int_equal(ardn_route_option(&r, "in", "err.src"), 0);
    assert_int_equal(ardn_route_option(&r, "out", "udp://127.0.0.1:9"), 0);
    assert_int_equal(ardn_route_option(&r, "out", "err.copy"), 0);
    assert_int_equal(ardn_route_finish(&r), 0);
    assert_int_equal(ardn_plan_open(&plan, &r, 1), 0);
    assert_int_equal(shutdown(r.out_fd[0], SHUT_WR), 0); /* sendmmsg: EPIPE from now on */
    atomic_store(&ardn_stop, false);
    assert_int_equal(ardn_plan_start(&plan), 0);
    uint8_t p[16] = {0};
    for (int i = 0; i < 20; i++) {
        p[0] = (uint8_t)i;
        assert_int_equal(ard_send(w, p), 0);
        sleep_ms(20);
    }
    sleep_ms(100);
    atomic_store(&ardn_stop, true);
    ardn_plan_join(&plan);
    uint64_t got = counter(&r, ARDN_C_RECEIVED), errs = counter(&r, ARDN_C_SEND_ERRORS);
    print_message("received %llu send_errors %llu sent %llu\n", (unsigned long long)got,
                  (unsigned long long)errs, (unsigned long long)counter(&r, ARDN_C_SENT));
    assert_true(got >= 1);
    assert_true(errs == got);                     /* every UDP send failed */
    assert_true(counter(&r, ARDN_C_SENT) == got); /* and every local one went out */
    ardn_plan_close(&plan);
    ard_close(w);
}

/* A descriptor datagram longer than the route's packets (a small packet, a long descriptor)
 * is read whole: not dropped as oversized, not counted, and the packet after it delivered. */
static void test_a_long_descriptor_of_a_small_packet_is_no_drop(void **state)
{
    (void)state;
    static struct ardn_route r;
    const char *type = "u8 u8 u8 u8 u8 u8 u8 u8 u8 u8 u8 u8 u8 u8 u8 u8"; /* 16 bytes */
    char in[64];
    int port = 40000 + (int)(getpid() % 20000);
    snprintf(in, sizeof in, "udp://127.0.0.1:%d", port);
    ardn_route_init(&r);
    assert_int_equal(ardn_route_option(&r, "in", in), 0);
    assert_int_equal(ardn_route_option(&r, "out", "err.desc"), 0);
    assert_int_equal(ardn_route_option(&r, "type", type), 0);
    assert_int_equal(ardn_route_option(&r, "conn-id", "5"), 0);
    assert_int_equal(ardn_route_finish(&r), 0);
    assert_int_equal(ardn_plan_open(&plan, &r, 1), 0);
    atomic_store(&ardn_stop, false);
    assert_int_equal(ardn_plan_start(&plan), 0);
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&to, sizeof to), 0);
    struct ardw_hdr h = {
        .conn_id = 5, .size = 16, .epoch = 1, .seq = 1, .type_hash = ard_type_hash(type)};
    uint8_t d[ARDW_HDR_SIZE + ARD_MAX_TYPE];
    size_t n = ardw_put_desc(d, &h, type);
    assert_true(n > ARDW_FRAG_HDR_SIZE + 16 + 8); /* longer than a data slot */
    assert_int_equal(send(fd, d, n, 0), (ssize_t)n);
    n = ardw_put_hdr(d, &h);
    memset(d + n, 7, 16);
    assert_int_equal(send(fd, d, n + 16, 0), (ssize_t)(n + 16));
    for (int i = 0; i < 100 && counter(&r, ARDN_C_RECEIVED) == 0; i++)
        sleep_ms(10);
    atomic_store(&ardn_stop, true);
    ardn_plan_join(&plan);
    assert_int_equal(counter(&r, ARDN_C_RECEIVED), 1);
    for (int c = 1; c < ARDW_NCAUSES; c++)
        assert_int_equal(atomic_load(&r.cnt.drop[c]), 0);
    close(fd);
    ardn_plan_close(&plan);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_an_input_that_is_no_socket_does_not_spin),
        cmocka_unit_test(test_a_failing_output_counts_and_goes_on),
        cmocka_unit_test(test_a_long_descriptor_of_a_small_packet_is_no_drop),
    };
    return TMAIN_RUN("sockerr", tests, argc, argv);
}
