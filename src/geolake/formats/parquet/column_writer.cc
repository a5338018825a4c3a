#include "geolake/formats/parquet/column_writer.h"

#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <deque>
#include <exception>
#include <map>
#include <set>
#include <string>

#include "geolake/formats/parquet/encoding.h"
#include "geolake/formats/parquet/geospatial_statistics.h"

namespace geolake::parquet {

bool WriterSupportsEncoding(PhysicalType type, Encoding encoding) {
  switch (encoding) {
    case Encoding::kPlain:
      return type != PhysicalType::kInt96;
    case Encoding::kDeltaBinaryPacked:
      return type == PhysicalType::kInt32 || type == PhysicalType::kInt64;
    case Encoding::kByteStreamSplit:
      return type == PhysicalType::kFloat || type == PhysicalType::kDouble ||
             type == PhysicalType::kInt32 || type == PhysicalType::kInt64;
    case Encoding::kDeltaLengthByteArray:
    case Encoding::kDeltaByteArray:
      return type == PhysicalType::kByteArray;
    default:
      return false;
  }
}

namespace {

// Rows appended to a page between two page-size checks. Small for binary columns, whose
// values (WKB geometries) can be large, so pages stay near the target size.
constexpr std::int64_t kCheckEveryRowsFixed = 1024;
constexpr std::int64_t kCheckEveryRowsBinary = 64;
// Values dictionary-encoded before the writer judges whether the dictionary pays off.
constexpr std::int64_t kDictionaryProbeValues = 4096;

bool IsGeospatial(const LeafColumn& leaf) {
  return leaf.logical_type.has_value() &&
         (leaf.logical_type->kind == LogicalType::Kind::kGeometry ||
          leaf.logical_type->kind == LogicalType::Kind::kGeography);
}

// Sorted integers (ids, times of an ordered log) take a few bits per value as
// DELTA_BINARY_PACKED instead of 4 or 8 bytes as PLAIN, which also leaves the codec little to
// do. Appends the encoding of `values` to `*body` and returns true when they are sorted either
// way and the result is at most half of PLAIN; otherwise leaves `*body` as it was.
template <typename T>
bool EncodeDeltaIfSorted(const std::vector<T>& values, std::string* body) {
  if (values.size() < 2) return false;
  bool ascending = true;
  bool descending = true;
  for (std::size_t i = 1; i < values.size(); ++i) {
    ascending = ascending && values[i - 1] <= values[i];
    descending = descending && values[i - 1] >= values[i];
    if (!ascending && !descending) return false;
  }
  const std::size_t base = body->size();
  EncodeDeltaBinaryPacked(values.data(), values.size(), body);
  if ((body->size() - base) * 2 <= values.size() * sizeof(T)) return true;
  body->resize(base);
  return false;
}

// More than any page header this writer makes can take: no statistics in headers, and at most
// ten integer fields of at most five bytes (varint) each plus their field headers.
constexpr std::int64_t kPageHeaderBoundBytes = 128;

struct PageIndexEntry {
  bool null_page = false;
  bool has_bounds = false;
  std::string min;
  std::string max;
  std::int64_t null_count = 0;
};

}  // namespace

class ColumnChunkWriter::Impl {
 public:
  Impl(const LeafColumn& leaf, ColumnWriteOptions options, ThreadPool* executor)
      : leaf_(leaf),
        options_(options),
        page_stats_(leaf),
        fixed_width_(leaf.physical_type == PhysicalType::kFixedLenByteArray ? leaf.type_length
                                                                            : -1),
        bytes_dict_(fixed_width_),
        compressor_(options_.codec, options_.compression),
        chunk_stats_(leaf) {
    page_values_ = ColumnData::ForLeaf(leaf_);
    page_values_.max_definition_level = 0;  // the page buffer holds values only
    if (executor != nullptr && executor->size() > 1 &&
        options_.codec != CompressionCodec::kUncompressed) {
      tasks_ = std::make_unique<TaskGroup>(executor);
    }
    Reset();
  }

  ~Impl() {
    // Queued tasks write into pending_: they end before it goes.
    if (tasks_ != nullptr) (void)tasks_->Wait();
  }

  void Reset() {
    use_dict_ = options_.dictionary && leaf_.physical_type != PhysicalType::kBoolean;
    dict_used_ = false;
    dict_values_ = 0;
    i32_dict_.Clear();
    i64_dict_.Clear();
    f32_dict_.Clear();
    f64_dict_.Clear();
    bytes_dict_.Clear();
    data_pieces_.clear();
    data_bytes_ = 0;
    pages_.clear();
    index_.clear();
    encodings_.clear();
    encoding_stats_.clear();
    total_uncompressed_ = 0;
    total_compressed_ = 0;
    num_levels_ = 0;
    rows_ = 0;
    chunk_stats_.Reset();
    geo_stats_.Reset();
    geo_valid_ = true;
    ClearPage();
  }

