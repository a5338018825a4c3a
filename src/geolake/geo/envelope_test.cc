#include "geolake/geo/envelope.h"

#include <cmath>
#include <limits>

#include "geolake/testing/testing.h"

namespace geolake::geo {
namespace {

constexpr Envelope MakeBox() {
  Envelope box;
  box.Expand(1, 2);
  box.Expand(-3, 5);
  return box;
}

// Usable in constant expressions.
static_assert(Envelope{}.IsEmpty());
static_assert(MakeBox() == Envelope{-3, 2, 1, 5});
static_assert(MakeBox().Width() == 4 && MakeBox().Height() == 3);

TEST(EnvelopeTest, DefaultIsEmpty) {
  Envelope box;
  EXPECT_TRUE(box.IsEmpty());
  EXPECT_EQ(box.Width(), 0);
  EXPECT_EQ(box.Height(), 0);
  EXPECT_EQ(box, Envelope::Empty());
  EXPECT_FALSE(box.Contains(0, 0));
}

TEST(EnvelopeTest, ExpandByPointsAndBoxes) {
  Envelope box;
  box.Expand(10, 20);
  EXPECT_FALSE(box.IsEmpty());
  EXPECT_EQ(box, (Envelope{10, 20, 10, 20}));
  box.Expand(Envelope{-1, 25, 0, 30});
  EXPECT_EQ(box, (Envelope{-1, 20, 10, 30}));
  box.Expand(Envelope{});  // empty: no change
  EXPECT_EQ(box, (Envelope{-1, 20, 10, 30}));
}

TEST(EnvelopeTest, NaNIsIgnoredPerAxis) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Envelope box;
  box.Expand(nan, nan);
  EXPECT_TRUE(box.IsEmpty());
  box.Expand(5, nan);  // x only: y still empty
  EXPECT_TRUE(box.IsEmpty());
  EXPECT_EQ(box.xmin, 5);
  box.Expand(nan, 7);
  EXPECT_EQ(box, (Envelope{5, 7, 5, 7}));
}

TEST(EnvelopeTest, IntersectsAndContains) {
  const Envelope a{0, 0, 10, 10};
  EXPECT_TRUE(a.Intersects(Envelope{10, 10, 20, 20}));  // touching corner
  EXPECT_FALSE(a.Intersects(Envelope{10.5, 0, 20, 10}));
  EXPECT_FALSE(a.Intersects(Envelope{}));
  EXPECT_TRUE(a.Contains(Envelope{0, 0, 10, 10}));
  EXPECT_TRUE(a.Contains(Envelope{1, 1, 2, 2}));
  EXPECT_FALSE(a.Contains(Envelope{1, 1, 11, 2}));
  EXPECT_FALSE(a.Contains(Envelope{}));
  EXPECT_FALSE(Envelope{}.Contains(a));
  EXPECT_TRUE(a.Contains(10, 0));
  EXPECT_FALSE(a.Contains(std::nan(""), 0));
}

}  // namespace
}  // namespace geolake::geo
