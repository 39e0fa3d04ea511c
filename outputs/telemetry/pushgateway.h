// Pushing a run's metrics to a Prometheus Pushgateway, for runs too short to be scraped: the
// final values go to http(s)://host:port/metrics/job/etwire/host/<host>/run/<run name>.
#pragma once

#include <memory>
#include <string>

namespace prometheus {
class Registry;
}

namespace etwire::telemetry {

// Replaces the group of the run and host on the gateway with `registry`'s metrics: the processes
// of a run split between hosts each push a group of their own. Returns "" on success, else what
// went wrong (the gateway's HTTP status, or that it could not be reached).
std::string push_to_gateway(const std::string& url, const std::string& run, const std::string& host,
                            const std::shared_ptr<prometheus::Registry>& registry);

}  // namespace etwire::telemetry
