/*
 * local.c - the ardnet side of the tests of ros2: endpoints: a writer or reader of a local
 * connection with the test messages of values.h.
 *
 *   ros2_local pub arm|all|image|cloud CONN [--count N] [--rate HZ]
 *   ros2_local sub arm|all|image|cloud CONN [--count N] [--first-ms F] [--idle-ms I] [--max-ms M]
 *
 * pub creates CONN with the message's type descriptor and sends N packets (default 1000) at
 * HZ (default 1000), the counter starting at the realtime clock in microseconds. sub prints
 * "received=N bad=N older=N first=C last=C" and exits 0 if it got its packets (at least one),
 * every one intact and newer than the one before.
 */
#include "ardnet.h"
#include "values.h"

#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
    (void)sig;
    stop = 1;
}

static long opt_long(int argc, char **argv, const char *name, long def)
{
    for (int i = 4; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return strtol(argv[i + 1], NULL, 10);
    return def;
}

int main(int argc, char **argv)
{
    if (ard_init(&argc, argv) < 0 || argc < 4) {
        fprintf(stderr, "usage: ros2_local pub|sub arm|all CONN [options]\n");
        return 2;
    }
    bool arm = strcmp(argv[2], "arm") == 0, pub = strcmp(argv[1], "pub") == 0;
    bool image = strcmp(argv[2], "image") == 0, cloud = strcmp(argv[2], "cloud") == 0;
    bool big = image || cloud;
    size_t size = arm ? sizeof(struct arm) : sizeof(struct all);
    const char *desc = arm ? ARM_DESC : ALL_DESC;
    if (big) {
        size = image ? IMAGE_SIZE : CLOUD_SIZE;
        desc = image ? IMAGE_DESC : CLOUD_DESC;
    }
    signal(SIGTERM, on_term);
    signal(SIGINT, on_term);
    ard_port *p = ard_create_on(argv[1], argv[3], pub ? ARD_OUT : ARD_IN, size, desc);
    if (!p) {
        fprintf(stderr, "ros2_local: %s\n", ard_errdetail());
        return 2;
    }
    void *buf = malloc(size);
    if (!buf)
        return 2;
    if (pub) {
        long count = opt_long(argc, argv, "--count", 1000), sent = 0;
        long rate = opt_long(argc, argv, "--rate", 1000);
        ard_period per;
        if (rate <= 0 || ard_period_init(&per, 1000000000LL / rate) < 0)
            return 2;
        uint64_t counter = 0;
        while (!stop && sent < count) {
            uint64_t now_us = (uint64_t)(ard_realtime_ns() / 1000);
            counter = now_us > counter ? now_us : counter + 1;
            if (big)
                fill_big(buf, size, counter);
            else if (arm)
                fill_arm(buf, counter);
            else
                fill_all(buf, counter);
            if (ard_send(p, buf) < 0) {
                fprintf(stderr, "ros2_local: %s\n", ard_errdetail());
                return 2;
            }
            sent++;
            ard_period_wait(&per);
        }
        printf("sent=%ld last=%" PRIu64 "\n", sent, counter);
        ard_close(p);
        free(buf);
        return 0;
    }
    long count = opt_long(argc, argv, "--count", 0);
    int64_t first_ns = opt_long(argc, argv, "--first-ms", 20000) * 1000000LL;
    int64_t idle_ns = opt_long(argc, argv, "--idle-ms", 2000) * 1000000LL;
    int64_t end = ard_now_ns() + opt_long(argc, argv, "--max-ms", 60000) * 1000000LL;
    uint64_t received = 0, bad = 0, older = 0, first = 0, last = 0;
    while (!stop && (count == 0 || received < (uint64_t)count)) {
        int64_t left = end - ard_now_ns(), wait = received ? idle_ns : first_ns;
        if (left <= 0)
            break;
        int rc = ard_rec_timed(p, buf, wait < left ? wait : left);
        if (rc == ARD_ETIMEDOUT)
            break;
        if (rc == ARD_EINTR)
            continue;
        if (rc < 0) {
            fprintf(stderr, "ros2_local: %s\n", ard_errdetail());
            return 2;
        }
        const char *field = big   ? (bad_big(buf, size) ? "data" : NULL)
                            : arm ? bad_arm(buf)
                                  : bad_all(buf);
        uint64_t c = big ? big_counter(buf) : arm ? arm_counter(buf) : ((struct all *)buf)->counter;
        if (field) {
            if (bad++ == 0)
                fprintf(stderr, "ros2_local: packet %" PRIu64 ": field '%s' is wrong\n", c, field);
            continue;
        }
        if (received && c <= last && older++ == 0)
            fprintf(stderr, "ros2_local: packet %" PRIu64 " after %" PRIu64 "\n", c, last);
        if (!received)
            first = c;
        if (!received || c > last)
            last = c;
        received++;
    }
    printf("received=%" PRIu64 " bad=%" PRIu64 " older=%" PRIu64 " first=%" PRIu64 " last=%" PRIu64
           "\n",
           received, bad, older, first, last);
    ard_close(p);
    free(buf);
    return received > 0 && bad == 0 && older == 0 ? 0 : 1;
}
