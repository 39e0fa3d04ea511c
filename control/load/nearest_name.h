// "Did you mean ...?" for misspelt keys and names: the candidate with the smallest edit distance,
// if it is close enough to be a plausible typo.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace etwire::control {

// Edits (insert, delete, substitute, swap of two neighbours) turning `a` into `b`, ignoring case.
size_t edit_distance(std::string_view a, std::string_view b);

// The candidate nearest to `typed`, when at most max(1, len/3) edits away (so "mtu" does not
// suggest "qos"); ties go to the earlier candidate.
std::optional<std::string> nearest_name(std::string_view typed,
                                        const std::vector<std::string>& candidates);

// " (did you mean \"mtu\"?)" or "" when nothing is near.
std::string did_you_mean(std::string_view typed, const std::vector<std::string>& candidates);

}  // namespace etwire::control
