/// \file
/// GDAL's C API, loaded when it is first needed. The geolake executable does not link libgdal:
/// loading it binds about 120 shared libraries eagerly, ~70 ms at every start (more than a
/// small ingest's transform), while GeoPackage and GeoParquet ingests, queries and table
/// maintenance never call GDAL. `Load()` dlopens the libgdal soname the build found,
/// looks up each function this project calls, and registers GDAL's drivers, once per process.
///
/// Callers use `gdal::Name(args...)` in place of GDAL's `Name(args...)`: same signature (the
/// pointers are typed from GDAL's own headers), after a successful `Load()`. A function
/// missing from the list below fails to link in the executable, so none is called unloaded.
/// Include only from .cc files: it pulls in GDAL's headers.
#pragma once

#include <cpl_conv.h>
#include <cpl_error.h>
#include <cpl_vsi.h>
#include <gdal.h>
#include <gdal_alg.h>
#include <ogr_api.h>
#include <ogr_srs_api.h>

#include <string>
#include <utility>

#include "geolake/core/result.h"

namespace geolake::gdal {

// The raster functions ops/polygonize.cc calls.
// clang-format off
#define GEOLAKE_GDAL_RASTER_FUNCTIONS(X)                                                          \
  X(GDALGetRasterBand) X(GDALGetRasterXSize) X(GDALGetRasterYSize) X(GDALGetRasterCount)          \
  X(GDALGetRasterDataType) X(GDALGetGeoTransform) X(GDALSetGeoTransform) X(GDALGetSpatialRef)     \
  X(GDALGetMaskBand) X(GDALGetMaskFlags) X(GDALRasterIO) X(GDALGetBlockSize)                      \
  X(GDALDataTypeIsFloating) X(GDALGetDataTypeName) X(GDALPolygonize) X(GDALGetDescription)
// clang-format on

// Every GDAL function geolake calls (sources/gdal_source.cc, sources/gdal_writer.cc).
// clang-format off
#define GEOLAKE_GDAL_FUNCTIONS(X)                                                                 \
  X(CPLErrorReset) X(CPLGetLastErrorMsg) X(CPLGetLastErrorType) X(CPLPopErrorHandler)             \
  X(CPLPushErrorHandler) X(CPLQuietErrorHandler) X(VSIFree) X(VSIStatL) X(GDALAllRegister)        \
  X(GDALClose) X(GDALCreate) X(GDALOpenEx) X(GDALGetDriverByName) X(GDALGetDriverShortName)       \
  X(GDALGetDatasetDriver) X(GDALDatasetCommitTransaction) X(GDALDatasetCreateLayer)               \
  X(GDALDatasetExecuteSQL) X(GDALDatasetGetLayer) X(GDALDatasetGetLayerByName)                    \
  X(GDALDatasetGetLayerCount) X(GDALDatasetReleaseResultSet) X(GDALDatasetStartTransaction)       \
  X(OGRGeometryTypeToName) X(OGR_GetFieldTypeName) X(OGR_GetFieldSubTypeName)                     \
  X(OGR_FD_GetFieldCount) X(OGR_FD_GetFieldDefn) X(OGR_FD_GetGeomFieldCount)                      \
  X(OGR_FD_GetGeomFieldDefn) X(OGR_F_Create) X(OGR_F_Destroy) X(OGR_F_GetFID)                     \
  X(OGR_F_GetFieldAsBinary) X(OGR_F_GetFieldAsDateTimeEx) X(OGR_F_GetFieldAsDouble)               \
  X(OGR_F_GetFieldAsInteger64) X(OGR_F_GetFieldAsString) X(OGR_F_GetGeometryRef)                  \
  X(OGR_F_IsFieldSetAndNotNull) X(OGR_F_SetFieldBinary) X(OGR_F_SetFieldDouble)                   \
  X(OGR_F_SetFieldInteger) X(OGR_F_SetFieldInteger64) X(OGR_F_SetFieldNull)                       \
  X(OGR_F_SetFieldString) X(OGR_F_SetGeometryDirectly) X(OGR_Fld_Create) X(OGR_Fld_Destroy)       \
  X(OGR_Fld_GetNameRef) X(OGR_Fld_GetSubType) X(OGR_Fld_GetType) X(OGR_Fld_SetSubType)            \
  X(OGR_GFld_GetNameRef) X(OGR_G_CreateFromWkbEx) X(OGR_G_ExportToIsoWkb) X(OGR_G_WkbSizeEx)      \
  X(OGR_L_CreateFeature) X(OGR_L_CreateField) X(OGR_L_GetFIDColumn) X(OGR_L_GetFeature)           \
  X(OGR_L_GetFeatureCount) X(OGR_L_GetGeomType) X(OGR_L_GetLayerDefn) X(OGR_L_GetName)            \
  X(OGR_L_GetNextFeature) X(OGR_L_GetSpatialRef) X(OGR_L_ResetReading)                            \
  X(OGR_L_SetAttributeFilter) X(OGR_L_SetNextByIndex) X(OGR_L_TestCapability)                     \
  X(OSRDestroySpatialReference) X(OSRExportToPROJJSON) X(OSRGetAuthorityCode)                     \
  X(OSRGetAuthorityName) X(OSRNewSpatialReference) X(OSRSetAxisMappingStrategy)                   \
  X(OSRSetFromUserInput) X(VSIAllocFilesystemPluginCallbacksStruct)                               \
  X(VSIInstallPluginHandler) X(VSIFreeFilesystemPluginCallbacksStruct)                           \
  GEOLAKE_GDAL_RASTER_FUNCTIONS(X)
// clang-format on

/// \brief The loaded functions, typed from GDAL's headers.
struct Functions {
#define GEOLAKE_GDAL_POINTER(name) decltype(&::name) name = nullptr;
  GEOLAKE_GDAL_FUNCTIONS(GEOLAKE_GDAL_POINTER)
#undef GEOLAKE_GDAL_POINTER
};

/// \brief Load libgdal and register its drivers (once per process; thread-safe). Errors:
/// kNotImplemented naming the library and the loader's message when libgdal or one of the
/// functions cannot be found (the same error on every later call).
Result<const Functions*> Load();

/// \brief The functions, for code that runs only after a successful Load() (a GdalSource that
/// opened, a sink whose Begin succeeded). Aborts if GDAL was never loaded: a programming error.
const Functions& Loaded();

#define GEOLAKE_GDAL_FORWARD(name)                     \
  template <typename... Args>                          \
  decltype(auto) name(Args&&... args) {                \
    return Loaded().name(std::forward<Args>(args)...); \
  }
GEOLAKE_GDAL_FUNCTIONS(GEOLAKE_GDAL_FORWARD)
#undef GEOLAKE_GDAL_FORWARD

/// \brief While alive, GDAL's errors on this thread go to the quiet handler (GDAL must not
/// print to our stderr); LastMessage() reads the last one. Requires a successful Load().
class QuietErrors {
 public:
  QuietErrors() {
    gdal::CPLPushErrorHandler(Loaded().CPLQuietErrorHandler);
    gdal::CPLErrorReset();
  }
  ~QuietErrors() { gdal::CPLPopErrorHandler(); }
  QuietErrors(const QuietErrors&) = delete;
  QuietErrors& operator=(const QuietErrors&) = delete;

  /// GDAL's last error message on this thread, or "no detail from GDAL".
  static std::string LastMessage();
};

}  // namespace geolake::gdal
