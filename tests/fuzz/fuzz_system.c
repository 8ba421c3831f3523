/*
 * fuzz_system.c - libFuzzer target for ardstart's YAML system description: as_start_system in
 * its dry-run mode (ardstart --system --dry-run), which parses, checks and generates the
 * master script without starting anything. The input is the file; the roles "arm" and "base"
 * are mapped to hosts as --set-host would.
 * Invariants checked: the result is AS_OK or AS_USAGE (AS_SYS only if memory ran out, which is
 * reported); a description that is accepted prints one master script ending in the documented
 * "ardstart --ready" and "exec sleep infinity" lines and nothing else, a refused one prints
 * nothing on stdout.
 */
#include "ardstart.h"
#include "fuzz.h"

#include <fcntl.h>
#include <string.h>

/* Referenced by the starting code, which a dry run never reaches. Weak, so that the real
 * ones win if they are linked in with the rest of ardstart. */
__attribute__((weak)) int as_entry_path(const struct as_opts *o, const char *name, char *path,
                                        size_t len)
{
    abort();
}

static int out_fd = -1;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    setenv("ARD_DOMAIN", "fuzz", 1);
    setenv("ARD_HOST", "hostA", 1);
    /* stdout goes to a memory file that each input's check reads back. */
    out_fd = memfd_create("ard-fuzz-stdout", MFD_CLOEXEC);
    FUZZ_CHECK(out_fd >= 0);
    FUZZ_CHECK(fcntl(out_fd, F_SETFL, O_APPEND) == 0);
    fflush(stdout);
    FUZZ_CHECK(dup2(out_fd, STDOUT_FILENO) == STDOUT_FILENO);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size);
    static const char *hostmap[] = {"arm=hostB", "base=10.0.0.2"};
    struct as_opts o = {0};
    o.dry_run = true;
    o.quiet = true;
    o.hostmap = hostmap;
    o.nhostmap = 2;
    FUZZ_CHECK(ftruncate(out_fd, 0) == 0);
    int rc = as_start_system(NULL, &o, path);
    fflush(stdout);
    off_t len = lseek(out_fd, 0, SEEK_END);
    FUZZ_CHECK(len >= 0);
    FUZZ_CHECK(rc == AS_OK || rc == AS_USAGE || rc == AS_SYS);
    if (rc != AS_OK) {
        FUZZ_CHECK(len == 0);
        return 0;
    }
    static const char tail[] = "ardstart --ready\nexec sleep infinity\n";
    char *out = malloc((size_t)len + 1);
    FUZZ_CHECK(out != NULL);
    FUZZ_CHECK(pread(out_fd, out, (size_t)len, 0) == len);
    out[len] = '\0';
    FUZZ_CHECK((size_t)len > sizeof tail - 1);
    FUZZ_CHECK(strcmp(out + len - (sizeof tail - 1), tail) == 0);
    FUZZ_CHECK(strlen(out) == (size_t)len); /* no NUL byte from the input reaches the script */
    free(out);
    return 0;
}
