/*
 * ardc_opt.h - the one form of a program's options: a table whose rows each bind a name, a
 * short name, a kind, a destination (or a callback), the help, where the option applies and its
 * YAML key. The parser, the YAML loaders, the help text and the bash completion read the same
 * rows, so an option is declared once: ard's subcommands, ardnet (and its catalog), ardstart,
 * ardkill and ardrun (every mode) use it.
 *
 * Helpers fail, main prints: the parser and the appliers print nothing; they return the
 * library's code (ARD_EOPTION for what the user wrote wrong) with a failure detail
 * (ard_errdetail) that names the option and what was wrong, and the program's main prints it.
 */
#ifndef ARDC_OPT_H
#define ARDC_OPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* What an option's value is, and what is stored at its destination (struct ardc_opt.off) in
 * the object the caller parses into. */
enum ardc_optkind {
    ARDC_FLAG,    /* no value: a bool set true */
    ARDC_SET,     /* no value: an int set to .set (a mode: "--list" sets mode = M_LIST) */
    ARDC_TEXT,    /* a const char * pointing at the value (into argv: it must outlive the use) */
    ARDC_BUF,     /* a char[.size] holding a copy (refused when it does not fit) */
    ARDC_UINT,    /* an unsigned integer of .size bytes (1, 2, 4, 8), 0..umax (0: the type's) */
    ARDC_INT,     /* an int, .min..max */
    ARDC_REAL,    /* a double, .min..max */
    ARDC_PACKETS, /* a uint64_t: 1 or more, or "forever" (stored as 0) */
    ARDC_CHOICE,  /* an int: the index of the value among the words of .complete */
    ARDC_LIST,    /* each use appends the value (const char *) to an array at .off, of .umax
                   * entries, counted by the int at .count: for repeatable options */
    ARDC_CALL,    /* .call(dest, o, value) does it all (value NULL for a row without .arg) */
};

struct ardc_opt;
/* A callback's answer: 0 (go on), ARDC_OPT_STOP (parsing ends after this option: --help,
 * --version), or a library error code after ardi_fail (a bad value: name the option). */
typedef int ardc_opt_fn(void *dest, const struct ardc_opt *o, const char *value);
enum { ARDC_OPT_STOP = 1 };

struct ardc_opt {
    const char *name; /* "output" for --output; NULL ends a table */
    char shrt;        /* 'o' for -o, or 0 */
    const char *arg;  /* the value's name in the help ("FILE"); NULL: the option takes none */
    /* The description; '\n' goes on in the description column. NULL: listed on the line of the
     * row before it ("--start S, --end S"). */
    const char *help;
    enum ardc_optkind kind;
    size_t off, size;  /* the destination: ARDC_DEST(type, field) */
    size_t count;      /* ARDC_LIST: offset of its int count */
    int set;           /* ARDC_SET: the value stored */
    double min, max;   /* ARDC_INT, ARDC_REAL */
    uint64_t umax;     /* ARDC_UINT; ARDC_LIST: capacity */
    ardc_opt_fn *call; /* ARDC_CALL; any other kind: called after the value was stored */
    /* What completes the value: "@file", "@dir", "@field" (of the connection), or words (the
     * choices of ARDC_CHOICE: "dot svg json"); NULL: nothing. */
    const char *complete;
    unsigned where;   /* where it applies (the program's bits, e.g. a mode); 0: everywhere */
    const char *yaml; /* its key in the program's YAML files, or NULL (command line only) */
    bool optional;    /* the value is optional and only taken attached ("--wait=5", "-w5") */
    bool hidden;      /* parsed, but in neither the help nor the completion */
};

/* The destination of a row: a field of the object parsed into. */
#define ARDC_DEST(type, field) .off = offsetof(type, field), .size = sizeof(((type *)0)->field)
/* ARDC_LIST's array and its count. */
#define ARDC_LIST_OF(type, field, n)                                                               \
    .kind = ARDC_LIST, .off = offsetof(type, field), .count = offsetof(type, n),                   \
    .umax = sizeof(((type *)0)->field) / sizeof(((type *)0)->field[0])

/* A program's (or subcommand's) options and their help. */
struct ardc_optset {
    const char *see;             /* how to get help, in messages: "ard help record" */
    const char *head;            /* the help's usage lines and description */
    const struct ardc_opt *opts; /* listed after "options:"; a row with name NULL ends it */
    int col;                     /* column of the options' descriptions in the help */
    const char *tail;            /* after the options, or NULL */
    /* Each word that is not an option, in order, with dest: 0, or a library code after
     * ardi_fail. NULL: parsing stops at the first such word (the command that follows). */
    int (*arg)(void *dest, char *word);
    bool unexpected; /* a word "-x" no row has is "unexpected", not an "unknown option" */
};

/* Parse argv[*i..argc-1] into dest with the rows that apply to `where` (their .where has a bit
 * of it, or is 0). Long options take their value as the next word or after '='; short ones
 * attached ("-n5") or as the next word, and flags may be bundled ("-lq"). "--" ends the
 * options. On return *i is the first word not parsed: argc, the word where parsing stopped
 * (s->arg NULL), or the word after an option whose callback said ARDC_OPT_STOP. 0, or the
 * failing code with its detail (ARD_EOPTION: an unknown option, a missing or bad value). */
int ardc_opt_parse(const struct ardc_optset *s, unsigned where, int argc, char **argv, int *i,
                   void *dest);

/* The row of s that applies to where and is called `name` ("output", without dashes), or
 * NULL. */
const struct ardc_opt *ardc_opt_find(const struct ardc_optset *s, unsigned where, const char *name);
/* The row whose YAML key is `key`, or NULL. */
const struct ardc_opt *ardc_opt_find_yaml(const struct ardc_optset *s, unsigned where,
                                          const char *key);
/* Apply one value (NULL for a row without one) of row o to dest, as the parser does. given is
 * how the user wrote the option, for the detail ("--rate", or "key 'rate' in FILE"). 0, or
 * the failing code with its detail. */
int ardc_opt_apply(const struct ardc_opt *o, const char *given, const char *value, void *dest);

/* The help text of the rows that apply to where: head, "options:" and the rows, tail. */
void ardc_opt_usage(FILE *f, const struct ardc_optset *s, unsigned where);
/* For the bash completion: a line per spelling, "NAME\tVALUE", VALUE "" for an option without
 * a value, else its .complete or "-" (nothing to offer). */
void ardc_opt_list(FILE *f, const struct ardc_optset *s, unsigned where);

/* The plain number forms every program accepts, with the detail naming `what`: a whole
 * number in [0, max] (decimal, or 0x hex), a real in [min, max] (finite), "forever" or
 * a count of 1 or more. 0, or ARD_EOPTION. */
int ardc_parse_uint(const char *what, const char *s, uint64_t max, uint64_t *out);
int ardc_parse_real(const char *what, const char *s, double min, double max, double *out);
int ardc_parse_packets(const char *what, const char *s, uint64_t *out);

#endif /* ARDC_OPT_H */
