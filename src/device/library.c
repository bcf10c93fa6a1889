/* Loading a shared library for good into the process's global scope (library.h). */
#include "device/library.h"

#include <dlfcn.h>
#include <stdio.h>

#include "tessera/types.h"

int tsr_library_load(const char *path, const char *soname, char *why, size_t len) {
  const int flags = RTLD_NOW | RTLD_GLOBAL | RTLD_NODELETE;
  void *h = path && *path ? dlopen(path, flags) : NULL;
  const char *first = h ? NULL : dlerror();
  if (!h && soname && *soname) h = dlopen(soname, flags);
  if (!h) {
    const char *second = dlerror();
    snprintf(why, len, "%s", second ? second : first ? first : "not found");
    return TESSERA_ERR_BACKEND;
  }
  (void)dlclose(h); /* RTLD_NODELETE: the library stays, this handle's count goes */
  return 0;
}
