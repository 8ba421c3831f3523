/*
 * ardyaml.h - what the project's YAML loaders (ardnet routes, ardstart systems, ardrun
 * groups, ard siggen) share: the depth guard, loading a file, walking its nodes, turning
 * scalars into numbers and booleans within a range, and errors that name FILE:LINE and the
 * key. Internal, never installed.
 */
#ifndef ARDYAML_H
#define ARDYAML_H

#include <stdbool.h>
#include <stdio.h>
#include <yaml.h>

/* libyaml's loader takes time quadratic in the nesting depth of flow collections ([[[...)
 * and recursion to build them, so a file is first read as events and refused as soon as it
 * nests deeper than `max_depth` mappings and sequences. Syntax errors are left to the loader,
 * which reports them better. A file that cannot be read twice (a pipe) is first copied into an
 * anonymous temporary file that replaces *f (the caller closes whichever *f it gets back).
 * Rewinds *f. Returns 0, or ARD_EINVAL with the detail "FILE:LINE:COLUMN: nested deeper than
 * N levels" or "FILE: larger than 64 MiB (read from a pipe)", or ARD_ESYS when the file or
 * the copy cannot be read or written (ard_errdetail). */
int ardy_check_depth(const char *file, FILE **f, int max_depth);

/* A loaded YAML file and how its errors name a place. */
struct ardy_doc {
    yaml_document_t doc;
    const char *file; /* as the user gave it, for messages */
    bool column;      /* places as FILE:LINE:COLUMN (else FILE:LINE) */
    bool loaded;
};

/* The depth guard (ardy_check_depth), then the whole file as a document into y. *f as for
 * ardy_check_depth; the caller closes it (the document does not need it any more). Returns
 * 0, or ARD_EINVAL with "FILE:LINE[:COLUMN]: YAML error: PROBLEM" for a syntax error, or the
 * depth guard's error (ard_errdetail). */
int ardy_load(struct ardy_doc *y, const char *file, FILE **f, int max_depth, bool column);
/* Frees the document (nothing when it was not loaded). */
void ardy_free(struct ardy_doc *y);

/* The root node (NULL: an empty file) and the node of an id. */
yaml_node_t *ardy_root(struct ardy_doc *y);
yaml_node_t *ardy_node(const struct ardy_doc *y, int id);
/* The text of a scalar node; NULL for a mapping, a sequence or no node. */
const char *ardy_text(const yaml_node_t *n);
/* The value of `key` in a mapping node; NULL when map is not a mapping or has no such key. */
yaml_node_t *ardy_lookup(const struct ardy_doc *y, const yaml_node_t *map, const char *key);
/* A sequence's length (0 for any other node). */
int ardy_len(const yaml_node_t *seq);

/* Records ARD_EINVAL with the detail "FILE:LINE[:COLUMN]: MESSAGE" (n: the node it is about;
 * NULL: "FILE: MESSAGE") and returns ARD_EINVAL. */
int ardy_fail(const struct ardy_doc *y, const yaml_node_t *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* "FILE:LINE[:COLUMN]: unknown key 'KEY'" followed by " " and `known` (the keys that are, e.g.
 * "in a rate (name, divide)"; NULL: nothing), through ardy_fail. */
int ardy_unknown_key(const struct ardy_doc *y, const yaml_node_t *k, const char *key,
                     const char *known);

/* Scalars to values, for loaders that word their own errors: 0 and *out, or -1 when t is not
 * one (then *out is untouched). ardy_long: a decimal integer in [lo, hi]; ardy_double: a
 * finite number in [lo, hi]; ardy_bool: true/yes/on or false/no/off. */
int ardy_long(const char *t, long lo, long hi, long *out);
int ardy_double(const char *t, double lo, double hi, double *out);
int ardy_bool(const char *t, bool *out);

#define ARDY_CAT2_(a, b) a##b
#define ARDY_CAT_(a, b) ARDY_CAT2_(a, b)
#define ARDY_IT_ ARDY_CAT_(ardy_it_, __LINE__) /* one per line: the loops nest */

/* for each pair of a mapping node (which must be one): k and v, its key and value nodes.
 * `continue` goes on to the next pair; leave the walk with return or goto (a `break` would
 * only end the current pair: both walks are two loops). */
#define ARDY_FOR_PAIRS(y, map, k, v)                                                               \
    for (yaml_node_pair_t *ARDY_IT_ = (map)->data.mapping.pairs.start;                             \
         ARDY_IT_ < (map)->data.mapping.pairs.top; ARDY_IT_++)                                     \
        for (yaml_node_t *k = ardy_node((y), ARDY_IT_->key), *v = ardy_node((y), ARDY_IT_->value); \
             k; k = NULL)

/* for each item of a sequence node (which must be one): e, its node. */
#define ARDY_FOR_ITEMS(y, seq, e)                                                                  \
    for (yaml_node_item_t *ARDY_IT_ = (seq)->data.sequence.items.start;                            \
         ARDY_IT_ < (seq)->data.sequence.items.top; ARDY_IT_++)                                    \
        for (yaml_node_t *e = ardy_node((y), *ARDY_IT_); e; e = NULL)

#endif /* ARDYAML_H */
