/* siggen.c - `ard siggen`: a signal generator block. Each chosen field (or element) follows a
 * waveform of the time since start; the rest of the packet keeps its last value. Configured
 * on the command line or from a YAML file; paced by ard_period. */
#include "ard.h"
#include "ardyaml.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

enum shape {
    SINE,
    COSINE,
    SQUARE,
    TRIANGLE,
    SAWTOOTH,
    STEP,
    RAMP,
    CHIRP,
    UNIFORM,
    GAUSSIAN,
    CONST
};
static const char *const shapes[] = {"sine", "cosine", "square",  "triangle", "sawtooth", "step",
                                     "ramp", "chirp",  "uniform", "gaussian", "constant"};

struct signal {
    char path[128];
    enum shape shape;
    double amp, freq, phase, offset, at, f1, sweep;
    /* A shape that is not one: refused once the field is known to exist, so that a wrong
     * field is named first (arm.cmd f0=wobble: no field f0). */
    char bad_shape[64];
};

struct cfg {
    const char *conn;
    const char *type;
    double rate;
    uint64_t count, seed;
    bool seeded, rate_given;
    struct signal *sig;
    size_t nsig;
    char *owned[4]; /* strings from the YAML file */
};

/* xorshift64*: reproducible with --seed, no global state in libc. */
static uint64_t rng_state;
static double uniform01(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (double)((rng_state * 0x2545F4914F6CDD1DULL) >> 11) * 0x1.0p-53;
}

static double gauss(void)
{
    double u = uniform01(), v = uniform01();
    if (u < 1e-300)
        u = 1e-300;
    return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

static double value(const struct signal *s, double t)
{
    double x = s->freq * t + s->phase / (2 * M_PI);
    x -= floor(x);
    switch (s->shape) {
    case SINE:
        return s->offset + s->amp * sin(2 * M_PI * s->freq * t + s->phase);
    case COSINE:
        return s->offset + s->amp * cos(2 * M_PI * s->freq * t + s->phase);
    case SQUARE:
        return s->offset + s->amp * (x < 0.5 ? 1 : -1);
    case TRIANGLE:
        return s->offset + s->amp * (1 - 4 * fabs(x - 0.5));
    case SAWTOOTH:
        return s->offset + s->amp * (2 * x - 1);
    case STEP:
        return s->offset + (t >= s->at ? s->amp : 0);
    case RAMP:
        return s->offset + s->amp * t;
    case CHIRP: {
        double u = fmod(t, s->sweep);
        return s->offset +
               s->amp * sin(2 * M_PI * (s->freq * u + (s->f1 - s->freq) * u * u / (2 * s->sweep)) +
                            s->phase);
    }
    case UNIFORM:
        return s->offset + s->amp * (2 * uniform01() - 1);
    case GAUSSIAN:
        return s->offset + s->amp * gauss();
    case CONST:
        return s->offset;
    }
    return 0;
}

static int set_key(struct signal *s, const char *key, const char *val)
{
    double v;
    char opt[160];
    snprintf(opt, sizeof opt, "%s: %s", s->path, key);
    int rc = ardc_parse_real(opt, val, -1e300, 1e300, &v);
    if (rc)
        return rc;
    if (!strcmp(key, "amplitude") || !strcmp(key, "amp"))
        s->amp = v;
    else if (!strcmp(key, "frequency") || !strcmp(key, "freq"))
        s->freq = v;
    else if (!strcmp(key, "phase"))
        s->phase = v;
    else if (!strcmp(key, "offset"))
        s->offset = v;
    else if (!strcmp(key, "at"))
        s->at = v;
    else if (!strcmp(key, "f1"))
        s->f1 = v;
    else if (!strcmp(key, "T")) {
        if (!(v > 0))
            return ardi_fail(ARD_EOPTION, "%s: T must be > 0", s->path);
        s->sweep = v;
    } else
        return ardi_fail(ARD_EOPTION,
                         "%s: unknown key '%s' (amplitude, frequency, phase, offset, at, f1, T)",
                         s->path, key);
    return 0;
}

static int set_shape(struct signal *s, const char *name)
{
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++)
        if (strcmp(shapes[k], name) == 0) {
            s->shape = (enum shape)k;
            return 0;
        }
    char *end;
    errno = 0;
    double v = strtod(name, &end);
    if (end != name && *end == '\0' && errno == ERANGE && isinf(v))
        return ardi_fail(ARD_EOPTION, "%s: constant '%s' is out of range for f64", s->path, name);
    if (end != name && *end == '\0') {
        s->shape = CONST;
        s->offset = v;
        return 0;
    }
    snprintf(s->bad_shape, sizeof s->bad_shape, "%s", name);
    return 0;
}

