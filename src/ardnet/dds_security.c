/*
 * dds_security.c - ros2: endpoints in a DDS Security domain: the enclave of an SROS2 keystore
 * that ROS_SECURITY_* names, given to Cyclone's security plugins as participant QoS properties
 * (docs/ros2.md#security).
 *
 * The environment is read as ROS 2 reads it: ROS_SECURITY_ENABLE=true turns security on;
 * ROS_SECURITY_STRATEGY=Enforce refuses to start without the enclave's files, Permissive (the
 * default) runs unsecured, with a warning, when they are not there; the enclave is
 * ROS_SECURITY_ENCLAVE_OVERRIDE, else "/"; its files are in
 * ROS_SECURITY_KEYSTORE/enclaves/<enclave>/. Values ROS 2 would quietly read as "off" or
 * "Permissive" (a typo, "1", "enforce") are refused here: a node meant to be secured never runs
 * unsecured by a spelling.
 */
#include "ard_common.h"
#include "dds_security.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The files of an enclave, by SROS2's names, and the property each one is. */
static const struct {
    const char *file, *prop;
} enclave_files[] = {
    {"identity_ca.cert.pem", "dds.sec.auth.identity_ca"},
    {"cert.pem", "dds.sec.auth.identity_certificate"},
    {"key.pem", "dds.sec.auth.private_key"},
    {"permissions_ca.cert.pem", "dds.sec.access.permissions_ca"},
    {"governance.p7s", "dds.sec.access.governance"},
    {"permissions.p7s", "dds.sec.access.permissions"},
};
#define NFILES (sizeof enclave_files / sizeof enclave_files[0])

/* The three plugins: library, and the names of its init and finalize functions. */
static const struct {
    const char *kind, *lib, *init, *fini;
} plugins[] = {
    {"auth", "dds_security_auth", "init_authentication", "finalize_authentication"},
    {"crypto", "dds_security_crypto", "init_crypto", "finalize_crypto"},
    {"access", "dds_security_ac", "init_access_control", "finalize_access_control"},
};

/* "/" or "/a/b": the rule of a ROS 2 namespace (letters, digits, '_', no empty part). */
static bool enclave_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n >= ARDN_ENCLAVE_MAX || s[0] != '/')
        return false;
    if (n == 1)
        return true;
    if (s[n - 1] == '/')
        return false;
    for (size_t i = 1; i < n; i++) {
        char c = s[i];
        bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        if (c == '/' ? s[i - 1] == '/' : !(alnum || c == '_'))
            return false;
    }
    return true;
}

/* ROS_SECURITY_ENABLE and ROS_SECURITY_STRATEGY: *on and *enforce, or an error. */
static int read_switches(bool *on, bool *enforce)
{
    const char *en = getenv("ROS_SECURITY_ENABLE");
    const char *st = getenv("ROS_SECURITY_STRATEGY");
    if (en && *en && strcmp(en, "true") != 0 && strcmp(en, "false") != 0)
        return ardi_fail(ARD_EINVAL, "ROS_SECURITY_ENABLE '%s': expected true (or false, or unset)",
                         en);
    if (st && *st && strcmp(st, "Enforce") != 0 && strcmp(st, "Permissive") != 0)
        return ardi_fail(ARD_EINVAL,
                         "ROS_SECURITY_STRATEGY '%s': expected Enforce or Permissive (or unset: "
                         "Permissive)",
                         st);
    *on = en && strcmp(en, "true") == 0;
    *enforce = st && strcmp(st, "Enforce") == 0;
    return 0;
}

/* Something the enclave lacks: an error under Enforce, else a warning and no security. */
static int lacking(struct ardn_security *s, bool enforce, const char *what, const char *why)
{
    if (enforce)
        return ardi_fail(ARD_EINVAL,
                         "ROS_SECURITY_ENABLE=true, ROS_SECURITY_STRATEGY=Enforce: %s: %s", what,
                         why);
    fprintf(stderr,
            "ardnet: warning: ROS_SECURITY_ENABLE=true: %s: %s: running UNSECURED "
            "(ROS_SECURITY_STRATEGY=Permissive)\n",
            what, why);
    s->on = false;
    return 0;
}

