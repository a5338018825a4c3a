#include "geolake/formats/parquet/reader.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

#include "geolake/core/little_endian.h"
#include "geolake/formats/parquet/column_reader.h"

namespace geolake::parquet {
namespace {

constexpr std::string_view kMagic = "PAR1";
constexpr std::string_view kEncryptedMagic = "PARE";

}  // namespace

Result<std::unique_ptr<FileReader>> FileReader::Open(
    std::shared_ptr<const io::RandomAccessFile> file, const ReaderOptions& options) {
  if (file == nullptr) return Status::InvalidArgument("parquet: null file");
  const io::RandomAccessFile* raw = file.get();
  std::unique_ptr<FileReader> reader(new FileReader(std::move(file), raw, options));
  GEOLAKE_RETURN_NOT_OK(reader->Init());
  return reader;
}

Result<std::unique_ptr<FileReader>> FileReader::Open(const io::RandomAccessFile* file,
                                                     const ReaderOptions& options) {
  if (file == nullptr) return Status::InvalidArgument("parquet: null file");
  std::unique_ptr<FileReader> reader(new FileReader(nullptr, file, options));
  GEOLAKE_RETURN_NOT_OK(reader->Init());
  return reader;
}

Status FileReader::Init() {
  const std::string ctx = "parquet file '" + file_->path() + "'";
  auto corrupt = [&](const std::string& what) { return Status::CorruptData(ctx + ": " + what); };
  const std::uint64_t size = file_->size();
  if (size < 12) {
    return corrupt("only " + std::to_string(size) + " bytes, too small for a Parquet file");
  }
  std::string tail;
  GEOLAKE_RETURN_NOT_OK_CTX(file_->ReadAt(size - 8, 8, &tail), ctx);
  const std::string_view magic = std::string_view(tail).substr(4);
  if (magic == kEncryptedMagic) {
    return Status::NotImplemented(ctx + ": encrypted footer (PARE) is not supported");
  }
  if (magic != kMagic) return corrupt("no PAR1 magic at offset " + std::to_string(size - 4));
  const auto footer_len = LoadLE<std::uint32_t>(tail.data());
  if (footer_len > size - 12) {
    return corrupt("footer length " + std::to_string(footer_len) + " at offset " +
                   std::to_string(size - 8) + " exceeds the file size " + std::to_string(size));
  }
  if (static_cast<std::int64_t>(footer_len) > options_.max_footer_bytes) {
    return corrupt("footer length " + std::to_string(footer_len) + " exceeds the limit of " +
                   std::to_string(options_.max_footer_bytes));
  }
  std::string head;
  GEOLAKE_RETURN_NOT_OK_CTX(file_->ReadAt(0, 4, &head), ctx);
  if (head != kMagic) return corrupt("no PAR1 magic at offset 0");
  const std::uint64_t footer_offset = size - 8 - footer_len;
  std::string footer;
  GEOLAKE_RETURN_NOT_OK_CTX(file_->ReadAt(footer_offset, footer_len, &footer), ctx);
  GEOLAKE_RETURN_NOT_OK_CTX(DeserializeThrift(footer, &metadata_),
                            ctx + ": footer at offset " + std::to_string(footer_offset));
  GEOLAKE_ASSIGN_OR_RETURN(schema_, Schema::FromElements(metadata_.schema).WithContext(ctx));
  if (metadata_.num_rows < 0) return corrupt("negative num_rows");
  for (std::size_t i = 0; i < metadata_.row_groups.size(); ++i) {
    const RowGroup& rg = metadata_.row_groups[i];
    if (rg.columns.size() != static_cast<std::size_t>(schema_.num_leaves())) {
      return corrupt("row group " + std::to_string(i) + " has " +
                     std::to_string(rg.columns.size()) + " column chunks, the schema " +
                     std::to_string(schema_.num_leaves()) + " leaves");
    }
    if (rg.num_rows < 0) return corrupt("row group " + std::to_string(i) + ": negative num_rows");
    // A flat column holds one value (or null) per row: a row count that disagrees with its
    // chunks is not believed. Readers size and iterate by the row count (an overstated one made
    // a query allocate without bound; an understated one returned fewer rows, silently).
    for (std::size_t leaf = 0; leaf < rg.columns.size(); ++leaf) {
      const std::optional<ColumnMetaData>& cm = rg.columns[leaf].meta_data;
      if (!cm || schema_.leaves()[leaf].max_repetition_level > 0) continue;
      if (cm->num_values != rg.num_rows) {
        return corrupt("row group " + std::to_string(i) + " declares " +
                       std::to_string(rg.num_rows) + " rows, its column '" +
                       schema_.leaves()[leaf].dotted_path() + "' " +
                       std::to_string(cm->num_values) + " values");
      }
    }
  }
  const std::string created_by = metadata_.created_by.value_or("");
  if (created_by.rfind("parquet-mr", 0) == 0) {
    // "parquet-mr version 1.2.8 (build ...)" or a bare "parquet-mr": compare the version.
    int major = 0, minor = 0, patch = 0;
    const std::size_t v = created_by.find("version ");
    if (v == std::string::npos ||
        std::sscanf(created_by.c_str() + v + 8, "%d.%d.%d", &major, &minor, &patch) < 2) {
      needs_chunk_padding_ = true;
    } else {
      needs_chunk_padding_ = major < 1 || (major == 1 && (minor < 2 || (minor == 2 && patch < 9)));
    }
  }
  return Status::OK();
}

std::string FileReader::Where(int row_group, int leaf) const {
  return "parquet file '" + file_->path() + "' row group " + std::to_string(row_group) +
         " column '" + schema_.leaves()[leaf].dotted_path() + "'";
}

Status FileReader::CheckIndices(int row_group, int leaf) const {
  if (row_group < 0 || row_group >= num_row_groups()) {
    return Status::InvalidArgument("parquet file '" + file_->path() + "': no row group " +
                                   std::to_string(row_group));
  }
  if (leaf < 0 || leaf >= schema_.num_leaves()) {
    return Status::InvalidArgument("parquet file '" + file_->path() + "': no leaf column " +
                                   std::to_string(leaf));
  }
  return Status::OK();
}

const Statistics* FileReader::column_statistics(int row_group, int leaf) const {
  if (!CheckIndices(row_group, leaf).ok()) return nullptr;
  const ColumnChunk& cc = metadata_.row_groups[row_group].columns[leaf];
  if (!cc.meta_data.has_value() || !cc.meta_data->statistics.has_value()) return nullptr;
  return &*cc.meta_data->statistics;
}

Status FileReader::ChunkRange(int row_group, int leaf, const ColumnMetaData** meta,
                              std::uint64_t* begin, std::uint64_t* length) const {
  const ColumnChunk& cc = metadata_.row_groups[row_group].columns[leaf];
  if (!cc.meta_data.has_value()) {
    return Status::NotImplemented("column chunk has no metadata (encrypted column?)");
  }
  const ColumnMetaData& cm = *cc.meta_data;
  const LeafColumn& lc = schema_.leaves()[leaf];
  if (cm.type != lc.physical_type) {
    return Status::CorruptData("chunk type " + std::string(PhysicalTypeName(cm.type)) +
                               " differs from the schema's " +
                               std::string(PhysicalTypeName(lc.physical_type)));
  }
  std::int64_t start = cm.data_page_offset;
  // dictionary_page_offset 0 means "unset" for some writers; the first page is then found at
  // data_page_offset (and may itself be a dictionary page).
  if (cm.dictionary_page_offset.has_value() && *cm.dictionary_page_offset > 0 &&
      *cm.dictionary_page_offset < start) {
    start = *cm.dictionary_page_offset;
  }
  const auto size = static_cast<std::int64_t>(file_->size());
  std::int64_t chunk_length = cm.total_compressed_size;
  // parquet-mr before 1.2.9 (PARQUET-816) left the dictionary page header out of
  // total_compressed_size; like other readers, allow up to 100 more bytes for those files.
  if (needs_chunk_padding_ && chunk_length >= 0 && start >= 0 && start < size) {
    chunk_length = std::min<std::int64_t>(chunk_length + 100, size - 8 - start);
  }
  if (cm.num_values == 0) {
    *meta = &cm;
    *begin = 0;
    *length = 0;
    return Status::OK();
  }
  if (start < 4 || start >= size || cm.total_compressed_size < 0 ||
      cm.total_compressed_size > size - start) {
    return Status::CorruptData("column chunk at offset " + std::to_string(start) + " of " +
                               std::to_string(cm.total_compressed_size) +
                               " bytes lies outside the file of " + std::to_string(size) +
                               " bytes");
  }
  if (cm.num_values < 0) return Status::CorruptData("negative num_values");
  *meta = &cm;
  *begin = static_cast<std::uint64_t>(start);
  *length = static_cast<std::uint64_t>(chunk_length);
  return Status::OK();
}

Result<ColumnData> FileReader::ReadColumn(int row_group, int leaf) const {
  ColumnData out;
  DecodeBuffers buffers;
  GEOLAKE_RETURN_NOT_OK(ReadColumnInto(row_group, leaf, &out, &buffers));
  return out;
}

namespace {

// Room for `n` more values in the buffer `out` decodes into, so pages append without
// regrowing. Bounded: a footer may claim any count, and growth past it is still correct.
void ReserveValues(std::int64_t n, ColumnData* out) {
  const auto count = static_cast<std::size_t>(std::clamp<std::int64_t>(n, 0, 1 << 20));
  switch (out->type) {
    case PhysicalType::kBoolean:
      out->bool_values.reserve(count);
      break;
    case PhysicalType::kInt32:
      out->int32_values.reserve(count);
      break;
    case PhysicalType::kInt64:
      out->int64_values.reserve(count);
      break;
    case PhysicalType::kFloat:
      out->float_values.reserve(count);
      break;
    case PhysicalType::kDouble:
      out->double_values.reserve(count);
      break;
    default:
      out->byte_offsets.reserve(count + 1);
      break;
  }
  if (out->max_definition_level > 0) out->def_levels.reserve(count);
  if (out->max_repetition_level > 0) out->rep_levels.reserve(count);
}

}  // namespace

Status FileReader::ReadColumnInto(int row_group, int leaf, ColumnData* out,
                                  DecodeBuffers* buffers) const {
  GEOLAKE_RETURN_NOT_OK(CheckIndices(row_group, leaf));
  const std::string where = Where(row_group, leaf);
  const ColumnMetaData* cm = nullptr;
  std::uint64_t begin = 0, length = 0;
  GEOLAKE_RETURN_NOT_OK_CTX(ChunkRange(row_group, leaf, &cm, &begin, &length), where);
  const LeafColumn& lc = schema_.leaves()[leaf];
  out->Clear();
  out->type = lc.physical_type;
  out->max_definition_level = lc.max_definition_level;
  out->max_repetition_level = lc.max_repetition_level;
  if (cm->num_values == 0) return Status::OK();  // offsets may be unset (Arrow writes 0)
  std::string& buffer = buffers->chunk;
  GEOLAKE_RETURN_NOT_OK_CTX(file_->ReadAt(begin, length, &buffer), where);

  ColumnChunkDecoder decoder(lc, cm->codec, options_, buffers);
  ReserveValues(cm->num_values, out);
  std::size_t pos = 0;
  while (pos < buffer.size() && decoder.levels_decoded() < cm->num_values) {
    GEOLAKE_RETURN_NOT_OK_CTX(decoder.DecodePage(buffer, &pos, begin, out), where);
  }
  if (decoder.levels_decoded() != cm->num_values) {
    return Status::CorruptData(where + ": pages hold " + std::to_string(decoder.levels_decoded()) +
                               " values, the chunk declares " + std::to_string(cm->num_values));
  }
  const std::int64_t rows = metadata_.row_groups[row_group].num_rows;
  if (lc.max_repetition_level == 0 && cm->num_values != rows) {
    return Status::CorruptData(where + ": " + std::to_string(cm->num_values) +
                               " values in a row group of " + std::to_string(rows) + " rows");
  }
  return Status::OK();
}

Result<Batch> FileReader::ReadRowGroup(int row_group, const std::vector<int>& leaves) const {
  Batch batch;
  DecodeBuffers buffers;
  GEOLAKE_RETURN_NOT_OK(ReadRowGroupInto(row_group, leaves, &batch, &buffers));
  return batch;
}

Status FileReader::ReadRowGroupInto(int row_group, const std::vector<int>& leaves, Batch* out,
                                    DecodeBuffers* buffers) const {
  if (row_group < 0 || row_group >= num_row_groups()) {
    return Status::InvalidArgument("parquet file '" + file_->path() + "': no row group " +
                                   std::to_string(row_group));
  }
  out->num_rows = metadata_.row_groups[row_group].num_rows;
  const std::size_t n =
      leaves.empty() ? static_cast<std::size_t>(schema_.num_leaves()) : leaves.size();
  out->columns.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const int leaf = leaves.empty() ? static_cast<int>(i) : leaves[i];
    GEOLAKE_RETURN_NOT_OK(ReadColumnInto(row_group, leaf, &out->columns[i], buffers));
  }
  return Status::OK();
}

