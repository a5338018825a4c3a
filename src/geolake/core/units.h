/// \file
/// Sizes and durations as people type them on a command line or in a policy file
/// ("--memory 8GiB", "--older-than 30d") and as geolake prints them in progress lines and
/// reports.
///
/// Size rule: the IEC suffixes KiB, MiB, GiB, TiB are powers of 1024; the SI suffixes KB, MB,
/// GB, TB are powers of 1000; a bare letter k/K, M, G, T (optionally followed by "i") means the
/// binary unit, because memory budgets and file sizes are usually meant that way ("64k" is
/// 65536). Suffixes are case-insensitive ("mib" = "MiB"); "B" alone means bytes; no suffix
/// means bytes. A fraction is allowed and rounded to the nearest byte ("1.5GB" = 1500000000).
///
/// Duration rule: one or more <number><unit> parts, summed, with units ms, s, m (minutes),
/// h, d (24 h) and w (7 d): "1h30m", "90s", "1500ms", "1.5h". A bare "0" is zero; any other
/// number needs a unit.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "geolake/core/result.h"

namespace geolake {

/// \brief Parse a byte size such as "128MiB", "1.5GB", "64k" or "4096".
///
/// Errors: kInvalidArgument naming the text for an empty string, a negative or malformed
/// number, an unknown suffix, or a value above INT64_MAX bytes.
Result<std::int64_t> ParseSize(std::string_view text);

/// \brief Parse a duration such as "30d", "12h", "90s", "1500ms" or "1h30m".
///
/// Errors: kInvalidArgument naming the text for an empty string, a missing or unknown unit,
/// a negative or malformed number, or an overflow.
Result<std::chrono::milliseconds> ParseDuration(std::string_view text);

/// \brief Format bytes with binary units and at most one decimal: "512 B", "1.5 KiB",
/// "128 MiB", "2.0 GiB". Values of 100 units or more print without a decimal.
std::string FormatSize(std::int64_t bytes);

/// \brief Format a duration compactly: "250ms", "1.5s", "59s", "1m30s", "2h05m", "3d04h".
///
/// Below one minute the seconds keep up to three decimals; above it the two largest units are
/// shown (the second zero-padded), which is what a progress line and a report need.
std::string FormatDuration(std::chrono::milliseconds duration);

}  // namespace geolake
