#include "geolake/geo/strtree.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numeric>
#include <string>

namespace geolake::geo {
namespace {

// The Sort-Tile-Recursive order of `boxes`: sort by centre x, cut into ceil(sqrt(P)) vertical
// slices of whole nodes (P = nodes needed), sort each slice by centre y. Consecutive runs of
// `capacity` entries of the result become one node each. Centres are computed once up front;
// recomputing them in the comparators made Build of 1M boxes take 1.18 s of CPU instead of 0.62.
std::vector<uint32_t> StrOrder(const std::vector<Envelope>& boxes, size_t capacity) {
  std::vector<double> cx(boxes.size());
  std::vector<double> cy(boxes.size());
  for (size_t i = 0; i < boxes.size(); ++i) {
    const Envelope& e = boxes[i];
    cx[i] = e.IsEmpty() ? 0.0 : 0.5 * (e.xmin + e.xmax);
    cy[i] = e.IsEmpty() ? 0.0 : 0.5 * (e.ymin + e.ymax);
  }
  std::vector<uint32_t> order(boxes.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return cx[a] < cx[b]; });
  const size_t node_count = (boxes.size() + capacity - 1) / capacity;
  const size_t slice_count = static_cast<size_t>(std::ceil(std::sqrt(node_count)));
  const size_t slice_size = ((node_count + slice_count - 1) / slice_count) * capacity;
  for (size_t begin = 0; begin < order.size(); begin += slice_size) {
    const size_t end = std::min(order.size(), begin + slice_size);
    std::sort(order.begin() + static_cast<std::ptrdiff_t>(begin),
              order.begin() + static_cast<std::ptrdiff_t>(end),
              [&](uint32_t a, uint32_t b) { return cy[a] < cy[b]; });
  }
  return order;
}

}  // namespace

Result<StrTree> StrTree::Build(std::vector<Item> items, int node_capacity) {
  if (node_capacity < 2) {
    return Status::InvalidArgument("strtree: node capacity must be >= 2, got " +
                                   std::to_string(node_capacity));
  }
  if (items.size() >= UINT32_MAX) {
    return Status::InvalidArgument("strtree: too many items (" + std::to_string(items.size()) +
                                   ")");
  }
  for (const Item& item : items) {
    const Envelope& b = item.box;
    if (!b.IsEmpty() && !(std::isfinite(b.xmin) && std::isfinite(b.ymin) && std::isfinite(b.xmax) &&
                          std::isfinite(b.ymax))) {
      return Status::InvalidArgument("strtree: item " + std::to_string(item.id) +
                                     " has a non-finite box");
    }
  }
  const size_t capacity = static_cast<size_t>(node_capacity);
  StrTree tree;
  if (items.empty()) return tree;

  // Items, in STR order.
  std::vector<Envelope> boxes(items.size());
  for (size_t i = 0; i < items.size(); ++i) boxes[i] = items[i].box;
  const std::vector<uint32_t> item_order = StrOrder(boxes, capacity);
  tree.boxes_.reserve(items.size());
  tree.ids_.reserve(items.size());
  for (uint32_t i : item_order) {
    tree.boxes_.push_back(items[i].box);
    tree.ids_.push_back(items[i].id);
    tree.bounds_.Expand(items[i].box);
  }

  // Leaves over consecutive runs of items, then each level over STR-ordered runs of the level
  // below, until one level has at most `capacity` nodes (the roots, scanned by every query).
  std::vector<Node> level;
  for (size_t begin = 0; begin < tree.boxes_.size(); begin += capacity) {
    Node node;
    node.begin = static_cast<uint32_t>(begin);
    node.end = static_cast<uint32_t>(std::min(tree.boxes_.size(), begin + capacity));
    for (uint32_t i = node.begin; i < node.end; ++i) node.box.Expand(tree.boxes_[i]);
    level.push_back(node);
  }
  while (true) {
    if (level.size() <= capacity) {
      tree.levels_.push_back(std::move(level));
      break;
    }
    // Reorder this level into STR order before grouping it; the children ranges of its nodes
    // point into the level below, which does not move.
    std::vector<Envelope> node_boxes(level.size());
    for (size_t i = 0; i < level.size(); ++i) node_boxes[i] = level[i].box;
    const std::vector<uint32_t> order = StrOrder(node_boxes, capacity);
    std::vector<Node> packed;
    packed.reserve(level.size());
    for (uint32_t i : order) packed.push_back(level[i]);
    std::vector<Node> parents;
    for (size_t begin = 0; begin < packed.size(); begin += capacity) {
      Node parent;
      parent.begin = static_cast<uint32_t>(begin);
      parent.end = static_cast<uint32_t>(std::min(packed.size(), begin + capacity));
      for (uint32_t i = parent.begin; i < parent.end; ++i) parent.box.Expand(packed[i].box);
      parents.push_back(parent);
    }
    tree.levels_.push_back(std::move(packed));
    level = std::move(parents);
  }
  return tree;
}

std::vector<int64_t> StrTree::Query(const Envelope& query) const {
  std::vector<int64_t> ids;
  Query(query, [&ids](int64_t id) { ids.push_back(id); });
  return ids;
}

}  // namespace geolake::geo
