#include "control/load/unclosed_quote.h"

#include <cstdint>
#include <unordered_set>
#include <vector>

namespace etwire::control {

namespace {

// Whether the quoted scalar opening at `at` closes before the end of `text`: in double quotes a
// backslash escapes the next character, in single quotes a quote is escaped by doubling it.
bool closes(const std::string& text, size_t at) {
  const char quote = text[at];
  for (size_t i = at + 1; i < text.size(); ++i) {
    if (quote == '"' && text[i] == '\\') {
      ++i;
    } else if (text[i] == quote) {
      if (quote == '\'' && i + 1 < text.size() && text[i + 1] == '\'') {
        ++i;
        continue;
      }
      return true;
    }
  }
  return false;
}

}  // namespace

std::optional<YAML::Mark> unclosed_quote(const YAML::Node& root, const std::string& text) {
  // Iterative: the depth of a document is the parser's to bound, not the stack's. A collection
  // is entered once, known by where it starts: an alias names the node it aliases, so a document
  // may hold itself ("a: &x [*x]") or a node many times over.
  std::vector<YAML::Node> pending{root};
  std::unordered_set<int64_t> entered;
  while (!pending.empty()) {
    const YAML::Node node = pending.back();
    pending.pop_back();
    if ((node.IsSequence() || node.IsMap()) &&
        !entered.insert(int64_t{node.Mark().pos} * 2 + (node.IsMap() ? 1 : 0)).second) {
      continue;
    }
    if (node.IsScalar()) {
      const YAML::Mark mark = node.Mark();
      const auto at = static_cast<size_t>(mark.pos);
      if (mark.pos >= 0 && at < text.size() && (text[at] == '"' || text[at] == '\'') &&
          !closes(text, at)) {
        return mark;
      }
    } else if (node.IsSequence()) {
      for (const YAML::Node& item : node) pending.push_back(item);
    } else if (node.IsMap()) {
      for (const auto& entry : node) {
        pending.push_back(entry.first);
        pending.push_back(entry.second);
      }
    }
  }
  return std::nullopt;
}

}  // namespace etwire::control
