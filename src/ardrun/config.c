/*
 * config.c - the group YAML (docs/ardrun.md has the format). Untrusted input: every value is
 * checked, every error names the file, the line and the key.
 */
#include "ardrun.h"
#include "ardyaml.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

struct cx {
    yaml_document_t doc;
    const char *file;
};

#define LINE(n) ((int)(n)->start_mark.line + 1)

static int bad(const struct cx *c, yaml_node_t *n, const char *fmt, const char *a, const char *b)
{
    char msg[512];
    snprintf(msg, sizeof msg, fmt, a, b);
    return ardi_fail(ARD_EINVAL, "%s:%d: %s", c->file, n ? LINE(n) : 0, msg);
}

static const char *scalar(const struct cx *c, yaml_node_t *n, const char *key)
{
    if (n == NULL || n->type != YAML_SCALAR_NODE) {
        bad(c, n, "'%s' must be a single value%s", key, "");
        return NULL;
    }
    return (const char *)n->data.scalar.value;
}

static int get_int(const struct cx *c, yaml_node_t *n, const char *key, long min, long max,
                   long *out)
{
    const char *s = scalar(c, n, key);
    if (s == NULL)
        return ARD_EINVAL;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < min || v > max) {
        char range[64];
        snprintf(range, sizeof range, "an integer %ld..%ld", min, max);
        return bad(c, n, "'%s' must be %s", key, range);
    }
    *out = v;
    return 0;
}

static int get_bool(const struct cx *c, yaml_node_t *n, const char *key, bool *out)
{
    const char *s = scalar(c, n, key);
    if (s == NULL)
        return ARD_EINVAL;
    if (!strcmp(s, "true") || !strcmp(s, "yes") || !strcmp(s, "on"))
        *out = true;
    else if (!strcmp(s, "false") || !strcmp(s, "no") || !strcmp(s, "off"))
        *out = false;
    else
        return bad(c, n, "'%s' must be true or false, not '%s'", key, s);
    return 0;
}

static int get_name(const struct cx *c, yaml_node_t *n, const char *key, char *out, size_t max)
{
    const char *s = scalar(c, n, key);
    if (s == NULL)
        return ARD_EINVAL;
    size_t len = strlen(s);
    bool ok = len >= 1 && len <= max;
    for (const char *p = s; ok && *p; p++)
        ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
             *p == '_' || *p == '-';
    if (!ok)
        return bad(c, n, "'%s': '%s' is not a name ([A-Za-z0-9_-], at most 31 characters)", key, s);
    snprintf(out, max + 1, "%s", s);
    return 0;
}

/* A mapping of names to scalar values (params, ard), or for `ard` also a list "PORT=CONN". */
static int get_kvs(const struct cx *c, yaml_node_t *n, const char *key, struct ardr_kv *kv, int max,
                   int *count, bool list_ok)
{
    *count = 0;
    if (n->type == YAML_SEQUENCE_NODE && list_ok) {
        for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
             it++) {
            yaml_node_t *e = yaml_document_get_node((yaml_document_t *)&c->doc, *it);
            const char *s = scalar(c, e, key);
            if (s == NULL)
                return ARD_EINVAL;
            const char *eq = strchr(s, '=');
            if (eq == NULL || eq == s || !eq[1] || (size_t)(eq - s) > ARDR_NAME_MAX ||
                strlen(eq + 1) > ARD_MAX_NAME)
                return bad(c, e, "'%s': '%s' is not PORT=CONNECTION", key, s);
            if (*count >= max)
                return bad(c, e, "'%s': too many entries%s", key, "");
            snprintf(kv[*count].key, sizeof kv[*count].key, "%.*s", (int)(eq - s), s);
            snprintf(kv[*count].val, sizeof kv[*count].val, "%s", eq + 1);
            (*count)++;
        }
        return 0;
    }
    if (n->type != YAML_MAPPING_NODE)
        return bad(c, n, "'%s' must be a mapping (name: value)%s", key, "");
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node((yaml_document_t *)&c->doc, p->key);
        yaml_node_t *v = yaml_document_get_node((yaml_document_t *)&c->doc, p->value);
        const char *ks = scalar(c, k, key), *vs = ks ? scalar(c, v, ks) : NULL;
        if (vs == NULL)
            return ARD_EINVAL;
        if (strlen(ks) > ARDR_NAME_MAX || strlen(vs) > ARDR_STR_MAX)
            return bad(c, k, "'%s': entry '%s' is too long", key, ks);
        if (*count >= max)
            return bad(c, k, "'%s': too many entries%s", key, "");
        for (int i = 0; i < *count; i++)
            if (!strcmp(kv[i].key, ks))
                return bad(c, k, "'%s': '%s' is given twice", key, ks);
        snprintf(kv[*count].key, sizeof kv[*count].key, "%s", ks);
        snprintf(kv[*count].val, sizeof kv[*count].val, "%s", vs);
        (*count)++;
    }
    return 0;
}

