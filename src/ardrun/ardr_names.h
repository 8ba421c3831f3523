/*
 * ardr_names.h - ardrun's names and limits: what a group file may say. ardrun checks its
 * group files and plugins against them; ardstart checks a system description's groups and
 * plugin blocks against the same before it writes the group files that ardrun reads.
 * Internal, never installed.
 */
#ifndef ARDR_NAMES_H
#define ARDR_NAMES_H

#include <stdbool.h>
#include <string.h>

#define ARDR_NAME_MAX 31 /* group, instance, rate, port and parameter names */
#define ARDR_MAX_BLOCKS 256
#define ARDR_MAX_RATES 16
#define ARDR_STR_MAX 255        /* a parameter's value (bytes) */
#define ARDR_CPUS_MAX 63        /* a rate's CPU list (characters) */
#define ARDR_PLUGIN_MAX 2000    /* a plugin's file name as given (characters) */
#define ARDR_DIVIDE_MAX 1000000 /* a rate runs every 1..ARDR_DIVIDE_MAX base periods */
#define ARDR_PRIO_MAX 99        /* SCHED_FIFO priority of a rate, 0 (none) ..ARDR_PRIO_MAX */
#define ARDR_HZ_MIN 0.001       /* the base rate (rate_hz, --rate) in Hz */
#define ARDR_HZ_MAX 100000.0

#define ARDR_STR2_(x) #x
#define ARDR_STR_(x) ARDR_STR2_(x)
/* The name rule in words, for messages. */
#define ARDR_NAME_RULE "[A-Za-z0-9_-], at most " ARDR_STR_(ARDR_NAME_MAX) " characters"

/* A name by the rule: 1..ARDR_NAME_MAX of [A-Za-z0-9_-] (no '.', which joins an instance
 * and its port). NULL is not one. */
static inline bool ardr_name_ok(const char *s)
{
    if (s == NULL || !*s || strlen(s) > ARDR_NAME_MAX)
        return false;
    for (const char *p = s; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '_' || *p == '-'))
            return false;
    return true;
}

#endif /* ARDR_NAMES_H */