static int shape_known(const struct signal *s)
{
    if (s->bad_shape[0] == '\0')
        return 0;
    return ardi_fail(ARD_EOPTION,
                     "%s: unknown shape '%s' (sine cosine square triangle sawtooth step ramp "
                     "chirp uniform gaussian constant, or a number)",
                     s->path, s->bad_shape);
}

static struct signal *new_signal(struct cfg *c, const char *path, size_t plen)
{
    struct signal *nv = realloc(c->sig, (c->nsig + 1) * sizeof *nv);
    if (!nv)
        return NULL;
    c->sig = nv;
    struct signal *s = &c->sig[c->nsig++];
    *s = (struct signal){.amp = 1, .freq = 1, .at = 1, .sweep = 10, .f1 = -1};
    if (plen >= sizeof s->path)
        plen = sizeof s->path - 1;
    memcpy(s->path, path, plen);
    return s;
}

/* FIELD=SHAPE[,KEY=VALUE...] */
static int parse_arg(struct cfg *c, const char *arg)
{
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg)
        return ardi_fail(ARD_EOPTION, "'%s': expected FIELD=SHAPE[,KEY=VALUE...]", arg);
    struct signal *s = new_signal(c, arg, (size_t)(eq - arg));
    if (!s)
        return ardi_fail(ARD_ENOMEM, "out of memory");
    char buf[512];
    snprintf(buf, sizeof buf, "%s", eq + 1);
    char *save = NULL, *tok = strtok_r(buf, ",", &save);
    if (!tok)
        return ardi_fail(ARD_EOPTION, "'%s': no shape", arg);
    int rc = set_shape(s, tok);
    while (rc == 0 && (tok = strtok_r(NULL, ",", &save)) != NULL) {
        char *kv = strchr(tok, '=');
        if (!kv)
            return ardi_fail(ARD_EOPTION, "%s: '%s' is not KEY=VALUE", s->path, tok);
        *kv = '\0';
        rc = set_key(s, tok, kv + 1);
    }
    return rc;
}

/* A YAML error (ardyaml's detail, which names FILE:LINE) as a usage error, unless the system
 * failed. */
static int yaml_err(int rc)
{
    return rc == ARD_ENOMEM || rc == ARD_ESYS ? rc : ARD_EINVAL;
}

/* signals: FIELD: SHAPE, or FIELD: {shape: SHAPE, KEY: VALUE...} */
static int load_signals(struct cfg *c, const struct ardy_doc *y, yaml_node_t *vn)
{
    if (vn->type != YAML_MAPPING_NODE)
        return yaml_err(ardy_fail(y, vn, "signals: expected FIELD: SHAPE pairs"));
    ARDY_FOR_PAIRS(y, vn, fk, fv)
    {
        const char *field = ardy_text(fk);
        if (!field)
            return yaml_err(ardy_fail(y, fk, "a field name must be text"));
        struct signal *s = new_signal(c, field, strlen(field));
        if (!s)
            return ardi_fail(ARD_ENOMEM, "out of memory");
        int rc;
        if (ardy_text(fv)) {
            if ((rc = set_shape(s, ardy_text(fv))) != 0)
                return rc;
            continue;
        }
        if (fv->type != YAML_MAPPING_NODE)
            return yaml_err(ardy_fail(y, fk, "%s: expected a shape or {shape: ...}", field));
        bool shaped = false;
        ARDY_FOR_PAIRS(y, fv, kn, vv)
        {
            const char *kk = ardy_text(kn), *kv = ardy_text(vv);
            if (!kk || !kv)
                return yaml_err(ardy_fail(y, fk, "%s: keys and values must be text", field));
            if (!strcmp(kk, "shape"))
                rc = set_shape(s, kv), shaped = true;
            else
                rc = set_key(s, kk, kv);
            if (rc != 0)
                return rc;
        }
        if (!shaped)
            return yaml_err(ardy_fail(y, fk, "%s: no shape given", field));
    }
    return 0;
}

/* A key of the file that is an option's (type, rate, seed: the rows' .yaml), applied by its row
 * as on the command line. The text one (type) is copied: the document goes. */
static int yaml_option(struct cfg *c, const struct ardy_doc *y, yaml_node_t *kn,
                       const struct ardc_opt *o, const char *v)
{
    if (!v && o->kind == ARDC_TEXT)
        return yaml_err(ardy_fail(y, kn, "'%s' needs a text value", o->yaml));
    if (!v)
        return yaml_err(ardy_fail(y, kn, "%s needs a number", o->yaml));
    if (o->kind == ARDC_TEXT) {
        char *dup = strdup(v);
        if (!dup)
            return ardi_fail(ARD_ENOMEM, "out of memory");
        free(c->owned[1]);
        v = c->owned[1] = dup;
    }
    return ardc_opt_apply(o, o->yaml, v, c);
}

