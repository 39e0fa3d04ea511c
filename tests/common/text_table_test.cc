#include "common/text_table.h"

#include <gtest/gtest.h>

namespace etwire {
namespace {

TEST(TextTable, AlignsColumns) {
  TextTable table({"name", "count"});
  table.add_row({"a", "1"});
  table.add_row({"longer", "12345"});
  EXPECT_EQ(table.render(),
            "name    count\n"
            "a           1\n"
            "longer  12345\n");
}

TEST(TextTable, PadsShortRowsAndDropsExtraCells) {
  TextTable table({"x", "y"});
  table.add_row({"1"});
  table.add_row({"2", "3", "ignored"});
  EXPECT_EQ(table.rows(), 2u);
  EXPECT_EQ(table.render(), "x  y\n1\n2  3\n");
}

}  // namespace
}  // namespace etwire
