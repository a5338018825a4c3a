/// \file
/// Test helper (header only, never installed): deterministic polygons shaped like OSM's giant
/// land polygons - one large shell and many small holes - with a few broken rings of the kinds
/// real data has, for the ring-level make-valid tests (ring_repair_test.cc, and the slow test
/// that times a polygon of a million vertices). The same seed and spec give the same
/// coordinates on every platform: the random numbers come from std::mt19937_64, whose output
/// the standard fixes, turned into doubles here (not by std:: distributions, which vary).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numbers>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace geolake::geo::testing {

/// \brief What to generate. Counts of broken rings are at most a few each; every other hole is
/// a small star-shaped ring (valid alone) in a grid cell of its own, touching nothing.
struct HoleyPolygonSpec {
  std::uint64_t seed = 1;
  int shell_vertices = 4000;
  int holes = 2000;
  int hole_vertices_min = 4;  // distinct points of a normal hole
  int hole_vertices_max = 10;
  int shell_loops = 1;             // small loops where the shell crosses itself
  int bowtie_holes = 3;            // holes crossing themselves
  int holes_touching_shell = 2;    // triangles sharing a vertex with the shell
  int holes_crossing_shell = 2;    // squares half outside the shell
  int overlapping_hole_pairs = 2;  // two squares overlapping in one cell
  int nested_hole_pairs = 2;       // a valid hole inside another valid hole (touching nothing)
  int holes_outside_shell = 2;     // valid squares beyond the shell
  int collapsed_holes = 1;         // zero-area holes (three collinear points)
};

/// \brief The generated polygon: rings (x0, y0, x1, y1, ..., closed; rings[0] is the shell),
/// its ISO WKB, and the number of rings that are valid alone and touch no other ring (the
/// normal holes, the nested pairs, the holes outside; the shell too when nothing breaks or
/// touches it): RingLevelRepair must keep exactly these.
struct HoleyPolygon {
  std::vector<std::vector<double>> rings;
  std::string wkb;
  std::int64_t isolated_valid_rings = 0;
  std::int64_t normal_holes = 0;  // rings[1 .. normal_holes]: valid, touching nothing
  std::int64_t vertices = 0;
};

/// \brief Little-endian ISO WKB of a Polygon with `rings`.
inline std::string PolygonWkb(const std::vector<std::vector<double>>& rings) {
  std::string out;
  const auto put_u32 = [&](std::uint32_t v) {
    char b[4];
    std::memcpy(b, &v, 4);  // little-endian hosts only, as every geolake target
    out.append(b, 4);
  };
  out.push_back(1);
  put_u32(3);
  put_u32(static_cast<std::uint32_t>(rings.size()));
  for (const std::vector<double>& ring : rings) {
    put_u32(static_cast<std::uint32_t>(ring.size() / 2));
    const std::size_t at = out.size();
    out.resize(at + ring.size() * sizeof(double));
    std::memcpy(out.data() + at, ring.data(), ring.size() * sizeof(double));
  }
  return out;
}

