/*
 * ready.c - telling the starter (ardstart --wait) that a block is ready.
 *
 * ardstart passes ARD_READY_FD=FD:DEV:INO: the descriptor of the write end of its readiness
 * pipe and that pipe's st_dev and st_ino. The variable outlives the descriptor it names: a
 * program may close FD and open something else there (a connection's shared memory, a file),
 * or hand the variable to a child that never got the descriptor. So the line is written only
 * when FD is still that very pipe; otherwise nothing is written anywhere.
 */
#include "ardi.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define READY_VAR "ARD_READY_FD"

/* "FD:DEV:INO", three decimal numbers; 0 or ARD_EINVAL. */
static int parse(const char *s, int *fd, uint64_t *dev, uint64_t *ino)
{
    uint64_t v[3];
    const char *p = s;
    for (int i = 0; i < 3; i++) {
        if (*p < '0' || *p > '9')
            return ARD_EINVAL;
        uint64_t x = 0;
        for (; *p >= '0' && *p <= '9'; p++) {
            if (x > (UINT64_MAX - 9) / 10)
                return ARD_EINVAL;
            x = x * 10 + (uint64_t)(*p - '0');
        }
        v[i] = x;
        if (*p != (i < 2 ? ':' : '\0'))
            return ARD_EINVAL;
        p++;
    }
    if (v[0] > INT_MAX)
        return ARD_EINVAL;
    *fd = (int)v[0];
    *dev = v[1];
    *ino = v[2];
    return 0;
}

int ardi_ready_for(long pid)
{
    const char *env = getenv(READY_VAR);
    if (env == NULL)
        return 0;
    if (*env == '\0') {
        unsetenv(READY_VAR);
        return 0;
    }
    char s[80];
    snprintf(s, sizeof s, "%s", env);
    unsetenv(READY_VAR); /* consumed: a child never inherits it from us */
    int fd;
    uint64_t dev, ino;
    if (strlen(env) >= sizeof s || parse(s, &fd, &dev, &ino) < 0)
        return ardi_fail(ARD_EINVAL, "%s='%.40s': expected FD:DEV:INO (set by ardstart --wait)",
                         READY_VAR, s);
    /* Not the starter's pipe any more (closed, reused for another file, or never ours):
     * there is nobody to tell, and the descriptor is left alone. */
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISFIFO(st.st_mode) || (uint64_t)st.st_dev != dev ||
        (uint64_t)st.st_ino != ino)
        return 0;
    char line[40];
    int n = snprintf(line, sizeof line, "ready %ld\n", pid);
    ssize_t w;
    do
        w = write(fd, line, (size_t)n);
    while (w < 0 && errno == EINTR);
    int e = errno;
    close(fd);
    if (w != n)
        return ardi_fail_errno(ARD_ESYS, w < 0 ? e : EIO, "readiness: write to %s=%s", READY_VAR,
                               s);
    return 1;
}

int ard_ready(void)
{
    return ardi_ready_for((long)getpid());
}
