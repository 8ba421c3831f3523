/*
 * test_loan.c - the zero-copy calls of src/lib/port.c: ard_send_loan / ard_send_commit (a
 * writer fills the connection's next slot in place) and ard_sent (the writer's thread reads
 * the newest packet in place). They keep ard_send's promises: readers see the previous packet
 * until the commit and never a torn one, a writer killed (or closed) between loan and commit
 * leaves the previous packet as the newest, and the next writer continues the sequence.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ardnet.h"

#define SIZE 1024

static char domain[64];

static void fill(unsigned char *p, uint64_t v)
{
    for (size_t i = 0; i < SIZE; i++)
        p[i] = (unsigned char)(v * 7 + i);
    memcpy(p, &v, 8);
}

/* Is p exactly what fill(p, v) wrote? */
static bool is(const unsigned char *p, uint64_t v)
{
    unsigned char want[SIZE];
    fill(want, v);
    return memcmp(p, want, SIZE) == 0;
}

static void init_ports(void)
{
    char arg[80];
    snprintf(arg, sizeof arg, "--ard-domain=%s", domain);
    char *argv[] = {"test_loan", arg, NULL};
    int argc = 2;
    assert_int_equal(ard_init(&argc, argv), 0);
}

static int setup(void **state)
{
    (void)state;
    static unsigned n;
    snprintf(domain, sizeof domain, "loan%d-%u", (int)getpid(), n++);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    ard_fini();
    if (ard_domain_unlink(domain) < 0)
        fprintf(stderr, "ard_domain_unlink: %s\n", ard_errdetail());
    return 0;
}

static void test_commit_publishes_what_was_written_in_place(void **state)
{
    (void)state;
    ard_port *out = ard_create("c", ARD_OUT, SIZE, NULL);
    ard_port *in = ard_create_on("r", "c", ARD_IN, SIZE, NULL);
    assert_non_null(out);
    assert_non_null(in);
    init_ports();
    unsigned char buf[SIZE];

    unsigned char *slot = ard_send_loan(out);
    assert_non_null(slot);
    fill(slot, 1);
    /* not published before the commit */
    assert_int_equal(ard_poll(in), ARD_ENODATA);
    assert_int_equal(ard_tryrec(in, buf), ARD_ENODATA);
    assert_int_equal(ard_send_commit(out), 0);
    assert_int_equal(ard_tryrec(in, buf), 1);
    assert_true(is(buf, 1));
    struct ard_info ri = ard_port_info(in), wi = ard_port_info(out);
    assert_int_equal(ri.seq, 1);
    assert_int_equal(wi.seq, 1);
    assert_int_equal(ri.mono_ns, wi.mono_ns);
    assert_true(wi.mono_ns > 0 && wi.real_ns > 0);

    /* a loan after an ordinary send; the reader keeps the previous packet until the commit */
    fill(buf, 2);
    assert_int_equal(ard_send(out, buf), 0);
    slot = ard_send_loan(out);
    assert_non_null(slot);
    memset(slot, 0xAB, SIZE / 2); /* half written */
    assert_int_equal(ard_tryrec(in, buf), 1);
    assert_true(is(buf, 2));
    assert_int_equal(ard_poll(in), 0);
    fill(slot, 3);
    assert_int_equal(ard_send_commit_stamped(out, 1234, 5678), 0);
    assert_int_equal(ard_poll(in), 1);
    assert_int_equal(ard_tryrec(in, buf), 1);
    assert_true(is(buf, 3));
    ri = ard_port_info(in);
    assert_int_equal(ri.seq, 3);
    assert_int_equal(ri.mono_ns, 1234);
    assert_int_equal(ri.real_ns, 5678);
}

