// The spatial join on the runner (join.h has the contract).
//
// Roles. The predicate is stated as "LEFT p RIGHT". One side is the tree side (read whole into
// memory in Prepare, boxes packed into an StrTree), the other the stream side (the runner's main
// input). A pair is tested from the tree item's point of view: the tree side's prepared geometry
// is asked `tree_op` about the stream geometry, where tree_op is the predicate itself when the
// tree is the left side and its converse (contains <-> within, covers <-> covered-by) when it is
// the right. The point fast path is asked from the point's point of view.
#include "geolake/ops/join.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <set>
#include <span>
#include <utility>

#include "geolake/core/little_endian.h"
#include "geolake/core/logging.h"
#include "geolake/core/shard.h"
#include "geolake/core/thread_pool.h"
#include "geolake/core/units.h"
#include "geolake/geo/crs.h"
#include "geolake/geo/geos.h"
#include "geolake/geo/proj.h"
#include "geolake/geo/strtree.h"
#include "geolake/geo/wkb.h"
#include "geolake/ops/point_in_polygon.h"
#include "geolake/pipeline/transform.h"

namespace geolake::ops {
namespace {

using geoparquet::Column;
using geoparquet::FeatureBatch;
using geoparquet::FieldType;

JoinPredicate Converse(JoinPredicate p) {
  switch (p) {
    case JoinPredicate::kContains:
      return JoinPredicate::kWithin;
    case JoinPredicate::kWithin:
      return JoinPredicate::kContains;
    case JoinPredicate::kCovers:
      return JoinPredicate::kCoveredBy;
    case JoinPredicate::kCoveredBy:
      return JoinPredicate::kCovers;
    default:
      return p;
  }
}

// What a geometry is, for choosing the path a pair takes.
enum class Kind : std::uint8_t {
  kNull,     // no geometry
  kEmpty,    // an empty geometry (never matches; GEOS 3.11 crashes on some empty inputs)
  kPoint,    // a single non-empty point
  kPolygon,  // Polygon or MultiPolygon (repaired when invalid)
  kOther,    // lines, multipoints, collections: GEOS only
  kBad,      // malformed or unrepairable: never matches (reported)
};

// The point-in-polygon answer for a point P and a polygon A, asked as "P op A"; nullopt when
// only GEOS can tell.
std::optional<bool> PointAnswer(JoinPredicate point_op, PointInPolygon::Location loc) {
  using Location = PointInPolygon::Location;
  if (loc == Location::kUnsure) return std::nullopt;
  const bool interior = loc == Location::kInterior;
  switch (point_op) {
    case JoinPredicate::kIntersects:
    case JoinPredicate::kWithin:
    case JoinPredicate::kCoveredBy:
      return interior;
    case JoinPredicate::kTouches:
      return false;  // a point off the boundary touches nothing
    case JoinPredicate::kDWithin:
      if (interior) return true;
      return std::nullopt;
    case JoinPredicate::kContains:
    case JoinPredicate::kCovers:
    case JoinPredicate::kLargestOverlap:
      return std::nullopt;  // a point containing a polygon: GEOS says (degenerate cases)
  }
  return std::nullopt;
}

// The x, y of a 2D/3D/4D ISO or extended WKB point (either byte order); false otherwise.
bool PointXY(std::span<const std::uint8_t> wkb, double* x, double* y) {
  if (wkb.size() < 21) return false;
  const bool big_endian = wkb[0] != 1;
  const auto code = LoadEndian<std::uint32_t>(wkb.data() + 1, big_endian);
  const bool srid = (code & 0x20000000u) != 0;
  if ((code & 0x0FFFFFFFu) % 1000 != 1) return false;
  const std::size_t at = srid ? 9 : 5;
  if (wkb.size() < at + 16) return false;
  *x = LoadEndian<double>(wkb.data() + at, big_endian);
  *y = LoadEndian<double>(wkb.data() + at + 8, big_endian);
  return true;
}

// The kind of a geometry from its outer header and box.
Kind KindOf(const geo::WkbSummary& summary) {
  if (summary.envelope.IsEmpty()) return Kind::kEmpty;
  switch (summary.header.type) {
    case geo::GeometryType::kPoint:
      return Kind::kPoint;
    case geo::GeometryType::kPolygon:
    case geo::GeometryType::kMultiPolygon:
      return Kind::kPolygon;
    default:
      return Kind::kOther;
  }
}

// Append `rows` of `src` to `dst` (a row of -1, or a null `src`, appends a null).
void Gather(const Column* src, std::span<const std::int64_t> rows, Column* dst) {
  dst->valid.reserve(dst->valid.size() + rows.size());
  for (const std::int64_t row : rows) {
    const bool valid = src != nullptr && row >= 0 && src->valid[static_cast<std::size_t>(row)];
    dst->valid.push_back(valid ? 1 : 0);
    const auto r = static_cast<std::size_t>(row);
    switch (dst->type) {
      case FieldType::kDouble:
        dst->doubles.push_back(valid ? src->doubles[r] : 0.0);
        break;
      case FieldType::kString:
      case FieldType::kBinary:
        if (valid) dst->bytes.append(src->StringAt(r));
        dst->offsets.push_back(static_cast<std::int64_t>(dst->bytes.size()));
        break;
      default:
        dst->ints.push_back(valid ? src->ints[r] : 0);
        break;
    }
  }
}

// The attribute values of rows `rows` of the other batch appended to `all`'s columns (same
// fields; `all` takes them when it has none yet).
void AppendColumns(const FeatureBatch& in, std::span<const std::uint32_t> rows, FeatureBatch* all) {
  if (all->columns.empty()) {
    all->fields = in.fields;
    all->columns.resize(in.columns.size());
    for (std::size_t c = 0; c < in.columns.size(); ++c) all->columns[c].type = in.columns[c].type;
  }
  for (std::size_t c = 0; c < in.columns.size(); ++c) {
    pipeline::AppendRows(&in.columns[c], rows, &all->columns[c]);
  }
}

// Rows `rows` of the other batch appended to `all` (same fields).
void AppendSomeRows(const FeatureBatch& in, std::span<const std::uint32_t> rows,
                    FeatureBatch* all) {
  AppendColumns(in, rows, all);
  for (const std::uint32_t r : rows) {
    const auto g = in.GeometryAt(r);
    all->wkb.append(reinterpret_cast<const char*>(g.data()), g.size());
    all->wkb_offsets.push_back(static_cast<std::int64_t>(all->wkb.size()));
    all->geometry_valid.push_back(in.geometry_valid[r]);
    all->feature_index.push_back(in.feature_index[r]);
  }
}

// The box of row `row`'s geometry; empty when it has none or none that can be read (such a
// row lives in cell 0 and meets no box).
geo::Envelope RowBox(const FeatureBatch& batch, std::size_t row) {
  if (batch.geometry_valid[row] == 0) return geo::Envelope::Empty();
  Result<geo::Envelope> box = geo::WkbEnvelope(batch.GeometryAt(row));
  return box.ok() ? *box : geo::Envelope::Empty();
}

// The geometries of `batch` transformed by `t` (--reproject-right). A row whose geometry does
// not transform (a coordinate outside the CRS's domain) keeps none, and is noted in `failed`
// with PROJ's reason.
Status ReprojectBatch(geo::Transformer& t, FeatureBatch* batch,
                      std::vector<std::pair<std::size_t, Status>>* failed) {
  std::string wkb;
  std::vector<std::int64_t> offsets;
  offsets.reserve(batch->wkb_offsets.size());
  offsets.push_back(0);
  for (std::size_t r = 0; r < static_cast<std::size_t>(batch->num_rows()); ++r) {
    if (batch->geometry_valid[r] != 0) {
      Result<std::string> moved = t.TransformWkb(batch->GeometryAt(r));
      if (moved.ok()) {
        wkb += *moved;
      } else if (moved.status().code() == ErrorCode::kCancelled) {
        return moved.status();
      } else {
        batch->geometry_valid[r] = 0;
        failed->emplace_back(r, moved.status());
      }
    }
    offsets.push_back(static_cast<std::int64_t>(wkb.size()));
  }
  batch->wkb = std::move(wkb);
  batch->wkb_offsets = std::move(offsets);
  return Status::OK();
}

// Rows of the other batch appended to `all` (same fields).
void AppendBatch(const FeatureBatch& in, FeatureBatch* all) {
  std::vector<std::uint32_t> rows(static_cast<std::size_t>(in.num_rows()));
  for (std::size_t r = 0; r < rows.size(); ++r) rows[r] = static_cast<std::uint32_t>(r);
  AppendColumns(in, rows, all);
  const std::int64_t base = static_cast<std::int64_t>(all->wkb.size());
  all->wkb += in.wkb;
  for (std::size_t r = 1; r < in.wkb_offsets.size(); ++r) {
    all->wkb_offsets.push_back(base + in.wkb_offsets[r]);
  }
  all->geometry_valid.insert(all->geometry_valid.end(), in.geometry_valid.begin(),
                             in.geometry_valid.end());
  all->feature_index.insert(all->feature_index.end(), in.feature_index.begin(),
                            in.feature_index.end());
}

// Where an output column comes from: a column of one side, or (aggregate >= 0) an aggregate.
struct OutColumn {
  bool from_left = true;
  std::size_t index = 0;
  int aggregate = -1;
};

// The running aggregates of the left rows matched to each tree (right) item, for one worker;
// the workers' states are merged in Finish. Slot i belongs to tree item i. Which vector of an
// aggregate is used depends on its kind and the left column's type: ints for int64-backed
// columns (bool, int64, date, timestamp) and doubles for double columns and every mean.
struct AggregateState {
  struct Slots {
    std::vector<std::int64_t> values;  // non-null values seen
    std::vector<std::int64_t> ints;
    std::vector<double> doubles;
  };
  std::vector<std::int64_t> counts;  // pairs
  std::vector<Slots> slots;          // one per aggregate
  bool overflow = false;             // an int64 sum overflowed
  std::int64_t overflow_item = -1;

