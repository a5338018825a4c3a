#include "geolake/formats/parquet/page_reader.h"

#include <zlib.h>

#include <cstdio>
#include <string>

namespace geolake::parquet {

Status ReadRawPage(std::string_view buffer, std::size_t* pos, std::uint64_t buffer_file_offset,
                   const ReaderOptions& options, RawPage* page) {
  const std::uint64_t offset = buffer_file_offset + *pos;
  auto corrupt = [&](const std::string& what) {
    return Status::CorruptData("page at offset " + std::to_string(offset) + ": " + what);
  };
  if (*pos >= buffer.size()) return corrupt("no bytes left for a page header");
  std::size_t header_size = 0;
  GEOLAKE_RETURN_NOT_OK_CTX(DeserializeThrift(buffer.substr(*pos), &page->header, &header_size),
                            "page header at offset " + std::to_string(offset));
  const PageHeader& h = page->header;
  if (h.compressed_page_size < 0 || h.uncompressed_page_size < 0) {
    return corrupt("negative page size");
  }
  const std::size_t body_begin = *pos + header_size;
  if (static_cast<std::uint64_t>(h.compressed_page_size) > buffer.size() - body_begin) {
    return corrupt("compressed size " + std::to_string(h.compressed_page_size) + " exceeds the " +
                   std::to_string(buffer.size() - body_begin) + " bytes left in the column chunk");
  }
  if (h.uncompressed_page_size > options.max_page_bytes) {
    return corrupt("uncompressed size " + std::to_string(h.uncompressed_page_size) +
                   " exceeds the limit of " + std::to_string(options.max_page_bytes));
  }
  page->stored_body = buffer.substr(body_begin, static_cast<std::size_t>(h.compressed_page_size));
  if (options.verify_page_crc && h.crc.has_value()) {
    // CRC-32 with gzip's polynomial over the page as stored (levels and values, after
    // compression), as parquet.thrift defines PageHeader.crc. A flipped byte in a compressed
    // page otherwise decodes to other values without any error.
    const auto crc = static_cast<std::uint32_t>(
        crc32_z(crc32_z(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(page->stored_body.data()),
                page->stored_body.size()));
    if (crc != static_cast<std::uint32_t>(*h.crc)) {
      char text[96];
      std::snprintf(text, sizeof(text),
                    "CRC mismatch: the header says %08x, the %zu stored bytes "
                    "give %08x",
                    static_cast<std::uint32_t>(*h.crc), page->stored_body.size(), crc);
      return corrupt(text);
    }
  }
  page->file_offset = offset;
  page->header_size = header_size;
  *pos = body_begin + static_cast<std::size_t>(h.compressed_page_size);
  return Status::OK();
}

Status DecompressPageBody(CompressionCodec codec, std::string_view stored,
                          std::int64_t uncompressed_size, const ReaderOptions& options,
                          std::string* scratch, std::string_view* body,
                          PageDecompressor* decompressor) {
  if (codec == CompressionCodec::kUncompressed) {
    if (static_cast<std::int64_t>(stored.size()) != uncompressed_size) {
      return Status::CorruptData("uncompressed page stores " + std::to_string(stored.size()) +
                                 " bytes but declares " + std::to_string(uncompressed_size));
    }
    *body = stored;
    return Status::OK();
  }
  if (uncompressed_size == 0) {  // empty pages: some writers store no compressed stream at all
    *body = std::string_view();
    return Status::OK();
  }
  GEOLAKE_RETURN_NOT_OK(
      decompressor != nullptr
          ? decompressor->Decompress(codec, stored, uncompressed_size, scratch,
                                     options.max_page_bytes)
          : Decompress(codec, stored, uncompressed_size, scratch, options.max_page_bytes));
  *body = *scratch;
  return Status::OK();
}

}  // namespace geolake::parquet
