/*
 * rsh.c - the remote-shell transport (ssh by default) and running a helper with a deadline.
 */
#include "books.h"

#include "ard_common.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

const char *ardb_rsh(const char *opt)
{
    if (opt && *opt)
        return opt;
    const char *env = getenv("ARD_RSH");
    return env && *env ? env : ARDB_DEFAULT_RSH;
}

void ardb_str_add(struct ardb_str *s, const char *text)
{
    ardc_put(s, text, strlen(text));
    if (s->oom)
        abort();
}

void ardb_str_addf(struct ardb_str *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ardc_vprintf(s, fmt, ap);
    va_end(ap);
    if (s->oom)
        abort();
}

void ardb_str_quote(struct ardb_str *s, const char *arg)
{
    if (s->len)
        ardb_str_add(s, " ");
    /* Plain words stay readable; anything else goes in '...' with ' as '\''. */
    bool plain = *arg != '\0';
    for (const char *p = arg; *p; p++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+@%", *p))
            plain = false;
    if (plain) {
        ardb_str_add(s, arg);
        return;
    }
    ardb_str_add(s, "'");
    for (const char *p = arg; *p; p++) {
        if (*p == '\'') {
            ardb_str_add(s, "'\\''");
        } else {
            char c[2] = {*p, 0};
            ardb_str_add(s, c);
        }
    }
    ardb_str_add(s, "'");
}

void ardb_str_free(struct ardb_str *s)
{
    ardc_free(s);
}

void ardb_argv_free(char **argv)
{
    if (!argv)
        return;
    for (char **p = argv; *p; p++)
        free(*p);
    free(argv);
}

int ardb_rsh_argv(const char *rsh, const char *host, const char *remote_cmd, char ***out)
{
    *out = NULL;
    size_t cap = strlen(rsh) / 2 + 4, n = 0;
    char **argv = calloc(cap, sizeof *argv);
    char *word = malloc(strlen(rsh) + 1);
    if (!argv || !word) {
        free(argv);
        free(word);
        return ardi_fail(ARD_ENOMEM, "out of memory");
    }
    const char *p = rsh;
    for (;;) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p)
            break;
        size_t w = 0;
        while (*p && *p != ' ' && *p != '\t') {
            if (*p == '\'' || *p == '"') {
                char q = *p++;
                while (*p && *p != q)
                    word[w++] = *p++;
                if (*p != q) {
                    free(word);
                    ardb_argv_free(argv);
                    return ardi_fail(ARD_ESYS, "transport '%s': unbalanced %c", rsh, q);
                }
                p++;
            } else {
                word[w++] = *p++;
            }
        }
        word[w] = '\0';
        argv[n++] = strdup(word);
    }
    free(word);
    if (n == 0) {
        ardb_argv_free(argv);
        return ardi_fail(ARD_ESYS, "transport command is empty");
    }
    argv[n++] = strdup(host);
    argv[n++] = strdup(remote_cmd);
    argv[n] = NULL;
    for (size_t i = 0; i < n; i++)
        if (!argv[i]) {
            ardb_argv_free(argv);
            return ardi_fail(ARD_ENOMEM, "out of memory");
        }
    *out = argv;
    return 0;
}

int ardb_run(char *const argv[], int64_t timeout_ms, struct ardb_str *out, int *status)
{
    int pfd[2] = {-1, -1}, efd[2];
    if (out && pipe2(pfd, O_CLOEXEC) < 0)
        return ardi_fail(ARD_ESYS, "pipe: %s", strerror(errno));
    /* Exec failure is reported through a close-on-exec pipe, so "not found" is an error
     * of ours, not an exit status 127 that could also come from the remote side. */
    if (pipe2(efd, O_CLOEXEC) < 0) {
        if (out) {
            close(pfd[0]);
            close(pfd[1]);
        }
        return ardi_fail(ARD_ESYS, "pipe: %s", strerror(errno));
    }
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        if (out) {
            close(pfd[0]);
            close(pfd[1]);
        }
        close(efd[0]);
        close(efd[1]);
        return ardi_fail(ARD_ESYS, "fork: %s", strerror(e));
    }
    if (pid == 0) {
        setpgid(0, 0); /* so that a timeout can kill ssh and whatever it started */
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0) {
            dup2(devnull, 0);
            close(devnull);
        }
        if (out)
            dup2(pfd[1], 1);
        execvp(argv[0], argv);
        ardb_exec_failed(efd[1], errno);
    }
    close(efd[1]);
    int e = ardb_exec_result(efd[0]);
    if (e != 0) {
        waitpid(pid, NULL, 0);
        if (out) {
            close(pfd[0]);
            close(pfd[1]);
        }
        return ardi_fail(ARD_ESYS, "cannot execute '%s': %s", argv[0], strerror(e));
    }
    if (out)
        close(pfd[1]);
    int64_t deadline = timeout_ms > 0 ? ardb_mono_ns() + timeout_ms * 1000000LL : 0;
    bool timed_out = false, exited = false;
    int st = 0;
    for (;;) {
        if (!exited && waitpid(pid, &st, WNOHANG) == pid)
            exited = true;
        bool open = out && pfd[0] >= 0;
        if (exited && !open)
            break;
        if (deadline && ardb_mono_ns() > deadline) {
            if (!exited) {
                timed_out = true;
                kill(-pid, SIGKILL);
                kill(pid, SIGKILL);
                waitpid(pid, &st, 0);
            }
            break;
        }
        if (!open) {
            ardb_sleep_ns(2000000);
            continue;
        }
        struct pollfd pf = {pfd[0], POLLIN, 0};
        int pr = poll(&pf, 1, exited ? 100 : 20);
        if (pr == 0 && exited)
            break; /* a leaked writer (a grandchild) keeps the pipe open: stop reading */
        if (pr <= 0)
            continue;
        char buf[4096];
        ssize_t n = read(pfd[0], buf, sizeof buf - 1);
        if (n > 0) {
            buf[n] = '\0';
            ardb_str_add(out, buf);
        } else if (n == 0 || errno != EINTR) {
            close(pfd[0]);
            pfd[0] = -1;
        }
    }
    if (out && pfd[0] >= 0)
        close(pfd[0]);
    if (out && !out->s)
        ardb_str_add(out, "");
    *status = st;
    return timed_out ? 1 : 0;
}
