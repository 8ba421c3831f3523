/*
 * opts.c - what the subcommands' option tables share (ardc_opt.h is the parser, the help and
 * the completion list): parsing a subcommand's words, repeatable options kept in arrays, the
 * writers' --size check, the refusal of arguments where none are taken.
 */
#include "ard.h"

int ardt_opts(const struct ardc_optset *s, int argc, char **argv, void *dest)
{
    int i = 1;
    return ardc_opt_parse(s, 0, argc, argv, &i, dest);
}

int ardt_push(void *dest, const struct ardc_opt *o, const char *value)
{
    char *d = dest;
    char **v = *(char ***)(void *)(d + o->off);
    int *n = (int *)(void *)(d + o->count);
    v[(*n)++] = (char *)value; /* a word of argv */
    return 0;
}

int ardt_no_arg(void *dest, char *word)
{
    (void)dest;
    return ardi_fail(ARD_EOPTION, "unexpected '%s' (see 'ard help %s')", word, ardt_sub);
}

int ardt_size_given(void *dest, const struct ardc_opt *o, const char *value)
{
    (void)value;
    if (*(const uint64_t *)(const void *)((const char *)dest + o->off) == 0)
        return ardi_fail(ARD_EOPTION, "--size 0: a connection holds at least 1 byte");
    return 0;
}
