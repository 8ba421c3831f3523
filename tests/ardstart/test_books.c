/*
 * test_books.c - units of the books (src/books): entry text, names and paths, storage,
 * and the start counter under concurrent writers.
 */
#include "ard_common.h"
#include "books.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/ardbooks_test.XXXXXX");
    assert_non_null(mkdtemp(dir));
    setenv("ARD_BOOKS_DIR", dir, 1);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    return 0;
}

static struct ardb_entry sample(const char *path, uint64_t seq)
{
    struct ardb_entry e = {0};
    ardb_copy(e.path, sizeof e.path, path);
    ardb_copy(e.host, sizeof e.host, "rt1");
    ardb_copy(e.cmd, sizeof e.cmd, "./arm.sh 'a b' \\x\nnext");
    ardb_copy(e.log, sizeof e.log, "/run/x.log");
    e.seq = seq;
    e.pid = 1234;
    e.pgid = 1233;
    e.pid_start = 99;
    e.pgid_start = 98;
    e.state = ARDB_EXITED;
    e.code = 3;
    e.start_ns = 1700000000000000000LL;
    e.end_ns = 1700000001000000000LL;
    return e;
}

static void test_entry_text_round_trip_keeps_every_field(void **state)
{
    (void)state;
    struct ardb_entry e = sample("robot/arm/driver", 17), f;
    e.remote = true;
    ardb_copy(e.rsh, sizeof e.rsh, "ssh -F '/tmp/x y'");
    ardb_copy(e.bindir, sizeof e.bindir, "/opt/ard/bin");
    char buf[16384];
    assert_true(ardb_format(&e, buf, sizeof buf) > 0);
    assert_non_null(strstr(buf, "parent=robot/arm\n"));
    assert_int_equal(ardb_parse(buf, &f), 0);
    assert_string_equal(f.path, e.path);
    assert_string_equal(f.host, e.host);
    assert_string_equal(f.cmd, e.cmd); /* newline and backslash survive the escaping */
    assert_string_equal(f.rsh, e.rsh);
    assert_string_equal(f.bindir, e.bindir);
    assert_true(f.remote);
    assert_int_equal(f.seq, 17);
    assert_int_equal(f.pid, 1234);
    assert_int_equal(f.pgid, 1233);
    assert_int_equal(f.pid_start, 99);
    assert_int_equal(f.pgid_start, 98);
    assert_int_equal(f.state, ARDB_EXITED);
    assert_int_equal(f.code, 3);
    assert_true(f.start_ns == e.start_ns && f.end_ns == e.end_ns);
}

/* The restart fields: written only when a policy is in force, read back whole, and absent
 * (zero) in entries of older versions; a state "restarting" and the limit's failure. */
static void test_restart_fields_round_trip(void **state)
{
    (void)state;
    struct ardb_entry e = sample("robot/drv", 5), f;
    char buf[16384];
    assert_true(ardb_format(&e, buf, sizeof buf) > 0);
    assert_null(strstr(buf, "restarts="));
    assert_int_equal(ardb_parse(buf, &f), 0);
    assert_int_equal(f.restart, 0);
    assert_int_equal(f.restarts, 0);
    assert_false(f.stopping);
    e.restart = 1;
    e.restarts = 7;
    e.state = ARDB_RESTARTING;
    e.last_state = ARDB_KILLED;
    e.last_code = 9;
    e.stopping = true;
    assert_true(ardb_format(&e, buf, sizeof buf) > 0);
    assert_non_null(strstr(buf, "state=restarting\n"));
    assert_int_equal(ardb_parse(buf, &f), 0);
    assert_int_equal(f.state, ARDB_RESTARTING);
    assert_int_equal(f.restart, 1);
    assert_int_equal(f.restarts, 7);
    assert_int_equal(f.last_state, ARDB_KILLED);
    assert_int_equal(f.last_code, 9);
    assert_true(f.stopping);
    char text[64];
    ardb_state_text(ARDB_FAILED, ARDB_CODE_LIMIT, text, sizeof text);
    assert_string_equal(text, "failed: restart limit reached");
    /* a damaged value is refused, naming it */
    char *p = strstr(buf, "restarts=7");
    memcpy(p, "restarts=x", 10);
    assert_true(ardb_parse(buf, &f) < 0);
    assert_non_null(strstr(ard_errdetail(), "restarts"));
}

