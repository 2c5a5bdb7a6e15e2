/* version.c — build identity (see version.h); the values come from CMake. */
#include "common/runtime/version.h"

#ifndef CZK_VERSION_STR
#error "CZK_VERSION_STR is set by common/CMakeLists.txt"
#endif

const char *czk_version(void) { return CZK_VERSION_STR; }
const char *czk_commit(void) { return CZK_COMMIT_STR; }
const char *czk_backends(void) { return CZK_BACKENDS_STR; }

void czk_version_print(FILE *f, const char *prog)
{
    fprintf(f, "%s %s (commit %s, backends %s)\n", prog, czk_version(), czk_commit(), czk_backends());
}