/* The enclave's directory and each of its files, readable. */
static int find_files(struct ardn_security *s, bool enforce)
{
    const char *ks = getenv("ROS_SECURITY_KEYSTORE");
    if (!ks || !*ks)
        return lacking(s, enforce, "ROS_SECURITY_KEYSTORE", "not set");
    char dir[PATH_MAX];
    int n =
        snprintf(dir, sizeof dir, "%s/enclaves%s", ks, strcmp(s->enclave, "/") ? s->enclave : "");
    if (n < 0 || (size_t)n >= sizeof dir)
        return ardi_fail(ARD_EINVAL, "ROS_SECURITY_KEYSTORE '%s': path too long", ks);
    char what[PATH_MAX + ARDN_ENCLAVE_MAX + 32];
    snprintf(what, sizeof what, "the directory of enclave %s, %s", s->enclave, dir);
    struct stat st;
    if (stat(dir, &st) != 0)
        return lacking(s, enforce, what, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return lacking(s, enforce, what, "not a directory");
    if (!realpath(dir, s->dir))
        return lacking(s, enforce, what, strerror(errno));
    for (size_t i = 0; i < NFILES; i++) {
        char f[PATH_MAX + 32];
        snprintf(f, sizeof f, "%s/%s", s->dir, enclave_files[i].file);
        FILE *fp = fopen(f, "r");
        if (!fp)
            return lacking(s, enforce, f, strerror(errno));
        fclose(fp);
    }
    return 0;
}

int ardn_security_read(struct ardn_security *s)
{
    memset(s, 0, sizeof *s);
    const char *ov = getenv("ROS_SECURITY_ENCLAVE_OVERRIDE");
    if (ov && *ov && !enclave_ok(ov))
        return ardi_fail(ARD_EINVAL,
                         "ROS_SECURITY_ENCLAVE_OVERRIDE '%s': expected an absolute enclave path "
                         "such as /arm/ardnet (letters, digits, '_', at most %d characters)",
                         ov, ARDN_ENCLAVE_MAX - 1);
    snprintf(s->enclave, sizeof s->enclave, "%s", ov && *ov ? ov : "/");
    bool enforce = false;
    int rc = read_switches(&s->on, &enforce);
    if (rc < 0 || !s->on)
        return rc;
    return find_files(s, enforce);
}

/* A plugin's library: next to libddsc when it is there (an upstream install), else in the
 * folder named after libddsc's file (Debian's /usr/lib/<arch>/libddsc0debian/), else its bare
 * name, which Cyclone's own loader resolves. */
static void plugin_path(const char *lib, char *out, size_t len)
{
    snprintf(out, len, "%s", lib);
    void *sym = dlsym(RTLD_DEFAULT, "dds_create_participant");
    Dl_info di;
    if (!sym || !dladdr(sym, &di) || !di.dli_fname || !strchr(di.dli_fname, '/'))
        return;
    char dir[PATH_MAX], sub[NAME_MAX + 1], f[PATH_MAX + NAME_MAX + 64];
    snprintf(dir, sizeof dir, "%s", di.dli_fname);
    char *base = strrchr(dir, '/');
    *base++ = '\0';
    /* "libddsc.so.0debian" -> "libddsc0debian" */
    const char *so = strstr(base, ".so.");
    snprintf(sub, sizeof sub, "%.*s%s", so ? (int)(so - base) : 0, base, so ? so + 4 : "");
    snprintf(f, sizeof f, "%s/lib%s.so", dir, lib);
    if (access(f, R_OK) != 0 && so)
        snprintf(f, sizeof f, "%s/%s/lib%s.so", dir, sub, lib);
    if (access(f, R_OK) == 0)
        snprintf(out, len, "%s", f);
}

void ardn_security_qos(const struct ardn_security *s, dds_qos_t *q)
{
    char v[PATH_MAX + NAME_MAX + 64], name[64];
    for (size_t i = 0; i < sizeof plugins / sizeof plugins[0]; i++) {
        plugin_path(plugins[i].lib, v, sizeof v);
        snprintf(name, sizeof name, "dds.sec.%s.library.path", plugins[i].kind);
        dds_qset_prop(q, name, v);
        snprintf(name, sizeof name, "dds.sec.%s.library.init", plugins[i].kind);
        dds_qset_prop(q, name, plugins[i].init);
        snprintf(name, sizeof name, "dds.sec.%s.library.finalize", plugins[i].kind);
        dds_qset_prop(q, name, plugins[i].fini);
    }
    for (size_t i = 0; i < NFILES; i++) {
        snprintf(v, sizeof v, "file:%s/%s", s->dir, enclave_files[i].file);
        dds_qset_prop(q, enclave_files[i].prop, v);
    }
    /* A certificate revocation list, when the enclave has one (as rmw_cyclonedds does). */
    snprintf(v, sizeof v, "%s/crl.pem", s->dir);
    if (access(v, R_OK) == 0) {
        snprintf(v, sizeof v, "file:%s/crl.pem", s->dir);
        dds_qset_prop(q, "org.eclipse.cyclonedds.sec.auth.crl", v);
    }
}