namespace {

template <typename T>
Result<std::optional<T>> ReadIndexStruct(const io::RandomAccessFile& file,
                                         const std::optional<std::int64_t>& offset,
                                         const std::optional<std::int32_t>& length,
                                         const std::string& what) {
  if (!offset.has_value() || !length.has_value()) return std::optional<T>();
  const auto size = static_cast<std::int64_t>(file.size());
  if (*offset < 0 || *length <= 0 || *offset >= size || *length > size - *offset) {
    return Status::CorruptData(what + " at offset " + std::to_string(*offset) + " of " +
                               std::to_string(*length) + " bytes lies outside the file");
  }
  std::string bytes;
  GEOLAKE_RETURN_NOT_OK(file.ReadAt(static_cast<std::uint64_t>(*offset),
                                    static_cast<std::uint64_t>(*length), &bytes));
  T value;
  GEOLAKE_RETURN_NOT_OK_CTX(DeserializeThrift(bytes, &value),
                            what + " at offset " + std::to_string(*offset));
  return std::optional<T>(std::move(value));
}

bool Intersects(const std::vector<RowRange>& ranges, std::int64_t begin, std::int64_t end) {
  for (const RowRange& r : ranges) {
    if (r.begin < end && begin < r.end) return true;
  }
  return false;
}

}  // namespace

