/*
 * test_options.c - ardnet's option table against its documentation and its parsers: every
 * option of the table has its row in the Options section of docs/ardnet.md (letter, name and
 * value as --help shows them) and the section has no other; every route and process option
 * is a key of the YAML file as that page lists them; `ardnet --help` prints each option once;
 * a process option set from text lands in its field, refuses what is out of range naming the
 * option, and the command line's wins over the file's; a route option goes to the route being
 * built.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ardn.h"

#ifndef ARDNET_DOC
#error "ARDNET_DOC: the path of docs/ardnet.md"
#endif

static char *doc;

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    int c;
    while ((c = fgetc(f)) != EOF)
        fputc(c, m);
    fclose(f);
    fclose(m);
    return buf;
}

/* The text of the section that starts with `heading` (up to the next heading of its level). */
static char *section(const char *heading)
{
    const char *a = strstr(doc, heading);
    assert_non_null(a);
    const char *b = strstr(a + strlen(heading), "\n## ");
    size_t n = b ? (size_t)(b - a) : strlen(a);
    char *s = malloc(n + 1);
    assert_non_null(s);
    memcpy(s, a, n);
    s[n] = '\0';
    return s;
}

/* "`-i, --in ENDPOINT`": the option column as the table gives it. */
static void option_cell(const struct ardc_opt *o, char *buf, size_t len)
{
    char letter[8] = "";
    if (o->shrt)
        snprintf(letter, sizeof letter, "-%c, ", o->shrt);
    snprintf(buf, len, "| `%s--%s%s%s` |", letter, o->name, o->arg ? " " : "",
             o->arg ? o->arg : "");
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

static void test_every_option_has_its_row_in_the_manual_and_no_other(void **state)
{
    (void)state;
    char *opts = section("\n## Options");
    char cell[128];
    for (int i = 0; i < ardn_nopts; i++) {
        option_cell(&ardn_opts[i], cell, sizeof cell);
        if (count(opts, cell) != 1)
            fail_msg("docs/ardnet.md, Options: the row %s (as --help gives it) is there %d "
                     "times, not once",
                     cell, count(opts, cell));
    }
    /* Rows whose first cell is an option ("| `-x, --..." or "| `--..."). */
    int rows = count(opts, "\n| `--") + count(opts, "\n| `-") - count(opts, "\n| `--");
    if (rows != ardn_nopts)
        fail_msg("docs/ardnet.md, Options: %d option rows, the table has %d options", rows,
                 ardn_nopts);
    free(opts);
}

static void test_every_route_and_process_option_is_a_documented_yaml_key(void **state)
{
    (void)state;
    char *yaml = section("\n## YAML file");
    const char *route_keys = strstr(yaml, "Keys of a route:");
    const char *top_keys = strstr(yaml, "Top-level keys:");
    assert_non_null(route_keys);
    assert_non_null(top_keys);
    const char *end = strstr(top_keys, ". ");
    assert_non_null(end);
    char key[64];
    int nroute = 0, ntop = 0;
    for (int i = 0; i < ardn_nopts; i++) {
        const struct ardc_opt *o = &ardn_opts[i];
        /* A route's and the process's options are keys of the file, and no other. */
        assert_true(!!o->yaml == !!(o->where & (ARDN_W_ROUTE | ARDN_W_GLOBAL)));
        if (!o->yaml)
            continue;
        assert_string_equal(o->yaml, o->name);
        snprintf(key, sizeof key, "`%s`", o->yaml);
        const char *at = strstr(route_keys, key);
        if (o->where & ARDN_W_ROUTE) {
            nroute++;
            if (!at || at > top_keys)
                fail_msg("docs/ardnet.md: %s is not among the keys of a route", key);
        } else {
            ntop++;
            at = strstr(top_keys, key);
            if (!at || at > end)
                fail_msg("docs/ardnet.md: %s is not among the top-level keys", key);
        }
    }
    /* And no other: as many backquoted keys as the table has (plus `routes`). */
    char *list = strndup(route_keys, (size_t)(top_keys - route_keys));
    assert_int_equal(count(list, "`") / 2, nroute);
    free(list);
    list = strndup(top_keys, (size_t)(end - top_keys));
    assert_int_equal(count(list, "`") / 2, ntop + 1);
    free(list);
    /* The unknown-key message lists the same keys. */
    char keys[512];
    ardn_yaml_keys(keys, sizeof keys);
    assert_non_null(strstr(doc, keys));
    free(yaml);
}

static void test_the_usage_shows_each_option_once(void **state)
{
    (void)state;
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    /* The rows only: the help's head and tail left out. */
    struct ardc_optset rows = ardn_optset;
    rows.head = "";
    rows.tail = NULL;
    ardc_opt_usage(m, &rows, ARDN_W_CLI | ARDN_W_LIB);
    fclose(m);
    char name[64];
    for (int i = 0; i < ardn_nopts; i++) {
        const struct ardc_opt *o = &ardn_opts[i];
        snprintf(name, sizeof name, "--%s%s", o->name, o->arg ? " " : "\n");
        if (o->arg ? count(text, name) != 1 : false)
            fail_msg("--help shows '%s' %d times", name, count(text, name));
        snprintf(name, sizeof name, " --%s", o->name);
        assert_true(count(text, name) >= 1);
    }
    /* "options:", a line per option and the help's continuation lines. */
    assert_int_equal(count(text, "\n"), 1 + ardn_nopts +
                                            count(text, "\n"
                                                        "                          "));
    free(text);
}

/* Process option `name` from the file (given as its key) or the command line (as --name). */
static int set(struct ardn_conf *c, const char *name, const char *val)
{
    const struct ardc_opt *o = ardc_opt_find(&ardn_optset, ARDN_W_GLOBAL, name);
    assert_non_null(o);
    char given[64];
    snprintf(given, sizeof given, "%s%s", c->dash, name);
    return ardc_opt_apply(o, given, val, c);
}

static void test_a_process_option_lands_in_its_field_and_is_checked(void **state)
{
    (void)state;
    struct ardn_conf file, cli;
    ardn_conf_init(&file);
    ardn_conf_init(&cli);
    file.dash = "";
    assert_int_equal(set(&file, "dscp", "46"), 0);
    assert_int_equal(set(&file, "bind", "10.0.0.1"), 0);
    assert_int_equal(set(&file, "prio", "80"), 0);
    assert_int_equal(set(&cli, "prio", "90"), 0);
    assert_int_equal(set(&cli, "counters", "net.c"), 0);
    assert_int_equal(set(&cli, "dscp", "64"), ARD_EOPTION);
    assert_string_equal(ard_errdetail(), "--dscp '64': expected a number from 0 to 63");
    assert_int_equal(set(&file, "dscp", "x"), ARD_EOPTION);
    assert_non_null(strstr(ard_errdetail(), "dscp 'x'"));
    assert_int_equal(set(&cli, "sock-prio", "x"), ARD_EOPTION);
    assert_true(set(&cli, "ros-domain", "233") < 0);
    assert_non_null(strstr(ard_errdetail(), "--ros-domain '233'"));
    assert_true(set(&cli, "counters", "a b") < 0);
    assert_non_null(strstr(ard_errdetail(), "--counters: connection name 'a b'"));
    char lng[300];
    memset(lng, 'a', sizeof lng - 1);
    lng[sizeof lng - 1] = '\0';
    assert_int_equal(set(&cli, "bind", lng), ARD_EOPTION);
    assert_non_null(strstr(ard_errdetail(), "--bind 'aaa"));
    assert_null(ardc_opt_find(&ardn_optset, ARDN_W_GLOBAL, "in")); /* a route's */
    struct ardn_global g = file.g;
    ardn_global_merge(&g, &cli.g);
    assert_int_equal(g.dscp, 46); /* the file's: the command line did not set it */
    assert_string_equal(g.bind, "10.0.0.1");
    assert_int_equal(g.prio, 90); /* the command line's */
    assert_string_equal(g.counters, "net.c");
    assert_int_equal(g.sock_prio, -1); /* refused: left as it was */
    assert_int_equal(g.ros_domain, -1);
}

static void test_the_command_line_makes_routes_and_fills_the_catalog(void **state)
{
    (void)state;
    char *argv[] = {"ardnet", "-i",           "a.in",      "--out",  "udp://127.0.0.1:7001",
                    "-e3",    "--next",       "--in",      "b.in",   "-o",
                    "b.out",  "--name",       "bee",       "--auto", "--auto-port",
                    "7500",   "--auto-peers", "127.0.0.1", NULL};
    int argc = (int)(sizeof argv / sizeof argv[0]) - 1, i = 1;
    struct ardn_conf c;
    struct ardn_route r;
    ardn_conf_init(&c);
    ardn_route_init(&r);
    c.route = &r;
    assert_int_equal(ardc_opt_parse(&ardn_optset, ARDN_W_CLI, argc, argv, &i, &c), 0);
    assert_int_equal(i, argc);
    assert_int_equal(c.nroutes, 1); /* the first, ended by --next */
    assert_true(c.have_route);
    assert_int_equal(ardn_conf_end_route(&c), 0);
    assert_int_equal(c.nroutes, 2);
    assert_string_equal(c.routes[0].cfg.in.conn, "a.in");
    assert_int_equal(c.routes[0].cfg.every, 3);
    assert_string_equal(c.routes[0].cfg.name, "a.in");
    assert_string_equal(c.routes[1].cfg.out[0].conn, "b.out");
    assert_string_equal(c.routes[1].cfg.name, "bee");
    assert_true(c.cat.enabled);
    assert_int_equal(c.cat.port, 7500);
    assert_string_equal(c.cat.peers, "127.0.0.1");
    assert_int_equal(c.cat.limit, 0); /* not given */
    free(c.routes);
    /* --next with no route before it is refused, and a route key that no row has. */
    char *next[] = {"ardnet", "--next", NULL};
    ardn_conf_init(&c);
    c.route = &r;
    i = 1;
    assert_int_equal(ardc_opt_parse(&ardn_optset, ARDN_W_CLI, 2, next, &i, &c), ARD_EOPTION);
    assert_non_null(strstr(ard_errdetail(), "--next: no route before it"));
    assert_int_equal(ardn_route_option(&r, "colour", "red"), ARD_EINVAL);
    assert_string_equal(ard_errdetail(), "unknown route key 'colour'");
    assert_int_equal(ardn_route_option(&r, "size", "0"), ARD_EINVAL);
    assert_string_equal(ard_errdetail(), "size '0' is not a number 1..67108864");
}

int main(void)
{
    doc = read_all(ARDNET_DOC);
    if (!doc) {
        fprintf(stderr, "cannot read %s\n", ARDNET_DOC);
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_option_has_its_row_in_the_manual_and_no_other),
        cmocka_unit_test(test_every_route_and_process_option_is_a_documented_yaml_key),
        cmocka_unit_test(test_the_usage_shows_each_option_once),
        cmocka_unit_test(test_a_process_option_lands_in_its_field_and_is_checked),
        cmocka_unit_test(test_the_command_line_makes_routes_and_fills_the_catalog),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    free(doc);
    return rc;
}
