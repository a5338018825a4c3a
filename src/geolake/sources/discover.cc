#include "geolake/sources/discover.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <glob.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <set>
#include <string_view>
#include <system_error>
#include <utility>

#include "geolake/core/logging.h"
#include "geolake/core/thread_pool.h"
#include "geolake/core/utf8.h"
#include "geolake/geo/crs.h"
#include "geolake/sources/gdal_source.h"
#include "geolake/sources/geoparquet_source.h"
#include "geolake/sources/gpkg_source.h"
#include "geolake/sources/native_discover.h"

namespace geolake::sources {
namespace {

namespace fs = std::filesystem;

// The fingerprint hashes this much at each end of a file: enough to see any rewrite of a
// header or a trailer (Parquet footer, GeoPackage header page, FlatGeobuf index), cheap enough
// (2 reads) to run over thousands of files.
constexpr std::int64_t kHashBlockBytes = std::int64_t{64} * 1024;

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool EndsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// Files that are never a source of their own: hidden files, our own temporaries and the
// sidecars of formats whose main file is read instead (Shapefile's .shx/.dbf/..., SQLite's
// journals, GDAL's .aux.xml).
bool IsSkippedFileName(std::string_view name) {
  if (name.empty() || name.front() == '.') return true;
  const std::string lower = Lower(name);
  static constexpr std::array<std::string_view, 17> kSkippedSuffixes = {
      ".geolake-tmp", ".shx",     ".dbf", ".prj",  ".cpg", ".qix", ".sbn",     ".sbx", ".qpj",
      ".aux.xml",     ".shp.xml", ".ovr", ".lock", "-wal", "-shm", "-journal", ".crc"};
  for (std::string_view suffix : kSkippedSuffixes) {
    if (EndsWith(lower, suffix)) return true;
  }
  return false;
}

bool HasGlobChars(std::string_view spec) {
  return spec.find_first_of("*?[") != std::string_view::npos;
}

std::string Normalize(const std::string& path) {
  std::error_code ec;
  fs::path abs = fs::absolute(path, ec);
  if (ec) return path;
  return abs.lexically_normal().string();
}

// A candidate file and whether the user named it (directly or by a glob): a named file that
// is not a vector source is an error, one found in a folder walk is skipped.
struct Candidate {
  std::string path;
  bool named = false;
};

Status WalkFolder(const std::string& root, std::vector<Candidate>* out) {
  std::error_code ec;
  fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec);
  if (ec) return Status::IOError("folder '" + root + "': " + ec.message());
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) return Status::IOError("folder '" + root + "': " + ec.message());
    const std::string name = it->path().filename().string();
    if (it->is_directory(ec)) {
      if (!name.empty() && name.front() == '.') it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file(ec) || IsSkippedFileName(name)) continue;
    out->push_back({Normalize(it->path().string()), false});
  }
  return Status::OK();
}

Status ExpandSpec(const std::string& spec, std::vector<Candidate>* out) {
  if (spec.empty()) return Status::InvalidArgument("empty source path");
  // GDAL virtual file systems (/vsizip/, /vsicurl/, ...) are passed through untouched.
  if (spec.rfind("/vsi", 0) == 0) {
    out->push_back({spec, true});
    return Status::OK();
  }
  std::error_code ec;
  if (fs::is_directory(spec, ec)) {
    const std::size_t before = out->size();
    GEOLAKE_RETURN_NOT_OK(WalkFolder(spec, out));
    if (out->size() == before) return Status::NotFound("folder '" + spec + "': no files in it");
    return Status::OK();
  }
  if (fs::exists(spec, ec)) {
    out->push_back({Normalize(spec), true});
    return Status::OK();
  }
  if (!HasGlobChars(spec)) return Status::NotFound("source '" + spec + "': no such file");
  glob_t matches{};
  const int rc = ::glob(spec.c_str(), GLOB_NOSORT, nullptr, &matches);
  if (rc == GLOB_NOMATCH) {
    ::globfree(&matches);
    return Status::NotFound("source '" + spec + "': the pattern matches no file");
  }
  if (rc != 0) {
    ::globfree(&matches);
    return Status::IOError("source '" + spec + "': glob failed");
  }
  const std::size_t before = out->size();
  Status status;
  for (std::size_t i = 0; i < matches.gl_pathc && status.ok(); ++i) {
    const std::string match = matches.gl_pathv[i];
    if (fs::is_directory(match, ec)) {
      status = WalkFolder(match, out);
    } else if (!IsSkippedFileName(fs::path(match).filename().string())) {
      out->push_back({Normalize(match), true});
    }
  }
  ::globfree(&matches);
  GEOLAKE_RETURN_NOT_OK(status);
  if (out->size() == before) {
    return Status::NotFound("source '" + spec + "': the pattern matches only skipped files");
  }
  return Status::OK();
}

