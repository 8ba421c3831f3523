/*
 * ardc_ready.h - readiness held back. Under ardstart, $ARD_READY_FD makes ard_init say "ready"
 * at once; ardnet is ready when every route exists, ardrun after its scheme check or its
 * block's init. Such a program takes the variable out of the environment before ard_init and
 * puts it back when it is ready, then calls ard_ready. Header-only, for the programs; never
 * installed.
 */
#ifndef ARDC_READY_H
#define ARDC_READY_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#define ARDC_READY_VAR "ARD_READY_FD"

/* The variable's value, "FD:DEV:INO" (at most 52 characters); "" when there was none. */
struct ardc_ready {
    char value[64];
};

/* Take $ARD_READY_FD out of the environment into r. */
static inline void ardc_ready_hold(struct ardc_ready *r)
{
    const char *v = getenv(ARDC_READY_VAR);
    snprintf(r->value, sizeof r->value, "%s", v ? v : "");
    unsetenv(ARDC_READY_VAR);
}

/* Put the held value back for ard_ready: true when there was one. */
static inline bool ardc_ready_release(const struct ardc_ready *r)
{
    if (!r->value[0])
        return false;
    setenv(ARDC_READY_VAR, r->value, 1);
    return true;
}

#endif
