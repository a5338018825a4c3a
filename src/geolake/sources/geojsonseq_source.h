/// \file
/// GeoJsonSeqSource: geolake's own reader of newline-delimited GeoJSON (GeoJSONSeq: one
/// Feature per line, optionally RFC 8142's record separator before each) with simdjson. A scan
/// counts the records and infers the attribute schema from every record the way GDAL's
/// GeoJSONSeq driver does (docs/sources.md, "GeoJSONSeq"); units are runs of records that start
/// at a line's first byte, each parsed by any worker. A record that is not valid JSON becomes an
/// unreadable row (geoparquet::FeatureBatch::unreadable) that ingest sends to the rejects file with
/// its line number. A large GeoJSON FeatureCollection is read the same way, its records being the
/// elements of its "features" array.
#pragma once

#include <cstdint>
#include <memory>
#include <stop_token>
#include <string>
#include <vector>

#include "geolake/core/result.h"
#include "geolake/formats/geoparquet/feature_batch.h"

namespace geolake {
class ThreadPool;
}

namespace geolake::sources {

/// \brief What a scan of a GeoJSONSeq file learns: the record count, the schema, and where the
/// records of each block of the file start (so that a record's byte offset is found by
/// reading one block).
struct GeoJsonSeqScan {
  std::int64_t file_size = 0;
  std::int64_t record_count = 0;  // non-blank lines, malformed ones included
  std::vector<geoparquet::FieldDef> fields;
  /// Per block: the byte offset of its first record's line, and that record's index.
  std::vector<std::int64_t> block_first_byte;
  std::vector<std::int64_t> block_first_record;
  /// A GeoJSON FeatureCollection (ScanFeatureCollection): records are the elements of its
  /// "features" array, each starting at record_starts[i] (8 bytes a feature).
  bool feature_collection = false;
  std::vector<std::int64_t> record_starts;
  std::string layer_name;  // the top-level "name" (GDAL's layer name), empty = the file's stem
};

/// \brief A run of records of one GeoJSONSeq file.
///
/// Thread-safety: the static functions are safe to call concurrently; one reader per thread.
class GeoJsonSeqSource {
 public:
  ~GeoJsonSeqSource();
  GeoJsonSeqSource(const GeoJsonSeqSource&) = delete;
  GeoJsonSeqSource& operator=(const GeoJsonSeqSource&) = delete;

  /// \brief True for the names GDAL's GeoJSONSeq driver claims by extension (.geojsonl,
  /// .geojsons, any case).
  static bool IsGeoJsonSeqPath(const std::string& path);

  /// \brief Read the whole file once (in blocks, on `pool`'s workers when given, else on this
  /// thread): count the records and infer the schema.
  ///
  /// Errors: kNotFound, kIOError; kNotImplemented for what the schema inference does not
  /// type exactly as GDAL does (docs/sources.md: arrays and objects as values, strings that
  /// look like dates or times, a field with values of two kinds, a field that is null in every
  /// record, names equal but for case, keys in an order GDAL would merge differently, a string
  /// or fractional top-level "id", integers beyond int64).
  /// A requested `stop` ends the scan within a few thousand records: kCancelled.
  static Result<GeoJsonSeqScan> Scan(const std::string& path, ThreadPool* pool = nullptr,
                                     std::stop_token stop = {});

  /// \brief True for .geojson and .json (any case): candidates for ScanFeatureCollection.
  static bool IsGeoJsonPath(const std::string& path);

  /// \brief Scan a GeoJSON FeatureCollection: find where each element of its "features" array
  /// starts (one pass over the bytes on this thread), then infer the schema from every feature
  /// as Scan does (on `pool`'s workers when given). Errors: as Scan; kNotImplemented also for a
  /// top-level "crs" member other than OGC CRS84, a "type" other than FeatureCollection, a
  /// "features" element that is not an object, and text that is not one JSON object (GDAL says
  /// why).
  static Result<GeoJsonSeqScan> ScanFeatureCollection(const std::string& path,
                                                      ThreadPool* pool = nullptr,
                                                      std::stop_token stop = {});

  /// \brief The byte offset of the line of each record index in `rows` (ascending, each below
  /// the scan's count). Errors: kInvalidArgument for bad rows, kIOError, kCorruptData when the
  /// file no longer matches the scan.
  static Result<std::vector<std::int64_t>> RecordOffsets(const std::string& path,
                                                         const GeoJsonSeqScan& scan,
                                                         const std::vector<std::int64_t>& rows);

  /// \brief Open `path` to read records with the schema `fields` (the scan's); records are
  /// lines, or the features of a FeatureCollection when `feature_collection`.
  /// Errors: kNotFound, kIOError.
  static Result<std::unique_ptr<GeoJsonSeqSource>> Open(const std::string& path,
                                                        std::vector<geoparquet::FieldDef> fields,
                                                        bool feature_collection = false);

  /// \brief Read records [first_row, first_row + row_count) (-1: to the end of the file), the
  /// first of which starts at byte `first_byte` (RecordOffsets).
  Status SeekRange(std::int64_t first_row, std::int64_t row_count, std::int64_t first_byte);

  /// \brief Read up to `max_rows` records into `batch` (cleared first, schema set), fewer once
  /// it holds `max_wkb_bytes` of geometry (0 = no limit); 0 at the end of the range. A record
  /// that is not JSON, not an object, or has a value whose kind differs from its field's is a
  /// row with null attributes and no geometry, listed in `batch->unreadable` with its line
  /// number; a geometry GDAL would not build (unknown type, missing or ill-formed coordinates)
  /// is no geometry. Errors: kIOError; kCorruptData when the file ends before the range does.
  Result<std::int64_t> ReadBatch(std::int64_t max_rows, geoparquet::FeatureBatch* batch,
                                 std::int64_t max_wkb_bytes = 0);
  /// \brief A stop watched every 4,096 positions while a geometry is parsed: ReadBatch then
  /// fails with kCancelled (one record of millions of positions takes seconds).
  void SetStop(const std::stop_token& stop);

 private:
  struct Impl;
  explicit GeoJsonSeqSource(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace geolake::sources
