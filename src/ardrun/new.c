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

/* Is name a block name (a C identifier of at most ARDR_NAME_MAX characters)? */
static bool block_name_ok(const char *name)
{
    bool ok = *name && strlen(name) <= ARDR_NAME_MAX && !(name[0] >= '0' && name[0] <= '9');
    for (const char *p = name; ok && *p; p++)
        ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
             *p == '_';
    return ok;
}

/* The template into f with NAME for each TEMPLATE; 0 or ARD_ESYS. */
static int write_template(FILE *f, const char *name)
{
    const char *t = (const char *)template_text, *end = t + sizeof template_text;
    static const char key[] = "TEMPLATE";
    while (t < end) {
        const char *hit = memmem(t, (size_t)(end - t), key, sizeof key - 1);
        size_t n = hit ? (size_t)(hit - t) : (size_t)(end - t);
        fwrite(t, 1, n, f);
        if (!hit)
            break;
        fputs(name, f);
        t = hit + sizeof key - 1;
    }
    return ferror(f) ? ARD_ESYS : 0;
}

int ardr_cmd_new(int argc, char **argv)
{
    struct ardr_args a = {
        .where = ARDR_W_NEW, .first = 2, .maxwords = 1, .unknown = "unknown argument '%s'"};
    int rc = ardr_args_parse(&ardr_optset, &a, argc, argv);
    bool form = rc == 0 && a.nlib == 1;
    ardr_args_free(&a);
    if (!form) {
        fprintf(stderr, "usage: ardrun --new NAME [-o FILE]\n");
        return ARDR_EXIT_USAGE;
    }
    const char *name = a.nwords ? a.words[0] : NULL, *file = a.output;
    if (name == NULL || !block_name_ok(name)) {
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
    rc = f ? write_template(f, name) : ARD_ESYS;
    if (f && fclose(f) != 0)
        rc = ARD_ESYS;
    if (rc != 0) {
        fprintf(stderr, "ardrun --new: %s: write failed\n", file);
        return ARDR_EXIT_SYS;
    }
    printf("wrote %s (build: cc -shared -fPIC -O2 -o %s.so %s $(pkg-config --cflags ardnet))\n",
           file, name, file);
    return 0;
}
