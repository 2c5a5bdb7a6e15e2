/*
 * conf_check.c — checks the packaged configuration file against the parser
 * the daemons use (common/runtime/config.c).
 *
 * usage: conf_check FILE [section.key=value ...]
 *
 * Loads FILE over the built-in defaults, as a daemon does; then applies each
 * assignment, one at a time, to a copy of that result and requires the copy
 * to be byte for byte unchanged: an assignment that the file shows commented
 * out as "the default" must be one.  Assignments to [circuit.NAME] add a
 * circuit, so they are only required to parse.  Exit 0 when all hold, 1
 * otherwise, naming each failure on stderr.
 */
#include <stdio.h>
#include <string.h>

#include "common/runtime/config.h"

int main(int argc, char **argv)
{
    static czk_config loaded, copy;
    czk_error e = {0};
    int fail = 0;

    if (argc < 2) {
        fprintf(stderr, "usage: conf_check FILE [section.key=value ...]\n");
        return 2;
    }
    czk_config_defaults(&loaded);
    if (czk_config_load(&loaded, argv[1], &e) < 0) {
        fprintf(stderr, "conf_check: %s\n", e.msg);
        return 1;
    }
    for (int i = 2; i < argc; i++) {
        memcpy(&copy, &loaded, sizeof(copy));
        memset(&e, 0, sizeof(e));
        if (czk_config_set(&copy, argv[i], &e) < 0) {
            fprintf(stderr, "conf_check: %s: %s\n", argv[i], e.msg);
            fail = 1;
            continue;
        }
        if (!strncmp(argv[i], "circuit.", 8))
            continue;
        if (memcmp(&copy, &loaded, sizeof(copy)) != 0) {
            fprintf(stderr, "conf_check: %s is not the default (config.c czk_config_defaults)\n", argv[i]);
            fail = 1;
        }
    }
    return fail;
}
