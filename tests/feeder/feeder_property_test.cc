// Property tests on random dependency graphs: for random file orders (forward references, shuffles,
// reversed files), id schemes, windows, policies, in-flight limits, filters and ctrl-dep rules, the
// feeder must issue every kept node exactly once, never before its parents, hold no more nodes than
// the window plus what forward references force, honour its policy, and do the same thing every
// time for the same input.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/feeder/random_trace.h"
#include "tests/feeder/vector_source.h"
#include "trace/feeder/feeder.h"

namespace etwire::feeder {
namespace {

using testing::RandomTrace;

// An independent, deliberately naive model of when each node may run, driven by what the feeder
// has read (stats().nodes_read) and what the test completes. It knows the whole graph, so it can
// judge each issue: the node must be ready, and the best ready node under the policy.
class ReadinessModel {
 public:
  ReadinessModel(const RandomTrace& trace, const FeederOptions& options)
      : nodes_(trace.nodes), policy_(options.policy), state_(trace.nodes.size()) {
    bool honour_ctrl = options.ctrl_deps == CtrlDeps::kHonour;
    std::vector<std::vector<size_t>> parents = testing::parent_positions(nodes_, honour_ctrl);
    children_.resize(nodes_.size());
    for (size_t p = 0; p < nodes_.size(); ++p) {
      state_[p].dropped = !options.filter.keeps(nodes_[p]);
      for (size_t parent : parents[p]) {
        // A ctrl dep on an id not in the file never holds a node in the model. The feeder holds
        // it until the end of the file, so an issue it allows is still allowed here, but the
        // policy cannot be judged exactly (see judge_policy).
        if (parent == nodes_.size()) continue;
        ++state_[p].pending;
        children_[parent].push_back(p);
      }
    }
  }

  void observe_reads(uint64_t nodes_read, uint64_t epoch) {
    for (; read_ < nodes_read; ++read_) {
      state_[read_].read = true;
      if (state_[read_].pending == 0) became_ready(read_, epoch);
    }
  }

  // Checks an issue against the model; returns a description of what is wrong, or "".
  std::string on_issue(size_t p) {
    State& s = state_[p];
    if (s.issued) return "issued twice";
    if (s.dropped) return "issued a node the filter drops";
    if (!s.read) return "issued a node the feeder has not read";
    if (s.pending != 0) return "issued before its parents completed";
    if (ready_.count(p) == 0) return "not ready in the model";
    std::string policy_problem = check_policy(p);
    ready_.erase(p);
    s.issued = true;
    return policy_problem;
  }

  void on_complete(size_t p, uint64_t epoch) { finish(p, epoch); }

  size_t kept_count() const {
    size_t kept = 0;
    for (const State& s : state_) kept += s.dropped ? 0 : 1;
    return kept;
  }

 private:
  struct State {
    bool read = false;
    bool dropped = false;
    bool issued = false;
    uint32_t pending = 0;
    uint64_t ready_epoch = 0;
  };

  void became_ready(size_t p, uint64_t epoch) {
    if (!state_[p].dropped) {
      state_[p].ready_epoch = epoch;
      ready_.insert(p);
      return;
    }
    finish(p, epoch);
  }

  void finish(size_t p, uint64_t epoch) {
    std::vector<size_t> finished{p};
    while (!finished.empty()) {
      size_t done = finished.back();
      finished.pop_back();
      for (size_t child : children_[done]) {
        State& c = state_[child];
        if (--c.pending != 0 || !c.read) continue;
        if (c.dropped) {
          finished.push_back(child);
        } else {
          c.ready_epoch = epoch;
          ready_.insert(child);
        }
      }
    }
  }

  bool is_comm(size_t p) const { return trace::is_comm_type(nodes_[p].type); }

  std::string check_policy(size_t p) const {
    switch (policy_) {
      case Policy::kStartTime: {
        // Unique key: (start time, file position).
        size_t best = *std::min_element(ready_.begin(), ready_.end(), [this](size_t a, size_t b) {
          return std::pair(nodes_[a].start_time_us, a) < std::pair(nodes_[b].start_time_us, b);
        });
        if (best != p) return "policy: start-time skipped an earlier-starting ready node";
        return "";
      }
      case Policy::kCommFirst: {
        bool comm_ready =
            std::any_of(ready_.begin(), ready_.end(), [this](size_t q) { return is_comm(q); });
        if (comm_ready && !is_comm(p))
          return "policy: comm-first issued compute while comm was ready";
        return check_oldest(p, [this, comm_ready](size_t q) { return is_comm(q) == comm_ready; });
      }
      case Policy::kFifo:
        return check_oldest(p, [](size_t) { return true; });
    }
    return "";
  }

