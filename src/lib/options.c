/*
 * options.c - process-wide state, the standard --ard* options, ard_init and ard_fini.
 */
#include "ardi.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct ardi_state ardi_g = {.mode = 0600};
static pthread_mutex_t g_mutex = PTHREAD_MUTEX_INITIALIZER;

void ardi_lock(void)
{
    pthread_mutex_lock(&g_mutex);
}

void ardi_unlock(void)
{
    pthread_mutex_unlock(&g_mutex);
}

int ardi_parse_i64(const char *s, int64_t min, int64_t max, int64_t *out)
{
    if (s == NULL || *s == '\0')
        return ARD_EINVAL;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < min || v > max)
        return ARD_EINVAL;
    *out = v;
    return 0;
}

int ardi_parse_mode(const char *what, const char *s, unsigned *mode)
{
    char *end;
    errno = 0;
    unsigned long v = s && *s ? strtoul(s, &end, 8) : 0;
    if (s == NULL || *s == '\0' || errno != 0 || *end != '\0' || v > 0777)
        return ardi_fail(ARD_EOPTION, "%s '%s': not an octal mode like 0600 or 0660", what,
                         s ? s : "");
    if ((v & 0600) != 0600 || (v & 0111) != 0 || (v & 0007) != 0)
        return ardi_fail(ARD_EOPTION,
                         "%s '%s': mode must be 0600 plus optional group bits "
                         "(0640, 0660); others may never have access",
                         what, s);
    *mode = (unsigned)v;
    return 0;
}

void ardi_trust(unsigned *mode, bool *allow_foreign)
{
    ardi_lock();
    bool init = ardi_g.initialized;
    *mode = ardi_g.mode;
    *allow_foreign = ardi_g.allow_foreign;
    ardi_unlock();
    if (init)
        return;
    const char *m = getenv("ARD_SHM_MODE"), *f = getenv("ARD_ALLOW_FOREIGN");
    if (m == NULL || *m == '\0' || ardi_parse_mode("ARD_SHM_MODE", m, mode) < 0)
        *mode = 0600;
    *allow_foreign = f != NULL && strcmp(f, "1") == 0;
}

/* ---- domain ----------------------------------------------------------------------------- */

int ardi_default_domain(const char *given, const char *what, const char **out)
{
    const char *env = getenv("ARD_DOMAIN");
    const char *d = given != NULL ? given : env != NULL && *env != '\0' ? env : "default";
    if (ardi_check_name("domain", d, false) < 0) {
        char why[600];
        snprintf(why, sizeof why, "%s", ard_errdetail());
        return ardi_fail(ARD_EOPTION, "%s: %s", d == given ? what : "environment ARD_DOMAIN", why);
    }
    *out = d;
    return 0;
}

/* Before ard_init (which refuses a bad $ARD_DOMAIN), ard_domain() falls back to "default". */
static void default_domain(void)
{
    if (ardi_g.domain_set)
        return;
    const char *d;
    if (ardi_default_domain(NULL, NULL, &d) < 0)
        d = "default";
    snprintf(ardi_g.domain, sizeof ardi_g.domain, "%s", d);
}

const char *ard_domain(void)
{
    ardi_lock();
    default_domain();
    ardi_unlock();
    return ardi_g.domain;
}

int ard_set_domain(const char *domain)
{
    int rc = ardi_check_name("domain", domain, false);
    if (rc < 0)
        return rc;
    ardi_lock();
    snprintf(ardi_g.domain, sizeof ardi_g.domain, "%s", domain);
    ardi_g.domain_set = true;
    ardi_unlock();
    return 0;
}

/* ---- option parsing --------------------------------------------------------------------- */

struct opts {
    const char *domain;
    const char *prio, *cpu, *spin, *mode;
    bool lock, help, allow_foreign;
};

/* The standard options, one row each, in the order of the help: the parser (scan), the help
 * (print_help), the detail of an unknown option and ardi_lib_option_words read these rows, so
 * that a program passing them on (ardrun) knows which take a value without a list of its own. */
