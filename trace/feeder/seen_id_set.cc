#include "trace/feeder/seen_id_set.h"

#include <algorithm>

namespace etwire::feeder {

namespace {

constexpr uint64_t kAllBits = ~uint64_t{0};

uint64_t word_of(uint64_t id) {
  return id >> 6;
}
uint64_t bit_of(uint64_t id) {
  return uint64_t{1} << (id & 63);
}

}  // namespace

bool SeenIdSet::contains(uint64_t id) const {
  uint64_t word = word_of(id);
  if (has_open_word_ && word == open_word_) return (open_bits_ & bit_of(id)) != 0;
  if (in_runs(word)) return true;
  return (partial_words_.find(word) & bit_of(id)) != 0;
}

bool SeenIdSet::insert(uint64_t id) {
  uint64_t word = word_of(id);
  if (!has_open_word_ || word != open_word_) {
    if (in_runs(word)) return false;
    open(word);
  }
  uint64_t bit = bit_of(id);
  if ((open_bits_ & bit) != 0) return false;
  open_bits_ |= bit;
  if (open_bits_ == kAllBits) {
    add_full_word(word);
    has_open_word_ = false;
    open_bits_ = 0;
  }
  return true;
}

size_t SeenIdSet::memory_bytes() const {
  return runs_.capacity() * sizeof(Run) + partial_words_.memory_bytes();
}

bool SeenIdSet::in_runs(uint64_t word) const {
  if (runs_.empty()) return false;
  // Ascending ids only ever ask about the last run.
  const Run& last = runs_.back();
  if (word > last.last_word) return false;
  if (word >= last.first_word) return true;
  auto after = std::upper_bound(runs_.begin(), runs_.end(), word,
                                [](uint64_t w, const Run& run) { return w < run.first_word; });
  if (after == runs_.begin()) return false;
  return word <= std::prev(after)->last_word;
}

void SeenIdSet::add_full_word(uint64_t word) {
  if (runs_.empty() || word > runs_.back().last_word + 1) {
    runs_.push_back(Run{word, word});
    return;
  }
  if (word == runs_.back().last_word + 1) {
    runs_.back().last_word = word;
    return;
  }
  auto after = std::upper_bound(runs_.begin(), runs_.end(), word,
                                [](uint64_t w, const Run& run) { return w < run.first_word; });
  bool joins_previous = after != runs_.begin() && std::prev(after)->last_word + 1 == word;
  bool joins_next = after != runs_.end() && after->first_word == word + 1;
  if (joins_previous && joins_next) {
    std::prev(after)->last_word = after->last_word;
    runs_.erase(after);
  } else if (joins_previous) {
    std::prev(after)->last_word = word;
  } else if (joins_next) {
    after->first_word = word;
  } else {
    runs_.insert(after, Run{word, word});
  }
}

void SeenIdSet::open(uint64_t word) {
  if (has_open_word_ && open_bits_ != 0) partial_words_.insert_or_assign(open_word_, open_bits_);
  open_bits_ = partial_words_.erase(word);
  open_word_ = word;
  has_open_word_ = true;
}

}  // namespace etwire::feeder
