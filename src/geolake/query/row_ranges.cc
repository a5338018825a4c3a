#include "geolake/query/row_ranges.h"

#include <algorithm>

namespace geolake::query::internal {

Ranges Intersect(const Ranges& a, const Ranges& b) {
  Ranges out;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const std::int64_t lo = std::max(a[i].begin, b[j].begin);
    const std::int64_t hi = std::min(a[i].end, b[j].end);
    if (lo < hi) out.push_back({lo, hi});
    (a[i].end < b[j].end) ? ++i : ++j;
  }
  return out;
}

Ranges Union(const Ranges& a, const Ranges& b) {
  Ranges all = a;
  all.insert(all.end(), b.begin(), b.end());
  std::sort(all.begin(), all.end(),
            [](const RowRange& x, const RowRange& y) { return x.begin < y.begin; });
  Ranges out;
  for (const RowRange& r : all) {
    if (!out.empty() && r.begin <= out.back().end) {
      out.back().end = std::max(out.back().end, r.end);
    } else {
      out.push_back(r);
    }
  }
  return out;
}

Ranges Subtract(const Ranges& a, const Ranges& b) {
  Ranges out;
  std::size_t j = 0;
  for (const RowRange& r : a) {
    while (j < b.size() && b[j].end <= r.begin) ++j;
    std::int64_t lo = r.begin;
    for (std::size_t k = j; k < b.size() && b[k].begin < r.end; ++k) {
      if (b[k].begin > lo) out.push_back({lo, b[k].begin});
      lo = std::max(lo, b[k].end);
    }
    if (lo < r.end) out.push_back({lo, r.end});
  }
  return out;
}

}  // namespace geolake::query::internal
