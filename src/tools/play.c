/* play.c - `ard play FILE`: republish a recording at its recorded timing. */
#include "ard.h"
#include "ardnet_log.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

enum {
    O_RATE = 1,
    O_LOOP,
    O_START,
    O_END,
    O_REMAP,
    O_CONNECTIONS,
    O_START_PAUSED,
    O_CLOCK,
    O_QUIET
};
static const struct ardt_opt opts[] = {
    {O_RATE, NULL, "--rate", "X", "X times the recorded speed (0.5 slower, 2 faster)",
     .kind = ARDT_REAL, .min = 1e-6, .max = 1e6},
    {O_LOOP, NULL, "--loop", NULL, "start again at the end, until interrupted", .kind = ARDT_FLAG},
    {O_START, NULL, "--start", "S",
     "from/to S seconds after the first message; values above 1e9\n"
     "are absolute Unix times",
     .kind = ARDT_REAL, .min = 0, .max = 1e13},
    {O_END, NULL, "--end", "S", NULL, .kind = ARDT_REAL, .min = 0, .max = 1e13},
    {O_REMAP, NULL, "--remap", "OLD=NEW", "publish connection OLD as NEW (repeatable)",
     .kind = ARDT_TEXT},
    {O_CONNECTIONS, NULL, "--connections", "LIST", "only these connections (comma-separated)",
     .kind = ARDT_TEXT},
    {O_START_PAUSED, NULL, "--start-paused", NULL,
     "start paused (a terminal's space, or SIGUSR1, resumes)", .kind = ARDT_FLAG},
    {O_CLOCK, NULL, "--clock", "CONN",
     "publish the playback time on CONN (time_ns:i64 rate:f64; rate 0\n"
     "while paused) every 10 ms, stamped with it",
     .kind = ARDT_TEXT},
    {O_QUIET, "-q", "--quiet", NULL, "no summary at the end", .kind = ARDT_FLAG},
    {0},
};
const struct ardt_spec ardt_play_spec = {
    "usage: ard play FILE [--rate X] [--loop] [--start S] [--end S] [--remap OLD=NEW...]\n"
    "                [--connections C,...] [--start-paused] [--clock CONN]\n"
    "  Republish every packet of a recording at its recorded timing (the writers' realtime\n"
    "  stamps) into the domain (--domain): each connection is created with its recorded size\n"
    "  and descriptor, and its packets keep their recorded realtime stamps (the monotonic\n"
    "  stamp is this host's, the sequence numbers the connection's own), so a block cannot\n"
    "  tell replay from live. A connection with a live writer is refused (exit 2).\n",
    opts, 23,
    "  In a terminal: space pauses and resumes, s steps one packet (and pauses), + and -\n"
    "  change the rate by 10%, with a one-line status (time, rate, packets) on stderr.\n"
    "  SIGUSR1 pauses and resumes too.\n"
    "exit codes: 0 ok, 1 no such file or connection, 2 live writer, 3 damaged file,\n"
    "            100 usage, 111 system error\n",
    false};

/* ---- the terminal: raw while playing, restored on every way out ------------------------------ */

static struct termios saved_tio;
static volatile sig_atomic_t raw_on, toggle;

static void tty_restore(void)
{
    if (raw_on) {
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_tio);
        raw_on = 0;
    }
}

static void tty_raw(void)
{
    struct termios t = saved_tio;
    t.c_lflag &= ~(tcflag_t)(ICANON | ECHO); /* ISIG stays: ^C is SIGINT */
    t.c_cc[VMIN] = 0;
    t.c_cc[VTIME] = 0;
    if (tcsetattr(STDIN_FILENO, TCSAFLUSH, &t) == 0)
        raw_on = 1;
}

/* Fatal signals other than SIGINT/SIGTERM (those end the loop normally): restore, then die
 * of the signal as before. ^Z: restore, stop; on continuing, raw again. */
