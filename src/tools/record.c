/* record.c - `ard record`: every packet of the chosen connections into an MCAP file.
 *
 * One capture thread polls each connection's ring of slots (read-only, like `ard list`: the
 * writer never waits for it) and takes every complete slot newer than the last one it took;
 * a packet overwritten before it was read is a sequence gap, counted as missed. The receive
 * (log) time of each packet is read once its slot is seen complete, so it is never earlier
 * than the writer's send stamp. A connection created while recording is noticed at once
 * (inotify on the shared-memory directory) and taken from its first packet. Packets are
 * encoded into the open chunk; a low-priority thread of the log writer compresses and writes
 * closed chunks. */
#include "ard.h"
#include "ardnet_log.h"
#include "ardros2.h"

#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The options of a recording (the patterns, --every and --max-rate go on into struct rec). */
struct rec_opts {
    const char *out, *comp;
    int compress; /* --compress: the index of its word */
    bool stats, no_crc, overwrite;
    uint64_t prio, poll_us, chunk_kb, buffer_mb, count, split_mb, every;
    double split_s, duration, max_rate;
    char **pats, **excl; /* the patterns and --exclude (room for argc each) */
    int npats, nexcl;
    char defname[64]; /* the default file name, when no -o */
};

static int add_pattern(void *dest, char *word)
{
    struct rec_opts *o = dest;
    o->pats[o->npats++] = word;
    return 0;
}

static const struct ardc_opt opts[] = {
    {"output", 'o', "FILE",
     "file to write (default ard_YYYY-MM-DD-HH-MM-SS.mcap, local\n"
     "time, in the current directory); later files FILE_1.mcap, ...;\n"
     "an existing FILE is refused (exit 100), a later file's name\n"
     "that exists is passed over",
     .kind = ARDC_TEXT, ARDC_DEST(struct rec_opts, out), .complete = "@file"},
    {"overwrite", 0, NULL, "replace FILE and later files of the same names when they exist",
     .kind = ARDC_FLAG, ARDC_DEST(struct rec_opts, overwrite)},
    {"exclude", 0, "GLOB", "do not record the connections matching GLOB (repeatable)",
     ARDT_PUSH(struct rec_opts, excl, nexcl)},
    {"compress", 0, "zstd|none", "compress chunks (default none)", .kind = ARDC_CHOICE,
     ARDC_DEST(struct rec_opts, compress), .complete = "zstd none"},
    {"every", 0, "N", "record the packets whose sequence number N divides", .kind = ARDC_UINT,
     ARDC_DEST(struct rec_opts, every), .umax = UINT32_MAX},
    {"max-rate", 0, "HZ", "at most HZ packets per second of each connection", .kind = ARDC_REAL,
     ARDC_DEST(struct rec_opts, max_rate), .min = 1e-6, .max = 1e9},
    {"split-size", 0, "MB",
     "start the next file after MB megabytes of messages (before\n"
     "compression)",
     .kind = ARDC_UINT, ARDC_DEST(struct rec_opts, split_mb), .umax = 1u << 30},
    {"split-duration", 0, "S", "start the next file after S seconds", .kind = ARDC_REAL,
     ARDC_DEST(struct rec_opts, split_s), .min = 0.001, .max = 1e9},
    {"stats", 0, NULL, "print recorded and missed packets every second (stderr)", .kind = ARDC_FLAG,
     ARDC_DEST(struct rec_opts, stats)},
    {"poll-us", 0, "US",
     "how often the rings are polled (default 500; a writer faster\n"
     "than slots/poll, e.g. 16 kHz for <= 64 KiB packets, can lose\n"
     "packets, counted as missed)",
     .kind = ARDC_UINT, ARDC_DEST(struct rec_opts, poll_us), .umax = 1000000},
    {"chunk-size", 0, "KB", "uncompressed chunk size (default 1024)", .kind = ARDC_UINT,
     ARDC_DEST(struct rec_opts, chunk_kb), .umax = 1u << 20},
    {"no-crc", 0, NULL,
     "no CRC32 of the chunks (saves CPU; damage inside a packet\n"
     "then goes unnoticed by readers)",
     .kind = ARDC_FLAG, ARDC_DEST(struct rec_opts, no_crc)},
    {"buffer", 0, "MB", "closed chunks waiting for the disk at most (default 256)",
     .kind = ARDC_UINT, ARDC_DEST(struct rec_opts, buffer_mb), .umax = 1u << 16},
    {"prio", 0, "N",
     "poll with SCHED_FIFO priority N (the disk writer stays at\n"
     "normal priority, nice 10): fewer missed packets on a busy host",
     .kind = ARDC_UINT, ARDC_DEST(struct rec_opts, prio), .umax = 99},
    {"count", 'n', "N", "stop after N packets in total", .kind = ARDC_UINT,
     ARDC_DEST(struct rec_opts, count)},
    {"duration", 0, "S", "stop after S seconds", .kind = ARDC_REAL,
     ARDC_DEST(struct rec_opts, duration), .min = 0.001, .max = 1e9},
    {0},
};
const struct ardc_optset ardt_record_spec = {
    .see = "ard help record",
    .head =
        "usage: ard record [CONNECTION|GLOB...] [-o FILE] [--exclude GLOB...] [options]\n"
        "  Record every packet of the matching connections (all of the domain by default) into\n"
        "  an MCAP file (docs/recording.md). Connections that appear later are picked up when\n"
        "  they match. The recorder only reads: a writer is never slowed. SIGINT/SIGTERM finish\n"
        "  the file, after one last read of every connection (what was sent before the signal\n"
        "  and is still in the ring is in the file); SIGHUP starts the next file. The service\n"
        "  connections of ardrun groups (G.ctl, G.ctl-reply, G.names of a group G that has both\n"
        "  G.ctl and G.ctl-reply) are recorded only when named exactly.\n",
    .opts = opts,
    .col = 25,
    .tail =
        "  A CONNECTION, GLOB or --exclude GLOB that matches nothing is warned about at start\n"
        "  and at the end.\n"
        "  The final summary (stderr) gives per connection the messages in the file(s), the\n"
        "  packets missed (sequence gaps, also before the first one taken) and those lost after\n"
        "  a write error.\n"
        "exit codes: 0 ok, 4 the file holds no message at all, 100 usage, 111 system error\n"
        "            (e.g. disk full: the file stays readable up to its last complete chunk)\n",
    .arg = add_pattern};

