// A substring assertion with a readable failure message, for checking error texts.
#pragma once

#include <gtest/gtest.h>

#include <string>

namespace etwire::feeder::testing {

inline ::testing::AssertionResult contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << part << "\"";
}

}  // namespace etwire::feeder::testing
