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

/* The options of `ard play`. */
struct play_opts {
    const char *path, *clock_conn;
    double rate, start, end;
    bool loop, quiet, start_paused;
    char **remap; /* OLD=NEW (room for argc) */
    int nremap;
    const char *only; /* --connections */
};

static int set_path(void *dest, char *word)
{
    struct play_opts *o = dest;
    if (o->path)
        return ardi_fail(ARD_EOPTION, "one file at a time ('%s' and '%s')", o->path, word);
    o->path = word;
    return 0;
}

/* --remap OLD=NEW: each OLD once. */
static int add_remap(void *dest, const struct ardc_opt *opt, const char *arg)
{
    (void)opt;
    struct play_opts *o = dest;
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg || !eq[1])
        return ardi_fail(ARD_EOPTION, "--remap '%s': expected OLD=NEW", arg);
    size_t l = (size_t)(eq - arg) + 1; /* OLD and its '=' */
    for (int k = 0; k < o->nremap; k++)
        if (strncmp(o->remap[k], arg, l) == 0)
            return ardi_fail(ARD_EOPTION, "--remap '%s' and '%s': '%.*s' remapped twice",
                             o->remap[k], arg, (int)l - 1, arg);
    o->remap[o->nremap++] = (char *)arg; /* a word of argv */
    return 0;
}

static const struct ardc_opt opts[] = {
    {"rate", 0, "X", "X times the recorded speed (0.5 slower, 2 faster)", .kind = ARDC_REAL,
     ARDC_DEST(struct play_opts, rate), .min = 1e-6, .max = 1e6},
    {"loop", 0, NULL, "start again at the end, until interrupted", .kind = ARDC_FLAG,
     ARDC_DEST(struct play_opts, loop)},
    {"start", 0, "S",
     "from/to S seconds after the first message; values above 1e9\n"
     "are absolute Unix times",
     .kind = ARDC_REAL, ARDC_DEST(struct play_opts, start), .min = 0, .max = 1e13},
    {"end", 0, "S", NULL, .kind = ARDC_REAL, ARDC_DEST(struct play_opts, end), .min = 0,
     .max = 1e13},
    {"remap", 0, "OLD=NEW", "publish connection OLD as NEW (repeatable)", .kind = ARDC_CALL,
     .call = add_remap},
    {"connections", 0, "LIST", "only these connections (comma-separated)", .kind = ARDC_TEXT,
     ARDC_DEST(struct play_opts, only)},
    {"start-paused", 0, NULL, "start paused (a terminal's space, or SIGUSR1, resumes)",
     .kind = ARDC_FLAG, ARDC_DEST(struct play_opts, start_paused)},
    {"clock", 0, "CONN",
     "publish the playback time on CONN (time_ns:i64 rate:f64; rate 0\n"
     "while paused) every 10 ms, stamped with it",
     .kind = ARDC_TEXT, ARDC_DEST(struct play_opts, clock_conn)},
    {"quiet", 'q', NULL, "no summary at the end", .kind = ARDC_FLAG,
     ARDC_DEST(struct play_opts, quiet)},
    {0},
};
const struct ardc_optset ardt_play_spec = {
    .see = "ard help play",
    .head =
        "usage: ard play FILE [--rate X] [--loop] [--start S] [--end S] [--remap OLD=NEW...]\n"
        "                [--connections C,...] [--start-paused] [--clock CONN]\n"
        "  Republish every packet of a recording at its recorded timing (the writers' realtime\n"
        "  stamps) into the domain (--domain): each connection is created with its recorded size\n"
        "  and descriptor, and its packets keep their recorded realtime stamps (the monotonic\n"
        "  stamp is this host's, the sequence numbers the connection's own), so a block cannot\n"
        "  tell replay from live. A connection with a live writer is refused (exit 2).\n",
    .opts = opts,
    .col = 23,
    .tail = "  In a terminal: space pauses and resumes, s steps one packet (and pauses), + and -\n"
            "  change the rate by 10%, with a one-line status (time, rate, packets) on stderr.\n"
            "  SIGUSR1 pauses and resumes too.\n"
            "exit codes: 0 ok, 1 no such file or connection, 2 live writer, 3 damaged file,\n"
            "            100 usage, 111 system error\n",
    .arg = set_path};

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

/* ---- the command ----------------------------------------------------------------------------- */

/* A playback: the file, its ports and what was sent on each. */
struct play {
    ard_logr *r;
    struct ard_log_summary s;
    size_t nc;
    ard_port **ports;
    uint64_t *sent;
    bool *want;
    uint64_t from, to; /* the recorded log times played */
    struct player pl;
};

