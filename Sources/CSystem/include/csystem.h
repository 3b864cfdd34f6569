#ifndef CSYSTEM_H
#define CSYSTEM_H

/*
 * Linux constants that glibc declares only under _GNU_SOURCE, which Swift's Glibc module is
 * built without. They are variables, not macros: a header's #define _GNU_SOURCE would not reach
 * <fcntl.h>, which the module system has already built; csystem.c is compiled with it.
 */

#ifdef __cplusplus
extern "C" {
#endif

/* O_TMPFILE: open(2) a directory to get an unnamed regular file in it. */
extern const int csystem_o_tmpfile;
/* AT_EMPTY_PATH: linkat(2) and friends act on the descriptor itself when the path is "". */
extern const int csystem_at_empty_path;

#ifdef __cplusplus
}
#endif

#endif