enum lib_kind {
    LIB_WIRE, /* --ard PORT=CONNECTION: add_wire */
    LIB_TEXT, /* a value: the const char * at .off in struct opts */
    LIB_FLAG, /* no value: the bool at .off set */
};

struct lib_opt {
    const char *name; /* "--ard-domain" */
    const char *arg;  /* its value in the help ("NAME"); NULL: a flag */
    enum lib_kind kind;
    size_t off;
};

#define LIB_AT(field) offsetof(struct opts, field)
static const struct lib_opt lib_opts[] = {
    {"--ard", "PORT=CONNECTION", LIB_WIRE, 0},
    {"--ard-domain", "NAME", LIB_TEXT, LIB_AT(domain)},
    {"--ard-prio", "N", LIB_TEXT, LIB_AT(prio)},
    {"--ard-cpu", "LIST", LIB_TEXT, LIB_AT(cpu)},
    {"--ard-lock", NULL, LIB_FLAG, LIB_AT(lock)},
    {"--ard-spin", "NS", LIB_TEXT, LIB_AT(spin)},
    {"--ard-mode", "OCTAL", LIB_TEXT, LIB_AT(mode)},
    {"--ard-allow-foreign", NULL, LIB_FLAG, LIB_AT(allow_foreign)},
    {"--ard-help", NULL, LIB_FLAG, LIB_AT(help)},
};
#define LIB_NOPTS (sizeof lib_opts / sizeof lib_opts[0])

/* Is `a` in the options' space: "--ard", "--ard=...", "--ard-..."? */
static bool lib_space(const char *a)
{
    return strncmp(a, "--ard", 5) == 0 && (a[5] == '\0' || a[5] == '=' || a[5] == '-');
}

/* The row of "--name" or "--name=value", or NULL. */
static const struct lib_opt *lib_find(const char *a)
{
    for (size_t k = 0; k < LIB_NOPTS; k++) {
        size_t n = strlen(lib_opts[k].name);
        if (strncmp(a, lib_opts[k].name, n) == 0 && (a[n] == '\0' || a[n] == '='))
            return &lib_opts[k];
    }
    return NULL;
}

/* The options' names (with the help's values when `values`), ", "-separated, into buf. */
static void lib_names(char *buf, size_t len, bool values)
{
    size_t at = 0;
    buf[0] = '\0';
    for (size_t k = 0; k < LIB_NOPTS && at < len; k++) {
        const struct lib_opt *o = &lib_opts[k];
        const char *arg = values ? o->arg : o->kind == LIB_WIRE ? "PORT=CONN" : NULL;
        int w = snprintf(buf + at, len - at, "%s%s%s%s", k ? ", " : "", o->name, arg ? " " : "",
                         arg ? arg : "");
        at += w > 0 ? (size_t)w : 0;
    }
}

static int lib_unknown(const char *a)
{
    char names[256];
    lib_names(names, sizeof names, false);
    return ardi_fail(ARD_EOPTION, "unknown option '%s' (standard options: %s)", a, names);
}

int ardi_lib_option_words(const char *word)
{
    if (word == NULL || !lib_space(word))
        return 0;
    const struct lib_opt *o = lib_find(word);
    if (o == NULL)
        return lib_unknown(word);
    return o->arg != NULL && strchr(word, '=') == NULL ? 2 : 1;
}

const char *ardi_lib_option_name(size_t k)
{
    return k < LIB_NOPTS ? lib_opts[k].name : NULL;
}

/* Match "--name", "--name=value" or "--name value". Returns 1 if matched (value set,
 * *consumed = number of argv entries), 0 if not this option, or an error. */
static int match(char **argv, int argc, int i, const char *name, bool takes_value,
                 const char **value, int *consumed)
{
    const char *a = argv[i];
    size_t n = strlen(name);
    if (strncmp(a, name, n) != 0 || (a[n] != '\0' && a[n] != '='))
        return 0;
    if (!takes_value) {
        if (a[n] == '=')
            return ardi_fail(ARD_EOPTION, "option '%s' takes no value", a);
        *consumed = 1;
        return 1;
    }
    if (a[n] == '=') {
        *value = a + n + 1;
        *consumed = 1;
    } else {
        if (i + 1 >= argc || argv[i + 1] == NULL)
            return ardi_fail(ARD_EOPTION, "option '%s' needs a value", name);
        *value = argv[i + 1];
        *consumed = 2;
    }
    if (**value == '\0')
        return ardi_fail(ARD_EOPTION, "option '%s' needs a value (got an empty one)", name);
    return 1;
}

