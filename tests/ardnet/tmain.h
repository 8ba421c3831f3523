/*
 * tmain.h - the main() of ardnet's unit tests that use shared memory: the tests run in a
 * domain of their own (t_NAME_PID), whose objects are removed at the end.
 * Include after <cmocka.h>.
 */
#ifndef TMAIN_H
#define TMAIN_H

#include <ardnet.h>

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* Run `tests` (n of them) in domain t_NAME_PID; returns main's exit code. */
static inline int tmain_run(const char *name, const struct CMUnitTest *tests, size_t n, int argc,
                            char **argv)
{
    char dom[64];
    snprintf(dom, sizeof dom, "t_%s_%d", name, (int)getpid());
    setenv("ARD_DOMAIN", dom, 1);
    if (ard_init(&argc, argv) < 0)
        return 1;
    int rc = _cmocka_run_group_tests(name, tests, n, NULL, NULL);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -f /dev/shm/ard.%s.*", dom);
    if (system(cmd) != 0)
        rc = rc ? rc : 1;
    ard_fini();
    return rc;
}

#define TMAIN_RUN(name, tests, argc, argv)                                                         \
    tmain_run(name, tests, sizeof(tests) / sizeof((tests)[0]), argc, argv)

#endif /* TMAIN_H */
