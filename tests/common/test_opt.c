/* test_opt.c - the one option form (src/common/ardc_opt.h): parsing, values into their
 * destinations, the failure details, where a row applies, help and completion. */
#include "ard_common.h"
#include "ardc_opt.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

enum { W_RUN = 1, W_LIST = 2 };
enum { M_RUN, M_LIST };

struct dest {
    bool quiet;
    int mode;
    const char *out;
    char name[8];
    uint8_t small;
    unsigned mid;
    uint64_t big;
    int level;
    double rate;
    uint64_t packets;
    int format;
    const char *env[2];
    int nenv;
    const char *wait;
    bool waited;
    int calls;
    char *args[4];
    int nargs;
};

static int on_wait(void *d, const struct ardc_opt *o, const char *v)
{
    (void)o;
    struct dest *t = d;
    t->waited = true;
    t->wait = v;
    return 0;
}

static int on_help(void *d, const struct ardc_opt *o, const char *v)
{
    (void)o, (void)v;
    ((struct dest *)d)->calls++;
    return ARDC_OPT_STOP;
}

static int after_rate(void *d, const struct ardc_opt *o, const char *v)
{
    (void)o, (void)v;
    struct dest *t = d;
    t->calls++;
    return t->rate == 13 ? ardi_fail(ARD_EOPTION, "--rate 13: unlucky") : 0;
}

static int on_arg(void *d, char *w)
{
    struct dest *t = d;
    if (t->nargs == 4)
        return ardi_fail(ARD_EOPTION, "too many arguments");
    t->args[t->nargs++] = w;
    return 0;
}

static const struct ardc_opt rows[] = {
    {"quiet", 'q', NULL, "say less", ARDC_FLAG, ARDC_DEST(struct dest, quiet)},
    {"list", 'l', NULL, "list instead", ARDC_SET, ARDC_DEST(struct dest, mode), .set = M_LIST},
    {"output", 'o', "FILE", "write to FILE", ARDC_TEXT, ARDC_DEST(struct dest, out),
     .complete = "@file", .yaml = "output"},
    {"name", 0, "NAME", "a short name", ARDC_BUF, ARDC_DEST(struct dest, name), .yaml = "name"},
    {"small", 0, "N", "a byte", ARDC_UINT, ARDC_DEST(struct dest, small)},
    {"mid", 'm', "N", "up to 1000", ARDC_UINT, ARDC_DEST(struct dest, mid), .umax = 1000},
    {"big", 0, "N", "any", ARDC_UINT, ARDC_DEST(struct dest, big)},
    {"level", 0, "N", "-3..3", ARDC_INT, ARDC_DEST(struct dest, level), .min = -3, .max = 3},
    {"rate", 'r', "HZ", "a rate", ARDC_REAL, ARDC_DEST(struct dest, rate), .min = 0.5, .max = 100,
     .call = after_rate, .where = W_RUN},
    {"count", 'n', "N", "packets", ARDC_PACKETS, ARDC_DEST(struct dest, packets)},
    {"format", 'f', "FMT", "how", ARDC_CHOICE, ARDC_DEST(struct dest, format),
     .complete = "text csv json"},
    {"env", 'E', "NAME=VALUE", "repeatable", ARDC_LIST_OF(struct dest, env, nenv)},
    {"wait", 'w', "S", "wait", ARDC_CALL, .call = on_wait, .optional = true},
    {"secret", 0, NULL, "hidden", ARDC_FLAG, ARDC_DEST(struct dest, quiet), .hidden = true},
    {"help", 'h', NULL, "this text", ARDC_CALL, .call = on_help},
    {0},
};

static const struct ardc_optset with_args = {.see = "prog --help",
                                             .head = "usage: prog [options] ARG...\n",
                                             .opts = rows,
                                             .col = 24,
                                             .tail = "end\n",
                                             .arg = on_arg};
static const struct ardc_optset stop_at_arg = {
    .see = "prog --help", .head = "", .opts = rows, .col = 24};

/* Parse a command line given as words (NULL-terminated); the parser's answer. */
static int parse(const struct ardc_optset *s, unsigned where, struct dest *d, int *i, ...)
{
    static char *argv[32];
    int argc = 0;
    va_list ap;
    va_start(ap, i);
    for (char *w; (w = va_arg(ap, char *));)
        argv[argc++] = w;
    va_end(ap);
    memset(d, 0, sizeof *d);
    *i = 0;
    return ardc_opt_parse(s, where, argc, argv, i, d);
}

static void detail_has(const char *part)
{
    if (!strstr(ard_errdetail(), part))
        fail_msg("detail '%s' lacks '%s'", ard_errdetail(), part);
}

