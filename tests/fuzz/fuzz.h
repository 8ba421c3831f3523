/*
 * fuzz.h - helpers shared by the libFuzzer targets (header only, one translation unit each).
 */
#ifndef ARD_FUZZ_H
#define ARD_FUZZ_H

#include <sanitizer/common_interface_defs.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* An invariant broken: say which and abort, so that libFuzzer keeps the input. The message
 * goes through the sanitizers' report channel, which -close_fd_mask=2 keeps open. */
#define FUZZ_CHECK(cond)                                                                           \
    do {                                                                                           \
        if (!(cond))                                                                               \
            fuzz_broken(__FILE__, __LINE__, #cond);                                                \
    } while (0)

static inline void fuzz_broken(const char *file, int line, const char *what)
{
    char msg[512];
    snprintf(msg, sizeof msg, "invariant broken at %s:%d: %s", file, line, what);
    __sanitizer_report_error_summary(msg);
    abort();
}

/* The input as a file that the parsers open by name: a memory file (nothing touches the
 * disk), rewritten for each input, named through /proc/self/fd. */
static inline const char *fuzz_file(const uint8_t *data, size_t size)
{
    static int fd = -1;
    static char path[64];
    if (fd < 0) {
        fd = memfd_create("ard-fuzz-input", MFD_CLOEXEC);
        if (fd < 0) {
            perror("memfd_create");
            abort();
        }
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    if (ftruncate(fd, 0) < 0 || (size && pwrite(fd, data, size, 0) != (ssize_t)size)) {
        perror("fuzz input file");
        abort();
    }
    return path;
}

#endif
