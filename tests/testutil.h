/* testutil.h - small helpers shared by the library's cmocka tests (include after cmocka.h). */
#ifndef ARD_TESTUTIL_H
#define ARD_TESTUTIL_H

#include <string.h>

/* uid/gid of Debian's "nobody"/"nogroup", for tests that drop privileges. */
#define NOBODY_UID 65534
#define NOGROUP_GID 65534
/* uid/gid of Debian's "daemon": a second unprivileged user. */
#define DAEMON_UID 1
#define DAEMON_GID 1

/* Fail the test unless `needle` occurs in `hay`, showing both. */
#define ASSERT_CONTAINS(hay, needle)                                                               \
    do {                                                                                           \
        const char *h_ = (hay), *n_ = (needle);                                                    \
        if (strstr(h_, n_) == NULL)                                                                \
            fail_msg("expected \"%s\" in \"%s\"", n_, h_);                                         \
    } while (0)

#endif /* ARD_TESTUTIL_H */
