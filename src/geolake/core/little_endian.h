/// \file
/// Fixed-width numbers in little-endian (and, for WKB's big-endian variant, big-endian) byte
/// order: load from and store to raw bytes, and append to a string. Every format geolake reads
/// or writes (Parquet PLAIN values and lengths, Thrift doubles, WKB, Avro floats, Iceberg
/// single-value bounds, FlatGeobuf) stores its numbers this way; this is the one place that
/// copies them. Header-only and inline: each call is one memcpy (one load or store on x86-64 and
/// aarch64) plus a byte swap only where the order differs from the host's.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

namespace geolake {

namespace internal {

template <typename T>
concept FixedWidthNumber = std::is_arithmetic_v<T> &&
    (sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8);

// The unsigned integer as wide as N bytes (N is 1, 2, 4 or 8).
template <std::size_t N>
using UintOfSize = std::conditional_t<
    N == 1, std::uint8_t,
    std::conditional_t<N == 2, std::uint16_t,
                       std::conditional_t<N == 4, std::uint32_t, std::uint64_t>>>;

template <typename U>
constexpr U ByteSwap(U v) {
  if constexpr (sizeof(U) == 1) {
    return v;
  } else if constexpr (sizeof(U) == 2) {
    return __builtin_bswap16(v);
  } else if constexpr (sizeof(U) == 4) {
    return __builtin_bswap32(v);
  } else {
    return __builtin_bswap64(v);
  }
}

// The bits of `v` in `order`, as an unsigned integer of the same width.
template <std::endian order, FixedWidthNumber T>
UintOfSize<sizeof(T)> ToOrder(T v) {
  using U = UintOfSize<sizeof(T)>;
  const U bits = std::bit_cast<U>(v);
  return order == std::endian::native ? bits : ByteSwap(bits);
}

template <std::endian order, FixedWidthNumber T>
T Load(const void* p) {
  using U = UintOfSize<sizeof(T)>;
  U bits;
  std::memcpy(&bits, p, sizeof(U));
  if constexpr (order != std::endian::native) bits = ByteSwap(bits);
  return std::bit_cast<T>(bits);
}

}  // namespace internal

static_assert(std::endian::native == std::endian::little || std::endian::native == std::endian::big,
              "mixed-endian hosts are not supported");

/// \brief The `T` stored little-endian at `p` (any alignment; sizeof(T) bytes readable).
template <internal::FixedWidthNumber T>
inline T LoadLE(const void* p) {
  return internal::Load<std::endian::little, T>(p);
}

/// \brief The `T` stored big-endian at `p` (any alignment; sizeof(T) bytes readable).
template <internal::FixedWidthNumber T>
inline T LoadBE(const void* p) {
  return internal::Load<std::endian::big, T>(p);
}

/// \brief The `T` at `p` in the byte order a WKB header names (big-endian when `big_endian`).
template <internal::FixedWidthNumber T>
inline T LoadEndian(const void* p, bool big_endian) {
  return big_endian ? LoadBE<T>(p) : LoadLE<T>(p);
}

/// \brief Store `v` little-endian at `p` (any alignment; sizeof(T) bytes writable).
template <internal::FixedWidthNumber T>
inline void StoreLE(T v, void* p) {
  const auto bits = internal::ToOrder<std::endian::little>(v);
  std::memcpy(p, &bits, sizeof(bits));
}

/// \brief Append the sizeof(T) little-endian bytes of `v` to `out`.
template <internal::FixedWidthNumber T>
inline void AppendLE(T v, std::string* out) {
  const auto bits = internal::ToOrder<std::endian::little>(v);
  out->append(reinterpret_cast<const char*>(&bits), sizeof(bits));
}

}  // namespace geolake