  std::int64_t ByteSize() const {
    std::int64_t bytes = static_cast<std::int64_t>(counts.size() * sizeof(std::int64_t));
    for (const Slots& s : slots) {
      bytes +=
          static_cast<std::int64_t>(s.values.size() * 8 + s.ints.size() * 8 + s.doubles.size() * 8);
    }
    return bytes;
  }
};

// True when aggregate `a` over a column of `type` keeps its sums in doubles.
bool UsesDoubles(const JoinAggregate& a, FieldType type) {
  return a.kind == JoinAggregate::Kind::kMean || type == FieldType::kDouble;
}

// Subdividing the tree side's huge polygons (largest-overlap): a polygon of more vertices than
// kSubdivideAbove is cut in halves along the longer side of its box (GEOS ClipByRect), again
// and again, until each piece has at most kPieceVertices, as PostGIS users do with
// ST_Subdivide before such joins. The pieces partition the polygon (they meet only along cut
// lines), so the area a probe shares with it is the sum of the areas it shares with the pieces
// its box meets; an overlay then costs the size of a few pieces, not of the whole polygon
// (measured: 20,000 squares along the edge of a 1M-vertex polygon, 210 s whole).
constexpr std::int64_t kSubdivideAbove = 16384;
constexpr std::int64_t kPieceVertices = 2048;
constexpr int kMaxCutDepth = 24;

struct Pieces {
  std::vector<std::string> wkb;
  std::optional<geo::StrTree> tree;  // over the pieces' boxes, ids index wkb
  std::int64_t bytes = 0;
};

// Cuts `g` (inside `box`) into pieces of at most kPieceVertices. Returns false when a cut
// gives something that is not polygonal (ClipByRect is not guaranteed to give valid output):
// the polygon is then overlaid whole.
Result<bool> CutInto(const geo::Geometry& g, const geo::Envelope& box, int depth,
                     const std::stop_token& stop, Pieces* out) {
  if (stop.stop_requested()) return Status::Cancelled("join cancelled");
  GEOLAKE_ASSIGN_OR_RETURN(bool empty, g.IsEmpty());
  if (empty) return true;
  GEOLAKE_ASSIGN_OR_RETURN(std::string type, g.TypeName());
  if (type != "Polygon" && type != "MultiPolygon") return false;
  GEOLAKE_ASSIGN_OR_RETURN(std::int64_t vertices, g.NumCoordinates());
  if (vertices <= kPieceVertices || depth >= kMaxCutDepth) {
    GEOLAKE_ASSIGN_OR_RETURN(std::string wkb, g.ToWkb());
    out->bytes += static_cast<std::int64_t>(wkb.size() + sizeof(std::string)) + 64;
    out->wkb.push_back(std::move(wkb));
    return true;
  }
  geo::Envelope lo = box, hi = box;
  if (box.xmax - box.xmin >= box.ymax - box.ymin) {
    lo.xmax = hi.xmin = box.xmin + (box.xmax - box.xmin) / 2;
  } else {
    lo.ymax = hi.ymin = box.ymin + (box.ymax - box.ymin) / 2;
  }
  for (const geo::Envelope& half : {lo, hi}) {
    GEOLAKE_ASSIGN_OR_RETURN(geo::Geometry part, g.ClipByRect(half));
    GEOLAKE_ASSIGN_OR_RETURN(bool ok, CutInto(part, half, depth + 1, stop, out));
    if (!ok) return false;
  }
  return true;
}

// The pieces of polygon `g` with box `box`, or null when it is small enough or cannot be cut.
Result<std::unique_ptr<Pieces>> Subdivide(const geo::Geometry& g, const geo::Envelope& box,
                                          const std::stop_token& stop) {
  GEOLAKE_ASSIGN_OR_RETURN(std::int64_t vertices, g.NumCoordinates());
  if (vertices <= kSubdivideAbove) return nullptr;
  auto pieces = std::make_unique<Pieces>();
  GEOLAKE_ASSIGN_OR_RETURN(bool ok, CutInto(g, box, 0, stop, pieces.get()));
  if (!ok || pieces->wkb.size() < 2) return nullptr;
  std::vector<geo::StrTree::Item> items;
  for (std::size_t k = 0; k < pieces->wkb.size(); ++k) {
    GEOLAKE_ASSIGN_OR_RETURN(geo::WkbSummary s, geo::SummarizeWkb(geo::AsBytes(pieces->wkb[k])));
    items.push_back({s.envelope, static_cast<std::int64_t>(k)});
  }
  GEOLAKE_ASSIGN_OR_RETURN(geo::StrTree tree, geo::StrTree::Build(std::move(items)));
  pieces->tree = std::move(tree);
  pieces->bytes += static_cast<std::int64_t>(pieces->wkb.size()) * 64;
  return pieces;
}

// True when `wkb` is a Polygon whose only ring runs around the corners of its box `box`
// (axis-parallel edges through its four distinct corners): the polygon is the box.
bool IsBox(std::span<const std::uint8_t> wkb, const geo::Envelope& box) {
  if (!(box.xmin < box.xmax && box.ymin < box.ymax)) return false;
  Result<geo::FlatGeometry> flat = geo::ParseWkb(wkb);
  if (!flat.ok() || flat->type() != geo::GeometryType::kPolygon || flat->rings.size() != 1 ||
      flat->num_coordinates() != 5) {
    return false;
  }
  int corners = 0;  // a bit per corner seen
  for (std::size_t i = 0; i < 5; ++i) {
    const auto c = flat->coordinate(i);
    const bool left = c[0] == box.xmin, bottom = c[1] == box.ymin;
    if ((!left && c[0] != box.xmax) || (!bottom && c[1] != box.ymax)) return false;
    corners |= 1 << ((left ? 0 : 1) + (bottom ? 0 : 2));
    if (i > 0) {
      const auto p = flat->coordinate(i - 1);
      if ((c[0] != p[0]) == (c[1] != p[1])) return false;  // not one axis-parallel step
    }
  }
  return corners == 0xF;
}

// ---- Spatial partitioning ------------------------------------------------------------------
// When the tree side does not fit its share of --memory, the plane is cut into cells and the
// join runs one pass per cell. Every row of one side has a home cell (the cell holding the
// centre of its box; a row without a box lives in cell 0), and a pair is found only in the
// home cell of that side's row, so it is found exactly once:
// - home by the tree side (the default; aggregates and --how left over an indexed left side
//   need it, as their output per tree row must be complete): a pass holds the tree rows homed
//   in its cell and streams the rows whose box meets the union of their boxes (the cell's
//   reach), so a cell's memory is what the plan gave it whatever the stream holds;
// - home by the stream side (largest-overlap and --how left over a streamed left side, whose
//   output per stream row must be complete): a pre-pass over the stream finds each cell's
//   reach from the stream rows homed there; a pass holds the tree rows meeting that reach and
//   joins only its own stream rows. A large stream row widens its cell's reach, and so the
//   tree rows that cell holds.
// Pass 0 reads the stream side whole, so rows without a box are handled (and reported) once.

// The cells: a k-d split of a sample of box centres until each leaf holds about `target`
// bytes. Deterministic for one input (the sample is drawn with a fixed seed in input order).
class CellPlan {
 public:
  struct Sample {
    double x = 0, y = 0;
    double bytes = 0;
  };

  // `scale` turns the sample's bytes into the side's bytes; `extent` bounds every centre.
  static CellPlan Build(std::vector<Sample> sample, double scale, double target,
                        const geo::Envelope& extent) {
    CellPlan plan;
    plan.extent_ = extent;
    plan.Split(sample, 0, sample.size(), scale, target, extent, 0);
    return plan;
  }

  std::size_t size() const { return rects_.size(); }
  // Text that differs between two plans that cut the plane differently.
  std::string Identity() const {
    std::string text;
    for (const Node& n : nodes_) {
      char part[64];
      std::snprintf(part, sizeof(part), "%d:%a:%d;", n.axis, n.split, n.cell);
      text += part;
    }
    char hex[17];
    std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(StableHash64(text)));
    return std::to_string(rects_.size()) + " cells " + hex;
  }
  // The cell's part of the plane, clipped to the extent of the centres (a closed box that
  // every box homed in the cell meets).
  const geo::Envelope& rect(std::size_t cell) const { return rects_[cell]; }

  // The home cell of a row whose box is `box` (cell 0 for an empty box).
  std::size_t CellOf(const geo::Envelope& box) const {
    if (box.IsEmpty() || nodes_.empty()) return 0;
    const double c[2] = {box.xmin / 2 + box.xmax / 2, box.ymin / 2 + box.ymax / 2};
    if (!std::isfinite(c[0]) || !std::isfinite(c[1])) return 0;
    std::size_t n = 0;
    while (nodes_[n].cell < 0) {
      n = c[nodes_[n].axis] < nodes_[n].split ? nodes_[n].low : nodes_[n].high;
    }
    return static_cast<std::size_t>(nodes_[n].cell);
  }

 private:
  struct Node {
    int axis = 0;
    double split = 0;
    std::size_t low = 0, high = 0;  // children (nodes_ indexes)
    int cell = -1;                  // a leaf's cell, else -1
  };

  // Split sample[begin, end) (whose centres lie in `rect`) into leaves; returns its node.
  std::size_t Split(std::vector<Sample>& sample, std::size_t begin, std::size_t end, double scale,
                    double target, const geo::Envelope& rect, int depth) {
    const std::size_t node = nodes_.size();
    nodes_.emplace_back();
    double bytes = 0;
    geo::Envelope spread;
    for (std::size_t i = begin; i < end; ++i) {
      bytes += sample[i].bytes;
      spread.Expand(sample[i].x, sample[i].y);
    }
    std::size_t mid = end;
    const int wider = spread.Width() >= spread.Height() ? 0 : 1;
    int axis = wider;
    double split = 0;
    if (bytes * scale > target && end - begin >= 2 && depth < 40) {
      // The median along the wider axis; the other axis when every centre shares the value.
      for (int attempt = 0; attempt < 2 && mid == end; ++attempt) {
        axis = attempt == 0 ? wider : 1 - wider;
        auto key = [axis](const Sample& a) { return axis == 0 ? a.x : a.y; };
        std::sort(sample.begin() + static_cast<std::ptrdiff_t>(begin),
                  sample.begin() + static_cast<std::ptrdiff_t>(end),
                  [&](const Sample& a, const Sample& b) { return key(a) < key(b); });
        split = key(sample[begin + (end - begin) / 2]);
        // The first centre >= split starts the high side; a split at the lowest value moves up
        // to the next distinct value.
        std::size_t i = begin;
        while (i < end && key(sample[i]) < split) ++i;
        if (i == begin) {
          while (i < end && key(sample[i]) == split) ++i;
          if (i < end) split = key(sample[i]);
        }
        if (i > begin && i < end) mid = i;
      }
    }
    if (mid == end) {
      nodes_[node].cell = static_cast<int>(rects_.size());
      geo::Envelope clipped = rect;
      clipped.xmin = std::max(clipped.xmin, extent_.xmin);
      clipped.ymin = std::max(clipped.ymin, extent_.ymin);
      clipped.xmax = std::min(clipped.xmax, extent_.xmax);
      clipped.ymax = std::min(clipped.ymax, extent_.ymax);
      rects_.push_back(clipped);
      return node;
    }
    geo::Envelope low = rect, high = rect;
    (axis == 0 ? low.xmax : low.ymax) = split;
    (axis == 0 ? high.xmin : high.ymin) = split;
    nodes_[node].axis = axis;
    nodes_[node].split = split;
    const std::size_t l = Split(sample, begin, mid, scale, target, low, depth + 1);
    const std::size_t h = Split(sample, mid, end, scale, target, high, depth + 1);
    nodes_[node].low = l;
    nodes_[node].high = h;
    return node;
  }

  std::vector<Node> nodes_;
  std::vector<geo::Envelope> rects_;
  geo::Envelope extent_;
};

// One read of the tree side: its bytes, the extent of its box centres and a sample of them.
class SampleCentres final : public Input::Visitor {
 public:
  static constexpr std::size_t kSampleSize = 1 << 16;

  Status Batch(const InputUnit& /*unit*/, FeatureBatch batch) override {
    const std::int64_t n = batch.num_rows();
    if (n == 0) return Status::OK();
    const double attributes =
        static_cast<double>(batch.ByteSize() - static_cast<std::int64_t>(batch.wkb.size())) /
        static_cast<double>(n);
    for (std::int64_t r = 0; r < n; ++r) {
      const auto row = static_cast<std::size_t>(r);
      const double bytes =
          attributes + static_cast<double>(batch.wkb_offsets[row + 1] - batch.wkb_offsets[row]);
      total_bytes += bytes;
      const geo::Envelope box = RowBox(batch, row);
      if (box.IsEmpty()) continue;
      const CellPlan::Sample s{box.xmin / 2 + box.xmax / 2, box.ymin / 2 + box.ymax / 2, bytes};
      if (!std::isfinite(s.x) || !std::isfinite(s.y)) continue;
      extent.Expand(s.x, s.y);
      // Reservoir sampling (Vitter's algorithm R).
      ++seen_;
      if (sample.size() < kSampleSize) {
        sample.push_back(s);
        sample_bytes += bytes;
      } else {
        const std::uint64_t k = random_() % seen_;
        if (k < kSampleSize) {
          sample_bytes += bytes - sample[k].bytes;
          sample[k] = s;
        }
      }
    }
    return Status::OK();
  }
  Status UnitEnd(const InputUnit& /*unit*/) override { return Status::OK(); }

  std::vector<CellPlan::Sample> sample;
  double sample_bytes = 0;
  double total_bytes = 0;
  geo::Envelope extent;

 private:
  std::uint64_t seen_ = 0;
  std::mt19937_64 random_{0x6a6f696e};  // fixed: the same input gives the same cells
};

// The stream side's pre-pass (home by the stream): the union of the boxes of each cell's rows.
class StreamReach final : public Input::Visitor {
 public:
  StreamReach(const CellPlan* cells, std::vector<geo::Envelope>* reach)
      : cells_(cells), reach_(reach) {}
  Status Batch(const InputUnit& /*unit*/, FeatureBatch batch) override {
    for (std::size_t r = 0; r < static_cast<std::size_t>(batch.num_rows()); ++r) {
      const geo::Envelope box = RowBox(batch, r);
      if (!box.IsEmpty()) (*reach_)[cells_->CellOf(box)].Expand(box);
    }
    return Status::OK();
  }
  Status UnitEnd(const InputUnit& /*unit*/) override { return Status::OK(); }