static void test_second_loan_is_the_same_slot_and_commit_needs_a_loan(void **state)
{
    (void)state;
    ard_port *out = ard_create("c", ARD_OUT, SIZE, NULL);
    ard_port *in = ard_create_on("r", "c", ARD_IN, SIZE, NULL);
    assert_non_null(out);
    assert_non_null(in);
    init_ports();
    assert_int_equal(ard_send_commit(out), ARD_ESTATE);
    assert_non_null(strstr(ard_errdetail(), "without a loaned slot"));

    unsigned char *a = ard_send_loan(out);
    assert_non_null(a);
    fill(a, 7);
    unsigned char *b = ard_send_loan(out);
    assert_ptr_equal(a, b);
    assert_true(is(b, 7));
    assert_int_equal(ard_send_commit(out), 0);
    assert_int_equal(ard_send_commit(out), ARD_ESTATE); /* the loan ended */
    unsigned char buf[SIZE];
    assert_int_equal(ard_tryrec(in, buf), 1);
    assert_true(is(buf, 7));
    assert_int_equal(ard_port_info(in).seq, 1);
    /* the next loan is the next slot */
    unsigned char *c = ard_send_loan(out);
    assert_non_null(c);
    assert_ptr_not_equal(c, a);
    fill(c, 8);
    assert_int_equal(ard_send_commit(out), 0);
    assert_int_equal(ard_tryrec(in, buf), 1);
    assert_int_equal(ard_port_info(in).seq, 2);
    assert_int_equal(ard_port_info(in).skipped, 0);
}

static void test_send_refused_while_a_loan_is_open(void **state)
{
    (void)state;
    ard_port *out = ard_create("c", ARD_OUT, SIZE, NULL);
    ard_port *in = ard_create_on("r", "c", ARD_IN, SIZE, NULL);
    assert_non_null(out);
    assert_non_null(in);
    init_ports();
    unsigned char buf[SIZE];
    fill(buf, 1);
    unsigned char *slot = ard_send_loan(out);
    assert_non_null(slot);
    fill(slot, 2);
    assert_int_equal(ard_send(out, buf), ARD_ESTATE);
    assert_non_null(strstr(ard_errdetail(), "loaned slot is open"));
    assert_int_equal(ard_send_stamped(out, buf, 1, 2), ARD_ESTATE);
    assert_int_equal(ard_tryrec(in, buf), ARD_ENODATA); /* nothing was published */
    assert_int_equal(ard_send_commit(out), 0);
    assert_int_equal(ard_tryrec(in, buf), 1);
    assert_true(is(buf, 2));
    fill(buf, 3);
    assert_int_equal(ard_send(out, buf), 0);
    assert_int_equal(ard_tryrec(in, buf), 1);
    assert_true(is(buf, 3));
    assert_int_equal(ard_port_info(in).seq, 2);
    assert_int_equal(ard_port_info(in).skipped, 0);
}

static void test_bad_arguments_are_refused(void **state)
{
    (void)state;
    ard_port *early = ard_create("c", ARD_OUT, SIZE, NULL);
    assert_non_null(early);
    assert_null(ard_send_loan(early)); /* not attached yet */
    assert_int_equal(ard_lasterror(), ARD_ESTATE);
    assert_int_equal(ard_send_commit(early), ARD_ESTATE);
    assert_null(ard_sent(early, NULL));
    assert_int_equal(ard_lasterror(), ARD_ESTATE);
    init_ports();
    ard_port *in = ard_create_on("r", "c", ARD_IN, SIZE, NULL);
    assert_non_null(in);
    assert_null(ard_send_loan(NULL));
    assert_int_equal(ard_lasterror(), ARD_EINVAL);
    assert_null(ard_send_loan(in));
    assert_int_equal(ard_lasterror(), ARD_EINVAL);
    assert_non_null(strstr(ard_errdetail(), "not an OUT port"));
    assert_int_equal(ard_send_commit(NULL), ARD_EINVAL);
    assert_int_equal(ard_send_commit(in), ARD_EINVAL);
    assert_int_equal(ard_send_commit_stamped(in, 1, 2), ARD_EINVAL);
    assert_null(ard_sent(NULL, NULL));
    assert_int_equal(ard_lasterror(), ARD_EINVAL);
    assert_null(ard_sent(in, NULL));
    assert_int_equal(ard_lasterror(), ARD_EINVAL);
}