void ardr_plugin_path(char *out, size_t n, const char *name, const char *yaml)
{
    if (strchr(name, '/') == NULL) { /* a bare file name: $ARDRUN_PLUGIN_PATH first */
        const char *path = getenv("ARDRUN_PLUGIN_PATH");
        while (path && *path) {
            size_t len = strcspn(path, ":");
            if (len > 0 && len < 2048) {
                snprintf(out, n, "%.*s/%s", (int)len, path, name);
                if (access(out, F_OK) == 0)
                    return;
            }
            path += len + (path[len] == ':');
        }
    }
    if (name[0] == '/' || yaml == NULL) {
        snprintf(out, n, "%s", name);
        return;
    }
    /* A YAML read through /dev/stdin, /dev/fd/N or /proc/.../fd/N has no directory of its own:
     * the file it stands for when that is a regular file, else the working directory. */
    char real[PATH_MAX];
    if (!strncmp(yaml, "/dev/", 5) || !strncmp(yaml, "/proc/", 6)) {
        struct stat st;
        if (realpath(yaml, real) != NULL && real[0] == '/' && stat(real, &st) == 0 &&
            S_ISREG(st.st_mode))
            yaml = real;
        else
            yaml = NULL;
    }
    if (yaml == NULL) {
        snprintf(out, n, "%s", name);
        return;
    }
    const char *slash = strrchr(yaml, '/'); /* relative to the YAML file's directory */
    int dlen = slash ? (int)(slash - yaml) : 1;
    snprintf(out, n, "%.*s/%s", dlen, slash ? yaml : ".", name);
}

#define FOR_PAIRS(c, n, k, v, ks)                                                                  \
    for (yaml_node_pair_t *p_ = (n)->data.mapping.pairs.start; p_ < (n)->data.mapping.pairs.top;   \
         p_++)                                                                                     \
        for (yaml_node_t *k = yaml_document_get_node(&(c)->doc, p_->key),                          \
                         *v = yaml_document_get_node(&(c)->doc, p_->value);                        \
             k; k = NULL)                                                                          \
            for (const char *ks = scalar(c, k, "key"); ks; ks = NULL)

static int load_rate(struct cx *c, yaml_node_t *n, struct ardr_rate *r)
{
    if (n->type != YAML_MAPPING_NODE)
        return bad(c, n, "each entry of 'rates' must be a mapping%s%s", "", "");
    r->divide = 1;
    int rc = 0;
    FOR_PAIRS(c, n, k, v, ks)
    {
        long x;
        if (!strcmp(ks, "name"))
            rc = get_name(c, v, "name", r->name, ARDR_NAME_MAX);
        else if (!strcmp(ks, "divide")) {
            rc = get_int(c, v, "divide", 1, 1000000, &x);
            r->divide = (int)x;
        } else if (!strcmp(ks, "prio")) {
            rc = get_int(c, v, "prio", 0, 99, &x);
            r->prio = (int)x;
        } else if (!strcmp(ks, "cpu")) {
            const char *s = scalar(c, v, "cpu");
            if (s == NULL || strlen(s) >= sizeof r->cpus)
                return s ? bad(c, v, "'cpu': '%s' is too long%s", s, "") : ARD_EINVAL;
            snprintf(r->cpus, sizeof r->cpus, "%s", s);
        } else
            return bad(c, k, "unknown key '%s' in a rate (name, divide, prio, cpu)%s", ks, "");
        if (rc < 0)
            return rc;
    }
    if (!r->name[0])
        return bad(c, n, "a rate needs a 'name'%s%s", "", "");
    return 0;
}

