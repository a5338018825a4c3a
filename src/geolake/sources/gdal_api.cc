#include "geolake/sources/gdal_api.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

namespace geolake::gdal {
namespace {

Result<const Functions*> LoadOnce() {
  static Functions functions;
  // RTLD_LOCAL: nothing else resolves against GDAL's symbols. A process that already links
  // libgdal (a test that writes fixtures with GDAL) gets that same copy back.
  void* library = ::dlopen(GEOLAKE_GDAL_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = ::dlerror();
    return Status::NotImplemented(std::string("GDAL is needed for this source or output but ") +
                                  GEOLAKE_GDAL_SONAME +
                                  " cannot be loaded: " + (why != nullptr ? why : "no detail") +
                                  " (install it with scripts/install-deps.sh)");
  }
#define GEOLAKE_GDAL_LOOK_UP(name)                                                      \
  functions.name = reinterpret_cast<decltype(functions.name)>(::dlsym(library, #name)); \
  if (functions.name == nullptr) {                                                      \
    return Status::NotImplemented(std::string(GEOLAKE_GDAL_SONAME) + " has no " #name); \
  }
  GEOLAKE_GDAL_FUNCTIONS(GEOLAKE_GDAL_LOOK_UP)
#undef GEOLAKE_GDAL_LOOK_UP
  functions.GDALAllRegister();
  return &functions;
}

const Result<const Functions*>& LoadedOnce() {
  static const Result<const Functions*> loaded = LoadOnce();
  return loaded;
}

}  // namespace

Result<const Functions*> Load() { return LoadedOnce(); }

const Functions& Loaded() {
  const Result<const Functions*>& loaded = LoadedOnce();
  if (!loaded.ok()) {
    std::fprintf(stderr, "geolake: GDAL called before it was loaded: %s\n",
                 loaded.status().ToString().c_str());
    std::abort();
  }
  return **loaded;
}

std::string QuietErrors::LastMessage() {
  const char* msg = gdal::CPLGetLastErrorMsg();
  return (msg != nullptr && *msg != '\0') ? std::string(msg) : std::string("no detail from GDAL");
}

}  // namespace geolake::gdal
