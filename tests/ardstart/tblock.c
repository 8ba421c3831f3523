/*
 * tblock.c - a test block for the ardstart tests: ports from the command line, readiness via
 * ard_init, then a send/receive loop until told to stop.
 *
 *   ardstart_tblock [--ignore-term] [--exit-after MS CODE] [--delay MS] [out:CONN|in:CONN]...
 *   --delay MS        sleep before ard_init (readiness comes late)
 *   --exit-after MS CODE   exit with CODE after MS milliseconds
 *   --ignore-term     ignore SIGTERM (ardkill must use SIGKILL)
 */
#include "ardnet.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    long exit_ms = -1, delay_ms = 0;
    int code = 0;
    ard_port *outs[8], *ins[8];
    int nout = 0, nin = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--ignore-term")) {
            signal(SIGTERM, SIG_IGN);
        } else if (!strcmp(argv[i], "--exit-after") && i + 2 < argc) {
            exit_ms = atol(argv[++i]);
            code = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--delay") && i + 1 < argc) {
            delay_ms = atol(argv[++i]);
        } else if (!strncmp(argv[i], "out:", 4) && nout < 8) {
            outs[nout] = ard_create(argv[i] + 4, ARD_OUT, 8, "u64");
            if (!outs[nout++]) {
                fprintf(stderr, "tblock: %s\n", ard_errdetail());
                return 1;
            }
        } else if (!strncmp(argv[i], "in:", 3) && nin < 8) {
            ins[nin] = ard_create(argv[i] + 3, ARD_IN, 8, "u64");
            if (!ins[nin++]) {
                fprintf(stderr, "tblock: %s\n", ard_errdetail());
                return 1;
            }
        } else if (!strncmp(argv[i], "--ard", 5)) {
            i++; /* left for ard_init */
        } else {
            fprintf(stderr, "tblock: unknown argument '%s'\n", argv[i]);
            return 1;
        }
    }
    if (delay_ms > 0)
        usleep((useconds_t)delay_ms * 1000);
    if (ard_init(&argc, argv) < 0) {
        fprintf(stderr, "tblock: %s\n", ard_errdetail());
        return 1;
    }
    printf("tblock %ld ready with %d out, %d in\n", (long)getpid(), nout, nin);
    fflush(stdout);
    ard_period p;
    if (ard_period_init(&p, 10000000) < 0)
        return 1;
    uint64_t n = 0;
    int got[8] = {0};
    for (;;) {
        n++;
        for (int i = 0; i < nout; i++)
            if (ard_send(outs[i], &n) < 0)
                return 1;
        for (int i = 0; i < nin; i++) {
            uint64_t v;
            int rc = ard_tryrec(ins[i], &v);
            if (rc < 0 && rc != ARD_ENODATA)
                return 1;
            if (rc == 1 && !got[i]) {
                got[i] = 1;
                printf("tblock %ld: first packet on %s\n", (long)getpid(),
                       ard_port_connection(ins[i]));
                fflush(stdout);
            }
        }
        if (exit_ms >= 0 && (int64_t)n * 10 >= exit_ms) {
            printf("tblock %ld exits with %d\n", (long)getpid(), code);
            return code;
        }
        ard_period_wait(&p);
    }
}