/* The connections to play (--connections) and the check that each --remap OLD is in the
 * file; 0 or an ARD_E* code (detail set). */
static int choose_conns(struct play *p, const struct play_opts *o)
{
    int rc = 0;
    for (size_t i = 0; i < p->nc; i++)
        p->want[i] = o->only == NULL;
    if (o->only) {
        char *list = strdup(o->only);
        for (char *sv = NULL, *t = list ? strtok_r(list, ",", &sv) : NULL; t && rc == 0;
             t = strtok_r(NULL, ",", &sv)) {
            int ci = ard_logr_find(p->r, t);
            if (ci < 0)
                rc = ardi_fail(ARD_ENOENT, "'%s' has no connection '%s'", o->path, t);
            else
                p->want[ci] = true;
        }
        free(list);
    }
    for (int k = 0; k < o->nremap && rc == 0; k++) {
        char *eq = strchr(o->remap[k], '=');
        *eq = '\0';
        if (ard_logr_find(p->r, o->remap[k]) < 0)
            rc =
                ardi_fail(ARD_ENOENT, "--remap: '%s' has no connection '%s'", o->path, o->remap[k]);
        *eq = '=';
    }
    return rc;
}

/* --start and --end into the log times from and to, checked against the file; 0 or
 * ARD_EOPTION (detail set). */
static int play_range(struct play *p, const struct play_opts *o)
{
    const struct ard_log_summary *s = &p->s;
    double start = o->start, end = o->end;
    int rc = 0;
    p->from = s->start_ns;
    p->to = UINT64_MAX;
    if (start >= 0)
        p->from = start > 1e9 ? (uint64_t)(start * 1e9) : s->start_ns + (uint64_t)(start * 1e9);
    if (end >= 0)
        p->to = end > 1e9 ? (uint64_t)(end * 1e9) : s->start_ns + (uint64_t)(end * 1e9);
    if (start >= 0 && end >= 0 && p->from > p->to)
        rc = ardi_fail(ARD_EOPTION, "--start %g is after --end %g", start, end);
    if (rc == 0 && start >= 0 && (s->messages == 0 || p->from > s->end_ns))
        rc = ardi_fail(ARD_EOPTION, "--start %g is beyond the end of '%s' (%s%.3f s long)", start,
                       o->path, start > 1e9 ? "it ends at Unix time " : "",
                       start > 1e9 ? (double)s->end_ns / 1e9
                                   : (double)(s->end_ns - s->start_ns) / 1e9);
    if (rc == 0 && end >= 0 && s->messages && p->to < s->start_ns)
        rc = ardi_fail(ARD_EOPTION, "--end %g is before the start of '%s'", end, o->path);
    return rc;
}

/* Creates a port for each connection played (under its --remap name) and the --clock one;
 * 0 or an ARD_E* code (detail set). */
static int open_ports(struct play *p, const struct play_opts *o)
{
    int rc = 0;
    for (size_t i = 0; i < p->nc && rc == 0; i++) {
        const struct ard_log_conn *c = ard_logr_conn(p->r, i);
        if (!p->want[i])
            continue;
        if (!c->ardnet) {
            ardt_err(0, "connection '%s' is not an ardnet one: not played", c->name);
            p->want[i] = false;
            continue;
        }
        const char *name = c->name;
        for (int k = 0; k < o->nremap; k++) {
            size_t l = strlen(c->name);
            if (strncmp(o->remap[k], c->name, l) == 0 && o->remap[k][l] == '=')
                name = o->remap[k] + l + 1;
        }
        char port[32];
        snprintf(port, sizeof port, "play%zu", i);
        p->ports[i] = ard_create_on(port, name, ARD_OUT, c->size, c->type[0] ? c->type : NULL);
        if (!p->ports[i])
            rc = ard_lasterror();
    }
    p->pl.rate = o->rate;
    p->pl.start_real = p->from;
    p->pl.end_real = p->s.end_ns;
    if (rc == 0 && o->clock_conn) {
        p->pl.clock = ard_create_on("clock", o->clock_conn, ARD_OUT, 16, "time_ns:i64 rate:f64");
        if (!p->pl.clock)
            rc = ard_lasterror();
    }
    return rc;
}

/* Everything before the first packet: the file's summary, the connections, the range and
 * the ports; 0 or an ARD_E* code (detail set). */