static int load_root(struct cfg *c, struct ardy_doc *y)
{
    yaml_node_t *root = ardy_root(y);
    if (!root || root->type != YAML_MAPPING_NODE)
        return ardi_fail(ARD_EINVAL, "%s: expected a mapping (connection, rate, signals, ...)",
                         y->file);
    ARDY_FOR_PAIRS(y, root, kn, vn)
    {
        const char *k = ardy_text(kn), *v = ardy_text(vn);
        const struct ardc_opt *o = k ? ardc_opt_find_yaml(&ardt_siggen_spec, 0, k) : NULL;
        int rc = 0;
        if (!k) {
            rc = yaml_err(ardy_fail(y, kn, "keys must be plain words"));
        } else if (o) {
            rc = yaml_option(c, y, kn, o, v);
        } else if (strcmp(k, "connection") == 0) { /* the first argument */
            char *dup = v ? strdup(v) : NULL;
            if (!dup)
                return yaml_err(ardy_fail(y, kn, "'%s' needs a text value", k));
            free(c->owned[0]);
            c->conn = c->owned[0] = dup;
        } else if (strcmp(k, "signals") == 0) { /* the FIELD=SHAPE arguments */
            rc = load_signals(c, y, vn);
        } else {
            rc = yaml_err(ardy_unknown_key(y, kn, k, "(connection, type, rate, seed, signals)"));
        }
        if (rc != 0)
            return rc;
    }
    return 0;
}

static int load_yaml(struct cfg *c, const char *file)
{
    FILE *f = fopen(file, "re");
    if (!f)
        return ardi_fail(ARD_EOPTION, "--config '%s': cannot open it", file);
    /* A siggen file needs 3 levels. */
    struct ardy_doc y;
    int rc = ardy_load(&y, file, &f, 8, false);
    fclose(f);
    if (rc < 0)
        return yaml_err(rc);
    rc = load_root(c, &y);
    ardy_free(&y);
    return rc;
}

/* --config FILE: loaded where it stands among the options; a --rate given stays. */
static int load_config(void *dest, const struct ardc_opt *o, const char *file)
{
    (void)o;
    struct cfg *c = dest;
    double cli_rate = c->rate;
    bool given = c->rate_given;
    int rc = load_yaml(c, file);
    if (given)
        c->rate = cli_rate; /* the command line has the last word */
    c->rate_given =
        given; /* the file's rate (its row's call said given) is not the command line's */
    return rc;
}

/* After --rate and --seed: they were given. */
static int rate_given(void *dest, const struct ardc_opt *o, const char *value)
{
    (void)o, (void)value;
    ((struct cfg *)dest)->rate_given = true;
    return 0;
}

static int seeded(void *dest, const struct ardc_opt *o, const char *value)
{
    (void)o, (void)value;
    ((struct cfg *)dest)->seeded = true;
    return 0;
}

/* The connection (the first word without '='), then FIELD=SHAPE[,KEY=VALUE...] words. */
static int add_word(void *dest, char *word)
{
    struct cfg *c = dest;
    if (!strchr(word, '=') && c->conn == NULL) {
        c->conn = word;
        return 0;
    }
    return parse_arg(c, word);
}

