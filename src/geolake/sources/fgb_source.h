/// \file
/// FgbSource: geolake's own reader of FlatGeobuf files (https://flatgeobuf.org, format version
/// 3): magic bytes, a size-prefixed FlatBuffers header, an optional packed Hilbert R-tree, then
/// one size-prefixed FlatBuffers record per feature. The tables are decoded by hand (the
/// schema's field ids, no generated code), geometry goes straight to ISO WKB, and a unit is a
/// feature range read with ranged reads (pread) from its first record's byte offset, so any
/// number of workers read one file at once. docs/sources.md ("FlatGeobuf") says what it
/// refuses; GDAL reads that instead.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "geolake/core/result.h"
#include "geolake/formats/geoparquet/feature_batch.h"

namespace geolake::sources {

struct SourceInfo;

/// \brief One open FlatGeobuf file.
///
/// Thread-safety: const methods are safe to call concurrently; SeekRange and ReadBatch are not
/// (one reader per thread; readers over different ranges of one file are independent).
class FgbSource {
 public:
  ~FgbSource();
  FgbSource(const FgbSource&) = delete;
  FgbSource& operator=(const FgbSource&) = delete;

  /// \brief True when `path` starts with FlatGeobuf's magic bytes of major version 3.
  static bool IsFlatGeobufFile(const std::string& path);

  /// \brief Open `path` and decode its header.
  ///
  /// Errors: kNotFound for a missing file, kIOError when unreadable, kCorruptData for a
  /// header that is not a valid FlatGeobuf header, kNotImplemented for what this reader does
  /// not read exactly as GDAL does (curve, surface and TIN geometry types, T/TM ordinates,
  /// DateTime and ULong columns).
  static Result<std::unique_ptr<FgbSource>> Open(const std::string& path);

  const std::string& path() const;
  /// The attribute fields in column order, typed as GDAL types them (Bool -> bool, the integer
  /// types up to UInt -> int64, Float/Double -> double, String/Json -> string, Binary -> binary).
  const std::vector<geoparquet::FieldDef>& fields() const;
  /// The header's feature count (0 when the writer did not know it: then only a scan tells).
  std::int64_t header_feature_count() const;
  bool has_index() const;
  /// Byte offset of the first feature record (after the header and the index).
  std::int64_t features_offset() const;

  /// \brief Kinds of mismatch between this reader's view and GDAL's description of the same
  /// layer (fields by name and type, feature count): kNotImplemented naming the first.
  Status MatchesDescription(const SourceInfo& gdal_info) const;

  /// \brief The absolute byte offset of the record of each feature index in `rows` (ascending,
  /// each < the feature count): from the index's leaf nodes when there is one (one 40-byte read
  /// each), else by walking the records' size prefixes from the first. Also checks that every
  /// offset lies inside the file. Errors: kInvalidArgument for unsorted or out-of-range rows,
  /// kCorruptData for offsets outside the file or not ascending, kIOError.
  Result<std::vector<std::int64_t>> RecordOffsets(const std::vector<std::int64_t>& rows) const;

  /// \brief Count the records by walking their size prefixes (for a header count of 0).
  Result<std::int64_t> CountRecords() const;

  /// \brief Read features [first_row, first_row + row_count) (row_count -1: to the end of the
  /// file), whose first record starts at byte `first_byte` (RecordOffsets).
  Status SeekRange(std::int64_t first_row, std::int64_t row_count, std::int64_t first_byte);

  /// \brief Read up to `max_rows` features into `batch` (cleared first, schema set), fewer
  /// when the batch reaches `max_wkb_bytes` of geometry first (0 = no byte limit); 0 at the end
  /// of the range. Reads the file in blocks of about 1 MiB (or one record, when larger), so a
  /// reader holds one block besides the batch. Errors: kCorruptData naming the feature for a
  /// record that does not decode, kIOError.
  Result<std::int64_t> ReadBatch(std::int64_t max_rows, geoparquet::FeatureBatch* batch,
                                 std::int64_t max_wkb_bytes = 0);

 private:
  struct Impl;
  explicit FgbSource(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace geolake::sources
