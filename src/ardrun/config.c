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

#define LINE(n) ((int)(n)->start_mark.line + 1)

static const char *scalar(const struct ardy_doc *c, yaml_node_t *n, const char *key)
{
    const char *s = ardy_text(n);
    if (s == NULL)
        ardy_fail(c, n, "'%s' must be a single value", key);
    return s;
}

static int get_int(const struct ardy_doc *c, yaml_node_t *n, const char *key, long min, long max,
                   long *out)
{
    const char *s = scalar(c, n, key);
    if (s == NULL)
        return ARD_EINVAL;
    if (ardy_long(s, min, max, out) < 0)
        return ardy_fail(c, n, "'%s' must be an integer %ld..%ld", key, min, max);
    return 0;
}

static int get_bool(const struct ardy_doc *c, yaml_node_t *n, const char *key, bool *out)
{
    const char *s = scalar(c, n, key);
    if (s == NULL)
        return ARD_EINVAL;
    if (ardy_bool(s, out) < 0)
        return ardy_fail(c, n, "'%s' must be true or false, not '%s'", key, s);
    return 0;
}

/* A name by ardrun's rule (ardr_names.h) into out (ARDR_NAME_MAX + 1 bytes). */
static int get_name(const struct ardy_doc *c, yaml_node_t *n, const char *key, char *out)
{
    const char *s = scalar(c, n, key);
    if (s == NULL)
        return ARD_EINVAL;
    if (!ardr_name_ok(s))
        return ardy_fail(c, n, "'%s': '%s' is not a name (" ARDR_NAME_RULE ")", key, s);
    snprintf(out, ARDR_NAME_MAX + 1, "%s", s);
    return 0;
}

/* A mapping of names to scalar values (params, ard), or for `ard` also a list "PORT=CONN". */
static int get_kvs(const struct ardy_doc *c, yaml_node_t *n, const char *key, struct ardr_kv *kv,
                   int max, int *count, bool list_ok)
{
    *count = 0;
    if (n->type == YAML_SEQUENCE_NODE && list_ok) {
        for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
             it++) {
            yaml_node_t *e = ardy_node(c, *it);
            const char *s = scalar(c, e, key);
            if (s == NULL)
                return ARD_EINVAL;
            const char *eq = strchr(s, '=');
            if (eq == NULL || eq == s || !eq[1] || (size_t)(eq - s) > ARDR_NAME_MAX ||
                strlen(eq + 1) > ARD_MAX_NAME)
                return ardy_fail(c, e, "'%s': '%s' is not PORT=CONNECTION", key, s);
            if (*count >= max)
                return ardy_fail(c, e, "'%s': too many entries", key);
            snprintf(kv[*count].key, sizeof kv[*count].key, "%.*s", (int)(eq - s), s);
            snprintf(kv[*count].val, sizeof kv[*count].val, "%s", eq + 1);
            (*count)++;
        }
        return 0;
    }
    if (n->type != YAML_MAPPING_NODE)
        return ardy_fail(c, n, "'%s' must be a mapping (name: value)", key);
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        yaml_node_t *k = ardy_node(c, p->key);
        yaml_node_t *v = ardy_node(c, p->value);
        const char *ks = scalar(c, k, key), *vs = ks ? scalar(c, v, ks) : NULL;
        if (vs == NULL)
            return ARD_EINVAL;
        if (strlen(ks) > ARDR_NAME_MAX || strlen(vs) > ARDR_STR_MAX)
            return ardy_fail(c, k, "'%s': entry '%s' is too long", key, ks);
        if (*count >= max)
            return ardy_fail(c, k, "'%s': too many entries", key);
        for (int i = 0; i < *count; i++)
            if (!strcmp(kv[i].key, ks))
                return ardy_fail(c, k, "'%s': '%s' is given twice", key, ks);
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

/* for each pair of mapping n: k, v and ks, the key's text (an error ends the walk with rc). */
#define FOR_PAIRS(c, n, k, v, ks)                                                                  \
    ARDY_FOR_PAIRS(c, n, k, v)                                                                     \
    for (const char *ks = scalar(c, k, "key"); ks; ks = NULL)

