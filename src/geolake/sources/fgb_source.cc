// FlatGeobuf reading (https://flatgeobuf.org; the tables are the format's header.fbs and
// feature.fbs, field ids in declaration order). FlatBuffers are decoded here by hand: a table
// starts with a signed 32-bit offset back to its vtable, whose 16-bit entries give each field's
// offset in the table (0 = absent); strings and vectors are reached by an unsigned 32-bit offset
// and start with a 32-bit length. Every offset is checked against the record's bounds, so a
// corrupt file is an error, never a read outside the buffer.
#include "geolake/sources/fgb_source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <string_view>
#include <utility>

#include "geolake/core/little_endian.h"
#include "geolake/sources/gdal_source.h"

namespace geolake::sources {
namespace {

using geoparquet::Column;
using geoparquet::FeatureBatch;
using geoparquet::FieldDef;
using geoparquet::FieldType;

constexpr std::int64_t kMagicBytes = 8;
// Records are read in blocks of this size (or one record, when larger): large enough that the
// per-read cost vanishes (~250 records of a 4 KiB polygon per read), small enough per reader.
constexpr std::int64_t kBlockBytes = 1 << 20;
// A packed R-tree node: minX, minY, maxX, maxY (doubles) and the feature's byte offset (uint64).
constexpr std::int64_t kNodeBytes = 40;
// GDAL refuses headers and records above 2 GiB; so does this reader.
constexpr std::uint32_t kMaxRecordBytes = 0x7fffffffu;

// FlatGeobuf's GeometryType (the WKB codes for 0..7) and ColumnType.
enum GeometryType : std::uint8_t {
  kUnknown = 0,
  kPoint = 1,
  kLineString = 2,
  kPolygon = 3,
  kMultiPoint = 4,
  kMultiLineString = 5,
  kMultiPolygon = 6,
  kGeometryCollection = 7,
};
enum ColumnType : std::uint8_t {
  kByte,
  kUByte,
  kBool,
  kShort,
  kUShort,
  kInt,
  kUInt,
  kLong,
  kULong,
  kFloat,
  kDouble,
  kString,
  kJson,
  kDateTime,
  kBinary,
};

// Field ids of the tables read here.
namespace header_field {
constexpr int kGeometryType = 2, kHasZ = 3, kHasM = 4, kHasT = 5, kHasTm = 6, kColumns = 7,
              kFeaturesCount = 8, kIndexNodeSize = 9;
}
namespace column_field {
constexpr int kName = 0, kType = 1;
}
namespace feature_field {
constexpr int kGeometry = 0, kProperties = 1, kColumns = 2;
}
namespace geometry_field {
// Fields 4 and 5 (t, tm) are not read: geolake keeps x, y, z and m.
constexpr int kEnds = 0, kXy = 1, kZ = 2, kM = 3, kType = 6, kParts = 7;
}  // namespace geometry_field

// A view of one FlatBuffers table inside a buffer [base, base + size).
class Table {
 public:
  Table() = default;

  // The root table of a buffer, or an invalid table.
  static Table Root(const std::uint8_t* base, std::size_t size) {
    if (size < 4) return {};
    return At(base, size, LoadLE<std::uint32_t>(base));
  }

  bool valid() const { return base_ != nullptr; }

  // Offset of field `id` inside the table, 0 when absent.
  std::uint16_t FieldOffset(int id) const {
    const std::size_t entry = 4 + 2 * static_cast<std::size_t>(id);
    if (entry + 2 > vtable_size_) return 0;
    const std::uint16_t off = LoadLE<std::uint16_t>(base_ + vtable_ + entry);
    return off < table_size_ ? off : 0;
  }

  template <typename T>
  T Scalar(int id, T fallback) const {
    const std::uint16_t off = FieldOffset(id);
    if (off == 0 || off + sizeof(T) > table_size_) return fallback;
    return LoadLE<T>(base_ + pos_ + off);
  }

