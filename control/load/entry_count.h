// How much work a YAML text is for the parser, counted before it is parsed. yaml-cpp keeps about
// a kilobyte for every value it reads: a list of a million entries (2 MB of text) takes a
// gigabyte and a minute before any check can look at it. Every line or flow-list item may start
// a value, so their count bounds the parser's work; the files etwire reads (a configuration, an
// InfraGraph file) are refused past a cap on it.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "control/load/diagnostic.h"

namespace etwire::control {

// 262,144 is far above what the files use: a lab of 4096 ports written port by port takes about
// 25,000 lines, a rank list is as long as a job's world, and an InfraGraph file names its cables
// by slices of copies (a fabric written cable by cable in flow style takes about 6 a cable).
inline constexpr size_t kMaxYamlEntries = 262'144;
// An InfraGraph file, half that: yaml-cpp reads some 100,000 of its entries a second (a chain of
// 60,000 compositions, 240,000 entries, took 1.7 s to parse and 2.1 to 2.4 s to check), so a file
// at the cap is checked within about a second, and a fabric described by copies and slices stays
// far below it.
inline constexpr size_t kMaxInfraGraphEntries = 131'072;

// The 1-based line on which `text` passes `cap` lines and flow-list items (newlines and commas);
// nullopt when it holds no more than that.
std::optional<int> line_past_entries(std::string_view text, size_t cap = kMaxYamlEntries);

// The refusal of `text`, read from `file`, when it passes `cap`: at the line where it does, "the
// WHAT holds more than ... lines and list items, the limit (HINT)"; nullopt otherwise.
std::optional<Diagnostic> too_many_entries(std::string_view text, const std::string& file,
                                           std::string_view what, std::string_view hint,
                                           size_t cap = kMaxYamlEntries);

}  // namespace etwire::control
