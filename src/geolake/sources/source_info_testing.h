/// \file
/// Test helper shared by the sources tests: two SourceInfos compared member by member (the
/// native GeoPackage description against GDAL's).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "geolake/sources/gdal_source.h"

namespace geolake::sources {

/// \brief Expect the same field names and types, in the same order.
inline void ExpectSameFields(const std::vector<geoparquet::FieldDef>& gdal,
                             const std::vector<geoparquet::FieldDef>& native,
                             const std::string& at) {
  ASSERT_EQ(gdal.size(), native.size()) << at;
  for (std::size_t i = 0; i < gdal.size(); ++i) {
    EXPECT_EQ(gdal[i].name, native[i].name) << at;
    EXPECT_EQ(gdal[i].type, native[i].type) << at << ", field " << gdal[i].name;
  }
}

/// \brief Expect `native` (GpkgSource::Describe's) to equal `gdal` (GdalSource's), member by
/// member; `at` names the layer in failure messages.
inline void ExpectSameInfo(const SourceInfo& gdal, const SourceInfo& native,
                           const std::string& at) {
  EXPECT_EQ(gdal.path, native.path) << at;
  EXPECT_EQ(gdal.layer, native.layer) << at;
  EXPECT_EQ(gdal.driver, native.driver) << at;
  EXPECT_EQ(gdal.feature_count, native.feature_count) << at;
  ExpectSameFields(gdal.fields, native.fields, at);
  EXPECT_EQ(gdal.field_source_types, native.field_source_types) << at;
  EXPECT_EQ(gdal.geometry_type, native.geometry_type) << at;
  EXPECT_EQ(gdal.crs_projjson, native.crs_projjson) << at;
  EXPECT_EQ(gdal.crs_authority, native.crs_authority) << at;
  EXPECT_EQ(gdal.fast_seek, native.fast_seek) << at;
  EXPECT_EQ(gdal.layer_count, native.layer_count) << at;
  EXPECT_EQ(gdal.fid_column, native.fid_column) << at;
  EXPECT_EQ(gdal.first_fid, native.first_fid) << at;
  EXPECT_EQ(gdal.geometry_columns, native.geometry_columns) << at;
}

}  // namespace geolake::sources
