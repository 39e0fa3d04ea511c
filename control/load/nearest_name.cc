#include "control/load/nearest_name.h"

#include <algorithm>
#include <cctype>
#include <numeric>

namespace etwire::control {

namespace {

char fold(char c) {
  return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}

}  // namespace

size_t edit_distance(std::string_view a, std::string_view b) {
  // Optimal string alignment distance over three rolling rows.
  std::vector<size_t> before(b.size() + 1), previous(b.size() + 1), current(b.size() + 1);
  std::iota(previous.begin(), previous.end(), size_t{0});
  for (size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cost = fold(a[i - 1]) == fold(b[j - 1]) ? 0 : 1;
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost});
      if (i > 1 && j > 1 && fold(a[i - 1]) == fold(b[j - 2]) && fold(a[i - 2]) == fold(b[j - 1])) {
        current[j] = std::min(current[j], before[j - 2] + 1);
      }
    }
    std::swap(before, previous);
    std::swap(previous, current);
  }
  return previous[b.size()];
}

std::optional<std::string> nearest_name(std::string_view typed,
                                        const std::vector<std::string>& candidates) {
  size_t limit = std::max<size_t>(1, typed.size() / 3);
  std::optional<std::string> best;
  size_t best_distance = limit + 1;
  for (const auto& candidate : candidates) {
    // The lengths' difference is a lower bound of the distance: a key far longer or shorter than
    // every candidate (a pasted value, say) costs no table of edits.
    const size_t shortest = std::min(typed.size(), candidate.size());
    const size_t longest = std::max(typed.size(), candidate.size());
    if (longest - shortest >= best_distance) continue;
    size_t distance = edit_distance(typed, candidate);
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  return best;
}

std::string did_you_mean(std::string_view typed, const std::vector<std::string>& candidates) {
  auto near = nearest_name(typed, candidates);
  return near ? " (did you mean \"" + *near + "\"?)" : "";
}

}  // namespace etwire::control
