/*
 * cli.c - what ardstart and ardkill do alike on their command line: a sane process state at
 * start, and option values (seconds, domain) checked with one wording; a bad one fails with
 * the library's detail (ard_errdetail), which the program's main prints.
 */
#include "books.h"

#include "ard_common.h"

#include <fcntl.h>
#include <signal.h>
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

int ardb_opt_seconds(const char *opt, const char *s, bool zero_ok, double max, int64_t *ns)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !(zero_ok ? v >= 0 : v > 0) || v > max)
        return ardi_fail(ARD_EOPTION, "%s '%s': expected seconds %s 0, at most %.0f", opt, s,
                         zero_ok ? ">=" : ">", max);
    *ns = (int64_t)(v * 1e9 + 0.5);
    return 0;
}

int ardb_opt_domain(const char *opt, const char **domain)
{
    return ardi_default_domain(opt, "option '--domain'", domain);
}