Status DiscoverGeoParquet(const Candidate& candidate, const SourceFingerprint& fingerprint,
                          const DiscoverOptions& options, std::vector<DiscoveredSource>* out) {
  GEOLAKE_ASSIGN_OR_RETURN(auto source, GeoParquetSource::Open(candidate.path));
  DiscoveredSource found;
  found.path = candidate.path;
  found.driver = kGeoParquetDriver;
  found.fingerprint = fingerprint;
  found.fields = source->fields();
  found.crs_projjson = source->crs_projjson();
  found.crs_authority = source->crs_authority();
  found.feature_count = source->num_rows();
  // Whole row groups per unit: about unit_rows rows, never a row group split.
  std::int64_t first_row = 0;
  std::int64_t unit_rows = 0;
  auto flush = [&](bool last) {
    SourceUnit unit;
    unit.path = found.path;
    unit.driver = found.driver;
    unit.index = static_cast<std::int64_t>(found.units.size());
    unit.first_row = first_row;
    unit.row_count = last ? -1 : unit_rows;
    found.units.push_back(std::move(unit));
    first_row += unit_rows;
    unit_rows = 0;
  };
  const int groups = source->num_row_groups();
  for (int rg = 0; rg < groups; ++rg) {
    unit_rows += source->row_group_rows(rg);
    if (unit_rows >= options.unit_rows && rg + 1 < groups) flush(false);
  }
  flush(true);
  out->push_back(std::move(found));
  return Status::OK();
}

// A GeoPackage (by its bytes) is described with SQLite alone (GpkgSource::Describe), so that
// discovering it never loads GDAL (~70 ms of shared libraries and ~20 ms of opening); what the
// native description refuses (kNotImplemented) GDAL describes, as for every other format.
Result<std::vector<std::string>> ListLayers(const std::string& path, bool native) {
  if (native) {
    auto names = GpkgSource::LayerNames(path);
    if (names.ok() || names.status().code() != ErrorCode::kNotImplemented) return names;
    GEOLAKE_LOG_DEBUG("discover: {}", names.status().message());
  }
  return GdalSource::LayerNames(path);
}

// A field name in an undeclared code page (a Latin-1 CSV header, a DBF without .cpg) would
// become a column name that is not UTF-8, which Iceberg's JSON and Parquet's schema cannot
// hold: its invalid bytes are replaced by U+FFFD, with a warning.
void ReplaceInvalidFieldNames(const std::string& path, std::vector<geoparquet::FieldDef>* fields) {
  for (geoparquet::FieldDef& field : *fields) {
    if (IsValidUtf8(field.name)) continue;
    std::string replaced = ReplaceInvalidUtf8(field.name);
    Log(LogLevel::kWarn,
        "source '{}': field name '{}' is not valid UTF-8; it is read as '{}' (invalid bytes "
        "replaced by U+FFFD)",
        path, EscapeForMessage(field.name), replaced);
    field.name = std::move(replaced);
  }
}

Result<SourceInfo> DescribeLayerOf(const std::string& path, const std::string& layer, bool native,
                                   geo::GdalProjjsonCache* crs_cache) {
  if (native) {
    auto info = GpkgSource::Describe(path, layer, crs_cache);
    if (info.ok() || info.status().code() != ErrorCode::kNotImplemented) return info;
    GEOLAKE_LOG_DEBUG("discover: {}", info.status().message());
  }
  GEOLAKE_ASSIGN_OR_RETURN(auto opened, GdalSource::Open(path, layer));
  return opened->info();
}