  Result<std::int64_t> Append(const ColumnData& col, std::int64_t level_begin,
                              std::int64_t level_end, std::int64_t value_begin) {
    const std::int16_t max_def = leaf_.max_definition_level;
    const bool is_binary = leaf_.physical_type == PhysicalType::kByteArray ||
                           leaf_.physical_type == PhysicalType::kFixedLenByteArray;
    const std::int64_t step = is_binary ? kCheckEveryRowsBinary : kCheckEveryRowsFixed;
    std::int64_t pos = level_begin;
    std::int64_t value = value_begin;
    while (pos < level_end) {
      const std::int64_t take =
          std::min({level_end - pos, options_.max_rows_per_page - page_rows_, step});
      std::int64_t defined = take;
      if (max_def > 0) {
        defined = 0;
        for (std::int64_t i = pos; i < pos + take; ++i) {
          const std::int16_t d = col.def_levels[i];
          defined += (d == max_def) ? 1 : 0;
          page_def_levels_.push_back(d);
        }
      }
      if (value + defined > col.num_values()) {
        return Status::InvalidArgument("column '" + leaf_.dotted_path() +
                                       "': definition levels promise more values than stored");
      }
      GEOLAKE_RETURN_NOT_OK(AppendValues(col, value, value + defined));
      page_stats_.AddNulls(take - defined);
      page_rows_ += take;
      rows_ += take;
      num_levels_ += take;
      pos += take;
      value += defined;

      if (use_dict_ && !dict_used_ && DictionaryUnprofitable()) {
        // No page refers to the dictionary yet: turn the open page's indices back into values
        // and write the whole chunk with the fallback encoding.
        AbandonDictionary();
      } else if (use_dict_ && DictionaryBytes() > options_.dictionary_page_size_limit) {
        // The dictionary grew too large: close this page with the indices it has and write
        // every later page of the chunk with the fallback encoding.
        GEOLAKE_RETURN_NOT_OK(FlushPage());
        use_dict_ = false;
      } else if (page_rows_ >= options_.max_rows_per_page ||
                 PageBytesEstimate() >= options_.data_page_size) {
        GEOLAKE_RETURN_NOT_OK(FlushPage());
      }
    }
    return value - value_begin;
  }

  std::int64_t BufferedBytes() const {
    return data_bytes_ + pending_bound_bytes_ + PageBytesEstimate() +
           (dict_used_ || use_dict_ ? DictionaryBytes() : 0);
  }

  // Wait for the pending pages and append them to the chunk.
  Status Settle() { return WaitPending(); }

  std::int64_t rows() const { return rows_; }

  Result<FinishedChunk> Finish() {
    GEOLAKE_RETURN_NOT_OK(FlushPage());
    GEOLAKE_RETURN_NOT_OK(WaitPending());
    FinishedChunk out{{}, ColumnMetaData(), {}, std::nullopt, rows_, chunk_stats_};
    ColumnMetaData& md = out.metadata;
    md.type = leaf_.physical_type;
    md.path_in_schema = leaf_.path;
    md.codec = options_.codec;
    md.num_values = num_levels_;

    std::int64_t dict_page_size = 0;
    if (dict_used_ && DictionarySize() > 0) {
      std::string body;
      WriteDictionary(&body);
      PageHeader header;
      header.type = PageType::kDictionaryPage;
      DictionaryPageHeader dph;
      dph.num_values = static_cast<std::int32_t>(DictionarySize());
      dph.encoding = Encoding::kPlain;
      header.dictionary_page_header = dph;
      GEOLAKE_RETURN_NOT_OK(CompressPage(std::string(), body));
      GEOLAKE_ASSIGN_OR_RETURN(std::string header_bytes,
                               StoredPageHeader(std::move(header), body.size(), compressed_));
      dict_page_size = static_cast<std::int64_t>(header_bytes.size() + compressed_.size());
      out.pieces.push_back(std::move(header_bytes));
      out.pieces.push_back(compressed_);
      encodings_.insert(Encoding::kPlain);
      encoding_stats_[{PageType::kDictionaryPage, Encoding::kPlain}] += 1;
      md.dictionary_page_offset = 0;
    }
    for (std::string& piece : data_pieces_) out.pieces.push_back(std::move(piece));
    md.data_page_offset = dict_page_size;
    md.total_uncompressed_size = total_uncompressed_;
    md.total_compressed_size = dict_page_size + data_bytes_;
    md.encodings.assign(encodings_.begin(), encodings_.end());
    for (const auto& [key, count] : encoding_stats_) {
      md.encoding_stats.push_back({key.first, key.second, count});
    }
    if (options_.write_statistics) {
      md.statistics = chunk_stats_.ToThrift(options_.max_statistics_bytes);
    }
    if (IsGeospatial(leaf_) && options_.write_geospatial_statistics && geo_valid_) {
      md.geospatial_statistics = geo_stats_.ToThrift();
    }

    out.pages = pages_;
    for (auto& p : out.pages) p.offset += dict_page_size;
    if (options_.write_page_index) out.column_index = BuildColumnIndex();
    Reset();
    return out;
  }

