/* filter.c - `ard show --filter EXPR`: a small expression over a packet's fields, compiled
 * once against the connection's type into a tree of nodes, evaluated per packet.
 *
 *   expr    := and ( '||' and )*
 *   and     := cmp ( '&&' cmp )*
 *   cmp     := sum [ ( '==' | '!=' | '<' | '<=' | '>' | '>=' ) sum ]
 *   sum     := product ( ( '+' | '-' ) product )*
 *   product := unary ( ( '*' | '/' | '%' ) unary )*
 *   unary   := ( '-' | '!' ) unary | primary
 *   primary := NUMBER | PATH | '(' expr ')'
 *
 * Values are f64; `%` is the remainder of the operands truncated to integers (NaN when the
 * divisor truncates to 0); a comparison or logical operator gives 1 or 0; a packet passes
 * when the value is neither 0 nor NaN. */
#include "ard.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum op { NUM, FIELD, NEG, NOT, ADD, SUB, MUL, DIV, MOD, EQ, NE, LT, LE, GT, GE, AND, OR };

struct node {
    enum op op;
    int a, b; /* operands (indices into nodes), -1 when none */
    double num;
    const struct ard_field *f;
    uint32_t idx;
};

struct ardt_filter {
    const struct ardt_type *t;
    const char *src;
    const char *p; /* next character */
    struct node *n;
    int nn, cap;
    int root;
    int err;
};

/* The first error of a compilation: x->err and its detail (the caller prints it). */
static int fail_at(struct ardt_filter *x, const char *at, const char *what)
{
    if (x->err)
        return -1;
    int col = (int)(at - x->src) + 1;
    if (*at == '\0')
        x->err =
            ardi_fail(ARD_EOPTION, "--filter '%s': column %d: %s at the end", x->src, col, what);
    else
        x->err = ardi_fail(ARD_EOPTION, "--filter '%s': column %d: %s at '%.12s'", x->src, col,
                           what, at);
    return -1;
}

/* A path that ardt_sel_parse refused: the column, then what it said of the path. */
static int not_a_field(struct ardt_filter *x, const char *at)
{
    char why[256];
    snprintf(why, sizeof why, "%s", ard_errdetail());
    if (!x->err) {
        fail_at(x, at, "not a field of the connection");
        ardt_fail(ARD_EOPTION, "%s (%s)", ard_errdetail(), why);
    }
    return -1;
}

static int add(struct ardt_filter *x, struct node nd)
{
    if (x->err)
        return -1;
    if (x->nn == x->cap) {
        int cap = x->cap ? 2 * x->cap : 16;
        struct node *nv = realloc(x->n, (size_t)cap * sizeof *nv);
        if (!nv) {
            x->err = ardi_fail(ARD_ENOMEM, "out of memory");
            return -1;
        }
        x->n = nv;
        x->cap = cap;
    }
    x->n[x->nn] = nd;
    return x->nn++;
}

static void skip(struct ardt_filter *x)
{
    while (*x->p == ' ' || *x->p == '\t')
        x->p++;
}

/* Consume operator `s` if it is next (and not the start of a longer one in `not_before`). */
static bool take(struct ardt_filter *x, const char *s, char not_next)
{
    skip(x);
    size_t l = strlen(s);
    if (strncmp(x->p, s, l) != 0 || (not_next && x->p[l] == not_next))
        return false;
    x->p += l;
    return true;
}

static int expr(struct ardt_filter *x);

static int primary(struct ardt_filter *x)
{
    skip(x);
    const char *at = x->p;
    if (*at == '(') {
        x->p++;
        int e = expr(x);
        skip(x);
        if (e < 0)
            return -1;
        if (*x->p != ')')
            return fail_at(x, x->p, "expected ')'");
        x->p++;
        return e;
    }
    if (isdigit((unsigned char)*at) || (*at == '.' && isdigit((unsigned char)at[1]))) {
        char *end;
        double v = strtod(at, &end);
        if (isalpha((unsigned char)*end) || *end == '_' || *end == '.')
            return fail_at(x, at, "bad number");
        x->p = end;
        return add(x, (struct node){.op = NUM, .a = -1, .b = -1, .num = v});
    }
    if (isalpha((unsigned char)*at) || *at == '_') {
        const char *e = at;
        while (isalnum((unsigned char)*e) || *e == '_')
            e++;
        if (*e == '[') {
            e++;
            while (isdigit((unsigned char)*e))
                e++;
            if (*e != ']')
                return fail_at(x, e, "expected a number and ']' in the index");
            e++;
        }
        char path[128];
        if ((size_t)(e - at) >= sizeof path)
            return fail_at(x, at, "field path too long");
        memcpy(path, at, (size_t)(e - at));
        path[e - at] = '\0';
        struct ardt_sel sel;
        if (ardt_sel_parse(x->t, path, &sel) != 0)
            return not_a_field(x, at);
        const struct ard_field *f = &x->t->fields[sel.field];
        if (sel.count != 1) {
            char what[320];
            snprintf(what, sizeof what, "'%.100s' has %u elements: name one, as in %.100s[0]", path,
                     f->count, path);
            return fail_at(x, at, what);
        }
        x->p = e;
        return add(x, (struct node){.op = FIELD, .a = -1, .b = -1, .f = f, .idx = sel.first});
    }
    return fail_at(x, at, *at ? "expected a number, a field or '('" : "expected a value");
}