static void on_fatal(int sig)
{
    if (raw_on)
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_tio); /* async-signal-safe */
    raw_on = 0;
    signal(sig, SIG_DFL);
    raise(sig);
}

static void on_tstp(int sig)
{
    (void)sig;
    int was = raw_on;
    if (raw_on)
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_tio);
    raw_on = 0;
    signal(SIGTSTP, SIG_DFL);
    raise(SIGTSTP);
    /* continued */
    struct sigaction sa = {.sa_handler = on_tstp};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTSTP, &sa, NULL);
    if (was) {
        struct termios t = saved_tio;
        t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
        t.c_cc[VMIN] = 0;
        t.c_cc[VTIME] = 0;
        if (tcsetattr(STDIN_FILENO, TCSAFLUSH, &t) == 0)
            raw_on = 1;
    }
}

static void on_usr1(int sig)
{
    (void)sig;
    toggle = 1;
}

static bool tty_init(void)
{
    if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &saved_tio) < 0)
        return false;
    struct sigaction sa = {.sa_handler = on_fatal};
    sigemptyset(&sa.sa_mask);
    static const int fatal[] = {SIGHUP, SIGQUIT, SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL};
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++)
        sigaction(fatal[i], &sa, NULL);
    sa.sa_handler = on_tstp;
    sigaction(SIGTSTP, &sa, NULL);
    atexit(tty_restore);
    tty_raw();
    return raw_on;
}

/* ---- the player's clock: recorded time = areal + (now - amono) * rate, or held when paused -- */

struct player {
    bool tty, paused, step;
    double rate;
    int64_t amono;  /* anchor: this host's monotonic time ... */
    uint64_t areal; /* ... at which the recording's time was areal */
    uint64_t held;  /* the recording's time while paused */
    uint64_t end_real, start_real;
    uint64_t total;
    ard_port *clock;
    int64_t next_clock, next_status;
};

static uint64_t pos(const struct player *p, int64_t now)
{
    if (p->paused)
        return p->held;
    double d = (double)(now - p->amono) * p->rate;
    return d < 0 ? p->areal : p->areal + (uint64_t)d;
}

static void set_paused(struct player *p, bool paused, int64_t now)
{
    if (paused == p->paused)
        return;
    if (paused)
        p->held = pos(p, now);
    else {
        p->areal = p->held;
        p->amono = now;
    }
    p->paused = paused;
}

static void set_rate(struct player *p, double rate, int64_t now)
{
    if (rate < 1e-6 || rate > 1e6)
        return;
    if (!p->paused) {
        p->areal = pos(p, now);
        p->amono = now;
    }
    p->rate = rate;
}

static void keys(struct player *p, int64_t now)
{
    if (toggle) {
        toggle = 0;
        set_paused(p, !p->paused, now);
    }
    if (!p->tty)
        return;
    char buf[32];
    ssize_t n = read(STDIN_FILENO, buf, sizeof buf);
    for (ssize_t i = 0; i < n; i++) {
        if (buf[i] == ' ')
            set_paused(p, !p->paused, now);
        else if (buf[i] == 's') {
            set_paused(p, true, now);
            p->step = true;
        } else if (buf[i] == '+')
            set_rate(p, p->rate * 1.1, now);
        else if (buf[i] == '-')
            set_rate(p, p->rate / 1.1, now);
    }
}

static void status(const struct player *p, int64_t now)
{
    uint64_t at = pos(p, now);
    double t = at > p->start_real ? (double)(at - p->start_real) / 1e9 : 0;
    double len = (double)(p->end_real - p->start_real) / 1e9;
    fprintf(stderr, "\r%s  %.3f / %.3f s  rate %.3gx  packets %llu\033[K",
            p->paused ? "[paused] " : "[playing]", t, len, p->rate, (unsigned long long)p->total);
    fflush(stderr);
}