 private:
  const CellPlan* cells_;
  std::vector<geo::Envelope>* reach_;
};

// The tree side, in memory; immutable once Prepare is done (shared by every worker).
struct TreeSide {
  FeatureBatch rows;
  std::vector<Kind> kinds;
  std::vector<geo::Envelope> boxes;
  std::vector<std::string> repaired;  // the repaired WKB of an invalid polygon, else empty
  std::vector<std::unique_ptr<PointInPolygon>> pip;  // polygons
  std::vector<double> xs, ys;                        // points
  // Largest-overlap: a polygon of more than kSubdivideAbove vertices cut into pieces (null
  // for the others), so an overlay touches only the edges near the probe.
  std::vector<std::unique_ptr<Pieces>> pieces;
  std::int64_t subdivided = 0, piece_count = 0;
  std::optional<geo::StrTree> tree;
  std::int64_t bytes = 0;
  std::int64_t bad = 0;

  std::span<const std::uint8_t> Wkb(std::size_t item) const {
    if (!repaired[item].empty()) return geo::AsBytes(repaired[item]);
    return rows.GeometryAt(item);
  }
};

class JoinOperation;

class JoinWorker final : public OpWorker {
 public:
  JoinWorker(const JoinOperation* op, geo::GeoContext* geo, std::int64_t cache_limit)
      : op_(op), geo_(geo), cache_limit_(cache_limit) {}
  void SetAggregates(AggregateState* state) { aggregates_ = state; }
  Status BeginPass(int /*pass*/) override {
    prepared_.clear();
    cache_bytes_ = 0;
    piece_geoms_.clear();
    piece_bytes_ = 0;
    return Status::OK();
  }
  Status Process(const InputUnit& unit, const FeatureBatch& in, OpOutput* out) override;

 private:
  // Adds left row `row` of `in` to tree item `item`'s aggregates.
  void Aggregate(const FeatureBatch& in, std::size_t row, std::size_t item);

  // The stream row being joined, parsed as far as its pairs need.
  struct Probe {
    std::span<const std::uint8_t> wkb;
    Kind kind = Kind::kNull;
    geo::Envelope box;
    double x = 0, y = 0;
    std::optional<geo::Geometry> geometry;  // GEOS, repaired when an invalid polygon
    std::optional<PointInPolygon> pip;      // a polygon probe against tree points
    bool pip_failed = false;
    std::optional<double> area;     // largest-overlap: the (repaired) polygon's area
    std::optional<bool> rectangle;  // largest-overlap: the polygon is its box (IsBox)
  };
  Result<const geo::PreparedGeometry*> Prepared(std::size_t item);
  Result<const geo::Geometry*> ProbeGeometry(Probe& probe);
  Result<bool> Test(Probe& probe, std::size_t item);
  // The area of the intersection of a polygon probe and tree item (largest-overlap).
  Result<double> Overlap(Probe& probe, std::size_t item);
  // The same, summed over the item's pieces that the probe's box meets.
  Result<double> OverlapByPieces(Probe& probe, const geo::Geometry& g, std::size_t item,
                                 const Pieces& pieces);
  // The same for a probe that is its own box: the area of the item (or of its pieces the box
  // meets) clipped to the box.
  Result<double> ClippedArea(Probe& probe, std::size_t item, const geo::Geometry& whole);
  // The areas of `overlay(piece)` summed over the pieces of `item` whose boxes meet `box`.
  template <typename PieceOverlay>
  Result<double> SumOverPieces(const geo::Envelope& box, std::size_t item, const Pieces& pieces,
                               PieceOverlay&& overlay);
  // The GEOS geometry of piece `k` of item `item`, cached.
  Result<const geo::Geometry*> Piece(std::size_t item, const Pieces& pieces, std::size_t k);

  const JoinOperation* op_;
  geo::GeoContext* geo_;
  std::int64_t cache_limit_;
  std::int64_t cache_bytes_ = 0;
  std::vector<std::unique_ptr<geo::PreparedGeometry>> prepared_;
  // GEOS geometries of pieces, per item and piece, built as probes need them; dropped
  // together when they pass the cache limit (as prepared_ is).
  std::map<std::size_t, std::vector<std::optional<geo::Geometry>>> piece_geoms_;
  std::int64_t piece_bytes_ = 0;
  std::vector<std::int64_t> candidates_;
  std::vector<std::int64_t> piece_hits_;
  bool fast_answer_ = false;  // the last Test was decided by the point-in-polygon path
  std::optional<geo::Transformer> transformer_;  // --reproject-right, the right streamed
  AggregateState* aggregates_ = nullptr;         // owned by the operation; null without aggregates
};

class JoinOperation final : public Operation {
 public:
  JoinOperation(const JoinOptions& options, const Input* tree_input, bool tree_is_left,
                JoinReport* report)
      : options_(options), tree_input_(tree_input), tree_is_left_(tree_is_left), report_(report) {
    tree_op_ = tree_is_left ? options.predicate : Converse(options.predicate);
  }

  std::string name() const override { return "join"; }
  std::string parameters() const override {
    nlohmann::json j{{"predicate", JoinPredicateName(options_)},
                     {"how", options_.how == JoinHow::kLeft ? "left" : "inner"},
                     {"suffix", options_.suffix},
                     {"columns", options_.columns},
                     {"index", tree_is_left_ ? "left" : "right"},
                     {"aggregates", AggregateNames()}};
    // Only when set, so that the resume key of a join without it stays what it was.
    if (options_.reproject_right) j["reproject_right"] = true;
    return j.dump();
  }
  std::vector<std::string> other_inputs() const override { return {tree_input_->identity()}; }
  bool resumable_by_unit() const override {
    // Aggregates are complete only at the end, and so are left rows without a match when
    // the left side is the tree.
    if (aggregating()) return false;
    return !(tree_is_left_ && options_.how == JoinHow::kLeft);
  }
  bool aggregating() const { return !options_.aggregates.empty(); }

  Result<OpSchema> Bind(OpContext& ctx, const Input& main) override;
  Status Prepare(OpContext& ctx) override;
  int passes() const override { return home_ == Home::kNone ? 1 : static_cast<int>(cells_.size()); }
  // Recorded whether partitioned or not: a run resumed with another --memory may cut the
  // plane otherwise (or not at all), and its units would not be the first run's.
  std::string pass_identity() const override {
    return home_ == Home::kNone ? "1 cell" : cells_.Identity();
  }
  Result<PassPlan> BeginPass(OpContext& ctx, int pass) override;
  Status FinishPass(OpContext& ctx, int pass, geo::GeoContext* geo, OpOutput* out) override;
  // Partitioned by the stream side: whether a stream row whose box is `box` is joined in this
  // pass (its home is the pass's cell).
  bool JoinsHere(const geo::Envelope& box) const { return cells_.CellOf(box) == cell_; }
  bool partitioned_by_stream() const { return home_ == Home::kStream; }
  // The streamed rows arrive in the right's CRS and are transformed by each worker.
  bool reproject_stream() const { return right_crs_.has_value() && tree_is_left_; }
  // A transformer from the right's CRS to the left's, bound to `geo` (a reprojecting run).
  Result<geo::Transformer> RightToLeft(geo::GeoContext& geo) const {
    return geo::Transformer::Make(geo, *right_crs_, *left_crs_);
  }
  Result<std::unique_ptr<OpWorker>> MakeWorker(geo::GeoContext* geo) override {
    auto worker = std::make_unique<JoinWorker>(this, geo, cache_limit_);
    if (aggregating()) worker->SetAggregates(NewAggregateState());
    return std::unique_ptr<OpWorker>(std::move(worker));
  }
  // A worker's aggregate state, sized to the tree; owned here so Finish can merge them.
  AggregateState* NewAggregateState() {
    std::unique_ptr<AggregateState> state = SizedAggregateState();
    std::lock_guard lock(aggregates_mu_);
    aggregate_states_.push_back(std::move(state));
    return aggregate_states_.back().get();
  }
  std::unique_ptr<AggregateState> SizedAggregateState() const {
    auto state = std::make_unique<AggregateState>();
    const auto n = static_cast<std::size_t>(tree_.rows.num_rows());
    state->counts.assign(n, 0);
    state->slots.resize(options_.aggregates.size());
    for (std::size_t a = 0; a < options_.aggregates.size(); ++a) {
      const JoinAggregate& agg = options_.aggregates[a];
      if (agg.kind == JoinAggregate::Kind::kCount) continue;
      AggregateState::Slots& slots = state->slots[a];
      slots.values.assign(n, 0);
      if (UsesDoubles(agg, aggregate_types_[a])) {
        slots.doubles.assign(n, 0.0);
      } else {
        slots.ints.assign(n, 0);
      }
    }
    return state;
  }
  // The left column each aggregate reads (unused for count) and its type.
  std::size_t aggregate_column(std::size_t a) const { return aggregate_columns_[a]; }
  FieldType aggregate_type(std::size_t a) const { return aggregate_types_[a]; }
  Status Finish(OpContext& ctx, geo::GeoContext* geo, OpOutput* out) override;
  Status CheckInvariant(const RunTotals& totals, std::vector<std::string>* lines) const override;
  std::vector<std::string> AggregateNames() const {
    std::vector<std::string> names;
    for (const JoinAggregate& a : options_.aggregates) {
      names.push_back(a.kind == JoinAggregate::Kind::kCount ? "count"
                                                            : a.OutputName() + ":" + a.column);
    }
    return names;
  }
  // The merged aggregates as output rows, one per right feature (Finish).
  Status BuildAggregateRows(OpOutput* out);

  // Output rows for `pairs` of stream rows of `in` and tree items (-1: none).
  void BuildRows(const FeatureBatch& in, std::span<const std::int64_t> stream_rows,
                 std::span<const std::int64_t> items, FeatureBatch* out) const;

  // largest-overlap's two columns, after the others.
  void AddOverlapColumns(const std::vector<double>& areas, const std::vector<double>& fractions,
                         FeatureBatch* out) const {
    for (const auto* values : {&areas, &fractions}) {
      out->fields.push_back(
          {values == &areas ? "overlap_area" : "overlap_fraction", FieldType::kDouble});
      Column& c = out->columns.emplace_back();
      c.type = FieldType::kDouble;
      c.valid.assign(values->size(), 1);
      c.doubles = *values;
    }
  }
  const JoinOptions& options() const { return options_; }
  const TreeSide& tree() const { return tree_; }
  bool tree_is_left() const { return tree_is_left_; }
  JoinPredicate tree_op() const { return tree_op_; }
  void MarkMatched(std::size_t item) const { matched_[item].store(1, std::memory_order_relaxed); }
  void CountPairs(std::int64_t pairs, std::int64_t unmatched, std::int64_t candidates,
                  std::int64_t fast) const {
    pairs_.fetch_add(pairs, std::memory_order_relaxed);
    unmatched_.fetch_add(unmatched, std::memory_order_relaxed);
    candidates_.fetch_add(candidates, std::memory_order_relaxed);
    fast_.fetch_add(fast, std::memory_order_relaxed);
  }

 private:
  JoinOptions options_;
  // Reads the tree side into tree_ and indexes it: every row, or (cells given) those homed in
  // `cell`, of the rows meeting `bbox`. *too_big when it needs more than tree_limit_ (tree_
  // is then empty and tree_needs_ says how much).
  Status LoadTree(OpContext& ctx, const CellPlan* cells, std::size_t cell,
                  std::optional<geo::Envelope> bbox, bool* too_big);
  // The tree side does not fit: cut the plane into cells_ (join.cc "Spatial partitioning").
  Status PlanCells(OpContext& ctx);
  // Reads the tree side into `visitor`, through `read.bbox`; under --reproject-right (the right
  // side indexed) its geometries are transformed first and the box applied after.
  Status ReadTree(OpContext& ctx, Input::ReadOptions read, Input::Visitor* visitor);
  // The rows complete once every stream row met the tree: aggregates, and unmatched tree
  // rows of --how left over an indexed left side.
  Status EndRows(OpOutput* out);
  // Adds the tree side just loaded to the report.
  void ReportTree() const;

  enum class Home : std::uint8_t { kNone, kTree, kStream };

