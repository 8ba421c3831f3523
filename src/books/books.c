/*
 * books.c - where the books are, their lock, and reading/writing one entry atomically.
 */
#include "books.h"

#include "ard_common.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* mkdir -p with mode for the missing parts of the base; an existing directory is fine. */
static int mkdirs(const char *dir, mode_t mode)
{
    char tmp[PATH_MAX];
    if (strlen(dir) >= sizeof tmp)
        return ardi_fail(ARD_EINVAL, "books directory '%s': path too long", dir);
    ardb_copy(tmp, sizeof tmp, dir);
    for (char *p = tmp + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            char c = *p;
            *p = '\0';
            if (mkdir(tmp, mode) < 0 && errno != EEXIST)
                return ardi_fail_errno(ARD_ESYS, errno, "cannot create books directory '%s'", tmp);
            *p = c;
            if (c == '\0')
                break;
        }
    }
    return 0;
}

static int books_base(char *buf, size_t len)
{
    const char *env = getenv("ARD_BOOKS_DIR");
    const char *xdg = getenv("XDG_RUNTIME_DIR");
    int n;
    if (env && *env)
        n = snprintf(buf, len, "%s", env);
    else if (geteuid() == 0)
        n = snprintf(buf, len, "/run/ardnet");
    else if (xdg && *xdg)
        n = snprintf(buf, len, "%s/ardnet", xdg);
    else
        n = snprintf(buf, len, "/tmp/ardnet-%ld", (long)geteuid());
    if (n < 0 || (size_t)n >= len)
        return ardi_fail(ARD_EINVAL, "books directory: path too long");
    return 0;
}

/* Open directory `name` (relative to at, or absolute) without following a symbolic link in
 * its last component, creating it (0700) if `create`; then check that it is ours and that
 * nobody else may write it (private: nobody else may do anything). Returns the descriptor,
 * ARD_ENOENT if missing and !create, or an error naming `shown`. A shared /tmp is input we do
 * not trust: another user may have planted a link or a directory there for us. */
static int open_dir(int at, const char *name, const char *shown, bool create, bool private)
{
    if (create && mkdirat(at, name, 0700) < 0 && errno != EEXIST)
        return ardi_fail_errno(ARD_ESYS, errno, "cannot create books directory '%s'", shown);
    int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        struct stat ls;
        if (fstatat(at, name, &ls, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(ls.st_mode))
            return ardi_fail(ARD_EACCES, "books directory '%s' is a symbolic link: refusing",
                             shown);
        if (e == ENOENT && !create)
            return ardi_fail(ARD_ENOENT, "books directory '%s' does not exist", shown);
        return ardi_fail_errno(e == ENOTDIR ? ARD_EACCES : ARD_ESYS, e,
                               "cannot open books directory '%s'", shown);
    }
    struct stat st;
    if (fstat(fd, &st) < 0) {
        int e = errno;
        close(fd);
        return ardi_fail_errno(ARD_ESYS, e, "books directory '%s'", shown);
    }
    mode_t bad = private ? 077 : 022;
    if (st.st_uid != geteuid() || (st.st_mode & bad) != 0) {
        close(fd);
        return ardi_fail(ARD_EACCES,
                         "books directory '%s' is owned by uid %ld with mode %04o: refusing (it "
                         "must be owned by uid %ld%s)",
                         shown, (long)st.st_uid, (unsigned)(st.st_mode & 07777), (long)geteuid(),
                         private ? ", mode 0700" : ", not writable by others");
    }
    return fd;
}

void ardb_close(struct ardb_books *b)
{
    int *fds[] = {&b->lockfd, &b->dirfd, &b->efd};
    for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++) {
        if (*fds[i] >= 0)
            close(*fds[i]);
        *fds[i] = -1;
    }
}

