/* Shared libraries a backend or transport loads when a context first needs it, not when
 * libtessera loads (library.c). libtessera names cuBLAS, cuSOLVER and NCCL without linking them:
 * the files that call them declare every function they use weak (TSR_WEAK over their lists) and
 * the library binds calls at their first use (it is linked with -z lazy), by which time the
 * backend has loaded them here, into the process's global scope. A process that never gives a
 * GPU work (a CPU-only program, a test, `tessera --help`) starts without mapping them. */
#ifndef TSR_DEVICE_LIBRARY_H
#define TSR_DEVICE_LIBRARY_H

#include <stddef.h>

/** Declares function f weak: a call to it binds when made, to whatever the process has loaded
 *  by then. Used over a list of names, X-macro style: LIST(TSR_WEAK). */
#define TSR_WEAK(f) TSR_WEAK_PRAGMA(weak f)
#define TSR_WEAK_PRAGMA(x) _Pragma(#x)

/** Loads the shared library by its `soname` (the copy the process already holds, else through
 *  the loader's search path), else from `path` (where tessera's build found it), into the
 *  global scope for the rest of the process (never unloaded: a call bound once stays valid; a
 *  second load is the loader's count alone).
 *  Returns 0, or TESSERA_ERR_BACKEND with the loader's reason in why (len bytes). */
int tsr_library_load(const char *path, const char *soname, char *why, size_t len);

#endif
