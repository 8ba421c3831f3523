/*
 * ardyaml.h - what the project's YAML loaders (ardnet routes, ardstart systems, ardrun
 * groups) share. Internal, never installed.
 */
#ifndef ARDYAML_H
#define ARDYAML_H

#include <stdio.h>

/* libyaml's loader takes time quadratic in the nesting depth of flow collections ([[[...)
 * and recursion to build them, so a file is first read as events and refused as soon as it
 * nests deeper than `max_depth` mappings and sequences. Syntax errors are left to the loader,
 * which reports them better. A file that cannot be read twice (a pipe) is first copied into an
 * anonymous temporary file that replaces *f (the caller closes whichever *f it gets back).
 * Rewinds *f. Returns 0, or ARD_EINVAL with the detail "FILE:LINE:COLUMN: nested deeper than
 * N levels" or "FILE: larger than 64 MiB (read from a pipe)", or ARD_ESYS when the file or
 * the copy cannot be read or written (ard_errdetail). */
int ardy_check_depth(const char *file, FILE **f, int max_depth);

#endif /* ARDYAML_H */
