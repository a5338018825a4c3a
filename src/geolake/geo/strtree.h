/// \file
/// StrTree: a static R-tree over envelopes, packed with the Sort-Tile-Recursive algorithm
/// (Leutenegger et al., 1997), for "which items' boxes intersect this box" queries in spatial
/// joins and partition pruning. Built once, then read-only, so any number of threads can query
/// one tree without locks.
///
/// Why our own rather than GEOSSTRtree_r: GEOS 3.11 builds its tree lazily inside the first
/// query and has no public "build now" call (GEOSSTRtree_build arrived in 3.12), so two threads
/// racing on the first query would both mutate it; its callbacks also need a GEOS context per
/// querying thread. A packed tree over plain Envelopes is about 150 lines, needs no geometry
/// library, and is immutable by construction after Build().
#pragma once

#include <cstdint>
#include <vector>

#include "geolake/core/result.h"
#include "geolake/geo/envelope.h"

namespace geolake::geo {

/// \brief A packed, immutable R-tree of (envelope, int64 id) items.
///
/// Thread-safety: immutable after Build(); const methods are safe to call concurrently.
class StrTree {
 public:
  struct Item {
    Envelope box;
    int64_t id = 0;
  };

  /// \brief Pack `items` into a tree with at most `node_capacity` children per node.
  ///
  /// Items with an empty box are kept (size() counts them) but no query returns them.
  /// Errors: kInvalidArgument for node_capacity < 2 or an item whose box has an infinite
  /// coordinate (its id is named).
  static Result<StrTree> Build(std::vector<Item> items, int node_capacity = 16);

  /// \brief Call `visit(id)` for every item whose box intersects `query` (touching counts), in
  /// no particular order. An empty query visits nothing.
  template <typename Visitor>
  void Query(const Envelope& query, Visitor&& visit) const;

  /// \brief The ids of all items whose box intersects `query`, in no particular order.
  std::vector<int64_t> Query(const Envelope& query) const;

  size_t size() const { return ids_.size(); }

  /// \brief The union of all item boxes (empty for an empty tree).
  const Envelope& bounds() const { return bounds_; }

  /// \brief Levels above the items (0 for an empty tree); for tests and diagnostics.
  int height() const { return static_cast<int>(levels_.size()); }

 private:
  struct Node {
    Envelope box;
    uint32_t begin = 0;  // children: nodes of the level below, or items for level 0
    uint32_t end = 0;
  };

  StrTree() = default;

  std::vector<Envelope> boxes_;  // items in packed order
  std::vector<int64_t> ids_;
  std::vector<std::vector<Node>> levels_;  // levels_[0] are leaves; levels_.back() the roots
  Envelope bounds_;
};

template <typename Visitor>
void StrTree::Query(const Envelope& query, Visitor&& visit) const {
  if (levels_.empty() || !query.Intersects(bounds_)) return;
  // Depth-first over (level, node) pairs; a small explicit stack avoids recursion.
  struct Frame {
    int level;
    uint32_t node;
  };
  std::vector<Frame> stack;
  const int top = static_cast<int>(levels_.size()) - 1;
  for (uint32_t i = 0; i < levels_[top].size(); ++i) stack.push_back({top, i});
  while (!stack.empty()) {
    const Frame frame = stack.back();
    stack.pop_back();
    const Node& node = levels_[frame.level][frame.node];
    if (!node.box.Intersects(query)) continue;
    if (frame.level == 0) {
      for (uint32_t i = node.begin; i < node.end; ++i) {
        if (boxes_[i].Intersects(query)) visit(ids_[i]);
      }
    } else {
      for (uint32_t i = node.begin; i < node.end; ++i) stack.push_back({frame.level - 1, i});
    }
  }
}

}  // namespace geolake::geo
