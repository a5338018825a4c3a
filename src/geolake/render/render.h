/// \file
/// Pictures of a table: its features (polygons filled semi-transparent with outlines, lines,
/// points as small dots) and, on request, each data file's bounding box outlined in a colour
/// per partition value, so a user sees at a glance how well the table is clustered. The view
/// is equirectangular (x and y scaled alike: table CRS units map linearly to pixels), fitted to
/// the table's extent or to a given box, aspect preserved. cairo stays inside this module's
/// .cc file; the PNG is written through io::FileIO (temp + fsync + rename).
#pragma once

#include <cstdint>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>

#include "geolake/core/result.h"
#include "geolake/geo/envelope.h"
#include "geolake/io/file_io.h"
#include "geolake/table/table_metadata.h"

namespace geolake::render {

/// \brief What RenderTable draws and where.
struct RenderOptions {
  /// The PNG file to write (replaced if it exists).
  std::string output;
  /// Canvas width in pixels (1..16384).
  int width_px = 1024;
  /// Canvas height in pixels; 0 = follow the view's aspect (at most 16384). With both given,
  /// the view is centred in the canvas with its aspect kept.
  int height_px = 0;
  /// The part of the plane to draw (table CRS units); nullopt = the table's extent. Files
  /// whose box misses it are skipped unread.
  std::optional<geo::Envelope> bbox;
  /// Also outline each data file's bbox, coloured by partition value, with a legend.
  bool files = false;
  /// The snapshot to draw; nullopt = the current one.
  std::optional<std::int64_t> snapshot_id;
};

/// \brief What was drawn.
struct RenderSummary {
  geo::Envelope view;  // the plane area the canvas shows
  int width_px = 0;
  int height_px = 0;
  std::int64_t files_total = 0;  // live data files of the snapshot
  std::int64_t files_drawn = 0;  // of those, files whose box meets the view
  std::int64_t features_drawn = 0;
  std::int64_t partitions = 0;  // distinct partition values among the drawn files
  /// Σ area of the drawn files' boxes / area of the box around all of them: 1 for files that
  /// tile the extent without overlap, ~N for N files that each span everything (no
  /// clustering). 0 when that box has no area.
  double overlap_ratio = 0;
};

/// \brief Draw the features of a snapshot of a table as a PNG.
///
/// A file's box is its manifest bounds of `bbox.xmin..bbox.ymax`, or, without them, the
/// envelope of its geometries (read once more). Delete files are not applied (the picture
/// shows the data files as written). Errors: kNotFound for an unknown snapshot; kInvalidArgument
/// for a bad canvas size, an empty or inverted bbox, or a table without a `geometry` column;
/// kCorruptData for an unreadable data file or geometry; kIOError when the PNG cannot be
/// written; kCancelled when `stop` fires (checked between row groups).
Result<RenderSummary> RenderTable(const io::FileIO& io, const table::TableMetadata& metadata,
                                  const RenderOptions& options, std::stop_token stop = {});

/// \brief Parse "X1,Y1,X2,Y2" (x = lon/easting) into a box. kInvalidArgument naming the text
/// unless there are four finite numbers with X1 < X2 and Y1 < Y2.
Result<geo::Envelope> ParseBbox(std::string_view text);

/// \brief The colour of a partition value: a stable hue from an FNV-1a hash of its text
/// (the same value gets the same colour in every picture and on every machine). Each channel
/// in [0, 1].
struct Rgb {
  double r = 0;
  double g = 0;
  double b = 0;
};
Rgb PartitionColour(std::string_view partition_text);

}  // namespace geolake::render