 private:
  std::int64_t DictionarySize() const {
    switch (leaf_.physical_type) {
      case PhysicalType::kInt32:
        return static_cast<std::int64_t>(i32_dict_.size());
      case PhysicalType::kInt64:
        return static_cast<std::int64_t>(i64_dict_.size());
      case PhysicalType::kFloat:
        return static_cast<std::int64_t>(f32_dict_.size());
      case PhysicalType::kDouble:
        return static_cast<std::int64_t>(f64_dict_.size());
      case PhysicalType::kByteArray:
      case PhysicalType::kFixedLenByteArray:
        return static_cast<std::int64_t>(bytes_dict_.size());
      default:
        return 0;
    }
  }

  std::int64_t DictionaryBytes() const {
    switch (leaf_.physical_type) {
      case PhysicalType::kInt32:
        return static_cast<std::int64_t>(i32_dict_.byte_size());
      case PhysicalType::kInt64:
        return static_cast<std::int64_t>(i64_dict_.byte_size());
      case PhysicalType::kFloat:
        return static_cast<std::int64_t>(f32_dict_.byte_size());
      case PhysicalType::kDouble:
        return static_cast<std::int64_t>(f64_dict_.byte_size());
      case PhysicalType::kByteArray:
      case PhysicalType::kFixedLenByteArray:
        return static_cast<std::int64_t>(bytes_dict_.byte_size());
      default:
        return 0;
    }
  }

  void WriteDictionary(std::string* out) const {
    switch (leaf_.physical_type) {
      case PhysicalType::kInt32:
        i32_dict_.WriteDictionaryPage(out);
        break;
      case PhysicalType::kInt64:
        i64_dict_.WriteDictionaryPage(out);
        break;
      case PhysicalType::kFloat:
        f32_dict_.WriteDictionaryPage(out);
        break;
      case PhysicalType::kDouble:
        f64_dict_.WriteDictionaryPage(out);
        break;
      case PhysicalType::kByteArray:
      case PhysicalType::kFixedLenByteArray:
        bytes_dict_.WriteDictionaryPage(out);
        break;
      default:
        break;
    }
  }

  // Mostly distinct values (ids, coordinates, WKB) gain nothing from a dictionary: the
  // dictionary page repeats the values, the indices come on top, and hashing costs more than
  // the rest of the write. Judged before any page refers to the dictionary: nearly all of the
  // first kDictionaryProbeValues values distinct, or more entries than half the chunk's rows.
  bool DictionaryUnprofitable() const {
    const auto seen = static_cast<std::int64_t>(page_indices_.size());
    const std::int64_t distinct = DictionarySize();
    if (seen >= kDictionaryProbeValues && distinct * 10 > seen * 9) return true;
    return options_.expected_chunk_rows > 0 && distinct * 2 > options_.expected_chunk_rows;
  }

  template <typename T>
  static void Materialize(const std::vector<T>& dict, const std::vector<std::uint32_t>& indices,
                          std::vector<T>* values) {
    values->reserve(values->size() + indices.size());
    for (const std::uint32_t idx : indices) values->push_back(dict[idx]);
  }

  void AbandonDictionary() {
    switch (leaf_.physical_type) {
      case PhysicalType::kInt32:
        Materialize(i32_dict_.values(), page_indices_, &page_values_.int32_values);
        break;
      case PhysicalType::kInt64:
        Materialize(i64_dict_.values(), page_indices_, &page_values_.int64_values);
        break;
      case PhysicalType::kFloat:
        Materialize(f32_dict_.values(), page_indices_, &page_values_.float_values);
        break;
      case PhysicalType::kDouble:
        Materialize(f64_dict_.values(), page_indices_, &page_values_.double_values);
        break;
      case PhysicalType::kByteArray:
      case PhysicalType::kFixedLenByteArray:
        for (const std::uint32_t idx : page_indices_)
          page_values_.AppendBytes(bytes_dict_.value(idx));
        break;
      default:
        break;
    }
    page_indices_.clear();
    i32_dict_.Clear();
    i64_dict_.Clear();
    f32_dict_.Clear();
    f64_dict_.Clear();
    bytes_dict_.Clear();
    use_dict_ = false;
  }

  std::int64_t PageBytesEstimate() const {
    std::int64_t levels = static_cast<std::int64_t>(page_def_levels_.size()) / 8;
    if (use_dict_) {
      const int width = std::max(1, BitWidth(static_cast<std::uint64_t>(DictionarySize())));
      return levels + static_cast<std::int64_t>(page_indices_.size()) * width / 8;
    }
    return levels + page_values_.ByteSize();
  }

