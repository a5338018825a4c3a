#include "geolake/formats/parquet/statistics.h"

#include <cmath>
#include <cstring>
#include <string>

#include "geolake/core/little_endian.h"
#include "geolake/core/utf8.h"

namespace geolake::parquet {
namespace {

// A PLAIN bound of a fixed-width type (callers check the width).
template <typename T>
T Load(std::string_view bytes) {
  return LoadLE<T>(bytes.data());
}

template <typename T>
std::string Store(T v) {
  std::string out;
  AppendLE(v, &out);
  return out;
}

template <typename T>
int Cmp(T a, T b) {
  return a < b ? -1 : (b < a ? 1 : 0);
}

int CompareBytes(std::string_view a, std::string_view b) {
  // std::string_view::compare uses char_traits<char>, which compares as unsigned char.
  const int c = a.compare(b);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

// Decode the UTF-8 code point ending at `end` (exclusive); returns its start, or npos if the
// bytes before `end` are not a well-formed sequence.
std::size_t LastCodePointStart(std::string_view s, std::size_t end) {
  std::size_t start = end;
  while (start > 0) {
    --start;
    if ((static_cast<unsigned char>(s[start]) & 0xC0) != 0x80) return start;
    if (end - start >= 4) break;
  }
  return std::string_view::npos;
}

std::uint32_t DecodeCodePoint(std::string_view s) {
  const auto b0 = static_cast<unsigned char>(s[0]);
  if (b0 < 0x80) return b0;
  int n = (b0 >= 0xF0) ? 3 : (b0 >= 0xE0) ? 2 : 1;
  std::uint32_t cp = b0 & (0x3F >> n);
  for (int i = 1; i <= n && i < static_cast<int>(s.size()); ++i) {
    cp = (cp << 6) | (static_cast<unsigned char>(s[i]) & 0x3F);
  }
  return cp;
}

bool IsUtf8Logical(const std::optional<LogicalType>& t) {
  return t.has_value() &&
         (t->kind == LogicalType::Kind::kString || t->kind == LogicalType::Kind::kJson ||
          t->kind == LogicalType::Kind::kEnum);
}

}  // namespace

SortOrder SortOrderOf(PhysicalType type, const std::optional<LogicalType>& logical_type,
                      const std::optional<ConvertedType>& converted_type) {
  using K = LogicalType::Kind;
  if (logical_type.has_value()) {
    switch (logical_type->kind) {
      case K::kGeometry:
      case K::kGeography:
      case K::kVariant:
      case K::kMap:
      case K::kList:
      case K::kUnrecognized:
        return SortOrder::kUndefined;
      case K::kInteger:
        return logical_type->is_signed ? SortOrder::kSigned : SortOrder::kUnsigned;
      case K::kDecimal:
        // Binary decimals are signed big-endian two's complement; we do not order them.
        return (type == PhysicalType::kInt32 || type == PhysicalType::kInt64)
                   ? SortOrder::kSigned
                   : SortOrder::kUndefined;
      case K::kFloat16:
        return SortOrder::kUndefined;
      default:
        break;
    }
  } else if (converted_type.has_value()) {
    switch (*converted_type) {
      case ConvertedType::kUint8:
      case ConvertedType::kUint16:
      case ConvertedType::kUint32:
      case ConvertedType::kUint64:
        return SortOrder::kUnsigned;
      case ConvertedType::kInterval:
        return SortOrder::kUndefined;
      case ConvertedType::kDecimal:
        return (type == PhysicalType::kInt32 || type == PhysicalType::kInt64)
                   ? SortOrder::kSigned
                   : SortOrder::kUndefined;
      default:
        break;
    }
  }
  switch (type) {
    case PhysicalType::kBoolean:
    case PhysicalType::kInt32:
    case PhysicalType::kInt64:
    case PhysicalType::kFloat:
    case PhysicalType::kDouble:
      return SortOrder::kSigned;
    case PhysicalType::kByteArray:
    case PhysicalType::kFixedLenByteArray:
      return SortOrder::kUnsigned;
    case PhysicalType::kInt96:
      return SortOrder::kUndefined;
  }
  return SortOrder::kUndefined;
}

int CompareEncodedValues(PhysicalType type, SortOrder order, std::string_view a,
                         std::string_view b) {
  const bool unsigned_order = order == SortOrder::kUnsigned;
  switch (type) {
    case PhysicalType::kBoolean:
      if (a.size() == 1 && b.size() == 1) return Cmp(a[0] != 0, b[0] != 0);
      break;
    case PhysicalType::kInt32:
      if (a.size() == 4 && b.size() == 4) {
        return unsigned_order ? Cmp(Load<std::uint32_t>(a), Load<std::uint32_t>(b))
                              : Cmp(Load<std::int32_t>(a), Load<std::int32_t>(b));
      }
      break;
    case PhysicalType::kInt64:
      if (a.size() == 8 && b.size() == 8) {
        return unsigned_order ? Cmp(Load<std::uint64_t>(a), Load<std::uint64_t>(b))
                              : Cmp(Load<std::int64_t>(a), Load<std::int64_t>(b));
      }
      break;
    case PhysicalType::kFloat:
      if (a.size() == 4 && b.size() == 4) return Cmp(Load<float>(a), Load<float>(b));
      break;
    case PhysicalType::kDouble:
      if (a.size() == 8 && b.size() == 8) return Cmp(Load<double>(a), Load<double>(b));
      break;
    default:
      break;
  }
  return CompareBytes(a, b);
}

std::string TruncateLowerBound(std::string_view value, std::size_t max_bytes, bool is_utf8) {
  if (value.size() <= max_bytes) return std::string(value);
  std::size_t cut = max_bytes;
  if (is_utf8) {
    // Back off to the start of a code point.
    while (cut > 0 && (static_cast<unsigned char>(value[cut]) & 0xC0) == 0x80) --cut;
  }
  return std::string(value.substr(0, cut));
}

std::optional<std::string> TruncateUpperBound(std::string_view value, std::size_t max_bytes,
                                              bool is_utf8) {
  if (value.size() <= max_bytes) return std::string(value);
  if (!is_utf8) {
    std::string out(value.substr(0, max_bytes));
    while (!out.empty()) {
      auto& last = reinterpret_cast<unsigned char&>(out.back());
      if (last != 0xFF) {
        ++last;
        return out;
      }
      out.pop_back();
    }
    return std::nullopt;
  }
  std::size_t cut = max_bytes;
  while (cut > 0 && (static_cast<unsigned char>(value[cut]) & 0xC0) == 0x80) --cut;
  std::string_view prefix = value.substr(0, cut);
  // Increment the last code point that can be incremented, dropping the ones after it. UTF-8
  // byte order equals code point order, so the result exceeds every string with this prefix.
  while (!prefix.empty()) {
    const std::size_t start = LastCodePointStart(prefix, prefix.size());
    if (start == std::string_view::npos) return std::nullopt;  // not valid UTF-8
    std::uint32_t cp = DecodeCodePoint(prefix.substr(start));
    std::uint32_t next = cp + 1;
    if (next == 0xD800) next = 0xE000;  // skip surrogates
    if (next <= 0x10FFFF) {
      std::string out(prefix.substr(0, start));
      ::geolake::AppendUtf8(next, &out);
      if (out.size() <= max_bytes) return out;
    }
    prefix = prefix.substr(0, start);
  }
  return std::nullopt;
}

StatisticsAccumulator::StatisticsAccumulator(const LeafColumn& leaf)
    : type_(leaf.physical_type),
      order_(SortOrderOf(leaf)),
      is_utf8_(IsUtf8Logical(leaf.logical_type)) {}

void StatisticsAccumulator::Reset() {
  null_count_ = 0;
  nan_count_ = 0;
  num_values_ = 0;
  has_min_max_ = false;
  min_.clear();
  max_.clear();
}

void StatisticsAccumulator::MergeBounds(std::string_view lo, std::string_view hi) {
  if (!has_min_max_) {
    min_.assign(lo);
    max_.assign(hi);
    has_min_max_ = true;
    return;
  }
  if (CompareEncodedValues(type_, order_, lo, min_) < 0) min_.assign(lo);
  if (CompareEncodedValues(type_, order_, hi, max_) > 0) max_.assign(hi);
}

namespace {

template <typename T, typename Less>
bool MinMax(const T* values, std::int64_t n, Less less, T* lo, T* hi) {
  if (n == 0) return false;
  T mn = values[0];
  T mx = values[0];
  for (std::int64_t i = 1; i < n; ++i) {
    if (less(values[i], mn)) mn = values[i];
    if (less(mx, values[i])) mx = values[i];
  }
  *lo = mn;
  *hi = mx;
  return true;
}

template <typename F>
bool FloatMinMax(const F* values, std::int64_t n, F* lo, F* hi, std::int64_t* nans) {
  bool any = false;
  F mn = 0;
  F mx = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const F v = values[i];
    if (std::isnan(v)) {
      ++*nans;
      continue;
    }
    if (!any) {
      mn = mx = v;
      any = true;
    } else {
      if (v < mn) mn = v;
      if (v > mx) mx = v;
    }
  }
  if (!any) return false;
  // A zero minimum is written as -0.0 and a zero maximum as +0.0 (parquet.thrift, ColumnOrder), so
  // that readers never miss the other zero.
  if (mn == 0) mn = -static_cast<F>(0);
  if (mx == 0) mx = static_cast<F>(0);
  *lo = mn;
  *hi = mx;
  return true;
}

}  // namespace

void StatisticsAccumulator::UpdateValues(const ColumnData& column, std::int64_t value_begin,
                                         std::int64_t value_end) {
  const std::int64_t n = value_end - value_begin;
  if (n <= 0) return;
  num_values_ += n;
  if (order_ == SortOrder::kUndefined) return;
  const bool is_unsigned = order_ == SortOrder::kUnsigned;
  switch (type_) {
    case PhysicalType::kBoolean: {
      const std::uint8_t* v = column.bool_values.data() + value_begin;
      bool any_true = false;
      bool any_false = false;
      for (std::int64_t i = 0; i < n; ++i) (v[i] ? any_true : any_false) = true;
      const std::string lo(1, any_false ? '\0' : '\1');
      const std::string hi(1, any_true ? '\1' : '\0');
      MergeBounds(lo, hi);
      return;
    }
    case PhysicalType::kInt32: {
      const std::int32_t* v = column.int32_values.data() + value_begin;
      std::int32_t lo = 0;
      std::int32_t hi = 0;
      if (is_unsigned) {
        MinMax(
            v, n,
            [](std::int32_t a, std::int32_t b) {
              return static_cast<std::uint32_t>(a) < static_cast<std::uint32_t>(b);
            },
            &lo, &hi);
      } else {
        MinMax(
            v, n, [](std::int32_t a, std::int32_t b) { return a < b; }, &lo, &hi);
      }
      MergeBounds(Store(lo), Store(hi));
      return;
    }
    case PhysicalType::kInt64: {
      const std::int64_t* v = column.int64_values.data() + value_begin;
      std::int64_t lo = 0;
      std::int64_t hi = 0;
      if (is_unsigned) {
        MinMax(
            v, n,
            [](std::int64_t a, std::int64_t b) {
              return static_cast<std::uint64_t>(a) < static_cast<std::uint64_t>(b);
            },
            &lo, &hi);
      } else {
        MinMax(
            v, n, [](std::int64_t a, std::int64_t b) { return a < b; }, &lo, &hi);
      }
      MergeBounds(Store(lo), Store(hi));
      return;
    }
    case PhysicalType::kFloat: {
      float lo = 0;
      float hi = 0;
      if (FloatMinMax(column.float_values.data() + value_begin, n, &lo, &hi, &nan_count_)) {
        MergeBounds(Store(lo), Store(hi));
      }
      return;
    }
    case PhysicalType::kDouble: {
      double lo = 0;
      double hi = 0;
      if (FloatMinMax(column.double_values.data() + value_begin, n, &lo, &hi, &nan_count_)) {
        MergeBounds(Store(lo), Store(hi));
      }
      return;
    }
    case PhysicalType::kByteArray:
    case PhysicalType::kFixedLenByteArray: {
      std::string_view lo = column.bytes_at(value_begin);
      std::string_view hi = lo;
      for (std::int64_t i = value_begin + 1; i < value_end; ++i) {
        const std::string_view v = column.bytes_at(i);
        if (CompareBytes(v, lo) < 0) lo = v;
        if (CompareBytes(v, hi) > 0) hi = v;
      }
      MergeBounds(lo, hi);
      return;
    }
    case PhysicalType::kInt96:
      return;
  }
}

void StatisticsAccumulator::Merge(const StatisticsAccumulator& other) {
  null_count_ += other.null_count_;
  nan_count_ += other.nan_count_;
  num_values_ += other.num_values_;
  if (other.has_min_max_) MergeBounds(other.min_, other.max_);
}

Statistics StatisticsAccumulator::ToThrift(std::size_t max_binary_bytes) const {
  Statistics st;
  st.null_count = null_count_;
  if (!has_min_max_) return st;
  const bool is_binary =
      type_ == PhysicalType::kByteArray || type_ == PhysicalType::kFixedLenByteArray;
  if (!is_binary) {
    st.min_value = min_;
    st.max_value = max_;
    return st;
  }
  // FIXED_LEN_BYTE_ARRAY bounds must keep their width, so they are never truncated.
  const std::size_t limit =
      type_ == PhysicalType::kFixedLenByteArray ? std::string::npos : max_binary_bytes;
  st.min_value = TruncateLowerBound(min_, limit, is_utf8_);
  st.is_min_value_exact = st.min_value->size() == min_.size();
  if (auto hi = TruncateUpperBound(max_, limit, is_utf8_)) {
    st.is_max_value_exact = *hi == max_;
    st.max_value = std::move(*hi);
  } else {
    st.max_value = max_;  // no shorter upper bound exists: keep the exact value
    st.is_max_value_exact = true;
  }
  return st;
}

bool StatisticsAccumulator::IndexBounds(std::size_t max_binary_bytes, std::string* min_out,
                                        std::string* max_out) const {
  if (!has_min_max_) return false;
  const Statistics st = ToThrift(max_binary_bytes);
  *min_out = *st.min_value;
  *max_out = *st.max_value;
  return true;
}

}  // namespace geolake::parquet
