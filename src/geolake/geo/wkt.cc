#include "geolake/geo/wkt.h"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>

namespace geolake::geo {
namespace {

constexpr std::array<std::string_view, 4> kDimTags = {"", "Z", "M", "ZM"};

// ---------------------------------------------------------------------------------------------
// Writer

class WktWriter {
 public:
  WktWriter(const FlatGeometry& geometry, int precision, std::string* out)
      : geometry_(geometry), precision_(precision), out_(out) {}

  /// Keyword, dimension tag and body of part `part_idx`.
  void Tagged(std::uint32_t part_idx) {
    const GeometryPart& part = geometry_.parts[part_idx];
    out_->append(WktKeyword(part.type));
    if (geometry_.dims != Dimensions::kXY) {
      out_->push_back(' ');
      out_->append(kDimTags[static_cast<std::size_t>(geometry_.dims)]);
    }
    out_->push_back(' ');
    Body(part_idx);
  }

 private:
  bool PointIsEmpty(const GeometryPart& part) const {
    const auto xy = geometry_.coordinate(part.offset);
    return std::isnan(xy[0]) && std::isnan(xy[1]);
  }

  void Number(double value) {
    std::array<char, 64> buf;
    const auto res = precision_ > 0 ? std::to_chars(buf.data(), buf.data() + buf.size(), value,
                                                    std::chars_format::general, precision_)
                                    : std::to_chars(buf.data(), buf.data() + buf.size(), value);
    out_->append(buf.data(), res.ptr);
  }

  void Coordinate(std::uint32_t coord_idx) {
    const auto values = geometry_.coordinate(coord_idx);
    for (std::size_t idx = 0; idx < values.size(); ++idx) {
      if (idx > 0) out_->push_back(' ');
      Number(values[idx]);
    }
  }

  void CoordinateList(std::uint32_t first, std::uint32_t count) {
    if (count == 0) {
      out_->append("EMPTY");
      return;
    }
    out_->push_back('(');
    for (std::uint32_t idx = 0; idx < count; ++idx) {
      if (idx > 0) out_->append(", ");
      Coordinate(first + idx);
    }
    out_->push_back(')');
  }

  /// "(...)" or "EMPTY" for part `part_idx`, without its keyword.
  void Body(std::uint32_t part_idx) {
    const GeometryPart& part = geometry_.parts[part_idx];
    switch (part.type) {
      case GeometryType::kPoint:
        if (PointIsEmpty(part)) {
          out_->append("EMPTY");
        } else {
          out_->push_back('(');
          Coordinate(part.offset);
          out_->push_back(')');
        }
        return;
      case GeometryType::kLineString:
        CoordinateList(part.offset, part.count);
        return;
      case GeometryType::kPolygon:
        if (part.count == 0) {
          out_->append("EMPTY");
          return;
        }
        out_->push_back('(');
        for (std::uint32_t ring_idx = 0; ring_idx < part.count; ++ring_idx) {
          if (ring_idx > 0) out_->append(", ");
          const GeometryRing& ring = geometry_.rings[part.offset + ring_idx];
          CoordinateList(ring.offset, ring.count);
        }
        out_->push_back(')');
        return;
      default:
        break;
    }
    if (part.count == 0) {
      out_->append("EMPTY");
      return;
    }
    out_->push_back('(');
    std::uint32_t child_idx = part_idx + 1;
    for (std::uint32_t member_idx = 0; member_idx < part.count; ++member_idx) {
      if (member_idx > 0) out_->append(", ");
      if (part.type == GeometryType::kGeometryCollection) {
        Tagged(child_idx);
      } else {
        // Multi* members are written without their keyword; MultiPoint members are
        // parenthesised by the point body itself.
        Body(child_idx);
      }
      child_idx = geometry_.parts[child_idx].end;
    }
    out_->push_back(')');
  }