static int open_books(struct ardb_books *b, const char *domain, bool create)
{
    memset(b, 0, sizeof *b);
    b->lockfd = b->dirfd = b->efd = -1;
    int rc = ardb_check_domain(domain);
    if (rc < 0)
        return rc;
    ardb_copy(b->domain, sizeof b->domain, domain);
    char base[PATH_MAX - 80];
    if ((rc = books_base(base, sizeof base)) < 0)
        return rc;
    struct stat st;
    if (!create && stat(base, &st) < 0 && errno == ENOENT)
        return 1;
    /* The base's parents (/run, $XDG_RUNTIME_DIR, /tmp, or the user's own path) are taken
     * as they are; the base itself and everything in it are checked. */
    if (create && (rc = mkdirs(base, 0700)) < 0)
        return rc;
    int basefd = open_dir(AT_FDCWD, base, base, false, false);
    if (basefd < 0)
        return basefd == ARD_ENOENT && !create ? 1 : basefd;
    snprintf(b->dir, sizeof b->dir, "%s/%s", base, domain);
    b->dirfd = open_dir(basefd, domain, b->dir, create, true);
    close(basefd);
    if (b->dirfd < 0) {
        rc = b->dirfd;
        b->dirfd = -1;
        return rc == ARD_ENOENT && !create ? 1 : rc;
    }
    char sub[PATH_MAX + 8];
    snprintf(sub, sizeof sub, "%s/e", b->dir);
    b->efd = open_dir(b->dirfd, "e", sub, true, true);
    if (b->efd < 0) {
        rc = b->efd;
        b->efd = -1;
        ardb_close(b);
        return rc;
    }
    snprintf(sub, sizeof sub, "%s/log", b->dir);
    int logfd = open_dir(b->dirfd, "log", sub, true, true);
    if (logfd < 0) {
        ardb_close(b);
        return logfd;
    }
    close(logfd);
    b->lockfd = openat(b->dirfd, "lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (b->lockfd < 0) {
        int e = errno;
        ardb_close(b);
        return ardi_fail_errno(ARD_ESYS, e, "cannot open '%s/lock'", b->dir);
    }
    return 0;
}

int ardb_open(struct ardb_books *b, const char *domain)
{
    return open_books(b, domain, true);
}

int ardb_open_existing(struct ardb_books *b, const char *domain)
{
    return open_books(b, domain, false);
}

