#include "geolake/formats/parquet/column_reader.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "geolake/formats/parquet/encoding.h"

namespace geolake::parquet {
namespace {

Status Corrupt(std::string msg) { return Status::CorruptData(std::move(msg)); }

std::string_view Sub(std::string_view s, std::size_t pos) {
  return pos >= s.size() ? std::string_view() : s.substr(pos);
}

// Appends `n` levels decoded from `data` to `out`. v1 RLE streams carry a 4-byte length prefix
// (`prefixed`); v2 streams are exactly `data`. Legacy BIT_PACKED levels are MSB-first.
Status DecodeLevels(Encoding encoding, std::string_view data, bool prefixed, std::int16_t max_level,
                    std::size_t n, std::vector<std::int16_t>* out, std::size_t* consumed) {
  const int bit_width = BitWidth(static_cast<std::uint64_t>(max_level));
  const std::size_t old = out->size();
  out->resize(old + n);
  std::int16_t* dst = out->data() + old;
  if (encoding == Encoding::kRle) {
    ByteSpan body = AsBytes(data);
    std::size_t used = data.size();
    if (prefixed) GEOLAKE_RETURN_NOT_OK(ReadLengthPrefixed(AsBytes(data), &body, &used));
    RleBitPackedDecoder decoder(body, bit_width);
    GEOLAKE_RETURN_NOT_OK(decoder.Decode(dst, n));
    *consumed = used;
  } else if (encoding == Encoding::kBitPacked) {
    const std::size_t nbytes = (n * static_cast<std::size_t>(bit_width) + 7) / 8;
    if (nbytes > data.size()) {
      return Corrupt("BIT_PACKED levels need " + std::to_string(nbytes) + " bytes, " +
                     std::to_string(data.size()) + " present");
    }
    const auto* p = reinterpret_cast<const std::uint8_t*>(data.data());
    std::size_t bit = 0;
    for (std::size_t i = 0; i < n; ++i) {
      int v = 0;
      for (int b = 0; b < bit_width; ++b, ++bit) {
        v = (v << 1) | ((p[bit >> 3] >> (7 - (bit & 7))) & 1);
      }
      dst[i] = static_cast<std::int16_t>(v);
    }
    *consumed = nbytes;
  } else {
    return Status::NotImplemented("level encoding " + std::string(EncodingName(encoding)));
  }
  // Levels that fit the bit width are all valid when the maximum is the largest such value.
  const bool any_fits =
      static_cast<std::uint64_t>(max_level) == (std::uint64_t{1} << bit_width) - 1;
  for (std::size_t i = 0; !any_fits && i < n; ++i) {
    if (dst[i] > max_level) {
      return Corrupt("level " + std::to_string(dst[i]) + " exceeds the maximum " +
                     std::to_string(max_level));
    }
  }
  return Status::OK();
}

template <typename T>
Status AppendPlain(std::string_view data, std::size_t count, std::vector<T>* values) {
  const std::size_t old = values->size();
  if (count > data.size() / sizeof(T)) {
    return Corrupt("PLAIN: " + std::to_string(count) + " values exceed the " +
                   std::to_string(data.size()) + " bytes of the page");
  }
  values->resize(old + count);
  return DecodePlain(AsBytes(data), count, values->data() + old);
}

void AppendFixedOffsets(std::size_t count, std::size_t width, ColumnData* out) {
  if (out->byte_offsets.empty()) out->byte_offsets.push_back(0);
  std::int64_t end = out->byte_offsets.back();
  out->byte_offsets.reserve(out->byte_offsets.size() + count);
  for (std::size_t i = 0; i < count; ++i) {
    end += static_cast<std::int64_t>(width);
    out->byte_offsets.push_back(end);
  }
}

std::size_t FixedWidthOf(const LeafColumn& leaf) {
  switch (leaf.physical_type) {
    case PhysicalType::kInt32:
    case PhysicalType::kFloat:
      return 4;
    case PhysicalType::kInt64:
    case PhysicalType::kDouble:
      return 8;
    case PhysicalType::kInt96:
      return 12;
    case PhysicalType::kFixedLenByteArray:
      return leaf.type_length > 0 ? static_cast<std::size_t>(leaf.type_length) : 0;
    default:
      return 0;
  }
}

std::uint8_t* FixedValueBuffer(ColumnData* out, std::size_t old_count) {
  switch (out->type) {
    case PhysicalType::kInt32:
      return reinterpret_cast<std::uint8_t*>(out->int32_values.data() + old_count);
    case PhysicalType::kInt64:
      return reinterpret_cast<std::uint8_t*>(out->int64_values.data() + old_count);
    case PhysicalType::kFloat:
      return reinterpret_cast<std::uint8_t*>(out->float_values.data() + old_count);
    case PhysicalType::kDouble:
      return reinterpret_cast<std::uint8_t*>(out->double_values.data() + old_count);
    default:
      return nullptr;
  }
}

void ResizeFixed(ColumnData* out, std::size_t n) {
  switch (out->type) {
    case PhysicalType::kInt32:
      out->int32_values.resize(n);
      break;
    case PhysicalType::kInt64:
      out->int64_values.resize(n);
      break;
    case PhysicalType::kFloat:
      out->float_values.resize(n);
      break;
    case PhysicalType::kDouble:
      out->double_values.resize(n);
      break;
    default:
      break;
  }
}

template <typename T>
void Gather(const std::vector<T>& dict, const std::vector<std::uint32_t>& idx, std::size_t count,
            std::vector<T>* out) {
  const std::size_t old = out->size();
  out->resize(old + count);
  T* dst = out->data() + old;
  const T* src = dict.data();
  for (std::size_t i = 0; i < count; ++i) dst[i] = src[idx[i]];
}

}  // namespace

ColumnChunkDecoder::ColumnChunkDecoder(const LeafColumn& leaf, CompressionCodec codec,
                                       const ReaderOptions& options, DecodeBuffers* buffers)
    : leaf_(leaf), codec_(codec), options_(options), buffers_(buffers) {
  if (buffers_ == nullptr) {
    own_buffers_ = std::make_unique<DecodeBuffers>();
    buffers_ = own_buffers_.get();
  }
  dictionary_ = ColumnData::ForLeaf(leaf);
  dictionary_.max_definition_level = 0;
  dictionary_.max_repetition_level = 0;
}

Status ColumnChunkDecoder::Reserve(std::int64_t bytes) {
  if (bytes < 0 || bytes > options_.max_decoded_bytes - decoded_bytes_) {
    return Corrupt("decoded column would exceed the limit of " +
                   std::to_string(options_.max_decoded_bytes) + " bytes");
  }
  decoded_bytes_ += bytes;
  return Status::OK();
}

Status ColumnChunkDecoder::DecodePage(std::string_view buffer, std::size_t* pos,
                                      std::uint64_t buffer_file_offset, ColumnData* out) {
  RawPage page;
  GEOLAKE_RETURN_NOT_OK(ReadRawPage(buffer, pos, buffer_file_offset, options_, &page));
  Status st;
  switch (page.header.type) {
    case PageType::kDictionaryPage:
      st = DecodeDictionaryPage(page);
      break;
    case PageType::kDataPage:
    case PageType::kDataPageV2:
      st = DecodeDataPage(page, out);
      break;
    default:
      return Status::OK();  // index pages and page types from the future carry no values
  }
  return std::move(st).WithContext("page at offset " + std::to_string(page.file_offset));
}

Status ColumnChunkDecoder::DecodeDictionaryPage(const RawPage& page) {
  if (!page.header.dictionary_page_header.has_value()) {
    return Corrupt("dictionary page without a dictionary_page_header");
  }
  const DictionaryPageHeader& h = *page.header.dictionary_page_header;
  if (h.num_values < 0) return Corrupt("negative dictionary size");
  if (h.encoding != Encoding::kPlain && h.encoding != Encoding::kPlainDictionary) {
    return Status::NotImplemented("dictionary page encoding " +
                                  std::string(EncodingName(h.encoding)));
  }
  std::string_view body;
  GEOLAKE_RETURN_NOT_OK(DecompressPageBody(codec_, page.stored_body,
                                           page.header.uncompressed_page_size, options_,
                                           &buffers_->page, &body, &buffers_->decompressor));
  dictionary_ = ColumnData::ForLeaf(leaf_);
  dictionary_.max_definition_level = 0;
  dictionary_.max_repetition_level = 0;
  GEOLAKE_RETURN_NOT_OK_CTX(
      DecodeValues(Encoding::kPlain, body, static_cast<std::size_t>(h.num_values), &dictionary_),
      "dictionary");
  has_dictionary_ = true;
  return Status::OK();
}

Status ColumnChunkDecoder::DecodeDataPage(const RawPage& page, ColumnData* out) {
  const PageHeader& h = page.header;
  const bool v2 = h.type == PageType::kDataPageV2;
  if (!v2 && !h.data_page_header.has_value()) {
    return Corrupt("data page without a data_page_header");
  }
  if (v2 && !h.data_page_header_v2.has_value()) {
    return Corrupt("data page v2 without a data_page_header_v2");
  }
  const std::int32_t num_values =
      v2 ? h.data_page_header_v2->num_values : h.data_page_header->num_values;
  const Encoding encoding = v2 ? h.data_page_header_v2->encoding : h.data_page_header->encoding;
  if (num_values < 0) return Corrupt("negative value count " + std::to_string(num_values));
  const auto n = static_cast<std::size_t>(num_values);
  const int level_streams = (leaf_.max_definition_level > 0) + (leaf_.max_repetition_level > 0);
  GEOLAKE_RETURN_NOT_OK(Reserve(static_cast<std::int64_t>(n) * 2 * level_streams));

  const std::size_t old_rep = out->rep_levels.size();
  const std::size_t old_def = out->def_levels.size();
  std::string_view values;
  if (!v2) {
    std::string_view body;
    GEOLAKE_RETURN_NOT_OK(DecompressPageBody(codec_, page.stored_body, h.uncompressed_page_size,
                                             options_, &buffers_->page, &body,
                                             &buffers_->decompressor));
    std::size_t pos = 0;
    if (leaf_.max_repetition_level > 0) {
      std::size_t used = 0;
      GEOLAKE_RETURN_NOT_OK_CTX(
          DecodeLevels(h.data_page_header->repetition_level_encoding, body, true,
                       leaf_.max_repetition_level, n, &out->rep_levels, &used),
          "repetition levels");
      pos += used;
    }
    if (leaf_.max_definition_level > 0) {
      std::size_t used = 0;
      GEOLAKE_RETURN_NOT_OK_CTX(
          DecodeLevels(h.data_page_header->definition_level_encoding, Sub(body, pos), true,
                       leaf_.max_definition_level, n, &out->def_levels, &used),
          "definition levels");
      pos += used;
    }
    values = Sub(body, pos);
  } else {
    const DataPageHeaderV2& h2 = *h.data_page_header_v2;
    const std::int64_t rep_len = h2.repetition_levels_byte_length;
    const std::int64_t def_len = h2.definition_levels_byte_length;
    if (rep_len < 0 || def_len < 0 ||
        rep_len + def_len > static_cast<std::int64_t>(page.stored_body.size()) ||
        rep_len + def_len > h.uncompressed_page_size) {
      return Corrupt("level lengths " + std::to_string(rep_len) + " + " + std::to_string(def_len) +
                     " exceed the page");
    }
    const std::string_view stored = page.stored_body;
    std::size_t used = 0;
    if (leaf_.max_repetition_level > 0) {
      GEOLAKE_RETURN_NOT_OK_CTX(
          DecodeLevels(Encoding::kRle, stored.substr(0, rep_len), false, leaf_.max_repetition_level,
                       n, &out->rep_levels, &used),
          "repetition levels");
    }
    if (leaf_.max_definition_level > 0) {
      GEOLAKE_RETURN_NOT_OK_CTX(
          DecodeLevels(Encoding::kRle, stored.substr(rep_len, def_len), false,
                       leaf_.max_definition_level, n, &out->def_levels, &used),
          "definition levels");
    }
    const std::string_view values_stored = stored.substr(rep_len + def_len);
    const std::int64_t values_size = h.uncompressed_page_size - rep_len - def_len;
    if (h2.is_compressed.value_or(true) && codec_ != CompressionCodec::kUncompressed) {
      GEOLAKE_RETURN_NOT_OK(DecompressPageBody(codec_, values_stored, values_size, options_,
                                               &buffers_->page, &values, &buffers_->decompressor));
    } else {
      values = values_stored;
    }
  }

  std::size_t value_count = n;
  if (leaf_.max_definition_level > 0) {
    value_count = static_cast<std::size_t>(std::count(
        out->def_levels.begin() + old_def, out->def_levels.end(), leaf_.max_definition_level));
  }
  if (leaf_.max_repetition_level > 0 && n > 0 && levels_decoded_ == 0 &&
      out->rep_levels[old_rep] != 0) {
    return Corrupt("the first repetition level of a column chunk is not 0");
  }
  GEOLAKE_RETURN_NOT_OK_CTX(DecodeValues(encoding, values, value_count, out),
                            std::string(EncodingName(encoding)) + " values");
  levels_decoded_ += num_values;
  ++data_pages_;
  return Status::OK();
}

Status ColumnChunkDecoder::AppendFromDictionary(std::string_view data, std::size_t count,
                                                ColumnData* out) {
  if (!has_dictionary_) {
    return Corrupt("dictionary-encoded page in a column chunk without a dictionary page");
  }
  GEOLAKE_RETURN_NOT_OK(Reserve(static_cast<std::int64_t>(count) * 4));
  std::vector<std::uint32_t>& indices = buffers_->indices;
  indices.resize(count);
  GEOLAKE_RETURN_NOT_OK(DecodeDictionaryIndices(
      AsBytes(data), count, static_cast<std::size_t>(dictionary_.num_values()), indices.data()));
  switch (leaf_.physical_type) {
    case PhysicalType::kBoolean:
      GEOLAKE_RETURN_NOT_OK(Reserve(static_cast<std::int64_t>(count)));
      Gather(dictionary_.bool_values, indices, count, &out->bool_values);
      return Status::OK();
    case PhysicalType::kInt32:
      GEOLAKE_RETURN_NOT_OK(Reserve(static_cast<std::int64_t>(count) * 4));
      Gather(dictionary_.int32_values, indices, count, &out->int32_values);
      return Status::OK();
    case PhysicalType::kInt64:
      GEOLAKE_RETURN_NOT_OK(Reserve(static_cast<std::int64_t>(count) * 8));
      Gather(dictionary_.int64_values, indices, count, &out->int64_values);
      return Status::OK();
    case PhysicalType::kFloat:
      GEOLAKE_RETURN_NOT_OK(Reserve(static_cast<std::int64_t>(count) * 4));
      Gather(dictionary_.float_values, indices, count, &out->float_values);
      return Status::OK();
    case PhysicalType::kDouble:
      GEOLAKE_RETURN_NOT_OK(Reserve(static_cast<std::int64_t>(count) * 8));
      Gather(dictionary_.double_values, indices, count, &out->double_values);
      return Status::OK();
    case PhysicalType::kInt96:
    case PhysicalType::kByteArray:
    case PhysicalType::kFixedLenByteArray: {
      const std::vector<std::int64_t>& offs = dictionary_.byte_offsets;
      std::int64_t total = 0;
      for (std::size_t i = 0; i < count; ++i) {
        total += offs[indices[i] + 1] - offs[indices[i]];
        if (total > options_.max_decoded_bytes) break;
      }
      GEOLAKE_RETURN_NOT_OK(Reserve(total + static_cast<std::int64_t>(count) * 8));
      if (out->byte_offsets.empty()) out->byte_offsets.push_back(0);
      out->byte_data.reserve(out->byte_data.size() + static_cast<std::size_t>(total));
      out->byte_offsets.reserve(out->byte_offsets.size() + count);
      const char* src = dictionary_.byte_data.data();
      std::int64_t end = out->byte_offsets.back();
      for (std::size_t i = 0; i < count; ++i) {
        const std::int64_t b = offs[indices[i]];
        const std::int64_t len = offs[indices[i] + 1] - b;
        out->byte_data.append(src + b, static_cast<std::size_t>(len));
        end += len;
        out->byte_offsets.push_back(end);
      }
      return Status::OK();
    }
  }
  return Corrupt("unknown physical type");
}

Status ColumnChunkDecoder::DecodeValues(Encoding encoding, std::string_view data, std::size_t count,
                                        ColumnData* out) {
  const PhysicalType type = leaf_.physical_type;
  const std::size_t fixed_width = FixedWidthOf(leaf_);
  if (type == PhysicalType::kFixedLenByteArray && fixed_width == 0) {
    return Corrupt("FIXED_LEN_BYTE_ARRAY column '" + leaf_.dotted_path() +
                   "' has no positive type_length");
  }
  auto invalid = [&]() {
    return Corrupt("encoding " + std::string(EncodingName(encoding)) + " is not valid for " +
                   std::string(PhysicalTypeName(type)));
  };
  switch (encoding) {
    case Encoding::kPlain:
      switch (type) {
        case PhysicalType::kBoolean: {
          if (count / 8 > data.size()) {
            return Corrupt("PLAIN BOOLEAN: " + std::to_string(count) + " values exceed the page");
          }
          GEOLAKE_RETURN_NOT_OK(Reserve(static_cast<std::int64_t>(count)));
          const std::size_t old = out->bool_values.size();
          out->bool_values.resize(old + count);
          return DecodePlainBoolean(AsBytes(data), count, out->bool_values.data() + old);
        }
        case PhysicalType::kInt32:
          return AppendPlain(data, count, &out->int32_values);
        case PhysicalType::kInt64:
          return AppendPlain(data, count, &out->int64_values);
        case PhysicalType::kFloat:
          return AppendPlain(data, count, &out->float_values);
        case PhysicalType::kDouble:
          return AppendPlain(data, count, &out->double_values);
        case PhysicalType::kByteArray:
          GEOLAKE_RETURN_NOT_OK(
              Reserve(static_cast<std::int64_t>(data.size() + 8 * std::min(count, data.size()))));
          return DecodePlainByteArray(AsBytes(data), count, {&out->byte_offsets, &out->byte_data});
        case PhysicalType::kInt96:
        case PhysicalType::kFixedLenByteArray: {
          if (count > data.size() / fixed_width) {
            return Corrupt("PLAIN: " + std::to_string(count) + " values of " +
                           std::to_string(fixed_width) + " bytes exceed the page");
          }
          const std::size_t old = out->byte_data.size();
          out->byte_data.resize(old + count * fixed_width);
          GEOLAKE_RETURN_NOT_OK(
              DecodePlainFixed(AsBytes(data), count, static_cast<int>(fixed_width),
                               reinterpret_cast<std::uint8_t*>(out->byte_data.data()) + old));
          AppendFixedOffsets(count, fixed_width, out);
          return Status::OK();
        }
      }
      return invalid();
    case Encoding::kPlainDictionary:
    case Encoding::kRleDictionary:
      return AppendFromDictionary(data, count, out);
    case Encoding::kRle: {
      if (type != PhysicalType::kBoolean) return invalid();
      ByteSpan body;
      std::size_t used;
      GEOLAKE_RETURN_NOT_OK(ReadLengthPrefixed(AsBytes(data), &body, &used));
      GEOLAKE_RETURN_NOT_OK(Reserve(static_cast<std::int64_t>(count)));
      const std::size_t old = out->bool_values.size();
      out->bool_values.resize(old + count);
      RleBitPackedDecoder decoder(body, 1);
      return decoder.Decode(out->bool_values.data() + old, count);
    }
    case Encoding::kDeltaBinaryPacked: {
      if (type != PhysicalType::kInt32 && type != PhysicalType::kInt64) return invalid();
      GEOLAKE_RETURN_NOT_OK(Reserve(static_cast<std::int64_t>(count * fixed_width)));
      if (type == PhysicalType::kInt32) {
        DeltaBinaryPackedDecoder<std::int32_t> decoder;
        GEOLAKE_RETURN_NOT_OK(decoder.Init(AsBytes(data)));
        if (decoder.total_values() < count) {
          return Corrupt("DELTA_BINARY_PACKED holds " + std::to_string(decoder.total_values()) +
                         " values, the page needs " + std::to_string(count));
        }
        const std::size_t old = out->int32_values.size();
        out->int32_values.resize(old + count);
        return decoder.Decode(out->int32_values.data() + old, count);
      }
      DeltaBinaryPackedDecoder<std::int64_t> decoder;
      GEOLAKE_RETURN_NOT_OK(decoder.Init(AsBytes(data)));
      if (decoder.total_values() < count) {
        return Corrupt("DELTA_BINARY_PACKED holds " + std::to_string(decoder.total_values()) +
                       " values, the page needs " + std::to_string(count));
      }
      const std::size_t old = out->int64_values.size();
      out->int64_values.resize(old + count);
      return decoder.Decode(out->int64_values.data() + old, count);
    }
    case Encoding::kDeltaLengthByteArray:
      if (type != PhysicalType::kByteArray) return invalid();
      GEOLAKE_RETURN_NOT_OK(Reserve(static_cast<std::int64_t>(data.size() + 8 * count)));
      return DecodeDeltaLengthByteArray(AsBytes(data), count,
                                        {&out->byte_offsets, &out->byte_data});
    case Encoding::kDeltaByteArray: {
      if (type != PhysicalType::kByteArray && type != PhysicalType::kFixedLenByteArray) {
        return invalid();
      }
      const std::int64_t budget = options_.max_decoded_bytes - decoded_bytes_;
      const std::size_t old_values = static_cast<std::size_t>(out->num_values());
      const std::size_t old_bytes = out->byte_data.size();
      GEOLAKE_RETURN_NOT_OK(
          DecodeDeltaByteArray(AsBytes(data), count, {&out->byte_offsets, &out->byte_data},
                               static_cast<std::size_t>(std::max<std::int64_t>(budget, 0))));
      GEOLAKE_RETURN_NOT_OK(
          Reserve(static_cast<std::int64_t>(out->byte_data.size() - old_bytes + 8 * count)));
      if (type == PhysicalType::kFixedLenByteArray) {
        for (std::size_t i = old_values; i < old_values + count; ++i) {
          if (out->byte_offsets[i + 1] - out->byte_offsets[i] !=
              static_cast<std::int64_t>(fixed_width)) {
            return Corrupt("DELTA_BYTE_ARRAY value of " +
                           std::to_string(out->byte_offsets[i + 1] - out->byte_offsets[i]) +
                           " bytes in a FIXED_LEN_BYTE_ARRAY(" + std::to_string(fixed_width) +
                           ") column");
          }
        }
      }
      return Status::OK();
    }
    case Encoding::kByteStreamSplit: {
      if (type == PhysicalType::kBoolean || type == PhysicalType::kByteArray ||
          type == PhysicalType::kInt96) {
        return invalid();
      }
      if (count > data.size() / fixed_width) {
        return Corrupt("BYTE_STREAM_SPLIT: " + std::to_string(count) + " values exceed the page");
      }
      GEOLAKE_RETURN_NOT_OK(Reserve(static_cast<std::int64_t>(count * fixed_width)));
      if (type == PhysicalType::kFixedLenByteArray) {
        const std::size_t old = out->byte_data.size();
        out->byte_data.resize(old + count * fixed_width);
        GEOLAKE_RETURN_NOT_OK(
            DecodeByteStreamSplit(AsBytes(data), count, static_cast<int>(fixed_width),
                                  reinterpret_cast<std::uint8_t*>(out->byte_data.data()) + old));
        AppendFixedOffsets(count, fixed_width, out);
        return Status::OK();
      }
      const std::size_t old = static_cast<std::size_t>(out->num_values());
      ResizeFixed(out, old + count);
      return DecodeByteStreamSplit(AsBytes(data), count, static_cast<int>(fixed_width),
                                   FixedValueBuffer(out, old));
    }
    default:
      return Status::NotImplemented("encoding " + std::string(EncodingName(encoding)));
  }
}

}  // namespace geolake::parquet