static void test_parse_rejects_damaged_entries(void **state)
{
    (void)state;
    struct ardb_entry e;
    assert_true(ardb_parse("path=a\n", &e) < 0);        /* no state */
    assert_true(ardb_parse("state=running\n", &e) < 0); /* no path */
    assert_true(ardb_parse("path=a\nstate=zombie\n", &e) < 0);
    assert_true(ardb_parse("path=a\nstate=running\npid=x\n", &e) < 0);
    assert_true(ardb_parse("path=../a\nstate=running\n", &e) < 0);
    assert_true(ardb_parse("garbage\n", &e) < 0);
    assert_int_equal(ardb_parse("path=a/b\nstate=running\nfuture=1\n", &e), 0);
    assert_string_equal(e.path, "a/b");
}

static void test_names_paths_and_domains_are_checked(void **state)
{
    (void)state;
    assert_int_equal(ardi_check_name("entry", "driver-1.x_y", true), 0);
    assert_true(ardi_check_name("entry", "", true) < 0);
    assert_true(ardi_check_name("entry", "..", true) < 0);
    assert_true(ardi_check_name("entry", "a b", true) < 0);
    assert_non_null(strstr(ard_errdetail(), "' '"));
    assert_true(ardi_check_name("entry", "a+b", true) < 0);
    char big[80];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    assert_true(ardi_check_name("entry", big, true) < 0);
    assert_int_equal(ardb_check_path("robot/arm/driver"), 0);
    assert_true(ardb_check_path("/robot") < 0);
    assert_true(ardb_check_path("robot/") < 0);
    assert_true(ardb_check_path("robot//arm") < 0);
    assert_true(ardb_check_path("") < 0);
    assert_int_equal(ardb_check_domain("t_x-1"), 0);
    assert_true(ardb_check_domain("a.b") < 0);
}

static void test_under_matches_whole_names_only(void **state)
{
    (void)state;
    assert_true(ardb_under("robot/arm", "robot"));
    assert_true(ardb_under("robot", "robot"));
    assert_false(ardb_under("robots", "robot"));
    assert_false(ardb_under("robot", "robot/arm"));
    assert_true(ardb_under("robot/arm/driver", "robot/arm"));
}

static void test_default_name_is_basename_without_extension(void **state)
{
    (void)state;
    char n[64];
    ardb_default_name("./scripts/arm.sh", n, sizeof n);
    assert_string_equal(n, "arm");
    ardb_default_name("/usr/bin/ardnet", n, sizeof n);
    assert_string_equal(n, "ardnet");
    ardb_default_name("my block", n, sizeof n);
    assert_string_equal(n, "my_block");
    ardb_default_name(".hidden", n, sizeof n);
    assert_string_equal(n, ".hidden");
}

static void test_written_entries_are_listed_in_start_order_by_subtree(void **state)
{
    (void)state;
    struct ardb_books b;
    assert_int_equal(ardb_open(&b, "t_books"), 0);
    const char *paths[] = {"robot", "robot/arm", "robots", "robot/arm/driver", "other"};
    for (int i = 0; i < 5; i++) {
        struct ardb_entry e = sample(paths[i], 0);
        assert_int_equal(ardb_lock(&b), 0);
        assert_int_equal(ardb_next_seq(&b, &e.seq), 0);
        assert_int_equal(e.seq, (uint64_t)i + 1);
        assert_int_equal(ardb_write(&b, &e), 0);
        ardb_unlock(&b);
    }
    struct ardb_entry *v;
    int n = ardb_list(&b, "robot", &v);
    assert_int_equal(n, 3);
    assert_string_equal(v[0].path, "robot");
    assert_string_equal(v[1].path, "robot/arm");
    assert_string_equal(v[2].path, "robot/arm/driver");
    free(v);
    n = ardb_list(&b, NULL, &v);
    assert_int_equal(n, 5);
    free(v);
    struct ardb_entry e;
    assert_int_equal(ardb_read(&b, "robot/arm/driver", &e), 0);
    assert_int_equal(e.seq, 4);
    assert_int_equal(ardb_remove(&b, "robot/arm"), 0);
    assert_int_equal(ardb_remove(&b, "robot/arm"), 1);
    assert_int_equal(ardb_read(&b, "robot/arm", &e), 1);
    n = ardb_list(&b, "robot", &v);
    assert_int_equal(n, 2);
    free(v);
    char log[PATH_MAX];
    ardb_log_path(&b, "robot/arm", log, sizeof log);
    assert_non_null(strstr(log, "/t_books/log/robot+arm.log"));
    ardb_close(&b);
}

