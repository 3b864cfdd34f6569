#include "carchiver_build.h"

/* A C define, not a generated Swift file: the value comes from the environment without writing
 * into the tree, and only this file is rebuilt when it changes. */
#ifndef CARCHIVER_COMMIT
#define CARCHIVER_COMMIT "unknown"
#endif

const char *carchiver_build_commit(void) {
    return CARCHIVER_COMMIT;
}