  template <typename T, typename Dict>
  void AppendFixed(const std::vector<T>& src, std::vector<T>& page, Dict& dict, std::int64_t begin,
                   std::int64_t end) {
    if (use_dict_) {
      const std::size_t old = page_indices_.size();
      page_indices_.resize(old + (end - begin));
      dict.InsertBatch(src.data() + begin, end - begin, page_indices_.data() + old);
    } else {
      page.insert(page.end(), src.begin() + begin, src.begin() + end);
    }
  }

  Status AppendValues(const ColumnData& col, std::int64_t begin, std::int64_t end) {
    if (begin == end) return Status::OK();
    page_stats_.UpdateValues(col, begin, end);
    switch (leaf_.physical_type) {
      case PhysicalType::kBoolean:
        page_values_.bool_values.insert(page_values_.bool_values.end(),
                                        col.bool_values.begin() + begin,
                                        col.bool_values.begin() + end);
        break;
      case PhysicalType::kInt32:
        AppendFixed(col.int32_values, page_values_.int32_values, i32_dict_, begin, end);
        break;
      case PhysicalType::kInt64:
        AppendFixed(col.int64_values, page_values_.int64_values, i64_dict_, begin, end);
        break;
      case PhysicalType::kFloat:
        AppendFixed(col.float_values, page_values_.float_values, f32_dict_, begin, end);
        break;
      case PhysicalType::kDouble:
        AppendFixed(col.double_values, page_values_.double_values, f64_dict_, begin, end);
        break;
      case PhysicalType::kByteArray:
      case PhysicalType::kFixedLenByteArray:
        for (std::int64_t i = begin; i < end; ++i) {
          const std::string_view v = col.bytes_at(i);
          if (IsGeospatial(leaf_) && options_.write_geospatial_statistics && geo_valid_) {
            // A value that is not WKB only disables the geospatial statistics.
            if (!geo_stats_.Update(v).ok()) geo_valid_ = false;
          }
          if (use_dict_) {
            page_indices_.push_back(bytes_dict_.Insert(v));
          } else {
            page_values_.AppendBytes(v);
          }
        }
        break;
      case PhysicalType::kInt96:
        return Status::NotImplemented("writing INT96 is not supported");
    }
    return Status::OK();
  }

  Status EncodeValues(Encoding encoding, std::string* body) const {
    const ColumnData& v = page_values_;
    const std::size_t n = static_cast<std::size_t>(v.num_values());
    const auto* bytes_data = reinterpret_cast<const std::uint8_t*>(v.byte_data.data());
    switch (encoding) {
      case Encoding::kPlain:
        switch (leaf_.physical_type) {
          case PhysicalType::kBoolean:
            EncodePlainBoolean(v.bool_values.data(), n, body);
            break;
          case PhysicalType::kInt32:
            EncodePlain(v.int32_values.data(), n, body);
            break;
          case PhysicalType::kInt64:
            EncodePlain(v.int64_values.data(), n, body);
            break;
          case PhysicalType::kFloat:
            EncodePlain(v.float_values.data(), n, body);
            break;
          case PhysicalType::kDouble:
            EncodePlain(v.double_values.data(), n, body);
            break;
          case PhysicalType::kByteArray:
            EncodePlainByteArray(v.byte_offsets.data(), bytes_data, n, body);
            break;
          case PhysicalType::kFixedLenByteArray:
            body->append(v.byte_data);
            break;
          case PhysicalType::kInt96:
            return Status::NotImplemented("INT96");
        }
        return Status::OK();
      case Encoding::kDeltaBinaryPacked:
        if (leaf_.physical_type == PhysicalType::kInt32) {
          EncodeDeltaBinaryPacked(v.int32_values.data(), n, body);
        } else {
          EncodeDeltaBinaryPacked(v.int64_values.data(), n, body);
        }
        return Status::OK();
      case Encoding::kByteStreamSplit: {
        const std::uint8_t* raw = nullptr;
        int width = 0;
        switch (leaf_.physical_type) {
          case PhysicalType::kFloat:
            raw = reinterpret_cast<const std::uint8_t*>(v.float_values.data());
            width = 4;
            break;
          case PhysicalType::kDouble:
            raw = reinterpret_cast<const std::uint8_t*>(v.double_values.data());
            width = 8;
            break;
          case PhysicalType::kInt32:
            raw = reinterpret_cast<const std::uint8_t*>(v.int32_values.data());
            width = 4;
            break;
          default:
            raw = reinterpret_cast<const std::uint8_t*>(v.int64_values.data());
            width = 8;
            break;
        }
        EncodeByteStreamSplit(raw, n, width, body);
        return Status::OK();
      }
      case Encoding::kDeltaLengthByteArray:
        EncodeDeltaLengthByteArray(v.byte_offsets.data(), bytes_data, n, body);
        return Status::OK();
      case Encoding::kDeltaByteArray:
        EncodeDeltaByteArray(v.byte_offsets.data(), bytes_data, n, body);
        return Status::OK();
      default:
        return Status::NotImplemented("encoding " + std::string(EncodingName(encoding)));
    }
  }