static void test_values(void **state)
{
    (void)state;
    struct dest d;
    int i;
    assert_int_equal(parse(&with_args, W_RUN, &d, &i, "-q", "--list", "--output=a.txt", "--name",
                           "joe", "--small", "255", "-m", "1000", "--big", "18446744073709551615",
                           "--level=-3", "-r", "2.5", "-n", "forever", "-f", "csv", "-E", "A=1",
                           "-EB=2", "x", "y", NULL),
                     0);
    assert_int_equal(i, 23);
    assert_true(d.quiet);
    assert_int_equal(d.mode, M_LIST);
    assert_string_equal(d.out, "a.txt");
    assert_string_equal(d.name, "joe");
    assert_int_equal(d.small, 255);
    assert_int_equal(d.mid, 1000);
    assert_true(d.big == UINT64_MAX);
    assert_int_equal(d.level, -3);
    assert_true(d.rate == 2.5);
    assert_int_equal(d.calls, 1); /* the callback after the stored value */
    assert_true(d.packets == 0);
    assert_int_equal(d.format, 1);
    assert_int_equal(d.nenv, 2);
    assert_string_equal(d.env[0], "A=1");
    assert_string_equal(d.env[1], "B=2");
    assert_int_equal(d.nargs, 2);
    assert_string_equal(d.args[1], "y");
}

/* Whole numbers are decimal, leading zeros and all, or hex after 0x. */
static void test_whole_numbers(void **state)
{
    (void)state;
    struct dest d;
    int i;
    assert_int_equal(
        parse(&with_args, W_RUN, &d, &i, "--big", "010", "-m", "08", "--small", "0x1f", NULL), 0);
    assert_true(d.big == 10);
    assert_int_equal(d.mid, 8);
    assert_int_equal(d.small, 31);
    uint64_t u;
    assert_int_equal(ardc_parse_uint("n", "0X10", 100, &u), 0);
    assert_true(u == 16);
    assert_int_equal(ardc_parse_uint("n", "0x", 100, &u), ARD_EOPTION);
    assert_int_equal(ardc_parse_uint("n", "09x", 100, &u), ARD_EOPTION);
}

static void test_shorts(void **state)
{
    (void)state;
    struct dest d;
    int i;
    /* Bundled flags, and a value attached to the last one. */
    assert_int_equal(parse(&with_args, W_RUN, &d, &i, "-qlm7", NULL), 0);
    assert_true(d.quiet);
    assert_int_equal(d.mode, M_LIST);
    assert_int_equal(d.mid, 7);
    /* An optional value is only taken attached: "-w 5" leaves 5 an argument. */
    assert_int_equal(parse(&with_args, W_RUN, &d, &i, "-w", "5", NULL), 0);
    assert_true(d.waited);
    assert_null(d.wait);
    assert_int_equal(d.nargs, 1);
    assert_int_equal(parse(&with_args, W_RUN, &d, &i, "-w5", "--wait=6", NULL), 0);
    assert_string_equal(d.wait, "6");
    assert_int_equal(d.nargs, 0);
}

static void test_refusals(void **state)
{
    (void)state;
    struct dest d;
    int i;
    assert_int_equal(parse(&with_args, W_RUN, &d, &i, "--bogus", NULL), ARD_EOPTION);
    detail_has("unknown option '--bogus' (see 'prog --help')");
    assert_int_equal(parse(&with_args, W_RUN, &d, &i, "-qz", NULL), ARD_EOPTION);
    detail_has("unknown option '-z'");
    assert_int_equal(parse(&with_args, W_RUN, &d, &i, "--output", NULL), ARD_EOPTION);
    detail_has("--output needs a value");
    assert_int_equal(parse(&with_args, W_RUN, &d, &i, "--quiet=1", NULL), ARD_EOPTION);
    detail_has("--quiet takes no value");
    assert_int_equal(parse(&with_args, W_RUN, &d, &i, "--small", "256", NULL), ARD_EOPTION);
    detail_has("--small '256': expected a whole number up to 255");
    assert_int_equal(parse(&with_args, W_RUN, &d, &i, "-m", "1001", NULL), ARD_EOPTION);
    detail_has("-m '1001': expected a whole number up to 1000");
    assert_int_equal(parse(&with_args, W_RUN, &d, &i, "--mid", "-1", NULL), ARD_EOPTION);
    detail_has("--mid '-1': expected a whole number");
    assert_int_equal(parse(&with_args, W_RUN, &d, &i, "--level", "1.5", NULL), ARD_EOPTION);
    detail_has("--level '1.5': expected a whole number from -3 to 3");
    assert_int_equal(parse(&with_args, W_RUN, &d, &i, "-r", "nan", NULL), ARD_EOPTION);
    detail_has("-r 'nan': expected a number from 0.5 to 100");
    assert_int_equal(parse(&with_args, W_RUN, &d, &i, "-r", "13", NULL), ARD_EOPTION);
    detail_has("--rate 13: unlucky");
    assert_int_equal(parse(&with_args, W_RUN, &d, &i, "-n", "0", NULL), ARD_EOPTION);
    detail_has("-n 0: nothing would be sent");
    assert_int_equal(parse(&with_args, W_RUN, &d, &i, "-f", "xml", NULL), ARD_EOPTION);
    detail_has("-f 'xml': expected text, csv or json");
    assert_int_equal(parse(&with_args, W_RUN, &d, &i, "--name", "12345678", NULL), ARD_EOPTION);
    detail_has("--name '12345678': too long (at most 7 characters)");
    assert_int_equal(parse(&with_args, W_RUN, &d, &i, "-E", "a", "-E", "b", "-E", "c", NULL),
                     ARD_EOPTION);
    detail_has("-E 'c': more than 2 given");
    assert_int_equal(parse(&with_args, W_RUN, &d, &i, "a", "b", "c", "d", "e", NULL), ARD_EOPTION);
    detail_has("too many arguments");
}

