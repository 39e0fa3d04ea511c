#include "runner/profile_search.h"

#include <algorithm>
#include <cmath>
#include <optional>

namespace etwire::runner {

namespace {

// Floors under the lab's figures in the relative residuals.
constexpr double kMarksFloor = 10;
constexpr double kLostFloor = 20;
// The refinement stops after this many steps, or once its replays have run this many events.
constexpr int kRefineSteps = 8;
constexpr uint64_t kRefineEvents = 100'000'000;

struct Evaluation {
  double score = 0;
  std::vector<PortReplay> replays;
  uint64_t events = 0;
};

class Search {
 public:
  explicit Search(const ProfileSearchInput& input) : input_(input) {}

  // Every run replayed with `profile`; nullopt when its plan cannot be built.
  std::optional<Evaluation> evaluate(const std::vector<std::string>& profile) {
    std::vector<std::string> overrides = profile;
    overrides.insert(overrides.end(), input_.overrides.begin(), input_.overrides.end());
    const auto plan = load_twin_plan(input_.config, overrides, "", "calibrated", true);
    if (!plan) return std::nullopt;
    Evaluation out;
    for (const std::string& lab : input_.labs) {
      const LabReplay replay = replay_lab(*plan, lab);
      out.replays.push_back(replay.ports.at(input_.port));
      out.score += residual_score(out.replays.back());
      out.events += replay.result.events;
    }
    ++replays_run_;
    return out;
  }
  size_t replays_run() const { return replays_run_ * input_.labs.size(); }

 private:
  const ProfileSearchInput& input_;
  size_t replays_run_ = 0;
};

std::vector<std::string> joined(const std::vector<const std::vector<std::string>*>& groups) {
  std::vector<std::string> out;
  for (const auto* group : groups) out.insert(out.end(), group->begin(), group->end());
  return out;
}

// The marking curves a step away from `m`: a threshold a frame either way, the next pmax, the
// next averaging weight.
std::vector<twin::MarkingFit> neighbours(const twin::MarkingFit& m) {
  std::vector<twin::MarkingFit> out;
  const auto step = [&](auto change) {
    twin::MarkingFit n = m;
    change(n);
    if (n.kmin < n.kmax) out.push_back(n);
  };
  if (m.kmin > 0) step([](auto& n) { --n.kmin; });
  step([](auto& n) { ++n.kmin; });
  step([](auto& n) { --n.kmax; });
  step([](auto& n) { ++n.kmax; });
  for (const std::span<const double> ladder : {twin::pmax_ladder(), averaging_weights()}) {
    const bool weights = ladder.data() == averaging_weights().data();
    const double now = weights ? m.weight : m.pmax;
    const auto at = std::find(ladder.begin(), ladder.end(), now);
    if (at == ladder.end()) continue;
    for (const auto next : {at - 1, at + 1}) {
      if (next < ladder.begin() || next >= ladder.end()) continue;
      step([&](auto& n) { (weights ? n.weight : n.pmax) = *next; });
    }
  }
  return out;
}

// Moves `marking` a step at a time while a step brings the replays closer than `best`, which
// takes each better profile (`rest` and the curve). False when a plan could not be built.
bool refine(Search& search, twin::MarkingFit marking, const std::vector<std::string>& rest,
            uint32_t frame_bytes, ProfileChoice& best) {
  uint64_t events = 0;
  for (int step = 0; step < kRefineSteps && events < kRefineEvents; ++step) {
    bool moved = false;
    for (const twin::MarkingFit& n : neighbours(marking)) {
      std::vector<std::string> candidate = rest;
      for (const std::string& o : marking_overrides(n, frame_bytes)) candidate.push_back(o);
      const auto scored = search.evaluate(candidate);
      if (!scored) return false;
      events += scored->events;
      if (scored->score < best.score) {
        best.overrides = candidate;
        best.score = scored->score;
        best.replays = scored->replays;
        marking = n;
        moved = true;
      }
    }
    if (!moved) break;
  }
  return true;
}

}  // namespace

double residual_score(const PortReplay& port) {
  const twin::ArrivalTally& lab = port.lab;
  const twin::ArrivalTally& twin = port.twin.arrived;
  const auto lost = [&](const twin::ArrivalTally& side) {
    return static_cast<double>(port.lost(side));
  };
  const double marks =
      std::abs(static_cast<double>(twin.ce_marked) - static_cast<double>(lab.ce_marked)) /
      std::max(kMarksFloor, static_cast<double>(lab.ce_marked));
  const double losses = std::abs(lost(twin) - lost(lab)) / std::max(kLostFloor, lost(lab));
  const double last = lab.last_data > 0
                          ? std::abs(static_cast<double>(twin.last_data - lab.last_data)) /
                                static_cast<double>(lab.last_data)
                          : 0;
  return marks + losses + last;
}

std::optional<ProfileChoice> choose_profile(const ProfileSearchInput& input, const DeviceFit& fit) {
  Search search(input);
  const ProfileGroups groups = profile_groups(fit, input.port, input.configured_rate_bps);
  std::vector<const std::vector<std::string>*> present;
  for (const auto* group : {&groups.rate, &groups.latency, &groups.buffer, &groups.marking}) {
    if (!group->empty()) present.push_back(group);
  }
  const auto configured = search.evaluate({});
  if (!configured) return std::nullopt;
  ProfileChoice best{
      {}, configured->score, configured->score, configured->replays, configured->replays, 0};
  // Every combination of the groups the fit set.
  for (uint32_t mask = 1; mask < (1u << present.size()); ++mask) {
    std::vector<const std::vector<std::string>*> chosen;
    for (size_t g = 0; g < present.size(); ++g) {
      if ((mask >> g) & 1u) chosen.push_back(present[g]);
    }
    const std::vector<std::string> candidate = joined(chosen);
    const auto scored = search.evaluate(candidate);
    if (!scored) return std::nullopt;
    if (scored->score < best.score) {
      best.overrides = candidate;
      best.score = scored->score;
      best.replays = scored->replays;
    }
  }
  // The marking curve moves a step at a time from the fit's and from the configuration's, the
  // rest of the chosen profile staying as it is.
  std::vector<std::string> rest;
  for (const std::string& o : best.overrides) {
    if (std::find(groups.marking.begin(), groups.marking.end(), o) == groups.marking.end()) {
      rest.push_back(o);
    }
  }
  for (const auto& start : {fit.marking, input.configured_marking}) {
    if (!start) continue;
    if (!refine(search, *start, rest, fit.frame_bytes, best)) return std::nullopt;
  }
  best.replays_run = search.replays_run();
  return best;
}

}  // namespace etwire::runner
