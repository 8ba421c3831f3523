/*
 * util.h - what the books' programs ask of names, paths and processes (util.c): the checks of
 * names, paths and hosts, whether a recorded process still lives, state words, time, exec.
 */
#ifndef ARDB_UTIL_H
#define ARDB_UTIL_H

#include "entry.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- names and paths ---------------------------------------------------------------- */

/* Entry names are checked with the library's ardi_check_name("entry", name, true). */
/* 0 if a valid path: names joined by single '/', at most ARDB_MAX_PATH-1 chars. */
ARDB_NODISCARD int ardb_check_path(const char *path);
/* 0 if a valid domain ([A-Za-z0-9_-], 1..63). */
ARDB_NODISCARD int ardb_check_domain(const char *domain);
/* 0 if a usable host for the transport: 1..255 of [A-Za-z0-9_.:@%-] (names, user@host,
 * IPv4/IPv6 addresses), not starting with '-' (the transport would take it for an option). */
ARDB_NODISCARD int ardb_check_host(const char *what, const char *host);
/* true if path equals prefix or lies below it ("a/b" is under "a", "ab" is not). */
bool ardb_under(const char *path, const char *prefix);
/* Default entry name from a command: basename without a ".sh"/".py"/... extension, with
 * characters outside the name set replaced by '_'. */
void ardb_default_name(const char *cmd, char *buf, size_t len);
/* Host label of this host: $ARD_HOST, else the hostname. */
void ardb_host_label(char *buf, size_t len);

/* ---- processes ------------------------------------------------------------------------ */

/* starttime of pid from /proc (clock ticks since boot); 0 if the process does not exist. */
unsigned long long ardb_proc_start(long pid);
/* true if pid exists and (start == 0 or its starttime equals start). */
bool ardb_proc_alive(long pid, unsigned long long start);
/* true if process group pgid has members and is the one whose leader had pgid_start. */
bool ardb_group_alive(long pgid, unsigned long long pgid_start);
/* The recorded state corrected by a look at the processes (RUNNING may become LOST). */
enum ardb_state ardb_effective(const struct ardb_entry *e);
/* "running", "exited 3", "killed SIGTERM", "failed: No such file...", "lost". */
void ardb_state_text(enum ardb_state st, int code, char *buf, size_t len);
const char *ardb_state_word(enum ardb_state st);
ARDB_NODISCARD int ardb_state_parse(const char *word, enum ardb_state *st);

int64_t ardb_realtime_ns(void);
int64_t ardb_mono_ns(void);
void ardb_sleep_ns(int64_t ns);

/* Reporting a failed exec to the parent through a close-on-exec pipe: the child, after
 * exec failed with `err`, sends it and exits 127 (never returns); the parent reads 0 (EOF:
 * the exec succeeded and closed the pipe) or the child's errno, and closes fd. */
__attribute__((noreturn)) void ardb_exec_failed(int fd, int err);
int ardb_exec_result(int fd);

/* Close every descriptor >= 3 except those listed. */
void ardb_close_fds_except(const int *keep, size_t nkeep);

#endif