  const Input* tree_input_;
  const Input* main_ = nullptr;  // the stream side (Bind)
  // --reproject-right between two CRSs that differ: the right's and the left's (Bind).
  std::optional<geo::Crs> right_crs_, left_crs_;
  bool tree_is_left_;
  std::int64_t tree_limit_ = 0;  // the tree side's share of --memory
  std::int64_t tree_needs_ = 0;  // what the last LoadTree that did not fit needed
  double index_ratio_ = 0;       // the last LoadTree's indexed bytes over its rows' bytes
  Home home_ = Home::kNone;      // kNone: the tree side whole, one pass
  CellPlan cells_;
  std::vector<geo::Envelope> stream_reach_;  // kStream: per cell
  std::size_t cell_ = 0;                     // the current pass's cell
  JoinPredicate tree_op_;
  JoinReport* report_;
  std::vector<geoparquet::FieldDef> out_fields_;
  std::vector<OutColumn> out_columns_;
  TreeSide tree_;
  std::int64_t cache_limit_ = 0;
  mutable std::unique_ptr<std::atomic<std::uint8_t>[]> matched_;
  mutable std::atomic<std::int64_t> pairs_{0};
  mutable std::atomic<std::int64_t> unmatched_{0};
  mutable std::atomic<std::int64_t> candidates_{0};
  mutable std::atomic<std::int64_t> fast_{0};
  std::vector<std::size_t> aggregate_columns_;
  std::vector<FieldType> aggregate_types_;
  std::mutex aggregates_mu_;  // guards aggregate_states_
  std::vector<std::unique_ptr<AggregateState>> aggregate_states_;
  std::int64_t aggregate_counted_ = 0;  // Finish: the sum of the counts written
};

Result<OpSchema> JoinOperation::Bind(OpContext& /*ctx*/, const Input& main) {
  main_ = &main;
  const Input& left = tree_is_left_ ? *tree_input_ : main;
  const Input& right = tree_is_left_ ? main : *tree_input_;
  // EPSG:4326 and OGC:CRS84 are one CRS for geolake's lon/lat data (a GeoPackage says the one,
  // a GeoParquet file the other).
  GEOLAKE_ASSIGN_OR_RETURN(std::unique_ptr<geo::GeoContext> geo, geo::GeoContext::Make());
  GEOLAKE_ASSIGN_OR_RETURN(const bool same_crs, geo::EquivalentCrs(*geo, left.crs(), right.crs()));
  if (!same_crs) {
    const std::string which =
        "join: " + left.label() + " has CRS " + (left.crs().empty() ? "(unknown)" : left.crs()) +
        " and " + right.label() + " has " + (right.crs().empty() ? "(unknown)" : right.crs());
    if (!options_.reproject_right) {
      return Status::InvalidArgument(
          which + "; pass --reproject-right, or reproject one of them first (geolake reproject)");
    }
    if (left.crs().empty() || right.crs().empty()) {
      return Status::InvalidArgument(which + "; --reproject-right needs both CRSs");
    }
    Result<geo::Crs> from = geo::Crs::Make(*geo, right.crs());
    Result<geo::Crs> to = geo::Crs::Make(*geo, left.crs());
    if (!from.ok() || !to.ok()) {
      return Status::InvalidArgument(
          which + "; --reproject-right: " + (!from.ok() ? from : to).status().message());
    }
    Result<geo::Transformer> probe = geo::Transformer::Make(*geo, *from, *to);
    if (!probe.ok()) {
      return Status::InvalidArgument(which + "; --reproject-right: " + probe.status().message());
    }
    right_crs_ = std::move(*from);
    left_crs_ = std::move(*to);
  }
  std::vector<geoparquet::FieldDef> all;
  std::vector<OutColumn> from;
  if (aggregating()) {
    // The right's columns as they are, then the aggregates of the left's.
    std::set<std::string> names;
    for (std::size_t i = 0; i < right.fields().size(); ++i) {
      all.push_back(right.fields()[i]);
      from.push_back({false, i});
      names.insert(right.fields()[i].name);
    }
    for (std::size_t a = 0; a < options_.aggregates.size(); ++a) {
      const JoinAggregate& agg = options_.aggregates[a];
      const std::string name = agg.OutputName();
      if (!names.insert(name).second) {
        return Status::InvalidArgument("join --aggregate: the output column '" + name +
                                       "' is already taken (a right column or another "
                                       "aggregate); keep the right's out with --columns or "
                                       "rename it first");
      }
      FieldType type = FieldType::kInt64;
      std::size_t column = 0;
      if (agg.kind != JoinAggregate::Kind::kCount) {
        const auto& fields = left.fields();
        const auto found =
            std::find_if(fields.begin(), fields.end(),
                         [&](const geoparquet::FieldDef& f) { return f.name == agg.column; });
        if (found == fields.end()) {
          std::string known;
          for (const auto& f : fields) known += (known.empty() ? "" : ", ") + f.name;
          return Status::InvalidArgument("join --aggregate " + name + ": " + left.label() +
                                         " has no column '" + agg.column +
                                         "' (it has: " + (known.empty() ? "none" : known) + ")");
        }
        column = static_cast<std::size_t>(found - fields.begin());
        type = found->type;
        const bool numeric =
            type == FieldType::kInt64 || type == FieldType::kDouble || type == FieldType::kBool;
        const bool ordered = numeric || type == FieldType::kDate || type == FieldType::kTimestamp;
        const bool summed =
            agg.kind == JoinAggregate::Kind::kSum || agg.kind == JoinAggregate::Kind::kMean;
        if ((summed && !numeric) || !ordered) {
          return Status::InvalidArgument(
              "join --aggregate " + name + ": column '" + agg.column + "' is " +
              std::string(geoparquet::FieldTypeName(type)) +
              (summed ? "; sum and mean take int64, double or bool columns"
                      : "; min and max take int64, double, bool, date or timestamp columns"));
        }
      }
      aggregate_columns_.push_back(column);
      aggregate_types_.push_back(type);
      FieldType out_type = type;
      if (agg.kind == JoinAggregate::Kind::kCount) out_type = FieldType::kInt64;
      if (agg.kind == JoinAggregate::Kind::kMean) out_type = FieldType::kDouble;
      if (agg.kind == JoinAggregate::Kind::kSum && type == FieldType::kBool) {
        out_type = FieldType::kInt64;  // the number of true values
      }
      all.push_back({name, out_type});
      from.push_back({false, 0, static_cast<int>(a)});
    }
  }
  std::set<std::string> left_names;
  for (std::size_t i = 0; !aggregating() && i < left.fields().size(); ++i) {
    all.push_back(left.fields()[i]);
    from.push_back({true, i});
    left_names.insert(left.fields()[i].name);
  }
  for (std::size_t i = 0; !aggregating() && i < right.fields().size(); ++i) {
    geoparquet::FieldDef f = right.fields()[i];
    if (left_names.contains(f.name)) f.name += options_.suffix;
    if (left_names.contains(f.name)) {
      return Status::InvalidArgument("join: the right's column '" + right.fields()[i].name +
                                     "' with --suffix '" + options_.suffix +
                                     "' still clashes with a left column");
    }
    all.push_back(f);
    from.push_back({false, i});
  }
  if (options_.columns.empty()) {
    out_fields_ = all;
    out_columns_ = from;
  } else {
    for (const std::string& name : options_.columns) {
      const auto found = std::find_if(
          all.begin(), all.end(), [&](const geoparquet::FieldDef& f) { return f.name == name; });
      if (found == all.end()) {
        std::string message = "join --columns: no output column '";
        message.append(name).append("' (there are: ");
        for (std::size_t k = 0; k < all.size(); ++k) {
          message.append(k == 0 ? "" : ", ").append(all[k].name);
        }
        message += ")";
        return Status::InvalidArgument(message);
      }
      out_fields_.push_back(*found);
      out_columns_.push_back(from[static_cast<std::size_t>(found - all.begin())]);
    }
  }
  std::vector<geoparquet::FieldDef> fields = out_fields_;
  if (options_.predicate == JoinPredicate::kLargestOverlap && !aggregating()) {
    for (const char* name : {"overlap_area", "overlap_fraction"}) {
      if (std::any_of(fields.begin(), fields.end(),
                      [&](const geoparquet::FieldDef& f) { return f.name == name; })) {
        return Status::InvalidArgument(
            std::string("join largest-overlap: an input has a column '") + name +
            "'; keep it out with --columns");
      }
      fields.push_back({name, FieldType::kDouble});
    }
  }
  return OpSchema{fields, left.crs()};
}

// The tree side under --reproject-right: batches handed on with their geometries in the left's
// CRS and, when `bbox` (the left's CRS) is set, only the rows that meet it, as a read through
// that box would give them.
class ReprojectRows final : public Input::Visitor {
 public:
  ReprojectRows(Input::Visitor* next, geo::Transformer* transformer,
                std::optional<geo::Envelope> bbox)
      : next_(next), transformer_(transformer), bbox_(bbox) {}
  Status Batch(const InputUnit& unit, FeatureBatch batch) override {
    std::vector<std::pair<std::size_t, Status>> bad;
    GEOLAKE_RETURN_NOT_OK(ReprojectBatch(*transformer_, &batch, &bad));
    for (const auto& [row, status] : bad) {
      if (failed.size() < 20) {
        failed.push_back("feature " + std::to_string(batch.feature_index[row]) + ": " +
                         status.message());
      }
      ++failed_count;
    }
    if (bbox_) GEOLAKE_RETURN_NOT_OK(FilterByBox(*bbox_, &batch));
    if (batch.num_rows() == 0) return Status::OK();
    return next_->Batch(unit, std::move(batch));
  }
  Status UnitEnd(const InputUnit& unit) override { return next_->UnitEnd(unit); }

  std::vector<std::string> failed;  // the first reasons
  std::int64_t failed_count = 0;

 private:
  Input::Visitor* next_;
  geo::Transformer* transformer_;
  std::optional<geo::Envelope> bbox_;
};

// Reads the tree side (whole, or the rows homed in one cell), counting its bytes against the
// budget; stops the read once they pass it.
class CollectRows final : public Input::Visitor {
 public:
  CollectRows(FeatureBatch* rows, std::int64_t limit, const CellPlan* cells, std::size_t cell)
      : rows_(rows), limit_(limit), cells_(cells), cell_(cell) {}
  Status Batch(const InputUnit& /*unit*/, FeatureBatch batch) override {
    if (cells_ == nullptr) {
      AppendBatch(batch, rows_);
    } else {
      keep_.clear();
      for (std::size_t r = 0; r < static_cast<std::size_t>(batch.num_rows()); ++r) {
        if (cells_->CellOf(RowBox(batch, r)) == cell_)
          keep_.push_back(static_cast<std::uint32_t>(r));
      }
      AppendSomeRows(batch, keep_, rows_);
    }
    if (rows_->ByteSize() > limit_) {
      overflowed_ = true;
      return Status::NotImplemented("join: the indexed side holds more than " + FormatSize(limit_));
    }
    return Status::OK();
  }
  Status UnitEnd(const InputUnit& /*unit*/) override { return Status::OK(); }
  bool overflowed() const { return overflowed_; }