  // The position of what an offset field points to, or 0 when absent or out of bounds.
  std::size_t Indirect(int id) const {
    const std::uint16_t off = FieldOffset(id);
    if (off == 0 || off + 4u > table_size_) return 0;
    const std::size_t at = pos_ + off;
    const std::size_t target = at + LoadLE<std::uint32_t>(base_ + at);
    return target + 4 <= size_ && target > at ? target : 0;
  }

  // A vector field: its element count and first element; false when absent or corrupt.
  bool Vector(int id, std::size_t element_size, const std::uint8_t** data,
              std::size_t* count) const {
    const std::size_t at = Indirect(id);
    if (at == 0) return false;
    const std::size_t n = LoadLE<std::uint32_t>(base_ + at);
    if (n > (size_ - at - 4) / element_size) return false;
    *data = base_ + at + 4;
    *count = n;
    return true;
  }

  bool String(int id, std::string_view* out) const {
    const std::uint8_t* data = nullptr;
    std::size_t count = 0;
    if (!Vector(id, 1, &data, &count)) return false;
    *out = std::string_view(reinterpret_cast<const char*>(data), count);
    return true;
  }

  // Element i of a vector of tables that starts at `data`.
  Table TableAt(const std::uint8_t* data, std::size_t i) const {
    const std::size_t at = static_cast<std::size_t>(data - base_) + 4 * i;
    return At(base_, size_, at + LoadLE<std::uint32_t>(base_ + at));
  }

  Table SubTable(int id) const {
    const std::size_t at = Indirect(id);
    return at == 0 ? Table{} : At(base_, size_, at);
  }

 private:
  static Table At(const std::uint8_t* base, std::size_t size, std::size_t pos) {
    if (pos + 4 > size || pos < 4) return {};
    const std::int64_t vtable = static_cast<std::int64_t>(pos) -
                                static_cast<std::int64_t>(LoadLE<std::int32_t>(base + pos));
    if (vtable < 0 || static_cast<std::size_t>(vtable) + 4 > size) return {};
    Table t;
    t.base_ = base;
    t.size_ = size;
    t.pos_ = pos;
    t.vtable_ = static_cast<std::size_t>(vtable);
    t.vtable_size_ = LoadLE<std::uint16_t>(base + t.vtable_);
    t.table_size_ = LoadLE<std::uint16_t>(base + t.vtable_ + 2);
    if (t.vtable_size_ < 4 || t.vtable_ + t.vtable_size_ > size || pos + t.table_size_ > size) {
      return {};
    }
    return t;
  }

