/*
 * test_options.c - the standard command-line options consumed by ard_init (DESIGN §3):
 * removed from argv with the rest kept in order, both "--opt v" and "--opt=v", every
 * malformed form refused with ARD_EOPTION naming the option, --ard-help, refused realtime
 * requests (ARD_ERTREFUSED), and the readiness line for $ARD_READY_FD.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ardnet.h"
#include "testutil.h"
/* ardi_lib_option_words: internal, not installed (tests link the static library) */
#include "ard_common.h"

#define MAXARGS 16

static char domain[64];

static int teardown(void **state)
{
    (void)state;
    ard_fini();
    char other[80];
    snprintf(other, sizeof other, "%sx", domain);
    if (ard_domain_unlink(domain) < 0 || ard_domain_unlink(other) < 0)
        fprintf(stderr, "ard_domain_unlink: %s\n", ard_errdetail());
    return 0;
}

static bool shm_exists(const char *dom, const char *conn)
{
    char path[200];
    struct stat st;
    snprintf(path, sizeof path, "/dev/shm/ard.%s.%s", dom, conn);
    return stat(path, &st) == 0;
}

/* argv from a NULL-terminated list, in writable storage as ard_init expects. */
struct args {
    int argc;
    char *argv[MAXARGS + 1];
};

static struct args make_args(const char *first, ...)
{
    struct args a = {0};
    va_list ap;
    va_start(ap, first);
    a.argv[a.argc++] = (char *)"prog";
    for (const char *s = first; s != NULL && a.argc < MAXARGS; s = va_arg(ap, const char *))
        a.argv[a.argc++] = (char *)s;
    va_end(ap);
    a.argv[a.argc] = NULL;
    return a;
}

static void assert_args(const struct args *a, const char *const *want)
{
    int n = 0;
    while (want[n])
        n++;
    if (a->argc != n) {
        char got[512] = "";
        for (int i = 0; i < a->argc; i++)
            snprintf(got + strlen(got), sizeof got - strlen(got), " '%s'", a->argv[i]);
        fail_msg("argc %d, want %d; argv:%s", a->argc, n, got);
    }
    for (int i = 0; i < n; i++)
        assert_string_equal(a->argv[i], want[i]);
    assert_null(a->argv[n]);
}

/* ---- consumption ------------------------------------------------------------------------ */

static void test_options_removed_and_rest_kept_in_order(void **state)
{
    (void)state;
    char dom2[80];
    snprintf(dom2, sizeof dom2, "%sx", domain);
    ard_port *a = ard_create("a", ARD_OUT, 8, "u64");
    ard_port *b = ard_create("b", ARD_IN, 8, "u64");
    ard_port *c = ard_create("c", ARD_IN, 4, NULL);
    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(c);
    struct args g =
        make_args("x", "--ard", "a=conn.a", "-v", "--ard-domain", dom2, "y", "--ard=b=conn.b",
                  "--ard-spin=0", "-- ", "--", "--ard", "a=zz", "--ard-bogus", "z", NULL);
    int rc = ard_init(&g.argc, g.argv);
    if (rc != 0)
        fail_msg("ard_init: %d %s", rc, ard_errdetail());
    const char *want[] = {"prog",  "x",    "-v",          "y", "-- ", "--",
                          "--ard", "a=zz", "--ard-bogus", "z", NULL};
    assert_args(&g, want);
    assert_string_equal(ard_port_connection(a), "conn.a");
    assert_string_equal(ard_port_connection(b), "conn.b");
    assert_string_equal(ard_port_connection(c), "c"); /* unwired: its own name */
    assert_string_equal(ard_domain(), dom2);
    assert_true(shm_exists(dom2, "conn.a"));
    assert_true(shm_exists(dom2, "conn.b"));
    assert_true(shm_exists(dom2, "c"));
    assert_false(shm_exists(domain, "conn.a"));

    /* ard_fini forgets the options: the domain is $ARD_DOMAIN again. */
    ard_fini();
    assert_string_equal(ard_domain(), domain);
}