  // FIFO within the nodes `in_class` accepts: nothing that became ready in an earlier feeder call
  // may be passed over.
  template <typename InClass>
  std::string check_oldest(size_t p, InClass in_class) const {
    for (size_t q : ready_) {
      if (in_class(q) && state_[q].ready_epoch < state_[p].ready_epoch) {
        return "policy: FIFO passed over a node that became ready earlier";
      }
    }
    return "";
  }

  const std::vector<trace::TraceNode>& nodes_;
  Policy policy_;
  std::vector<State> state_;
  std::vector<std::vector<size_t>> children_;
  std::set<size_t> ready_;
  uint64_t read_ = 0;
};

struct RunConfig {
  FeederOptions options;
  uint32_t max_in_flight = 1;
  uint64_t driver_seed = 0;
};

std::string describe(const RandomTrace& trace, const RunConfig& config, uint64_t seed) {
  std::ostringstream out;
  out << "trace seed " << seed << ": " << trace.nodes.size() << " nodes, order "
      << static_cast<int>(trace.order) << ", ids " << static_cast<int>(trace.ids) << ", window "
      << config.options.window << ", policy " << policy_name(config.options.policy)
      << ", in flight " << config.max_in_flight << ", ctrl "
      << (config.options.ctrl_deps == CtrlDeps::kHonour ? "honour" : "ignore") << ", filter "
      << (config.options.filter.keeps_everything() ? "none" : "some");
  return out.str();
}

// Runs one feeder over the trace with the model watching; returns the issue order (file
// positions).
std::vector<size_t> run_and_check(const RandomTrace& trace, const RunConfig& config,
                                  const std::string& context) {
  std::map<uint64_t, size_t> position_of;
  for (size_t p = 0; p < trace.nodes.size(); ++p) position_of[trace.nodes[p].id] = p;
  bool honour_ctrl = config.options.ctrl_deps == CtrlDeps::kHonour;
  ReadinessModel model(trace, config.options);
  // The policy can only be judged exactly when no dangling ctrl dep is waiting for the file's end.
  bool judge_policy = !(honour_ctrl && trace.has_dangling_ctrl);

  Feeder feeder(testing::source_of(trace.nodes), config.options);
  std::mt19937_64 rng(config.driver_seed);
  std::vector<IssuedNode> in_flight;
  std::vector<size_t> order;
  uint64_t epoch = 0;
  for (;;) {
    while (in_flight.size() < config.max_in_flight) {
      ++epoch;
      std::optional<IssuedNode> issued = feeder.next();
      model.observe_reads(feeder.stats().nodes_read, epoch);
      if (!issued) break;
      size_t p = position_of.at(issued->node->id);
      std::string problem = model.on_issue(p);
      if (!judge_policy && problem.rfind("policy:", 0) == 0) problem.clear();
      EXPECT_EQ(problem, "") << "node id " << issued->node->id << "; " << context;
      if (!problem.empty()) return order;
      order.push_back(p);
      in_flight.push_back(*issued);
    }
    if (in_flight.empty()) break;
    size_t pick = rng() % in_flight.size();
    IssuedNode finished = in_flight[pick];
    in_flight.erase(in_flight.begin() + static_cast<std::ptrdiff_t>(pick));
    size_t p = position_of.at(finished.node->id);  // the node must still be intact
    EXPECT_EQ(finished.node->name, trace.nodes[p].name) << context;
    ++epoch;
    feeder.complete(finished);
    model.on_complete(p, epoch);
  }

  // Every kept node issued exactly once, and the feeder agrees it is done.
  EXPECT_TRUE(feeder.done()) << context;
  EXPECT_EQ(order.size(), model.kept_count()) << context;
  EXPECT_EQ(std::set<size_t>(order.begin(), order.end()).size(), order.size()) << context;
  const FeederStats& stats = feeder.stats();
  EXPECT_EQ(stats.nodes_read, trace.nodes.size()) << context;
  EXPECT_EQ(stats.nodes_issued, order.size()) << context;
  EXPECT_EQ(stats.nodes_completed, order.size()) << context;
  EXPECT_EQ(stats.nodes_filtered, trace.nodes.size() - order.size()) << context;

  // Memory: the window plus what forward references force.
  uint64_t window = std::max<uint32_t>(config.options.window, 1);
  uint64_t bound =
      window + testing::forced_extension_bound(testing::parent_positions(trace.nodes, honour_ctrl));
  EXPECT_LE(stats.peak_live_nodes, std::min<uint64_t>(bound, trace.nodes.size())) << context;
  return order;
}

RunConfig random_config(std::mt19937_64& rng, const RandomTrace& trace, Policy policy) {
  auto uniform = [&rng](uint64_t lo, uint64_t hi) {
    return std::uniform_int_distribution<uint64_t>(lo, hi)(rng);
  };
  RunConfig config;
  config.options.policy = policy;
  config.options.window = static_cast<uint32_t>(uniform(1, trace.nodes.size() + 2));
  config.options.ctrl_deps = uniform(0, 2) == 0 ? CtrlDeps::kHonour : CtrlDeps::kIgnore;
  switch (uniform(0, 5)) {
    case 0:
      config.options.filter = NodeFilter::comm_only();
      break;
    case 1:
      config.options.filter.types.reset(static_cast<size_t>(trace::NodeType::kComp));
      break;
    case 2:
      config.options.filter.min_id = trace.nodes[uniform(0, trace.nodes.size() - 1)].id;
      config.options.filter.max_id = config.options.filter.min_id + uniform(0, 40);
      break;
    default:
      break;
  }
  config.max_in_flight = static_cast<uint32_t>(uniform(0, 3) == 0 ? uniform(1, 64) : uniform(1, 4));
  config.driver_seed = rng();
  return config;
}

TEST(FeederProperties, RandomGraphsAllPoliciesAllFileOrders) {
  constexpr int kTraces = 1500;
  for (int i = 0; i < kTraces; ++i) {
    uint64_t seed = 0x5eed0000 + static_cast<uint64_t>(i);
    std::mt19937_64 rng(seed);
    RandomTrace trace = testing::make_random_trace(rng, i % 10 == 0 ? 1500 : 150);
    for (Policy policy : {Policy::kFifo, Policy::kStartTime, Policy::kCommFirst}) {
      RunConfig config = random_config(rng, trace, policy);
      std::string context = describe(trace, config, seed);
      run_and_check(trace, config, context);
      if (::testing::Test::HasFailure()) return;  // one detailed failure is enough
    }
  }
}

TEST(FeederProperties, SameInputAndPolicyGiveTheSameOrder) {
  for (int i = 0; i < 100; ++i) {
    uint64_t seed = 0xd00d0000 + static_cast<uint64_t>(i);
    std::mt19937_64 rng(seed);
    RandomTrace trace = testing::make_random_trace(rng, 300);
    for (Policy policy : {Policy::kFifo, Policy::kStartTime, Policy::kCommFirst}) {
      RunConfig config = random_config(rng, trace, policy);
      std::string context = describe(trace, config, seed);
      std::vector<size_t> first = run_and_check(trace, config, context);
      std::vector<size_t> second = run_and_check(trace, config, context);
      EXPECT_EQ(first, second) << context;
      if (::testing::Test::HasFailure()) return;
    }
  }
}

TEST(FeederProperties, SmallWindowsOnForwardReferenceHeavyFilesStayBounded) {
  // Windows of 1..4 stress the window-extension path hardest.
  for (int i = 0; i < 300; ++i) {
    uint64_t seed = 0xf00d0000 + static_cast<uint64_t>(i);
    std::mt19937_64 rng(seed);
    RandomTrace trace = testing::make_random_trace(rng, 200);
    RunConfig config = random_config(rng, trace, static_cast<Policy>(i % 3));
    config.options.window = static_cast<uint32_t>(1 + i % 4);
    std::string context = describe(trace, config, seed);
    run_and_check(trace, config, context);
    if (::testing::Test::HasFailure()) return;
  }
}

}  // namespace
}  // namespace etwire::feeder