static volatile sig_atomic_t hup;

static void on_hup(int sig)
{
    (void)sig;
    hup = 1;
}

struct rconn {
    char name[ARD_MAX_NAME + 1];
    ard_view *v;
    struct ard_conn_stat st; /* name, size and type as opened */
    int ch;
    uint64_t last;                            /* last seq taken (or skipped on purpose) */
    uint64_t seen, recorded, missed, dropped; /* recorded: taken into the file's chunks */
    int64_t last_rec_ns;                      /* for --max-rate */
};

/* Every view keeps a descriptor; these stay free for scans, split files and the writer. */
#define REC_FD_KEEP 32

struct rec {
    char **pats;
    int npats;
    struct rconn *c;
    size_t nc;
    ard_logw *w;
    uint64_t every;
    double max_rate;
    bool *matched; /* per pattern: some connection matched it */
    char **excl;   /* --exclude patterns */
    int nexcl;
    bool *excl_matched;
    char **noted; /* groups whose service connections were said to be left out */
    size_t nnoted;
    bool started;           /* the first scan is done: connections found later start at seq 1 */
    bool quiet;             /* a scan on an inotify event: an object being created is retried */
    bool retry;             /* that scan could not open a connection yet */
    size_t fd_room;         /* views that may be open, keeping REC_FD_KEEP descriptors free */
    unsigned long fd_short; /* connections of this scan skipped for want of a descriptor */
    bool fd_said;           /* the descriptor limit was named (once per recording) */
    size_t *owner;          /* per channel of the file: the index in c of its connection */
    size_t nowner;
    struct ardr2_names names; /* the recorder's naming, repeated to report clashes */
};

