#define _GNU_SOURCE
#include <fcntl.h>

#include "csystem.h"

const int csystem_o_tmpfile = O_TMPFILE;
const int csystem_at_empty_path = AT_EMPTY_PATH;