  const std::uint8_t* base_ = nullptr;
  std::size_t size_ = 0;
  std::size_t pos_ = 0;
  std::size_t vtable_ = 0;
  std::size_t vtable_size_ = 0;
  std::size_t table_size_ = 0;
};

struct FdCloser {
  int fd = -1;
  ~FdCloser() {
    if (fd >= 0) ::close(fd);
  }
};

// Read exactly `length` bytes at `offset` (fewer only at the end of the file: `*got`).
Status PreadFully(int fd, std::int64_t offset, std::int64_t length, std::uint8_t* out,
                  std::int64_t* got, const std::string& path) {
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

void PutU8(std::string* out, std::uint8_t v) { out->push_back(static_cast<char>(v)); }
void PutU32(std::string* out, std::uint32_t v) { AppendLE(v, out); }
void PutWkbHeader(std::string* out, std::uint32_t type, std::uint32_t dims_code) {
  PutU8(out, 1);
  PutU32(out, type + dims_code);
}

// Decodes one Geometry table into ISO WKB as GDAL's FlatGeobuf reader builds it (3.6).
class GeometryWriter {
 public:
  GeometryWriter(bool has_z, bool has_m)
      : has_z_(has_z), has_m_(has_m), dims_code_((has_z ? 1000 : 0) + (has_m ? 2000 : 0)) {}

  // False when the geometry does not decode (GDAL then reads the feature without geometry).
  bool Write(const Table& geometry, std::uint8_t type, std::string* out) {
    if (type == kUnknown) type = geometry.Scalar<std::uint8_t>(geometry_field::kType, 0);
    if (type == kMultiPolygon || type == kGeometryCollection) {
      const std::uint8_t* parts = nullptr;
      std::size_t count = 0;
      if (!geometry.Vector(geometry_field::kParts, 4, &parts, &count)) return false;
      PutWkbHeader(out, type, dims_code_);
      PutU32(out, static_cast<std::uint32_t>(count));
      for (std::size_t i = 0; i < count; ++i) {
        const Table part = geometry.TableAt(parts, i);
        if (!part.valid()) return false;
        if (!Write(part, type == kMultiPolygon ? kPolygon : kUnknown, out)) return false;
      }
      return true;
    }
    if (type < kPoint || type > kMultiLineString) return false;
    std::size_t xy_count = 0;  // doubles: x, y per point
    if (!geometry.Vector(geometry_field::kXy, 8, &xy_, &xy_count)) return false;
    points_ = xy_count / 2;
    z_ = m_ = nullptr;
    std::size_t n = 0;
    if (has_z_ && (!geometry.Vector(geometry_field::kZ, 8, &z_, &n) || n < points_)) return false;
    if (has_m_ && (!geometry.Vector(geometry_field::kM, 8, &m_, &n) || n < points_)) return false;
    const std::uint8_t* ends = nullptr;
    std::size_t end_count = 0;
    if (!geometry.Vector(geometry_field::kEnds, 4, &ends, &end_count)) end_count = 0;
    switch (type) {
      case kPoint:
        if (points_ == 0) return false;
        PutWkbHeader(out, kPoint, dims_code_);
        PutPoints(0, 1, out);
        return true;
      case kLineString:
        PutWkbHeader(out, kLineString, dims_code_);
        PutU32(out, static_cast<std::uint32_t>(points_));
        PutPoints(0, points_, out);
        return true;
      case kMultiPoint:
        PutWkbHeader(out, kMultiPoint, dims_code_);
        PutU32(out, static_cast<std::uint32_t>(points_));
        for (std::size_t i = 0; i < points_; ++i) {
          PutWkbHeader(out, kPoint, dims_code_);
          PutPoints(i, 1, out);
        }
        return true;
      case kPolygon:
      case kMultiLineString:
        return WriteParts(type, ends, end_count, out);
      default:
        return false;
    }
  }

 private:
  // A polygon's rings or a multilinestring's lines: split at `ends` (end indices in points)
  // when there are two or more, else one part of every point.
  bool WriteParts(std::uint8_t type, const std::uint8_t* ends, std::size_t end_count,
                  std::string* out) {
    PutWkbHeader(out, type, dims_code_);
    if (end_count < 2) {
      PutU32(out, 1);
      if (type == kMultiLineString) PutWkbHeader(out, kLineString, dims_code_);
      PutU32(out, static_cast<std::uint32_t>(points_));
      PutPoints(0, points_, out);
      return true;
    }
    PutU32(out, static_cast<std::uint32_t>(end_count));
    std::size_t begin = 0;
    for (std::size_t i = 0; i < end_count; ++i) {
      const std::size_t end = LoadLE<std::uint32_t>(ends + 4 * i);
      if (end < begin || end > points_) return false;
      if (type == kMultiLineString) PutWkbHeader(out, kLineString, dims_code_);
      PutU32(out, static_cast<std::uint32_t>(end - begin));
      PutPoints(begin, end - begin, out);
      begin = end;
    }
    return true;
  }

  void PutPoints(std::size_t first, std::size_t count, std::string* out) {
    if (!has_z_ && !has_m_) {
      out->append(reinterpret_cast<const char*>(xy_ + 16 * first), 16 * count);
      return;
    }
    for (std::size_t i = first; i < first + count; ++i) {
      out->append(reinterpret_cast<const char*>(xy_ + 16 * i), 16);
      if (z_ != nullptr) out->append(reinterpret_cast<const char*>(z_ + 8 * i), 8);
      if (m_ != nullptr) out->append(reinterpret_cast<const char*>(m_ + 8 * i), 8);
    }
  }

  bool has_z_;
  bool has_m_;
  std::uint32_t dims_code_;
  const std::uint8_t* xy_ = nullptr;
  const std::uint8_t* z_ = nullptr;
  const std::uint8_t* m_ = nullptr;
  std::size_t points_ = 0;
};

}  // namespace

struct FgbSource::Impl {
  std::string path;
  FdCloser fd;
  std::int64_t file_size = 0;
  std::vector<FieldDef> fields;
  std::vector<std::uint8_t> column_types;
  std::uint8_t geometry_type = kUnknown;
  bool has_z = false;
  bool has_m = false;
  std::int64_t feature_count = 0;  // the header's (0 = unknown)
  std::uint16_t index_node_size = 0;
  std::int64_t index_offset = 0;
  std::int64_t index_bytes = 0;
  std::int64_t features_offset = 0;