/* The file names each channel as src/ros2 says (docs/ros2.md#names); the same rule, met in the
 * same order, tells which connection got a suffixed type because another has its name. */
static void note_name(struct rec *r, const char *conn, const char *type, size_t size)
{
    struct ardc_buf def = {0};
    char msg[ARDR2_MSG_MAX];
    const char *other = NULL;
    if (ardr2_msgdef(type, size, &def) == 0 && !def.oom &&
        ardr2_names_add(&r->names, conn, ardr2_fnv1a(def.p, def.len), msg, sizeof msg, &other) ==
            1) {
        char why[3 * ARD_MAX_NAME + 200];
        ardr2_clash_text(why, sizeof why, other, conn, msg);
        ardt_err(0, "%s", why);
    }
    ardc_free(&def);
}

/* Channel ch belongs to connection index i (for the final counts). */
static bool own_channel(struct rec *r, int ch, size_t i)
{
    if ((size_t)ch >= r->nowner) {
        size_t n = (size_t)ch + 16;
        size_t *o = realloc(r->owner, n * sizeof *o);
        if (!o)
            return false;
        for (size_t k = r->nowner; k < n; k++)
            o[k] = SIZE_MAX;
        r->owner = o;
        r->nowner = n;
    }
    r->owner[ch] = i;
    return true;
}

static bool conn_exists(const char *conn)
{
    char shm[ARDI_SHM_NAME_MAX], path[ARDI_SHM_NAME_MAX + 16];
    ardi_shm_name(shm, ardt_g.domain, conn);
    snprintf(path, sizeof path, ARDI_SHM_DIR "%s", shm);
    return access(path, F_OK) == 0;
}

/* An ardrun group's service connection: G.ctl, G.ctl-reply or G.names where both G.ctl and
 * G.ctl-reply exist (ardrun creates the two together; a user's own "x.ctl" alone is data).
 * Writes the group's name into group. */
static bool is_service(const char *name, char *group, size_t len)
{
    static const char *const sfx[] = {".ctl", ".ctl-reply", ".names"};
    size_t l = strlen(name);
    for (size_t k = 0; k < sizeof sfx / sizeof sfx[0]; k++) {
        size_t sl = strlen(sfx[k]);
        if (l <= sl || l - sl >= len || strcmp(name + l - sl, sfx[k]) != 0)
            continue;
        char c[ARD_MAX_NAME + 16];
        snprintf(group, len, "%.*s", (int)(l - sl), name);
        snprintf(c, sizeof c, "%s.ctl", group);
        if (!conn_exists(c))
            return false;
        snprintf(c, sizeof c, "%s.ctl-reply", group);
        return conn_exists(c);
    }
    return false;
}

/* Said once per group: its service connections are left out. */
static void note_service(struct rec *r, const char *group)
{
    for (size_t i = 0; i < r->nnoted; i++)
        if (strcmp(r->noted[i], group) == 0)
            return;
    char **nv = realloc(r->noted, (r->nnoted + 1) * sizeof *nv);
    if (!nv || !(nv[r->nnoted] = strdup(group))) {
        if (nv)
            r->noted = nv;
        return;
    }
    r->noted = nv;
    r->nnoted++;
    ardt_err(0,
             "not recording the service connections of ardrun group '%s' (%s.ctl %s.ctl-reply "
             "%s.names): name them to record them",
             group, group, group, group);
}

static bool has_glob(const char *p)
{
    return strpbrk(p, "*?[") != NULL;
}

static bool wanted(struct rec *r, const char *name)
{
    char group[ARD_MAX_NAME + 1];
    bool service = is_service(name, group, sizeof group);
    bool any = r->npats == 0 && !service, glob_only = r->npats == 0 && service;
    for (int i = 0; i < r->npats; i++) {
        if (fnmatch(r->pats[i], name, 0) != 0)
            continue;
        if (service && has_glob(r->pats[i])) {
            glob_only = true; /* a glob does not take a service connection */
            continue;
        }
        any = r->matched[i] = true;
    }
    bool excluded = false;
    for (int i = 0; i < r->nexcl; i++)
        if (fnmatch(r->excl[i], name, 0) == 0)
            excluded = r->excl_matched[i] = true;
    if (glob_only && !any && !excluded)
        note_service(r, group);
    return any && !excluded;
}