int ardb_reopen_lock(struct ardb_books *b)
{
    if (b->lockfd >= 0)
        close(b->lockfd);
    b->lockfd = openat(b->dirfd, "lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (b->lockfd < 0)
        return ardi_fail_errno(ARD_ESYS, errno, "cannot open '%s/lock'", b->dir);
    return 0;
}

int ardb_lock(struct ardb_books *b)
{
    if (b->lockfd < 0) /* books that do not exist (ardb_open_existing): nothing to guard */
        return 0;
    while (flock(b->lockfd, LOCK_EX) < 0) {
        if (errno != EINTR)
            return ardi_fail(ARD_ESYS, "cannot lock the books in '%s': %s", b->dir,
                             strerror(errno));
    }
    return 0;
}

void ardb_unlock(struct ardb_books *b)
{
    if (b->lockfd < 0)
        return;
    (void)flock(b->lockfd, LOCK_UN);
}

/* Write `len` bytes to `file` in directory dfd (shown as `dir`) via .tmp + rename, so that
 * readers see the old or the new content, never half. No symbolic link is followed. */
static int write_atomic(int dfd, const char *dir, const char *file, const char *data, size_t len)
{
    if (dfd < 0)
        return ardi_fail(ARD_ESYS, "books of this domain are not open");
    int fd = openat(dfd, ".tmp", O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return ardi_fail_errno(ARD_ESYS, errno, "cannot write '%s/.tmp'", dir);
    size_t off = 0;
    while (off < len) {
        ssize_t w = write(fd, data + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0) {
            int e = errno;
            close(fd);
            unlinkat(dfd, ".tmp", 0);
            return ardi_fail_errno(ARD_ESYS, e, "cannot write '%s/.tmp'", dir);
        }
        off += (size_t)w;
    }
    close(fd);
    if (renameat(dfd, ".tmp", dfd, file) < 0) {
        int e = errno;
        unlinkat(dfd, ".tmp", 0);
        return ardi_fail_errno(ARD_ESYS, e, "cannot rename '%s/.tmp' to '%s'", dir, file);
    }
    return 0;
}

/* Read file `name` of directory dfd (no symbolic link followed) into buf, NUL-terminated.
 * 0, 1 if it does not exist, or an error naming `shown`. */
static int read_at(int dfd, const char *name, const char *shown, char *buf, size_t len)
{
    if (dfd < 0)
        return 1; /* books that do not exist hold nothing */
    int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? 1 : ardi_fail_errno(ARD_ESYS, errno, "cannot read '%s'", shown);
    size_t off = 0;
    for (;;) {
        ssize_t r = read(fd, buf + off, len - 1 - off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            close(fd);
            return ardi_fail_errno(ARD_ESYS, e, "cannot read '%s'", shown);
        }
        off += (size_t)r;
        if (r == 0 || off >= len - 1)
            break;
    }
    close(fd);
    buf[off] = '\0';
    return 0;
}

int ardb_next_seq(struct ardb_books *b, uint64_t *seq)
{
    char file[PATH_MAX + 8], text[32];
    snprintf(file, sizeof file, "%s/seq", b->dir);
    uint64_t v = 0;
    int rc = read_at(b->dirfd, "seq", file, text, sizeof text);
    if (rc < 0)
        return rc;
    if (rc != 0 || sscanf(text, "%" SCNu64, &v) != 1)
        v = 0;
    v++;
    int n = snprintf(text, sizeof text, "%" PRIu64 "\n", v);
    /* Rewritten in place, under the lock, by one write at offset 0: the counter only grows,
     * so the new text covers the old one. Only holders of the lock read it, and a process
     * that dies (even by SIGKILL) has made that small write or not - no new file and no
     * rename per start. A counter that cannot be read starts again at 1 (above). */
    int fd = openat(b->dirfd, "seq", O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return ardi_fail_errno(ARD_ESYS, errno, "cannot write '%s'", file);
    ssize_t w;
    do
        w = pwrite(fd, text, (size_t)n, 0);
    while (w < 0 && errno == EINTR);
    int e = errno;
    close(fd);
    if (w != n)
        return ardi_fail_errno(ARD_ESYS, w < 0 ? e : EIO, "cannot write '%s'", file);
    *seq = v;
    return 0;
}

int ardb_hosts(const struct ardb_books *b, struct ardb_host **out)
{
    *out = NULL;
    char file[PATH_MAX + 8];
    snprintf(file, sizeof file, "%s/hosts", b->dir);
    if (b->dirfd < 0)
        return 0;
    int fd = openat(b->dirfd, "hosts", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
    if (!f) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return e == ENOENT ? 0 : ardi_fail_errno(ARD_ESYS, e, "cannot read '%s'", file);
    }
    struct ardb_host *v = NULL;
    size_t n = 0, cap = 0;
    char line[ARDB_MAX_HOST + ARDB_MAX_RSH + PATH_MAX + 4];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        char *t1 = strchr(line, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
        if (!t2)
            continue;
        *t1 = *t2 = '\0';
        if (n == cap) {
            cap = cap ? 2 * cap : 4;
            struct ardb_host *nv = realloc(v, cap * sizeof *v);
            if (!nv) {
                free(v);
                fclose(f);
                return ardi_fail(ARD_ENOMEM, "out of memory");
            }
            v = nv;
        }
        ardb_copy(v[n].host, sizeof v[n].host, line);
        ardb_copy(v[n].rsh, sizeof v[n].rsh, t1 + 1);
        ardb_copy(v[n].bindir, sizeof v[n].bindir, t2 + 1);
        n++;
    }
    fclose(f);
    *out = v;
    return (int)n;
}

static int write_hosts(struct ardb_books *b, const struct ardb_host *v, int n)
{
    size_t len = 1;
    for (int i = 0; i < n; i++)
        len += strlen(v[i].host) + strlen(v[i].rsh) + strlen(v[i].bindir) + 3;
    char *text = malloc(len), *p = text;
    if (!text)
        return ardi_fail(ARD_ENOMEM, "out of memory");
    for (int i = 0; i < n; i++)
        p += sprintf(p, "%s\t%s\t%s\n", v[i].host, v[i].rsh, v[i].bindir);
    int rc = write_atomic(b->dirfd, b->dir, "hosts", text, (size_t)(p - text));
    free(text);
    return rc;
}

int ardb_note_host(struct ardb_books *b, const char *host, const char *rsh, const char *bindir)
{
    if (strpbrk(host, "\t\n") || strpbrk(rsh, "\t\n") || strpbrk(bindir, "\t\n"))
        return ardi_fail(ARD_EINVAL, "host '%s': tab or newline in host, transport or bindir",
                         host);
    if (ardb_lock(b) < 0)
        return ard_lasterror();
    struct ardb_host *v;
    int n = ardb_hosts(b, &v), rc = 0;
    if (n >= 0) {
        int i;
        for (i = 0; i < n && strcmp(v[i].host, host) != 0; i++) {
        }
        struct ardb_host *nv = i == n ? realloc(v, (size_t)(n + 1) * sizeof *v) : v;
        if (!nv) {
            rc = ardi_fail(ARD_ENOMEM, "out of memory");
        } else {
            v = nv;
            ardb_copy(v[i].host, sizeof v[i].host, host);
            ardb_copy(v[i].rsh, sizeof v[i].rsh, rsh);
            ardb_copy(v[i].bindir, sizeof v[i].bindir, bindir);
            rc = write_hosts(b, v, i == n ? n + 1 : n);
        }
        free(v);
    } else {
        rc = -1;
    }
    ardb_unlock(b);
    return rc;
}

void ardb_forget_host(struct ardb_books *b, const char *host)
{
    if (ardb_lock(b) < 0)
        return;
    struct ardb_host *v;
    int n = ardb_hosts(b, &v), k = 0;
    for (int i = 0; i < n; i++)
        if (strcmp(v[i].host, host) != 0)
            v[k++] = v[i];
    if (n > 0 && k != n && write_hosts(b, v, k) < 0) {
        /* stays listed; the next ardkill tries it again */
    }
    free(v);
    ardb_unlock(b);
}

/* "robot/arm" -> "robot+arm": '+' is not a name character, so the mapping is one-to-one. */
static void encode(const char *path, char *buf, size_t len)
{
    snprintf(buf, len, "%s", path);
    for (char *p = buf; *p; p++)
        if (*p == '/')
            *p = '+';
}

void ardb_log_path(const struct ardb_books *b, const char *path, char *buf, size_t len)
{
    char enc[ARDB_MAX_PATH];
    encode(path, enc, sizeof enc);
    snprintf(buf, len, "%s/log/%s.log", b->dir, enc);
}

/* "robot+arm.entry", the entry's file name in e/. */
static void entry_name(const char *path, char *buf, size_t len)
{
    char enc[ARDB_MAX_PATH];
    encode(path, enc, sizeof enc);
    snprintf(buf, len, "%s.entry", enc);
}

int ardb_read(const struct ardb_books *b, const char *path, struct ardb_entry *e)
{
    char name[ARDB_MAX_PATH + 8], file[PATH_MAX + 600];
    entry_name(path, name, sizeof name);
    snprintf(file, sizeof file, "%s/e/%s", b->dir, name);
    static _Thread_local char text[ARDB_MAX_CMD * 3 + 8192];
    int rc = read_at(b->efd, name, file, text, sizeof text);
    if (rc != 0)
        return rc;
    if (ardb_parse(text, e) < 0) {
        char cause[256]; /* the detail is also the destination: copied first */
        ardb_copy(cause, sizeof cause, ard_errdetail());
        return ardi_fail(ARD_ESTALE, "books entry '%s' is damaged: %s", file, cause);
    }
    return 0;
}

int ardb_write(const struct ardb_books *b, const struct ardb_entry *e)
{
    static _Thread_local char text[ARDB_MAX_CMD * 3 + 8192];
    int n = ardb_format(e, text, sizeof text);
    if (n < 0)
        return n;
    char dir[PATH_MAX + 8], name[ARDB_MAX_PATH + 8];
    snprintf(dir, sizeof dir, "%s/e", b->dir);
    entry_name(e->path, name, sizeof name);
    return write_atomic(b->efd, dir, name, text, (size_t)n);
}

int ardb_remove(const struct ardb_books *b, const char *path)
{
    char name[ARDB_MAX_PATH + 8];
    entry_name(path, name, sizeof name);
    if (b->efd < 0)
        return 1;
    if (unlinkat(b->efd, name, 0) < 0)
        return errno == ENOENT
                   ? 1
                   : ardi_fail_errno(ARD_ESYS, errno, "cannot remove '%s/e/%s'", b->dir, name);
    return 0;
}

int ardb_take_seq(struct ardb_books *b, const char *path, uint64_t seq, struct ardb_entry *was)
{
    if (ardb_lock(b) < 0)
        return ard_lasterror();
    int rc = ardb_read(b, path, was);
    if (rc == 0)
        rc = was->seq == seq ? ardb_remove(b, path) : 1;
    ardb_unlock(b);
    return rc;
}

int ardb_remove_seq(struct ardb_books *b, const char *path, uint64_t seq)
{
    struct ardb_entry e;
    return ardb_take_seq(b, path, seq, &e);
}

static int by_seq(const void *a, const void *b)
{
    const struct ardb_entry *x = a, *y = b;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int ardb_list(struct ardb_books *b, const char *prefix, struct ardb_entry **out)
{
    *out = NULL;
    b->damaged = 0;
    b->damage[0] = '\0';
    char dir[PATH_MAX + 8];
    snprintf(dir, sizeof dir, "%s/e", b->dir);
    if (b->efd < 0)
        return 0;                                /* books that do not exist hold nothing */
    int dfd = fcntl(b->efd, F_DUPFD_CLOEXEC, 0); /* its own descriptor for closedir */
    DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
    if (!d) {
        int e = errno;
        if (dfd >= 0)
            close(dfd);
        return ardi_fail_errno(ARD_ESYS, e, "cannot list '%s'", dir);
    }
    rewinddir(d);
    struct ardb_entry *v = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        size_t l = strlen(de->d_name);
        if (de->d_name[0] == '.' || l < 7 || strcmp(de->d_name + l - 6, ".entry") != 0)
            continue;
        char path[ARDB_MAX_PATH];
        if (l - 6 >= sizeof path)
            continue;
        memcpy(path, de->d_name, l - 6);
        path[l - 6] = '\0';
        for (char *p = path; *p; p++)
            if (*p == '+')
                *p = '/';
        if (prefix && *prefix && !ardb_under(path, prefix))
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            struct ardb_entry *nv = realloc(v, cap * sizeof *v);
            if (!nv) {
                free(v);
                closedir(d);
                return ardi_fail(ARD_ENOMEM, "out of memory");
            }
            v = nv;
        }
        int rc = ardb_read(b, path, &v[n]);
        if (rc == 1) /* removed meanwhile */
            continue;
        if (rc == ARD_ESTALE) {
            b->damaged++;
            ardb_copy(b->damage, sizeof b->damage, ard_errdetail());
            continue;
        }
        if (rc < 0) {
            free(v);
            closedir(d);
            return ard_lasterror();
        }
        n++;
    }
    closedir(d);
    if (n)
        qsort(v, n, sizeof *v, by_seq);
    *out = v;
    return (int)n;
}

/* ---- the entry text ------------------------------------------------------------------- */

/* Values are one line: backslash, newline and CR are escaped. */
static void put(char **p, char *end, const char *key, const char *val)
{
    int n = snprintf(*p, (size_t)(end - *p), "%s=", key);
    if (n < 0 || n >= end - *p) {
        *p = end;
        return;
    }
    *p += n;
    for (const char *s = val; *s && *p < end - 3; s++) {
        if (*s == '\\' || *s == '\n' || *s == '\r') {
            *(*p)++ = '\\';
            *(*p)++ = *s == '\\' ? '\\' : *s == '\n' ? 'n' : 'r';
        } else {
            *(*p)++ = *s;
        }
    }
    if (*p < end - 1)
        *(*p)++ = '\n';
    else
        *p = end;
}

static void putf(char **p, char *end, const char *key, const char *fmt, ...) ARDB_PRINTF(4, 5);
static void putf(char **p, char *end, const char *key, const char *fmt, ...)
{
    char v[64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v, sizeof v, fmt, ap);
    va_end(ap);
    put(p, end, key, v);
}

int ardb_format(const struct ardb_entry *e, char *buf, size_t len)
{
    char *p = buf, *end = buf + len;
    char parent[ARDB_MAX_PATH];
    ardb_copy(parent, sizeof parent, e->path);
    char *slash = strrchr(parent, '/');
    if (slash)
        *slash = '\0';
    else
        parent[0] = '\0';
    put(&p, end, "path", e->path);
    put(&p, end, "parent", parent);
    put(&p, end, "host", e->host);
    putf(&p, end, "remote", "%d", e->remote ? 1 : 0);
    if (e->remote) {
        put(&p, end, "rsh", e->rsh);
        put(&p, end, "bindir", e->bindir);
    }
    putf(&p, end, "seq", "%" PRIu64, e->seq);
    put(&p, end, "state", ardb_state_word(e->state));
    putf(&p, end, "code", "%d", e->code);
    putf(&p, end, "pid", "%ld", e->pid);
    putf(&p, end, "pid_start", "%llu", e->pid_start);
    putf(&p, end, "pgid", "%ld", e->pgid);
    putf(&p, end, "pgid_start", "%llu", e->pgid_start);
    putf(&p, end, "sup", "%ld", e->sup);
    putf(&p, end, "sup_start", "%llu", e->sup_start);
    putf(&p, end, "start_ns", "%" PRId64, e->start_ns);
    putf(&p, end, "end_ns", "%" PRId64, e->end_ns);
    put(&p, end, "cmd", e->cmd);
    put(&p, end, "log", e->log);
    if (e->restart || e->restarts || e->stopping) {
        putf(&p, end, "restart", "%d", e->restart);
        putf(&p, end, "restarts", "%d", e->restarts);
        put(&p, end, "last_state", ardb_state_word(e->last_state));
        putf(&p, end, "last_code", "%d", e->last_code);
        putf(&p, end, "stopping", "%d", e->stopping ? 1 : 0);
    }
    if (p >= end)
        return ardi_fail(ARD_EINVAL, "entry '%s' too long", e->path);
    *p = '\0';
    return (int)(p - buf);
}

static void unescape(char *dst, size_t len, const char *src, size_t n)
{
    size_t o = 0;
    for (size_t i = 0; i < n && o + 1 < len; i++) {
        char c = src[i];
        if (c == '\\' && i + 1 < n) {
            c = src[++i];
            c = c == 'n' ? '\n' : c == 'r' ? '\r' : c;
        }
        dst[o++] = c;
    }
    dst[o] = '\0';
}

static int num(const char *key, const char *v, long long lo, long long hi, long long *out)
{
    char *endp;
    errno = 0;
    long long x = strtoll(v, &endp, 10);
    if (errno || endp == v || *endp || x < lo || x > hi)
        return ardi_fail(ARD_EINVAL, "bad value '%s' for %s", v, key);
    *out = x;
    return 0;
}

int ardb_parse(const char *text, struct ardb_entry *e)
{
    memset(e, 0, sizeof *e);
    bool have_path = false, have_state = false;
    const char *line = text;
    while (*line) {
        const char *nl = strchr(line, '\n');
        size_t ll = nl ? (size_t)(nl - line) : strlen(line);
        const char *eq = memchr(line, '=', ll);
        if (!eq)
            return ardi_fail(ARD_EINVAL, "line without '='");
        char key[32];
        size_t kl = (size_t)(eq - line);
        if (kl >= sizeof key)
            return ardi_fail(ARD_EINVAL, "unknown key");
        memcpy(key, line, kl);
        key[kl] = '\0';
        const char *raw = eq + 1;
        size_t rl = ll - kl - 1;
        char v[ARDB_MAX_CMD];
        unescape(v, sizeof v, raw, rl);
        long long x = 0; /* set by num() when it returns 0 (gcc -O2 cannot see that) */
        int rc = 0;
        if (!strcmp(key, "path")) {
            ardb_copy(e->path, sizeof e->path, v);
            have_path = true;
        } else if (!strcmp(key, "host")) {
            ardb_copy(e->host, sizeof e->host, v);
        } else if (!strcmp(key, "rsh")) {
            ardb_copy(e->rsh, sizeof e->rsh, v);
        } else if (!strcmp(key, "bindir")) {
            ardb_copy(e->bindir, sizeof e->bindir, v);
        } else if (!strcmp(key, "cmd")) {
            ardb_copy(e->cmd, sizeof e->cmd, v);
        } else if (!strcmp(key, "log")) {
            ardb_copy(e->log, sizeof e->log, v);
        } else if (!strcmp(key, "state")) {
            rc = ardb_state_parse(v, &e->state);
            have_state = true;
        } else if (!strcmp(key, "remote")) {
            if ((rc = num(key, v, 0, 1, &x)) == 0)
                e->remote = x != 0;
        } else if (!strcmp(key, "seq")) {
            if ((rc = num(key, v, 0, LLONG_MAX, &x)) == 0)
                e->seq = (uint64_t)x;
        } else if (!strcmp(key, "code")) {
            if ((rc = num(key, v, INT_MIN, INT_MAX, &x)) == 0)
                e->code = (int)x;
        } else if (!strcmp(key, "pid")) {
            if ((rc = num(key, v, 0, INT_MAX, &x)) == 0)
                e->pid = (long)x;
        } else if (!strcmp(key, "pgid")) {
            if ((rc = num(key, v, 0, INT_MAX, &x)) == 0)
                e->pgid = (long)x;
        } else if (!strcmp(key, "sup")) {
            if ((rc = num(key, v, 0, INT_MAX, &x)) == 0)
                e->sup = (long)x;
        } else if (!strcmp(key, "sup_start")) {
            if ((rc = num(key, v, 0, LLONG_MAX, &x)) == 0)
                e->sup_start = (unsigned long long)x;
        } else if (!strcmp(key, "pid_start")) {
            if ((rc = num(key, v, 0, LLONG_MAX, &x)) == 0)
                e->pid_start = (unsigned long long)x;
        } else if (!strcmp(key, "pgid_start")) {
            if ((rc = num(key, v, 0, LLONG_MAX, &x)) == 0)
                e->pgid_start = (unsigned long long)x;
        } else if (!strcmp(key, "start_ns")) {
            if ((rc = num(key, v, 0, LLONG_MAX, &x)) == 0)
                e->start_ns = x;
        } else if (!strcmp(key, "end_ns")) {
            if ((rc = num(key, v, 0, LLONG_MAX, &x)) == 0)
                e->end_ns = x;
        } else if (!strcmp(key, "restart")) {
            if ((rc = num(key, v, 0, 2, &x)) == 0)
                e->restart = (int)x;
        } else if (!strcmp(key, "restarts")) {
            if ((rc = num(key, v, 0, INT_MAX, &x)) == 0)
                e->restarts = (int)x;
        } else if (!strcmp(key, "last_state")) {
            rc = ardb_state_parse(v, &e->last_state);
        } else if (!strcmp(key, "last_code")) {
            if ((rc = num(key, v, INT_MIN, INT_MAX, &x)) == 0)
                e->last_code = (int)x;
        } else if (!strcmp(key, "stopping")) {
            if ((rc = num(key, v, 0, 1, &x)) == 0)
                e->stopping = x != 0;
        } /* other keys (parent) are derived or from a newer version: ignored */
        if (rc < 0)
            return ard_lasterror();
        line = nl ? nl + 1 : line + ll;
    }
    if (!have_path || !have_state)
        return ardi_fail(ARD_EINVAL, "missing %s", have_path ? "state" : "path");
    if (ardb_check_path(e->path) < 0)
        return ard_lasterror();
    return 0;
}