static void publish_clock(struct player *p, int64_t now)
{
    struct {
        int64_t time_ns;
        double rate;
    } c = {(int64_t)pos(p, now), p->paused ? 0 : p->rate};
    if (ard_send_stamped(p->clock, &c, now, c.time_ns) < 0)
        return; /* the next tick tries again */
}

/* Wait until the packet recorded at `real` is due (`floor`: not before this monotonic time,
 * for stamps that go back), handling keys, the status line and the clock meanwhile. Returns
 * false when stopped. */
static bool wait_due(struct player *p, uint64_t real, int64_t floor)
{
    for (;;) {
        int64_t now = ard_now_ns();
        keys(p, now);
        if (ardt_stop)
            return false;
        if (p->step) {
            p->step = false;
            p->held = real; /* stepped to this packet */
            return true;
        }
        int64_t due = INT64_MAX;
        if (!p->paused) {
            double d = real > p->areal ? (double)(real - p->areal) / p->rate : 0;
            due = p->amono + (int64_t)d;
            if (due < floor)
                due = floor;
            if (now >= due)
                return true;
        }
        if (p->clock && now >= p->next_clock) {
            publish_clock(p, now);
            p->next_clock = now + 10000000;
        }
        if (p->tty && now >= p->next_status) {
            status(p, now);
            p->next_status = now + 100000000;
        }
        int64_t wake = due;
        if (p->clock && p->next_clock < wake)
            wake = p->next_clock;
        if ((p->tty || p->paused) && now + 50000000 < wake)
            wake = now + 50000000; /* keys, SIGUSR1 */
        if (p->tty && p->next_status < wake)
            wake = p->next_status;
        if (wake <= now)
            continue;
        if (p->tty) {
            struct pollfd pf = {.fd = STDIN_FILENO, .events = POLLIN};
            int ms = (int)((wake - now + 999999) / 1000000);
            if (poll(&pf, 1, ms) < 0 && errno != EINTR)
                return false;
        } else {
            struct timespec ts = {(time_t)(wake / 1000000000), (long)(wake % 1000000000)};
            clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL); /* EINTR: go round */
        }
    }
}