static int poll_conn(struct rec *r, struct rconn *c);

/* A writer restarted on a re-created object (new inode): follow the new one. Same layout:
 * the same channel, its sequence starting again; another layout: a new channel of the same
 * name (MCAP allows several per topic). What the old object still holds and was not taken
 * yet is taken first (or counted missed). Returns 0 or an ARD_E* code (detail set). */
static int follow_replaced(struct rec *r, struct rconn *c)
{
    if (!ard_view_recreated(c->v))
        return 0;
    ard_view *v;
    if (ardt_view_open(c->name, &v) < 0) {
        r->retry = true; /* being created: the next rounds try again */
        return 0;
    }
    int rc = poll_conn(r, c);
    if (rc != 0) {
        ard_view_close(v);
        return rc;
    }
    struct ard_conn_stat st;
    ard_view_stat(v, &st);
    bool same = st.size == c->st.size && strcmp(st.type, c->st.type) == 0;
    if (!same) {
        int ch = ard_logw_add(r->w, c->name, st.type, st.size);
        if (ch < 0) {
            ardt_err(0, "connection '%s' re-created, not followed: %s", c->name, ard_errdetail());
            ard_view_close(v);
            return 0;
        }
        c->ch = ch;
        own_channel(r, ch, (size_t)(c - r->c));
        note_name(r, c->name, st.type, st.size);
    }
    ard_view_close(c->v);
    c->v = v;
    c->st = st;
    c->last = 0;
    return 0;
}

static int add_one(const char *name, void *arg)
{
    struct rec *r = arg;
    if (!wanted(r, name))
        return 0;
    for (size_t i = 0; i < r->nc; i++)
        if (strcmp(r->c[i].name, name) == 0)
            return 0;
    ard_view *v;
    if (r->nc >= r->fd_room) {
        r->fd_short++; /* each view keeps a descriptor: named once, with the limit */
        return 0;
    }
    if (ardt_view_open(name, &v) < 0) {
        if (ardc_nofile_exhausted())
            r->fd_short++; /* named once, with the limit, after the scan */
        else if (r->quiet)
            r->retry = true; /* just created: the next rounds try again */
        else
            ardt_err(0, "connection '%s' skipped: %s", name, ard_errdetail());
        return 0;
    }
    struct rconn *nc = realloc(r->c, (r->nc + 1) * sizeof *nc);
    if (!nc) {
        ard_view_close(v);
        return ARD_ENOMEM;
    }
    r->c = nc;
    struct rconn *c = &r->c[r->nc];
    memset(c, 0, sizeof *c);
    snprintf(c->name, sizeof c->name, "%s", name);
    c->v = v;
    ard_view_stat(v, &c->st);
    c->ch = ard_logw_add(r->w, name, c->st.type, c->st.size);
    if (c->ch < 0) {
        ardt_err(0, "connection '%s' skipped: %s", name, ard_errdetail());
        ard_view_close(v);
        return 0;
    }
    if (!own_channel(r, c->ch, r->nc)) {
        ard_view_close(v);
        return ARD_ENOMEM;
    }
    note_name(r, name, c->st.type, c->st.size);
    /* Found at start: the newest packet already there is recorded too (the older ones were
     * sent before the recording). Found later: from its first packet on, and the packets
     * already overwritten in its ring count as missed. */
    uint64_t h = ard_view_head(v);
    c->last = r->started && h ? 0 : h ? h - 1 : 0;
    r->nc++;
    return 0;
}

struct take {
    ard_view *v;
    uint64_t seq;
    const void *pkt; /* ard_view_take's slot */
    size_t size;
};

/* Copy the taken slot straight into the file's chunk; false if the writer reused the slot
 * meanwhile (ard_view_done). */
static bool take_copy(void *dst, void *arg)
{
    struct take *t = arg;
    memcpy(dst, t->pkt, t->size);
    return ard_view_done(t->v, t->seq) == 0;
}

