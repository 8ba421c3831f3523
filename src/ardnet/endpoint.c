/* endpoint.c - endpoint strings ("udp://HOST:PORT", "ros2:/TOPIC" or a connection name) and
 * addresses. */
#include "ardn.h"
#include "ard_common.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ardn_addr_str(const struct sockaddr_storage *a, char *buf, size_t len)
{
    char host[INET6_ADDRSTRLEN] = "?";
    unsigned port = 0;
    if (a->ss_family == AF_INET) {
        const struct sockaddr_in *s = (const struct sockaddr_in *)a;
        inet_ntop(AF_INET, &s->sin_addr, host, sizeof host);
        port = ntohs(s->sin_port);
        snprintf(buf, len, "%s:%u", host, port);
    } else if (a->ss_family == AF_INET6) {
        const struct sockaddr_in6 *s = (const struct sockaddr_in6 *)a;
        inet_ntop(AF_INET6, &s->sin6_addr, host, sizeof host);
        port = ntohs(s->sin6_port);
        snprintf(buf, len, "[%s]:%u", host, port);
    } else {
        snprintf(buf, len, "?");
    }
}

/* Split "HOST:PORT", "[V6]:PORT", "HOST", "[V6]", ":PORT" into host and port strings. */
static int split_host_port(const char *text, char *host, size_t hlen, char *port, size_t plen)
{
    const char *colon;
    host[0] = port[0] = '\0';
    if (text[0] == '[') {
        const char *rb = strchr(text, ']');
        if (!rb || (size_t)(rb - text - 1) >= hlen)
            return -1;
        memcpy(host, text + 1, (size_t)(rb - text - 1));
        host[rb - text - 1] = '\0';
        if (rb[1] == '\0')
            return 0;
        if (rb[1] != ':')
            return -1;
        colon = rb + 1;
    } else {
        colon = strrchr(text, ':');
        size_t n = colon ? (size_t)(colon - text) : strlen(text);
        if (n >= hlen)
            return -1;
        memcpy(host, text, n);
        host[n] = '\0';
        if (!colon)
            return 0;
        if (strchr(host, ':'))
            return -1; /* bare IPv6 needs brackets */
    }
    if (strlen(colon + 1) >= plen || colon[1] == '\0')
        return -1;
    strcpy(port, colon + 1);
    return 0;
}

static int parse_port(const char *s, unsigned *out)
{
    uint64_t v;
    if (ardn_parse_u64(s, 1, 65535, &v) < 0)
        return -1;
    *out = (unsigned)v;
    return 0;
}

int ardn_fail_prefix(int code, const char *prefix)
{
    char copy[512];
    snprintf(copy, sizeof copy, "%s", ard_errdetail());
    return ardi_fail(code, "%s%s", prefix, copy);
}

int ardn_resolve(const char *text, struct sockaddr_storage *addr, socklen_t *len, bool *has_port)
{
    char host[256], port[16];
    unsigned pnum = 0;
    if (split_host_port(text, host, sizeof host, port, sizeof port) < 0)
        return ardi_fail(ARD_EINVAL, "'%s' is not HOST, HOST:PORT or [ADDR]:PORT", text);
    if (port[0] && parse_port(port, &pnum) < 0)
        return ardi_fail(ARD_EINVAL, "'%s': port '%s' is not a number 1..65535", text, port);
    *has_port = port[0] != '\0';
    memset(addr, 0, sizeof *addr);
    if (host[0] == '\0') {
        struct sockaddr_in *s = (struct sockaddr_in *)addr;
        s->sin_family = AF_INET;
        s->sin_addr.s_addr = htonl(INADDR_ANY);
        s->sin_port = htons((uint16_t)pnum);
        *len = sizeof *s;
        return 0;
    }
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_DGRAM};
    struct addrinfo *res = NULL;
    int rc = getaddrinfo(host, NULL, &hints, &res);
    if (rc != 0 || !res)
        return ardi_fail(ARD_EINVAL, "unknown host '%s': %s", host, gai_strerror(rc));
    /* Prefer IPv4: the usual robot LAN, and the sockets are opened per family. */
    struct addrinfo *pick = res;
    for (struct addrinfo *a = res; a; a = a->ai_next)
        if (a->ai_family == AF_INET) {
            pick = a;
            break;
        }
    memcpy(addr, pick->ai_addr, pick->ai_addrlen);
    *len = (socklen_t)pick->ai_addrlen;
    if (addr->ss_family == AF_INET)
        ((struct sockaddr_in *)addr)->sin_port = htons((uint16_t)pnum);
    else
        ((struct sockaddr_in6 *)addr)->sin6_port = htons((uint16_t)pnum);
    freeaddrinfo(res);
    return 0;
}

int ardn_ep_parse(struct ardn_ep *ep, const char *text, bool listen)
{
    memset(ep, 0, sizeof *ep);
    if (strlen(text) >= sizeof ep->text)
        return ardi_fail(ARD_EINVAL, "endpoint too long");
    strcpy(ep->text, text);
    if (strncmp(text, "ros2:", 5) == 0) {
        if (!ardn_have_ros2)
            return ardi_fail(ARD_EINVAL,
                             "ros2: endpoints not built (configure with cyclonedds-dev)");
        if (ardn_ros2_check_topic(text + 5) < 0)
            return ardn_fail_prefix(ARD_EINVAL, "endpoint: ");
        ep->kind = ARDN_EP_ROS2;
        strcpy(ep->topic, text + 5);
        return 0;
    }
    if (strncmp(text, "udp://", 6) != 0) {
        if (strstr(text, "://"))
            return ardi_fail(ARD_EINVAL, "endpoint '%s': only udp:// addresses are supported",
                             text);
        /* The library's one validator: also refuses "." and "..". */
        if (ardi_check_name("connection", text, true) < 0) {
            char why[512];
            snprintf(why, sizeof why, "%s", ard_errdetail());
            return ardi_fail(ARD_EINVAL,
                             "endpoint '%s' is neither udp://HOST:PORT nor a connection name: %s",
                             text, why);
        }
        ep->kind = ARDN_EP_LOCAL;
        strcpy(ep->conn, text);
        return 0;
    }
    ep->kind = ARDN_EP_UDP;
    const char *rest = text + 6;
    bool has_port = false;
    if (ardn_resolve(rest, &ep->addr, &ep->addrlen, &has_port) < 0) {
        char why[512];
        snprintf(why, sizeof why, "%s", ard_errdetail());
        return ardi_fail(ARD_EINVAL, "endpoint '%s': %s", text, why);
    }
    if (!has_port)
        return ardi_fail(ARD_EINVAL, "endpoint '%s': a port is required (udp://HOST:PORT)", text);
    bool any = (ep->addr.ss_family == AF_INET &&
                ((struct sockaddr_in *)&ep->addr)->sin_addr.s_addr == htonl(INADDR_ANY));
    if (!listen && any)
        return ardi_fail(ARD_EINVAL, "endpoint '%s': an output needs a host (udp://HOST:PORT)",
                         text);
    return 0;
}