static int load_rate(struct ardy_doc *c, yaml_node_t *n, struct ardr_rate *r)
{
    if (n->type != YAML_MAPPING_NODE)
        return ardy_fail(c, n, "each entry of 'rates' must be a mapping");
    r->divide = 1;
    int rc = 0;
    FOR_PAIRS(c, n, k, v, ks)
    {
        long x;
        if (!strcmp(ks, "name"))
            rc = get_name(c, v, "name", r->name);
        else if (!strcmp(ks, "divide")) {
            rc = get_int(c, v, "divide", 1, ARDR_DIVIDE_MAX, &x);
            r->divide = (int)x;
        } else if (!strcmp(ks, "prio")) {
            rc = get_int(c, v, "prio", 0, ARDR_PRIO_MAX, &x);
            r->prio = (int)x;
        } else if (!strcmp(ks, "cpu")) {
            const char *s = scalar(c, v, "cpu");
            if (s == NULL || strlen(s) >= sizeof r->cpus)
                return s ? ardy_fail(c, v, "'cpu': '%s' is too long", s) : ARD_EINVAL;
            snprintf(r->cpus, sizeof r->cpus, "%s", s);
        } else
            return ardy_unknown_key(c, k, ks, "in a rate (name, divide, prio, cpu)");
        if (rc < 0)
            return rc;
    }
    if (!r->name[0])
        return ardy_fail(c, n, "a rate needs a 'name'");
    return 0;
}

static int load_block(struct ardy_doc *c, yaml_node_t *n, struct ardr_group *g,
                      struct ardr_block *b, char rate_names[][ARDR_NAME_MAX + 1])
{
    if (n->type != YAML_MAPPING_NODE)
        return ardy_fail(c, n, "each entry of 'blocks' must be a mapping");
    b->line = LINE(n);
    b->rate = -1;
    int rc = 0;
    char rate[ARDR_NAME_MAX + 1] = "";
    yaml_node_t *rate_node = NULL;
    FOR_PAIRS(c, n, k, v, ks)
    {
        if (!strcmp(ks, "name"))
            rc = get_name(c, v, "name", b->name);
        else if (!strcmp(ks, "plugin")) {
            const char *s = scalar(c, v, "plugin");
            if (s == NULL)
                return ARD_EINVAL;
            if (!*s || strlen(s) > ARDR_PLUGIN_MAX)
                return ardy_fail(c, v, "'plugin' must be a file name");
            ardr_plugin_path(b->path, ARDR_PATH_MAX, s, g->file);
        } else if (!strcmp(ks, "rate")) {
            rc = get_name(c, v, "rate", rate);
            rate_node = v;
        } else if (!strcmp(ks, "params"))
            rc = get_kvs(c, v, "params", b->params, ARD_BLOCK_MAX_PARAMS, &b->nparams, false);
        else if (!strcmp(ks, "ard"))
            rc = get_kvs(c, v, "ard", b->wires, ARD_BLOCK_MAX_PORTS, &b->nwires, true);
        else if (!strcmp(ks, "own_copy"))
            rc = get_bool(c, v, "own_copy", &b->own_copy);
        else
            return ardy_unknown_key(c, k, ks,
                                    "in a block (name, plugin, rate, params, ard, own_copy)");
        if (rc < 0)
            return rc;
    }
    if (!b->name[0])
        return ardy_fail(c, n, "a block needs a 'name'");
    if (!b->path[0])
        return ardy_fail(c, n, "block '%s' needs a 'plugin'", b->name);
    for (int r = 0; r < g->nrates; r++)
        if (!rate[0] || !strcmp(rate, rate_names[r])) {
            b->rate = r;
            break;
        }
    if (b->rate < 0)
        return ardy_fail(c, rate_node, "block '%s': no rate named '%s' in 'rates'", b->name, rate);
    return 0;
}