 private:
  FeatureBatch* rows_;
  std::int64_t limit_;
  const CellPlan* cells_;
  std::size_t cell_;
  std::vector<std::uint32_t> keep_;
  bool overflowed_ = false;
};

Status JoinOperation::LoadTree(OpContext& ctx, const CellPlan* cells, std::size_t cell,
                               std::optional<geo::Envelope> bbox, bool* too_big) {
  *too_big = false;
  tree_ = TreeSide{};
  Input::ReadOptions read;
  read.memory_bytes = std::max<std::int64_t>(ctx.memory_bytes / 8, 1 << 20);
  read.bbox = bbox;
  CollectRows collect(&tree_.rows, tree_limit_, cells, cell);
  Status read_status = ReadTree(ctx, read, &collect);
  if (collect.overflowed()) {
    *too_big = true;
    tree_needs_ = tree_.rows.ByteSize();
    tree_ = TreeSide{};
    return Status::OK();
  }
  GEOLAKE_RETURN_NOT_OK(read_status);
  const auto n = static_cast<std::size_t>(tree_.rows.num_rows());
  // What the index needs besides the point-in-polygon indexes, known before building them:
  // over the share already, or once those pass it, the build stops (memory stays near the
  // share instead of reaching the whole index first).
  constexpr std::int64_t kPerRow = sizeof(geo::Envelope) * 2 + sizeof(Kind) + sizeof(std::string) +
                                   3 * sizeof(double) + sizeof(std::int64_t);
  std::int64_t aggregate_bytes = 0;  // every worker's AggregateState
  if (aggregating()) {
    std::int64_t per_item = 8;
    for (const JoinAggregate& a : options_.aggregates) {
      if (a.kind != JoinAggregate::Kind::kCount) per_item += 16;
    }
    aggregate_bytes = per_item * static_cast<std::int64_t>(n) * std::max(1, ctx.workers);
  }
  const std::int64_t raw = tree_.rows.ByteSize();
  const std::int64_t base_bytes = raw + static_cast<std::int64_t>(n) * kPerRow + aggregate_bytes;
  if (base_bytes > tree_limit_) {
    *too_big = true;
    tree_needs_ = base_bytes;
    tree_ = TreeSide{};
    return Status::OK();
  }
  tree_.kinds.assign(n, Kind::kNull);
  tree_.boxes.assign(n, geo::Envelope::Empty());
  tree_.repaired.assign(n, std::string());
  tree_.pip.resize(n);
  tree_.xs.assign(n, 0);
  tree_.ys.assign(n, 0);

  tree_.pieces.resize(n);
  const bool subdivide = options_.predicate == JoinPredicate::kLargestOverlap;

  // Classify, repair and index every item, in chunks on the executor: small enough that a
  // few hundred large polygons (countries, whose repair is most of this) spread over every
  // worker.
  const std::size_t kChunk = std::clamp<std::size_t>(
      n / (static_cast<std::size_t>(std::max(1, ctx.workers)) * 16), 1, 2048);
  std::mutex mu;
  std::vector<std::string> warnings;
  std::atomic<std::int64_t> pip_bytes{0};
  std::atomic<bool> over{false};
  {
    TaskGroup group(ctx.env->executor, ctx.stop);
    for (std::size_t begin = 0; begin < n; begin += kChunk) {
      const std::size_t end = std::min(n, begin + kChunk);
      group.Spawn([&, begin, end]() -> Status {
        GEOLAKE_ASSIGN_OR_RETURN(auto geo, geo::GeoContext::Make(group.stop_token()));
        for (std::size_t i = begin; i < end; ++i) {
          if (base_bytes + pip_bytes.load(std::memory_order_relaxed) > tree_limit_) {
            over.store(true);
            return Status::OK();
          }
          if (tree_.rows.geometry_valid[i] == 0) continue;
          const auto wkb = tree_.rows.GeometryAt(i);
          Result<geo::WkbSummary> summary = geo::SummarizeWkb(wkb);
          if (!summary.ok()) {
            tree_.kinds[i] = Kind::kBad;
            std::lock_guard lock(mu);
            warnings.push_back("feature " + std::to_string(tree_.rows.feature_index[i]) + ": " +
                               summary.status().message());
            continue;
          }
          tree_.kinds[i] = KindOf(*summary);
          tree_.boxes[i] = summary->envelope;
          if (tree_.kinds[i] == Kind::kPoint) {
            PointXY(wkb, &tree_.xs[i], &tree_.ys[i]);
          } else if (tree_.kinds[i] == Kind::kPolygon) {
            Status st = [&]() -> Status {
              GEOLAKE_ASSIGN_OR_RETURN(geo::Geometry g, geo::Geometry::FromWkb(*geo, wkb));
              GEOLAKE_ASSIGN_OR_RETURN(std::optional<geo::Geometry> fixed, g.RepairIfInvalid(wkb));
              if (fixed) {
                GEOLAKE_ASSIGN_OR_RETURN(tree_.repaired[i], fixed->ToWkb());
                GEOLAKE_ASSIGN_OR_RETURN(geo::WkbSummary s, geo::SummarizeWkb(tree_.Wkb(i)));
                tree_.kinds[i] = KindOf(s);
                tree_.boxes[i] = s.envelope;
                if (tree_.kinds[i] != Kind::kPolygon) return Status::OK();
              }
              GEOLAKE_ASSIGN_OR_RETURN(geo::FlatGeometry flat, geo::ParseWkb(tree_.Wkb(i)));
              GEOLAKE_ASSIGN_OR_RETURN(PointInPolygon pip, PointInPolygon::Build(flat));
              pip_bytes.fetch_add(pip.ByteSize() +
                                  static_cast<std::int64_t>(tree_.repaired[i].size()));
              tree_.pip[i] = std::make_unique<PointInPolygon>(std::move(pip));
              if (subdivide) {
                GEOLAKE_ASSIGN_OR_RETURN(
                    tree_.pieces[i],
                    Subdivide(fixed ? *fixed : g, tree_.boxes[i], group.stop_token()));
                if (tree_.pieces[i] != nullptr) pip_bytes.fetch_add(tree_.pieces[i]->bytes);
              }
              return Status::OK();
            }();
            if (!st.ok()) {
              if (st.code() == ErrorCode::kCancelled) return st;
              tree_.kinds[i] = Kind::kBad;
              tree_.boxes[i] = geo::Envelope::Empty();
              std::lock_guard lock(mu);
              warnings.push_back("feature " + std::to_string(tree_.rows.feature_index[i]) + ": " +
                                 st.message());
            }
          }
        }
        return Status::OK();
      });
    }
    GEOLAKE_RETURN_NOT_OK(group.Wait());
  }
  if (over.load()) {
    *too_big = true;
    tree_needs_ = base_bytes + pip_bytes.load();
    tree_ = TreeSide{};
    return Status::OK();
  }
  tree_.bad = static_cast<std::int64_t>(warnings.size());
  for (const auto& p : tree_.pieces) {
    if (p == nullptr) continue;
    ++tree_.subdivided;
    tree_.piece_count += static_cast<std::int64_t>(p->wkb.size());
  }
  if (tree_.subdivided > 0) {
    Log(LogLevel::kInfo, "join: {} polygon(s) of more than {} vertices cut into {} pieces",
        tree_.subdivided, kSubdivideAbove, tree_.piece_count);
  }
  for (std::size_t w = 0; w < warnings.size() && w < 20; ++w) {
    Log(LogLevel::kWarn, "join: {} (indexed side) is never matched: {}", tree_input_->label(),
        warnings[w]);
  }
  std::vector<geo::StrTree::Item> items;
  items.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (tree_.kinds[i] == Kind::kNull || tree_.kinds[i] == Kind::kEmpty ||
        tree_.kinds[i] == Kind::kBad) {
      continue;
    }
    items.push_back({tree_.boxes[i], static_cast<std::int64_t>(i)});
  }
  GEOLAKE_ASSIGN_OR_RETURN(geo::StrTree tree, geo::StrTree::Build(std::move(items)));
  tree_.tree = std::move(tree);
  tree_.bytes = raw + pip_bytes.load() + static_cast<std::int64_t>(n) * kPerRow;
  if (raw > 0) {
    index_ratio_ = static_cast<double>(tree_.bytes + aggregate_bytes) / static_cast<double>(raw);
  }
  if (tree_.bytes + aggregate_bytes > tree_limit_) {
    *too_big = true;
    tree_needs_ = tree_.bytes + aggregate_bytes;
    tree_ = TreeSide{};
    return Status::OK();
  }
  matched_ = std::make_unique<std::atomic<std::uint8_t>[]>(n);
  for (std::size_t i = 0; i < n; ++i) matched_[i].store(0, std::memory_order_relaxed);
  for (const auto& state : aggregate_states_) *state = std::move(*SizedAggregateState());
  return Status::OK();
}

void JoinOperation::ReportTree() const {
  if (report_ == nullptr) return;
  report_->index_left = tree_is_left_;
  report_->indexed_rows += tree_.rows.num_rows();
  report_->indexed_bytes = std::max(report_->indexed_bytes, tree_.bytes);
  report_->subdivided += tree_.subdivided;
  report_->pieces += tree_.piece_count;
}

Status JoinOperation::ReadTree(OpContext& ctx, Input::ReadOptions read, Input::Visitor* visitor) {
  if (!right_crs_ || tree_is_left_) {
    return tree_input_->Read(read, ctx.env->executor, visitor, ctx.stop);
  }
  GEOLAKE_ASSIGN_OR_RETURN(std::unique_ptr<geo::GeoContext> geo, geo::GeoContext::Make(ctx.stop));
  GEOLAKE_ASSIGN_OR_RETURN(geo::Transformer transformer, RightToLeft(*geo));
  ReprojectRows reproject(visitor, &transformer, read.bbox);
  read.bbox.reset();  // the box is in the left's CRS, the rows are not yet
  GEOLAKE_RETURN_NOT_OK(tree_input_->Read(read, ctx.env->executor, &reproject, ctx.stop));
  if (reproject.failed_count > 0) {
    Log(LogLevel::kWarn,
        "join: {} feature(s) of {} do not transform into the left's CRS and never match; the "
        "first: {}",
        reproject.failed_count, tree_input_->label(), reproject.failed.front());
  }
  return Status::OK();
}

Status JoinOperation::Prepare(OpContext& ctx) {
  tree_limit_ = ctx.memory_bytes * 3 / 4;
  cache_limit_ = std::max<std::int64_t>(ctx.memory_bytes / 4 / std::max(1, ctx.workers), 1 << 20);
  bool too_big = false;
  GEOLAKE_RETURN_NOT_OK(LoadTree(ctx, nullptr, 0, std::nullopt, &too_big));
  if (!too_big) {
    ReportTree();
    return Status::OK();
  }
  return PlanCells(ctx);
}

Status JoinOperation::PlanCells(OpContext& ctx) {
  Input::ReadOptions read;
  read.memory_bytes = std::max<std::int64_t>(ctx.memory_bytes / 8, 1 << 20);
  SampleCentres sampler;
  GEOLAKE_RETURN_NOT_OK(ReadTree(ctx, read, &sampler));
  // Home by the stream side only where each stream row's output must be complete in one pass
  // (aggregates group by the tree row: home by the tree side whatever --how says).
  home_ = !aggregating() && (options_.predicate == JoinPredicate::kLargestOverlap ||
                             (!tree_is_left_ && options_.how == JoinHow::kLeft))
              ? Home::kStream
              : Home::kTree;
  // A cell's rows take a share of the budget divided by what indexing multiplies them by
  // (boxes, point-in-polygon edges, repaired copies, aggregates: 1.3x for large polygons, 5x
  // for triangles), measured on the whole side's first try when it got that far, else on the
  // first cell (and re-planned when that cell says more). Home by the streamed side, a cell
  // also holds the indexed rows its streamed rows reach into from around it: half as much.
  const double scale = sampler.sample_bytes > 0 ? sampler.total_bytes / sampler.sample_bytes : 1;
  const double slack = home_ == Home::kStream ? 2.0 : 1.25;
  double ratio = index_ratio_ > 0 ? index_ratio_ : 3.0;
  const bool measured = index_ratio_ > 0;
  for (int attempt = 0;; ++attempt) {
    cells_ = CellPlan::Build(sampler.sample, scale,
                             static_cast<double>(tree_limit_) / (ratio * slack), sampler.extent);
    if (cells_.size() < 2 || measured || attempt == 3) break;
    index_ratio_ = 0;
    bool too_big = false;
    GEOLAKE_RETURN_NOT_OK(LoadTree(ctx, &cells_, 0, std::nullopt, &too_big));
    tree_ = TreeSide{};
    if (!too_big && index_ratio_ <= ratio) break;
    ratio = index_ratio_ > ratio ? index_ratio_ : ratio * 2;
  }
  const std::string needs =
      FormatSize(static_cast<std::int64_t>(sampler.total_bytes)) + " of rows (more indexed)";
  if (cells_.size() < 2) {
    return Status::NotImplemented(
        "join: the indexed side " + tree_input_->label() + " holds " + needs +
        ", more than its share of --memory (" + FormatSize(tree_limit_) +
        "), and its rows cannot be cut into cells (their boxes share one centre); raise "
        "--memory");
  }
  const double d = options_.predicate == JoinPredicate::kDWithin ? options_.distance : 0;
  if (home_ == Home::kStream) {
    stream_reach_.assign(cells_.size(), geo::Envelope::Empty());
    StreamReach reach(&cells_, &stream_reach_);
    GEOLAKE_RETURN_NOT_OK(main_->Read(read, ctx.env->executor, &reach, ctx.stop));
    for (geo::Envelope& box : stream_reach_) {
      if (!box.IsEmpty()) box = {box.xmin - d, box.ymin - d, box.xmax + d, box.ymax + d};
    }
  }
  Log(LogLevel::kInfo,
      "join: the indexed side {} holds {}, more than its share of --memory ({}): {} cells, one "
      "pass each, rows placed by the {} side",
      tree_input_->label(), needs, FormatSize(tree_limit_), cells_.size(),
      home_ == Home::kTree ? "indexed" : "streamed");
  if (cells_.size() > 8 && main_->spec().table.empty()) {
    Log(LogLevel::kWarn,
        "join: each of the {} passes reads {} whole (a source has no index to prune by); "
        "ingest it into a table first so that a pass reads only the row groups of its cell",
        cells_.size(), main_->label());
  }
  if (report_ != nullptr) report_->cells = static_cast<std::int64_t>(cells_.size());
  return Status::OK();
}