static int add_wire(const char *arg)
{
    const char *eq = strchr(arg, '=');
    if (eq == NULL)
        return ardi_fail(ARD_EOPTION, "option '--ard %s': expected PORT=CONNECTION", arg);
    char port[ARD_MAX_NAME + 2], conn[ARD_MAX_NAME + 2];
    size_t pl = (size_t)(eq - arg);
    if (pl == 0 || pl > ARD_MAX_NAME || strlen(eq + 1) > ARD_MAX_NAME || eq[1] == '\0')
        return ardi_fail(ARD_EOPTION,
                         "option '--ard %s': expected PORT=CONNECTION with names "
                         "of 1..%d characters",
                         arg, ARD_MAX_NAME);
    memcpy(port, arg, pl);
    port[pl] = '\0';
    snprintf(conn, sizeof conn, "%s", eq + 1);
    if (ardi_check_name("port", port, true) < 0 || ardi_check_name("connection", conn, true) < 0) {
        char why[600];
        snprintf(why, sizeof why, "%s", ard_errdetail());
        return ardi_fail(ARD_EOPTION, "option '--ard %s': %s", arg, why);
    }
    for (size_t i = 0; i < ardi_g.nwires; i++)
        if (strcmp(ardi_g.wires[i].port, port) == 0)
            return ardi_fail(ARD_EOPTION,
                             "option '--ard %s': port '%s' is wired twice (also to "
                             "'%s')",
                             arg, port, ardi_g.wires[i].conn);
    struct ardi_wire *w = realloc(ardi_g.wires, (ardi_g.nwires + 1) * sizeof *w);
    if (w == NULL)
        return ardi_fail(ARD_ENOMEM, "option '--ard %s': out of memory", arg);
    ardi_g.wires = w;
    w = &ardi_g.wires[ardi_g.nwires++];
    memset(w, 0, sizeof *w);
    memcpy(w->port, port, strlen(port) + 1);
    memcpy(w->conn, conn, strlen(conn) + 1);
    return 0;
}

/* Row o's value v (NULL for a flag) into o. */
static int lib_store(const struct lib_opt *r, const char *v, struct opts *o)
{
    switch (r->kind) {
    case LIB_WIRE:
        return add_wire(v);
    case LIB_TEXT:
        *(const char **)(void *)((char *)o + r->off) = v;
        return 0;
    case LIB_FLAG:
        *(bool *)((char *)o + r->off) = true;
        return 0;
    }
    return ARD_EINVAL;
}

static int scan(int *argc, char **argv, struct opts *o)
{
    int out = 1, i = 1;
    while (i < *argc) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            while (i < *argc)
                argv[out++] = argv[i++];
            break;
        }
        if (!lib_space(a)) {
            argv[out++] = argv[i++];
            continue;
        }
        const struct lib_opt *r = lib_find(a);
        if (r == NULL)
            return lib_unknown(a);
        const char *v = NULL;
        int used = 0, rc;
        if ((rc = match(argv, *argc, i, r->name, r->arg != NULL, &v, &used)) < 0 ||
            (rc = lib_store(r, v, o)) < 0)
            return rc;
        i += used;
    }
    argv[out] = NULL;
    *argc = out;
    return 0;
}