  // The range being read.
  std::int64_t next_row = 0;
  std::int64_t end_row = -1;  // -1 = to the end of the file
  std::int64_t next_byte = 0;
  // The block of the file in memory: bytes [block_offset, block_offset + block.size()).
  std::vector<std::uint8_t> block;
  std::int64_t block_offset = 0;
  std::vector<std::int64_t> value_at;  // per column: offset of its value in the properties, -1

  // Make bytes [offset, offset + length) available in `block`; false at the end of the file.
  Result<bool> Ensure(std::int64_t offset, std::int64_t length) {
    if (offset >= block_offset &&
        offset + length <= block_offset + static_cast<std::int64_t>(block.size())) {
      return true;
    }
    const std::int64_t want = std::max(length, kBlockBytes);
    block.resize(static_cast<std::size_t>(want));
    std::int64_t got = 0;
    GEOLAKE_RETURN_NOT_OK(PreadFully(fd.fd, offset, want, block.data(), &got, path));
    block.resize(static_cast<std::size_t>(got));
    block_offset = offset;
    return got >= length;
  }

  // The record starting at `offset`: its size, or -1 at the end of the file.
  Result<std::int64_t> RecordSize(std::int64_t offset) {
    if (offset >= file_size) return -1;
    GEOLAKE_ASSIGN_OR_RETURN(bool have, Ensure(offset, 4));
    if (!have)
      return Status::CorruptData("source '" + path + "': truncated record at byte " +
                                 std::to_string(offset));
    const std::uint32_t size = LoadLE<std::uint32_t>(block.data() + (offset - block_offset));
    if (size > kMaxRecordBytes || offset + 4 + static_cast<std::int64_t>(size) > file_size) {
      return Status::CorruptData("source '" + path + "': record at byte " + std::to_string(offset) +
                                 " runs past the end of the file");
    }
    return static_cast<std::int64_t>(size);
  }