/* Around the ring several times: each loan is scribbled over before it is filled, and the
 * reader always gets the previous packet intact until the commit. */
static void test_reader_never_sees_a_loaned_slot_around_the_ring(void **state)
{
    (void)state;
    ard_port *out = ard_create("c", ARD_OUT, SIZE, NULL);
    ard_port *in = ard_create_on("r", "c", ARD_IN, SIZE, NULL);
    assert_non_null(out);
    assert_non_null(in);
    init_ports();
    unsigned char buf[SIZE];
    for (uint64_t v = 1; v <= 40; v++) {
        unsigned char *slot = ard_send_loan(out);
        assert_non_null(slot);
        memset(slot, 0xCC, SIZE);
        if (v > 1) {
            assert_int_equal(ard_tryrec(in, buf), 0);
            assert_true(is(buf, v - 1));
        }
        fill(slot, v);
        assert_int_equal(ard_send_commit(out), 0);
        assert_int_equal(ard_tryrec(in, buf), 1);
        assert_true(is(buf, v));
        assert_int_equal(ard_port_info(in).seq, v);
    }
}

static void test_sent_reads_the_newest_packet_in_place(void **state)
{
    (void)state;
    ard_port *out = ard_create("c", ARD_OUT, SIZE, NULL);
    assert_non_null(out);
    init_ports();
    struct ard_info info = {0};
    assert_null(ard_sent(out, &info));
    assert_int_equal(ard_lasterror(), ARD_ENODATA);

    unsigned char buf[SIZE];
    fill(buf, 1);
    assert_int_equal(ard_send_stamped(out, buf, 11, 22), 0);
    const unsigned char *p = ard_sent(out, &info);
    assert_non_null(p);
    assert_true(is(p, 1));
    assert_int_equal(info.seq, 1);
    assert_int_equal(info.mono_ns, 11);
    assert_int_equal(info.real_ns, 22);

    /* a loan open: ard_sent still gives packet 1, untouched by writes into the loan */
    unsigned char *slot = ard_send_loan(out);
    assert_non_null(slot);
    assert_ptr_not_equal(slot, p);
    memset(slot, 0x55, SIZE);
    assert_ptr_equal(ard_sent(out, &info), p);
    assert_true(is(p, 1));
    assert_int_equal(info.seq, 1);
    fill(slot, 2);
    assert_int_equal(ard_send_commit_stamped(out, 33, 44), 0);
    const unsigned char *q = ard_sent(out, &info);
    assert_ptr_equal(q, slot);
    assert_true(is(q, 2));
    assert_int_equal(info.seq, 2);
    assert_int_equal(info.mono_ns, 33);
    assert_int_equal(ard_sent(out, NULL), q);
}

/* A child writes and exits; a new writer's ard_sent gives the packet the child left. */
static void test_sent_before_the_first_send_gives_the_previous_writers_packet(void **state)
{
    (void)state;
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        ard_port *o = ard_create("c", ARD_OUT, SIZE, NULL);
        unsigned char b[SIZE];
        fill(b, 41);
        char arg[80];
        snprintf(arg, sizeof arg, "--ard-domain=%s", domain);
        char *argv[] = {"child", arg, NULL};
        int argc = 2;
        if (o == NULL || ard_init(&argc, argv) != 0 || ard_send(o, b) != 0 ||
            ard_send_stamped(o, b, 77, 88) != 0)
            _exit(1);
        fill(b, 42);
        _exit(ard_send_stamped(o, b, 99, 111) == 0 ? 0 : 1);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    ard_port *out = ard_create("c", ARD_OUT, SIZE, NULL);
    assert_non_null(out);
    init_ports();
    struct ard_info info;
    const unsigned char *p = ard_sent(out, &info);
    assert_non_null(p);
    assert_true(is(p, 42));
    assert_int_equal(info.seq, 3);
    assert_int_equal(info.mono_ns, 99);
    assert_int_equal(info.real_ns, 111);
}

