/*
 * test_options.c - ardnet's option table against its documentation and its parsers: every
 * option of the table has its row in the Options section of docs/ardnet.md (letter, name and
 * value as --help shows them) and the section has no other; every route and process option
 * is a key of the YAML file as that page lists them; `ardnet --help` prints each option once;
 * a process option set from text lands in its field, refuses what is out of range naming the
 * option, and the command line's wins over the file's.
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
static void option_cell(const struct ardn_opt *o, char *buf, size_t len)
{
    char letter[8] = "";
    if (o->letter)
        snprintf(letter, sizeof letter, "-%c, ", o->letter);
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
        const struct ardn_opt *o = &ardn_opts[i];
        snprintf(key, sizeof key, "`%s`", o->name);
        const char *at = strstr(route_keys, key);
        if (o->kind == ARDN_OPT_ROUTE) {
            nroute++;
            if (!at || at > top_keys)
                fail_msg("docs/ardnet.md: %s is not among the keys of a route", key);
        } else if (ardn_opt_is_global(o)) {
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
    ardn_usage_options(m, true);
    ardn_usage_options(m, false);
    fclose(m);
    char name[64];
    for (int i = 0; i < ardn_nopts; i++) {
        const struct ardn_opt *o = &ardn_opts[i];
        snprintf(name, sizeof name, "--%s%s", o->name, o->arg ? " " : "\n");
        if (o->arg ? count(text, name) != 1 : false)
            fail_msg("--help shows '%s' %d times", name, count(text, name));
        snprintf(name, sizeof name, " --%s", o->name);
        assert_true(count(text, name) >= 1);
    }
    assert_int_equal(count(text, "\n"), ardn_nopts + count(text, "\n"
                                                                 "                          "));
    free(text);
}

static void test_a_process_option_lands_in_its_field_and_is_checked(void **state)
{
    (void)state;
    struct ardn_global file = {.dscp = -1, .sock_prio = -1, .ros_domain = -1}, cli = file;
    assert_int_equal(ardn_global_option(&file, ardn_opt_find("dscp"), "46"), 0);
    assert_int_equal(ardn_global_option(&file, ardn_opt_find("bind"), "10.0.0.1"), 0);
    assert_int_equal(ardn_global_option(&file, ardn_opt_find("prio"), "80"), 0);
    assert_int_equal(ardn_global_option(&cli, ardn_opt_find("prio"), "90"), 0);
    assert_int_equal(ardn_global_option(&cli, ardn_opt_find("counters"), "net.c"), 0);
    assert_int_equal(ardn_global_option(&cli, ardn_opt_find("dscp"), "64"), ARD_EINVAL);
    assert_string_equal(ard_errdetail(), "dscp '64': expected a number 0..63");
    assert_int_equal(ardn_global_option(&cli, ardn_opt_find("sock-prio"), "x"), ARD_EINVAL);
    assert_int_equal(ardn_global_option(&cli, ardn_opt_find("ros-domain"), "233"), ARD_EINVAL);
    char lng[300];
    memset(lng, 'a', sizeof lng - 1);
    lng[sizeof lng - 1] = '\0';
    assert_int_equal(ardn_global_option(&cli, ardn_opt_find("bind"), lng), ARD_EINVAL);
    assert_non_null(strstr(ard_errdetail(), "bind: "));
    assert_int_equal(ardn_global_option(&cli, ardn_opt_find("in"), "x"), ARD_EINVAL);
    struct ardn_global g = file;
    ardn_global_merge(&g, &cli);
    assert_int_equal(g.dscp, 46); /* the file's: the command line did not set it */
    assert_string_equal(g.bind, "10.0.0.1");
    assert_int_equal(g.prio, 90); /* the command line's */
    assert_string_equal(g.counters, "net.c");
    assert_int_equal(g.sock_prio, -1); /* refused: left as it was */
    assert_int_equal(g.ros_domain, -1);
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
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    free(doc);
    return rc;
}
