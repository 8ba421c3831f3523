/*
 * ard_send_cost - what looking at a connection costs its writer: the time of one ard_send
 * (112-byte packets, batches of back-to-back sends) with nobody looking and with an ordinary
 * reader block, next to the same while `ard hz`, `ard list` (in a loop), `ard show -f` and
 * `ard delay` look at it. The
 * conditions take turns in every round, so that a drift of the shared machine hits them alike.
 *
 *   ard_send_cost [ROUNDS] [BATCHES] [SENDS]    (default 5 rounds of 51 batches of 10000)
 *
 * With $ARD_OTHER naming another `ard` binary (e.g. one built from an earlier commit), its
 * `ard list` loop and `ard show -f` take their turns too: a before/after comparison on one load.
 */
#include "ardnet.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef ARD_BIN
#define ARD_BIN "ard"
#endif

enum { NCOND = 8 };
static const char *const names[NCOND] = {"nobody looking (baseline)",
                                         "a plain reader (ard_rec)",
                                         "ard hz",
                                         "ard list, in a loop",
                                         "ard show -f",
                                         "ard delay",
                                         "other ard: list, in a loop",
                                         "other ard: show -f"};
static const char *other; /* $ARD_OTHER */

/* Condition 1: an ordinary block reading the connection, for comparison with the tools. */
static int reader(const char *domain)
{
    char *av[] = {"reader", NULL};
    int ac = 1;
    ard_port *in;
    if (ard_set_domain(domain) < 0 || (in = ard_create("x", ARD_IN, 112, NULL)) == NULL ||
        ard_init(&ac, av) < 0)
        return 111;
    double pkt[14];
    while (ard_rec(in, pkt) == 0)
        ;
    return 0;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static pid_t spawn(int cond, const char *dom)
{
    if (cond == 0)
        return 0;
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    int fd = open("/dev/null", O_WRONLY);
    dup2(fd, 1);
    switch (cond) {
    case 1:
        execl("/proc/self/exe", "ard_send_cost", "--reader", dom + 9, (char *)NULL);
        break;
    case 2:
        execl(ARD_BIN, ARD_BIN, dom, "hz", "x", (char *)NULL);
        break;
    case 3:
        execl("/bin/sh", "sh", "-c", "while :; do \"$0\" \"$1\" list; done", ARD_BIN, dom,
              (char *)NULL);
        break;
    case 4:
        execl(ARD_BIN, ARD_BIN, dom, "show", "-f", "x", (char *)NULL);
        break;
    case 5:
        execl(ARD_BIN, ARD_BIN, dom, "delay", "x", (char *)NULL);
        break;
    case 6:
        execl("/bin/sh", "sh", "-c", "while :; do \"$0\" \"$1\" list; done", other, dom,
              (char *)NULL);
        break;
    default:
        execl(other, other, dom, "show", "-f", "x", (char *)NULL);
    }
    _exit(127);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--reader") == 0)
        return reader(argv[2]);
    int rounds = argc > 1 ? atoi(argv[1]) : 5, batches = argc > 2 ? atoi(argv[2]) : 51,
        sends = argc > 3 ? atoi(argv[3]) : 10000;
    if (rounds < 1 || batches < 1 || sends < 1)
        return 100;
    other = getenv("ARD_OTHER");
    const int ncond = other && *other ? NCOND : NCOND - 2;
    char domain[32], dom[48];
    snprintf(domain, sizeof domain, "sendcost%d", (int)getpid());
    snprintf(dom, sizeof dom, "--domain=%s", domain);
    char *av[] = {"ard_send_cost", NULL};
    int ac = 1;
    ard_port *out;
    if (ard_set_domain(domain) < 0 ||
        (out = ard_create("x", ARD_OUT, 112, "q:f64[7] qd:f64[7]")) == NULL ||
        ard_init(&ac, av) < 0) {
        fprintf(stderr, "ard_send_cost: %s\n", ard_errdetail());
        return 111;
    }
    double pkt[14] = {0};
    double *v[NCOND];
    for (int c = 0; c < NCOND; c++)
        if ((v[c] = calloc((size_t)(rounds * batches), sizeof *v[c])) == NULL)
            return 111;
    for (int r = 0; r < rounds; r++)
        for (int c = 0; c < ncond; c++) {
            pid_t pid = spawn(c, dom);
            struct timespec settle = {0, 300000000};
            nanosleep(&settle, NULL); /* the tool is up and attached */
            for (int b = 0; b < batches; b++) {
                int64_t t0 = ard_now_ns();
                for (int i = 0; i < sends; i++) {
                    pkt[0] = i;
                    if (ard_send(out, pkt) < 0)
                        return 111;
                }
                v[c][r * batches + b] = (double)(ard_now_ns() - t0) / sends;
                /* a pause between batches, as a control loop has between its sends */
                struct timespec gap = {0, 1000000};
                nanosleep(&gap, NULL);
            }
            if (pid > 0) {
                kill(pid, SIGTERM);
                waitpid(pid, NULL, 0);
            }
        }
    printf("ard_send of 112 bytes, %d rounds x %d batches of %d sends, ns per send\n", rounds,
           batches, sends);
    for (int c = 0; c < ncond; c++) {
        int n = rounds * batches;
        qsort(v[c], (size_t)n, sizeof *v[c], cmp);
        printf("  %-28s median %7.1f   p10 %7.1f   p90 %7.1f\n", names[c], v[c][n / 2],
               v[c][n / 10], v[c][n * 9 / 10]);
    }
    ard_fini();
    if (ard_domain_unlink(domain) < 0)
        fprintf(stderr, "ard_send_cost: %s\n", ard_errdetail());
    return 0;
}