static int setup_play(struct play *p, const struct play_opts *o)
{
    ard_logr_summary(p->r, &p->s);
    if (p->s.cut[0])
        ardt_err(0, "warning: %s", p->s.cut);
    p->nc = ard_logr_nconns(p->r);
    size_t n = p->nc ? p->nc : 1;
    p->ports = calloc(n, sizeof *p->ports);
    p->sent = calloc(n, sizeof *p->sent);
    p->want = calloc(n, sizeof *p->want);
    if (!p->ports || !p->sent || !p->want)
        return ardi_fail(ARD_ENOMEM, "out of memory");
    int rc = choose_conns(p, o);
    if (rc == 0)
        rc = play_range(p, o);
    if (rc == 0)
        rc = ardt_lib_init();
    if (rc == 0)
        rc = open_ports(p, o);
    return rc;
}

/* One pass over the range of the file at its recorded timing; 0 or an ARD_E* code (detail set). */
static int play_pass(struct play *p, const struct play_opts *o)
{
    struct player *pl = &p->pl;
    int rc = ard_logr_seek(p->r, p->from);
    if (rc < 0)
        return rc;
    struct ard_log_msg m;
    int k = 0;
    int64_t last_due = 0;
    bool first = true;
    while (!ardt_stop && (k = ard_logr_next(p->r, &m)) == 1) {
        if (m.log_ns > p->to)
            break;
        if (!p->want[m.conn] || !p->ports[m.conn])
            continue;
        if (first) { /* each pass starts at its first packet */
            pl->areal = pl->held = m.real_ns;
            pl->amono = ard_now_ns();
            pl->start_real = m.real_ns;
            pl->paused = o->start_paused && pl->total == 0;
            first = false;
        }
        /* Timing by the writers' stamps; a stamp that goes back never waits. */
        if (!wait_due(pl, m.real_ns, last_due))
            break;
        last_due = ard_now_ns();
        int e = ard_send_stamped(p->ports[m.conn], m.packet, ard_now_ns(), m.real_ns);
        if (e < 0) {
            rc = e;
            break;
        }
        p->sent[m.conn]++;
        pl->total++;
    }
    if (rc == 0 && k < 0 && !ardt_stop)
        rc = k;
    return rc;
}

/* The last status line in a terminal, and the packets played per connection (unless -q). */
static void play_summary(const struct play *p, const struct play_opts *o)
{
    if (p->pl.tty) {
        status(&p->pl, ard_now_ns());
        fputc('\n', stderr);
        tty_restore();
    }
    if (!o->quiet)
        for (size_t i = 0; i < p->nc; i++)
            if (p->ports[i])
                fprintf(stderr, "%-24s played %llu -> %s\n", ard_logr_conn(p->r, i)->name,
                        (unsigned long long)p->sent[i], ard_port_connection(p->ports[i]));
}

/* Closes the ports and the file and frees p. */
static void close_play(struct play *p)
{
    ard_close(p->pl.clock);
    for (size_t i = 0; p->ports && i < p->nc; i++)
        ard_close(p->ports[i]);
    free(p->ports);
    free(p->sent);
    free(p->want);
    ard_logr_close(p->r);
}

int cmd_play(int argc, char **argv)
{
    struct play_opts o = {.rate = 1, .start = -1, .end = -1};
    o.remap = calloc((size_t)argc, sizeof *o.remap);
    if (!o.remap)
        return ardt_err(ARDT_SYS, "out of memory");
    int rc = ardt_opts(&ardt_play_spec, argc, argv, &o);
    if (rc == 0 && !o.path)
        rc = ardi_fail(ARD_EOPTION, "no file given (see 'ard help play')");
    if (rc) {
        free(o.remap);
        return ardt_liberr(rc);
    }
    struct play p = {0};
    p.r = ard_logr_open(o.path);
    if (!p.r) {
        free(o.remap);
        return ardt_liberr(ard_lasterror());
    }
    rc = setup_play(&p, &o);
    if (rc == 0) {
        ardt_signals();
        struct sigaction sa = {.sa_handler = on_usr1};
        sigemptyset(&sa.sa_mask);
        sigaction(SIGUSR1, &sa, NULL);
        p.pl.tty = tty_init();
        do {
            rc = play_pass(&p, &o);
        } while (o.loop && !ardt_stop && rc == 0);
        if (rc < 0)
            rc = ardt_liberr(rc); /* said before the summary, as it happened */
        play_summary(&p, &o);
    }
    close_play(&p);
    free(o.remap);
    return rc;
}