/// \brief Generate a polygon as `spec` says (see HoleyPolygonSpec).
inline HoleyPolygon MakeHoleyPolygon(const HoleyPolygonSpec& spec) {
  std::mt19937_64 rng(spec.seed);
  const auto uniform = [&] { return static_cast<double>(rng() >> 11) * 0x1.0p-53; };  // [0, 1)
  const auto below = [&](int n) { return static_cast<int>(uniform() * n); };
  constexpr double kPi = std::numbers::pi;
  constexpr double kRadius = 1000;
  // The shell: r(theta) between 0.88 and 1.12 of kRadius, counter-clockwise.
  const auto shell_radius = [&](double t) {
    return kRadius * (1 + 0.08 * std::sin(5 * t) + 0.04 * std::sin(13 * t + 1));
  };
  const int n = std::max(spec.shell_vertices, 16);
  std::vector<std::pair<double, double>> shell;
  shell.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    const double t = 2 * kPi * i / n;
    shell.emplace_back(shell_radius(t) * std::cos(t), shell_radius(t) * std::sin(t));
  }
  // Shell vertices used by loops and by holes at the shell, at least 8 apart.
  std::vector<int> used;
  const auto pick_vertex = [&] {
    for (;;) {
      const int i = 4 + below(n - 8);
      if (std::none_of(used.begin(), used.end(), [&](int u) { return std::abs(u - i) < 8; })) {
        used.push_back(i);
        return i;
      }
    }
  };
  HoleyPolygon out;
  std::vector<double> shell_ring;
  std::vector<int> loop_at;
  for (int k = 0; k < spec.shell_loops; ++k) loop_at.push_back(pick_vertex());
  for (int i = 0; i < n; ++i) {
    const auto [x, y] = shell[static_cast<std::size_t>(i)];
    shell_ring.push_back(x);
    shell_ring.push_back(y);
    if (std::find(loop_at.begin(), loop_at.end(), i) != loop_at.end()) {
      // p -> q1 -> q2 -> next: the first and last segments cross (a small figure eight).
      const auto [nx, ny] = shell[static_cast<std::size_t>(i + 1)];
      const double dx = nx - x, dy = ny - y;
      const double h = 0.5;  // along the outward normal (-dy, dx) scaled: loop bulges out
      shell_ring.insert(shell_ring.end(), {x + 0.75 * dx + h * dy, y + 0.75 * dy - h * dx,
                                           x + 0.25 * dx + h * dy, y + 0.25 * dy - h * dx});
    }
  }
  shell_ring.push_back(shell_ring[0]);
  shell_ring.push_back(shell_ring[1]);
  out.rings.push_back(std::move(shell_ring));

  // Grid cells wholly inside 0.85 kRadius (the shell never comes closer than 0.88).
  const double inner = 0.85 * kRadius;
  const int special = 2 * spec.overlapping_hole_pairs + spec.bowtie_holes +
                      2 * spec.nested_hole_pairs + spec.collapsed_holes;
  const int cells_needed = spec.holes + spec.overlapping_hole_pairs + spec.nested_hole_pairs;
  double cell = inner * std::sqrt(kPi / (1.2 * std::max(cells_needed, 1)));
  std::vector<std::pair<double, double>> centers;
  for (;;) {
    centers.clear();
    const int half = static_cast<int>(inner / cell) + 1;
    for (int gy = -half; gy < half; ++gy) {
      for (int gx = -half; gx < half; ++gx) {
        const double x0 = gx * cell, y0 = gy * cell;
        const double far_x = std::max(std::abs(x0), std::abs(x0 + cell));
        const double far_y = std::max(std::abs(y0), std::abs(y0 + cell));
        if (far_x * far_x + far_y * far_y < inner * inner) {
          centers.emplace_back(x0 + cell / 2, y0 + cell / 2);
        }
      }
    }
    if (static_cast<int>(centers.size()) >= cells_needed) break;
    cell *= 0.97;
  }
  // Deterministic shuffle (Fisher-Yates on our own numbers).
  for (std::size_t i = centers.size(); i > 1; --i) {
    std::swap(centers[i - 1],
              centers[static_cast<std::size_t>(uniform() * static_cast<double>(i))]);
  }
  std::size_t next_cell = 0;
  const auto square = [](double cx, double cy, double half) {
    return std::vector<double>{cx - half, cy - half, cx - half, cy + half, cx + half,
                               cy + half, cx + half, cy - half, cx - half, cy - half};
  };
  // Normal holes: star-shaped around the cell center (so simple), clockwise.
  const int normal = std::max(0, spec.holes - special);
  for (int k = 0; k < normal; ++k) {
    const auto [cx, cy] = centers[next_cell++];
    const int m =
        spec.hole_vertices_min + below(spec.hole_vertices_max - spec.hole_vertices_min + 1);
    std::vector<double> ring;
    for (int j = 0; j < m; ++j) {
      const double t = -2 * kPi * (j + 0.4 * uniform()) / m;
      const double r = cell * (0.15 + 0.2 * uniform());
      ring.push_back(cx + r * std::cos(t));
      ring.push_back(cy + r * std::sin(t));
    }
    ring.push_back(ring[0]);
    ring.push_back(ring[1]);
    out.rings.push_back(std::move(ring));
  }
  out.isolated_valid_rings += normal;
  out.normal_holes = normal;
  for (int k = 0; k < spec.bowtie_holes; ++k) {
    const auto [cx, cy] = centers[next_cell++];
    const double d = 0.3 * cell;
    out.rings.push_back(
        {cx - d, cy - d, cx + d, cy + d, cx + d, cy - d, cx - d, cy + d, cx - d, cy - d});
  }
  for (int k = 0; k < spec.overlapping_hole_pairs; ++k) {
    const auto [cx, cy] = centers[next_cell++];
    out.rings.push_back(square(cx - 0.1 * cell, cy - 0.1 * cell, 0.25 * cell));
    out.rings.push_back(square(cx + 0.1 * cell, cy + 0.1 * cell, 0.25 * cell));
  }
  for (int k = 0; k < spec.nested_hole_pairs; ++k) {
    const auto [cx, cy] = centers[next_cell++];
    out.rings.push_back(square(cx, cy, 0.4 * cell));
    out.rings.push_back({cx - 0.1 * cell, cy - 0.1 * cell, cx + 0.1 * cell, cy - 0.1 * cell, cx,
                         cy + 0.1 * cell, cx - 0.1 * cell, cy - 0.1 * cell});
  }
  out.isolated_valid_rings += 2 * spec.nested_hole_pairs;
  for (int k = 0; k < spec.collapsed_holes; ++k) {
    const auto [cx, cy] = centers[next_cell++];
    out.rings.push_back({cx, cy, cx + 0.1 * cell, cy, cx + 0.2 * cell, cy, cx, cy});
  }
  // Holes at the shell: the inward normal at a vertex points to the origin, roughly.
  for (int k = 0; k < spec.holes_touching_shell; ++k) {
    const auto [x, y] = shell[static_cast<std::size_t>(pick_vertex())];
    const double len = std::hypot(x, y), ux = -x / len, uy = -y / len, d = 8;
    const double c = std::cos(0.4), s = std::sin(0.4);
    out.rings.push_back({x, y, x + d * (c * ux - s * uy), y + d * (s * ux + c * uy),
                         x + d * (c * ux + s * uy), y + d * (-s * ux + c * uy), x, y});
  }
  for (int k = 0; k < spec.holes_crossing_shell; ++k) {
    const auto [x, y] = shell[static_cast<std::size_t>(pick_vertex())];
    out.rings.push_back(square(x, y, 3));
  }
  for (int k = 0; k < spec.holes_outside_shell; ++k) {
    const double t = 2 * kPi * (k + 0.5 * uniform()) / spec.holes_outside_shell;
    out.rings.push_back(square(1.4 * kRadius * std::cos(t), 1.4 * kRadius * std::sin(t), 10));
  }
  out.isolated_valid_rings += spec.holes_outside_shell;
  if (spec.shell_loops == 0 && spec.holes_touching_shell == 0 && spec.holes_crossing_shell == 0) {
    ++out.isolated_valid_rings;
  }
  for (const std::vector<double>& ring : out.rings) {
    out.vertices += static_cast<std::int64_t>(ring.size() / 2);
  }
  out.wkb = PolygonWkb(out.rings);
  return out;
}

}  // namespace geolake::geo::testing