/* Take every new packet of c; returns 0 or an ARD_E* code (detail set). */
static int poll_conn(struct rec *r, struct rconn *c)
{
    uint64_t h = ard_view_head(c->v);
    if (h < c->last) /* the writer's object was reset: its sequence restarted */
        c->last = 0;
    if (h == c->last)
        return 0;
    uint64_t first = c->last + 1;
    uint64_t n = ard_view_slots(c->v);
    uint64_t oldest = h > n - 1 ? h - (n - 1) : 1;
    if (first < oldest) {
        c->missed += oldest - first;
        ard_logw_missed(r->w, c->ch, oldest - first);
        first = oldest;
    }
    for (uint64_t s = first; s <= h; s++) {
        c->last = s;
        c->seen++;
        if (r->every > 1 && s % r->every != 0)
            continue; /* by sequence number: the choice survives a missed packet */
        if (r->max_rate > 0 && c->recorded &&
            (double)(ard_realtime_ns() - c->last_rec_ns) < 1e9 / r->max_rate)
            continue;
        struct ard_info inf;
        int code;
        struct take t = {c->v, s, ard_view_take(c->v, s, &inf, &code), c->st.size};
        if (t.pkt == NULL) {
            c->missed++; /* overwritten (or being overwritten) before we came */
            ard_logw_missed(r->w, c->ch, 1);
            continue;
        }
        /* The receive time: read now that the packet is there, never before its send stamp. */
        int64_t now_real = ard_realtime_ns();
        int rc = ard_logw_write_with(r->w, c->ch, s, now_real, inf.real_ns, take_copy, &t);
        if (rc == 0) {
            c->missed++;
            ard_logw_missed(r->w, c->ch, 1);
            continue;
        }
        if (rc == ARD_EBUSY) {
            c->missed++; /* counted by the log writer too */
            c->dropped++;
            continue;
        }
        if (rc < 0)
            return ardt_fail(ARD_ESYS, "%s", ard_errdetail());
        c->recorded++;
        c->last_rec_ns = now_real;
    }
    return 0;
}

/* While recording: packets taken so far (some may still wait for the disk). */
static void print_stats(const struct rec *r, FILE *o)
{
    for (size_t i = 0; i < r->nc; i++)
        fprintf(o, "%-24s recorded %" PRIu64 " missed %" PRIu64 "\n", r->c[i].name,
                r->c[i].recorded, r->c[i].missed);
}

/* At the end (the writer finished): what the file(s) hold per connection, the packets missed,
 * and those taken but lost because writing failed. Returns the messages in the file(s). */
static uint64_t print_final(const struct rec *r, FILE *o)
{
    uint64_t total = 0;
    for (size_t i = 0; i < r->nc; i++) {
        uint64_t in_file = 0;
        for (size_t ch = 0; ch < r->nowner; ch++)
            if (r->owner[ch] == i)
                in_file += ard_logw_written(r->w, (int)ch);
        total += in_file;
        fprintf(o, "%-24s recorded %" PRIu64 " missed %" PRIu64, r->c[i].name, in_file,
                r->c[i].missed);
        if (r->c[i].recorded > in_file)
            fprintf(o, " lost %" PRIu64 " (taken, not written: see the error above)",
                    r->c[i].recorded - in_file);
        fputc('\n', o);
    }
    return total;
}

/* Patterns that matched no connection: a warning naming them (`when`: "yet" or at the end). */
static void warn_unmatched(const struct rec *r, const char *when)
{
    for (int i = 0; i < r->npats; i++)
        if (!r->matched[i])
            ardt_err(0, "warning: no connection of domain '%s' matches '%s'%s", ardt_g.domain,
                     r->pats[i], when);
    for (int i = 0; i < r->nexcl; i++)
        if (!r->excl_matched[i])
            ardt_err(0, "warning: --exclude '%s' matches no connection of domain '%s'%s",
                     r->excl[i], ardt_g.domain, *when ? " (yet)" : "");
}

static void free_rec(struct rec *r)
{
    free(r->pats);
    free(r->matched);
    free(r->excl);
    free(r->excl_matched);
    for (size_t i = 0; i < r->nnoted; i++)
        free(r->noted[i]);
    free(r->noted);
}