static int load_block(struct cx *c, yaml_node_t *n, struct ardr_group *g, struct ardr_block *b,
                      char rate_names[][ARDR_NAME_MAX + 1])
{
    if (n->type != YAML_MAPPING_NODE)
        return bad(c, n, "each entry of 'blocks' must be a mapping%s%s", "", "");
    b->line = LINE(n);
    b->rate = -1;
    int rc = 0;
    char rate[ARDR_NAME_MAX + 1] = "";
    yaml_node_t *rate_node = NULL;
    FOR_PAIRS(c, n, k, v, ks)
    {
        if (!strcmp(ks, "name"))
            rc = get_name(c, v, "name", b->name, ARDR_NAME_MAX);
        else if (!strcmp(ks, "plugin")) {
            const char *s = scalar(c, v, "plugin");
            if (s == NULL)
                return ARD_EINVAL;
            if (!*s || strlen(s) > 2000)
                return bad(c, v, "'plugin' must be a file name%s%s", "", "");
            ardr_plugin_path(b->path, ARDR_PATH_MAX, s, g->file);
        } else if (!strcmp(ks, "rate")) {
            rc = get_name(c, v, "rate", rate, ARDR_NAME_MAX);
            rate_node = v;
        } else if (!strcmp(ks, "params"))
            rc = get_kvs(c, v, "params", b->params, ARD_BLOCK_MAX_PARAMS, &b->nparams, false);
        else if (!strcmp(ks, "ard"))
            rc = get_kvs(c, v, "ard", b->wires, ARD_BLOCK_MAX_PORTS, &b->nwires, true);
        else if (!strcmp(ks, "own_copy"))
            rc = get_bool(c, v, "own_copy", &b->own_copy);
        else
            return bad(c, k,
                       "unknown key '%s' in a block (name, plugin, rate, params, ard, "
                       "own_copy)%s",
                       ks, "");
        if (rc < 0)
            return rc;
    }
    if (!b->name[0])
        return bad(c, n, "a block needs a 'name'%s%s", "", "");
    if (!b->path[0])
        return bad(c, n, "block '%s' needs a 'plugin'%s", b->name, "");
    for (int r = 0; r < g->nrates; r++)
        if (!rate[0] || !strcmp(rate, rate_names[r])) {
            b->rate = r;
            break;
        }
    if (b->rate < 0)
        return bad(c, rate_node, "block '%s': no rate named '%s' in 'rates'", b->name, rate);
    return 0;
}