int cmd_play(int argc, char **argv)
{
    const char *path = NULL, *clock_conn = NULL;
    double rate = 1, start = -1, end = -1;
    bool loop = false, quiet = false, start_paused = false;
    char **remap = calloc((size_t)argc, sizeof *remap);
    char *only = NULL;
    int nremap = 0, rc = 0;
    if (!remap)
        return ardt_err(ARDT_SYS, "out of memory");
    struct ardt_optarg v;
    int id, ai = 0;
    while (rc == 0 && (id = ardt_opt_next(&ardt_play_spec, argc, argv, &ai, &v)) != ARDT_OPT_END) {
        switch (id) {
        case ARDT_OPT_BAD:
            rc = ARDT_USAGE;
            break;
        case O_RATE:
            rate = v.d;
            break;
        case O_START:
            start = v.d;
            break;
        case O_END:
            end = v.d;
            break;
        case O_REMAP: {
            remap[nremap] = v.s;
            const char *eq = strchr(remap[nremap], '=');
            if (!eq || eq == remap[nremap] || !eq[1])
                rc = ardt_err(ARDT_USAGE, "--remap '%s': expected OLD=NEW", remap[nremap]);
            for (int k = 0; k < nremap && rc == 0; k++) {
                size_t l = (size_t)(eq - remap[nremap]) + 1; /* OLD and its '=' */
                if (strncmp(remap[k], remap[nremap], l) == 0)
                    rc = ardt_err(ARDT_USAGE, "--remap '%s' and '%s': '%.*s' remapped twice",
                                  remap[k], remap[nremap], (int)l - 1, remap[nremap]);
            }
            nremap++;
            break;
        }
        case O_CONNECTIONS:
            only = v.s;
            break;
        case O_CLOCK:
            clock_conn = v.s;
            break;
        case O_START_PAUSED:
            start_paused = true;
            break;
        case O_LOOP:
            loop = true;
            break;
        case O_QUIET:
            quiet = true;
            break;
        default:
            if (path)
                rc = ardt_err(ARDT_USAGE, "one file at a time ('%s' and '%s')", path, v.s);
            else
                path = v.s;
        }
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
    struct player pl = {0};
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
    uint64_t from = s.start_ns, to = UINT64_MAX;
    if (start >= 0)
        from = start > 1e9 ? (uint64_t)(start * 1e9) : s.start_ns + (uint64_t)(start * 1e9);
    if (end >= 0)
        to = end > 1e9 ? (uint64_t)(end * 1e9) : s.start_ns + (uint64_t)(end * 1e9);
    if (rc == 0 && start >= 0 && end >= 0 && from > to)
        rc = ardt_err(ARDT_USAGE, "--start %g is after --end %g", start, end);
    if (rc == 0 && start >= 0 && (s.messages == 0 || from > s.end_ns))
        rc = ardt_err(ARDT_USAGE, "--start %g is beyond the end of '%s' (%s%.3f s long)", start,
                      path, start > 1e9 ? "it ends at Unix time " : "",
                      start > 1e9 ? (double)s.end_ns / 1e9 : (double)(s.end_ns - s.start_ns) / 1e9);
    if (rc == 0 && end >= 0 && s.messages && to < s.start_ns)
        rc = ardt_err(ARDT_USAGE, "--end %g is before the start of '%s'", end, path);
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
    pl.rate = rate;
    pl.start_real = from;
    pl.end_real = s.end_ns;
    if (rc == 0 && clock_conn) {
        pl.clock = ard_create_on("clock", clock_conn, ARD_OUT, 16, "time_ns:i64 rate:f64");
        if (!pl.clock)
            rc = ardt_liberr(ard_lasterror());
    }
    if (rc)
        goto done;
    ardt_signals();
    struct sigaction sa = {.sa_handler = on_usr1};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    pl.tty = tty_init();
    do {
        if ((rc = ard_logr_seek(r, from)) < 0)
            break;
        struct ard_log_msg m;
        int k = 0;
        int64_t last_due = 0;
        bool first = true;
        while (!ardt_stop && (k = ard_logr_next(r, &m)) == 1) {
            if (m.log_ns > to)
                break;
            if (!want[m.conn] || !ports[m.conn])
                continue;
            if (first) { /* each pass starts at its first packet */
                pl.areal = pl.held = m.real_ns;
                pl.amono = ard_now_ns();
                pl.start_real = m.real_ns;
                pl.paused = start_paused && pl.total == 0;
                first = false;
            }
            /* Timing by the writers' stamps; a stamp that goes back never waits. */
            if (!wait_due(&pl, m.real_ns, last_due))
                break;
            last_due = ard_now_ns();
            int e = ard_send_stamped(ports[m.conn], m.packet, ard_now_ns(), m.real_ns);
            if (e < 0) {
                rc = ardt_liberr(e);
                break;
            }
            sent[m.conn]++;
            pl.total++;
        }
        if (rc == 0 && k < 0 && !ardt_stop)
            rc = ardt_liberr(k);
    } while (loop && !ardt_stop && rc == 0);
    if (pl.tty) {
        status(&pl, ard_now_ns());
        fputc('\n', stderr);
        tty_restore();
    }
    if (!quiet)
        for (size_t i = 0; i < nc; i++)
            if (ports[i])
                fprintf(stderr, "%-24s played %llu -> %s\n", ard_logr_conn(r, i)->name,
                        (unsigned long long)sent[i], ard_port_connection(ports[i]));
done:
    ard_close(pl.clock);
    for (size_t i = 0; ports && i < nc; i++)
        ard_close(ports[i]);
    free(ports);
    free(sent);
    free(want);
    free(remap);
    ard_logr_close(r);
    return rc;
}
