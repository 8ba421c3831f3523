/*
 * system.h - ardstart --system: what a description becomes once read and checked (struct
 * sys), shared by the loader (system_load.c), the script writer (system_script.c) and the
 * start (system.c). Format: docs/ardstart.md, "System description".
 */
#ifndef ARDSTART_SYSTEM_H
#define ARDSTART_SYSTEM_H

#include "ardstart.h"

#include "ard_common.h"
#include "ardr_names.h"
#include "ardyaml.h"

#include "ardnet.h"

#include <stdbool.h>
#include <stddef.h>

#define MAXB 256 /* blocks, subsystems, connections: plenty for one description */

struct wire {
    char port[ARDB_MAX_NAME + 1];
    char conn[ARDB_MAX_NAME + 1];
    bool out;
};

/* A restart policy as given: the values of the keys restart, restart_delay and restart_limit,
 * indexed by their option's .set in as_optset (AS_RPOL_*), checked as those options' (NULL: not
 * given, the system's default applies). */
struct rpol {
    const char *v[AS_RPOL_N];
    yaml_node_t *node;
};

struct block {
    char name[ARDB_MAX_NAME + 1];
    struct rpol rp;
    const char *cmd;
    const char *plugin;  /* a block plugin instead of cmd */
    int group;           /* index in groups, -1: none */
    const char *rate;    /* in a group: one of its rates */
    const char *rate_hz; /* alone: --rate or --trigger */
    const char *trigger;
    yaml_node_t *params; /* mapping, checked */
    yaml_node_t *group_node, *rate_node, *plugin_node;
    struct wire wires[16];
    int nwires;
    int sub;
    yaml_node_t *node; /* for the line in messages */
};

struct rate {
    char name[ARDR_NAME_MAX + 1];
    long divide, prio;
    const char *cpu;
};

struct group {
    char name[ARDR_NAME_MAX + 1];
    struct rpol rp;
    const char *rate_hz, *lock, *strict;
    char host[ARDB_MAX_HOST];
    bool has_host;
    struct rate rates[ARDR_MAX_RATES];
    int nrates;
    long prio; /* prio and cpu of the one rate when no 'rates' is given */
    const char *cpu;
    bool rates_given, prio_given;
    int first; /* its first block (where it is started), -1: none */
    yaml_node_t *node;
};

struct subsys {
    char name[ARDB_MAX_NAME + 1];
    char host[ARDB_MAX_HOST]; /* resolved; "" = the starting host */
};

struct conn {
    char name[ARDB_MAX_NAME + 1];
    char type[ARD_MAX_TYPE + 1];
    size_t size;
};

struct sys {
    struct ardy_doc y;         /* the description (y.file: as given) */
    char shown[ARDB_MAX_PATH]; /* file for the scripts' comments: no line break, no control */
    char name[ARDB_MAX_NAME + 1];
    char local[ARDB_MAX_HOST]; /* how other hosts reach the starting host */
    int port;
    struct subsys subs[MAXB];
    int nsubs;
    struct block blocks[MAXB];
    int nblocks;
    struct conn conns[MAXB];
    int nconns;
    struct group groups[MAXB];
    int ngroups;
    char dir[ARDB_MAX_PATH]; /* the description's directory, absolute: for plugin paths */
    char key[ARDB_MAX_PATH]; /* key: the key file every bridge is given (--key), "" none */
    struct rpol rp;          /* top level: the default of every block, group and bridge */
};

/* system_load.c */
/* Fail with the detail "FILE:LINE: MESSAGE" (n: the node it is about, NULL: no line); -1. The
 * loader's and the scripts' functions return -1 with that detail; as_start_system prints it. */
int sys_bad(const struct sys *s, const yaml_node_t *n, const char *fmt, ...) ARDB_PRINTF(3, 4);
/* Read and check the loaded description s->y into s (hosts resolved with o's --set-host,
 * groups checked against their blocks); 0, or -1 with the detail (sys_bad). */
int sys_load(struct sys *s, const struct as_opts *o);
/* The connection of that name under 'connections', NULL: none. */
const struct conn *sys_find_conn(const struct sys *s, const char *name);
/* The host of a block's subsystem ("" = the starting host). */
const char *sys_host_of(const struct sys *s, const struct block *b);
/* The network address of a host label: "user@rt1" -> "rt1" (the user is for the transport). */
const char *sys_net_host(const char *label);

/* system_check.c */
/* Print what the description needs of /dev/shm, per connection and per host (--check). */
int sys_sizes(const struct sys *s);

/* system_script.c */
/* The master script of a checked system: its subsystems, with their blocks, groups and the
 * bridges between hosts, into master; 0, or -1 with the detail (sys_bad). */
int sys_scripts(const struct sys *s, const struct as_opts *o, struct ardb_str *master);

#endif /* ARDSTART_SYSTEM_H */
