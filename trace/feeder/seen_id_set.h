// Every node id read so far, in little memory. The feeder evicts a node once it completes, so when
// a later node names a parent that is not in memory, this set tells "completed and evicted" (seen)
// from "not read yet" (a forward reference). It also catches duplicate ids.
//
// Ids are grouped into 64-id words. Words whose 64 ids have all been seen collapse into sorted runs
// of full words, so a trace with dense ids (the usual case) costs a handful of runs however long it
// is. Words with gaps (sparse ids, as PyTorch traces have) stay as 64-bit masks in a hash map: one
// bit per id in the span, far less than a list of intervals when the gaps are small. The word being
// filled is kept aside so that ascending ids touch neither the map nor the runs until it is full.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "trace/feeder/flat_id_map.h"

namespace etwire::feeder {

class SeenIdSet {
 public:
  bool contains(uint64_t id) const;
  // Adds `id`; false if it was already there.
  bool insert(uint64_t id);

  size_t run_count() const { return runs_.size(); }
  size_t partial_word_count() const { return partial_words_.size() + (has_open_word_ ? 1 : 0); }
  size_t memory_bytes() const;

 private:
  // Inclusive range of word indices whose ids have all been seen.
  struct Run {
    uint64_t first_word;
    uint64_t last_word;
  };

  bool in_runs(uint64_t word) const;
  void add_full_word(uint64_t word);
  // Makes `word` the open word, parking the previous open word in the map.
  void open(uint64_t word);

  std::vector<Run> runs_;  // sorted, disjoint, never adjacent
  // Words with some but not all ids seen, by word index. A mask is never 0 (the empty marker) and
  // never all ones (those become runs).
  FlatIdMap<uint64_t, 0> partial_words_;
  bool has_open_word_ = false;
  uint64_t open_word_ = 0;
  uint64_t open_bits_ = 0;
};

}  // namespace etwire::feeder
