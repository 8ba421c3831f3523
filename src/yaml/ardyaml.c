/* ardyaml.c - the nesting-depth guard of the project's YAML loaders. */
#include "ardyaml.h"

#include "ard_common.h"

#include <errno.h>
#include <stdbool.h>
#include <yaml.h>

/* The largest configuration file taken from a pipe; a file on disk has no such limit. */
#define ARDY_PIPE_MAX (64u << 20)

/* A pipe (`ardrun /dev/stdin`, `... --config <(...)`) cannot be read twice: copy it into an
 * anonymous temporary file, which replaces *f. */
static int make_rereadable(const char *file, FILE **f)
{
    if (fseeko(*f, 0, SEEK_CUR) == 0)
        return 0;
    if (errno != ESPIPE)
        return ardi_fail_errno(ARD_ESYS, errno, "%s: cannot read", file);
    FILE *tmp = tmpfile();
    if (tmp == NULL)
        return ardi_fail_errno(ARD_ESYS, errno, "%s: cannot keep a copy of the pipe", file);
    char buf[16384];
    size_t n, total = 0;
    while ((n = fread(buf, 1, sizeof buf, *f)) > 0) {
        total += n;
        if (total > ARDY_PIPE_MAX) {
            fclose(tmp);
            return ardi_fail(ARD_EINVAL, "%s: larger than %u MiB (read from a pipe)", file,
                             ARDY_PIPE_MAX >> 20);
        }
        if (fwrite(buf, 1, n, tmp) != n) {
            int e = errno;
            fclose(tmp);
            return ardi_fail_errno(ARD_ESYS, e, "%s: cannot keep a copy of the pipe", file);
        }
    }
    if (ferror(*f)) {
        int e = errno;
        fclose(tmp);
        return ardi_fail_errno(ARD_ESYS, e, "%s: cannot read", file);
    }
    fclose(*f);
    rewind(tmp);
    *f = tmp;
    return 0;
}

int ardy_check_depth(const char *file, FILE **fp, int max_depth)
{
    int rc = make_rereadable(file, fp);
    if (rc < 0)
        return rc;
    FILE *f = *fp;
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p))
        return ardi_fail(ARD_ENOMEM, "%s: out of memory", file);
    yaml_parser_set_input_file(&p, f);
    int depth = 0;
    for (bool end = false; !end;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&p, &ev))
            break; /* the loader reports it */
        if (ev.type == YAML_MAPPING_START_EVENT || ev.type == YAML_SEQUENCE_START_EVENT) {
            if (++depth > max_depth) {
                rc = ardi_fail(ARD_EINVAL, "%s:%zu:%zu: nested deeper than %d levels", file,
                               ev.start_mark.line + 1, ev.start_mark.column + 1, max_depth);
                end = true;
            }
        } else if (ev.type == YAML_MAPPING_END_EVENT || ev.type == YAML_SEQUENCE_END_EVENT) {
            depth--;
        } else if (ev.type == YAML_STREAM_END_EVENT) {
            end = true;
        }
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&p);
    rewind(f);
    return rc;
}
