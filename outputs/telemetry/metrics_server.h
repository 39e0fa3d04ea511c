// The HTTP endpoint Prometheus scrapes: /metrics on one address and port, served by
// prometheus-cpp's exposer on its own threads. Binding fails with a message that says which
// address, why, and what to do about it, before anything of the run has started.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

namespace prometheus {
class Exposer;
class Registry;
}  // namespace prometheus

namespace etwire::telemetry {

class EndpointError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class MetricsServer {
 public:
  // Serves `registry` at http://address:port/metrics; port 0 takes a free port. `address` is a
  // literal IPv4 or IPv6 address. Throws EndpointError when the address cannot be bound.
  MetricsServer(const std::string& address, uint16_t port,
                std::shared_ptr<prometheus::Registry> registry);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  uint16_t port() const { return port_; }
  // "http://127.0.0.1:9464/metrics"
  std::string url() const;

 private:
  std::string address_;
  uint16_t port_ = 0;
  std::shared_ptr<prometheus::Registry> registry_;
  std::unique_ptr<prometheus::Exposer> exposer_;
};

// "127.0.0.1:9464" or "[::1]:9464".
std::string host_port(const std::string& address, uint16_t port);

}  // namespace etwire::telemetry
