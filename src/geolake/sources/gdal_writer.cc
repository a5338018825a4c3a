#include "geolake/sources/gdal_writer.h"

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <utility>

#include "geolake/core/civil_time.h"
#include "geolake/sources/gdal_api.h"

namespace geolake::sources {

using geoparquet::FieldType;

namespace {

// ---- The stream handler ----------------------------------------------------------------------
//
// GDAL's GeoJSON and GeoJSONSeq writers ignore the result of every write (a full disk gave
// exit 0 and a 100 KiB file of ~30 MB). They write strictly forward, so their "file" can be a
// handler of ours: GDAL opens "/vsigeolake_stream/<target>-<serial>/<name>", where <target>
// is the address of the StreamTarget below in hex, and every byte goes through StreamTarget::Write,
// which checks it. The handler is installed once per process; each writer owns its target.

// GDAL keeps the prefix's pointer, not a copy: it must be static storage.
constexpr char kStreamPrefixText[] = "/vsigeolake_stream/";
constexpr std::string_view kStreamPrefix = kStreamPrefixText;

struct StreamTarget {
  std::unique_ptr<io::OutputStream> stream;  // null: standard output
  Status error;                              // the first failure; later writes are refused
  std::uint64_t offset = 0;
  bool opened = false;

  std::size_t Write(const void* data, std::size_t size, std::size_t count) {
    if (!error.ok()) return 0;
    const std::size_t bytes = size * count;
    if (stream != nullptr) {
      error = stream->Write(std::string_view(static_cast<const char*>(data), bytes));
    } else if (std::fwrite(data, 1, bytes, stdout) != bytes) {
      error = Status::IOError(std::string("write stdout: ") + std::strerror(errno));
    }
    if (!error.ok()) return 0;
    offset += bytes;
    return count;
  }

