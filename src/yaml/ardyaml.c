/* ardyaml.c - the nesting-depth guard of the project's YAML loaders. */
#include "ardyaml.h"

#include "ardi.h"

#include <stdbool.h>
#include <yaml.h>

int ardy_check_depth(const char *file, FILE *f, int max_depth)
{
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p))
        return ardi_fail(ARD_ENOMEM, "%s: out of memory", file);
    yaml_parser_set_input_file(&p, f);
    int depth = 0, rc = 0;
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