static int load_root(struct ardy_doc *c, struct ardr_group *g)
{
    yaml_node_t *root = ardy_root(c);
    if (root == NULL)
        return ardi_fail(ARD_EINVAL, "%s: empty file (a group needs name, rate_hz and blocks)",
                         c->file);
    if (root->type != YAML_MAPPING_NODE)
        return ardy_fail(c, root, "the file must be a mapping (name, rate_hz, rates, blocks)");
    yaml_node_t *rates = NULL, *blocks = NULL;
    int rc = 0;
    double hz = 0;
    FOR_PAIRS(c, root, k, v, ks)
    {
        if (!strcmp(ks, "name"))
            rc = get_name(c, v, "name", g->name);
        else if (!strcmp(ks, "domain"))
            rc = get_name(c, v, "domain", g->domain);
        else if (!strcmp(ks, "rate_hz")) {
            const char *s = scalar(c, v, "rate_hz");
            if (s == NULL)
                return ARD_EINVAL;
            if (ardy_double(s, ARDR_HZ_MIN, ARDR_HZ_MAX, &hz) < 0)
                return ardy_fail(c, v, "'rate_hz' must be a rate in Hz, %g..%g, not '%s'",
                                 ARDR_HZ_MIN, ARDR_HZ_MAX, s);
        } else if (!strcmp(ks, "lock"))
            rc = get_bool(c, v, "lock", &g->lock);
        else if (!strcmp(ks, "strict"))
            rc = get_bool(c, v, "strict", &g->strict);
        else if (!strcmp(ks, "rates"))
            rates = v;
        else if (!strcmp(ks, "blocks"))
            blocks = v;
        else
            return ardy_unknown_key(c, k, ks,
                                    "(name, domain, rate_hz, lock, strict, rates, blocks)");
        if (rc < 0)
            return rc;
    }
    if (!g->name[0])
        return ardy_fail(c, root, "the group needs a 'name'");
    if (hz == 0)
        return ardy_fail(c, root, "the group needs 'rate_hz' (its base rate)");
    g->period_ns = (int64_t)(1e9 / hz + 0.5);
    char names[ARDR_MAX_RATES][ARDR_NAME_MAX + 1];
    if (rates == NULL) {
        g->nrates = 1;
        snprintf(g->rates[0].name, sizeof g->rates[0].name, "base");
        g->rates[0].divide = 1;
    } else {
        if (rates->type != YAML_SEQUENCE_NODE)
            return ardy_fail(c, rates, "'rates' must be a list");
        for (yaml_node_item_t *it = rates->data.sequence.items.start;
             it < rates->data.sequence.items.top; it++) {
            yaml_node_t *e = ardy_node(c, *it);
            if (g->nrates == ARDR_MAX_RATES)
                return ardy_fail(c, e, "more than %d rates", ARDR_MAX_RATES);
            struct ardr_rate *r = &g->rates[g->nrates];
            if ((rc = load_rate(c, e, r)) < 0)
                return rc;
            for (int i = 0; i < g->nrates; i++)
                if (!strcmp(g->rates[i].name, r->name))
                    return ardy_fail(c, e, "rate '%s' is defined twice", r->name);
            g->nrates++;
        }
        if (g->nrates == 0)
            return ardy_fail(c, rates, "'rates' is empty");
    }
    for (int i = 0; i < g->nrates; i++)
        snprintf(names[i], sizeof names[i], "%s", g->rates[i].name);
    if (blocks == NULL || blocks->type != YAML_SEQUENCE_NODE)
        return ardy_fail(c, blocks ? blocks : root, "'blocks' must be a list of blocks");
    int nb = (int)(blocks->data.sequence.items.top - blocks->data.sequence.items.start);
    if (nb < 1 || nb > ARDR_MAX_BLOCKS)
        return ardy_fail(c, blocks, "'blocks' must have 1..%d blocks", ARDR_MAX_BLOCKS);
    g->blocks = calloc((size_t)nb, sizeof *g->blocks);
    if (g->blocks == NULL)
        return ardi_fail(ARD_ENOMEM, "%s: out of memory", c->file);
    for (int i = 0; i < nb; i++) {
        yaml_node_t *e = ardy_node(c, blocks->data.sequence.items.start[i]);
        if ((rc = ardr_block_new(&g->blocks[i])) < 0)
            return rc;
        g->nblocks = i + 1;
        if ((rc = load_block(c, e, g, &g->blocks[i], names)) < 0)
            return rc;
        for (int j = 0; j < i; j++)
            if (!strcmp(g->blocks[j].name, g->blocks[i].name)) {
                return ardy_fail(c, e, "block '%s' is defined twice (first at line %d)",
                                 g->blocks[i].name, g->blocks[j].line);
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
    struct ardy_doc c;
    int rc = ardy_load(&c, file, &f, 8, false);
    fclose(f);
    if (rc < 0)
        return rc;
    rc = load_root(&c, g);
    ardy_free(&c);
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