  Status CheckPageSize(const std::string& uncompressed_prefix, const std::string& body) const {
    if (body.size() + uncompressed_prefix.size() > static_cast<std::size_t>(INT32_MAX)) {
      return Status::InvalidArgument("column '" + leaf_.dotted_path() + "': page of " +
                                     std::to_string(body.size()) + " bytes is too large");
    }
    return Status::OK();
  }

  // Set compressed_ to `uncompressed_prefix` (the v2 level section, stored uncompressed)
  // followed by compressed `body`: what a page stores.
  Status CompressPage(const std::string& uncompressed_prefix, const std::string& body) {
    GEOLAKE_RETURN_NOT_OK(CheckPageSize(uncompressed_prefix, body));
    GEOLAKE_RETURN_NOT_OK_CTX(compressor_.Compress(body, &compressed_),
                              "column '" + leaf_.dotted_path() + "'");
    compressed_.insert(0, uncompressed_prefix);
    return Status::OK();
  }

  // Append a data page (its header and `stored` bytes) to data_pieces_ and record where it
  // went in pages_ (`location` gives its first row). Updates the chunk totals.
  Status AppendDataPage(PageHeader header, std::size_t uncompressed_bytes, std::string stored,
                        PageLocation location) {
    GEOLAKE_ASSIGN_OR_RETURN(std::string header_bytes,
                             StoredPageHeader(std::move(header), uncompressed_bytes, stored));
    location.offset = data_bytes_;
    location.compressed_page_size = static_cast<std::int32_t>(header_bytes.size() + stored.size());
    data_bytes_ += location.compressed_page_size;
    data_pieces_.push_back(std::move(header_bytes));
    data_pieces_.push_back(std::move(stored));
    pages_.push_back(location);
    return Status::OK();
  }

  // The serialized header of a page that stores `stored` (the uncompressed prefix, then the
  // compressed body) for `uncompressed_bytes`. Updates the chunk totals.
  Result<std::string> StoredPageHeader(PageHeader header, std::size_t uncompressed_bytes,
                                       const std::string& stored) {
    if (stored.size() + kPageHeaderBoundBytes > static_cast<std::size_t>(INT32_MAX)) {
      return Status::InvalidArgument("column '" + leaf_.dotted_path() + "': page too large");
    }
    header.uncompressed_page_size = static_cast<std::int32_t>(uncompressed_bytes);
    header.compressed_page_size = static_cast<std::int32_t>(stored.size());
    // CRC-32 (gzip's polynomial) of the stored body, as PageHeader.crc defines it.
    const uLong crc = crc32(crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(stored.data()),
                            static_cast<uInt>(stored.size()));
    header.crc = static_cast<std::int32_t>(static_cast<std::uint32_t>(crc));
    std::string header_bytes = SerializeThrift(header);
    total_uncompressed_ += static_cast<std::int64_t>(header_bytes.size() + uncompressed_bytes);
    total_compressed_ += static_cast<std::int64_t>(header_bytes.size() + stored.size());
    return header_bytes;
  }

  // A data page cut but not yet in data_pieces_: compressed by a task on the executor (or on
  // this thread when small), appended in cut order by AssembleDone.
  struct PendingPage {
    PageHeader header;
    PageLocation location;  // first_row_index; offset and size are set when appended
    std::string prefix;     // v2 levels, stored uncompressed
    std::string body;       // what is compressed: levels (v1) and values; freed when done
    std::string stored;     // prefix + compressed body
    std::size_t uncompressed_bytes = 0;  // prefix + body
    std::int64_t body_bytes = 0;
    std::int64_t bound_bytes = 0;  // counted in BufferedBytes until appended
    Status status;
    std::atomic<bool> done{false};
  };

  // Compress `page` (on any thread) into `stored`, whose capacity the writer's thread reserved:
  // the task allocates nothing, so the page's buffers stay in the writer's malloc arena (glibc
  // gives each thread a heap of its own that keeps what is freed there). Never throws: an
  // exception becomes the page's status.
  static void CompressPending(CompressionCodec codec, const CompressionOptions& options,
                              PendingPage* page) {
    try {
      page->status = Compress(codec, page->body, &page->stored, options);
      if (page->status.ok()) page->stored.insert(0, page->prefix);
      std::string().swap(page->body);
    } catch (const std::exception& e) {
      page->status = Status::Internal(std::string("page compression: ") + e.what());
    }
    page->done.store(true, std::memory_order_release);
  }

