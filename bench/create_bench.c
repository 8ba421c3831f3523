/*
 * create_bench - what reserving a connection's object whole costs its create (docs/
 * performance.md, "Creating a connection: reserving its memory"). For packets of 1 KiB, 1 MiB
 * and 64 MiB it times, in turns round by round:
 *   - ard_create of an OUT port after ard_init (the library's whole create and attach), then
 *     ard_close and ard_conn_unlink, timed apart;
 *   - the object's creation as the library makes it now (shm_open, ftruncate to 0, the init
 *     marker, fallocate of the whole length, the header through a one-page mapping), and the
 *     same with ftruncate to the length instead of fallocate (how it was made before: sparse,
 *     the baseline);
 *   - each of those two followed by one store into every page of the object through a
 *     mapping (what a writer that fills every slot does over its first packets): where the
 *     reservation's cost goes when the pages are used anyway.
 *
 *   create_bench [ROUNDS]     (default 21; the median and the minimum of each are printed)
 */
#include "ardnet.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

enum {
    RAW_SPARSE,
    RAW_RESERVED,
    RAW_SPARSE_TOUCH,
    RAW_RESERVED_TOUCH,
    ARD_CREATE,
    ARD_REMOVE,
    NKIND
};
static const char *const kind_name[NKIND] = {
    "object made sparse (ftruncate): baseline", "object reserved (fallocate), as now",
    "sparse, then every page stored once",      "reserved, then every page stored once",
    "ard_create (OUT, after ard_init)",         "ard_close + ard_conn_unlink",
};

/* The object's creation as segment.c makes it; `reserve` picks fallocate or ftruncate. */
static int64_t raw_create(const char *shm, size_t total, int reserve, int touch)
{
    int64_t t0 = now_ns();
    int fd = shm_open(shm, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        perror("shm_open");
        exit(1);
    }
    const uint64_t magic = 0x54494e494e445241ull;
    if (ftruncate(fd, 0) < 0 || pwrite(fd, &magic, 8, 0) != 8 ||
        (reserve ? fallocate(fd, 0, 0, (off_t)total) : ftruncate(fd, (off_t)total)) < 0) {
        perror("create");
        exit(1);
    }
    uint64_t *h = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (h == MAP_FAILED) {
        perror("mmap");
        exit(1);
    }
    h[1] = 2;
    __atomic_store_n(&h[0], 0x31304e445241ull, __ATOMIC_RELEASE);
    munmap(h, 4096);
    if (touch) {
        volatile uint8_t *m = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (m == MAP_FAILED) {
            perror("mmap");
            exit(1);
        }
        for (size_t off = 4096; off < total; off += 4096)
            m[off] = 1;
        munmap((void *)m, total);
    }
    close(fd);
    int64_t t = now_ns() - t0;
    shm_unlink(shm);
    return t;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 21;
    if (rounds < 1)
        rounds = 21;
    char domain[64], shm[128];
    snprintf(domain, sizeof domain, "bench_create_%d", (int)getpid());
    if (ard_set_domain(domain) < 0) {
        fprintf(stderr, "create_bench: %s\n", ard_errdetail());
        return 1;
    }
    int ac = 1;
    char *av[] = {"create_bench", NULL};
    if (ard_init(&ac, av) < 0) {
        fprintf(stderr, "create_bench: %s\n", ard_errdetail());
        return 1;
    }
    static const size_t sizes[] = {1024, 1u << 20, 64u << 20};
    static const char *const size_name[] = {"1 KiB", "1 MiB", "64 MiB"};
    printf("create_bench: %d rounds; median (min) per create, microseconds\n", rounds);
    for (size_t si = 0; si < 3; si++) {
        size_t size = sizes[si];
        int64_t *t[NKIND];
        for (int k = 0; k < NKIND; k++)
            t[k] = calloc((size_t)rounds, sizeof *t[k]);
        size_t total = 0;
        for (int r = -1; r < rounds; r++) { /* round -1: warm-up, not counted */
            int64_t t0 = now_ns();
            ard_port *p = ard_create("c", ARD_OUT, size, NULL);
            int64_t t1 = now_ns();
            if (p == NULL) {
                fprintf(stderr, "create_bench: %s\n", ard_errdetail());
                return 1;
            }
            if (total == 0) {
                struct stat st;
                snprintf(shm, sizeof shm, "/dev/shm/ard.%s.c", domain);
                if (stat(shm, &st) < 0) {
                    perror(shm);
                    return 1;
                }
                total = (size_t)st.st_size;
            }
            ard_close(p);
            if (ard_conn_unlink(NULL, "c") < 0) {
                fprintf(stderr, "create_bench: %s\n", ard_errdetail());
                return 1;
            }
            int64_t t2 = now_ns();
            snprintf(shm, sizeof shm, "/ard.%s.raw", domain);
            int64_t raw[4];
            for (int k = 0; k < 4; k++)
                raw[k] = raw_create(shm, total, k & 1, k >> 1);
            if (r >= 0) {
                t[ARD_CREATE][r] = t1 - t0;
                t[ARD_REMOVE][r] = t2 - t1;
                for (int k = 0; k < 4; k++)
                    t[k][r] = raw[k];
            }
        }
        printf("\npacket %s (object %zu bytes)\n", size_name[si], total);
        double base = 0;
        for (int k = 0; k < NKIND; k++) {
            qsort(t[k], (size_t)rounds, sizeof *t[k], cmp_i64);
            double med = (double)t[k][rounds / 2] / 1e3, min = (double)t[k][0] / 1e3;
            if (k == RAW_SPARSE)
                base = med;
            printf("  %-42s %12.1f (%10.1f)", kind_name[k], med, min);
            if (k == RAW_RESERVED && base > 0)
                printf("  %.2fx the baseline", med / base);
            putchar('\n');
            free(t[k]);
        }
    }
    ard_fini();
    return 0;
}
