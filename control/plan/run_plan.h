// The plan of a run, resolved once from the configuration's text and overrides: the configuration
// as its sections read it and with its derived values, every problem located, each job's opened
// trace set and what reading it found, its ranks' placement, the addresses, the fabric twin's
// ports and layout, the traffic plan and the QP numbers it gives, and the digest that names the
// inputs. config_loader.h makes it (and derives one plan from another); validate, plan, run,
// predict, every point of a sweep, the engine and the data planes read it, and none reads the
// configuration or discovers a trace set again.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/run_config.h"
#include "control/check/config_checks.h"
#include "control/check/trace_facts.h"
#include "control/load/diagnostic.h"
#include "control/load/source_map.h"
#include "control/plan/addressing.h"
#include "control/plan/qp_numbering.h"
#include "control/plan/rank_mapping.h"
#include "control/plan/traffic_plan.h"
#include "trace/trace_set.h"
#include "twin/fabric/setup_problems.h"

namespace etwire::control {

struct RunPlan {
  config::RunConfig config;  // as far as it could be read; defaults where it could not
  // The configuration as its sections read it, before derived values: what a plan derived from
  // this one (a prediction, a point of a sweep) changes and resolves again.
  config::RunConfig as_read;
  SectionPresence present;
  Diagnostics diagnostics;
  // The problems of reading the text alone (syntax, schema): a derived plan starts from these.
  Diagnostics read_diagnostics;
  SourceMap source_map;
  std::vector<std::optional<trace::TraceSet>> trace_sets;  // by job; when opened
  std::vector<std::optional<TraceFacts>> traces;           // by job; when read
  std::vector<std::optional<JobPlacement>> placements;     // by job; when placed
  std::optional<AddressPlan> addresses;                    // when every job is placed
  twin::ConfiguredTwin twin;                               // its ports when every port is on it
  // With the traces read, on a configuration without errors: with the problems planning found
  // (a collective that cannot be built), which a run meets when it gets there.
  std::optional<TrafficPlan> traffic;
  Diagnostics traffic_problems;
  std::optional<QpNumbering> qp_numbers;  // from `traffic`, with it
  // The configuration's bytes as they were read: a digest hashes these, since a second read of
  // the file may differ (edited since, a FIFO, a pipe) or block.
  std::string text;
  // What the configuration was changed by: its --set overrides, then what each derivation did.
  std::vector<std::string> settings;
  // "fnv1a64:<16 hex digits>" over `text` and `settings` (summary.json's config_digest).
  std::string config_digest;

  bool ok() const { return !diagnostics.has_errors(); }
  // The wire number of the QP of run number `number` on `port` (QpNumbering::wire); a plan
  // without numbers gave none, so the run number is its own.
  uint32_t wire_qpn(size_t port, uint32_t number) const {
    return qp_numbers ? qp_numbers->wire(port, number) : number;
  }
};

}  // namespace etwire::control
