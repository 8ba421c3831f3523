/* error.c - error codes, their texts, and the thread-local detail of the last failure. */
#include "ardi.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char detail[768];
static _Thread_local int last_code;

const char *ard_strerror(int code)
{
    switch (code) {
    case ARD_OK:
        return "success";
    case ARD_EINVAL:
        return "invalid argument";
    case ARD_ENOMEM:
        return "out of memory";
    case ARD_ESYS:
        return "system call failed";
    case ARD_EOPTION:
        return "bad command-line option";
    case ARD_ETYPE:
        return "packet size or type mismatch";
    case ARD_EBUSY:
        return "connection already has a live writer";
    case ARD_ENODATA:
        return "nothing was ever sent on the connection";
    case ARD_ETIMEDOUT:
        return "timed out waiting for a new packet";
    case ARD_EACCES:
        return "permission denied";
    case ARD_ENOENT:
        return "no such connection";
    case ARD_ESTALE:
        return "shared memory object is foreign, stale or damaged";
    case ARD_ERTREFUSED:
        return "realtime request refused";
    case ARD_ESTATE:
        return "call not valid in this state";
    case ARD_EINTR:
        return "interrupted by a signal";
    case ARD_EAGAIN:
        return "packet overwritten while read; try again";
    default:
        return "unknown error code";
    }
}

const char *ard_errdetail(void)
{
    return detail;
}

int ard_lasterror(void)
{
    return last_code;
}

static int vfail(int code, int err, const char *fmt, va_list ap)
{
    int n = vsnprintf(detail, sizeof detail, fmt, ap);
    if (err != 0 && n >= 0 && (size_t)n < sizeof detail)
        snprintf(detail + n, sizeof detail - (size_t)n, ": %s", strerror(err));
    last_code = code;
    return code;
}

int ardi_fail(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(code, 0, fmt, ap);
    va_end(ap);
    return code;
}

int ardi_fail_errno(int code, int err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(code, err, fmt, ap);
    va_end(ap);
    return code;
}