static int unary(struct ardt_filter *x)
{
    skip(x);
    if (*x->p == '-' || (*x->p == '!' && x->p[1] != '=')) {
        enum op op = *x->p == '-' ? NEG : NOT;
        x->p++;
        int a = unary(x);
        return a < 0 ? -1 : add(x, (struct node){.op = op, .a = a, .b = -1});
    }
    return primary(x);
}

static int product(struct ardt_filter *x)
{
    int a = unary(x);
    while (a >= 0) {
        enum op op;
        if (take(x, "*", 0))
            op = MUL;
        else if (take(x, "/", 0))
            op = DIV;
        else if (take(x, "%", 0))
            op = MOD;
        else
            break;
        int b = unary(x);
        a = b < 0 ? -1 : add(x, (struct node){.op = op, .a = a, .b = b});
    }
    return a;
}

static int sum(struct ardt_filter *x)
{
    int a = product(x);
    while (a >= 0) {
        enum op op;
        if (take(x, "+", 0))
            op = ADD;
        else if (take(x, "-", 0))
            op = SUB;
        else
            break;
        int b = product(x);
        a = b < 0 ? -1 : add(x, (struct node){.op = op, .a = a, .b = b});
    }
    return a;
}

static int cmp(struct ardt_filter *x)
{
    int a = sum(x);
    if (a < 0)
        return -1;
    static const struct {
        const char *s;
        enum op op;
    } ops[] = {{"==", EQ}, {"!=", NE}, {"<=", LE}, {">=", GE}, {"<", LT}, {">", GT}};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (take(x, ops[i].s, 0)) {
            int b = sum(x);
            return b < 0 ? -1 : add(x, (struct node){.op = ops[i].op, .a = a, .b = b});
        }
    skip(x);
    if (*x->p == '=')
        return fail_at(x, x->p, "'=' is not a comparison (use '==')");
    return a;
}

static int and_(struct ardt_filter *x)
{
    int a = cmp(x);
    while (a >= 0 && take(x, "&&", 0)) {
        int b = cmp(x);
        a = b < 0 ? -1 : add(x, (struct node){.op = AND, .a = a, .b = b});
    }
    skip(x);
    if (a >= 0 && *x->p == '&')
        return fail_at(x, x->p, "'&' is not an operator (use '&&')");
    return a;
}

static int expr(struct ardt_filter *x)
{
    int a = and_(x);
    while (a >= 0 && take(x, "||", 0)) {
        int b = and_(x);
        a = b < 0 ? -1 : add(x, (struct node){.op = OR, .a = a, .b = b});
    }
    skip(x);
    if (a >= 0 && *x->p == '|')
        return fail_at(x, x->p, "'|' is not an operator (use '||')");
    return a;
}

int ardt_filter_new(const struct ardt_type *t, const char *src, struct ardt_filter **out)
{
    *out = NULL;
    if (t->nfields == 0)
        return ardi_fail(ARD_EOPTION, "--filter: the connection is opaque (no type), it has no "
                                      "fields");
    struct ardt_filter *x = calloc(1, sizeof *x);
    if (!x)
        return ardi_fail(ARD_ENOMEM, "out of memory");
    x->t = t;
    x->src = x->p = src;
    x->root = expr(x);
    skip(x);
    if (x->root >= 0 && *x->p != '\0')
        fail_at(x, x->p, "unexpected text");
    int rc = x->err;
    if (rc) {
        ardt_filter_free(x);
        return rc;
    }
    *out = x;
    return 0;
}

static double eval(const struct ardt_filter *x, int i, const void *pkt)
{
    const struct node *nd = &x->n[i];
    double a, b;
    switch (nd->op) {
    case NUM:
        return nd->num;
    case FIELD:
        return ardt_get_f(nd->f, pkt, nd->idx);
    case NEG:
        return -eval(x, nd->a, pkt);
    case NOT:
        a = eval(x, nd->a, pkt);
        return a == 0 || isnan(a) ? 1 : 0;
    case AND:
        a = eval(x, nd->a, pkt);
        if (a == 0 || isnan(a))
            return 0;
        b = eval(x, nd->b, pkt);
        return b == 0 || isnan(b) ? 0 : 1;
    case OR:
        a = eval(x, nd->a, pkt);
        if (a != 0 && !isnan(a))
            return 1;
        b = eval(x, nd->b, pkt);
        return b != 0 && !isnan(b) ? 1 : 0;
    default:
        break;
    }
    a = eval(x, nd->a, pkt);
    b = eval(x, nd->b, pkt);
    switch (nd->op) {
    case ADD:
        return a + b;
    case SUB:
        return a - b;
    case MUL:
        return a * b;
    case DIV:
        return a / b;
    case MOD: {
        if (!(fabs(a) < 9.2e18) || !(fabs(b) < 9.2e18))
            return NAN;
        long long ia = (long long)a, ib = (long long)b;
        return ib == 0 ? NAN : (double)(ia % ib);
    }
    case EQ:
        return a == b;
    case NE:
        return a != b;
    case LT:
        return a < b;
    case LE:
        return a <= b;
    case GT:
        return a > b;
    case GE:
        return a >= b;
    default:
        return NAN;
    }
}

bool ardt_filter_pass(const struct ardt_filter *x, const void *pkt)
{
    double v = eval(x, x->root, pkt);
    return v != 0 && !isnan(v);
}

void ardt_filter_free(struct ardt_filter *x)
{
    if (x) {
        free(x->n);
        free(x);
    }
}
