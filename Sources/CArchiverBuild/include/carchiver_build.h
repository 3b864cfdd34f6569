#ifndef CARCHIVER_BUILD_H
#define CARCHIVER_BUILD_H

/*
 * What the build was made from, set by the Makefile through Package.swift
 * (ARCHIVER_COMMIT in the environment of `swift build`); "unknown" for a plain `swift build`.
 */

#ifdef __cplusplus
extern "C" {
#endif

/* The git commit the binary was built from (e.g. "987fb71a2c3d", "987fb71a2c3d-dirty"), or "unknown". */
const char *carchiver_build_commit(void);

#ifdef __cplusplus
}
#endif

#endif