  int Flush() {
    if (error.ok() && stream == nullptr && std::fflush(stdout) != 0) {
      error = Status::IOError(std::string("flush stdout: ") + std::strerror(errno));
    }
    return error.ok() ? 0 : -1;
  }
};

StreamTarget* AsTarget(void* handle) { return static_cast<StreamTarget*>(handle); }

int StreamStat(void*, const char*, VSIStatBufL*, int) { return -1; }  // never "exists"

void* StreamOpen(void*, const char* name, const char* access) {
  // GDAL passes the name without the prefix (some versions with it): "<hex>/<file name>".
  std::string_view rest(name);
  if (rest.starts_with(kStreamPrefix)) rest.remove_prefix(kStreamPrefix.size());
  if (access == nullptr || access[0] != 'w') return nullptr;  // write-only, from the start
  const std::string hex(rest.substr(0, rest.find_first_of("-/")));
  char* end = nullptr;
  const unsigned long long address = std::strtoull(hex.c_str(), &end, 16);
  if (hex.empty() || *end != '\0' || address == 0) return nullptr;
  // Only this file builds such names, from a live StreamTarget (GdalWriter::Create).
  auto* target = reinterpret_cast<StreamTarget*>(  // NOLINT(performance-no-int-to-ptr)
      static_cast<std::uintptr_t>(address));
  if (target->opened) return nullptr;
  target->opened = true;
  return target;
}

vsi_l_offset StreamTell(void* handle) { return AsTarget(handle)->offset; }

int StreamSeek(void* handle, vsi_l_offset offset, int whence) {
  StreamTarget* t = AsTarget(handle);
  // Where the stream already is: fine. Anywhere else cannot be honoured by a forward stream.
  if ((whence == SEEK_SET && offset == t->offset) || (whence != SEEK_SET && offset == 0)) {
    return 0;
  }
  if (t->error.ok()) t->error = Status::Internal("GDAL seeks in a forward-only output");
  return -1;
}

std::size_t StreamRead(void*, void*, std::size_t, std::size_t) { return 0; }
int StreamEof(void*) { return 0; }
std::size_t StreamWrite(void* handle, const void* data, std::size_t size, std::size_t count) {
  return AsTarget(handle)->Write(data, size, count);
}
int StreamFlush(void* handle) { return AsTarget(handle)->Flush(); }
int StreamTruncate(void* handle, vsi_l_offset size) {
  return size == AsTarget(handle)->offset ? 0 : -1;
}
int StreamClose(void* handle) { return AsTarget(handle)->error.ok() ? 0 : -1; }

Status InstallStreamHandler() {
  static const bool installed = [] {
    VSIFilesystemPluginCallbacksStruct* cb = gdal::VSIAllocFilesystemPluginCallbacksStruct();
    if (cb == nullptr) return false;
    cb->stat = StreamStat;
    cb->open = StreamOpen;
    cb->tell = StreamTell;
    cb->seek = StreamSeek;
    cb->read = StreamRead;
    cb->eof = StreamEof;
    cb->write = StreamWrite;
    cb->flush = StreamFlush;
    cb->truncate = StreamTruncate;
    cb->close = StreamClose;
    // The handler keeps a copy of the callbacks (GDAL's plugin handler copies the struct), so
    // ours is freed once it is installed; the handler lives as long as the process.
    const bool ok = gdal::VSIInstallPluginHandler(kStreamPrefixText, cb) == 0;
    gdal::VSIFreeFilesystemPluginCallbacksStruct(cb);
    return ok;
  }();
  if (!installed) return Status::Internal("GDAL: cannot install the output stream handler");
  return Status::OK();
}

bool IsSequentialDriver(std::string_view driver) {
  return driver == "GeoJSON" || driver == "GeoJSONSeq";
}

// The file a seeking driver writes for `path`: the target of a symlink (the link stays);
// kInvalidArgument for a directory, FIFO or device.
Result<std::string> SeekableTarget(const std::string& path, const std::string& driver) {
  std::filesystem::path p(path);
  std::error_code ec;
  for (int hop = 0; hop < 40; ++hop) {
    const auto status = std::filesystem::symlink_status(p, ec);
    if (ec || status.type() == std::filesystem::file_type::not_found) return p.string();
    if (status.type() == std::filesystem::file_type::regular) return p.string();
    if (status.type() != std::filesystem::file_type::symlink) {
      return Status::InvalidArgument(
          fmt::format("{}: not a regular file ({} writes a file it can seek in; a FIFO or a "
                      "device can take GeoJSON, GeoJSONSeq or CSV)",
                      path, driver));
    }
    const std::filesystem::path link = std::filesystem::read_symlink(p, ec);
    if (ec) return Status::IOError(path + ": read link: " + ec.message());
    p = link.is_absolute() ? link : p.parent_path() / link;
  }
  return Status::IOError(path + ": too many levels of symbolic links");
}

}  // namespace

struct GdalWriter::State {
  std::string driver;
  std::string path;                        // as given, for messages
  std::string final_path;                  // seeking drivers: the file Finish renames `temp` to
  std::string temp;                        // seeking drivers: GDAL's file until Finish renames it
  std::unique_ptr<StreamTarget> target;    // sequential drivers: where their bytes go
  std::optional<gdal::QuietErrors> quiet;  // GDAL's messages come back in errors
  GDALDatasetH dataset = nullptr;
  OGRLayerH layer = nullptr;
  bool in_transaction = false;
  bool done = false;

