/*
 * fuzz_routes.c - libFuzzer target for ardnet's YAML route file (ardn_config_load). The input
 * is the file. Host names are resolved as numeric addresses only (getaddrinfo is wrapped
 * below with AI_NUMERICHOST), so that no input makes a DNS query.
 * Invariants checked: in a file that loads (its route list may be empty: the command line can
 * add routes) every route has an input,
 * 1..ARDN_MAX_OUT outputs, a name, valid local connection names, a type that parses, a peer
 * only on a UDP input, and options within their documented ranges; the global options too.
 */
#include "ardn.h"
#include "fuzz.h"

#include <dlfcn.h>
#include <netdb.h>
#include <string.h>

typedef int gai_fn(const char *, const char *, const struct addrinfo *, struct addrinfo **);

int getaddrinfo(const char *node, const char *service, const struct addrinfo *hints,
                struct addrinfo **res)
{
    static gai_fn *real;
    if (!real)
        real = (gai_fn *)dlsym(RTLD_NEXT, "getaddrinfo");
    FUZZ_CHECK(real != NULL);
    struct addrinfo h = hints ? *hints : (struct addrinfo){0};
    h.ai_flags |= AI_NUMERICHOST;
    return real(node, service, &h, res);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    setenv("ARD_DOMAIN", "fuzz", 1);
    return 0;
}

static bool name_ok(const char *s, size_t max)
{
    size_t n = strlen(s);
    return n >= 1 && n <= max &&
           strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") == n;
}

static void check_ep(const struct ardn_ep *ep)
{
    FUZZ_CHECK(ep->text[0] != '\0');
    if (ep->kind == ARDN_EP_LOCAL)
        FUZZ_CHECK(name_ok(ep->conn, ARD_MAX_NAME));
    else
        FUZZ_CHECK(ep->addrlen > 0 && ep->addrlen <= sizeof ep->addr);
}

static void check_route(const struct ardn_route *r)
{
    FUZZ_CHECK(r->cfg.name[0] != '\0' && strlen(r->cfg.name) <= ARD_MAX_NAME);
    check_ep(&r->cfg.in);
    FUZZ_CHECK(r->cfg.nout >= 1 && r->cfg.nout <= ARDN_MAX_OUT);
    for (int i = 0; i < r->cfg.nout; i++)
        check_ep(&r->cfg.out[i]);
    FUZZ_CHECK(r->cfg.size <= ARDW_MAX_PAYLOAD);
    if (r->cfg.type[0]) {
        FUZZ_CHECK(r->cfg.type_given);
        FUZZ_CHECK(ard_type_parse(r->cfg.type, NULL, 0, NULL, NULL) == 0);
    }
    FUZZ_CHECK(!r->cfg.conn_id_given || r->cfg.conn_id != 0);
    FUZZ_CHECK(!r->cfg.from[0] || r->cfg.in.kind == ARDN_EP_UDP);
    FUZZ_CHECK(!r->cfg.from[0] ||
               (r->cfg.from_len > 0 && r->cfg.from_len <= sizeof r->cfg.from_addr));
    FUZZ_CHECK(r->cfg.every <= UINT32_MAX);
    FUZZ_CHECK(r->cfg.max_rate == 0 || (r->cfg.max_rate >= 1e-3 && r->cfg.max_rate <= 1e6));
    FUZZ_CHECK(r->cfg.max_dgram == 0 ||
               (r->cfg.max_dgram >= ARDW_MIN_DGRAM && r->cfg.max_dgram <= ARDW_MAX_DGRAM));
    FUZZ_CHECK(r->fd_in == -1 && r->buf == NULL && r->input == NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size);
    struct ardn_route *routes = NULL;
    int n = 0;
    struct ardn_global g;
    memset(&g, 0, sizeof g);
    g.dscp = g.sock_prio = -1;
    int rc = ardn_config_load(path, &routes, &n, &g);
    if (rc == 0) {
        FUZZ_CHECK(n >= 0 && (n == 0 || routes != NULL));
        for (int i = 0; i < n; i++)
            check_route(&routes[i]);
        FUZZ_CHECK(g.dscp >= -1 && g.dscp <= 63);
        FUZZ_CHECK(g.sock_prio >= -1 && g.sock_prio <= 6);
        FUZZ_CHECK(g.prio >= 0 && g.prio <= 99);
    } else {
        FUZZ_CHECK(rc < 0 && ard_errdetail()[0] != '\0'); /* a failure says what was wrong */
    }
    free(routes);
    return 0;
}