/* `what` names the source of the list in messages ("option --ard-cpu", "CPU list"). */
static int parse_cpus(const char *what, const char *list, cpu_set_t *set, int bad)
{
    CPU_ZERO(set);
    const char *p = list;
    if (*p == '\0')
        return ardi_fail(bad, "%s: empty CPU list", what);
    while (*p) {
        char *end;
        errno = 0;
        long a = strtol(p, &end, 10), b;
        if (end == p || errno || a < 0 || a >= CPU_SETSIZE)
            return ardi_fail(bad, "%s '%s': bad CPU number at '%s' (expected a list like 0,2-3)",
                             what, list, p);
        b = a;
        p = end;
        if (*p == '-') {
            const char *q = ++p;
            b = strtol(q, &end, 10);
            if (end == q || errno || b < a || b >= CPU_SETSIZE)
                return ardi_fail(bad, "%s '%s': bad range end at '%s'", what, list, q);
            p = end;
        }
        for (long c = a; c <= b; c++)
            CPU_SET((int)c, set);
        if (*p == ',' && p[1] != '\0')
            p++;
        else if (*p != '\0')
            return ardi_fail(bad, "%s '%s': unexpected '%s'", what, list, p);
    }
    return 0;
}

struct rt_names {
    const char *cpu, *lock, *prio;
    int bad; /* code for a malformed request */
};

/* Realtime requests, applied in the order that makes the later ones effective: affinity,
 * then memory lock, then priority (0: leave the policy alone). */
static int realtime(const char *cpus, bool lock, int prio, const struct rt_names *n)
{
    cpu_set_t set;
    if (cpus && parse_cpus(n->cpu, cpus, &set, n->bad) < 0)
        return n->bad;
    if (cpus && sched_setaffinity(0, sizeof set, &set) < 0)
        return ardi_fail_errno(ARD_ERTREFUSED, errno,
                               "%s '%s': sched_setaffinity refused (CPU offline or outside this "
                               "process's cpuset?)",
                               n->cpu, cpus);
    if (lock && mlockall(MCL_CURRENT | MCL_FUTURE) < 0)
        return ardi_fail_errno(ARD_ERTREFUSED, errno,
                               "%s: mlockall refused (needs CAP_IPC_LOCK or a large "
                               "RLIMIT_MEMLOCK)",
                               n->lock);
    if (prio > 0) {
        struct sched_param sp = {.sched_priority = prio};
        if (sched_setscheduler(0, SCHED_FIFO, &sp) < 0)
            return ardi_fail_errno(ARD_ERTREFUSED, errno,
                                   "%s %d: sched_setscheduler(SCHED_FIFO) refused (needs "
                                   "CAP_SYS_NICE or RLIMIT_RTPRIO >= %d)",
                                   n->prio, prio, prio);
    }
    return 0;
}

static int apply_realtime(const struct opts *o)
{
    static const struct rt_names names = {"option --ard-cpu", "option --ard-lock",
                                          "option --ard-prio", ARD_EOPTION};
    int64_t prio = 0;
    if (o->prio && ardi_parse_i64(o->prio, 1, 99, &prio) < 0)
        return ardi_fail(ARD_EOPTION, "option '--ard-prio %s': not a priority 1..99", o->prio);
    return realtime(o->cpu, o->lock, (int)prio, &names);
}

int ard_realtime(const char *cpus, int lock, int prio)
{
    static const struct rt_names names = {"CPU list", "memory lock", "SCHED_FIFO priority",
                                          ARD_EINVAL};
    if (prio < 0 || prio > 99)
        return ardi_fail(ARD_EINVAL, "SCHED_FIFO priority %d: not 1..99 (0: leave alone)", prio);
    return realtime(cpus, lock != 0, prio, &names);
}

static void print_help(const char *prog)
{
    printf("%s: ports (domain '%s')\n", prog ? prog : "block", ardi_g.domain);
    printf("  %-20s %-4s %10s  %-24s %s\n", "PORT", "DIR", "SIZE", "CONNECTION", "TYPE");
    for (ard_port *p = ardi_g.ports; p; p = p->next)
        printf("  %-20s %-4s %10zu  %-24s %s\n", p->name, p->dir == ARD_IN ? "in" : "out", p->size,
               p->conn, p->type[0] ? p->type : "(opaque)");
    char names[256];
    lib_names(names, sizeof names, true);
    printf("standard options: %s\n", names);
    fflush(stdout);
}