  std::string path_or_stdout() const { return path.empty() ? "stdout" : path; }
};

GdalWriter::GdalWriter(std::unique_ptr<State> state) : state_(std::move(state)) {}

GdalWriter::~GdalWriter() {
  if (state_->dataset != nullptr) gdal::GDALClose(state_->dataset);
  if (!state_->temp.empty() && !state_->done) {
    std::error_code ec;
    std::filesystem::remove(state_->temp, ec);
  }
  // An unfinished target's stream goes with it, and with the stream its temporary file.
}

Status GdalWriter::Fail(const std::string& what) const {
  return Status::IOError(fmt::format("{} ({}): {}: {}", state_->path_or_stdout(), state_->driver,
                                     what, gdal::QuietErrors::LastMessage()));
}

Result<std::unique_ptr<GdalWriter>> GdalWriter::Create(
    const std::string& driver_name, const std::string& path, const std::string& layer_name,
    const std::vector<geoparquet::FieldDef>& fields, const std::string& crs, const io::FileIO& io) {
  GEOLAKE_RETURN_NOT_OK(gdal::Load().status());
  auto state = std::make_unique<State>();
  state->driver = driver_name;
  state->path = path;
  state->quiet.emplace();
  std::unique_ptr<GdalWriter> writer(new GdalWriter(std::move(state)));
  State& s = *writer->state_;
  GDALDriverH driver = gdal::GDALGetDriverByName(driver_name.c_str());
  if (driver == nullptr) return Status::NotImplemented("GDAL has no " + driver_name + " driver");
  std::string target;
  if (IsSequentialDriver(driver_name)) {
    GEOLAKE_RETURN_NOT_OK(InstallStreamHandler());
    s.target = std::make_unique<StreamTarget>();
    if (!path.empty()) {
      GEOLAKE_ASSIGN_OR_RETURN(s.target->stream, io.OpenWrite(path, /*overwrite=*/true));
    }
    // A serial number keeps names unique when a later target reuses an address.
    static std::atomic<std::uint64_t> serial{0};
    target = fmt::format(
        "{}{:x}-{}/{}", kStreamPrefix, reinterpret_cast<std::uintptr_t>(s.target.get()),
        serial.fetch_add(1),
        path.empty() ? std::string("stdout") : std::filesystem::path(path).filename().string());
  } else if (path.empty()) {
    target = "/vsistdout/";
  } else {
    // Written under a temporary name beside the file it replaces, renamed when complete.
    GEOLAKE_ASSIGN_OR_RETURN(std::string real_path, SeekableTarget(path, driver_name));
    s.final_path = real_path;
    const std::filesystem::path p(real_path);
    // The driver may go by the extension (FlatGeobuf makes a directory without one), so the
    // temporary name keeps it.
    s.temp = (p.parent_path() / ("." + p.filename().string() + "." + std::to_string(::getpid()) +
                                 ".geolake-tmp" + p.extension().string()))
                 .string();
    target = s.temp;
  }
  s.dataset = gdal::GDALCreate(driver, target.c_str(), 0, 0, 0, GDT_Unknown, nullptr);
  if (s.dataset == nullptr) return writer->Fail("cannot create");
  OGRSpatialReferenceH srs = nullptr;
  if (!crs.empty()) {
    srs = gdal::OSRNewSpatialReference(nullptr);
    gdal::OSRSetAxisMappingStrategy(srs, OAMS_TRADITIONAL_GIS_ORDER);
    if (gdal::OSRSetFromUserInput(srs, crs.c_str()) != OGRERR_NONE) {
      gdal::OSRDestroySpatialReference(srs);
      srs = nullptr;
    }
  }
  // GeoJSON: 17 significant digits, so doubles round-trip (GDAL keeps 7 decimals by default).
  const char* options[] = {nullptr, nullptr, nullptr};
  if (driver_name == "GeoJSON" || driver_name == "GeoJSONSeq") {
    options[0] = "SIGNIFICANT_FIGURES=17";
  }
  if (driver_name == "GeoJSON") options[1] = "RFC7946=NO";
  s.layer = gdal::GDALDatasetCreateLayer(s.dataset, layer_name.c_str(), srs, wkbUnknown,
                                         const_cast<char**>(options));
  if (srs != nullptr) gdal::OSRDestroySpatialReference(srs);
  if (s.layer == nullptr) return writer->Fail("cannot create layer");
  for (const geoparquet::FieldDef& f : fields) {
    OGRFieldType type = OFTString;
    OGRFieldSubType sub = OFSTNone;
    switch (f.type) {
      case FieldType::kBool:
        type = OFTInteger;
        sub = OFSTBoolean;
        break;
      case FieldType::kInt64:
        type = OFTInteger64;
        break;
      case FieldType::kDouble:
        type = OFTReal;
        break;
      case FieldType::kString:
        type = OFTString;
        break;
      case FieldType::kBinary:
        type = OFTBinary;
        break;
      case FieldType::kDate:
        type = OFTDate;
        break;
      case FieldType::kTimestamp:
        type = OFTDateTime;
        break;
    }
    OGRFieldDefnH defn = gdal::OGR_Fld_Create(f.name.c_str(), type);
    gdal::OGR_Fld_SetSubType(defn, sub);
    const OGRErr err = gdal::OGR_L_CreateField(s.layer, defn, TRUE);
    gdal::OGR_Fld_Destroy(defn);
    if (err != OGRERR_NONE) return writer->Fail("cannot create field '" + f.name + "'");
  }
  if (gdal::GDALDatasetStartTransaction(s.dataset, FALSE) == OGRERR_NONE) s.in_transaction = true;
  return writer;
}

Status GdalWriter::Write(const geoparquet::FeatureBatch& rows, const std::stop_token& stop) {
  State& s = *state_;
  OGRFeatureDefnH defn = gdal::OGR_L_GetLayerDefn(s.layer);
  for (std::int64_t r = 0; r < rows.num_rows(); ++r) {
    if (r % 1024 == 0 && stop.stop_requested()) {
      return Status::Cancelled(s.path_or_stdout() + ": stopped while writing");
    }
    const auto row = static_cast<std::size_t>(r);
    OGRFeatureH feature = gdal::OGR_F_Create(defn);
    for (std::size_t j = 0; j < rows.columns.size(); ++j) {
      const geoparquet::Column& c = rows.columns[j];
      const int i = static_cast<int>(j);
      if (!c.valid[row]) {
        gdal::OGR_F_SetFieldNull(feature, i);
        continue;
      }
      switch (c.type) {
        case FieldType::kBool:
          gdal::OGR_F_SetFieldInteger(feature, i, c.ints[row] ? 1 : 0);
          break;
        case FieldType::kInt64:
          gdal::OGR_F_SetFieldInteger64(feature, i, c.ints[row]);
          break;
        case FieldType::kDouble:
          gdal::OGR_F_SetFieldDouble(feature, i, c.doubles[row]);
          break;
        case FieldType::kString:
          gdal::OGR_F_SetFieldString(feature, i, std::string(c.StringAt(row)).c_str());
          break;
        case FieldType::kBinary: {
          const std::string_view b = c.StringAt(row);
          gdal::OGR_F_SetFieldBinary(feature, i, static_cast<int>(b.size()),
                                     reinterpret_cast<const GByte*>(b.data()));
          break;
        }
        case FieldType::kDate:
        case FieldType::kTimestamp: {
          const std::string t = c.type == FieldType::kDate ? CivilDateText(c.ints[row])
                                                           : TimestampMicrosText(c.ints[row]);
          gdal::OGR_F_SetFieldString(feature, i, t.c_str());
          break;
        }
      }
    }
    if (rows.geometry_valid[row]) {
      const auto wkb = rows.GeometryAt(row);
      OGRGeometryH geom = nullptr;
      if (gdal::OGR_G_CreateFromWkbEx(wkb.data(), nullptr, &geom, wkb.size()) != OGRERR_NONE) {
        gdal::OGR_F_Destroy(feature);
        return Status::CorruptData(fmt::format("{}: row {}: GDAL refused the WKB",
                                               s.path_or_stdout(), rows.feature_index[row]));
      }
      gdal::OGR_F_SetGeometryDirectly(feature, geom);
    }
    const OGRErr err = gdal::OGR_L_CreateFeature(s.layer, feature);
    gdal::OGR_F_Destroy(feature);
    if (err != OGRERR_NONE) return Fail("cannot write a feature");
    if (s.target != nullptr && !s.target->error.ok()) return StreamError();
  }
  return Status::OK();
}

Status GdalWriter::StreamError() const {
  return state_->target->error.WithContext(
      fmt::format("{} ({})", state_->path_or_stdout(), state_->driver));
}

Status GdalWriter::Finish() {
  State& s = *state_;
  if (s.in_transaction && gdal::GDALDatasetCommitTransaction(s.dataset) != OGRERR_NONE) {
    return Fail("commit failed");
  }
  gdal::GDALClose(s.dataset);
  s.dataset = nullptr;
  if (s.target != nullptr) {
    // GDAL wrote the last bytes while closing: a failure there is the stream's error.
    if (!s.target->error.ok() || s.target->Flush() != 0) return StreamError();
    if (gdal::CPLGetLastErrorType() >= CE_Failure) return Fail("close failed");
    if (s.target->stream != nullptr) {
      GEOLAKE_RETURN_NOT_OK(s.target->stream->Close().WithContext(
          fmt::format("{} ({})", s.path_or_stdout(), s.driver)));
    }
    s.done = true;
    return Status::OK();
  }
  if (gdal::CPLGetLastErrorType() >= CE_Failure) return Fail("close failed");
  if (!s.temp.empty()) {
    std::error_code ec;
    std::filesystem::rename(s.temp, s.final_path, ec);
    if (ec) return Status::IOError(s.path + ": " + ec.message());
  } else {
    std::fflush(stdout);
  }
  s.done = true;
  return Status::OK();
}

}  // namespace geolake::sources