Result<PassPlan> JoinOperation::BeginPass(OpContext& ctx, int pass) {
  if (home_ == Home::kNone) return PassPlan{};
  const auto cell = static_cast<std::size_t>(pass);
  cell_ = cell;
  PassPlan plan;
  plan.label = "cell " + std::to_string(cell + 1) + "/" + std::to_string(cells_.size());
  bool too_big = false;
  if (home_ == Home::kTree) {
    // Cell 0 also holds the rows without a box, which no box filter lets through.
    GEOLAKE_RETURN_NOT_OK(LoadTree(
        ctx, &cells_, cell, cell == 0 ? std::nullopt : std::optional(cells_.rect(cell)), &too_big));
  } else {
    GEOLAKE_RETURN_NOT_OK(LoadTree(ctx, nullptr, 0, stream_reach_[cell], &too_big));
  }
  if (too_big) {
    return Status::NotImplemented(
        "join: " + plan.label + " needs at least " + FormatSize(tree_needs_) +
        " of the indexed side, more than its share of --memory (" + FormatSize(tree_limit_) +
        "): its rows are too large or too close together to cut further; raise --memory");
  }
  ReportTree();
  // The stream rows this pass reads. Pass 0 reads them all, so that rows without a box are
  // joined (and reported) once.
  if (cell == 0) return plan;
  if (home_ == Home::kStream) {
    plan.bbox = stream_reach_[cell];
    return plan;
  }
  // Streamed rows in the right's CRS cannot be filtered by a box in the left's: all are read.
  if (reproject_stream()) return plan;
  const double d = options_.predicate == JoinPredicate::kDWithin ? options_.distance : 0;
  geo::Envelope reach;
  for (const geo::Envelope& box : tree_.boxes) reach.Expand(box);  // empty for unmatchable rows
  if (!reach.IsEmpty()) reach = {reach.xmin - d, reach.ymin - d, reach.xmax + d, reach.ymax + d};
  plan.bbox = reach;
  return plan;
}

Status JoinOperation::FinishPass(OpContext& /*ctx*/, int /*pass*/, geo::GeoContext* /*geo*/,
                                 OpOutput* out) {
  if (home_ != Home::kTree) return Status::OK();
  return EndRows(out);
}

void JoinOperation::BuildRows(const FeatureBatch& in, std::span<const std::int64_t> stream_rows,
                              std::span<const std::int64_t> items, FeatureBatch* out) const {
  const FeatureBatch& tree_rows = tree_.rows;
  out->fields = out_fields_;
  out->columns.assign(out_fields_.size(), Column{});
  for (std::size_t c = 0; c < out_columns_.size(); ++c) {
    const OutColumn& col = out_columns_[c];
    Column& dst = out->columns[c];
    dst.type = out_fields_[c].type;
    const bool from_tree = col.from_left == tree_is_left_;
    if (from_tree) {
      // An empty tree side has no columns (it never matches; --how left rows get nulls).
      Gather(col.index < tree_rows.columns.size() ? &tree_rows.columns[col.index] : nullptr, items,
             &dst);
    } else {
      Gather(in.num_rows() > 0 ? &in.columns[col.index] : nullptr, stream_rows, &dst);
    }
  }
  // The geometry and feature index are the left row's.
  const FeatureBatch& left = tree_is_left_ ? tree_rows : in;
  const std::span<const std::int64_t> left_rows = tree_is_left_ ? items : stream_rows;
  for (std::size_t k = 0; k < left_rows.size(); ++k) {
    const auto r = static_cast<std::size_t>(left_rows[k]);
    const bool valid = left.geometry_valid[r] != 0;
    if (valid) {
      const auto g = left.GeometryAt(r);
      out->wkb.append(reinterpret_cast<const char*>(g.data()), g.size());
    }
    out->wkb_offsets.push_back(static_cast<std::int64_t>(out->wkb.size()));
    out->geometry_valid.push_back(valid ? 1 : 0);
    const auto s = static_cast<std::size_t>(stream_rows[k] >= 0 ? stream_rows[k] : 0);
    out->feature_index.push_back(stream_rows[k] >= 0 && in.num_rows() > 0 ? in.feature_index[s]
                                                                          : left.feature_index[r]);
  }
}

Status JoinOperation::BuildAggregateRows(OpOutput* out) {
  // Merge the workers' states into one, in the order the workers were made.
  std::unique_ptr<AggregateState> total = SizedAggregateState();
  const auto n = static_cast<std::size_t>(tree_.rows.num_rows());
  for (const auto& state : aggregate_states_) {
    if (state->overflow && !total->overflow) {
      total->overflow = true;
      total->overflow_item = state->overflow_item;
    }
    for (std::size_t i = 0; i < n; ++i) total->counts[i] += state->counts[i];
    for (std::size_t a = 0; a < options_.aggregates.size(); ++a) {
      const JoinAggregate& agg = options_.aggregates[a];
      if (agg.kind == JoinAggregate::Kind::kCount) continue;
      const AggregateState::Slots& from = state->slots[a];
      AggregateState::Slots& to = total->slots[a];
      const bool doubles = UsesDoubles(agg, aggregate_types_[a]);
      for (std::size_t i = 0; i < n; ++i) {
        if (from.values[i] == 0) continue;
        const bool first = to.values[i] == 0;
        to.values[i] += from.values[i];
        if (doubles) {
          const double v = from.doubles[i];
          double& acc = to.doubles[i];
          if (agg.kind == JoinAggregate::Kind::kMin) {
            if (first || v < acc || std::isnan(acc)) acc = v;
          } else if (agg.kind == JoinAggregate::Kind::kMax) {
            if (first || v > acc || std::isnan(acc)) acc = v;
          } else {
            acc += v;
          }
          continue;
        }
        const std::int64_t v = from.ints[i];
        std::int64_t& acc = to.ints[i];
        if (agg.kind == JoinAggregate::Kind::kMin) {
          if (first || v < acc) acc = v;
        } else if (agg.kind == JoinAggregate::Kind::kMax) {
          if (first || v > acc) acc = v;
        } else if (__builtin_add_overflow(acc, v, &acc) && !total->overflow) {
          total->overflow = true;
          total->overflow_item = static_cast<std::int64_t>(i);
        }
      }
    }
  }
  if (total->overflow) {
    const auto item = static_cast<std::size_t>(total->overflow_item);
    return Status::InvalidArgument(
        "join --aggregate: an int64 sum overflows for right feature " +
        std::to_string(tree_.rows.feature_index[item]) +
        "; cast the column to double first (geolake query --format parquet, then ingest)");
  }
  std::vector<std::int64_t> items;
  for (std::size_t i = 0; i < n; ++i) {
    if (total->counts[i] > 0 || options_.how == JoinHow::kLeft) {
      items.push_back(static_cast<std::int64_t>(i));
    }
    aggregate_counted_ += total->counts[i];
  }
  FeatureBatch& rows = out->rows;
  rows.fields = out_fields_;
  rows.columns.assign(out_fields_.size(), Column{});
  for (std::size_t c = 0; c < out_columns_.size(); ++c) {
    const OutColumn& col = out_columns_[c];
    Column& dst = rows.columns[c];
    dst.type = out_fields_[c].type;
    if (col.aggregate < 0) {
      Gather(col.index < tree_.rows.columns.size() ? &tree_.rows.columns[col.index] : nullptr,
             items, &dst);
      continue;
    }
    const auto a = static_cast<std::size_t>(col.aggregate);
    const JoinAggregate& agg = options_.aggregates[a];
    const AggregateState::Slots& slots = total->slots[a];
    const bool doubles =
        agg.kind != JoinAggregate::Kind::kCount && UsesDoubles(agg, aggregate_types_[a]);
    for (const std::int64_t item : items) {
      const auto i = static_cast<std::size_t>(item);
      if (agg.kind == JoinAggregate::Kind::kCount) {
        dst.valid.push_back(1);
        dst.ints.push_back(total->counts[i]);
        continue;
      }
      // No non-null value: null, as SQL's SUM/MIN/MAX/AVG over no rows.
      const bool valid = slots.values[i] > 0;
      dst.valid.push_back(valid ? 1 : 0);
      if (dst.type == FieldType::kDouble) {
        double v = 0;
        if (valid) {
          v = doubles ? slots.doubles[i] : static_cast<double>(slots.ints[i]);
          if (agg.kind == JoinAggregate::Kind::kMean) v /= static_cast<double>(slots.values[i]);
        }
        dst.doubles.push_back(v);
      } else {
        dst.ints.push_back(valid ? slots.ints[i] : 0);
      }
    }
  }
  for (const std::int64_t item : items) {
    const auto r = static_cast<std::size_t>(item);
    const bool valid = tree_.rows.geometry_valid[r] != 0;
    if (valid) {
      const auto g = tree_.rows.GeometryAt(r);
      rows.wkb.append(reinterpret_cast<const char*>(g.data()), g.size());
    }
    rows.wkb_offsets.push_back(static_cast<std::int64_t>(rows.wkb.size()));
    rows.geometry_valid.push_back(valid ? 1 : 0);
    rows.feature_index.push_back(tree_.rows.feature_index[r]);
  }
  if (report_ != nullptr) report_->groups += static_cast<std::int64_t>(items.size());
  return Status::OK();
}

Status JoinOperation::Finish(OpContext& /*ctx*/, geo::GeoContext* /*geo*/, OpOutput* out) {
  if (home_ != Home::kTree) GEOLAKE_RETURN_NOT_OK(EndRows(out));
  if (report_ != nullptr) {
    report_->pairs = pairs_.load();
    report_->unmatched_left = unmatched_.load();
    report_->candidates = candidates_.load();
    report_->fast_path = fast_.load();
  }
  return Status::OK();
}

Status JoinOperation::EndRows(OpOutput* out) {
  if (aggregating()) GEOLAKE_RETURN_NOT_OK(BuildAggregateRows(out));
  if (tree_is_left_ && options_.how == JoinHow::kLeft && !aggregating()) {
    std::vector<std::int64_t> items;
    const auto n = static_cast<std::size_t>(tree_.rows.num_rows());
    for (std::size_t i = 0; i < n; ++i) {
      if (matched_[i].load(std::memory_order_relaxed) == 0) {
        items.push_back(static_cast<std::int64_t>(i));
      }
    }
    const std::vector<std::int64_t> none(items.size(), -1);
    FeatureBatch empty;
    BuildRows(empty, none, items, &out->rows);
    unmatched_.fetch_add(static_cast<std::int64_t>(items.size()));
  }
  return Status::OK();
}

Status JoinOperation::CheckInvariant(const RunTotals& totals,
                                     std::vector<std::string>* lines) const {
  const std::int64_t pairs = pairs_.load();
  const std::int64_t unmatched = unmatched_.load();
  if (aggregating()) {
    const std::int64_t groups = report_ != nullptr ? report_->groups : totals.rows_out;
    const bool holds = aggregate_counted_ == pairs && totals.rows_out == groups;
    lines->push_back("join: the groups' counts sum to " + std::to_string(aggregate_counted_) +
                     (aggregate_counted_ == pairs ? " = " : " != ") + "pairs " +
                     std::to_string(pairs) + "; rows out " + std::to_string(totals.rows_out) +
                     (totals.rows_out == groups ? " = " : " != ") + "right features written " +
                     std::to_string(groups) + "; " + std::to_string(candidates_.load()) +
                     " candidates tested, " + std::to_string(fast_.load()) +
                     " by the point-in-polygon path");
    if (!holds) return Status::Internal("join: invariant failed: " + lines->back());
    return Status::OK();
  }
  const bool holds = totals.rows_out == pairs + unmatched;
  lines->push_back("join: rows out " + std::to_string(totals.rows_out) + (holds ? " = " : " != ") +
                   "pairs " + std::to_string(pairs) + " + left rows without a match " +
                   std::to_string(unmatched) + "; " + std::to_string(candidates_.load()) +
                   " candidates tested, " + std::to_string(fast_.load()) +
                   " by the point-in-polygon path");
  if (!holds) return Status::Internal("join: invariant failed: " + lines->back());
  return Status::OK();
}

