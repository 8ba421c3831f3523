/*
 * new.c - `ardrun --new NAME [-o FILE]`: a new plugin source from the template (template.c,
 * built into ardrun and compiled as a test plugin, so the template always builds).
 */
#include "ardrun.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const unsigned char template_text[] = {
#include "template.inc"
};

int ardr_cmd_new(int argc, char **argv)
{
    const char *name = NULL, *file = NULL;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "-o") && i + 1 < argc)
            file = argv[++i];
        else if (!name && argv[i][0] != '-')
            name = argv[i];
        else {
            fprintf(stderr, "usage: ardrun --new NAME [-o FILE]\n");
            return ARDR_EXIT_USAGE;
        }
    }
    bool ok = name && *name && strlen(name) <= ARDR_NAME_MAX && !(name[0] >= '0' && name[0] <= '9');
    for (const char *p = name; ok && *p; p++)
        ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
             *p == '_';
    if (!ok) {
        fprintf(stderr,
                "ardrun --new: '%s' is not a block name (a C identifier: [A-Za-z0-9_], "
                "at most 31 characters)\n",
                name ? name : "");
        return ARDR_EXIT_USAGE;
    }
    char def[ARDR_NAME_MAX + 8];
    if (file == NULL) {
        snprintf(def, sizeof def, "%s.c", name);
        file = def;
    }
    int fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
        fprintf(stderr, "ardrun --new: %s: %s%s\n", file, strerror(errno),
                errno == EEXIST ? " (not overwritten)" : "");
        return errno == EEXIST ? ARDR_EXIT_USAGE : ARDR_EXIT_SYS;
    }
    FILE *f = fdopen(fd, "w");
    const char *t = (const char *)template_text, *end = t + sizeof template_text;
    static const char key[] = "TEMPLATE";
    while (f && t < end) {
        const char *hit = memmem(t, (size_t)(end - t), key, sizeof key - 1);
        size_t n = hit ? (size_t)(hit - t) : (size_t)(end - t);
        fwrite(t, 1, n, f);
        if (!hit)
            break;
        fputs(name, f);
        t = hit + sizeof key - 1;
    }
    if (f == NULL || fclose(f) != 0) {
        fprintf(stderr, "ardrun --new: %s: write failed\n", file);
        return ARDR_EXIT_SYS;
    }
    printf("wrote %s (build: cc -shared -fPIC -O2 -o %s.so %s $(pkg-config --cflags ardnet))\n",
           file, name, file);
    return 0;
}
