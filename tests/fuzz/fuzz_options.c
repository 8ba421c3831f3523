/*
 * fuzz_options.c - libFuzzer target for the standard options: ard_init on a fuzzed argv. The
 * input is the arguments after argv[0], separated by NUL bytes (at most 32).
 *
 * ard_init attaches the declared ports, so the target first tries to give itself a private
 * /dev/shm (a mount namespace with its own tmpfs; needs root): then it declares three ports
 * per input and removes every object it made afterwards. Without that it declares none, and
 * only the parsing is tried. The realtime requests are not carried out: mlockall,
 * sched_setaffinity and sched_setscheduler are replaced below by versions that check the
 * request and do nothing, and "--ard-help" (which prints and exits, as documented) is left out.
 *
 * Invariants checked: ard_init returns 0 or a negative ARD_E* code with a detail message; on
 * success the remaining argv is the original one minus the standard options (same order,
 * argv[argc] NULL, no --ard option before a "--"), every port is wired to a valid connection
 * name, and the realtime requests that reached the system are in range.
 */
#include "ardnet.h"
#include "fuzz.h"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mount.h>

#define MAX_ARGS 32

static bool private_shm;

int mlockall(int flags)
{
    FUZZ_CHECK(flags == (MCL_CURRENT | MCL_FUTURE));
    return 0;
}

int sched_setaffinity(pid_t pid, size_t len, const cpu_set_t *set)
{
    FUZZ_CHECK(pid == 0 && len == sizeof(cpu_set_t));
    FUZZ_CHECK(CPU_COUNT(set) > 0);
    return 0;
}

int sched_setscheduler(pid_t pid, int policy, const struct sched_param *sp)
{
    FUZZ_CHECK(pid == 0 && policy == SCHED_FIFO);
    FUZZ_CHECK(sp->sched_priority >= 1 && sp->sched_priority <= 99);
    return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    setenv("ARD_DOMAIN", "fuzz", 1);
    unsetenv("ARD_READY_FD");
    unsetenv("ARD_SHM_MODE");
    unsetenv("ARD_SPIN_NS");
    private_shm = unshare(CLONE_NEWNS) == 0 &&
                  mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0 &&
                  mount("ard-fuzz", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "size=16m") == 0;
    fprintf(stderr, "fuzz_options: %s\n",
            private_shm ? "private /dev/shm: ports declared and attached"
                        : "no private /dev/shm (not root?): no ports, parsing only");
    return 0;
}

static void clean_shm(void)
{
    DIR *d = opendir("/dev/shm");
    FUZZ_CHECK(d != NULL);
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            unlinkat(dirfd(d), e->d_name, 0);
    closedir(d);
}

static bool is_ard_option(const char *a)
{
    return strncmp(a, "--ard", 5) == 0 && (a[5] == '\0' || a[5] == '=' || a[5] == '-');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return -1;
    char *buf = malloc(size + 1);
    FUZZ_CHECK(buf != NULL);
    memcpy(buf, data, size);
    buf[size] = '\0';

    char *argv[MAX_ARGS + 2], *orig[MAX_ARGS + 2];
    int argc = 0;
    argv[argc++] = "fuzz";
    for (char *p = buf; p < buf + size && argc <= MAX_ARGS; p += strlen(p) + 1)
        if (strcmp(p, "--ard-help") != 0)
            argv[argc++] = p;
    argv[argc] = NULL;
    memcpy(orig, argv, sizeof argv);
    int orig_argc = argc;

    ard_port *ports[3] = {NULL, NULL, NULL};
    if (private_shm) {
        ports[0] = ard_create("in", ARD_IN, 8, "u64");
        ports[1] = ard_create("out", ARD_OUT, 16, "f64 f32");
        ports[2] = ard_create_on("raw", "shared.raw", ARD_IN, 40, NULL);
        FUZZ_CHECK(ports[0] && ports[1] && ports[2]);
    }

    int rc = ard_init(&argc, argv);
    if (rc < 0) {
        FUZZ_CHECK(rc > -100);
        FUZZ_CHECK(ard_errdetail()[0] != '\0');
    } else {
        FUZZ_CHECK(rc == 0);
        FUZZ_CHECK(argc >= 1 && argc <= orig_argc && argv[argc] == NULL);
        FUZZ_CHECK(argv[0] == orig[0]);
        int j = 1;
        bool after_dashes = false;
        for (int i = 1; i < argc; i++) {
            while (j < orig_argc && orig[j] != argv[i])
                j++;
            FUZZ_CHECK(j < orig_argc); /* an original argument, in the original order */
            j++;
            if (strcmp(argv[i], "--") == 0)
                after_dashes = true;
            FUZZ_CHECK(after_dashes || !is_ard_option(argv[i]));
        }
        for (int i = 0; i < 3 && ports[i]; i++) {
            const char *c = ard_port_connection(ports[i]);
            size_t len = strlen(c);
            FUZZ_CHECK(len >= 1 && len <= ARD_MAX_NAME);
            FUZZ_CHECK(strspn(c, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                 "0123456789_.-") == len);
        }
    }
    ard_fini();
    if (private_shm)
        clean_shm();
    free(buf);
    return 0;
}