Result<const geo::PreparedGeometry*> JoinWorker::Prepared(std::size_t item) {
  const TreeSide& tree = op_->tree();
  if (prepared_.empty()) prepared_.resize(static_cast<std::size_t>(tree.rows.num_rows()));
  if (prepared_[item] == nullptr) {
    const auto wkb = tree.Wkb(item);
    // GEOS holds ~24 bytes a coordinate and its indexes about as much again: ~3x the WKB.
    const auto cost = static_cast<std::int64_t>(wkb.size()) * 3 + 256;
    if (cache_bytes_ + cost > cache_limit_) {
      for (auto& p : prepared_) p.reset();
      cache_bytes_ = 0;
    }
    GEOLAKE_ASSIGN_OR_RETURN(geo::Geometry g, geo::Geometry::FromWkb(*geo_, wkb));
    GEOLAKE_ASSIGN_OR_RETURN(geo::PreparedGeometry p, geo::PreparedGeometry::Make(std::move(g)));
    prepared_[item] = std::make_unique<geo::PreparedGeometry>(std::move(p));
    cache_bytes_ += cost;
  }
  return prepared_[item].get();
}

Result<const geo::Geometry*> JoinWorker::ProbeGeometry(Probe& probe) {
  if (!probe.geometry) {
    GEOLAKE_ASSIGN_OR_RETURN(geo::Geometry g, geo::Geometry::FromWkb(*geo_, probe.wkb));
    if (probe.kind == Kind::kPolygon) {
      GEOLAKE_ASSIGN_OR_RETURN(std::optional<geo::Geometry> fixed, g.RepairIfInvalid(probe.wkb));
      if (fixed) g = std::move(*fixed);
    }
    probe.geometry = std::move(g);
  }
  return &*probe.geometry;
}

Result<bool> JoinWorker::Test(Probe& probe, std::size_t item) {
  const TreeSide& tree = op_->tree();
  const JoinPredicate tree_op = op_->tree_op();
  const Kind kind = tree.kinds[item];
  fast_answer_ = true;
  // The point fast path, from the point's point of view.
  if (probe.kind == Kind::kPoint && kind == Kind::kPolygon) {
    const std::optional<bool> answer =
        PointAnswer(Converse(tree_op), tree.pip[item]->Locate(probe.x, probe.y));
    if (answer) return *answer;
  } else if (probe.kind == Kind::kPolygon && kind == Kind::kPoint && !probe.pip_failed) {
    if (!probe.pip) {
      // Built from the repaired geometry when the probe was invalid.
      GEOLAKE_ASSIGN_OR_RETURN(const geo::Geometry* g, ProbeGeometry(probe));
      GEOLAKE_ASSIGN_OR_RETURN(std::string wkb, g->ToWkb());
      Result<geo::FlatGeometry> flat = geo::ParseWkb(geo::AsBytes(wkb));
      Result<PointInPolygon> pip =
          flat.ok() ? PointInPolygon::Build(*flat) : Result<PointInPolygon>(flat.status());
      if (pip.ok()) {
        probe.pip = std::move(*pip);
      } else {
        probe.pip_failed = true;  // repaired into another type: GEOS
      }
    }
    if (probe.pip) {
      const std::optional<bool> answer =
          PointAnswer(tree_op, probe.pip->Locate(tree.xs[item], tree.ys[item]));
      if (answer) return *answer;
    }
  }
  fast_answer_ = false;
  GEOLAKE_ASSIGN_OR_RETURN(const geo::PreparedGeometry* prepared, Prepared(item));
  GEOLAKE_ASSIGN_OR_RETURN(const geo::Geometry* g, ProbeGeometry(probe));
  switch (tree_op) {
    case JoinPredicate::kIntersects:
      return prepared->Intersects(*g);
    case JoinPredicate::kContains:
      return prepared->Contains(*g);
    case JoinPredicate::kWithin:
      return prepared->Within(*g);
    case JoinPredicate::kTouches:
      return prepared->Touches(*g);
    case JoinPredicate::kCovers:
      return prepared->Covers(*g);
    case JoinPredicate::kCoveredBy:
      return prepared->CoveredBy(*g);
    case JoinPredicate::kDWithin:
      return prepared->DistanceWithin(*g, op_->options().distance);
    case JoinPredicate::kLargestOverlap:
      break;  // Overlap() answers it
  }
  return Status::Internal("join: no test for this predicate");
}

Result<double> JoinWorker::Overlap(Probe& probe, std::size_t item) {
  fast_answer_ = false;
  if (op_->tree().kinds[item] != Kind::kPolygon) return 0.0;
  GEOLAKE_ASSIGN_OR_RETURN(const geo::PreparedGeometry* prepared, Prepared(item));
  GEOLAKE_ASSIGN_OR_RETURN(const geo::Geometry* g, ProbeGeometry(probe));
  if (!probe.area) {
    GEOLAKE_ASSIGN_OR_RETURN(double area, g->Area());
    probe.area = area;
  }
  GEOLAKE_ASSIGN_OR_RETURN(bool meets, prepared->Intersects(*g));
  if (!meets) return 0.0;
  // Inside the right polygon whole: the overlap is the left's own area, without an overlay.
  GEOLAKE_ASSIGN_OR_RETURN(bool inside, prepared->Covers(*g));
  if (inside) return *probe.area;
  if (!probe.rectangle) probe.rectangle = IsBox(probe.wkb, probe.box);
  if (*probe.rectangle) {
    // A box probe (grid cells, tiles): clipping the right polygon to the box is its
    // intersection, in one linear pass instead of an overlay.
    Result<double> clipped = ClippedArea(probe, item, prepared->base());
    if (clipped.ok() || clipped.status().code() != ErrorCode::kGeometryError) return clipped;
  }
  if (const Pieces* pieces = op_->tree().pieces[item].get()) {
    Result<double> sum = OverlapByPieces(probe, *g, item, *pieces);
    // A piece GEOS could not overlay (a cut may be invalid): the whole polygon, as without.
    if (sum.ok() || sum.status().code() != ErrorCode::kGeometryError) return sum;
  }
  Result<geo::Geometry> common = prepared->base().Intersection(*g);
  if (!common.ok() && common.status().code() == ErrorCode::kGeometryError) {
    // An invalid right polygon (the left one is already repaired): overlay its repair.
    GEOLAKE_ASSIGN_OR_RETURN(std::optional<geo::Geometry> fixed,
                             prepared->base().RepairIfInvalid());
    if (fixed) common = fixed->Intersection(*g);
  }
  if (!common.ok()) return common.status();
  return common->Area();
}

Result<const geo::Geometry*> JoinWorker::Piece(std::size_t item, const Pieces& pieces,
                                               std::size_t k) {
  auto it = piece_geoms_.find(item);
  if (it != piece_geoms_.end() && it->second[k]) return &*it->second[k];
  const std::string& wkb = pieces.wkb[k];
  const auto cost = static_cast<std::int64_t>(wkb.size()) * 3 + 256;
  if (piece_bytes_ + cost > cache_limit_) {
    piece_geoms_.clear();
    piece_bytes_ = 0;
  }
  GEOLAKE_ASSIGN_OR_RETURN(geo::Geometry piece, geo::Geometry::FromWkb(*geo_, wkb));
  auto& slots = piece_geoms_[item];
  slots.resize(pieces.wkb.size());
  slots[k] = std::move(piece);
  piece_bytes_ += cost;
  return &*slots[k];
}

template <typename PieceOverlay>
Result<double> JoinWorker::SumOverPieces(const geo::Envelope& box, std::size_t item,
                                         const Pieces& pieces, PieceOverlay&& overlay) {
  piece_hits_.clear();
  pieces.tree->Query(box, [&](std::int64_t id) { piece_hits_.push_back(id); });
  // Summed in piece order, so every worker and run gives the same last bits.
  std::sort(piece_hits_.begin(), piece_hits_.end());
  double sum = 0;
  for (const std::int64_t id : piece_hits_) {
    GEOLAKE_ASSIGN_OR_RETURN(const geo::Geometry* piece,
                             Piece(item, pieces, static_cast<std::size_t>(id)));
    GEOLAKE_ASSIGN_OR_RETURN(geo::Geometry common, overlay(*piece));
    GEOLAKE_ASSIGN_OR_RETURN(double area, common.Area());
    sum += area;
  }
  return sum;
}

Result<double> JoinWorker::OverlapByPieces(Probe& probe, const geo::Geometry& g, std::size_t item,
                                           const Pieces& pieces) {
  return SumOverPieces(probe.box, item, pieces,
                       [&](const geo::Geometry& piece) { return piece.Intersection(g); });
}

Result<double> JoinWorker::ClippedArea(Probe& probe, std::size_t item, const geo::Geometry& whole) {
  const auto clip = [&](const geo::Geometry& polygon) { return polygon.ClipByRect(probe.box); };
  const Pieces* pieces = op_->tree().pieces[item].get();
  if (pieces == nullptr) {
    GEOLAKE_ASSIGN_OR_RETURN(geo::Geometry clipped, clip(whole));
    return clipped.Area();
  }
  return SumOverPieces(probe.box, item, *pieces, clip);
}

