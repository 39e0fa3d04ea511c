// The out-of-order receiver's window of PSNs: placing and taking, a report that lasts until its
// PSN arrives, and the ring's reuse of its bits a window later.
#include "transport/reorder_window.h"

#include <gtest/gtest.h>

namespace etwire::transport {
namespace {

TEST(ReorderWindow, ReachesOnlyTheWindowAheadOfTheExpectedPsn) {
  const ReorderWindow window(100);
  EXPECT_TRUE(window.reaches(10, 10));
  EXPECT_TRUE(window.reaches(109, 10));
  EXPECT_FALSE(window.reaches(110, 10));
}

TEST(ReorderWindow, APlacedPsnIsTakenOnce) {
  ReorderWindow window(128);
  window.place(5);
  EXPECT_TRUE(window.placed(5));
  EXPECT_FALSE(window.placed(6));
  EXPECT_TRUE(window.take(5));
  EXPECT_FALSE(window.take(5));
  EXPECT_FALSE(window.placed(5));
}

TEST(ReorderWindow, AReportLastsUntilItsPsnArrives) {
  ReorderWindow window(128);
  window.mark_reported(7);
  // Looking at 7 while it is still missing (the expected PSN reaching it) keeps the report.
  EXPECT_FALSE(window.take(7));
  EXPECT_TRUE(window.reported(7));
  // Placed, then taken: the report goes with it.
  window.place(7);
  EXPECT_TRUE(window.take(7));
  EXPECT_FALSE(window.reported(7));
  // Or it comes in order.
  window.mark_reported(8);
  window.forget_report(8);
  EXPECT_FALSE(window.reported(8));
}

TEST(ReorderWindow, BitsAreReusedAWindowLater) {
  ReorderWindow window(64);
  window.place(3);
  EXPECT_TRUE(window.take(3));
  // PSN 67 shares PSN 3's bit: taking 3 left it clear for 67.
  EXPECT_FALSE(window.placed(67));
  window.place(67);
  EXPECT_TRUE(window.placed(67));
}

}  // namespace
}  // namespace etwire::transport
