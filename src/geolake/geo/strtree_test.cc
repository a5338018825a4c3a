#include "geolake/geo/strtree.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <thread>
#include <vector>

#include "geolake/testing/testing.h"

namespace geolake::geo {
namespace {

using ::geolake::testing::IsError;

std::vector<StrTree::Item> RandomBoxes(size_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> pos(0, 1000);
  std::uniform_real_distribution<double> size(0, 20);
  std::vector<StrTree::Item> items;
  for (size_t i = 0; i < count; ++i) {
    const double x = pos(rng);
    const double y = pos(rng);
    items.push_back({Envelope{x, y, x + size(rng), y + size(rng)}, static_cast<int64_t>(i) * 7});
  }
  return items;
}

std::vector<int64_t> BruteForce(const std::vector<StrTree::Item>& items, const Envelope& q) {
  std::vector<int64_t> ids;
  for (const auto& item : items) {
    if (item.box.Intersects(q)) ids.push_back(item.id);
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

std::vector<int64_t> Sorted(std::vector<int64_t> ids) {
  std::sort(ids.begin(), ids.end());
  return ids;
}

TEST(StrTreeTest, SmallWorkedExample) {
  // Three unit squares along the diagonal and one far away.
  std::vector<StrTree::Item> items = {{Envelope{0, 0, 1, 1}, 10},
                                      {Envelope{1, 1, 2, 2}, 11},
                                      {Envelope{2, 2, 3, 3}, 12},
                                      {Envelope{100, 100, 101, 101}, 13}};
  ASSERT_OK_AND_ASSIGN(StrTree tree, StrTree::Build(items, 2));
  EXPECT_EQ(tree.size(), 4u);
  EXPECT_EQ(tree.bounds(), (Envelope{0, 0, 101, 101}));
  // (1, 1) is a corner shared by the first two squares: touching counts.
  EXPECT_EQ(Sorted(tree.Query(Envelope{1, 1, 1, 1})), (std::vector<int64_t>{10, 11}));
  EXPECT_EQ(Sorted(tree.Query(Envelope{2.5, 2.5, 200, 200})), (std::vector<int64_t>{12, 13}));
  EXPECT_TRUE(tree.Query(Envelope{50, 50, 60, 60}).empty());
  EXPECT_TRUE(tree.Query(Envelope::Empty()).empty());
}

TEST(StrTreeTest, MatchesBruteForceForManyCapacities) {
  const std::vector<StrTree::Item> items = RandomBoxes(5000, 1);
  std::mt19937 rng(2);
  std::uniform_real_distribution<double> pos(-50, 1050);
  std::uniform_real_distribution<double> size(0, 100);
  for (int capacity : {2, 3, 16, 64}) {
    ASSERT_OK_AND_ASSIGN(StrTree tree, StrTree::Build(items, capacity));
    EXPECT_GT(tree.height(), 1) << capacity;
    for (int q = 0; q < 200; ++q) {
      const double x = pos(rng);
      const double y = pos(rng);
      const Envelope query{x, y, x + size(rng), y + size(rng)};
      EXPECT_EQ(Sorted(tree.Query(query)), BruteForce(items, query)) << "capacity " << capacity;
    }
  }
}

TEST(StrTreeTest, EmptyTreeAndEmptyItemBoxes) {
  ASSERT_OK_AND_ASSIGN(StrTree empty, StrTree::Build({}));
  EXPECT_EQ(empty.size(), 0u);
  EXPECT_EQ(empty.height(), 0);
  EXPECT_TRUE(empty.Query(Envelope{-1e9, -1e9, 1e9, 1e9}).empty());

  // An empty box (an empty geometry) is stored but never matches.
  ASSERT_OK_AND_ASSIGN(StrTree tree,
                       StrTree::Build({{Envelope::Empty(), 1}, {Envelope{0, 0, 1, 1}, 2}}));
  EXPECT_EQ(tree.size(), 2u);
  EXPECT_EQ(tree.Query(Envelope{-1e9, -1e9, 1e9, 1e9}), (std::vector<int64_t>{2}));
}

TEST(StrTreeTest, RejectsBadCapacityAndNonFiniteBoxes) {
  EXPECT_THAT(StrTree::Build({}, 1), IsError(ErrorCode::kInvalidArgument));
  EXPECT_THAT(StrTree::Build({{Envelope{0, 0, INFINITY, 1}, 5}}),
              ::geolake::testing::IsErrorWith(ErrorCode::kInvalidArgument, "item 5"));
}

TEST(StrTreeTest, ConcurrentQueriesOnOneTree) {
  const std::vector<StrTree::Item> items = RandomBoxes(20000, 3);
  ASSERT_OK_AND_ASSIGN(const StrTree tree, StrTree::Build(items));
  constexpr int kThreads = 8;
  std::vector<int> mismatches(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(100 + t);
      std::uniform_real_distribution<double> pos(0, 1000);
      for (int q = 0; q < 100; ++q) {
        const double x = pos(rng);
        const double y = pos(rng);
        const Envelope query{x, y, x + 30, y + 30};
        if (Sorted(tree.Query(query)) != BruteForce(items, query)) ++mismatches[t];
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(mismatches[t], 0) << "thread " << t;
}

}  // namespace
}  // namespace geolake::geo