static int init_locked(int *argc, char **argv)
{
    if (ardi_g.initialized)
        return ardi_fail(ARD_ESTATE, "ard_init called twice (call ard_fini first)");
    struct opts o = {0};
    int rc = 0;
    /* Wiring comes only from this argv: forget what a failed earlier call parsed. */
    free(ardi_g.wires);
    ardi_g.wires = NULL;
    ardi_g.nwires = 0;
    if (argc != NULL && argv != NULL && *argc > 0)
        rc = scan(argc, argv, &o);
    if (rc < 0)
        return rc;

    const char *env_mode = getenv("ARD_SHM_MODE"), *env_spin = getenv("ARD_SPIN_NS");
    if (o.mode == NULL && env_mode != NULL && *env_mode) {
        if ((rc = ardi_parse_mode("ARD_SHM_MODE", env_mode, &ardi_g.mode)) < 0)
            return rc;
    } else if (o.mode != NULL &&
               (rc = ardi_parse_mode("option '--ard-mode'", o.mode, &ardi_g.mode)) < 0) {
        return rc;
    }
    const char *env_foreign = getenv("ARD_ALLOW_FOREIGN");
    ardi_g.allow_foreign = o.allow_foreign;
    if (!o.allow_foreign && env_foreign != NULL && *env_foreign) {
        if (strcmp(env_foreign, "1") != 0 && strcmp(env_foreign, "0") != 0)
            return ardi_fail(ARD_EOPTION, "ARD_ALLOW_FOREIGN '%s': expected 1 or 0", env_foreign);
        ardi_g.allow_foreign = env_foreign[0] == '1';
    }
    const char *spin = o.spin ? o.spin : env_spin;
    if (spin && *spin && ardi_parse_i64(spin, 0, 1000000000, &ardi_g.spin_ns) < 0)
        return ardi_fail(ARD_EOPTION, "%s '%s': not a spin time in ns 0..1000000000",
                         o.spin ? "option '--ard-spin'" : "ARD_SPIN_NS", spin);
    if (o.domain || !ardi_g.domain_set) {
        const char *d;
        if (ardi_default_domain(o.domain, "option '--ard-domain'", &d) < 0)
            return ARD_EOPTION;
        snprintf(ardi_g.domain, sizeof ardi_g.domain, "%s", d);
        ardi_g.domain_set = ardi_g.domain_set || o.domain;
    }

    for (size_t i = 0; i < ardi_g.nwires; i++) {
        ard_port *p = ardi_g.ports;
        while (p && strcmp(p->name, ardi_g.wires[i].port) != 0)
            p = p->next;
        if (p == NULL)
            return ardi_fail(ARD_EOPTION,
                             "option '--ard %s=%s': this block has no port "
                             "named '%s'",
                             ardi_g.wires[i].port, ardi_g.wires[i].conn, ardi_g.wires[i].port);
        snprintf(p->conn, sizeof p->conn, "%s", ardi_g.wires[i].conn);
        p->wired = ardi_g.wires[i].used = true;
    }
    if (o.help) {
        print_help(argv ? argv[0] : NULL);
        exit(0);
    }
    if ((rc = apply_realtime(&o)) < 0)
        return rc;
    for (ard_port *p = ardi_g.ports; p; p = p->next) {
        if (p->dir == ARD_IN && p->spin_ns == 0)
            p->spin_ns = ardi_g.spin_ns;
        if (!p->attached && (rc = ardi_port_attach(p)) < 0)
            return rc;
    }
    ardi_g.initialized = true;
    return 0;
}

int ard_init(int *argc, char **argv)
{
    ardi_lock();
    int rc = init_locked(argc, argv);
    ardi_unlock();
    if (rc < 0)
        return rc;
    rc = ard_ready();
    return rc < 0 ? rc : 0;
}

void ard_fini(void)
{
    ardi_lock();
    ard_port *p = ardi_g.ports;
    ardi_g.ports = NULL;
    free(ardi_g.wires);
    ardi_g.wires = NULL;
    ardi_g.nwires = 0;
    ardi_g.initialized = false;
    ardi_g.domain_set = false;
    ardi_g.mode = 0600;
    ardi_g.allow_foreign = false;
    ardi_g.spin_ns = 0;
    ardi_unlock();
    while (p) {
        ard_port *next = p->next;
        ardi_port_free(p);
        p = next;
    }
}