  // Queue the open page (its levels in page_levels_ for v2, its body in page_body_) for
  // compression. The page takes page_body_'s buffer; the next page gets one of the same size.
  Status QueuePage(PageHeader header, const PageLocation& location) {
    GEOLAKE_RETURN_NOT_OK(CheckPageSize(page_levels_, page_body_));
    auto page = std::make_unique<PendingPage>();
    page->header = std::move(header);
    page->location = location;
    page->prefix = page_levels_;
    page->body.swap(page_body_);
    page_body_.reserve(page->body.size());
    page->uncompressed_bytes = page->prefix.size() + page->body.size();
    page->body_bytes = static_cast<std::int64_t>(page->body.size());
    const std::int64_t bound = MaxCompressedSize(options_.codec, page->body_bytes);
    page->stored.reserve(static_cast<std::size_t>(bound) + page->prefix.size());
    page->bound_bytes =
        bound + static_cast<std::int64_t>(page->prefix.size()) + kPageHeaderBoundBytes;
    pending_bound_bytes_ += page->bound_bytes;
    pending_body_bytes_ += page->body_bytes;
    const std::int64_t body_bytes = page->body_bytes;
    PendingPage* raw = page.get();
    pending_.push_back(std::move(page));
    if (body_bytes < ColumnChunkWriter::kMinParallelPageBytes) {
      CompressPending(options_.codec, options_.compression, raw);
    } else {
      tasks_->Spawn([codec = options_.codec, options = options_.compression, raw] {
        CompressPending(codec, options, raw);
        return Status::OK();  // the page's own status says how it went
      });
    }
    GEOLAKE_RETURN_NOT_OK(AssembleDone());
    if (pending_.size() >= ColumnChunkWriter::kMaxPendingPages ||
        pending_body_bytes_ >= ColumnChunkWriter::kMaxPendingBytes) {
      return WaitPending();
    }
    return Status::OK();
  }

  // Append the compressed pages at the front of pending_, in cut order, to data_pieces_.
  Status AssembleDone() {
    while (!pending_.empty() && pending_.front()->done.load(std::memory_order_acquire)) {
      PendingPage& page = *pending_.front();
      GEOLAKE_RETURN_NOT_OK_CTX(page.status, "column '" + leaf_.dotted_path() + "'");
      // A copy: `stored` has the capacity of the codec's bound, often several times what the
      // page compressed to, and the chunk keeps its pages until the row group is written.
      GEOLAKE_RETURN_NOT_OK(AppendDataPage(std::move(page.header), page.uncompressed_bytes,
                                           std::string(page.stored), page.location));
      pending_bound_bytes_ -= page.bound_bytes;
      pending_body_bytes_ -= page.body_bytes;
      pending_.pop_front();
    }
    return Status::OK();
  }

  Status WaitPending() {
    if (pending_.empty()) return Status::OK();
    GEOLAKE_RETURN_NOT_OK_CTX(tasks_->Wait(), "column '" + leaf_.dotted_path() + "'");
    return AssembleDone();
  }