/* ardkill removes what it stopped by start number: a new start of the same path, recorded
 * after the old command ended, stays in the books. */
static void test_remove_by_seq_keeps_a_later_start(void **state)
{
    (void)state;
    struct ardb_books b;
    assert_int_equal(ardb_open(&b, "t_books_seq"), 0);
    struct ardb_entry e = sample("p", 1);
    assert_int_equal(ardb_write(&b, &e), 0);
    e.seq = 2; /* the path started again */
    assert_int_equal(ardb_write(&b, &e), 0);
    assert_int_equal(ardb_remove_seq(&b, "p", 1), 1);
    struct ardb_entry now;
    assert_int_equal(ardb_read(&b, "p", &now), 0);
    assert_int_equal(now.seq, 2);
    assert_int_equal(ardb_remove_seq(&b, "p", 2), 0);
    assert_int_equal(ardb_read(&b, "p", &now), 1);
    assert_int_equal(ardb_remove_seq(&b, "p", 2), 1);
    ardb_close(&b);
}

/* ardkill finishes a stopped entry with one read: the entry as it was when removed (how its
 * command ended), and never a later start of the path. */
static void test_take_by_seq_gives_the_removed_entry(void **state)
{
    (void)state;
    struct ardb_books b;
    assert_int_equal(ardb_open(&b, "t_books_take"), 0);
    struct ardb_entry e = sample("p", 1), was;
    e.state = ARDB_KILLED;
    e.code = 15;
    assert_int_equal(ardb_write(&b, &e), 0);
    assert_int_equal(ardb_take_seq(&b, "p", 2, &was), 1); /* another start: kept */
    assert_int_equal(was.seq, 1);
    assert_int_equal(ardb_read(&b, "p", &was), 0);
    assert_int_equal(ardb_take_seq(&b, "p", 1, &was), 0);
    assert_int_equal(was.state, ARDB_KILLED);
    assert_int_equal(was.code, 15);
    assert_string_equal(was.cmd, e.cmd);
    assert_int_equal(ardb_read(&b, "p", &was), 1);
    assert_int_equal(ardb_take_seq(&b, "p", 1, &was), 1);
    ardb_close(&b);
}

/* The start counter is rewritten in place: its text must stay exactly the number, also when
 * it gains a digit, and a counter written by an older ardstart (a whole new file) is read. */
static void test_start_counter_grows_in_place_across_digits(void **state)
{
    (void)state;
    struct ardb_books b;
    assert_int_equal(ardb_open(&b, "t_books_counter"), 0);
    char file[PATH_MAX + 8], text[32];
    snprintf(file, sizeof file, "%s/seq", b.dir);
    const char *before[] = {"9\n", "99999\n", "41\n"};
    const char *after[] = {"10\n", "100000\n", "42\n"};
    for (int i = 0; i < 3; i++) {
        /* written as a new file, as an older ardstart does */
        FILE *f = fopen(file, "w");
        assert_non_null(f);
        fputs(before[i], f);
        fclose(f);
        uint64_t seq = 0;
        assert_int_equal(ardb_next_seq(&b, &seq), 0);
        assert_int_equal(seq, strtoull(after[i], NULL, 10));
        f = fopen(file, "r");
        assert_non_null(f);
        size_t n = fread(text, 1, sizeof text - 1, f);
        fclose(f);
        text[n] = '\0';
        assert_string_equal(text, after[i]);
    }
    uint64_t a = 0, c = 0;
    assert_int_equal(ardb_next_seq(&b, &a), 0);
    assert_int_equal(ardb_next_seq(&b, &c), 0);
    assert_int_equal(a, 43);
    assert_int_equal(c, 44);
    ardb_close(&b);
}

