// Pushing a run's metrics to a Prometheus Pushgateway, for runs too short to be scraped: the
// final values go to http(s)://host:port/metrics/job/etwire/host/<host>/run/<run name>.
//
// Over libcurl directly rather than prometheus-cpp's Gateway, which has no timeout: a gateway that
// accepts the connection and never answers held a finished run forever, deaf to Ctrl-C.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>

namespace prometheus {
class Registry;
}

namespace etwire::telemetry {

// How long a push may take, connecting included, before it is given up.
inline constexpr std::chrono::milliseconds kPushTimeout{5000};

// Replaces the group of the run and host on the gateway with `registry`'s metrics: the processes
// of a run split between hosts each push a group of their own. Returns "" on success, else what
// went wrong (the gateway's HTTP status, that it could not be reached or did not answer within
// `timeout`, or that `stop` was set while waiting).
std::string push_to_gateway(const std::string& url, const std::string& run, const std::string& host,
                            const std::shared_ptr<prometheus::Registry>& registry,
                            const std::atomic<bool>* stop = nullptr,
                            std::chrono::milliseconds timeout = kPushTimeout);

}  // namespace etwire::telemetry