bool DescribeNatively(const std::string& path, const DiscoverOptions& options) {
  return options.native_gpkg && path.rfind("/vsi", 0) != 0 && GpkgSource::IsGeoPackageFile(path);
}

Status DiscoverGdal(const Candidate& candidate, const SourceFingerprint& fingerprint,
                    const DiscoverOptions& options, geo::GdalProjjsonCache* crs_cache,
                    std::vector<DiscoveredSource>* out) {
  const bool native = DescribeNatively(candidate.path, options);
  std::vector<std::string> layers;
  if (!options.layer.empty()) {
    layers.push_back(options.layer);
  } else if (options.all_layers) {
    GEOLAKE_ASSIGN_OR_RETURN(layers, ListLayers(candidate.path, native));
  } else {
    layers.emplace_back();
  }
  for (const std::string& layer : layers) {
    GEOLAKE_ASSIGN_OR_RETURN(const SourceInfo info,
                             DescribeLayerOf(candidate.path, layer, native, crs_cache));
    DiscoveredSource found;
    found.path = candidate.path;
    found.layer = info.layer;
    found.driver = info.driver;
    found.fingerprint = fingerprint;
    found.fields = info.fields;
    found.crs_projjson = info.crs_projjson;
    found.crs_authority = info.crs_authority;
    found.feature_count = info.feature_count;
    const bool cut = info.fast_seek && info.feature_count > options.unit_rows;
    found.units = internal::CutRanges(found.path, found.layer, found.driver,
                                      cut ? info.feature_count : 0, options.unit_rows);
    const auto shared_info =
        info.driver == "GPKG" ? std::make_shared<const SourceInfo>(info) : nullptr;
    for (SourceUnit& unit : found.units) {
      unit.native_gpkg = options.native_gpkg;
      unit.gdal_info = shared_info;
    }
    out->push_back(std::move(found));
  }
  return Status::OK();
}

// Bytes of a file, or of the regular files below a folder (hidden files and folders skipped);
// 0 for what cannot be read.
std::int64_t PathBytes(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(path, ec)) {
    const std::uintmax_t size = fs::file_size(path, ec);
    return ec ? 0 : static_cast<std::int64_t>(size);
  }
  std::int64_t total = 0;
  fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const bool hidden = !name.empty() && name.front() == '.';
    std::error_code entry_ec;
    if (it->is_directory(entry_ec)) {
      if (hidden) it.disable_recursion_pending();
      continue;
    }
    if (hidden || !it->is_regular_file(entry_ec)) continue;
    const std::uintmax_t size = it->file_size(entry_ec);
    if (!entry_ec) total += static_cast<std::int64_t>(size);
  }
  return total;
}

}  // namespace

Result<SourceInfo> DescribeLayer(const std::string& path, const std::string& layer) {
  if (path.rfind("/vsi", 0) != 0 && IsParquetFile(path)) {
    // Our own reader, as ingest reads it: GDAL has no Parquet driver in Debian 12's build.
    if (!layer.empty()) {
      return Status::NotFound("GeoParquet '" + path + "': no layer named '" + layer +
                              "' (a GeoParquet file has one unnamed layer)");
    }
    GEOLAKE_ASSIGN_OR_RETURN(auto source, GeoParquetSource::Open(path));
    SourceInfo info;
    info.path = path;
    info.driver = kGeoParquetDriver;
    info.feature_count = source->num_rows();
    info.fields = source->fields();
    info.crs_projjson = source->crs_projjson();
    info.crs_authority = source->crs_authority();
    return info;
  }
  GEOLAKE_ASSIGN_OR_RETURN(
      SourceInfo info,
      DescribeLayerOf(path, layer, DescribeNatively(path, DiscoverOptions{}), nullptr));
  ReplaceInvalidFieldNames(path, &info.fields);
  return info;
}

bool IsParquetFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char magic[4] = {};
  const ssize_t got = ::pread(fd, magic, sizeof(magic), 0);
  ::close(fd);
  return got == 4 && std::memcmp(magic, "PAR1", 4) == 0;
}

