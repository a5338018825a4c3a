// GeoJSONSeq reading with simdjson's On Demand API. A record is a line (ended by LF or the end
// of the file) that holds more than blanks once spaces, tabs, CR and RFC 8142's record
// separator (0x1E) are trimmed; a UTF-8 byte order mark opens the file at most. Each record is
// parsed where it lies in the read block: simdjson needs simdjson::SIMDJSON_PADDING readable bytes
// after its input, which the block keeps at its end.
#include "geolake/sources/geojsonseq_source.h"

#include <fcntl.h>
#include <simdjson.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "geolake/core/little_endian.h"
#include "geolake/core/thread_pool.h"
#include "geolake/core/utf8.h"

namespace geolake::sources {
namespace {

using geoparquet::Column;
using geoparquet::FeatureBatch;
using geoparquet::FieldDef;
using geoparquet::FieldType;
using geoparquet::FieldTypeName;

namespace od = simdjson::ondemand;

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD in UTF-8

std::size_t CountReplacements(std::string_view s) {
  std::size_t n = 0;
  for (std::size_t at = s.find(kReplacement); at != std::string_view::npos;
       at = s.find(kReplacement, at + kReplacement.size())) {
    ++n;
  }
  return n;
}

// Appends `value` (a string of a repaired record) with each U+FFFD written as the byte 0xFF,
// which is never UTF-8: what the record held there was not text. Returns how many.
std::size_t AppendMarkingReplacements(std::string_view value, std::string* out) {
  std::size_t n = 0;
  for (std::size_t at = 0;; ++n) {
    const std::size_t found = value.find(kReplacement, at);
    out->append(value.substr(at, found == std::string_view::npos ? found : found - at));
    if (found == std::string_view::npos) return n;
    out->push_back('\xFF');
    at = found + kReplacement.size();
  }
}

// A record that is not UTF-8 (GeoJSON text must be, RFC 8259 section 8.1; Latin-1 exports are
// common) is parsed as a copy in which every byte that does not start a well-formed sequence
// is U+FFFD, padded for simdjson in `*copy`. Returns the copy's text.
std::string_view Utf8Repaired(std::string_view text, std::string* copy,
                              std::size_t* replaced = nullptr) {
  *copy = ReplaceInvalidUtf8(text, replaced);
  const std::size_t length = copy->size();
  copy->resize(length + simdjson::SIMDJSON_PADDING, '\0');
  return {copy->data(), length};
}

// The scan reads the file in blocks of this size, one per task: a few per worker for a file of
// a few hundred MiB, and the memory of one block per worker.
constexpr std::int64_t kScanBlockBytes = 8 << 20;
// A reader's block: ~1 MiB of records per read (a long line grows it to fit).
constexpr std::int64_t kReadBlockBytes = 1 << 20;
// Distinct key sequences a block may show before the scan gives the file to GDAL.
constexpr std::size_t kMaxKeySequences = 4096;

struct FdCloser {
  int fd = -1;
  ~FdCloser() {
    if (fd >= 0) ::close(fd);
  }
};

Status PreadFully(int fd, std::int64_t offset, std::int64_t length, char* out, std::int64_t* got,
                  const std::string& path) {
  std::int64_t done = 0;
  while (done < length) {
    const ssize_t n = ::pread(fd, out + done, static_cast<std::size_t>(length - done),
                              static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::IOError("source '" + path + "': read: " + std::strerror(errno));
    if (n == 0) break;
    done += n;
  }
  *got = done;
  return Status::OK();
}

Result<int> OpenFile(const std::string& path, std::int64_t* size) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return Status::NotFound("source '" + path + "': no such file");
    return Status::IOError("source '" + path + "': " + std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    return Status::IOError("source '" + path + "': cannot stat");
  }
  *size = static_cast<std::int64_t>(st.st_size);
  return fd;
}

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\x1e'; }

// The record in line [begin, end) (its LF excluded): trimmed, or empty for a blank line.
std::string_view Trim(const char* begin, const char* end, bool file_start) {
  if (file_start && end - begin >= 3 && std::memcmp(begin, "\xEF\xBB\xBF", 3) == 0) begin += 3;
  while (begin < end && IsBlank(*begin)) ++begin;
  while (end > begin && IsBlank(end[-1])) --end;
  return {begin, static_cast<std::size_t>(end - begin)};
}

// Strings GDAL's GeoJSON reader may type as Date, Time or DateTime (OGRParseDate): digits, '-'
// or '/', digits, '-' or '/', a digit; or digits, ':', a digit. Wider than GDAL's test on
// purpose: a field with such a value goes to GDAL.
bool LooksLikeDateOrTime(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size() && s[i] == ' ') ++i;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
  const auto digits = [&] {
    const std::size_t from = i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
    return i - from;
  };
  if (digits() == 0 || i >= s.size()) return false;
  if (s[i] == ':') return i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1]));
  if (s[i] != '-' && s[i] != '/') return false;
  ++i;
  if (digits() == 0 || i >= s.size() || (s[i] != '-' && s[i] != '/')) return false;
  return i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1]));
}