  Status FlushPage() {
    if (page_rows_ == 0) return Status::OK();
    const bool v2 = options_.data_page_v2;
    // v1 compresses levels and values as one block, so the values are encoded right after the
    // levels in page_body_; v2 keeps the levels apart (stored uncompressed). Both buffers keep
    // their capacity from page to page.
    page_body_.clear();
    page_levels_.clear();
    std::string& levels = v2 ? page_levels_ : page_body_;
    if (leaf_.max_definition_level > 0) {
      const int width = BitWidth(static_cast<std::uint64_t>(leaf_.max_definition_level));
      // v1 prefixes the level runs with their length; v2 records it in the page header.
      if (v2) {
        EncodeRleBitPacked(page_def_levels_.data(), page_def_levels_.size(), width, &levels);
      } else {
        EncodeRleBitPackedWithLength(page_def_levels_.data(), page_def_levels_.size(), width,
                                     &levels);
      }
      encodings_.insert(Encoding::kRle);
    }
    std::string& values = page_body_;
    Encoding encoding = options_.encoding;
    // A first page with more than half of its values distinct (a small chunk, or a page cut by
    // size before the probe above) is written without the dictionary.
    if (use_dict_ && !dict_used_ &&
        DictionarySize() * 2 > static_cast<std::int64_t>(page_indices_.size())) {
      AbandonDictionary();
    }
    if (use_dict_ && !page_indices_.empty()) {
      encoding = Encoding::kRleDictionary;
      EncodeDictionaryIndices(page_indices_.data(), page_indices_.size(),
                              static_cast<std::size_t>(DictionarySize()), &values);
      dict_used_ = true;
      dict_values_ += static_cast<std::int64_t>(page_indices_.size());
      // A chunk whose first page went out dictionary-encoded (cut by size before the judgement
      // above) still gives up when more than half of the values were new.
      if (dict_values_ >= kDictionaryProbeValues && DictionarySize() * 2 > dict_values_) {
        use_dict_ = false;
      }
    } else {
      // A page without values (all null) in dictionary mode is written PLAIN: nothing to index.
      if (use_dict_) encoding = Encoding::kPlain;
      if (encoding == Encoding::kPlain && options_.delta_for_sorted_integers &&
          ((leaf_.physical_type == PhysicalType::kInt32 &&
            EncodeDeltaIfSorted(page_values_.int32_values, &values)) ||
           (leaf_.physical_type == PhysicalType::kInt64 &&
            EncodeDeltaIfSorted(page_values_.int64_values, &values)))) {
        encoding = Encoding::kDeltaBinaryPacked;
      } else {
        GEOLAKE_RETURN_NOT_OK(EncodeValues(encoding, &values));
      }
    }
    encodings_.insert(encoding);
    const PageType page_type = v2 ? PageType::kDataPageV2 : PageType::kDataPage;
    encoding_stats_[{page_type, encoding}] += 1;

    PageHeader header;
    header.type = page_type;
    if (v2) {
      DataPageHeaderV2 h;
      h.num_values = static_cast<std::int32_t>(page_rows_);
      h.num_nulls = static_cast<std::int32_t>(page_rows_ - page_stats_.num_values());
      h.num_rows = static_cast<std::int32_t>(page_rows_);
      h.encoding = encoding;
      h.definition_levels_byte_length = static_cast<std::int32_t>(levels.size());
      h.repetition_levels_byte_length = 0;
      h.is_compressed = options_.codec != CompressionCodec::kUncompressed;
      header.data_page_header_v2 = h;
    } else {
      DataPageHeader h;
      h.num_values = static_cast<std::int32_t>(page_rows_);
      h.encoding = encoding;
      h.definition_level_encoding = Encoding::kRle;
      h.repetition_level_encoding = Encoding::kRle;
      header.data_page_header = h;
    }

    PageLocation loc;  // offset and size are set when the page is appended
    loc.first_row_index = rows_ - page_rows_;
    // A small page goes to the executor only to keep its place behind pages still pending.
    if (tasks_ != nullptr && (!pending_.empty() || static_cast<std::int64_t>(page_body_.size()) >=
                                                       ColumnChunkWriter::kMinParallelPageBytes)) {
      GEOLAKE_RETURN_NOT_OK(QueuePage(std::move(header), loc));
    } else {
      // page_levels_ is empty for v1 (its levels are in page_body_).
      GEOLAKE_RETURN_NOT_OK(CompressPage(page_levels_, page_body_));
      GEOLAKE_RETURN_NOT_OK(AppendDataPage(
          std::move(header), page_levels_.size() + page_body_.size(), compressed_, loc));
    }

    PageIndexEntry entry;
    entry.null_count = page_stats_.null_count();
    entry.null_page = page_stats_.num_values() == 0;
    entry.has_bounds =
        page_stats_.IndexBounds(options_.max_statistics_bytes, &entry.min, &entry.max);
    index_.push_back(std::move(entry));
    chunk_stats_.Merge(page_stats_);
    ClearPage();
    return Status::OK();
  }

  void ClearPage() {
    page_values_.Clear();
    page_def_levels_.clear();
    page_indices_.clear();
    page_stats_.Reset();
    page_rows_ = 0;
  }

  std::optional<ColumnIndex> BuildColumnIndex() const {
    const SortOrder order = SortOrderOf(leaf_);
    if (order == SortOrder::kUndefined || index_.empty()) return std::nullopt;
    ColumnIndex ci;
    for (const auto& e : index_) {
      // A non-null page without bounds (all NaN) makes the whole index unusable (§1.8).
      if (!e.null_page && !e.has_bounds) return std::nullopt;
      ci.null_pages.push_back(e.null_page);
      ci.min_values.push_back(e.null_page ? std::string() : e.min);
      ci.max_values.push_back(e.null_page ? std::string() : e.max);
      ci.null_counts.push_back(e.null_count);
    }
    bool ascending = true;
    bool descending = true;
    const std::string* prev_min = nullptr;
    const std::string* prev_max = nullptr;
    for (std::size_t i = 0; i < index_.size(); ++i) {
      if (index_[i].null_page) continue;
      if (prev_min != nullptr) {
        const int cmin = CompareEncodedValues(leaf_.physical_type, order, *prev_min, index_[i].min);
        const int cmax = CompareEncodedValues(leaf_.physical_type, order, *prev_max, index_[i].max);
        if (cmin > 0 || cmax > 0) ascending = false;
        if (cmin < 0 || cmax < 0) descending = false;
      }
      prev_min = &index_[i].min;
      prev_max = &index_[i].max;
    }
    ci.boundary_order = ascending    ? BoundaryOrder::kAscending
                        : descending ? BoundaryOrder::kDescending
                                     : BoundaryOrder::kUnordered;
    return ci;
  }