std::int64_t InputBytes(const std::vector<std::string>& specs) {
  std::int64_t total = 0;
  for (const std::string& spec : specs) {
    if (spec.empty() || spec.rfind("/vsi", 0) == 0) continue;
    std::error_code ec;
    if (std::filesystem::exists(spec, ec)) {
      total += PathBytes(spec);
      continue;
    }
    glob_t matches{};
    if (::glob(spec.c_str(), GLOB_NOSORT, nullptr, &matches) == 0) {
      for (std::size_t i = 0; i < matches.gl_pathc; ++i) total += PathBytes(matches.gl_pathv[i]);
    }
    ::globfree(&matches);
  }
  return total;
}

std::string SourceFingerprint::ToString() const {
  return fmt::format("xxh3:{:016x}:{}:{}", hash, size, path);
}

std::string ShardKey(const SourceFingerprint& source, std::int64_t unit_index) {
  // A GDAL virtual path is not read for a fingerprint: its path is all there is.
  if (source.hash == 0 && source.size == 0) return fmt::format("{}#{}", source.path, unit_index);
  return fmt::format("xxh3:{:016x}:{}#{}", source.hash, source.size, unit_index);
}

Result<SourceFingerprint> FingerprintFile(const std::string& path) {
  SourceFingerprint fp;
  fp.path = path.rfind("/vsi", 0) == 0 ? path : Normalize(path);
  const int fd = ::open(fp.path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) return Status::NotFound("source '" + path + "': no such file");
    return Status::IOError("source '" + path + "': " + std::strerror(err));
  }
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) return Status::IOError("source '" + path + "': cannot stat");
  fp.size = static_cast<std::int64_t>(st.st_size);
  fp.mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;

  // Read [0, 64 KiB) and [size - 64 KiB, size), overlapping ranges merged.
  std::string buffer;
  auto read_range = [&](std::int64_t offset, std::int64_t length) -> Status {
    buffer.resize(static_cast<std::size_t>(length));
    std::int64_t done = 0;
    while (done < length) {
      const ssize_t got =
          ::pread(fd, buffer.data() + done, static_cast<std::size_t>(length - done), offset + done);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) return Status::IOError("source '" + path + "': short read for fingerprint");
      done += got;
    }
    return Status::OK();
  };
  XXH3_state_t* state = XXH3_createState();
  if (state == nullptr) return Status::Internal("xxhash: out of memory");
  struct StateFreer {
    XXH3_state_t* s;
    ~StateFreer() { XXH3_freeState(s); }
  } freer{state};
  XXH3_64bits_reset(state);
  const std::int64_t head = std::min(fp.size, kHashBlockBytes);
  GEOLAKE_RETURN_NOT_OK(read_range(0, head));
  XXH3_64bits_update(state, buffer.data(), buffer.size());
  const std::int64_t tail_begin = std::max(head, fp.size - kHashBlockBytes);
  if (tail_begin < fp.size) {
    GEOLAKE_RETURN_NOT_OK(read_range(tail_begin, fp.size - tail_begin));
    XXH3_64bits_update(state, buffer.data(), buffer.size());
  }
  fp.hash = XXH3_64bits_digest(state);
  return fp;
}