std::string LowerAscii(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// What one field's values were, over the records seen.
struct FieldKinds {
  bool integer = false;
  bool real = false;
  bool string = false;
  bool boolean = false;
  bool other = false;      // array, object, unsigned or big integer
  bool date_like = false;  // a string GDAL may parse as a date or time
  void Merge(const FieldKinds& o) {
    integer |= o.integer;
    real |= o.real;
    string |= o.string;
    boolean |= o.boolean;
    other |= o.other;
    date_like |= o.date_like;
  }
};

// What one block of records shows: fields in order of first appearance (in this block), each
// distinct sequence of keys (as indices into `names`) in order of first appearance, and why
// the file cannot be read natively, if it cannot.
struct BlockSchema {
  std::vector<std::string> names;
  std::vector<FieldKinds> kinds;
  std::vector<std::vector<int>> sequences;
  std::string refusal;
  std::int64_t first_byte = -1;  // the line of the block's first record (-1: none)
  std::int64_t records = 0;
  std::int64_t objects = 0;  // records that parsed as a JSON object
};

// Parses records of one block for the scan.
class SchemaScanner {
 public:
  explicit SchemaScanner(BlockSchema* out) : out_(out) {}

  void Record(std::string_view text, std::size_t capacity) {
    od::document doc;
    auto error =
        parser_.iterate(simdjson::padded_string_view(text.data(), text.size(), capacity)).get(doc);
    if (error == simdjson::UTF8_ERROR) {
      // Its fields count as the reader will see them (the reader repairs it the same way).
      text = Utf8Repaired(text, &repaired_);
      error =
          parser_.iterate(simdjson::padded_string_view(text.data(), text.size(), repaired_.size()))
              .get(doc);
    }
    if (error) return;  // malformed: the reader rejects it; no schema from it
    od::object feature;
    if (doc.get_object().get(feature)) return;
    ++out_->objects;
    sequence_.clear();
    for (auto member : feature) {
      std::string_view key;
      if (member.unescaped_key().get(key)) return;
      od::value value;
      if (member.value().get(value)) return;
      if (key == "id") {
        od::json_type type;
        if (value.type().get(type)) return;
        od::number_type number_type;
        if (type != od::json_type::number || value.get_number_type().get(number_type) ||
            number_type != od::number_type::signed_integer) {
          Refuse("a top-level \"id\" that is not an integer (GDAL makes it a field)");
        }
      } else if (key == "properties") {
        od::json_type type;
        if (value.type().get(type)) return;
        if (type == od::json_type::null) continue;
        od::object properties;
        if (value.get_object().get(properties)) return;
        for (auto field : properties) {
          std::string_view name;
          if (field.unescaped_key().get(name)) return;
          od::value v;
          if (field.value().get(v)) return;
          const int id = FieldId(name);
          sequence_.push_back(id);
          if (!Kind(v, &out_->kinds[static_cast<std::size_t>(id)])) return;
        }
      }
    }
    RememberSequence();
  }

 private:
  int FieldId(std::string_view name) {
    // Records mostly repeat one key order: try the field after the previous key first.
    const std::size_t guess =
        sequence_.empty() ? 0 : static_cast<std::size_t>(sequence_.back()) + 1;
    if (guess < out_->names.size() && out_->names[guess] == name) return static_cast<int>(guess);
    const auto found = ids_.find(std::string(name));
    if (found != ids_.end()) return found->second;
    const int id = static_cast<int>(out_->names.size());
    out_->names.emplace_back(name);
    out_->kinds.emplace_back();
    ids_.emplace(std::string(name), id);
    return id;
  }

  // Note the kind of `v`; false when it does not parse.
  static bool Kind(od::value& v, FieldKinds* kinds) {
    od::json_type type;
    if (v.type().get(type)) return false;
    switch (type) {
      case od::json_type::null:
        return true;
      case od::json_type::boolean: {
        bool b = false;
        if (v.get_bool().get(b)) return false;
        kinds->boolean = true;
        return true;
      }
      case od::json_type::number: {
        od::number_type number_type;
        if (v.get_number_type().get(number_type)) {
          kinds->other = true;  // beyond 64 bits
          return true;
        }
        if (number_type == od::number_type::floating_point_number) {
          double d = 0;
          if (v.get_double().get(d)) return false;
          kinds->real = true;
        } else if (number_type == od::number_type::signed_integer) {
          std::int64_t i = 0;
          if (v.get_int64().get(i)) return false;
          kinds->integer = true;
        } else {
          kinds->other = true;
        }
        return true;
      }
      case od::json_type::string: {
        std::string_view s;
        if (v.get_string().get(s)) return false;
        kinds->string = true;
        if (LooksLikeDateOrTime(s)) kinds->date_like = true;
        return true;
      }
      default:
        kinds->other = true;
        return true;
    }
  }

  void RememberSequence() {
    if (seen_.contains(sequence_)) return;
    if (out_->sequences.size() >= kMaxKeySequences) {
      Refuse("more than " + std::to_string(kMaxKeySequences) + " different key orders");
      return;
    }
    seen_.insert(sequence_);
    out_->sequences.push_back(sequence_);
  }

  void Refuse(std::string why) {
    if (out_->refusal.empty()) out_->refusal = std::move(why);
  }

  BlockSchema* out_;
  od::parser parser_;
  std::string repaired_;  // a record that was not UTF-8, repaired (Utf8Repaired)
  std::unordered_map<std::string, int> ids_;
  std::vector<int> sequence_;
  std::set<std::vector<int>> seen_;
};

// Calls `record(text, capacity, line_start)` for each record whose line starts in
// [from, to) of `data` (which holds the file's bytes from `data_offset` on, and is followed by
// simdjson::SIMDJSON_PADDING readable bytes). `from` is a line start. Returns the offset just past
// the last line visited.
template <typename Fn>
std::int64_t ForEachRecord(const char* data, std::int64_t data_offset, std::int64_t data_size,
                           std::int64_t from, std::int64_t to, Fn&& record) {
  std::int64_t at = from;
  while (at < to && at < data_offset + data_size) {
    const char* begin = data + (at - data_offset);
    const char* limit = data + data_size;
    const char* newline = static_cast<const char*>(std::memchr(begin, '\n', limit - begin));
    const char* end = newline != nullptr ? newline : limit;
    const std::string_view text = Trim(begin, end, at == 0);
    if (!text.empty()) {
      const std::size_t capacity =
          static_cast<std::size_t>(limit - text.data()) + simdjson::SIMDJSON_PADDING;
      record(text, capacity, at);
    }
    at += (end - begin) + (newline != nullptr ? 1 : 0);
  }
  return at;
}

// Reads the bytes [offset, offset + length) of the file plus the rest of the line that
// straddles the end (up to the end of the file), followed by simdjson::SIMDJSON_PADDING zero bytes.
Result<std::int64_t> ReadThroughLineEnd(int fd, const std::string& path, std::int64_t file_size,
                                        std::int64_t offset, std::int64_t length,
                                        std::string* buffer) {
  length = std::min(length, file_size - offset);
  buffer->resize(static_cast<std::size_t>(length) + simdjson::SIMDJSON_PADDING);
  std::int64_t got = 0;
  GEOLAKE_RETURN_NOT_OK(PreadFully(fd, offset, length, buffer->data(), &got, path));
  if (got != length) return Status::IOError("source '" + path + "': short read");
  // Extend to the end of the last line.
  while (offset + length < file_size &&
         std::memchr(buffer->data() + std::max<std::int64_t>(0, length - 1), '\n', 1) == nullptr) {
    const std::int64_t more = std::min<std::int64_t>(64 << 10, file_size - offset - length);
    buffer->resize(static_cast<std::size_t>(length + more) + simdjson::SIMDJSON_PADDING);
    GEOLAKE_RETURN_NOT_OK(
        PreadFully(fd, offset + length, more, buffer->data() + length, &got, path));
    if (got != more) return Status::IOError("source '" + path + "': short read");
    const char* newline =
        static_cast<const char*>(std::memchr(buffer->data() + length, '\n', more));
    length += newline != nullptr ? (newline - (buffer->data() + length)) + 1 : more;
    if (newline != nullptr) break;
  }
  buffer->resize(static_cast<std::size_t>(length) + simdjson::SIMDJSON_PADDING);
  std::memset(buffer->data() + length, 0, simdjson::SIMDJSON_PADDING);
  return length;
}

// The first line start at or after `offset` (a line starts at 0 or after a LF).
Result<std::int64_t> NextLineStart(int fd, const std::string& path, std::int64_t file_size,
                                   std::int64_t offset) {
  if (offset == 0) return 0;
  std::string buffer(64 << 10, '\0');
  for (std::int64_t at = offset - 1; at < file_size;) {
    std::int64_t got = 0;
    GEOLAKE_RETURN_NOT_OK(
        PreadFully(fd, at, static_cast<std::int64_t>(buffer.size()), buffer.data(), &got, path));
    if (got == 0) break;
    const char* newline = static_cast<const char*>(std::memchr(buffer.data(), '\n', got));
    if (newline != nullptr) return at + (newline - buffer.data()) + 1;
    at += got;
  }
  return file_size;
}

// Reads the bytes [offset, offset + length) of the file (fewer at its end) followed by
// SIMDJSON_PADDING zero bytes; returns how many were read.
Result<std::int64_t> ReadPlain(int fd, const std::string& path, std::int64_t file_size,
                               std::int64_t offset, std::int64_t length, std::string* buffer) {
  length = std::max<std::int64_t>(0, std::min(length, file_size - offset));
  buffer->resize(static_cast<std::size_t>(length) + simdjson::SIMDJSON_PADDING);
  std::int64_t got = 0;
  GEOLAKE_RETURN_NOT_OK(PreadFully(fd, offset, length, buffer->data(), &got, path));
  if (got != length) return Status::IOError("source '" + path + "': short read");
  std::memset(buffer->data() + length, 0, simdjson::SIMDJSON_PADDING);
  return length;
}

// The length of the JSON object that starts at p[0] == '{' (string-aware brace matching), or
// -1 when it does not end before `limit`.
std::int64_t ObjectLength(const char* p, const char* limit) {
  int depth = 0;
  bool in_string = false;
  for (const char* c = p; c < limit; ++c) {
    if (in_string) {
      if (*c == '\\') {
        ++c;
      } else if (*c == '"') {
        in_string = false;
      }
      continue;
    }
    switch (*c) {
      case '"':
        in_string = true;
        break;
      case '{':
      case '[':
        ++depth;
        break;
      case '}':
      case ']':
        if (--depth == 0) return c - p + 1;
        break;
      default:
        break;
    }
  }
  return -1;
}

bool IsJsonSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// Finds the elements of a FeatureCollection's top-level "features" array in one pass over the
// bytes (a string-aware state machine: no parse of the features themselves), and refuses what
// GDAL's GeoJSON driver reads otherwise than a plain list of features: a "crs" or "name" member
// (GDAL takes the CRS and the layer name from them), a "type" other than FeatureCollection, an
// element of "features" that is not an object.
class CollectionSplitter {
 public:
  // Feed the next `n` bytes, which start at file offset `offset`.
  void Feed(const char* data, std::int64_t n, std::int64_t offset) {
    for (std::int64_t i = 0; i < n && refusal_.empty(); ++i) {
      const char c = data[i];
      if (in_string_) {
        if (escape_) {
          escape_ = false;
          if (capture_) text_ += c;
        } else if (c == '\\') {
          escape_ = true;
        } else if (c == '"') {
          in_string_ = false;
          if (capture_) StringEnded();
        } else if (capture_ && text_.size() < 4096) {
          text_ += c;
        }
        if (crs_depth_ > 0 && crs_.size() < 4096) crs_ += c;
        continue;
      }
      if (crs_depth_ > 0 && !IsJsonSpace(c) && crs_.size() < 4096) crs_ += c;
      if (IsJsonSpace(c)) continue;
      if (offset + i == 0 && c == '\xEF') {
        bom_ = 2;
        continue;
      }
      if (bom_ > 0) {
        --bom_;
        continue;
      }
      if (in_features_ && depth_ == 2 && c != '{' && c != ',' && c != ']') {
        refusal_ = "an element of \"features\" that is not an object";
        return;
      }
      switch (c) {
        case '"':
          in_string_ = true;
          capture_ = depth_ == 1;
          text_.clear();
          break;
        case ':':
          if (depth_ == 1) {
            key_ = text_;
            expecting_value_ = true;
          }
          break;
        case ',':
          if (depth_ == 1) expecting_value_ = false;
          break;
        case '{':
        case '[':
          if (depth_ == 0 && c != '{') {
            refusal_ = "not a JSON object";
            return;
          }
          if (depth_ == 1 && c == '[' && key_ == "features") {
            in_features_ = true;
            saw_features_ = true;
          }
          if (depth_ == 1) expecting_value_ = false;
          if (depth_ == 1 && key_ == "crs") {
            crs_depth_ = 2;
            crs_ = c;
          } else if (depth_ == 1 && key_ == "name") {
            refusal_ = "a \"name\" that is not a string";
          }
          ++depth_;
          if (in_features_ && depth_ == 3 && c == '{') starts_.push_back(offset + i);
          break;
        case '}':
        case ']':
          --depth_;
          if (in_features_ && depth_ == 1) in_features_ = false;
          if (crs_depth_ > 0 && depth_ == 1) {
            crs_depth_ = 0;
            // GDAL's GeoJSON writer names WGS 84 lon/lat so; any other CRS GDAL must read.
            if (crs_ !=
                R"({"type":"name","properties":{"name":"urn:ogc:def:crs:OGC:1.3:CRS84"}})") {
              refusal_ = "a \"crs\" member other than OGC CRS84 (GDAL reads it)";
            }
          }
          if (depth_ < 0) refusal_ = "unbalanced brackets";
          break;
        default:
          break;
      }
    }
  }

  // Why the file is not read natively (empty: it is), once every byte was fed.
  std::string Finish() {
    if (!refusal_.empty()) return refusal_;
    if (depth_ != 0 || in_string_) return "truncated JSON";
    if (!saw_type_) return "not a FeatureCollection";
    if (!saw_features_) return "no \"features\" array";
    return {};
  }

  std::vector<std::int64_t>& starts() { return starts_; }
  /// The top-level "name" (GDAL's layer name), empty when there is none.
  const std::string& name() const { return name_; }

 private:
  void StringEnded() {
    // A string value at depth 1 comes after its key's ':' (text_ was the key until then).
    if (depth_ != 1 || !expecting_value_) return;
    expecting_value_ = false;
    if (key_ == "name") name_ = text_;
    if (key_ == "type" && !saw_type_) {
      if (text_ != "FeatureCollection") refusal_ = "a \"type\" other than FeatureCollection";
      saw_type_ = true;
    }
  }

  int depth_ = 0;
  bool in_string_ = false;
  bool escape_ = false;
  bool capture_ = false;
  int bom_ = 0;
  bool in_features_ = false;
  bool saw_features_ = false;
  bool saw_type_ = false;
  std::string text_;
  std::string key_;
  std::string refusal_;
  std::vector<std::int64_t> starts_;
  bool expecting_value_ = false;  // at depth 1, between a key's ':' and its value's end
  std::string name_;
  int crs_depth_ = 0;  // > 0 while inside the top-level "crs" value
  std::string crs_;    // its text without blanks outside strings
};

// ---- the reader's geometry: GeoJSON coordinates to ISO WKB, as GDAL's GeoJSON reader builds
// the geometry (3.6): a geometry with a position of three or more numbers is 3D throughout
// (positions of two get Z 0), numbers past the third are dropped, an empty Point is POINT
// EMPTY (NaN ordinates).

enum class GeomType : std::uint8_t {
  kPoint = 1,
  kLineString,
  kPolygon,
  kMultiPoint,
  kMultiLineString,
  kMultiPolygon,
  kGeometryCollection
};

bool GeomTypeOf(std::string_view name, GeomType* type) {
  static constexpr std::pair<std::string_view, GeomType> kNames[] = {
      {"Point", GeomType::kPoint},
      {"LineString", GeomType::kLineString},
      {"Polygon", GeomType::kPolygon},
      {"MultiPoint", GeomType::kMultiPoint},
      {"MultiLineString", GeomType::kMultiLineString},
      {"MultiPolygon", GeomType::kMultiPolygon},
      {"GeometryCollection", GeomType::kGeometryCollection}};
  for (const auto& [n, t] : kNames) {
    if (n == name) {
      *type = t;
      return true;
    }
  }
  return false;
}

// A geometry parsed into tokens: a geometry is its type, then its content; an array of arrays
// is its length then its elements; a position is -(index + 1) into `xyz` (3 doubles each).
struct GeometryTokens {
  std::vector<std::int64_t> tokens;
  std::vector<double> xyz;
  bool has_z = false;
  std::vector<std::int64_t> scratch;
  // Watched every 4,096 positions; `stopped` once it was seen (the record is abandoned).
  std::stop_token stop;
  std::int64_t positions = 0;
  bool stopped = false;
  void Clear() {
    tokens.clear();
    xyz.clear();
    has_z = false;
  }
};

// Outcome of parsing a geometry member: kMalformed when the JSON itself is broken (the record
// is unreadable), kNoGeometry when GDAL would build none.
enum class GeomParse : std::uint8_t { kOk, kNoGeometry, kMalformed };

GeomParse ParseCoordinates(od::value value, GeometryTokens* g, std::vector<std::int64_t>* out) {
  od::array array;
  if (value.get_array().get(array)) return GeomParse::kNoGeometry;
  const std::size_t count_at = out->size();
  out->push_back(0);
  bool position = false;
  bool nested = false;
  std::int64_t n = 0;
  double xyz[3] = {0, 0, 0};
  int dims = 0;
  for (auto element : array) {
    od::value e;
    if (element.get(e)) return GeomParse::kMalformed;
    od::json_type type;
    if (e.type().get(type)) return GeomParse::kMalformed;
    if (type == od::json_type::number) {
      if (nested) return GeomParse::kNoGeometry;
      position = true;
      double d = 0;
      if (e.get_double().get(d)) return GeomParse::kMalformed;
      if (dims < 3) xyz[dims] = d;
      ++dims;
    } else if (type == od::json_type::array) {
      if (position) return GeomParse::kNoGeometry;
      nested = true;
      const GeomParse inner = ParseCoordinates(e, g, out);
      if (inner != GeomParse::kOk) return inner;
      ++n;
    } else {
      return GeomParse::kNoGeometry;
    }
  }
  if (position) {
    if (dims < 2) return GeomParse::kNoGeometry;
    if ((++g->positions & 4095) == 0 && g->stop.stop_requested()) {
      g->stopped = true;
      return GeomParse::kMalformed;
    }
    out->resize(count_at);
    if (dims >= 3) g->has_z = true;
    const auto index = static_cast<std::int64_t>(g->xyz.size() / 3);
    g->xyz.insert(g->xyz.end(), xyz, xyz + 3);
    out->push_back(-(index + 1));
  } else {
    (*out)[count_at] = n;
  }
  return GeomParse::kOk;
}

GeomParse ParseGeometry(od::object object, GeometryTokens* g, std::vector<std::int64_t>* out,
                        int depth) {
  if (depth > 32) return GeomParse::kNoGeometry;
  GeomType type{};
  bool typed = false;
  bool has_content = false;
  // The top level reuses the reader's scratch (no allocation per record); collections nest.
  std::vector<std::int64_t> nested;
  std::vector<std::int64_t>& content = depth == 0 ? g->scratch : nested;
  content.clear();
  for (auto member : object) {
    std::string_view key;
    if (member.unescaped_key().get(key)) return GeomParse::kMalformed;
    od::value value;
    if (member.value().get(value)) return GeomParse::kMalformed;
    if (key == "type") {
      std::string_view name;
      if (value.get_string().get(name) || !GeomTypeOf(name, &type)) return GeomParse::kNoGeometry;
      typed = true;
    } else if (key == "coordinates") {
      content.clear();
      const GeomParse parsed = ParseCoordinates(value, g, &content);
      if (parsed != GeomParse::kOk) return parsed;
      has_content = true;
    } else if (key == "geometries") {
      od::array members;
      if (value.get_array().get(members)) return GeomParse::kNoGeometry;
      content.clear();
      content.push_back(0);
      for (auto element : members) {
        od::object child;
        if (element.get_object().get(child)) return GeomParse::kNoGeometry;
        const GeomParse parsed = ParseGeometry(child, g, &content, depth + 1);
        if (parsed != GeomParse::kOk) return parsed;
        ++content[0];
      }
      has_content = true;
    }
  }
  if (!typed || !has_content) return GeomParse::kNoGeometry;
  out->push_back(static_cast<std::int64_t>(type));
  out->insert(out->end(), content.begin(), content.end());
  return GeomParse::kOk;
}

class WkbWriter {
 public:
  WkbWriter(const GeometryTokens& g, std::string* out) : g_(g), out_(out) {}

  bool Geometry() {
    if (at_ >= g_.tokens.size()) return false;
    const auto type = static_cast<GeomType>(g_.tokens[at_++]);
    return Content(type);
  }

 private:
  bool Content(GeomType type) {
    switch (type) {
      case GeomType::kPoint: {
        Header(type);
        if (at_ >= g_.tokens.size()) return false;
        const std::int64_t t = g_.tokens[at_++];
        if (t == 0) {
          const double nan = std::numeric_limits<double>::quiet_NaN();
          for (int i = 0; i < (g_.has_z ? 3 : 2); ++i) Put(nan);
          return true;
        }
        return t < 0 && Position(t);
      }
      case GeomType::kLineString:
        Header(type);
        return Positions();
      case GeomType::kPolygon:
      case GeomType::kMultiPoint:
      case GeomType::kMultiLineString:
      case GeomType::kMultiPolygon:
      case GeomType::kGeometryCollection: {
        Header(type);
        std::int64_t n = 0;
        if (!Count(&n)) return false;
        PutU32(static_cast<std::uint32_t>(n));
        for (std::int64_t i = 0; i < n; ++i) {
          bool ok = false;
          switch (type) {
            case GeomType::kPolygon:
              ok = Positions();
              break;
            case GeomType::kMultiPoint:
              ok = PointMember();
              break;
            case GeomType::kMultiLineString:
              Header(GeomType::kLineString);
              ok = Positions();
              break;
            case GeomType::kMultiPolygon:
              ok = Content(GeomType::kPolygon);
              break;
            default:
              ok = Geometry();
              break;
          }
          if (!ok) return false;
        }
        return true;
      }
    }
    return false;
  }

  bool PointMember() {
    if (at_ >= g_.tokens.size() || g_.tokens[at_] >= 0) return false;
    Header(GeomType::kPoint);
    return Position(g_.tokens[at_++]);
  }

  bool Count(std::int64_t* n) {
    if (at_ >= g_.tokens.size() || g_.tokens[at_] < 0) return false;
    *n = g_.tokens[at_++];
    return true;
  }

  // A count, then that many positions.
  bool Positions() {
    std::int64_t n = 0;
    if (!Count(&n)) return false;
    PutU32(static_cast<std::uint32_t>(n));
    for (std::int64_t i = 0; i < n; ++i) {
      if (at_ >= g_.tokens.size() || g_.tokens[at_] >= 0) return false;
      Position(g_.tokens[at_++]);
    }
    return true;
  }

  bool Position(std::int64_t token) {
    const std::size_t index = static_cast<std::size_t>(-token - 1) * 3;
    Put(g_.xyz[index]);
    Put(g_.xyz[index + 1]);
    if (g_.has_z) Put(g_.xyz[index + 2]);
    return true;
  }

  void Header(GeomType type) {
    out_->push_back(1);
    PutU32(static_cast<std::uint32_t>(type) + (g_.has_z ? 1000 : 0));
  }
  void PutU32(std::uint32_t v) { AppendLE(v, out_); }
  void Put(double v) { AppendLE(v, out_); }

  const GeometryTokens& g_;
  std::string* out_;
  std::size_t at_ = 0;
};

// Merge the blocks' schemas in file order, as one pass over the records would have met them,
// into `scan` (fields, record count, blocks).
Status MergeSchemas(const std::string& path, const char* format,
                    const std::vector<BlockSchema>& schemas, GeoJsonSeqScan* scan) {
  // Merge the blocks in file order, as one pass over the records would have met them.
  const auto refuse = [&](const std::string& why) {
    return Status::NotImplemented("source '" + path + "': " + format + " " + why +
                                  "; GDAL reads it");
  };
  std::vector<std::string> names;
  std::vector<FieldKinds> kinds;
  std::unordered_map<std::string, int> ids;
  std::unordered_map<std::string, std::string> lower_names;
  for (const BlockSchema& block : schemas) {
    if (!block.refusal.empty()) return refuse(block.refusal);
    if (block.records == 0) continue;
    scan->block_first_byte.push_back(block.first_byte);
    scan->block_first_record.push_back(scan->record_count);
    scan->record_count += block.records;
    std::vector<int> global(block.names.size(), -1);
    for (std::size_t i = 0; i < block.names.size(); ++i) {
      const auto found = ids.find(block.names[i]);
      if (found != ids.end()) global[i] = found->second;
    }
    for (const std::vector<int>& sequence : block.sequences) {
      // Keys known before this sequence must keep their order, and new keys come after them:
      // then GDAL's ordering of the fields is the order of first appearance.
      int last_known = -1;
      bool seen_new = false;
      for (const int local : sequence) {
        const int g = global[static_cast<std::size_t>(local)];
        if (g >= 0) {
          if (seen_new || g <= last_known) {
            return refuse("records whose keys come in different orders ('" +
                          block.names[static_cast<std::size_t>(local)] + "')");
          }
          last_known = g;
        } else {
          seen_new = true;
        }
      }
      for (const int local : sequence) {
        int& g = global[static_cast<std::size_t>(local)];
        if (g >= 0) continue;
        const std::string& name = block.names[static_cast<std::size_t>(local)];
        const std::string lower = LowerAscii(name);
        if (const auto clash = lower_names.find(lower); clash != lower_names.end()) {
          return refuse("fields '" + clash->second + "' and '" + name +
                        "' differ only by case (GDAL merges them)");
        }
        lower_names.emplace(lower, name);
        g = static_cast<int>(names.size());
        ids.emplace(name, g);
        names.push_back(name);
        kinds.emplace_back();
      }
    }
    for (std::size_t i = 0; i < block.names.size(); ++i) {
      if (global[i] >= 0) kinds[static_cast<std::size_t>(global[i])].Merge(block.kinds[i]);
    }
  }
  std::int64_t objects = 0;
  for (const BlockSchema& block : schemas) objects += block.objects;
  if (scan->record_count > 0 && objects == 0) {
    return refuse("file without a single JSON object record");
  }
  for (std::size_t i = 0; i < names.size(); ++i) {
    const FieldKinds& k = kinds[i];
    const std::string quoted = "field '" + names[i] + "'";
    if (k.other) return refuse(quoted + " holds arrays, objects or integers beyond int64");
    if (k.date_like) return refuse(quoted + " holds strings GDAL may read as dates or times");
    const int kinds_seen =
        ((k.integer || k.real) ? 1 : 0) + (k.string ? 1 : 0) + (k.boolean ? 1 : 0);
    if (kinds_seen > 1) return refuse(quoted + " holds values of different kinds");
    if (kinds_seen == 0) return refuse(quoted + " is null in every record");
    const FieldType type = k.string    ? FieldType::kString
                           : k.boolean ? FieldType::kBool
                           : k.real    ? FieldType::kDouble
                                       : FieldType::kInt64;
    scan->fields.push_back({names[i], type});
  }
  return Status::OK();
}

}  // namespace