static const struct ardc_opt opts[] = {
    {"rate", 'r', "HZ", "packets per second, 0.001..100000 (default 100)", .kind = ARDC_REAL,
     ARDC_DEST(struct cfg, rate), .min = 0.001, .max = 100000, .call = rate_given, .yaml = "rate"},
    ARDT_OPT_TYPE_YAML(struct cfg, "type"),
    {"count", 'n', "N", "stop after N packets (1 or more; default forever: until interrupted)",
     .kind = ARDC_PACKETS, ARDC_DEST(struct cfg, count), .complete = "forever"},
    {"seed", 0, "N", "seed of the noise generators (default: from the clock)", .kind = ARDC_UINT,
     ARDC_DEST(struct cfg, seed), .call = seeded, .yaml = "seed"},
    {"config", 'c', "F",
     "YAML: connection, type, rate, seed, signals: {FIELD: SHAPE or\n"
     "{shape: SHAPE, amplitude: A, frequency: F, ...}}",
     .kind = ARDC_CALL, .call = load_config, .complete = "@file"},
    {0},
};
const struct ardc_optset ardt_siggen_spec = {
    .see = "ard help siggen",
    .head =
        "usage: ard siggen CONNECTION [--type DESC] [--rate HZ] [-n COUNT] [--seed N]\n"
        "                  FIELD=SHAPE[,KEY=VALUE...]...\n"
        "       ard siggen --config FILE.yaml [-n COUNT]\n"
        "  Write CONNECTION at a fixed rate (ard_period: absolute deadlines), each FIELD "
        "following\n"
        "  a waveform of t, the time since start in periods (t = k / rate at the k-th packet, k\n"
        "  counting missed periods too). FIELD is a name, an element (q[2]) or a whole array "
        "(every\n"
        "  element the same signal). Fields not given keep the connection's last value. An\n"
        "  existing connection is adopted; --type creates it (and must match it if it exists).\n"
        "shapes (A amplitude, f frequency Hz, p phase rad, c offset, x = frac(f t + p / 2pi)):\n"
        "  sine      c + A sin(2pi f t + p)       cosine   c + A cos(2pi f t + p)\n"
        "  square    c + A (x < 0.5 ? 1 : -1)     triangle c + A (1 - 4 |x - 0.5|)\n"
        "  sawtooth  c + A (2x - 1)               step     c + (t >= at ? A : 0)\n"
        "  ramp      c + A t                      constant c (also FIELD=NUMBER)\n"
        "  chirp     c + A sin(2pi (f u + (f1 - f) u^2 / (2 T)) + p), u = t mod T\n"
        "  uniform   c + A (2U - 1), U uniform in [0,1)\n"
        "  gaussian  c + A N, N standard normal\n"
        "keys: amplitude|amp (default 1), frequency|freq (1), phase (0), offset (0), at (step, "
        "1),\n"
        "      f1 (chirp end frequency, 10 f), T (chirp sweep seconds, 10)\n",
    .opts = opts,
    .col = 19,
    .arg = add_word};

struct run {
    struct cfg *c;
    struct ardt_sel *sel;
};

static int check(struct ardt_writer *w, void *arg)
{
    struct run *r = arg;
    if (w->t.nfields == 0)
        return ardi_fail(ARD_EOPTION, "connection '%s' is opaque (no type): no fields to generate",
                         w->conn);
    for (size_t i = 0; i < r->c->nsig; i++) {
        int rc = ardt_sel_parse(&w->t, r->c->sig[i].path, &r->sel[i]);
        if (rc == 0)
            rc = shape_known(&r->c->sig[i]);
        if (rc)
            return rc;
    }
    return 0;
}

int cmd_siggen(int argc, char **argv)
{
    struct cfg c = {.rate = 100};
    int rc = ardt_opts(&ardt_siggen_spec, argc, argv, &c);
    if (rc)
        rc = ardt_liberr(rc);
    if (rc == 0 && c.conn == NULL)
        rc =
            ardt_err(ARDT_USAGE, "which connection? (usage: ard siggen CONNECTION FIELD=SHAPE...)");
    if (rc == 0 && c.nsig == 0)
        rc = ardt_err(ARDT_USAGE, "no signals given (e.g. q[0]=sine,amp=0.5,freq=0.2)");
    for (size_t i = 0; rc == 0 && i < c.nsig; i++)
        if (c.sig[i].f1 < 0)
            c.sig[i].f1 = 10 * c.sig[i].freq;
    struct run r = {&c, calloc(c.nsig + 1, sizeof *r.sel)};
    if (rc == 0 && !r.sel)
        rc = ardt_err(ARDT_SYS, "out of memory");
    struct ardt_writer w = {0};
    if (rc == 0) {
        ardt_signals();
        rc = ardt_writer_create(&w, c.conn, c.type, 0, check, &r);
    }
    rng_state = c.seeded ? c.seed * 0x9E3779B97F4A7C15ULL + 1 : (uint64_t)ard_realtime_ns() | 1;
    ard_period per;
    if (rc == 0 && ard_period_init(&per, (int64_t)(1e9 / c.rate + 0.5)) < 0)
        rc = ardt_liberr(ard_lasterror());
    for (uint64_t k = 0; rc == 0 && !ardt_stop && (c.count == 0 || k < c.count);) {
        double t = (double)k / c.rate;
        for (size_t i = 0; i < c.nsig; i++)
            for (uint32_t e = 0; e < r.sel[i].count; e++)
                ardt_set_f(&w.t.fields[r.sel[i].field], w.pkt, r.sel[i].first + e,
                           value(&c.sig[i], t));
        int s = ard_send(w.out, w.pkt);
        if (s < 0) {
            rc = ardt_liberr(s);
            break;
        }
        if (c.count && k + 1 >= c.count)
            break;
        uint64_t before = per.overruns;
        ardt_period_wait(&per);
        k += 1 + (per.overruns - before); /* t follows the clock, missed periods included */
    }
    ardt_writer_close(&w);
    free(r.sel);
    free(c.sig);
    for (size_t i = 0; i < 4; i++)
        free(c.owned[i]);
    return rc;
}
