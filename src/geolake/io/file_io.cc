#include "geolake/io/file_io.h"

#include <string>

namespace geolake::io {

Result<std::string> FileIO::ReadAll(const std::string& path) const {
  GEOLAKE_ASSIGN_OR_RETURN(std::unique_ptr<RandomAccessFile> file, OpenRead(path));
  std::string out;
  GEOLAKE_RETURN_NOT_OK(file->ReadAt(0, file->size(), &out));
  return out;
}

Status FileIO::WriteAll(const std::string& path, std::string_view data, bool overwrite) const {
  GEOLAKE_ASSIGN_OR_RETURN(std::unique_ptr<OutputStream> stream, OpenWrite(path, overwrite));
  Status st = stream->Write(data);
  if (!st.ok()) {
    stream->Abort();
    return st;
  }
  return stream->Close();
}

Status FileIO::LinkOnce(const std::string& existing, const std::string& new_path) const {
  GEOLAKE_ASSIGN_OR_RETURN(std::string bytes, ReadAll(existing));
  return WriteAll(new_path, bytes, /*overwrite=*/false);
}

bool IsTempFilePath(std::string_view path) {
  const std::size_t slash = path.rfind('/');
  const std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  return name.size() > kTempFileSuffix.size() + 1 && name.front() == '.' &&
         name.ends_with(kTempFileSuffix);
}

}  // namespace geolake::io