static void test_hosts_and_seconds_are_checked(void **state)
{
    (void)state;
    assert_int_equal(ardb_check_host("host", "rt1"), 0);
    assert_int_equal(ardb_check_host("host", "root@10.77.0.2"), 0);
    assert_int_equal(ardb_check_host("host", "fe80::1%eth0"), 0);
    assert_true(ardb_check_host("host", "") < 0);
    assert_true(ardb_check_host("host", "-oProxyCommand=x") < 0);
    assert_non_null(strstr(ard_errdetail(), "must not start with '-'"));
    assert_true(ardb_check_host("host", "a;b") < 0);
    assert_non_null(strstr(ard_errdetail(), "host 'a;b': character ';'"));
    int64_t ns = 0;
    assert_int_equal(ardb_opt_seconds("--x", "1.5", false, 10, &ns), 0);
    assert_int_equal(ns, 1500000000LL);
    assert_int_equal(ardb_opt_seconds("--x", "0", true, 10, &ns), 0);
    assert_int_equal(ns, 0);
    /* A bad value fails with the detail (the caller prints it), and leaves *ns alone. */
    ns = 7;
    assert_int_equal(ardb_opt_seconds("--x", "0", false, 10, &ns), ARD_EOPTION);
    assert_string_equal(ard_errdetail(), "--x '0': expected seconds > 0, at most 10");
    assert_int_equal(ardb_opt_seconds("--x", "11", true, 10, &ns), ARD_EOPTION);
    assert_string_equal(ard_errdetail(), "--x '11': expected seconds >= 0, at most 10");
    assert_int_equal(ardb_opt_seconds("--x", "nan", true, 10, &ns), ARD_EOPTION);
    assert_int_equal(ardb_opt_seconds("--x", "1s", true, 10, &ns), ARD_EOPTION);
    assert_int_equal(ardb_opt_seconds("--x", "", true, 10, &ns), ARD_EOPTION);
    assert_int_equal(ns, 7);
    const char *d = NULL;
    assert_int_equal(ardb_opt_domain("lab", &d), 0);
    assert_string_equal(d, "lab");
    assert_int_equal(ardb_opt_domain("a.b", &d), ARD_EOPTION);
    assert_non_null(strstr(ard_errdetail(), "domain name 'a.b': character '.'"));
}

/* Many processes take a number and write an entry at the same time: no number twice, no
 * entry lost, every entry readable. */
static void test_concurrent_writers_never_corrupt_the_books(void **state)
{
    (void)state;
    enum { PROCS = 8, EACH = 25 };
    for (int p = 0; p < PROCS; p++) {
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            struct ardb_books b;
            if (ardb_open(&b, "t_conc") < 0)
                _exit(1);
            for (int i = 0; i < EACH; i++) {
                char path[32];
                snprintf(path, sizeof path, "p%d/e%d", p, i);
                struct ardb_entry e = sample(path, 0);
                if (ardb_lock(&b) < 0 || ardb_next_seq(&b, &e.seq) < 0 || ardb_write(&b, &e) < 0)
                    _exit(2);
                ardb_unlock(&b);
            }
            _exit(0);
        }
    }
    for (int p = 0; p < PROCS; p++) {
        int st;
        assert_true(wait(&st) > 0);
        assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    struct ardb_books b;
    assert_int_equal(ardb_open(&b, "t_conc"), 0);
    struct ardb_entry *v;
    int n = ardb_list(&b, NULL, &v);
    assert_int_equal(n, PROCS * EACH);
    for (int i = 0; i < n; i++)
        assert_int_equal(v[i].seq, (uint64_t)i + 1); /* sorted, so 1..n without gaps */
    free(v);
    ardb_close(&b);
}