Result<std::optional<OffsetIndex>> FileReader::ReadOffsetIndex(int row_group, int leaf) const {
  GEOLAKE_RETURN_NOT_OK(CheckIndices(row_group, leaf));
  const ColumnChunk& cc = metadata_.row_groups[row_group].columns[leaf];
  return ReadIndexStruct<OffsetIndex>(*file_, cc.offset_index_offset, cc.offset_index_length,
                                      "offset index")
      .WithContext(Where(row_group, leaf));
}

Result<std::optional<ColumnIndex>> FileReader::ReadColumnIndex(int row_group, int leaf) const {
  GEOLAKE_RETURN_NOT_OK(CheckIndices(row_group, leaf));
  const ColumnChunk& cc = metadata_.row_groups[row_group].columns[leaf];
  return ReadIndexStruct<ColumnIndex>(*file_, cc.column_index_offset, cc.column_index_length,
                                      "column index")
      .WithContext(Where(row_group, leaf));
}

Result<PageSelection> FileReader::ReadColumnPages(int row_group, int leaf,
                                                  const std::vector<RowRange>& ranges) const {
  GEOLAKE_ASSIGN_OR_RETURN(std::optional<OffsetIndex> index, ReadOffsetIndex(row_group, leaf));
  const std::int64_t num_rows = metadata_.row_groups[row_group].num_rows;
  PageSelection sel;
  if (!index.has_value() || index->page_locations.empty()) {
    GEOLAKE_ASSIGN_OR_RETURN(sel.data, ReadColumn(row_group, leaf));
    sel.rows.push_back({0, num_rows});
    sel.pages_read = 1;
    return sel;
  }
  const std::string where = Where(row_group, leaf);
  const ColumnMetaData* cm = nullptr;
  std::uint64_t begin = 0, length = 0;
  GEOLAKE_RETURN_NOT_OK_CTX(ChunkRange(row_group, leaf, &cm, &begin, &length), where);
  if (cm->num_values == 0) {
    sel.data = ColumnData::ForLeaf(schema_.leaves()[leaf]);
    return sel;
  }
  const std::vector<PageLocation>& locs = index->page_locations;
  const auto chunk_end = static_cast<std::int64_t>(begin + length);
  for (std::size_t i = 0; i < locs.size(); ++i) {
    const PageLocation& loc = locs[i];
    const bool ordered = i == 0 ? loc.first_row_index == 0
                                : loc.first_row_index >= locs[i - 1].first_row_index &&
                                      loc.offset >= locs[i - 1].offset;
    if (loc.offset < static_cast<std::int64_t>(begin) || loc.compressed_page_size <= 0 ||
        loc.compressed_page_size > chunk_end - loc.offset || loc.first_row_index > num_rows ||
        !ordered) {
      return Status::CorruptData(
          where + ": offset index entry " + std::to_string(i) + " (offset " +
          std::to_string(loc.offset) + ", size " + std::to_string(loc.compressed_page_size) +
          ", first row " + std::to_string(loc.first_row_index) + ") does not fit the column chunk");
    }
  }

  const LeafColumn& lc = schema_.leaves()[leaf];
  ColumnChunkDecoder decoder(lc, cm->codec, options_);
  sel.data = ColumnData::ForLeaf(lc);
  // The dictionary page, if any, sits between the chunk start and the first data page.
  const auto first_offset = static_cast<std::uint64_t>(locs[0].offset);
  if (first_offset > begin) {
    std::string dict;
    GEOLAKE_RETURN_NOT_OK_CTX(file_->ReadAt(begin, first_offset - begin, &dict), where);
    std::size_t pos = 0;
    while (pos < dict.size()) {
      GEOLAKE_RETURN_NOT_OK_CTX(decoder.DecodePage(dict, &pos, begin, &sel.data), where);
    }
  }
  std::string page;
  for (std::size_t i = 0; i < locs.size(); ++i) {
    const std::int64_t row_begin = locs[i].first_row_index;
    const std::int64_t row_end = i + 1 < locs.size() ? locs[i + 1].first_row_index : num_rows;
    if (!Intersects(ranges, row_begin, row_end)) {
      ++sel.pages_skipped;
      continue;
    }
    GEOLAKE_RETURN_NOT_OK_CTX(
        file_->ReadAt(static_cast<std::uint64_t>(locs[i].offset),
                      static_cast<std::uint64_t>(locs[i].compressed_page_size), &page),
        where);
    std::size_t pos = 0;
    GEOLAKE_RETURN_NOT_OK_CTX(
        decoder.DecodePage(page, &pos, static_cast<std::uint64_t>(locs[i].offset), &sel.data),
        where);
    ++sel.pages_read;
    if (!sel.rows.empty() && sel.rows.back().end == row_begin) {
      sel.rows.back().end = row_end;
    } else {
      sel.rows.push_back({row_begin, row_end});
    }
  }
  return sel;
}

}  // namespace geolake::parquet