static char *split_name(const char *out, unsigned n)
{
    size_t l = strlen(out);
    const char *dot = strrchr(out, '.');
    const char *slash = strrchr(out, '/');
    if (!dot || (slash && dot < slash))
        dot = out + l;
    char *s = malloc(l + 24);
    if (s)
        sprintf(s, "%.*s_%u%s", (int)(dot - out), out, n, dot);
    return s;
}

/* The schedule of the recording loop and its inotify descriptor. */
struct rec_clock {
    int64_t t0, next_scan, next_stats, next_flush, file_t0, retry_until;
    unsigned nfile;
    int ino;
    struct timespec ts;
};

/* The command line into o, and what struct rec keeps of it into r; 0 or an ARD_E* code (detail
 * set). */
static int parse_record_args(int argc, char **argv, struct rec *r, struct rec_opts *o)
{
    o->pats = r->pats;
    o->excl = r->excl;
    o->every = 1;
    o->compress = 1; /* none */
    int rc = ardt_opts(&ardt_record_spec, argc, argv, o);
    if (rc)
        return rc;
    r->npats = o->npats;
    r->nexcl = o->nexcl;
    r->every = o->every;
    r->max_rate = o->max_rate;
    o->comp = o->compress == 0 ? "zstd" : NULL;
    return 0;
}

/* The file to write (the default name by the local time) and the limits; 0 or an ARD_E* code
 * (detail set). */
static int check_record_opts(const struct rec *r, struct rec_opts *o)
{
    int rc = 0;
    if (!o->out) { /* as lcm-logger and rosbag2 name theirs: by the local time */
        time_t now = time(NULL);
        struct tm tm;
        if (localtime_r(&now, &tm) == NULL ||
            strftime(o->defname, sizeof o->defname, "ard_%Y-%m-%d-%H-%M-%S.mcap", &tm) == 0)
            rc = ardi_fail(ARD_ESYS, "no local time for the file name: give -o FILE");
        else if (access(o->defname, F_OK) == 0)
            rc = ardi_fail(ARD_EOPTION, "'%s' exists: give -o FILE", o->defname);
        else {
            o->out = o->defname;
            ardt_err(0, "recording into %s", o->out);
        }
    } else if (!o->overwrite && access(o->out, F_OK) == 0) {
        /* A recorder restarted with the same -o must not take the last run's recording. */
        rc = ardi_fail(ARD_EOPTION,
                       "'%s' exists: not replaced (give another -o FILE, or --overwrite)", o->out);
    }
    if (rc == 0 && (r->every == 0 || o->chunk_kb == 0 || o->buffer_mb == 0 || o->poll_us == 0))
        rc = ardi_fail(ARD_EOPTION, "--every, --chunk-size, --buffer, --poll-us must be >= 1");
    return rc;
}

/* Opens the log writer, then takes the priority and the signals; 0 or an ARD_E* code (the
 * writer closed again on failure). */
static int open_recording(struct rec *r, const struct rec_opts *o)
{
    struct ard_logw_opts lo = {.compression = o->comp,
                               .chunk_size = (size_t)o->chunk_kb << 10,
                               .queue_bytes = (size_t)o->buffer_mb << 20,
                               .background_nice = 10,
                               .domain = ardt_g.domain,
                               .no_crc = o->no_crc};
    r->w = ard_logw_open(o->out, &lo);
    if (!r->w)
        return ard_lasterror();
    /* After the log writer's thread exists: it keeps the normal policy. */
    if (o->prio && ard_realtime(NULL, 0, (int)o->prio) < 0) {
        ard_logw_close(r->w);
        return ardt_fail(ARD_ESYS, "--prio %d: %s", (int)o->prio, ard_errdetail());
    }
    r->fd_room = ardc_nofile_room(REC_FD_KEEP);
    ardt_signals();
    struct sigaction sa = {.sa_handler = on_hup};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGHUP, &sa, NULL);
    return 0;
}

/* Scans for connections when due, or at once after an inotify event; 0 or an ARD_E* code (detail
 * set). */
