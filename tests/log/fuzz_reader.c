/* fuzz_reader.c - libFuzzer target on the recording reader: any bytes given as a file are
 * refused with an offset and a cause, or read to the end, never a crash or a hang.
 * Built with -DARD_FUZZ=ON (clang); seeds in tests/log/corpus. */
#include "ardnet_log.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (ard_log_check(data, size) != 0 && strstr(ard_errdetail(), "at offset ") == NULL)
        __builtin_trap(); /* every refusal names the offset */
    int fd = memfd_create("fuzz.mcap", 0);
    if (fd < 0)
        return 0;
    if (write(fd, data, size) != (ssize_t)size) {
        close(fd);
        return 0;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    ard_logr *r = ard_logr_open(path);
    if (r) {
        struct ard_log_summary s;
        ard_logr_summary(r, &s);
        struct ard_log_msg m;
        uint64_t n = 0;
        while (ard_logr_next(r, &m) == 1)
            n++;
        if (n != s.messages)
            __builtin_trap(); /* reading finds what the check counted */
        if (ard_logr_seek(r, s.end_ns) == 0)
            while (ard_logr_next(r, &m) == 1)
                ;
        ard_logr_close(r);
    }
    close(fd);
    return 0;
}