  Status AppendFeature(const std::uint8_t* record, std::size_t size, std::int64_t index,
                       FeatureBatch* batch);
};

FgbSource::FgbSource(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
FgbSource::~FgbSource() = default;

bool FgbSource::IsFlatGeobufFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  FdCloser closer{fd};
  std::uint8_t magic[kMagicBytes] = {};
  std::int64_t got = 0;
  if (!PreadFully(fd, 0, kMagicBytes, magic, &got, path).ok() || got != kMagicBytes) return false;
  return std::memcmp(magic, "fgb", 3) == 0 && magic[3] == 3 &&
         std::memcmp(magic + 4, "fgb", 3) == 0;
}

Result<std::unique_ptr<FgbSource>> FgbSource::Open(const std::string& path) {
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  impl->fd.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (impl->fd.fd < 0) {
    if (errno == ENOENT) return Status::NotFound("source '" + path + "': no such file");
    return Status::IOError("source '" + path + "': " + std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(impl->fd.fd, &st) != 0) return Status::IOError("source '" + path + "': cannot stat");
  impl->file_size = static_cast<std::int64_t>(st.st_size);
  const auto corrupt = [&](const std::string& why) {
    return Status::CorruptData("source '" + path + "': not a FlatGeobuf file: " + why);
  };
  std::uint8_t start[kMagicBytes + 4] = {};
  std::int64_t got = 0;
  GEOLAKE_RETURN_NOT_OK(PreadFully(impl->fd.fd, 0, sizeof(start), start, &got, path));
  if (got != static_cast<std::int64_t>(sizeof(start)) || std::memcmp(start, "fgb", 3) != 0 ||
      std::memcmp(start + 4, "fgb", 3) != 0) {
    return corrupt("no magic bytes");
  }
  if (start[3] != 3) {
    return Status::NotImplemented("source '" + path + "': FlatGeobuf major version " +
                                  std::to_string(start[3]) + " (3 is read)");
  }
  const std::uint32_t header_size = LoadLE<std::uint32_t>(start + kMagicBytes);
  if (header_size > kMaxRecordBytes || kMagicBytes + 4 + header_size > impl->file_size) {
    return corrupt("header size " + std::to_string(header_size));
  }
  std::vector<std::uint8_t> header(header_size);
  GEOLAKE_RETURN_NOT_OK(
      PreadFully(impl->fd.fd, kMagicBytes + 4, header_size, header.data(), &got, path));
  if (got != header_size) return corrupt("truncated header");
  const Table root = Table::Root(header.data(), header.size());
  if (!root.valid()) return corrupt("header table");
  impl->geometry_type = root.Scalar<std::uint8_t>(header_field::kGeometryType, kUnknown);
  impl->has_z = root.Scalar<std::uint8_t>(header_field::kHasZ, 0) != 0;
  impl->has_m = root.Scalar<std::uint8_t>(header_field::kHasM, 0) != 0;
  const bool has_t = root.Scalar<std::uint8_t>(header_field::kHasT, 0) != 0;
  const bool has_tm = root.Scalar<std::uint8_t>(header_field::kHasTm, 0) != 0;
  const std::uint64_t count = root.Scalar<std::uint64_t>(header_field::kFeaturesCount, 0);
  impl->index_node_size = root.Scalar<std::uint16_t>(header_field::kIndexNodeSize, 16);
  if (impl->geometry_type > kGeometryCollection) {
    return Status::NotImplemented("source '" + path + "': FlatGeobuf geometry type " +
                                  std::to_string(impl->geometry_type) +
                                  " (curves, surfaces, TIN) is read by GDAL");
  }
  if (has_t || has_tm) {
    return Status::NotImplemented("source '" + path + "': FlatGeobuf T/TM ordinates");
  }
  if (count > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max() / kNodeBytes)) {
    return corrupt("feature count " + std::to_string(count));
  }
  impl->feature_count = static_cast<std::int64_t>(count);
  const std::uint8_t* columns = nullptr;
  std::size_t column_count = 0;
  if (root.Vector(header_field::kColumns, 4, &columns, &column_count)) {
    for (std::size_t i = 0; i < column_count; ++i) {
      const Table column = root.TableAt(columns, i);
      std::string_view name;
      if (!column.valid() || !column.String(column_field::kName, &name)) {
        return corrupt("column " + std::to_string(i));
      }
      const std::uint8_t type = column.Scalar<std::uint8_t>(column_field::kType, kByte);
      FieldType field_type = FieldType::kInt64;
      switch (type) {
        case kBool:
          field_type = FieldType::kBool;
          break;
        case kByte:
        case kUByte:
        case kShort:
        case kUShort:
        case kInt:
        case kUInt:
        case kLong:
          field_type = FieldType::kInt64;
          break;
        case kFloat:
        case kDouble:
          field_type = FieldType::kDouble;
          break;
        case kString:
        case kJson:
          field_type = FieldType::kString;
          break;
        case kBinary:
          field_type = FieldType::kBinary;
          break;
        default:  // ULong (GDAL makes it a double), DateTime (GDAL parses the text), unknown
          return Status::NotImplemented("source '" + path + "': FlatGeobuf column '" +
                                        std::string(name) + "' of type " + std::to_string(type) +
                                        " is read by GDAL");
      }
      impl->fields.push_back({std::string(name), field_type});
      impl->column_types.push_back(type);
    }
  }
  impl->index_offset = kMagicBytes + 4 + header_size;
  if (impl->index_node_size >= 2 && impl->feature_count > 0) {
    // The packed R-tree's size: every level of ceil(n / node_size) nodes up to the root.
    std::int64_t n = impl->feature_count;
    std::int64_t nodes = n;
    do {
      n = (n + impl->index_node_size - 1) / impl->index_node_size;
      nodes += n;
    } while (n != 1);
    impl->index_bytes = nodes * kNodeBytes;
  } else if (impl->index_node_size == 1) {
    return corrupt("index node size 1");
  }
  impl->features_offset = impl->index_offset + impl->index_bytes;
  if (impl->features_offset > impl->file_size) return corrupt("index runs past the end");
  impl->value_at.assign(impl->fields.size(), -1);
  impl->next_byte = impl->features_offset;
  return std::unique_ptr<FgbSource>(new FgbSource(std::move(impl)));
}

const std::string& FgbSource::path() const { return impl_->path; }
const std::vector<FieldDef>& FgbSource::fields() const { return impl_->fields; }
std::int64_t FgbSource::header_feature_count() const { return impl_->feature_count; }
bool FgbSource::has_index() const { return impl_->index_bytes > 0; }
std::int64_t FgbSource::features_offset() const { return impl_->features_offset; }

Status FgbSource::MatchesDescription(const SourceInfo& gdal_info) const {
  const auto refuse = [&](const std::string& why) {
    return Status::NotImplemented("source '" + impl_->path + "': " + why);
  };
  if (gdal_info.fields.size() != impl_->fields.size()) {
    return refuse("GDAL lists " + std::to_string(gdal_info.fields.size()) + " fields, the header " +
                  std::to_string(impl_->fields.size()));
  }
  for (std::size_t i = 0; i < impl_->fields.size(); ++i) {
    if (gdal_info.fields[i].name != impl_->fields[i].name ||
        gdal_info.fields[i].type != impl_->fields[i].type) {
      return refuse("field " + std::to_string(i) + " '" + impl_->fields[i].name +
                    "' differs from GDAL's '" + gdal_info.fields[i].name + "'");
    }
  }
  if (impl_->feature_count > 0 && gdal_info.feature_count >= 0 &&
      gdal_info.feature_count != impl_->feature_count) {
    return refuse("GDAL counts " + std::to_string(gdal_info.feature_count) + " features");
  }
  return Status::OK();
}

Result<std::int64_t> FgbSource::CountRecords() const {
  Impl scan;  // a private cursor: const methods stay safe to call concurrently
  scan.path = impl_->path;
  scan.fd.fd = ::dup(impl_->fd.fd);
  if (scan.fd.fd < 0) return Status::IOError("source '" + impl_->path + "': dup failed");
  scan.file_size = impl_->file_size;
  std::int64_t count = 0;
  for (std::int64_t at = impl_->features_offset;;) {
    GEOLAKE_ASSIGN_OR_RETURN(std::int64_t size, scan.RecordSize(at));
    if (size < 0) break;
    at += 4 + size;
    ++count;
  }
  return count;
}

Result<std::vector<std::int64_t>> FgbSource::RecordOffsets(
    const std::vector<std::int64_t>& rows) const {
  std::vector<std::int64_t> offsets;
  offsets.reserve(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (rows[i] < 0 || (i > 0 && rows[i] <= rows[i - 1]) ||
        (impl_->feature_count > 0 && rows[i] >= impl_->feature_count)) {
      return Status::InvalidArgument("source '" + impl_->path + "': feature " +
                                     std::to_string(rows[i]) + " out of order or range");
    }
  }
  if (has_index()) {
    // Leaf nodes are the last feature_count nodes, in the features' order; each holds its
    // feature's offset from the first record.
    const std::int64_t leaves =
        impl_->index_offset + impl_->index_bytes - impl_->feature_count * kNodeBytes;
    for (const std::int64_t row : rows) {
      std::uint8_t offset_bytes[8];
      std::int64_t got = 0;
      GEOLAKE_RETURN_NOT_OK(PreadFully(impl_->fd.fd, leaves + row * kNodeBytes + 32, 8,
                                       offset_bytes, &got, impl_->path));
      if (got != 8) return Status::CorruptData("source '" + impl_->path + "': truncated index");
      const std::uint64_t offset = LoadLE<std::uint64_t>(offset_bytes);
      if (offset >= static_cast<std::uint64_t>(impl_->file_size - impl_->features_offset) ||
          (!offsets.empty() &&
           static_cast<std::int64_t>(offset) + impl_->features_offset <= offsets.back()) ||
          (row == 0 && offset != 0)) {
        return Status::CorruptData("source '" + impl_->path + "': index offset of feature " +
                                   std::to_string(row) + " is not after the one before it");
      }
      offsets.push_back(impl_->features_offset + static_cast<std::int64_t>(offset));
    }
    return offsets;
  }
  Impl scan;
  scan.path = impl_->path;
  scan.fd.fd = ::dup(impl_->fd.fd);
  if (scan.fd.fd < 0) return Status::IOError("source '" + impl_->path + "': dup failed");
  scan.file_size = impl_->file_size;
  std::int64_t at = impl_->features_offset;
  std::int64_t row = 0;
  for (const std::int64_t wanted : rows) {
    while (row < wanted) {
      GEOLAKE_ASSIGN_OR_RETURN(std::int64_t size, scan.RecordSize(at));
      if (size < 0) {
        return Status::CorruptData("source '" + impl_->path + "': the file ends at feature " +
                                   std::to_string(row) + ", before feature " +
                                   std::to_string(wanted));
      }
      at += 4 + size;
      ++row;
    }
    offsets.push_back(at);
  }
  return offsets;
}

Status FgbSource::SeekRange(std::int64_t first_row, std::int64_t row_count,
                            std::int64_t first_byte) {
  if (first_row < 0 || first_byte < impl_->features_offset || first_byte > impl_->file_size) {
    return Status::InvalidArgument("source '" + impl_->path + "': bad range start (feature " +
                                   std::to_string(first_row) + " at byte " +
                                   std::to_string(first_byte) + ")");
  }
  impl_->next_row = first_row;
  impl_->end_row = row_count < 0 ? -1 : first_row + row_count;
  impl_->next_byte = first_byte;
  return Status::OK();
}

Status FgbSource::Impl::AppendFeature(const std::uint8_t* record, std::size_t size,
                                      std::int64_t index, FeatureBatch* batch) {
  const auto corrupt = [&](const std::string& why) {
    return Status::CorruptData("source '" + path + "': feature " + std::to_string(index) + ": " +
                               why);
  };
  const Table feature = Table::Root(record, size);
  if (!feature.valid()) return corrupt("not a Feature table");
  if (feature.FieldOffset(feature_field::kColumns) != 0) {
    return Status::NotImplemented("source '" + path + "': feature " + std::to_string(index) +
                                  " has columns of its own");
  }
  std::fill(value_at.begin(), value_at.end(), -1);
  const std::uint8_t* props = nullptr;
  std::size_t props_size = 0;
  if (feature.Vector(feature_field::kProperties, 1, &props, &props_size)) {
    std::size_t at = 0;
    while (at < props_size) {
      if (at + 2 > props_size) return corrupt("truncated properties");
      const std::uint16_t column = LoadLE<std::uint16_t>(props + at);
      at += 2;
      if (column >= column_types.size()) {
        return corrupt("property of column " + std::to_string(column) + " beyond the header's");
      }
      value_at[column] = static_cast<std::int64_t>(at);
      std::size_t value_size = 0;
      switch (column_types[column]) {
        case kByte:
        case kUByte:
        case kBool:
          value_size = 1;
          break;
        case kShort:
        case kUShort:
          value_size = 2;
          break;
        case kInt:
        case kUInt:
        case kFloat:
          value_size = 4;
          break;
        case kLong:
        case kDouble:
          value_size = 8;
          break;
        default:
          if (at + 4 > props_size) return corrupt("truncated property length");
          value_size = 4 + static_cast<std::size_t>(LoadLE<std::uint32_t>(props + at));
          break;
      }
      if (value_size > props_size - at) return corrupt("truncated property value");
      at += value_size;
    }
  }
  for (std::size_t c = 0; c < batch->columns.size(); ++c) {
    Column& col = batch->columns[c];
    const std::int64_t where = value_at[c];
    const bool present = where >= 0;
    col.valid.push_back(present ? 1 : 0);
    const std::uint8_t* v = present ? props + where : nullptr;
    switch (column_types[c]) {
      case kByte:
        col.ints.push_back(present ? LoadLE<std::int8_t>(v) : 0);
        break;
      case kUByte:
      case kBool:
        col.ints.push_back(present ? LoadLE<std::uint8_t>(v) : 0);
        break;
      case kShort:
        col.ints.push_back(present ? LoadLE<std::int16_t>(v) : 0);
        break;
      case kUShort:
        col.ints.push_back(present ? LoadLE<std::uint16_t>(v) : 0);
        break;
      case kInt:
        col.ints.push_back(present ? LoadLE<std::int32_t>(v) : 0);
        break;
      case kUInt:
        col.ints.push_back(present ? LoadLE<std::uint32_t>(v) : 0);
        break;
      case kLong:
        col.ints.push_back(present ? LoadLE<std::int64_t>(v) : 0);
        break;
      case kFloat:
        col.doubles.push_back(present ? static_cast<double>(LoadLE<float>(v)) : 0.0);
        break;
      case kDouble:
        col.doubles.push_back(present ? LoadLE<double>(v) : 0.0);
        break;
      default: {
        if (present) {
          const std::size_t length = LoadLE<std::uint32_t>(v);
          std::string_view text(reinterpret_cast<const char*>(v + 4), length);
          // OGR keeps strings NUL-terminated: its value ends at an embedded NUL.
          if (column_types[c] != kBinary) text = text.substr(0, text.find('\0'));
          col.bytes.append(text);
        }
        col.offsets.push_back(static_cast<std::int64_t>(col.bytes.size()));
        break;
      }
    }
  }
  const Table geometry = feature.SubTable(feature_field::kGeometry);
  bool has_geometry = false;
  if (geometry.valid()) {
    const std::size_t start = batch->wkb.size();
    GeometryWriter writer(has_z, has_m);
    has_geometry = writer.Write(geometry, geometry_type, &batch->wkb);
    if (!has_geometry) batch->wkb.resize(start);
  }
  batch->geometry_valid.push_back(has_geometry ? 1 : 0);
  batch->wkb_offsets.push_back(static_cast<std::int64_t>(batch->wkb.size()));
  batch->feature_index.push_back(index);
  return Status::OK();
}

Result<std::int64_t> FgbSource::ReadBatch(std::int64_t max_rows, FeatureBatch* batch,
                                          std::int64_t max_wkb_bytes) {
  Impl& impl = *impl_;
  batch->Reset(impl.fields);
  std::int64_t rows = 0;
  while (rows < max_rows && (impl.end_row < 0 || impl.next_row < impl.end_row)) {
    if (max_wkb_bytes > 0 && static_cast<std::int64_t>(batch->wkb.size()) >= max_wkb_bytes) break;
    GEOLAKE_ASSIGN_OR_RETURN(std::int64_t size, impl.RecordSize(impl.next_byte));
    if (size < 0) {
      if (impl.end_row >= 0) {
        return Status::CorruptData("source '" + impl.path + "': the file ends at feature " +
                                   std::to_string(impl.next_row) + ", before its range's end " +
                                   std::to_string(impl.end_row));
      }
      impl.end_row = impl.next_row;
      break;
    }
    GEOLAKE_ASSIGN_OR_RETURN(bool have, impl.Ensure(impl.next_byte, 4 + size));
    if (!have) return Status::CorruptData("source '" + impl.path + "': truncated record");
    const std::uint8_t* record = impl.block.data() + (impl.next_byte - impl.block_offset) + 4;
    GEOLAKE_RETURN_NOT_OK(
        impl.AppendFeature(record, static_cast<std::size_t>(size), impl.next_row, batch));
    impl.next_byte += 4 + size;
    ++impl.next_row;
    ++rows;
  }
  return rows;
}

}  // namespace geolake::sources
