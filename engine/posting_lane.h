// Where Posting's work of one drain goes (posting.h). The engine's own lane posts each message on
// the data plane at once and drains on the engine's clock. A lane of a partitioned twin's window
// (dataplane/report_lanes.h; one per partition, each run by one of the window's threads) drains
// at each instant of its reports and keeps what it would post, and what it adds to its
// instances' counts, for the engine's thread to settle in the engine's order: by instant, then
// phase (the credited windows' waiting messages before the notifications' work, as one drain
// takes them), then the turn (the report, and its step) that made it.
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "clock/time.h"
#include "engine/flow_event.h"
#include "engine/run_results.h"
#include "transport/flow_record.h"

namespace etwire::engine {

// A report's place in the engine's order: the report (partition << 32 | index there) and its
// step among what the flow join told of it (dataplane::LaneReport).
struct Turn {
  uint64_t report = 0;
  uint32_t step = 0;
  auto operator<=>(const Turn&) const = default;
};

class PostingLane {
 public:
  // `kept`: a window's lane, which keeps its posts; else the engine's own.
  explicit PostingLane(bool kept) : kept_(kept) {}

  bool keeps() const { return kept_; }

  // A message to post, or a connection to open (`opens_only`), kept for the engine's thread.
  struct Post {
    clock::Nanos at = 0;
    uint8_t phase = 0;  // 0: a credited window's waiting message; 1: a notification's work
    bool opens_only = false;
    Turn turn;
    uint32_t window = 0;  // Posting's slice window
    uint64_t wire_bytes = 0;
    transport::FlowTags tags;
    auto key() const { return std::tie(at, phase, turn); }
  };
  // Messages and wire bytes added to an instance's record.
  struct Count {
    CollectiveRecord* record = nullptr;
    uint64_t flows = 0;
    uint64_t wire_bytes = 0;
  };
  // The first notification the lane could not take (a message its receiver's program does not
  // expect): the run stops with it once the engine's thread reaches its instant.
  struct Failure {
    clock::Nanos at = clock::kNever;
    Turn turn;
    std::string diagnosis;
  };

  // A window's lane: what it kept from the last window is gone (the engine settled it).
  void begin_window() {
    posts_.clear();
    next_post_ = 0;
    counts_.clear();
    failure_ = {};
  }
  // A window's lane: the posts and notifications from here on belong to instant `at`.
  void begin_instant(clock::Nanos at) { now_ = at; }
  void fail(std::string diagnosis) {
    if (failure_.at == clock::kNever) failure_ = {now_, turn_, std::move(diagnosis)};
  }

  // What the lane kept, for the engine's thread: the posts (in the engine's order) from
  // `next_post()` on, its counts and its failure.
  const std::vector<Post>& posts() const { return posts_; }
  size_t& next_post() { return next_post_; }
  std::vector<Count>& counts() { return counts_; }
  const Failure& failure() const { return failure_; }

 private:
  friend class Posting;

  struct Credit {
    uint32_t window = 0;
    Turn turn;
  };
  struct Queued {
    FlowEvent event;
    Turn turn;
  };

  bool kept_;
  std::vector<Credit> credited_;  // windows with a slice freed and messages waiting
  std::vector<Queued> events_;
  size_t head_ = 0;
  // What a post made now belongs to.
  clock::Nanos now_ = 0;
  uint8_t phase_ = 0;
  Turn turn_;
  std::vector<Post> posts_;
  size_t next_post_ = 0;
  std::vector<Count> counts_;
  Failure failure_;
};

}  // namespace etwire::engine