static int scan_if_due(struct rec *r, struct rec_clock *k, int64_t now)
{
    int rc = 0;
    bool created = false;
    if (k->ino >= 0) {
        char ev[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
        while (read(k->ino, ev, sizeof ev) > 0)
            created = true;
    }
    if (created)
        k->retry_until = now + 200000000; /* an object being created opens within this */
    bool quick = k->retry_until && (created || r->retry);
    if (now >= k->next_scan || quick) {
        r->quiet = now < k->next_scan;
        r->retry = false;
        for (size_t i = 0; i < r->nc && rc == 0; i++)
            rc = follow_replaced(r, &r->c[i]);
        r->fd_short = 0;
        int n = ard_conn_list(ardt_g.domain, add_one, r);
        if (n < 0 && n != ARD_ENOENT)
            rc = n;
        if (r->fd_short > 0 && !r->fd_said) {
            ardc_nofile_say("ard record", "connections", r->fd_short, REC_FD_KEEP);
            r->fd_said = true;
        }
        if (!r->quiet)
            k->next_scan = now + 200000000;
        if (now >= k->retry_until)
            k->retry_until = 0;
        if (!r->started) {
            r->started = true;
            warn_unmatched(r, " (yet): recording it when it appears");
        }
    }
    return rc;
}

/* --count or --duration reached. */
static bool record_done(const struct rec *r, const struct rec_opts *o, int64_t t0, int64_t now)
{
    uint64_t total = 0;
    for (size_t i = 0; i < r->nc; i++)
        total += r->c[i].recorded;
    return (o->count && total >= o->count) ||
           (o->duration > 0 && now - t0 >= (int64_t)(o->duration * 1e9));
}

/* Starts the next file on SIGHUP, --split-size or --split-duration; 0 or an ARD_E* code (detail
 * set). */
static int split_if_due(struct rec *r, const struct rec_opts *o, struct rec_clock *k, int64_t now)
{
    if (!(hup || (o->split_mb && ard_logw_bytes(r->w) >= o->split_mb << 20) ||
          (o->split_s > 0 && now - k->file_t0 >= (int64_t)(o->split_s * 1e9))))
        return 0;
    hup = 0;
    char *name = split_name(o->out, ++k->nfile);
    /* a name an earlier recording left is passed over, never replaced */
    while (name && !o->overwrite && access(name, F_OK) == 0 && k->nfile < UINT_MAX) {
        ardt_err(0, "'%s' exists: not replaced, next file under the next number", name);
        free(name);
        name = split_name(o->out, ++k->nfile);
    }
    if (!name || ard_logw_rotate(r->w, name) < 0) {
        int rc = ardt_fail(ARD_ESYS, "starting the next file: %s", ard_errdetail());
        free(name);
        return rc;
    }
    if (o->stats)
        fprintf(stderr, "ard record: next file %s\n", name);
    free(name);
    k->file_t0 = now;
    return 0;
}

/* Sleeps until the next round of an absolute schedule: polling keeps pace even when a round
 * took long. */
static void sleep_next_round(struct timespec *ts, uint64_t poll_us)
{
    ts->tv_nsec += (long)(poll_us * 1000);
    while (ts->tv_nsec >= 1000000000) {
        ts->tv_nsec -= 1000000000;
        ts->tv_sec++;
    }
    struct timespec cur;
    clock_gettime(CLOCK_MONOTONIC, &cur);
    if (cur.tv_sec > ts->tv_sec || (cur.tv_sec == ts->tv_sec && cur.tv_nsec > ts->tv_nsec))
        *ts = cur;
    else
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, ts, NULL);
}

/* Polls every ring until a signal, the end of --count/--duration or an error; 0 or an ARD_E*
 * code (detail set). */