Status JoinWorker::Process(const InputUnit& /*unit*/, const FeatureBatch& raw, OpOutput* out) {
  // --reproject-right with the right side streamed: its rows move into the left's CRS here; a
  // row that does not transform is this run's feature error (the reject keeps it as read).
  FeatureBatch moved;
  std::vector<char> skip;
  if (op_->reproject_stream()) {
    if (!transformer_) {
      GEOLAKE_ASSIGN_OR_RETURN(geo::Transformer t, op_->RightToLeft(*geo_));
      transformer_.emplace(std::move(t));
    }
    moved = raw;
    std::vector<std::pair<std::size_t, Status>> bad;
    GEOLAKE_RETURN_NOT_OK(ReprojectBatch(*transformer_, &moved, &bad));
    skip.assign(static_cast<std::size_t>(raw.num_rows()), 0);
    for (const auto& [row, status] : bad) {
      GEOLAKE_RETURN_NOT_OK(out->FeatureError(raw, static_cast<std::int64_t>(row), status));
      skip[row] = 1;
    }
  }
  const FeatureBatch& in = op_->reproject_stream() ? moved : raw;
  const TreeSide& tree = op_->tree();
  const bool stream_is_left = !op_->tree_is_left();
  const bool aggregating = aggregates_ != nullptr;
  const bool keep_unmatched =
      stream_is_left && op_->options().how == JoinHow::kLeft && !aggregating;
  const double d =
      op_->options().predicate == JoinPredicate::kDWithin ? op_->options().distance : 0;
  const bool largest = op_->options().predicate == JoinPredicate::kLargestOverlap;
  const bool partitioned_by_stream = op_->partitioned_by_stream();
  std::vector<std::int64_t> stream_rows;
  std::vector<std::int64_t> items;
  std::vector<double> areas, fractions;  // largest-overlap, one per output row
  std::int64_t pairs = 0, unmatched = 0, tested = 0, fast = 0;
  for (std::int64_t r = 0; r < in.num_rows(); ++r) {
    const auto row = static_cast<std::size_t>(r);
    if (!skip.empty() && skip[row] != 0) continue;  // rejected above
    if (partitioned_by_stream) {
      if (!op_->JoinsHere(RowBox(in, row))) {
        out->Dropped("joined in another cell");
        continue;
      }
    }
    Probe probe;
    std::string_view no_match = "no match";
    if (in.geometry_valid[row] == 0) {
      probe.kind = Kind::kNull;
      no_match = "null geometry";
    } else {
      probe.wkb = in.GeometryAt(row);
      Result<geo::WkbSummary> summary = geo::SummarizeWkb(probe.wkb);
      if (!summary.ok()) {
        GEOLAKE_RETURN_NOT_OK(out->FeatureError(in, r, summary.status()));
        continue;
      }
      probe.kind = KindOf(*summary);
      probe.box = summary->envelope;
      if (probe.kind == Kind::kPoint) PointXY(probe.wkb, &probe.x, &probe.y);
      if (probe.kind == Kind::kEmpty) no_match = "empty geometry";
    }
    const std::size_t first = items.size();
    Status failed;
    if (probe.kind != Kind::kNull && probe.kind != Kind::kEmpty) {
      geo::Envelope query = probe.box;
      if (d > 0) query = {query.xmin - d, query.ymin - d, query.xmax + d, query.ymax + d};
      candidates_.clear();
      tree.tree->Query(query, [&](std::int64_t id) { candidates_.push_back(id); });
      std::sort(candidates_.begin(), candidates_.end());
      double best = 0;
      std::int64_t best_id = -1;
      for (const std::int64_t id : candidates_) {
        const auto item = static_cast<std::size_t>(id);
        ++tested;
        if (largest) {
          if (probe.kind != Kind::kPolygon) break;  // no area to overlap
          Result<double> area = Overlap(probe, item);
          if (!area.ok()) {
            failed = area.status();
            break;
          }
          // Strictly larger: a tie stays with the earlier (smaller) right position.
          if (*area > best) {
            best = *area;
            best_id = id;
          }
          continue;
        }
        Result<bool> match = Test(probe, item);
        if (!match.ok()) {
          failed = match.status();
          break;
        }
        if (fast_answer_) ++fast;
        if (!*match) continue;
        stream_rows.push_back(r);
        items.push_back(id);
      }
      if (largest && failed.ok() && best_id >= 0) {
        stream_rows.push_back(r);
        items.push_back(best_id);
        areas.push_back(best);
        fractions.push_back(*probe.area > 0 ? best / *probe.area : 0.0);
      }
    }
    if (!failed.ok()) {
      stream_rows.resize(first);
      items.resize(first);
      GEOLAKE_RETURN_NOT_OK(out->FeatureError(in, r, failed));
      continue;
    }
    const std::size_t matches = items.size() - first;
    if (matches > 0 && aggregating) {
      // Grouped by the right feature: the pairs feed the aggregates, not the output rows.
      for (std::size_t k = first; k < items.size(); ++k) {
        Aggregate(in, row, static_cast<std::size_t>(items[k]));
      }
      stream_rows.resize(first);
      items.resize(first);
      if (largest) {
        areas.resize(first);
        fractions.resize(first);
      }
      pairs += static_cast<std::int64_t>(matches);
      out->Emitted();
    } else if (matches > 0) {
      pairs += static_cast<std::int64_t>(matches);
      if (!stream_is_left) {
        for (std::size_t k = first; k < items.size(); ++k) {
          op_->MarkMatched(static_cast<std::size_t>(items[k]));
        }
      }
      out->Emitted();
    } else if (keep_unmatched) {
      stream_rows.push_back(r);
      items.push_back(-1);
      if (largest) {
        areas.push_back(0);
        fractions.push_back(0);
      }
      ++unmatched;
      out->Emitted();
    } else {
      out->Dropped(no_match);
    }
  }
  op_->CountPairs(pairs, unmatched, tested, fast);
  if (aggregating) return Status::OK();  // Finish writes the groups
  op_->BuildRows(in, stream_rows, items, &out->rows);
  if (largest) op_->AddOverlapColumns(areas, fractions, &out->rows);
  return Status::OK();
}

void JoinWorker::Aggregate(const FeatureBatch& in, std::size_t row, std::size_t item) {
  AggregateState& state = *aggregates_;
  ++state.counts[item];
  const std::vector<JoinAggregate>& aggregates = op_->options().aggregates;
  for (std::size_t a = 0; a < aggregates.size(); ++a) {
    const JoinAggregate& agg = aggregates[a];
    if (agg.kind == JoinAggregate::Kind::kCount) continue;
    const Column& column = in.columns[op_->aggregate_column(a)];
    if (column.valid[row] == 0) continue;  // nulls are skipped, as SQL's aggregates do
    AggregateState::Slots& slots = state.slots[a];
    const bool first = slots.values[item]++ == 0;
    if (UsesDoubles(agg, op_->aggregate_type(a))) {
      const double v = column.type == FieldType::kDouble ? column.doubles[row]
                                                         : static_cast<double>(column.ints[row]);
      double& acc = slots.doubles[item];
      switch (agg.kind) {
        case JoinAggregate::Kind::kSum:
        case JoinAggregate::Kind::kMean:
          acc += v;
          break;
        case JoinAggregate::Kind::kMin:
          // NaN never wins a comparison: a group's NaN values are skipped unless all are NaN.
          if (first || v < acc || std::isnan(acc)) acc = v;
          break;
        case JoinAggregate::Kind::kMax:
          if (first || v > acc || std::isnan(acc)) acc = v;
          break;
        case JoinAggregate::Kind::kCount:
          break;
      }
      continue;
    }
    const std::int64_t v = column.ints[row];
    std::int64_t& acc = slots.ints[item];
    switch (agg.kind) {
      case JoinAggregate::Kind::kSum:
        if (__builtin_add_overflow(acc, v, &acc) && !state.overflow) {
          state.overflow = true;
          state.overflow_item = static_cast<std::int64_t>(item);
        }
        break;
      case JoinAggregate::Kind::kMin:
        if (first || v < acc) acc = v;
        break;
      case JoinAggregate::Kind::kMax:
        if (first || v > acc) acc = v;
        break;
      case JoinAggregate::Kind::kMean:
      case JoinAggregate::Kind::kCount:
        break;
    }
  }
}

}  // namespace

Status ParseJoinPredicate(std::string_view text, JoinOptions* options) {
  static constexpr std::pair<std::string_view, JoinPredicate> kNames[] = {
      {"intersects", JoinPredicate::kIntersects},
      {"contains", JoinPredicate::kContains},
      {"within", JoinPredicate::kWithin},
      {"touches", JoinPredicate::kTouches},
      {"covers", JoinPredicate::kCovers},
      {"covered-by", JoinPredicate::kCoveredBy},
      {"largest-overlap", JoinPredicate::kLargestOverlap},
  };
  for (const auto& [name, p] : kNames) {
    if (text == name) {
      options->predicate = p;
      options->distance = 0;
      return Status::OK();
    }
  }
  if (text.starts_with("dwithin:")) {
    const std::string_view number = text.substr(8);
    double d = 0;
    const auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), d);
    if (ec == std::errc() && ptr == number.data() + number.size() && std::isfinite(d) && d >= 0) {
      options->predicate = JoinPredicate::kDWithin;
      options->distance = d;
      return Status::OK();
    }
    return Status::InvalidArgument("--predicate '" + std::string(text) +
                                   "': dwithin:D needs a finite distance D >= 0 (CRS units)");
  }
  return Status::InvalidArgument("--predicate '" + std::string(text) +
                                 "': expected intersects, contains, within, touches, covers, "
                                 "covered-by, dwithin:D or largest-overlap");
}

std::string JoinAggregate::OutputName() const {
  switch (kind) {
    case Kind::kCount:
      return "count";
    case Kind::kSum:
      return "sum_" + column;
    case Kind::kMin:
      return "min_" + column;
    case Kind::kMax:
      return "max_" + column;
    case Kind::kMean:
      return "mean_" + column;
  }
  return "?";
}

Result<JoinAggregate> ParseJoinAggregate(std::string_view text) {
  static constexpr std::pair<std::string_view, JoinAggregate::Kind> kNames[] = {
      {"sum:", JoinAggregate::Kind::kSum},
      {"min:", JoinAggregate::Kind::kMin},
      {"max:", JoinAggregate::Kind::kMax},
      {"mean:", JoinAggregate::Kind::kMean},
  };
  if (text == "count") return JoinAggregate{};
  for (const auto& [prefix, kind] : kNames) {
    if (text.starts_with(prefix) && text.size() > prefix.size()) {
      return JoinAggregate{kind, std::string(text.substr(prefix.size()))};
    }
  }
  return Status::InvalidArgument("--aggregate '" + std::string(text) +
                                 "': expected count, sum:COL, min:COL, max:COL or mean:COL");
}

Result<JoinHow> ParseJoinHow(std::string_view text) {
  if (text == "inner") return JoinHow::kInner;
  if (text == "left") return JoinHow::kLeft;
  return Status::InvalidArgument("--how '" + std::string(text) + "': expected inner or left");
}

Result<JoinIndexSide> ParseJoinIndexSide(std::string_view text) {
  if (text == "auto") return JoinIndexSide::kAuto;
  if (text == "left") return JoinIndexSide::kLeft;
  if (text == "right") return JoinIndexSide::kRight;
  return Status::InvalidArgument("--index '" + std::string(text) +
                                 "': expected auto, left or right");
}

std::string JoinPredicateName(const JoinOptions& options) {
  switch (options.predicate) {
    case JoinPredicate::kIntersects:
      return "intersects";
    case JoinPredicate::kContains:
      return "contains";
    case JoinPredicate::kWithin:
      return "within";
    case JoinPredicate::kTouches:
      return "touches";
    case JoinPredicate::kCovers:
      return "covers";
    case JoinPredicate::kCoveredBy:
      return "covered-by";
    case JoinPredicate::kLargestOverlap:
      return "largest-overlap";
    case JoinPredicate::kDWithin: {
      char text[64];
      const auto [ptr, ec] = std::to_chars(text, text + sizeof(text), options.distance);
      return "dwithin:" + std::string(text, ec == std::errc() ? ptr : text);
    }
  }
  return "?";
}

Status RunJoin(const OpEnv& env, const InputSpec& left, const InputSpec& right,
               const JoinOptions& options, const OutputSpec& output,
               const RunnerOptions& runner_options, RunSummary* summary, JoinReport* report) {
  *summary = RunSummary{};
  JoinReport local_report;
  if (report == nullptr) report = &local_report;
  *report = JoinReport{};
  if (env.io == nullptr || env.executor == nullptr) {
    return Status::InvalidArgument("join: needs a FileIO and an executor");
  }
  if (options.predicate == JoinPredicate::kDWithin &&
      (!(options.distance >= 0) || !std::isfinite(options.distance))) {
    return Status::InvalidArgument("join: dwithin needs a finite distance >= 0");
  }
  if (options.predicate == JoinPredicate::kLargestOverlap &&
      options.index == JoinIndexSide::kLeft) {
    return Status::InvalidArgument(
        "join largest-overlap: the right side is always indexed (--index left refused)");
  }
  if (!options.aggregates.empty() && options.index == JoinIndexSide::kLeft) {
    return Status::InvalidArgument(
        "join --aggregate: the right side is always indexed (--index left refused)");
  }
  GEOLAKE_ASSIGN_OR_RETURN(std::unique_ptr<Input> l, Input::Open(env, left));
  GEOLAKE_ASSIGN_OR_RETURN(std::unique_ptr<Input> r, Input::Open(env, right));
  bool tree_is_left = false;
  switch (options.index) {
    case JoinIndexSide::kLeft:
      tree_is_left = true;
      break;
    case JoinIndexSide::kRight:
      tree_is_left = false;
      break;
    case JoinIndexSide::kAuto:
      // The smaller side by rows (sedona-db PR #725: by rows first), else by bytes.
      if (l->row_count() >= 0 && r->row_count() >= 0) {
        tree_is_left = l->row_count() < r->row_count();
      } else {
        tree_is_left = l->data_bytes() < r->data_bytes();
      }
      break;
  }
  // largest-overlap decides one best right feature where each left row streams by.
  // and aggregates group the pairs by the right feature.
  if (options.predicate == JoinPredicate::kLargestOverlap || !options.aggregates.empty()) {
    tree_is_left = false;
  }
  std::unique_ptr<Input> tree = tree_is_left ? std::move(l) : std::move(r);
  std::unique_ptr<Input> stream = tree_is_left ? std::move(r) : std::move(l);
  JoinOperation op(options, tree.get(), tree_is_left, report);
  return RunOperation(env, op, std::move(stream), output, runner_options, summary);
}

}  // namespace geolake::ops
