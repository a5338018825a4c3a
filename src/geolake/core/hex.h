/// \file
/// Hexadecimal text of bytes and back: the one hex codec of the code base (value text in `cat`,
/// `inspect` and query CSV, Iceberg UUID and binary bounds, byte escapes in messages and JSON,
/// and the hex that tests compare bytes with).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "geolake/core/result.h"

namespace geolake {

enum class HexCase { kLower, kUpper };

/// \brief Append the two hex digits of `byte` to `out` (high nibble first).
inline void AppendHexByte(std::uint8_t byte, std::string* out,
                          HexCase letter_case = HexCase::kLower) {
  const char* digits = letter_case == HexCase::kLower ? "0123456789abcdef" : "0123456789ABCDEF";
  out->push_back(digits[byte >> 4]);
  out->push_back(digits[byte & 0xF]);
}

/// \brief The hex text of `bytes`, two digits a byte, with `separator` between bytes
/// ("01 ff" for separator " "); lower-case unless asked otherwise.
std::string HexEncode(std::string_view bytes, HexCase letter_case = HexCase::kLower,
                      std::string_view separator = {});
/// \brief The same for a byte span.
std::string HexEncode(std::span<const std::uint8_t> bytes, HexCase letter_case = HexCase::kLower,
                      std::string_view separator = {});

/// \brief The 8-4-4-4-12 text of a 16-byte UUID ("f79c3e09-677c-4bbd-a479-3f349cb785e7").
/// Precondition: bytes.size() == 16.
std::string UuidText(std::string_view bytes);

/// \brief The value of one hex digit (either case), or -1 when `c` is not one.
inline int HexDigitValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/// \brief The bytes of hex text without separators (either case). kInvalidArgument for an
/// odd number of digits or a character that is not a hex digit, naming its position.
Result<std::string> HexDecode(std::string_view hex);

}  // namespace geolake
