/* Loading a shared library for good into the process's global scope (library.h). */
#include "device/library.h"

#include <dlfcn.h>
#include <stdio.h>

#include "tessera/types.h"

int tsr_library_load(const char *path, const char *soname, char *why, size_t len) {
  const int flags = RTLD_NOW | RTLD_GLOBAL | RTLD_NODELETE;
  /* by soname first: a copy the process has already loaded (a framework's own cuBLAS, say) is
   * the one used, as a link would have bound to it; never a second copy beside it */
  void *h = soname && *soname ? dlopen(soname, flags) : NULL;
  const char *first = h ? NULL : dlerror();
  if (!h && path && *path) h = dlopen(path, flags);
  if (!h) {
    const char *second = dlerror();
    snprintf(why, len, "%s", second ? second : first ? first : "not found");
    return TESSERA_ERR_BACKEND;
  }
  (void)dlclose(h); /* RTLD_NODELETE: the library stays, this handle's count goes */
  return 0;
}
