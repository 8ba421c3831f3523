/*
 * ard_common.h - what ardnet's programs (ard, ardnet, ardstart, ardkill, ardrun) and its
 * recording library share with libardnet beyond the public headers: the failure detail,
 * name checks, object names, the default domain, exit codes. Never installed.
 *
 * The functions are libardnet's (src/lib), linked from its static library; the programs
 * reach a connection's shared memory only through the public headers (ardnet.h,
 * ardnet_view.h): the segment layout stays in src/lib/ardi.h, which only src/lib includes.
 */
#ifndef ARD_COMMON_H
#define ARD_COMMON_H

#include "ardnet.h"

#include <stdbool.h>
#include <stddef.h>

#define ARDI_HIDDEN __attribute__((visibility("hidden")))
/* Exported by libardnet.so although internal (declared in no installed header): the recording
 * library (libardnet_log, src/log/) records its failures through them in this library's
 * thread-local detail, so that ard_errdetail() works after its calls as after any other. */
#define ARDI_SHARED __attribute__((visibility("default")))
#define ARDI_PRINTF(a, b) __attribute__((format(printf, a, b)))

/* ---- exit codes: the same numbers for the same causes in every program ----------------- */

enum {
    ARDC_EXIT_OK = 0,
    ARDC_EXIT_USAGE = 100, /* bad command line, option, name or configuration */
    ARDC_EXIT_SYS = 111,   /* a system call or the system refused */
};

/* Exit code of a failure with library code `code`: 0 for ARD_OK, ARDC_EXIT_USAGE for a bad
 * argument or option (ARD_EINVAL, ARD_EOPTION), ARDC_EXIT_SYS for the rest. */
static inline int ardc_exit_code(int code)
{
    return code == ARD_OK                              ? ARDC_EXIT_OK
           : code == ARD_EINVAL || code == ARD_EOPTION ? ARDC_EXIT_USAGE
                                                       : ARDC_EXIT_SYS;
}

/* ---- failure detail (error.c) ----------------------------------------------------------- */

/* Record `code` and a formatted detail for this thread (ard_errdetail); returns `code`. */
ARDI_SHARED int ardi_fail(int code, const char *fmt, ...) ARDI_PRINTF(2, 3);
/* Like ardi_fail, appending ": strerror(err)". */
ARDI_SHARED int ardi_fail_errno(int code, int err, const char *fmt, ...) ARDI_PRINTF(3, 4);

/* ---- names ------------------------------------------------------------------------------ */

/* 0 if `s` is a valid name ([A-Za-z0-9_.-], 1..ARD_MAX_NAME; no '.' when !dots); else
 * ARD_EINVAL with a detail naming `what` and the fault. */
ARDI_HIDDEN int ardi_check_name(const char *what, const char *s, bool dots);

/* The domain to work in: `given` (the value of an option, named by `what` in messages, e.g.
 * "option '--domain'"; an empty one is refused) unless NULL, else $ARD_DOMAIN unless unset or
 * empty, else "default". 0 with *out set (pointing into given, the environment or a literal), or
 * ARD_EOPTION with a detail naming the option or the environment and why the name is bad. The
 * one rule of every program and of ard_init. */
ARDI_HIDDEN int ardi_default_domain(const char *given, const char *what, const char **out);

/* The shared-memory object of connection `conn` in `domain`: "/ard.<domain>.<conn>" (buf of
 * ARDI_SHM_NAME_MAX bytes), found under ARDI_SHM_DIR. */
#define ARDI_SHM_NAME_MAX (2 * ARD_MAX_NAME + 8)
ARDI_HIDDEN void ardi_shm_name(char *buf, const char *domain, const char *conn);
#define ARDI_SHM_DIR "/dev/shm"
#define ARDI_SHM_PREFIX "ard."

/* ---- the standard --ard options (options.c) ---------------------------------------------- */

/* How many words of a command line the standard option `word` takes, from the table ard_init
 * parses with: 0 when the word is not in the standard options' space ("--ard", "--ard=...",
 * "--ard-..."; the program's own), 1 for a flag or the "--ard-x=value" form, 2 when its value
 * is the next word; ARD_EOPTION (with ard_init's detail) for a "--ard-..." word that names no
 * standard option. For programs that pass the standard options on to ard_init. */
ARDI_HIDDEN int ardi_lib_option_words(const char *word);
/* The k-th standard option's name ("--ard-domain"), or NULL after the last. */
ARDI_HIDDEN const char *ardi_lib_option_name(size_t k);

/* ---- types (types.c) -------------------------------------------------------------------- */

/* Canonical form without field names ("f64[7] u32"): the layout alone. Like
 * ard_type_normalize. */
ARDI_HIDDEN int ardi_type_layout(const char *desc, char *buf, size_t buflen);
/* Do two descriptors describe the same layout (names ignored)? Unparsable ones compare as
 * text. */
ARDI_HIDDEN bool ardi_type_same_layout(const char *a, const char *b);

/* ---- ready.c ---------------------------------------------------------------------------- */

/* ard_ready on behalf of process `pid` (the line says "ready PID"): `ardstart --ready` reports
 * for the script that runs it. Same checks and return values as ard_ready. */
ARDI_HIDDEN int ardi_ready_for(long pid);

/* Bytes of /dev/shm that a connection of packets of `packet_size` bytes takes: its whole
 * object, reserved when it is made (sizing: ardstart --system --check). */
ARDI_HIDDEN size_t ardi_object_bytes(size_t packet_size);

/* ---- the descriptor limit of programs that attach many connections ---------------------- */
#include "ardc_nofile.h"

#endif /* ARD_COMMON_H */