static void test_every_option_in_both_forms(void **state)
{
    (void)state;
    /* Each row: the option spelt with a separate value, then with '='. */
    static const char *const rows[][3] = {
        {"--ard", "p=wired", "--ard=p=wired"},       {"--ard-domain", NULL, "--ard-domain="},
        {"--ard-spin", "20000", "--ard-spin=20000"}, {"--ard-mode", "0640", "--ard-mode=0640"},
        {"--ard-cpu", "0", "--ard-cpu=0"},
    };
    char dom[80], domeq[100];
    snprintf(dom, sizeof dom, "%sx", domain);
    snprintf(domeq, sizeof domeq, "--ard-domain=%s", dom);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        for (int form = 0; form < 2; form++) {
            const char *v = rows[i][1] ? rows[i][1] : dom;
            const char *eq = i == 1 ? domeq : rows[i][2];
            struct args g = form == 0 ? make_args("keep1", rows[i][0], v, "keep2", NULL)
                                      : make_args("keep1", eq, "keep2", NULL);
            /* --ard-cpu changes the affinity: do it in a child. */
            pid_t pid = i == 4 ? fork() : 0;
            assert_true(pid >= 0);
            if (pid > 0) {
                int st;
                assert_int_equal(waitpid(pid, &st, 0), pid);
                if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
                    fail_msg("%s (form %d) failed in the child", rows[i][0], form);
                continue;
            }
            ard_port *p = ard_create("p", ARD_IN, 8, NULL);
            assert_non_null(p);
            int rc = ard_init(&g.argc, g.argv);
            bool ok = rc == 0 && g.argc == 3 && strcmp(g.argv[1], "keep1") == 0 &&
                      strcmp(g.argv[2], "keep2") == 0 && g.argv[3] == NULL;
            if (ok && i == 0)
                ok = strcmp(ard_port_connection(p), "wired") == 0;
            if (ok && i == 1)
                ok = strcmp(ard_domain(), dom) == 0;
            if (ok && i == 4) {
                cpu_set_t set;
                ok = sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) == 1 &&
                     CPU_ISSET(0, &set);
            }
            if (pid == 0 && i == 4) {
                if (!ok)
                    fprintf(stderr, "--ard-cpu form %d: rc %d argc %d %s\n", form, rc, g.argc,
                            ard_errdetail());
                ard_fini();
                _exit(ok ? 0 : 1);
            }
            if (!ok)
                fail_msg("%s form %d: rc %d (%s), argc %d", rows[i][0], form, rc, ard_errdetail(),
                         g.argc);
            ard_fini();
        }
    }
}

static void test_init_twice_refused_until_fini(void **state)
{
    (void)state;
    struct args g = make_args(NULL);
    assert_int_equal(ard_init(&g.argc, g.argv), 0);
    g = make_args(NULL);
    assert_int_equal(ard_init(&g.argc, g.argv), ARD_ESTATE);
    ard_fini();
    g = make_args(NULL);
    assert_int_equal(ard_init(&g.argc, g.argv), 0);
}

/* ---- malformed options ------------------------------------------------------------------ */

struct bad {
    const char *args[5];
    const char *must_name; /* the detail must contain this */
};

static const char long_name[] =
    "n123456789012345678901234567890123456789012345678901234567890123"; /* 64 chars */

static void check_bad(const struct bad *b)
{
    struct args g = make_args(b->args[0], b->args[1], b->args[2], b->args[3], b->args[4], NULL);
    char shown[256] = "";
    for (int i = 1; i < g.argc; i++)
        snprintf(shown + strlen(shown), sizeof shown - strlen(shown), " '%s'", g.argv[i]);
    ard_port *p = ard_create("p", ARD_OUT, 8, NULL);
    assert_non_null(p);
    int rc = ard_init(&g.argc, g.argv);
    if (rc != ARD_EOPTION)
        fail_msg("%s: rc %d, want ARD_EOPTION (%s)", shown, rc, ard_errdetail());
    if (strstr(ard_errdetail(), b->must_name) == NULL)
        fail_msg("%s: detail \"%s\" does not name \"%s\"", shown, ard_errdetail(), b->must_name);
    ard_fini();
    /* Nothing was attached. */
    if (shm_exists(domain, "p"))
        fail_msg("%s: the port was attached despite the error", shown);
}

