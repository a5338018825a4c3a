/// \file
/// Discovery of the files geolake's own streaming readers cut into units: FlatGeobuf
/// (FgbSource), GeoJSONSeq and large GeoJSON FeatureCollections (GeoJsonSeqSource). discover.cc
/// asks these first; a file they refuse (kNotImplemented) is discovered through GDAL as before, as
/// one unit.
#pragma once

#include <string>
#include <vector>

#include "geolake/core/result.h"
#include "geolake/sources/discover.h"

namespace geolake {
class ThreadPool;
}

namespace geolake::sources::internal {

/// \brief Cut [0, count) into ceil(count / unit_rows) near-equal ranges; the last runs to the
/// end (row_count -1) so that a count that is a header's promise cannot lose trailing features.
/// count <= 0 gives one unit of everything.
std::vector<SourceUnit> CutRanges(const std::string& path, const std::string& layer,
                                  const std::string& driver, std::int64_t count,
                                  std::int64_t unit_rows);

/// \brief Which native reader, if any, reads the file at `path` (by its magic bytes or name).
enum class NativeStream { kNone, kFlatGeobuf, kGeoJsonSeq, kGeoJson };
NativeStream NativeStreamOf(const std::string& path, const DiscoverOptions& options);

/// \brief Discover a FlatGeobuf file: GDAL describes the layer (fields, CRS, count, exactly as
/// before), FgbSource checks that it reads the same fields, and units of about unit_rows
/// features get their first record's byte offset (from the index, else by a scan of the size
/// prefixes). Errors: as GdalSource::Open; kNotImplemented when FgbSource refuses the file.
Status DiscoverFlatGeobuf(const std::string& path, const SourceFingerprint& fingerprint,
                          const DiscoverOptions& options, std::vector<DiscoveredSource>* out);

/// \brief Discover a GeoJSONSeq file (or, `feature_collection`, a GeoJSON FeatureCollection)
/// without GDAL: GeoJsonSeqSource::Scan (on `pool` when
/// given) gives the count and the schema; the CRS is GDAL's for GeoJSON (EPSG:4326, exported
/// by PROJ as GDAL exports it). Errors: as GeoJsonSeqSource::Scan.
Status DiscoverGeoJsonSeq(const std::string& path, const SourceFingerprint& fingerprint,
                          const DiscoverOptions& options, ThreadPool* pool,
                          std::vector<DiscoveredSource>* out, bool feature_collection = false);

}  // namespace geolake::sources::internal
