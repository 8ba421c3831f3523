/* play.c - `ard play FILE`: republish a recording at its recorded timing. */
#include "ard.h"
#include "ardnet_log.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

const char ardt_play_usage[] =
    "usage: ard play FILE [--rate X] [--loop] [--start S] [--end S] [--remap OLD=NEW...]\n"
    "                [--connections C,...]\n"
    "  Republish every packet of a recording at its recorded timing (the writers' realtime\n"
    "  stamps) into the domain (--domain): each connection is created with its recorded size\n"
    "  and descriptor, and its packets keep their recorded realtime stamps (the monotonic\n"
    "  stamp is this host's, the sequence numbers the connection's own), so a block cannot\n"
    "  tell replay from live. A connection with a live writer is refused (exit 2).\n"
    "options:\n"
    "  --rate X             X times the recorded speed (0.5 slower, 2 faster)\n"
    "  --loop               start again at the end, until interrupted\n"
    "  --start S, --end S   from/to S seconds after the first message; values above 1e9\n"
    "                       are absolute Unix times\n"
    "  --remap OLD=NEW      publish connection OLD as NEW (repeatable)\n"
    "  --connections LIST   only these connections (comma-separated)\n"
    "  -q, --quiet          no summary at the end\n"
    "exit codes: 0 ok, 1 no such file or connection, 2 live writer, 3 damaged file,\n"
    "            100 usage, 111 system error\n";

static void sleep_until(int64_t mono)
{
    if (ard_now_ns() >= mono)
        return; /* late or flat out (--rate high): no system call */
    struct timespec ts = {(time_t)(mono / 1000000000), (long)(mono % 1000000000)};
    while (!ardt_stop && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0)
        ;
}

