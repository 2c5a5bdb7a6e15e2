/*
 * version.h — what this build is: the release version, the git commit it
 * was configured from, and the compute backends compiled in.  Printed by
 * every program's --version and exported as czk_build_info.
 */
#ifndef CZK_VERSION_H
#define CZK_VERSION_H

#include <stdio.h>

const char *czk_version(void);  /* "0.5.0" */
const char *czk_commit(void);   /* short git hash, "unknown" outside a git checkout */
const char *czk_backends(void); /* "cpu" or "cpu,cuda" */

/* "<prog> <version> (commit <hash>, backends <list>)\n" on f */
void czk_version_print(FILE *f, const char *prog);

#endif
