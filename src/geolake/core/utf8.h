/// \file
/// UTF-8 helpers shared by the Parquet statistics truncation and the Iceberg bound truncation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "geolake/core/hex.h"

namespace geolake {

/// \brief Append the UTF-8 encoding of code point `cp` (at most U+10FFFF) to `out`.
inline void AppendUtf8(std::uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

/// \brief The length of the well-formed UTF-8 sequence starting at s[i] (1-4 bytes), or 0 when
/// the bytes there are not one: a stray continuation byte, a truncated sequence, an overlong
/// form, a surrogate or a code point above U+10FFFF (RFC 3629 section 4, Table 3-7 of the
/// Unicode standard).
inline std::size_t Utf8SequenceLength(std::string_view s, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b0 = byte(i);
  if (b0 < 0x80) return 1;
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return n;
}

/// \brief Whether `s` is entirely well-formed UTF-8.
inline bool IsValidUtf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = Utf8SequenceLength(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

/// \brief `s` with every byte that does not start a well-formed UTF-8 sequence replaced by
/// U+FFFD (the Unicode replacement character); `*replaced` (when given) counts them.
inline std::string ReplaceInvalidUtf8(std::string_view s, std::size_t* replaced = nullptr) {
  std::string out;
  out.reserve(s.size());
  std::size_t count = 0;
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = Utf8SequenceLength(s, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++count;
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  if (replaced != nullptr) *replaced = count;
  return out;
}

/// \brief `s` fit to print in an error message: well-formed UTF-8 other than control
/// characters is kept, every other byte is written as \xNN, so bytes read from a damaged file
/// never reach a terminal raw.
inline std::string EscapeForMessage(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = Utf8SequenceLength(s, i);
    const auto b = static_cast<unsigned char>(s[i]);
    if (n == 0 || (n == 1 && (b < 0x20 || b == 0x7F))) {
      out += "\\x";
      AppendHexByte(b, &out);
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

}  // namespace geolake