static void test_where_and_stops(void **state)
{
    (void)state;
    struct dest d;
    int i;
    /* --rate applies where W_RUN does only. */
    assert_int_equal(parse(&with_args, W_LIST, &d, &i, "--rate", "2", NULL), ARD_EOPTION);
    detail_has("unknown option '--rate'");
    assert_null(ardc_opt_find(&with_args, W_LIST, "rate"));
    assert_non_null(ardc_opt_find(&with_args, W_RUN, "rate"));
    /* No argument callback: parsing stops at the command. */
    assert_int_equal(parse(&stop_at_arg, W_RUN, &d, &i, "-q", "cmd", "-l", NULL), 0);
    assert_int_equal(i, 1);
    assert_int_equal(d.mode, M_RUN);
    /* "--" ends the options. */
    assert_int_equal(parse(&with_args, W_RUN, &d, &i, "--", "-q", NULL), 0);
    assert_false(d.quiet);
    assert_string_equal(d.args[0], "-q");
    /* A callback's stop: what follows is not looked at. */
    assert_int_equal(parse(&with_args, W_RUN, &d, &i, "-h", "--bogus", NULL), 0);
    assert_int_equal(i, 1);
    assert_int_equal(d.calls, 1);
}

static void test_yaml(void **state)
{
    (void)state;
    struct dest d;
    memset(&d, 0, sizeof d);
    const struct ardc_opt *o = ardc_opt_find_yaml(&with_args, W_RUN, "name");
    assert_non_null(o);
    assert_int_equal(ardc_opt_apply(o, "key 'name'", "bob", &d), 0);
    assert_string_equal(d.name, "bob");
    assert_int_equal(ardc_opt_apply(o, "key 'name'", "much too long", &d), ARD_EOPTION);
    detail_has("key 'name' 'much too long': too long");
    assert_null(ardc_opt_find_yaml(&with_args, W_RUN, "quiet"));
}

/* The text f was written with by fn. */
static char *text_of(void (*fn)(FILE *, const struct ardc_optset *, unsigned), unsigned where)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    fn(f, &with_args, where);
    fclose(f);
    return buf;
}

static void test_help_and_list(void **state)
{
    (void)state;
    char *h = text_of(ardc_opt_usage, W_RUN);
    assert_non_null(strstr(h, "usage: prog [options] ARG...\noptions:\n"));
    assert_non_null(strstr(h, "  -o, --output FILE     write to FILE\n"));
    assert_non_null(strstr(h, "  -w, --wait[=S]        wait\n"));
    assert_non_null(strstr(h, "  -r, --rate HZ         a rate\n"));
    assert_null(strstr(h, "secret"));
    assert_non_null(strstr(h, "end\n"));
    free(h);
    h = text_of(ardc_opt_usage, W_LIST);
    assert_null(strstr(h, "--rate"));
    free(h);
    char *l = text_of(ardc_opt_list, W_RUN);
    assert_non_null(strstr(l, "-o\t@file\n--output\t@file\n"));
    assert_non_null(strstr(l, "--quiet\t\n"));
    assert_non_null(strstr(l, "--big\t-\n"));
    assert_non_null(strstr(l, "--format\ttext csv json\n"));
    assert_null(strstr(l, "secret"));
    free(l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values),          cmocka_unit_test(test_whole_numbers),
        cmocka_unit_test(test_shorts),          cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_where_and_stops), cmocka_unit_test(test_yaml),
        cmocka_unit_test(test_help_and_list),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