  const FlatGeometry& geometry_;
  int precision_;
  std::string* out_;
};

// ---------------------------------------------------------------------------------------------
// Parser

/// Recursive-descent WKT parser. Coordinates are gathered four doubles wide (x, y, z, m) and
/// narrowed at the end, because an untagged text only reveals its dimensions at its first
/// coordinate, which may follow an EMPTY point that already needed storage.
class WktParser {
 public:
  explicit WktParser(std::string_view text) : text_(text) {}

  Result<FlatGeometry> Parse() {
    SkipSpace();
    if (text_.size() - pos_ >= 5 && UpperEquals(text_.substr(pos_, 5), "SRID=")) {
      const std::size_t semicolon = text_.find(';', pos_);
      if (semicolon == std::string_view::npos) return Error("';' after SRID=");
      pos_ = semicolon + 1;
    }
    GEOLAKE_RETURN_NOT_OK(ParseTagged(1));
    SkipSpace();
    if (pos_ != text_.size()) return Error("end of text");
    geometry_.dims = dims_.value_or(Dimensions::kXY);
    const std::size_t stride = static_cast<std::size_t>(CoordinateSize(geometry_.dims));
    const bool has_z = HasZ(geometry_.dims);
    const bool has_m = HasM(geometry_.dims);
    geometry_.coords.reserve(wide_.size() / 4 * stride);
    for (std::size_t idx = 0; idx < wide_.size(); idx += 4) {
      geometry_.coords.push_back(wide_[idx]);
      geometry_.coords.push_back(wide_[idx + 1]);
      if (has_z) geometry_.coords.push_back(wide_[idx + 2]);
      if (has_m) geometry_.coords.push_back(wide_[idx + 3]);
    }
    return std::move(geometry_);
  }

 private:
  static bool UpperEquals(std::string_view a, std::string_view upper) {
    if (a.size() != upper.size()) return false;
    for (std::size_t idx = 0; idx < a.size(); ++idx) {
      char c = a[idx];
      if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
      if (c != upper[idx]) return false;
    }
    return true;
  }

  Status Error(std::string_view expected) const {
    return Status::InvalidArgument(fmt::format("wkt: expected {} at position {}", expected, pos_));
  }

  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }

  bool Consume(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  Status Expect(char c) {
    if (Consume(c)) return Status::OK();
    return Error(fmt::format("'{}'", c));
  }

  /// The run of letters at the current position, upper-cased; pos_ is left after it only if
  /// `consume`.
  std::string Word(bool consume) {
    SkipSpace();
    std::size_t end = pos_;
    std::string word;
    while (end < text_.size() && std::isalpha(static_cast<unsigned char>(text_[end]))) {
      word.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(text_[end]))));
      ++end;
    }
    if (consume) pos_ = end;
    return word;
  }

  bool ConsumeEmpty() {
    if (Word(false) != "EMPTY") return false;
    Word(true);
    return true;
  }

  Status SetDims(Dimensions dims, std::size_t at) {
    if (!dims_) {
      dims_ = dims;
      return Status::OK();
    }
    if (*dims_ == dims) return Status::OK();
    return Status::InvalidArgument(fmt::format(
        "wkt: dimensions '{}' at position {} differ from the geometry's '{}'",
        kDimTags[static_cast<std::size_t>(dims)], at, kDimTags[static_cast<std::size_t>(*dims_)]));
  }

  Status CheckDepth(int depth) const {
    if (depth <= kMaxGeometryDepth) return Status::OK();
    return Status::InvalidArgument(
        fmt::format("wkt: geometry nested deeper than {} levels at "
                    "position {}",
                    kMaxGeometryDepth, pos_));
  }

  /// Keyword, optional dimension tag, body.
  Status ParseTagged(int depth) {
    GEOLAKE_RETURN_NOT_OK(CheckDepth(depth));
    const std::size_t at = pos_;
    const std::string word = Word(true);
    std::optional<GeometryType> type;
    std::string_view tag;
    for (int type_idx = 1; type_idx <= 7 && !type; ++type_idx) {
      const auto candidate = static_cast<GeometryType>(type_idx);
      const std::string_view keyword = WktKeyword(candidate);
      if (std::string_view(word).substr(0, keyword.size()) != keyword) continue;
      const std::string_view rest = std::string_view(word).substr(keyword.size());
      if (rest.empty() || rest == "Z" || rest == "M" || rest == "ZM") {
        type = candidate;
        tag = rest;
      }
    }
    if (!type) {
      pos_ = at;
      SkipSpace();
      return Error("a geometry keyword");
    }
    std::string next;
    if (tag.empty() && ((next = Word(false)) == "Z" || next == "M" || next == "ZM")) {
      Word(true);
      tag = next;
    }
    if (!tag.empty()) {
      GEOLAKE_RETURN_NOT_OK(SetDims(MakeDimensions(tag.find('Z') != std::string_view::npos,
                                                   tag.find('M') != std::string_view::npos),
                                    at));
    }
    return ParseBody(*type, depth);
  }

  std::uint32_t NumCoordinates() const { return static_cast<std::uint32_t>(wide_.size() / 4); }

  std::uint32_t OpenPart(GeometryType type) {
    GeometryPart part;
    part.type = type;
    if (type == GeometryType::kPolygon) {
      part.offset = static_cast<std::uint32_t>(geometry_.rings.size());
    } else if (!IsCollection(type)) {
      part.offset = NumCoordinates();
    }
    geometry_.parts.push_back(part);
    return static_cast<std::uint32_t>(geometry_.parts.size() - 1);
  }

  void ClosePart(std::uint32_t part_idx, std::uint32_t count) {
    geometry_.parts[part_idx].count = count;
    geometry_.parts[part_idx].end = static_cast<std::uint32_t>(geometry_.parts.size());
  }

  void AddEmptyCoordinate() {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    wide_.insert(wide_.end(), {nan, nan, nan, nan});
  }

  /// A point member of a MultiPoint: "EMPTY", "(x y)" or "x y".
  Status ParseMultiPointMember() {
    const std::uint32_t part_idx = OpenPart(GeometryType::kPoint);
    if (ConsumeEmpty()) {
      AddEmptyCoordinate();
    } else if (Consume('(')) {
      GEOLAKE_RETURN_NOT_OK(ParseCoordinate());
      GEOLAKE_RETURN_NOT_OK(Expect(')'));
    } else {
      GEOLAKE_RETURN_NOT_OK(ParseCoordinate());
    }
    ClosePart(part_idx, 1);
    return Status::OK();
  }

  Status ParseCoordinate() {
    SkipSpace();
    const std::size_t at = pos_;
    std::array<double, 4> values{};
    int num_values = 0;
    while (true) {
      SkipSpace();
      std::size_t start = pos_;
      if (start < text_.size() && text_[start] == '+') ++start;
      double value = 0;
      const auto res = std::from_chars(text_.data() + start, text_.data() + text_.size(), value);
      if (res.ec != std::errc() || res.ptr == text_.data() + start) break;
      if (num_values == 4) return Error("at most 4 numbers in a coordinate");
      values[num_values++] = value;
      pos_ = static_cast<std::size_t>(res.ptr - text_.data());
    }
    if (num_values < 2) return Error("a coordinate");
    if (!dims_) {
      dims_ = num_values == 2   ? Dimensions::kXY
              : num_values == 3 ? Dimensions::kXYZ
                                : Dimensions::kXYZM;
    }
    if (num_values != CoordinateSize(*dims_)) {
      return Status::InvalidArgument(
          fmt::format("wkt: coordinate at position {} has {} numbers, expected {}", at, num_values,
                      CoordinateSize(*dims_)));
    }
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double z = HasZ(*dims_) ? values[2] : nan;
    const double m = HasM(*dims_) ? values[num_values - 1] : nan;
    wide_.insert(wide_.end(), {values[0], values[1], z, m});
    return Status::OK();
  }

  /// "(x y, x y, ...)"; returns the number of coordinates.
  Status ParseCoordinateList(std::uint32_t* count) {
    GEOLAKE_RETURN_NOT_OK(Expect('('));
    *count = 0;
    do {
      GEOLAKE_RETURN_NOT_OK(ParseCoordinate());
      ++*count;
    } while (Consume(','));
    return Expect(')');
  }

  Status ParseBody(GeometryType type, int depth) {
    GEOLAKE_RETURN_NOT_OK(CheckDepth(depth));
    const std::uint32_t part_idx = OpenPart(type);
    if (ConsumeEmpty()) {
      if (type == GeometryType::kPoint) {
        AddEmptyCoordinate();
        ClosePart(part_idx, 1);
      } else {
        ClosePart(part_idx, 0);
      }
      return Status::OK();
    }
    std::uint32_t count = 0;
    switch (type) {
      case GeometryType::kPoint:
        GEOLAKE_RETURN_NOT_OK(Expect('('));
        GEOLAKE_RETURN_NOT_OK(ParseCoordinate());
        GEOLAKE_RETURN_NOT_OK(Expect(')'));
        count = 1;
        break;
      case GeometryType::kLineString:
        GEOLAKE_RETURN_NOT_OK(ParseCoordinateList(&count));
        break;
      case GeometryType::kPolygon:
        GEOLAKE_RETURN_NOT_OK(Expect('('));
        do {
          GeometryRing ring;
          ring.offset = NumCoordinates();
          // An empty ring is odd but representable in WKB, and WriteWkt prints it so.
          if (!ConsumeEmpty()) GEOLAKE_RETURN_NOT_OK(ParseCoordinateList(&ring.count));
          geometry_.rings.push_back(ring);
          ++count;
        } while (Consume(','));
        GEOLAKE_RETURN_NOT_OK(Expect(')'));
        break;
      case GeometryType::kMultiPoint:
        GEOLAKE_RETURN_NOT_OK(Expect('('));
        do {
          GEOLAKE_RETURN_NOT_OK(ParseMultiPointMember());
          ++count;
        } while (Consume(','));
        GEOLAKE_RETURN_NOT_OK(Expect(')'));
        break;
      case GeometryType::kMultiLineString:
      case GeometryType::kMultiPolygon: {
        const auto member_type = static_cast<GeometryType>(static_cast<int>(type) - 3);
        GEOLAKE_RETURN_NOT_OK(Expect('('));
        do {
          GEOLAKE_RETURN_NOT_OK(ParseBody(member_type, depth + 1));
          ++count;
        } while (Consume(','));
        GEOLAKE_RETURN_NOT_OK(Expect(')'));
        break;
      }
      case GeometryType::kGeometryCollection:
        GEOLAKE_RETURN_NOT_OK(Expect('('));
        do {
          GEOLAKE_RETURN_NOT_OK(ParseTagged(depth + 1));
          ++count;
        } while (Consume(','));
        GEOLAKE_RETURN_NOT_OK(Expect(')'));
        break;
    }
    ClosePart(part_idx, count);
    return Status::OK();
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  std::optional<Dimensions> dims_;
  FlatGeometry geometry_;
  std::vector<double> wide_;
};

}  // namespace

std::string WriteWkt(const FlatGeometry& geometry, int precision) {
  std::string out;
  if (geometry.parts.empty()) return out;
  WktWriter(geometry, precision, &out).Tagged(0);
  return out;
}

Result<FlatGeometry> ParseWkt(std::string_view wkt) { return WktParser(wkt).Parse(); }

Result<std::string> WktToWkb(std::string_view wkt) {
  GEOLAKE_ASSIGN_OR_RETURN(FlatGeometry geometry, ParseWkt(wkt));
  return WriteWkb(geometry);
}

}  // namespace geolake::geo