/* The writer process is killed with SIGKILL between loan and commit, its loan half written.
 * The reader (another process: this one) still gets the previous packet intact, and a new
 * writer continues the sequence through the abandoned slot. */
static void test_writer_killed_between_loan_and_commit(void **state)
{
    (void)state;
    ard_port *in = ard_create_on("r", "c", ARD_IN, SIZE, NULL);
    assert_non_null(in);
    init_ports();
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        ard_fini();
        ard_port *o = ard_create("c", ARD_OUT, SIZE, NULL);
        char arg[80];
        snprintf(arg, sizeof arg, "--ard-domain=%s", domain);
        char *argv[] = {"child", arg, NULL};
        int argc = 2;
        unsigned char b[SIZE];
        fill(b, 1);
        if (o == NULL || ard_init(&argc, argv) != 0 || ard_send(o, b) != 0)
            _exit(1);
        unsigned char *slot = ard_send_loan(o);
        if (slot == NULL)
            _exit(1);
        memset(slot, 0x99, SIZE / 2);
        if (write(fds[1], "L", 1) != 1)
            _exit(1);
        for (;;)
            pause();
    }
    close(fds[1]);
    char c;
    assert_int_equal(read(fds[0], &c, 1), 1);
    close(fds[0]);
    assert_int_equal(kill(pid, SIGKILL), 0);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFSIGNALED(st));

    unsigned char buf[SIZE];
    assert_int_equal(ard_tryrec(in, buf), 1);
    assert_true(is(buf, 1));
    assert_int_equal(ard_port_info(in).seq, 1);

    /* the next writer takes over without clean-up and reuses the abandoned slot */
    ard_port *out = ard_create("c", ARD_OUT, SIZE, NULL);
    assert_non_null(out);
    unsigned char *slot = ard_send_loan(out);
    assert_non_null(slot);
    assert_int_equal(ard_tryrec(in, buf), 0);
    assert_true(is(buf, 1));
    fill(slot, 2);
    assert_int_equal(ard_send_commit(out), 0);
    assert_int_equal(ard_tryrec(in, buf), 1);
    assert_true(is(buf, 2));
    assert_int_equal(ard_port_info(in).seq, 2);
    assert_int_equal(ard_port_info(in).skipped, 0);
}

/* Closing a port with a loan open abandons the loan, as a kill does. */
static void test_close_with_a_loan_open_keeps_the_previous_packet(void **state)
{
    (void)state;
    ard_port *out = ard_create("c", ARD_OUT, SIZE, NULL);
    ard_port *in = ard_create_on("r", "c", ARD_IN, SIZE, NULL);
    assert_non_null(out);
    assert_non_null(in);
    init_ports();
    unsigned char buf[SIZE];
    fill(buf, 5);
    assert_int_equal(ard_send(out, buf), 0);
    unsigned char *slot = ard_send_loan(out);
    assert_non_null(slot);
    memset(slot, 0x77, SIZE);
    ard_close(out);
    assert_int_equal(ard_tryrec(in, buf), 1);
    assert_true(is(buf, 5));
    out = ard_create("c", ARD_OUT, SIZE, NULL);
    assert_non_null(out);
    fill(buf, 6);
    assert_int_equal(ard_send(out, buf), 0);
    assert_int_equal(ard_tryrec(in, buf), 1);
    assert_true(is(buf, 6));
    assert_int_equal(ard_port_info(in).seq, 2);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_commit_publishes_what_was_written_in_place),
        T(test_second_loan_is_the_same_slot_and_commit_needs_a_loan),
        T(test_send_refused_while_a_loan_is_open),
        T(test_bad_arguments_are_refused),
        T(test_reader_never_sees_a_loaned_slot_around_the_ring),
        T(test_sent_reads_the_newest_packet_in_place),
        T(test_sent_before_the_first_send_gives_the_previous_writers_packet),
        T(test_writer_killed_between_loan_and_commit),
        T(test_close_with_a_loan_open_keeps_the_previous_packet),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