static int load_root(struct cx *c, struct ardr_group *g)
{
    yaml_node_t *root = yaml_document_get_root_node(&c->doc);
    if (root == NULL)
        return ardi_fail(ARD_EINVAL, "%s: empty file (a group needs name, rate_hz and blocks)",
                         c->file);
    if (root->type != YAML_MAPPING_NODE)
        return bad(c, root, "the file must be a mapping (name, rate_hz, rates, blocks)%s%s", "",
                   "");
    yaml_node_t *rates = NULL, *blocks = NULL;
    int rc = 0;
    double hz = 0;
    FOR_PAIRS(c, root, k, v, ks)
    {
        if (!strcmp(ks, "name"))
            rc = get_name(c, v, "name", g->name, ARDR_NAME_MAX);
        else if (!strcmp(ks, "domain"))
            rc = get_name(c, v, "domain", g->domain, ARDR_NAME_MAX);
        else if (!strcmp(ks, "rate_hz")) {
            const char *s = scalar(c, v, "rate_hz");
            char *end;
            if (s == NULL)
                return ARD_EINVAL;
            hz = strtod(s, &end);
            if (end == s || *end || !(hz >= 0.001 && hz <= 100000))
                return bad(c, v, "'rate_hz' must be a rate in Hz, 0.001..100000, not '%s'%s", s,
                           "");
        } else if (!strcmp(ks, "lock"))
            rc = get_bool(c, v, "lock", &g->lock);
        else if (!strcmp(ks, "strict"))
            rc = get_bool(c, v, "strict", &g->strict);
        else if (!strcmp(ks, "rates"))
            rates = v;
        else if (!strcmp(ks, "blocks"))
            blocks = v;
        else
            return bad(c, k,
                       "unknown key '%s' (name, domain, rate_hz, lock, strict, rates, blocks)%s",
                       ks, "");
        if (rc < 0)
            return rc;
    }
    if (!g->name[0])
        return bad(c, root, "the group needs a 'name'%s%s", "", "");
    if (hz == 0)
        return bad(c, root, "the group needs 'rate_hz' (its base rate)%s%s", "", "");
    g->period_ns = (int64_t)(1e9 / hz + 0.5);
    char names[ARDR_MAX_RATES][ARDR_NAME_MAX + 1];
    if (rates == NULL) {
        g->nrates = 1;
        snprintf(g->rates[0].name, sizeof g->rates[0].name, "base");
        g->rates[0].divide = 1;
    } else {
        if (rates->type != YAML_SEQUENCE_NODE)
            return bad(c, rates, "'rates' must be a list%s%s", "", "");
        for (yaml_node_item_t *it = rates->data.sequence.items.start;
             it < rates->data.sequence.items.top; it++) {
            yaml_node_t *e = yaml_document_get_node(&c->doc, *it);
            if (g->nrates == ARDR_MAX_RATES)
                return bad(c, e, "more than %s rates%s", "16", "");
            struct ardr_rate *r = &g->rates[g->nrates];
            if ((rc = load_rate(c, e, r)) < 0)
                return rc;
            for (int i = 0; i < g->nrates; i++)
                if (!strcmp(g->rates[i].name, r->name))
                    return bad(c, e, "rate '%s' is defined twice%s", r->name, "");
            g->nrates++;
        }
        if (g->nrates == 0)
            return bad(c, rates, "'rates' is empty%s%s", "", "");
    }
    for (int i = 0; i < g->nrates; i++)
        snprintf(names[i], sizeof names[i], "%s", g->rates[i].name);
    if (blocks == NULL || blocks->type != YAML_SEQUENCE_NODE)
        return bad(c, blocks ? blocks : root, "'blocks' must be a list of blocks%s%s", "", "");
    int nb = (int)(blocks->data.sequence.items.top - blocks->data.sequence.items.start);
    if (nb < 1 || nb > ARDR_MAX_BLOCKS)
        return bad(c, blocks, "'blocks' must have 1..%s blocks%s", "256", "");
    g->blocks = calloc((size_t)nb, sizeof *g->blocks);
    if (g->blocks == NULL)
        return ardi_fail(ARD_ENOMEM, "%s: out of memory", c->file);
    for (int i = 0; i < nb; i++) {
        yaml_node_t *e = yaml_document_get_node(&c->doc, blocks->data.sequence.items.start[i]);
        if ((rc = ardr_block_new(&g->blocks[i])) < 0)
            return rc;
        g->nblocks = i + 1;
        if ((rc = load_block(c, e, g, &g->blocks[i], names)) < 0)
            return rc;
        for (int j = 0; j < i; j++)
            if (!strcmp(g->blocks[j].name, g->blocks[i].name)) {
                char line[16];
                snprintf(line, sizeof line, "%d", g->blocks[j].line);
                return bad(c, e, "block '%s' is defined twice (first at line %s)",
                           g->blocks[i].name, line);
            }
    }
    return 0;
}

int ardr_config_load(struct ardr_group *g, const char *file)
{
    memset(g, 0, sizeof *g);
    snprintf(g->file, sizeof g->file, "%s", file);
    FILE *f = fopen(file, "rb");
    if (f == NULL)
        return ardi_fail_errno(ARD_EINVAL, errno, "group file '%s'", file);
    /* A group file needs 4 levels. */
    int depth_rc = ardy_check_depth(file, &f, 8);
    if (depth_rc < 0) {
        fclose(f);
        return depth_rc;
    }
    yaml_parser_t parser;
    struct cx c = {.file = file};
    yaml_parser_initialize(&parser);
    yaml_parser_set_input_file(&parser, f);
    int rc;
    if (!yaml_parser_load(&parser, &c.doc)) {
        rc = ardi_fail(ARD_EINVAL, "%s:%d: YAML error: %s", file, (int)parser.problem_mark.line + 1,
                       parser.problem ? parser.problem : "unknown");
        yaml_parser_delete(&parser);
        fclose(f);
        return rc;
    }
    yaml_parser_delete(&parser);
    fclose(f);
    rc = load_root(&c, g);
    yaml_document_delete(&c.doc);
    if (rc < 0)
        ardr_config_free(g);
    return rc;
}

void ardr_config_free(struct ardr_group *g)
{
    for (int i = 0; g->blocks && i < g->nblocks; i++)
        ardr_block_free(&g->blocks[i]);
    free(g->blocks);
    g->blocks = NULL;
    g->nblocks = 0;
}