static void test_liveness_follows_the_process_and_its_start_time(void **state)
{
    (void)state;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        setpgid(0, 0);
        pause();
        _exit(0);
    }
    setpgid(pid, pid);
    unsigned long long st = ardb_proc_start(pid);
    assert_true(st > 0);
    assert_true(ardb_proc_alive(pid, st));
    assert_false(ardb_proc_alive(pid, st + 1)); /* another process with a reused pid */
    assert_true(ardb_group_alive(pid, st));
    struct ardb_entry e = sample("x", 1);
    e.state = ARDB_RUNNING;
    e.pid = pid;
    e.pid_start = st;
    e.pgid = pid;
    e.pgid_start = st;
    assert_int_equal(ardb_effective(&e), ARDB_RUNNING);
    kill(pid, SIGKILL);
    /* A zombie (not reaped yet) does not count as alive. */
    for (int i = 0; i < 500 && ardb_proc_alive(pid, st); i++)
        usleep(10000);
    assert_false(ardb_proc_alive(pid, st));
    assert_false(ardb_group_alive(pid, st));
    assert_int_equal(ardb_effective(&e), ARDB_LOST);
    waitpid(pid, NULL, 0);
    assert_int_equal(ardb_effective(&e), ARDB_LOST);
    /* With its supervisor alive the end is still to be recorded: running, not lost. */
    e.sup = getpid();
    e.sup_start = ardb_proc_start(e.sup);
    assert_int_equal(ardb_effective(&e), ARDB_RUNNING);
    e.sup_start++; /* a reused pid is not the supervisor */
    assert_int_equal(ardb_effective(&e), ARDB_LOST);
}

static void test_transport_argv_splits_words_and_keeps_the_command_whole(void **state)
{
    (void)state;
    char **argv;
    assert_int_equal(
        ardb_rsh_argv("ssh -F '/tmp/my dir/cfg' -o \"A=b c\"", "rt1", "ardstart -- 'x y'", &argv),
        0);
    const char *want[] = {"ssh",   "-F",  "/tmp/my dir/cfg",   "-o",
                          "A=b c", "rt1", "ardstart -- 'x y'", NULL};
    for (int i = 0; want[i]; i++)
        assert_string_equal(argv[i], want[i]);
    assert_null(argv[7]);
    ardb_argv_free(argv);
    assert_true(ardb_rsh_argv("ssh 'unbalanced", "h", "c", &argv) < 0);
    assert_true(ardb_rsh_argv("  ", "h", "c", &argv) < 0);
}

static void test_shell_quoting_survives_a_shell(void **state)
{
    (void)state;
    struct ardb_str s = {0};
    ardb_str_quote(&s, "printf");
    ardb_str_quote(&s, "%s|");
    ardb_str_quote(&s, "it's $HOME `x` \"q\"");
    ardb_str_quote(&s, "");
    char *argv[] = {"sh", "-c", s.s, NULL};
    struct ardb_str out = {0};
    int st;
    assert_int_equal(ardb_run(argv, 10000, &out, &st), 0);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    assert_string_equal(out.s, "it's $HOME `x` \"q\"||");
    ardb_str_free(&s);
    ardb_str_free(&out);
}

static void test_run_reports_missing_program_and_kills_on_timeout(void **state)
{
    (void)state;
    char *missing[] = {"/nonexistent/ardb-transport", NULL};
    int st;
    assert_true(ardb_run(missing, 1000, NULL, &st) < 0);
    assert_non_null(strstr(ard_errdetail(), "No such file"));
    char *slow[] = {"sleep", "30", NULL};
    assert_int_equal(ardb_run(slow, 200, NULL, &st), 1);
    assert_true(WIFSIGNALED(st));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_entry_text_round_trip_keeps_every_field),
        cmocka_unit_test(test_restart_fields_round_trip),
        cmocka_unit_test(test_parse_rejects_damaged_entries),
        cmocka_unit_test(test_names_paths_and_domains_are_checked),
        cmocka_unit_test(test_under_matches_whole_names_only),
        cmocka_unit_test(test_default_name_is_basename_without_extension),
        cmocka_unit_test(test_written_entries_are_listed_in_start_order_by_subtree),
        cmocka_unit_test(test_remove_by_seq_keeps_a_later_start),
        cmocka_unit_test(test_take_by_seq_gives_the_removed_entry),
        cmocka_unit_test(test_start_counter_grows_in_place_across_digits),
        cmocka_unit_test(test_hosts_and_seconds_are_checked),
        cmocka_unit_test(test_concurrent_writers_never_corrupt_the_books),
        cmocka_unit_test(test_liveness_follows_the_process_and_its_start_time),
        cmocka_unit_test(test_transport_argv_splits_words_and_keeps_the_command_whole),
        cmocka_unit_test(test_shell_quoting_survives_a_shell),
        cmocka_unit_test(test_run_reports_missing_program_and_kills_on_timeout),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