  LeafColumn leaf_;
  ColumnWriteOptions options_;

  // Open page.
  ColumnData page_values_;
  std::vector<std::int16_t> page_def_levels_;
  std::vector<std::uint32_t> page_indices_;
  StatisticsAccumulator page_stats_;
  std::int64_t page_rows_ = 0;

  // Dictionary.
  bool use_dict_ = false;
  bool dict_used_ = false;
  std::int64_t dict_values_ = 0;  // values written as dictionary indices in this chunk
  int fixed_width_;
  DictionaryBuilder<std::int32_t> i32_dict_;
  DictionaryBuilder<std::int64_t> i64_dict_;
  DictionaryBuilder<float> f32_dict_;
  DictionaryBuilder<double> f64_dict_;
  ByteArrayDictionaryBuilder bytes_dict_;

  // Finished data pages of the chunk (the dictionary page is put before them in Finish): each
  // page's header and stored bytes as two pieces, so that the chunk grows without being copied
  // (one string doubling its capacity held up to 3x a row group of wide geometries at once),
  // and a page compressed on the executor is moved in.
  std::vector<std::string> data_pieces_;
  std::int64_t data_bytes_ = 0;
  // Pages cut but not yet in data_pieces_ (only with an executor), in cut order.
  std::unique_ptr<TaskGroup> tasks_;
  std::deque<std::unique_ptr<PendingPage>> pending_;
  std::int64_t pending_bound_bytes_ = 0;
  std::int64_t pending_body_bytes_ = 0;
  PageCompressor compressor_;
  std::string compressed_;   // scratch: a compressed page
  std::string page_body_;    // scratch: the page's levels (v1) and values
  std::string page_levels_;  // scratch: the page's levels (v2)
  std::vector<PageLocation> pages_;
  std::vector<PageIndexEntry> index_;
  std::set<Encoding> encodings_;
  std::map<std::pair<PageType, Encoding>, std::int32_t> encoding_stats_;
  std::int64_t total_uncompressed_ = 0;
  std::int64_t total_compressed_ = 0;
  std::int64_t num_levels_ = 0;
  std::int64_t rows_ = 0;
  StatisticsAccumulator chunk_stats_;
  GeospatialStatisticsAccumulator geo_stats_;
  bool geo_valid_ = true;
};

Result<std::unique_ptr<ColumnChunkWriter>> ColumnChunkWriter::Make(const LeafColumn& leaf,
                                                                   ColumnWriteOptions options,
                                                                   ThreadPool* executor) {
  const std::string ctx = "column '" + leaf.dotted_path() + "'";
  if (leaf.max_repetition_level > 0) {
    return Status::NotImplemented(ctx + ": writing repeated columns is not supported");
  }
  if (leaf.physical_type == PhysicalType::kInt96) {
    return Status::NotImplemented(ctx + ": writing INT96 is not supported");
  }
  if (!WriterSupportsEncoding(leaf.physical_type, options.encoding)) {
    return Status::InvalidArgument(
        ctx + ": encoding " + std::string(EncodingName(options.encoding)) + " does not apply to " +
        std::string(PhysicalTypeName(leaf.physical_type)));
  }
  if (!CanCompress(options.codec)) {
    return Status::NotImplemented(ctx + ": cannot write codec " +
                                  std::string(CodecName(options.codec)));
  }
  if (options.data_page_size <= 0 || options.max_rows_per_page <= 0) {
    return Status::InvalidArgument(ctx + ": page size limits must be positive");
  }
  return std::unique_ptr<ColumnChunkWriter>(
      new ColumnChunkWriter(std::make_unique<Impl>(leaf, options, executor)));
}

ColumnChunkWriter::ColumnChunkWriter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ColumnChunkWriter::~ColumnChunkWriter() = default;

Result<std::int64_t> ColumnChunkWriter::Append(const ColumnData& column, std::int64_t level_begin,
                                               std::int64_t level_end, std::int64_t value_begin) {
  GEOLAKE_ASSIGN_OR_RETURN(std::int64_t consumed,
                           impl_->Append(column, level_begin, level_end, value_begin));
  num_rows_ = impl_->rows();
  return consumed;
}

std::int64_t ColumnChunkWriter::buffered_bytes() const { return impl_->BufferedBytes(); }

Status ColumnChunkWriter::Settle() { return impl_->Settle(); }

Result<FinishedChunk> ColumnChunkWriter::Finish() {
  num_rows_ = 0;
  return impl_->Finish();
}

}  // namespace geolake::parquet