static int record_loop(struct rec *r, const struct rec_opts *o)
{
    struct rec_clock k = {.t0 = ard_now_ns()};
    k.next_stats = k.t0 + 1000000000;
    k.file_t0 = k.t0;
    int rc = 0;
    /* New objects in the shared-memory directory wake a scan at the next round, so that a
     * connection created while recording is taken from its first packet. Without inotify
     * (or when its queue overflowed) the periodic scan finds it, later. */
    k.ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (k.ino >= 0 && inotify_add_watch(k.ino, ARDI_SHM_DIR, IN_CREATE | IN_MOVED_TO) < 0) {
        close(k.ino);
        k.ino = -1;
    }
    clock_gettime(CLOCK_MONOTONIC, &k.ts);
    while (!ardt_stop && rc == 0) {
        int64_t now = ard_now_ns();
        rc = scan_if_due(r, &k, now);
        for (size_t i = 0; i < r->nc && rc == 0; i++)
            rc = poll_conn(r, &r->c[i]);
        if (rc)
            break;
        if (ard_logw_error(r->w)) {
            rc = ardt_fail(ARD_ESYS, "%s", ard_errdetail());
            break;
        }
        if (record_done(r, o, k.t0, now))
            break;
        if (now >= k.next_flush) { /* a quiet connection still reaches the disk within a second */
            if (k.next_flush && ard_logw_flush(r->w) < 0) {
                rc = ardt_fail(ARD_ESYS, "%s", ard_errdetail());
                break;
            }
            k.next_flush = now + 1000000000;
        }
        if ((rc = split_if_due(r, o, &k, now)) != 0)
            break;
        if (o->stats && now >= k.next_stats) {
            print_stats(r, stderr);
            k.next_stats += 1000000000;
        }
        sleep_next_round(&k.ts, o->poll_us);
    }
    if (k.ino >= 0)
        close(k.ino);
    return rc;
}

/* Finishes the file after one last round (on a signal), prints the summary and frees r;
 * returns rc (an exit code, the failure printed) or the ARD_E* code of what failed now. */
static int finish_recording(struct rec *r, const char *out, int rc)
{
    /* A stop by signal takes what was written before it: one last round over every ring, so a
     * recorder that fell behind on a busy host still holds the packets sent before the signal. */
    if (ardt_stop && rc == 0) {
        r->quiet = true;
        int n = ard_conn_list(ardt_g.domain, add_one, r);
        if (n < 0 && n != ARD_ENOENT)
            rc = n;
        for (size_t i = 0; rc == 0 && i < r->nc; i++)
            rc = poll_conn(r, &r->c[i]);
    }
    int crc = ard_logw_finish(r->w);
    if (crc < 0 && rc == 0)
        rc = ardt_fail(ARD_ESYS, "%s", ard_errdetail());
    uint64_t in_file = print_final(r, stderr);
    warn_unmatched(r, "");
    if (in_file == 0 && rc == 0)
        rc = ardi_fail(ARD_ENODATA, "'%s' holds no message: nothing was recorded", out);
    ard_logw_close(r->w);
    for (size_t i = 0; i < r->nc; i++) {
        ard_view_close(r->c[i].v);
    }
    free(r->c);
    free_rec(r);
    free(r->owner);
    ardr2_names_free(&r->names);
    return rc;
}

int cmd_record(int argc, char **argv)
{
    struct rec r = {0};
    struct rec_opts o = {.poll_us = 500, .chunk_kb = 1024, .buffer_mb = 256};
    r.pats = calloc((size_t)argc, sizeof *r.pats);
    r.matched = calloc((size_t)argc, sizeof *r.matched);
    r.excl = calloc((size_t)argc, sizeof *r.excl);
    r.excl_matched = calloc((size_t)argc, sizeof *r.excl_matched);
    if (!r.pats || !r.matched || !r.excl || !r.excl_matched) {
        free_rec(&r);
        return ardt_err(ARDT_SYS, "out of memory");
    }
    int rc = parse_record_args(argc, argv, &r, &o);
    if (rc == 0)
        rc = check_record_opts(&r, &o);
    if (rc == 0)
        rc = open_recording(&r, &o);
    if (rc) {
        free_rec(&r);
        return rc;
    }
    rc = record_loop(&r, &o);
    if (rc < 0)
        rc = ardt_liberr(rc); /* said before the summary, and before the file's end may fail */
    return finish_recording(&r, o.out, rc);
}