Result<std::vector<DiscoveredSource>> DiscoverSources(const std::vector<std::string>& specs,
                                                      const DiscoverOptions& options) {
  if (options.unit_rows <= 0) return Status::InvalidArgument("unit_rows must be positive");
  if (specs.empty()) return Status::InvalidArgument("no source given");
  std::vector<Candidate> candidates;
  for (const std::string& spec : specs) GEOLAKE_RETURN_NOT_OK(ExpandSpec(spec, &candidates));
  // Sorted by path; a file named by several specs once (named wins over found in a folder).
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Candidate& a, const Candidate& b) {
                     return a.path != b.path ? a.path < b.path : a.named > b.named;
                   });
  candidates.erase(
      std::unique(candidates.begin(), candidates.end(),
                  [](const Candidate& a, const Candidate& b) { return a.path == b.path; }),
      candidates.end());

  // Each candidate is described on its own (by several threads when asked); the results are
  // then judged in path order, as one thread would have met them.
  struct Described {
    Status fingerprint;  // an unreadable file stops discovery, named or not
    Status status;       // not a source (fatal only when named)
    std::vector<DiscoveredSource> sources;
  };
  std::vector<Described> described(candidates.size());
  // One CRS cache for the run: every GeoPackage described shares its PROJ context.
  std::unique_ptr<geo::GdalProjjsonCache> crs_cache;
  if (auto made = geo::GdalProjjsonCache::Make(); made.ok()) crs_cache = *std::move(made);
  const auto describe = [&](std::int64_t i) -> Status {
    if (options.stop.stop_requested()) return Status::Cancelled("discovery stopped");
    const Candidate& candidate = candidates[static_cast<std::size_t>(i)];
    Described& out = described[static_cast<std::size_t>(i)];
    SourceFingerprint fingerprint;
    if (candidate.path.rfind("/vsi", 0) == 0) {
      fingerprint.path = candidate.path;
    } else {
      Result<SourceFingerprint> fp = FingerprintFile(candidate.path);
      if (!fp.ok()) {
        out.fingerprint = fp.status();
        return Status::OK();
      }
      fingerprint = *std::move(fp);
    }
    if (IsParquetFile(candidate.path)) {
      out.status = DiscoverGeoParquet(candidate, fingerprint, options, &out.sources);
      return Status::OK();
    }
    // FlatGeobuf and GeoJSONSeq: geolake's own readers cut them into units; what they refuse
    // (kNotImplemented) GDAL reads as one unit.
    out.status = Status::NotImplemented("");
    switch (internal::NativeStreamOf(candidate.path, options)) {
      case internal::NativeStream::kFlatGeobuf:
        out.status =
            internal::DiscoverFlatGeobuf(candidate.path, fingerprint, options, &out.sources);
        break;
      case internal::NativeStream::kGeoJsonSeq:
        out.status = internal::DiscoverGeoJsonSeq(candidate.path, fingerprint, options,
                                                  options.executor, &out.sources);
        break;
      case internal::NativeStream::kGeoJson:
        out.status =
            internal::DiscoverGeoJsonSeq(candidate.path, fingerprint, options, options.executor,
                                         &out.sources, /*feature_collection=*/true);
        break;
      case internal::NativeStream::kNone:
        break;
    }
    if (out.status.code() == ErrorCode::kNotImplemented) {
      if (!out.status.message().empty()) GEOLAKE_LOG_DEBUG("discover: {}", out.status.message());
      out.sources.clear();
      out.status = DiscoverGdal(candidate, fingerprint, options, crs_cache.get(), &out.sources);
    }
    return Status::OK();
  };
  if (options.executor != nullptr && options.executor->size() > 1 && candidates.size() > 1) {
    GEOLAKE_RETURN_NOT_OK(
        options.executor->ParallelFor(static_cast<std::int64_t>(candidates.size()), describe));
  } else {
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      GEOLAKE_RETURN_NOT_OK(describe(static_cast<std::int64_t>(i)));
    }
  }

  std::vector<DiscoveredSource> sources;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const Candidate& candidate = candidates[i];
    Described& result = described[i];
    GEOLAKE_RETURN_NOT_OK(result.fingerprint);
    const Status& status = result.status;
    if (status.code() == ErrorCode::kCancelled) return status;
    if (status.ok()) {
      for (DiscoveredSource& source : result.sources) {
        ReplaceInvalidFieldNames(source.path, &source.fields);
        sources.push_back(std::move(source));
      }
      continue;
    }
    if (candidate.named) {
      // GDAL's "cannot open" is kNotFound; for a file that exists it means "not a source".
      if (status.code() == ErrorCode::kNotFound &&
          status.message().find("no layer named") == std::string::npos) {
        return Status::InvalidArgument(status.message() + " (not a vector source)");
      }
      return status;
    }
    // A file of a known format that is damaged (a truncated GeoPackage) is not "some other
    // file in the folder": skipping it would drop its rows without a word.
    if (status.code() == ErrorCode::kCorruptData) return status;
    GEOLAKE_LOG_DEBUG("discover: skipping '{}': {}", candidate.path, status.message());
  }
  if (sources.empty()) {
    return Status::NotFound("no vector source among " + std::to_string(candidates.size()) +
                            " file(s) found for the given source(s)");
  }
  return sources;
}

}  // namespace geolake::sources