bool GeoJsonSeqSource::IsGeoJsonSeqPath(const std::string& path) {
  const std::string lower = LowerAscii(path);
  const auto ends_with = [&](std::string_view suffix) {
    return lower.size() >= suffix.size() &&
           lower.compare(lower.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return ends_with(".geojsonl") || ends_with(".geojsons");
}

Result<GeoJsonSeqScan> GeoJsonSeqSource::Scan(const std::string& path, ThreadPool* pool,
                                              std::stop_token stop) {
  GeoJsonSeqScan scan;
  GEOLAKE_ASSIGN_OR_RETURN(const int fd, OpenFile(path, &scan.file_size));
  FdCloser closer{fd};
  const std::int64_t blocks =
      std::max<std::int64_t>(1, (scan.file_size + kScanBlockBytes - 1) / kScanBlockBytes);
  std::vector<BlockSchema> schemas(static_cast<std::size_t>(blocks));
  const auto scan_block = [&](std::int64_t b) -> Status {
    BlockSchema& out = schemas[static_cast<std::size_t>(b)];
    const std::int64_t nominal = b * kScanBlockBytes;
    const std::int64_t end = std::min(scan.file_size, nominal + kScanBlockBytes);
    GEOLAKE_ASSIGN_OR_RETURN(const std::int64_t from,
                             NextLineStart(fd, path, scan.file_size, nominal));
    if (from >= end) return Status::OK();
    std::string buffer;
    GEOLAKE_ASSIGN_OR_RETURN(
        const std::int64_t length,
        ReadThroughLineEnd(fd, path, scan.file_size, from, end - from, &buffer));
    SchemaScanner scanner(&out);
    bool stopped = false;
    ForEachRecord(buffer.data(), from, length, from, end,
                  [&](std::string_view text, std::size_t capacity, std::int64_t line) {
                    if (stopped || ((out.records & 1023) == 0 && stop.stop_requested())) {
                      stopped = true;  // the rest of the block is split, not parsed
                      return;
                    }
                    if (out.first_byte < 0) out.first_byte = line;
                    ++out.records;
                    scanner.Record(text, capacity);
                  });
    if (stopped) return Status::Cancelled("scan of '" + path + "' stopped");
    return Status::OK();
  };
  if (pool != nullptr && blocks > 1) {
    GEOLAKE_RETURN_NOT_OK(pool->ParallelFor(blocks, scan_block));
  } else {
    for (std::int64_t b = 0; b < blocks; ++b) GEOLAKE_RETURN_NOT_OK(scan_block(b));
  }

  GEOLAKE_RETURN_NOT_OK(MergeSchemas(path, "GeoJSONSeq", schemas, &scan));
  return scan;
}

bool GeoJsonSeqSource::IsGeoJsonPath(const std::string& path) {
  const std::string lower = LowerAscii(path);
  const auto ends_with = [&](std::string_view suffix) {
    return lower.size() >= suffix.size() &&
           lower.compare(lower.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return ends_with(".geojson") || ends_with(".json");
}

Result<GeoJsonSeqScan> GeoJsonSeqSource::ScanFeatureCollection(const std::string& path,
                                                               ThreadPool* pool,
                                                               std::stop_token stop) {
  GeoJsonSeqScan scan;
  scan.feature_collection = true;
  GEOLAKE_ASSIGN_OR_RETURN(const int fd, OpenFile(path, &scan.file_size));
  FdCloser closer{fd};
  const auto refuse = [&](const std::string& why) {
    return Status::NotImplemented("source '" + path + "': GeoJSON " + why + "; GDAL reads it");
  };
  // Pass 1 (one thread): where each feature starts.
  CollectionSplitter splitter;
  {
    std::string buffer;
    for (std::int64_t at = 0; at < scan.file_size; at += kScanBlockBytes) {
      GEOLAKE_ASSIGN_OR_RETURN(const std::int64_t got,
                               ReadPlain(fd, path, scan.file_size, at, kScanBlockBytes, &buffer));
      splitter.Feed(buffer.data(), got, at);
    }
  }
  if (const std::string why = splitter.Finish(); !why.empty()) return refuse(why);
  scan.record_starts = std::move(splitter.starts());
  scan.layer_name = splitter.name();
  // Pass 2 (on the pool): the schema, from groups of features of about one block each.
  const std::vector<std::int64_t>& starts = scan.record_starts;
  std::vector<std::size_t> group_first;
  for (std::size_t i = 0; i < starts.size(); ++i) {
    if (group_first.empty() || starts[i] - starts[group_first.back()] >= kScanBlockBytes) {
      group_first.push_back(i);
    }
  }
  std::vector<BlockSchema> schemas(group_first.size());
  const auto scan_group = [&](std::int64_t g) -> Status {
    const std::size_t first = group_first[static_cast<std::size_t>(g)];
    const std::size_t end = static_cast<std::size_t>(g) + 1 < group_first.size()
                                ? group_first[static_cast<std::size_t>(g) + 1]
                                : starts.size();
    BlockSchema& out = schemas[static_cast<std::size_t>(g)];
    SchemaScanner scanner(&out);
    std::string buffer;
    std::int64_t buffer_offset = 0;
    std::int64_t buffer_length = 0;
    for (std::size_t i = first; i < end; ++i) {
      if (((i - first) & 1023) == 0 && stop.stop_requested()) {
        return Status::Cancelled("scan of '" + path + "' stopped");
      }
      std::int64_t length = -1;
      for (std::int64_t want = kScanBlockBytes;; want *= 2) {
        const std::int64_t in = starts[i] - buffer_offset;
        if (in >= 0 && in < buffer_length) {
          length = ObjectLength(buffer.data() + in, buffer.data() + buffer_length);
        }
        const bool at_end =
            buffer_offset + buffer_length >= scan.file_size && in >= 0 && in < buffer_length;
        if (length >= 0 || at_end) break;
        GEOLAKE_ASSIGN_OR_RETURN(buffer_length,
                                 ReadPlain(fd, path, scan.file_size, starts[i], want, &buffer));
        buffer_offset = starts[i];
      }
      if (length < 0) return Status::CorruptData("source '" + path + "': truncated feature");
      const char* text = buffer.data() + (starts[i] - buffer_offset);
      if (out.first_byte < 0) out.first_byte = starts[i];
      ++out.records;
      scanner.Record(std::string_view(text, static_cast<std::size_t>(length)),
                     static_cast<std::size_t>(buffer.data() + buffer_length +
                                              simdjson::SIMDJSON_PADDING - text));
    }
    return Status::OK();
  };
  const auto groups = static_cast<std::int64_t>(group_first.size());
  if (pool != nullptr && groups > 1) {
    GEOLAKE_RETURN_NOT_OK(pool->ParallelFor(groups, scan_group));
  } else {
    for (std::int64_t g = 0; g < groups; ++g) GEOLAKE_RETURN_NOT_OK(scan_group(g));
  }
  GEOLAKE_RETURN_NOT_OK(MergeSchemas(path, "GeoJSON", schemas, &scan));
  return scan;
}

Result<std::vector<std::int64_t>> GeoJsonSeqSource::RecordOffsets(
    const std::string& path, const GeoJsonSeqScan& scan, const std::vector<std::int64_t>& rows) {
  std::int64_t size = 0;
  GEOLAKE_ASSIGN_OR_RETURN(const int fd, OpenFile(path, &size));
  FdCloser closer{fd};
  if (size != scan.file_size) {
    return Status::CorruptData("source '" + path + "': changed since it was scanned");
  }
  std::vector<std::int64_t> offsets;
  if (scan.feature_collection) {
    for (std::size_t i = 0; i < rows.size(); ++i) {
      if (rows[i] < 0 || rows[i] >= static_cast<std::int64_t>(scan.record_starts.size()) ||
          (i > 0 && rows[i] <= rows[i - 1])) {
        return Status::InvalidArgument("source '" + path + "': feature " + std::to_string(rows[i]) +
                                       " out of order or range");
      }
      offsets.push_back(scan.record_starts[static_cast<std::size_t>(rows[i])]);
    }
    return offsets;
  }
  std::string buffer;
  std::int64_t loaded_block = -1;
  std::int64_t loaded_length = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::int64_t row = rows[i];
    if (row < 0 || row >= scan.record_count || (i > 0 && row <= rows[i - 1])) {
      return Status::InvalidArgument("source '" + path + "': record " + std::to_string(row) +
                                     " out of order or range");
    }
    const auto next =
        std::upper_bound(scan.block_first_record.begin(), scan.block_first_record.end(), row);
    const auto block = static_cast<std::int64_t>(next - scan.block_first_record.begin()) - 1;
    const std::int64_t from = scan.block_first_byte[static_cast<std::size_t>(block)];
    const std::int64_t to = static_cast<std::size_t>(block) + 1 < scan.block_first_byte.size()
                                ? scan.block_first_byte[static_cast<std::size_t>(block) + 1]
                                : scan.file_size;
    if (block != loaded_block) {
      GEOLAKE_ASSIGN_OR_RETURN(loaded_length,
                               ReadThroughLineEnd(fd, path, size, from, to - from, &buffer));
      loaded_block = block;
    }
    std::int64_t index = scan.block_first_record[static_cast<std::size_t>(block)];
    std::int64_t found = -1;
    ForEachRecord(buffer.data(), from, loaded_length, from, to,
                  [&](std::string_view, std::size_t, std::int64_t line) {
                    if (index == row && found < 0) found = line;
                    ++index;
                  });
    if (found < 0)
      return Status::CorruptData("source '" + path + "': changed since it was scanned");
    offsets.push_back(found);
  }
  return offsets;
}

struct GeoJsonSeqSource::Impl {
  std::string path;
  bool feature_collection = false;  // records are the elements of "features", not lines
  FdCloser fd;
  std::int64_t file_size = 0;
  std::vector<FieldDef> fields;
  std::unordered_map<std::string, int> field_ids;
  od::parser parser;
  std::string utf8_copy;  // the record being read, when it was not UTF-8 (Utf8Repaired)
  GeometryTokens geometry;

  std::int64_t next_row = 0;
  std::int64_t end_row = -1;
  std::int64_t next_byte = 0;
  // File bytes [block_offset, block_offset + block_length), then simdjson::SIMDJSON_PADDING zeros.
  std::string block;
  std::int64_t block_offset = 0;
  std::int64_t block_length = 0;
  // A known line number: the line starting at byte `line_byte` is line `line_number` (1-based).
  std::int64_t line_byte = 0;
  std::int64_t line_number = 1;
  std::vector<std::int8_t> set_in_row;

  // The line number of the line starting at `offset` (counted from the last one known).
  Result<std::int64_t> LineNumberAt(std::int64_t offset) {
    if (offset < line_byte) {
      line_byte = 0;
      line_number = 1;
    }
    std::string buffer(1 << 20, '\0');
    while (line_byte < offset) {
      const std::int64_t want =
          std::min(static_cast<std::int64_t>(buffer.size()), offset - line_byte);
      std::int64_t got = 0;
      GEOLAKE_RETURN_NOT_OK(PreadFully(fd.fd, line_byte, want, buffer.data(), &got, path));
      if (got == 0) break;
      line_number += std::count(buffer.data(), buffer.data() + got, '\n');
      line_byte += got;
    }
    return line_number;
  }

  // Append the record as one row; `why` is set when it is unreadable.
  void AppendRecord(std::string_view text, std::size_t capacity, FeatureBatch* batch,
                    std::string* why);
};

GeoJsonSeqSource::GeoJsonSeqSource(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GeoJsonSeqSource::~GeoJsonSeqSource() = default;

Result<std::unique_ptr<GeoJsonSeqSource>> GeoJsonSeqSource::Open(const std::string& path,
                                                                 std::vector<FieldDef> fields,
                                                                 bool feature_collection) {
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  impl->feature_collection = feature_collection;
  GEOLAKE_ASSIGN_OR_RETURN(impl->fd.fd, OpenFile(path, &impl->file_size));
  impl->fields = std::move(fields);
  for (std::size_t i = 0; i < impl->fields.size(); ++i) {
    impl->field_ids.emplace(impl->fields[i].name, static_cast<int>(i));
  }
  return std::unique_ptr<GeoJsonSeqSource>(new GeoJsonSeqSource(std::move(impl)));
}

Status GeoJsonSeqSource::SeekRange(std::int64_t first_row, std::int64_t row_count,
                                   std::int64_t first_byte) {
  if (first_row < 0 || first_byte < 0 || first_byte > impl_->file_size) {
    return Status::InvalidArgument("source '" + impl_->path + "': bad range start (record " +
                                   std::to_string(first_row) + " at byte " +
                                   std::to_string(first_byte) + ")");
  }
  impl_->next_row = first_row;
  impl_->end_row = row_count < 0 ? -1 : first_row + row_count;
  impl_->next_byte = first_byte;
  impl_->block_length = 0;
  impl_->block_offset = first_byte;
  return Status::OK();
}

void GeoJsonSeqSource::Impl::AppendRecord(std::string_view text, std::size_t capacity,
                                          FeatureBatch* batch, std::string* why) {
  const std::size_t row = static_cast<std::size_t>(batch->num_rows());
  set_in_row.assign(fields.size(), 0);
  geometry.Clear();
  const std::size_t wkb_start = batch->wkb.size();
  bool has_geometry = false;
  std::size_t guess = 0;
  // Values go straight into the columns; a record found unreadable midway is rolled back to
  // `row` rows below.
  const auto fail = [&](std::string reason) { *why = std::move(reason); };
  // A record that is not UTF-8 is read from a copy with U+FFFD for every invalid byte; its
  // string values then carry one invalid byte (0xFF) where a U+FFFD is, so the transform
  // treats them as any source's invalid text: replaced and counted per field, or the row
  // rejected naming the field under --on-invalid reject (issue 17 item 8).
  bool repaired = false;
  // Of a repaired record: the bytes replaced, and those found in property values and in the
  // names of the fields they fill. Any other (a key, "Feature", a geometry type) rejects it:
  // read on, it would lose its properties or geometry without a word.
  std::size_t replaced = 0, accounted = 0;
  [&] {
    od::document doc;
    auto parse_error =
        parser.iterate(simdjson::padded_string_view(text.data(), text.size(), capacity)).get(doc);
    if (parse_error == simdjson::UTF8_ERROR) {
      text = Utf8Repaired(text, &utf8_copy, &replaced);
      repaired = true;
      parse_error =
          parser.iterate(simdjson::padded_string_view(text.data(), text.size(), utf8_copy.size()))
              .get(doc);
    }
    if (parse_error) {
      return fail(std::string("not JSON: ") + simdjson::error_message(parse_error));
    }
    od::object feature;
    if (auto error = doc.get_object().get(feature)) {
      return fail(std::string("not a JSON object: ") + simdjson::error_message(error));
    }
    for (auto member : feature) {
      std::string_view key;
      od::value value;
      if (auto error = member.unescaped_key().get(key)) {
        return fail(std::string("not JSON: ") + simdjson::error_message(error));
      }
      if (auto error = member.value().get(value)) {
        return fail(std::string("not JSON: ") + simdjson::error_message(error));
      }
      if (key == "properties") {
        od::json_type type;
        if (auto error = value.type().get(type)) {
          return fail(std::string("not JSON: ") + simdjson::error_message(error));
        }
        if (type == od::json_type::null) continue;
        od::object properties;
        if (auto error = value.get_object().get(properties)) {
          return fail(std::string("\"properties\" is not an object: ") +
                      simdjson::error_message(error));
        }
        for (auto field : properties) {
          std::string_view name;
          od::value v;
          if (field.unescaped_key().get(name) || field.value().get(v)) {
            return fail("not JSON in \"properties\"");
          }
          // Records mostly list the fields in schema order: try the one after the last first.
          std::size_t c = guess;
          if (c >= fields.size() || fields[c].name != name) {
            const auto found = field_ids.find(std::string(name));
            if (found == field_ids.end()) continue;  // not in the scanned schema
            c = static_cast<std::size_t>(found->second);
          }
          guess = c + 1;
          if (repaired) accounted += CountReplacements(name);
          od::json_type vt;
          if (v.type().get(vt)) return fail("not JSON in property '" + std::string(name) + "'");
          if (vt == od::json_type::null) continue;
          if (set_in_row[c] != 0) continue;  // a repeated key: GDAL keeps the first value
          Column& col = batch->columns[c];
          bool ok = false;
          switch (col.type) {
            case FieldType::kInt64: {
              std::int64_t i = 0;
              ok = !v.get_int64().get(i);
              if (ok) col.ints.push_back(i);
              break;
            }
            case FieldType::kDouble: {
              double d = 0;
              ok = !v.get_double().get(d);
              if (ok) col.doubles.push_back(d);
              break;
            }
            case FieldType::kBool: {
              bool b = false;
              ok = !v.get_bool().get(b);
              if (ok) col.ints.push_back(b ? 1 : 0);
              break;
            }
            default: {
              std::string_view s;
              ok = !v.get_string().get(s);
              if (ok) {
                // OGR keeps strings NUL-terminated: a value ends at an embedded NUL.
                const std::string_view text_value = s.substr(0, s.find('\0'));
                if (repaired) {
                  accounted += AppendMarkingReplacements(text_value, &col.bytes);
                } else {
                  col.bytes.append(text_value);
                }
                col.offsets.push_back(static_cast<std::int64_t>(col.bytes.size()));
              }
              break;
            }
          }
          if (!ok) {
            return fail("property '" + std::string(name) + "' is not a " +
                        std::string(FieldTypeName(col.type)));
          }
          col.valid.push_back(1);
          set_in_row[c] = 1;
        }
      } else if (key == "geometry") {
        od::json_type type;
        if (auto error = value.type().get(type)) {
          return fail(std::string("not JSON: ") + simdjson::error_message(error));
        }
        if (type != od::json_type::object) continue;
        od::object object;
        if (value.get_object().get(object)) return fail("not JSON in \"geometry\"");
        geometry.Clear();
        const GeomParse parsed = ParseGeometry(object, &geometry, &geometry.tokens, 0);
        if (parsed == GeomParse::kMalformed) return fail("not JSON in \"geometry\"");
        batch->wkb.resize(wkb_start);
        has_geometry = false;
        // GDAL builds no geometry for a Polygon without rings (but LINESTRING EMPTY for a
        // LineString without positions).
        const bool ringless_polygon = geometry.tokens.size() >= 2 &&
                                      geometry.tokens[0] == static_cast<int>(GeomType::kPolygon) &&
                                      geometry.tokens[1] == 0;
        if (parsed == GeomParse::kOk && !ringless_polygon) {
          WkbWriter writer(geometry, &batch->wkb);
          has_geometry = writer.Geometry();
          if (!has_geometry) batch->wkb.resize(wkb_start);
        }
      }
    }
    // At the end of the text, simdjson reports the location as out of bounds.
    if (doc.current_location().error() != simdjson::OUT_OF_BOUNDS) {
      return fail("trailing characters after the JSON object");
    }
  }();
  if (why->empty() && repaired && accounted < replaced) {
    *why = "not UTF-8 outside property values (" + std::to_string(replaced - accounted) + " of " +
           std::to_string(replaced) + " invalid bytes)";
  }
  if (!why->empty()) {
    // Roll the columns back to `row` rows, then give the row nulls and no geometry.
    for (std::size_t c = 0; c < batch->columns.size(); ++c) {
      Column& col = batch->columns[c];
      if (set_in_row[c] != 0) {
        col.valid.pop_back();
        if (col.type == FieldType::kInt64 || col.type == FieldType::kBool) {
          col.ints.pop_back();
        } else if (col.type == FieldType::kDouble) {
          col.doubles.pop_back();
        } else {
          col.offsets.pop_back();
          col.bytes.resize(static_cast<std::size_t>(col.offsets.back()));
        }
      }
      set_in_row[c] = 0;
    }
    batch->wkb.resize(wkb_start);
    has_geometry = false;
  }
  for (std::size_t c = 0; c < batch->columns.size(); ++c) {
    if (set_in_row[c] != 0) continue;
    Column& col = batch->columns[c];
    col.valid.push_back(0);
    if (col.type == FieldType::kInt64 || col.type == FieldType::kBool) {
      col.ints.push_back(0);
    } else if (col.type == FieldType::kDouble) {
      col.doubles.push_back(0.0);
    } else {
      col.offsets.push_back(static_cast<std::int64_t>(col.bytes.size()));
    }
  }
  (void)row;
  batch->geometry_valid.push_back(has_geometry ? 1 : 0);
  batch->wkb_offsets.push_back(static_cast<std::int64_t>(batch->wkb.size()));
}

void GeoJsonSeqSource::SetStop(const std::stop_token& stop) { impl_->geometry.stop = stop; }

Result<std::int64_t> GeoJsonSeqSource::ReadBatch(std::int64_t max_rows, FeatureBatch* batch,
                                                 std::int64_t max_wkb_bytes) {
  Impl& impl = *impl_;
  batch->Reset(impl.fields);
  std::int64_t rows = 0;
  std::string why;
  while (rows < max_rows && (impl.end_row < 0 || impl.next_row < impl.end_row)) {
    if (max_wkb_bytes > 0 && static_cast<std::int64_t>(batch->wkb.size()) >= max_wkb_bytes) break;
    if (impl.next_byte >= impl.file_size) {
      if (impl.end_row >= 0) {
        return Status::CorruptData("source '" + impl.path + "': the file ends at record " +
                                   std::to_string(impl.next_row) + ", before its range's end " +
                                   std::to_string(impl.end_row));
      }
      impl.end_row = impl.next_row;
      break;
    }
    if (impl.feature_collection) {
      // The next element of "features": skip separators to its '{', or stop at the ']'.
      std::int64_t in_block = impl.next_byte - impl.block_offset;
      if (in_block < 0 || in_block >= impl.block_length) {
        GEOLAKE_ASSIGN_OR_RETURN(impl.block_length,
                                 ReadPlain(impl.fd.fd, impl.path, impl.file_size, impl.next_byte,
                                           kReadBlockBytes, &impl.block));
        impl.block_offset = impl.next_byte;
        in_block = 0;
        if (impl.block_length == 0) {
          impl.next_byte = impl.file_size;
          continue;
        }
      }
      const char c = impl.block[static_cast<std::size_t>(in_block)];
      if (IsJsonSpace(c) || c == ',') {
        ++impl.next_byte;
        continue;
      }
      if (c != '{') {  // the end of "features"
        if (impl.end_row >= 0) {
          return Status::CorruptData("source '" + impl.path + "': \"features\" ends at feature " +
                                     std::to_string(impl.next_row) + ", before its range's end " +
                                     std::to_string(impl.end_row));
        }
        impl.end_row = impl.next_row;
        break;
      }
      const char* begin = impl.block.data() + in_block;
      const std::int64_t length = ObjectLength(begin, impl.block.data() + impl.block_length);
      if (length < 0) {
        if (impl.block_offset + impl.block_length >= impl.file_size) {
          return Status::CorruptData("source '" + impl.path + "': feature " +
                                     std::to_string(impl.next_row) + " is truncated");
        }
        // Not whole in the block: read again from its start, twice as much if it was there.
        const std::int64_t want =
            in_block == 0 ? 2 * std::max<std::int64_t>(impl.block_length, 1) : kReadBlockBytes;
        GEOLAKE_ASSIGN_OR_RETURN(impl.block_length,
                                 ReadPlain(impl.fd.fd, impl.path, impl.file_size, impl.next_byte,
                                           std::max(want, kReadBlockBytes), &impl.block));
        impl.block_offset = impl.next_byte;
        continue;
      }
      const std::int64_t record_start = impl.next_byte;
      impl.next_byte += length;
      const std::size_t capacity = static_cast<std::size_t>(impl.block.data() + impl.block_length +
                                                            simdjson::SIMDJSON_PADDING - begin);
      why.clear();
      impl.AppendRecord(std::string_view(begin, static_cast<std::size_t>(length)), capacity, batch,
                        &why);
      if (impl.geometry.stopped) {
        return Status::Cancelled("reading '" + impl.path + "' stopped inside the feature at byte " +
                                 std::to_string(record_start));
      }
      if (!why.empty()) {
        batch->unreadable.push_back(
            {batch->num_rows(), "feature at byte " + std::to_string(record_start) + ": " + why});
      }
      batch->feature_index.push_back(impl.next_row);
      ++impl.next_row;
      ++rows;
      continue;
    }
    // The next line, whole, in the block.
    const std::int64_t in_block = impl.next_byte - impl.block_offset;
    const char* begin = impl.block.data() + in_block;
    const char* newline =
        impl.block_length > in_block && in_block >= 0
            ? static_cast<const char*>(std::memchr(begin, '\n', impl.block_length - in_block))
            : nullptr;
    const bool whole = newline != nullptr ||
                       (in_block >= 0 && impl.block_offset + impl.block_length == impl.file_size &&
                        impl.block_length > in_block);
    if (!whole) {
      GEOLAKE_ASSIGN_OR_RETURN(impl.block_length,
                               ReadThroughLineEnd(impl.fd.fd, impl.path, impl.file_size,
                                                  impl.next_byte, kReadBlockBytes, &impl.block));
      impl.block_offset = impl.next_byte;
      continue;
    }
    const char* end = newline != nullptr ? newline : impl.block.data() + impl.block_length;
    const std::string_view text = Trim(begin, end, impl.next_byte == 0);
    const std::int64_t line_start = impl.next_byte;
    impl.next_byte += (end - begin) + (newline != nullptr ? 1 : 0);
    if (text.empty()) continue;
    const std::size_t capacity = static_cast<std::size_t>(impl.block.data() + impl.block_length +
                                                          simdjson::SIMDJSON_PADDING - text.data());
    why.clear();
    impl.AppendRecord(text, capacity, batch, &why);
    if (impl.geometry.stopped) {
      return Status::Cancelled("reading '" + impl.path + "' stopped inside record " +
                               std::to_string(impl.next_row));
    }
    if (!why.empty()) {
      GEOLAKE_ASSIGN_OR_RETURN(const std::int64_t line, impl.LineNumberAt(line_start));
      batch->unreadable.push_back({batch->num_rows(), "line " + std::to_string(line) + ": " + why});
    }
    batch->feature_index.push_back(impl.next_row);
    ++impl.next_row;
    ++rows;
  }
  return rows;
}

}  // namespace geolake::sources
