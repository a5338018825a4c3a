#include "geolake/core/hex.h"

#include <string>

namespace geolake {

std::string HexEncode(std::string_view bytes, HexCase letter_case, std::string_view separator) {
  std::string out;
  if (bytes.empty()) return out;
  out.reserve(bytes.size() * (2 + separator.size()));
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (i > 0) out.append(separator);
    AppendHexByte(static_cast<std::uint8_t>(bytes[i]), &out, letter_case);
  }
  return out;
}

std::string HexEncode(std::span<const std::uint8_t> bytes, HexCase letter_case,
                      std::string_view separator) {
  return HexEncode(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
                   letter_case, separator);
}

std::string UuidText(std::string_view bytes) {
  std::string hex = HexEncode(bytes);
  for (std::size_t pos : {20, 16, 12, 8}) hex.insert(pos, "-");
  return hex;
}

Result<std::string> HexDecode(std::string_view hex) {
  if (hex.size() % 2 != 0) {
    return Status::InvalidArgument("hex text of " + std::to_string(hex.size()) +
                                   " digits: not a whole number of bytes");
  }
  std::string out;
  out.reserve(hex.size() / 2);
  for (std::size_t i = 0; i < hex.size(); i += 2) {
    const int high = HexDigitValue(hex[i]);
    const int low = HexDigitValue(hex[i + 1]);
    if (high < 0 || low < 0) {
      return Status::InvalidArgument("hex text: not a hex digit at position " +
                                     std::to_string(high < 0 ? i : i + 1));
    }
    out.push_back(static_cast<char>((high << 4) | low));
  }
  return out;
}

}  // namespace geolake