static void test_malformed_options_refused_naming_option(void **state)
{
    (void)state;
    const struct bad cases[] = {
        /* --ard */
        {{"--ard", "pconn"}, "--ard"},
        {{"--ard=pconn"}, "--ard"},
        {{"--ard", "nope=c"}, "nope"},
        {{"--ard", "p=a", "--ard", "p=b"}, "'p'"},
        {{"--ard", "p=a", "--ard=p=a"}, "'p'"},
        {{"--ard", "p="}, "--ard"},
        {{"--ard", "=c"}, "--ard"},
        {{"--ard", "p=a/b"}, "--ard"},
        {{"--ard", "p=a b"}, "--ard"},
        {{"--ard", "p", "=c"}, "--ard"},
        {{"--ard"}, "--ard"},
        /* unknown --ard-* */
        {{"--ard-bogus"}, "--ard-bogus"},
        {{"x", "--ard-prios", "3"}, "--ard-prios"},
        {{"--ard-bogus=1"}, "--ard-bogus"},
        {{"--ard-"}, "--ard-"},
        {{"--ard-lock=yes"}, "--ard-lock"},
        {{"--ard-help=1"}, "--ard-help"},
        /* bad numbers */
        {{"--ard-prio", "x"}, "--ard-prio"},
        {{"--ard-prio", "0"}, "--ard-prio"},
        {{"--ard-prio", "100"}, "--ard-prio"},
        {{"--ard-prio", "5x"}, "--ard-prio"},
        {{"--ard-prio", "-3"}, "--ard-prio"},
        {{"--ard-prio="}, "--ard-prio"},
        {{"--ard-prio", "99999999999999999999"}, "--ard-prio"},
        {{"--ard-spin", "abc"}, "--ard-spin"},
        {{"--ard-spin", "-1"}, "--ard-spin"},
        {{"--ard-spin="}, "--ard-spin"},
        {{"--ard-mode", "0x1"}, "--ard-mode"},
        {{"--ard-mode", "0666"}, "--ard-mode"},
        /* bad CPU lists */
        {{"--ard-cpu", ""}, "--ard-cpu"},
        {{"--ard-cpu", "a"}, "--ard-cpu"},
        {{"--ard-cpu", "1-"}, "--ard-cpu"},
        {{"--ard-cpu", "3-1"}, "--ard-cpu"},
        {{"--ard-cpu", "1,,2"}, "--ard-cpu"},
        {{"--ard-cpu", "-1"}, "--ard-cpu"},
        {{"--ard-cpu", "0,"}, "--ard-cpu"},
        {{"--ard-cpu", "0;1"}, "--ard-cpu"},
        {{"--ard-cpu", "99999999"}, "--ard-cpu"},
        /* bad domains */
        {{"--ard-domain", "a.b"}, "--ard-domain"},
        {{"--ard-domain", ""}, "--ard-domain"},
        {{"--ard-domain", "a/b"}, "--ard-domain"},
        {{"--ard-domain", long_name}, "--ard-domain"},
        /* missing values */
        {{"--ard-domain"}, "--ard-domain"},
        {{"--ard-prio"}, "--ard-prio"},
        {{"--ard-cpu"}, "--ard-cpu"},
        {{"--ard-spin"}, "--ard-spin"},
        {{"--ard-mode"}, "--ard-mode"},
        {{"--ard-prio", "--ard-lock"}, "--ard-prio"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_bad(&cases[i]);
}

static void test_malformed_environment_refused_naming_variable(void **state)
{
    (void)state;
    const char *vars[][2] = {
        {"ARD_SPIN_NS", "lots"}, {"ARD_SHM_MODE", "0777"}, {"ARD_DOMAIN", "has.dot"}};
    char *saved_domain = getenv("ARD_DOMAIN") ? strdup(getenv("ARD_DOMAIN")) : NULL;
    for (size_t i = 0; i < 3; i++) {
        setenv(vars[i][0], vars[i][1], 1);
        ard_port *p = ard_create("p", ARD_IN, 8, NULL);
        assert_non_null(p);
        struct args g = make_args(NULL);
        int rc = ard_init(&g.argc, g.argv);
        unsetenv(vars[i][0]);
        if (rc >= 0)
            fail_msg("%s=%s accepted", vars[i][0], vars[i][1]);
        ASSERT_CONTAINS(ard_errdetail(), vars[i][0]);
        ard_fini();
    }
    if (saved_domain != NULL)
        setenv("ARD_DOMAIN", saved_domain, 1);
    free(saved_domain);
}

static void test_set_domain_checks_name(void **state)
{
    (void)state;
    assert_int_equal(ard_set_domain("a.b"), ARD_EINVAL);
    assert_int_equal(ard_set_domain(""), ARD_EINVAL);
    assert_int_equal(ard_set_domain(long_name), ARD_EINVAL);
    char dom[80];
    snprintf(dom, sizeof dom, "%sx", domain);
    assert_int_equal(ard_set_domain(dom), 0);
    assert_string_equal(ard_domain(), dom);
    ard_port *p = ard_create("sd", ARD_OUT, 8, NULL);
    assert_non_null(p);
    struct args g = make_args(NULL);
    assert_int_equal(ard_init(&g.argc, g.argv), 0);
    assert_true(shm_exists(dom, "sd"));
}

/* ---- --ard-help ------------------------------------------------------------------------- */

static void test_help_prints_ports_and_exits_0(void **state)
{
    (void)state;
    int pfd[2];
    assert_int_equal(pipe(pfd), 0);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(pfd[1], 1);
        close(pfd[0]);
        ard_create("command", ARD_IN, 16, "f64[2]");
        ard_create("state", ARD_OUT, 72, NULL);
        struct args g = make_args("--ard", "command=arm.cmd", "--ard-help", NULL);
        int rc = ard_init(&g.argc, g.argv);
        fprintf(stderr, "ard_init returned %d instead of exiting: %s\n", rc, ard_errdetail());
        _exit(3);
    }
    close(pfd[1]);
    char out[8192];
    size_t len = 0;
    ssize_t n;
    while ((n = read(pfd[0], out + len, sizeof out - 1 - len)) > 0)
        len += (size_t)n;
    out[len] = '\0';
    close(pfd[0]);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    const char *words[] = {"command", "in", "16", "f64[2]", "arm.cmd", "state", "out", "72"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        ASSERT_CONTAINS(out, words[i]);
    /* The line of a port names its own properties. */
    char *line = strstr(out, "command");
    char *eol = strchr(line, '\n');
    assert_non_null(eol);
    *eol = '\0';
    ASSERT_CONTAINS(line, "arm.cmd");
    ASSERT_CONTAINS(line, "f64[2]");
    ASSERT_CONTAINS(line, "16");
    /* Help only describes: it attaches nothing. */
    assert_false(shm_exists(domain, "arm.cmd"));
    assert_false(shm_exists(domain, "state"));
}

/* ---- realtime requests ------------------------------------------------------------------ */

/* Run `opt [val]` through ard_init in a child without realtime rights; the child exits 0 if
 * ard_init returned ARD_ERTREFUSED with a detail naming the option `name`. */
static void expect_refused(const char *name, const char *opt, const char *val)
{
    fflush(stdout);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct rlimit zero = {0, 0};
        if (setrlimit(RLIMIT_RTPRIO, &zero) < 0 || setrlimit(RLIMIT_MEMLOCK, &zero) < 0) {
            perror("setrlimit");
            _exit(2);
        }
        if (geteuid() == 0) {
            /* Root ignores the limits: become nobody (which also drops the capabilities). */
            gid_t none[1] = {NOGROUP_GID};
            if (setgroups(1, none) < 0 || setgid(NOGROUP_GID) < 0 || setuid(NOBODY_UID) < 0) {
                perror("dropping root");
                _exit(2);
            }
        }
        ard_port *p = ard_create("rt", ARD_OUT, 8, NULL);
        (void)p;
        struct args g = make_args(opt, val, NULL);
        int rc = ard_init(&g.argc, g.argv);
        if (rc != ARD_ERTREFUSED || strstr(ard_errdetail(), name) == NULL) {
            fprintf(stderr, "%s %s: rc %d, detail '%s'\n", opt, val ? val : "", rc,
                    ard_errdetail());
            _exit(1);
        }
        _exit(0);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        fail_msg("%s %s: not refused with ARD_ERTREFUSED naming the option (see stderr)", opt,
                 val ? val : "");
}

static void test_refused_realtime_request_is_an_error(void **state)
{
    (void)state;
    expect_refused("--ard-prio", "--ard-prio", "10");
    expect_refused("--ard-prio", "--ard-prio=50", NULL);
#ifndef ARD_SANITIZED
    /* AddressSanitizer turns mlockall into a no-op that succeeds, so only without it. */
    expect_refused("--ard-lock", "--ard-lock", NULL);
#endif
    /* A well-formed list of CPUs this machine does not have. */
    expect_refused("--ard-cpu", "--ard-cpu", "1000-1010");
}

static void test_realtime_call_checks_and_applies(void **state)
{
    (void)state;
    /* Nothing asked: nothing done. */
    assert_int_equal(ard_realtime(NULL, 0, 0), 0);
    /* Malformed requests name what was wrong. */
    assert_int_equal(ard_realtime("0,x", 0, 0), ARD_EINVAL);
    ASSERT_CONTAINS(ard_errdetail(), "CPU list '0,x'");
    assert_int_equal(ard_realtime(NULL, 0, 100), ARD_EINVAL);
    ASSERT_CONTAINS(ard_errdetail(), "priority 100");
    /* A CPU that does not exist is refused by the system. */
    assert_int_equal(ard_realtime("1000", 0, 0), ARD_ERTREFUSED);
    ASSERT_CONTAINS(ard_errdetail(), "sched_setaffinity");
    /* A valid request is applied (in a child: it changes the process). */
    fflush(stdout);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        cpu_set_t set;
        int rc = ard_realtime("0", 0, 0);
        sched_getaffinity(0, sizeof set, &set);
        _exit(rc == 0 && CPU_COUNT(&set) == 1 && CPU_ISSET(0, &set) ? 0 : 1);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
}

static void test_granted_realtime_request_applied(void **state)
{
    (void)state;
    if (geteuid() != 0) {
        print_message("skipping: granting SCHED_FIFO and mlockall needs root here\n");
        skip();
    }
    fflush(stdout);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        ard_create("rt", ARD_OUT, 8, NULL);
        struct args g = make_args("--ard-prio", "7", "--ard-lock", "--ard-cpu", "0", NULL);
        int rc = ard_init(&g.argc, g.argv);
        struct sched_param sp;
        cpu_set_t set;
        int policy = sched_getscheduler(0);
        sched_getparam(0, &sp);
        sched_getaffinity(0, sizeof set, &set);
        FILE *f = fopen("/proc/self/status", "r");
        char line[256];
        bool locked = false;
        while (f && fgets(line, sizeof line, f))
            if (strncmp(line, "VmLck:", 6) == 0)
                locked = strtol(line + 6, NULL, 10) > 0;
        if (f)
            fclose(f);
#ifdef ARD_SANITIZED
        locked = true; /* AddressSanitizer turns mlockall into a no-op */
#endif
        bool ok = rc == 0 && policy == SCHED_FIFO && sp.sched_priority == 7 &&
                  CPU_COUNT(&set) == 1 && CPU_ISSET(0, &set) && locked;
        if (!ok)
            fprintf(stderr, "rc %d (%s) policy %d prio %d cpus %d locked %d\n", rc, ard_errdetail(),
                    policy, sp.sched_priority, CPU_COUNT(&set), locked);
        _exit(ok ? 0 : 1);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
}

/* ---- how many words each standard option takes (ardi_lib_option_words) ------------------ */

/* For every row of the library's table: what ardi_lib_option_words says agrees with what
 * ard_init does (a flag refuses "=value", an option with a value asks for the next word). */
static void test_option_words_agree_with_parsing(void **state)
{
    (void)state;
    size_t k = 0;
    for (const char *name; (name = ardi_lib_option_name(k)) != NULL; k++) {
        int words = ardi_lib_option_words(name);
        if (words != 1 && words != 2)
            fail_msg("%s: ardi_lib_option_words says %d", name, words);
        char eq[64];
        snprintf(eq, sizeof eq, "%s=v", name);
        if (ardi_lib_option_words(eq) != 1)
            fail_msg("%s: one word, yet ardi_lib_option_words says %d", eq,
                     ardi_lib_option_words(eq));
        /* Alone: an option with a value needs the next word; a flag refuses "=v". */
        struct args g = words == 2 ? make_args(name, NULL) : make_args(eq, NULL);
        int rc = ard_init(&g.argc, g.argv);
        const char *want = words == 2 ? "needs a value" : "takes no value";
        if (rc != ARD_EOPTION || strstr(ard_errdetail(), want) == NULL ||
            strstr(ard_errdetail(), name) == NULL)
            fail_msg("%s (%d words): ard_init rc %d '%s', want ARD_EOPTION '%s'", name, words, rc,
                     ard_errdetail(), want);
        ard_fini();
    }
    assert_true(k >= 9); /* --ard and the 8 --ard-* options */
    /* The program's own words, and words the library refuses. */
    assert_int_equal(ardi_lib_option_words("file.yaml"), 0);
    assert_int_equal(ardi_lib_option_words("--ardx"), 0);
    assert_int_equal(ardi_lib_option_words("--"), 0);
    assert_int_equal(ardi_lib_option_words("--ard-bogus"), ARD_EOPTION);
    ASSERT_CONTAINS(ard_errdetail(), "unknown option '--ard-bogus' (standard options: --ard");
    struct args g = make_args("--ard-bogus", NULL);
    assert_int_equal(ard_init(&g.argc, g.argv), ARD_EOPTION);
    ASSERT_CONTAINS(ard_errdetail(), "unknown option '--ard-bogus' (standard options: --ard");
}

/* Readiness (ARD_READY_FD, src/lib/ready.c) is tested in tests/ardstart/test_ready.c. */

#define T(f) cmocka_unit_test_teardown(f, teardown)

int main(void)
{
    snprintf(domain, sizeof domain, "t_opt_%d", (int)getpid());
    setenv("ARD_DOMAIN", domain, 1);
    unsetenv("ARD_SHM_MODE");
    unsetenv("ARD_SPIN_NS");
    unsetenv("ARD_READY_FD");
    const struct CMUnitTest tests[] = {
        T(test_options_removed_and_rest_kept_in_order),
        T(test_every_option_in_both_forms),
        T(test_init_twice_refused_until_fini),
        T(test_malformed_options_refused_naming_option),
        T(test_malformed_environment_refused_naming_variable),
        T(test_set_domain_checks_name),
        T(test_help_prints_ports_and_exits_0),
        T(test_refused_realtime_request_is_an_error),
        T(test_realtime_call_checks_and_applies),
        T(test_granted_realtime_request_applied),
        T(test_option_words_agree_with_parsing),
    };
    return cmocka_run_group_tests_name("options", tests, NULL, NULL);
}
