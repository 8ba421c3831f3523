/*
 * cli.c - what ardstart and ardkill do alike on their command line: a sane process state at
 * start, and option values (seconds, domain, host) checked with one wording.
 */
#include "books.h"

#include "ard_common.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

void ardb_main_init(void)
{
    /* Started with stdin, stdout or stderr closed (by a daemon, `>&-`), the next descriptor
     * we open - the books' lock, a pipe to the supervisor - would take its place and get
     * the output; /dev/null fills the gaps first. */
    for (int fd = 0; fd <= 2; fd++)
        if (fcntl(fd, F_GETFD) < 0) {
            int n = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
            if (n >= 0 && n != fd) {
                dup2(n, fd);
                close(n);
            }
        }
    /* An ignored SIGCHLD is inherited across exec and would make waitpid fail: the
     * supervisor and the transport runner need their children's status. */
    signal(SIGCHLD, SIG_DFL);
}

int ardb_opt_seconds(const char *prog, const char *opt, const char *s, bool zero_ok, double max,
                     int64_t *ns)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !(zero_ok ? v >= 0 : v > 0) || v > max) {
        fprintf(stderr, "%s: %s '%s': expected seconds %s 0, at most %.0f\n", prog, opt, s,
                zero_ok ? ">=" : ">", max);
        return -1;
    }
    *ns = (int64_t)(v * 1e9 + 0.5);
    return 0;
}

const char *ardb_opt_domain(const char *prog, const char *opt)
{
    const char *d;
    if (ardi_default_domain(opt, "option '--domain'", &d) < 0) {
        fprintf(stderr, "%s: %s\n", prog, ard_errdetail());
        return NULL;
    }
    return d;
}