int cmd_play(int argc, char **argv)
{
    const char *path = NULL;
    double rate = 1, start = -1, end = -1;
    bool loop = false, quiet = false;
    char **remap = calloc((size_t)argc, sizeof *remap);
    char *only = NULL;
    int nremap = 0, rc = 0;
    if (!remap)
        return ardt_err(ARDT_SYS, "out of memory");
    for (int i = 1; i < argc && rc == 0; i++) {
        const char *a = argv[i];
        bool val = strcmp(a, "--rate") == 0 || strcmp(a, "--start") == 0 ||
                   strcmp(a, "--end") == 0 || strcmp(a, "--remap") == 0 ||
                   strcmp(a, "--connections") == 0;
        if (val && i + 1 >= argc)
            rc = ardt_err(ARDT_USAGE, "%s needs a value", a);
        else if (strcmp(a, "--rate") == 0)
            rc = ardt_parse_double(a, argv[++i], 1e-6, 1e6, &rate);
        else if (strcmp(a, "--start") == 0)
            rc = ardt_parse_double(a, argv[++i], 0, 1e13, &start);
        else if (strcmp(a, "--end") == 0)
            rc = ardt_parse_double(a, argv[++i], 0, 1e13, &end);
        else if (strcmp(a, "--remap") == 0) {
            remap[nremap] = argv[++i];
            if (!strchr(remap[nremap], '='))
                rc = ardt_err(ARDT_USAGE, "--remap '%s': expected OLD=NEW", remap[nremap]);
            nremap++;
        } else if (strcmp(a, "--connections") == 0)
            only = argv[++i];
        else if (strcmp(a, "--loop") == 0)
            loop = true;
        else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0)
            quiet = true;
        else if (a[0] == '-' && a[1])
            rc = ardt_err(ARDT_USAGE, "unknown option '%s' (see 'ard help play')", a);
        else if (path)
            rc = ardt_err(ARDT_USAGE, "one file at a time ('%s' and '%s')", path, a);
        else
            path = a;
    }
    if (rc == 0 && !path)
        rc = ardt_err(ARDT_USAGE, "no file given (see 'ard help play')");
    if (rc) {
        free(remap);
        return rc;
    }
    ard_logr *r = ard_logr_open(path);
    if (!r) {
        free(remap);
        return ardt_liberr(ard_lasterror());
    }
    struct ard_log_summary s;
    ard_logr_summary(r, &s);
    if (s.cut[0])
        ardt_err(0, "warning: %s", s.cut);
    size_t nc = ard_logr_nconns(r);
    ard_port **ports = calloc(nc ? nc : 1, sizeof *ports);
    uint64_t *sent = calloc(nc ? nc : 1, sizeof *sent);
    bool *want = calloc(nc ? nc : 1, sizeof *want);
    if (!ports || !sent || !want) {
        rc = ardt_err(ARDT_SYS, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < nc; i++)
        want[i] = only == NULL;
    if (only) {
        char *list = strdup(only);
        for (char *sv = NULL, *t = list ? strtok_r(list, ",", &sv) : NULL; t && rc == 0;
             t = strtok_r(NULL, ",", &sv)) {
            int ci = ard_logr_find(r, t);
            if (ci < 0)
                rc = ardt_err(ARDT_NOENT, "'%s' has no connection '%s'", path, t);
            else
                want[ci] = true;
        }
        free(list);
    }
    for (int k = 0; k < nremap && rc == 0; k++) {
        char *eq = strchr(remap[k], '=');
        *eq = '\0';
        if (ard_logr_find(r, remap[k]) < 0)
            rc = ardt_err(ARDT_NOENT, "--remap: '%s' has no connection '%s'", path, remap[k]);
        *eq = '=';
    }
    if (rc == 0 && (rc = ardt_lib_init()) != 0)
        goto done;
    for (size_t i = 0; i < nc && rc == 0; i++) {
        const struct ard_log_conn *c = ard_logr_conn(r, i);
        if (!want[i])
            continue;
        if (!c->ardnet) {
            ardt_err(0, "connection '%s' is not an ardnet one: not played", c->name);
            want[i] = false;
            continue;
        }
        const char *name = c->name;
        for (int k = 0; k < nremap; k++) {
            size_t l = strlen(c->name);
            if (strncmp(remap[k], c->name, l) == 0 && remap[k][l] == '=')
                name = remap[k] + l + 1;
        }
        char port[32];
        snprintf(port, sizeof port, "play%zu", i);
        ports[i] = ard_create_on(port, name, ARD_OUT, c->size, c->type[0] ? c->type : NULL);
        if (!ports[i])
            rc = ardt_liberr(ard_lasterror());
    }
    if (rc)
        goto done;
    ardt_signals();
    uint64_t from = s.start_ns, to = UINT64_MAX;
    if (start >= 0)
        from = start > 1e9 ? (uint64_t)(start * 1e9) : s.start_ns + (uint64_t)(start * 1e9);
    if (end >= 0)
        to = end > 1e9 ? (uint64_t)(end * 1e9) : s.start_ns + (uint64_t)(end * 1e9);
    uint64_t total = 0;
    do {
        if ((rc = ard_logr_seek(r, from)) < 0)
            break;
        struct ard_log_msg m;
        int k = 0;
        uint64_t real0 = 0;
        int64_t mono0 = ard_now_ns(), last_target = 0;
        bool first = true;
        while (!ardt_stop && (k = ard_logr_next(r, &m)) == 1) {
            if (m.log_ns > to)
                break;
            if (!want[m.conn] || !ports[m.conn])
                continue;
            if (first) {
                real0 = m.real_ns;
                first = false;
            }
            /* Timing by the writers' stamps; a stamp that goes back never waits. */
            int64_t target = mono0 + (int64_t)((double)(int64_t)(m.real_ns - real0) / rate);
            if (target < last_target)
                target = last_target;
            last_target = target;
            sleep_until(target);
            if (ardt_stop)
                break;
            int e = ard_send_stamped(ports[m.conn], m.packet, ard_now_ns(), m.real_ns);
            if (e < 0) {
                rc = ardt_liberr(e);
                break;
            }
            sent[m.conn]++;
            total++;
        }
        if (rc == 0 && k < 0 && !ardt_stop)
            rc = ardt_liberr(k);
    } while (loop && !ardt_stop && rc == 0);
    if (!quiet)
        for (size_t i = 0; i < nc; i++)
            if (ports[i])
                fprintf(stderr, "%-24s played %llu -> %s\n", ard_logr_conn(r, i)->name,
                        (unsigned long long)sent[i], ard_port_connection(ports[i]));
done:
    for (size_t i = 0; ports && i < nc; i++)
        ard_close(ports[i]);
    free(ports);
    free(sent);
    free(want);
    free(remap);
    ard_logr_close(r);
    return rc;
}
