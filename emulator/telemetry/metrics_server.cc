#include "emulator/telemetry/metrics_server.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <prometheus/exposer.h>
#include <prometheus/registry.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace etwire::telemetry {

namespace {

// Binds a socket of our own to the address first: the exposer reports a failed bind only as "null
// context", while the errno says whether the port is taken, the address is not on this machine or
// the port is privileged. The exposer binds with SO_REUSEADDR too, so both see the same ports.
void check_bindable(const std::string& address, uint16_t port) {
  sockaddr_storage storage{};
  socklen_t length = 0;
  int family = AF_INET;
  if (address.find(':') != std::string::npos) {
    family = AF_INET6;
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&storage);
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port);
    if (inet_pton(AF_INET6, address.c_str(), &v6->sin6_addr) != 1) {
      throw EndpointError(fmt::format("metrics endpoint {}: not an IPv6 address", address));
    }
    length = sizeof(sockaddr_in6);
  } else {
    auto* v4 = reinterpret_cast<sockaddr_in*>(&storage);
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port);
    if (inet_pton(AF_INET, address.c_str(), &v4->sin_addr) != 1) {
      throw EndpointError(fmt::format("metrics endpoint {}: not an IPv4 address", address));
    }
    length = sizeof(sockaddr_in);
  }
  const int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    throw EndpointError(fmt::format("metrics endpoint {}: cannot open a socket: {}",
                                    host_port(address, port), std::strerror(errno)));
  }
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  const int bound = bind(fd, reinterpret_cast<sockaddr*>(&storage), length);
  const int error = errno;
  close(fd);
  if (bound == 0) return;
  std::string advice;
  if (error == EADDRINUSE) {
    advice =
        "; another process (another etwire run?) serves there: choose another port with "
        "telemetry.metrics.listen (e.g. --set telemetry.metrics.listen=127.0.0.1:9465), or run "
        "with --no-metrics";
  } else if (error == EADDRNOTAVAIL) {
    advice = "; the address is not one of this machine's";
  } else if (error == EACCES) {
    advice = "; ports below 1024 need privileges";
  }
  throw EndpointError(fmt::format("metrics endpoint {}: cannot listen: {}{}",
                                  host_port(address, port), std::strerror(error), advice));
}

}  // namespace

std::string host_port(const std::string& address, uint16_t port) {
  if (address.find(':') != std::string::npos) return fmt::format("[{}]:{}", address, port);
  return fmt::format("{}:{}", address, port);
}

MetricsServer::MetricsServer(const std::string& address, uint16_t port,
                             std::shared_ptr<prometheus::Registry> registry)
    : address_(address), port_(port), registry_(std::move(registry)) {
  check_bindable(address, port);
  try {
    exposer_ = std::make_unique<prometheus::Exposer>(host_port(address, port), 2);
  } catch (const std::exception& e) {
    // The address was bindable a moment ago: either it was taken since, or the HTTP server was
    // built without IPv6 (Debian 12's is).
    const bool v6 = address.find(':') != std::string::npos;
    throw EndpointError(fmt::format(
        "metrics endpoint {}: cannot listen: {}{}", host_port(address, port), e.what(),
        v6 ? "; the HTTP server may lack IPv6 support: use an IPv4 address such as 127.0.0.1"
           : ""));
  }
  exposer_->RegisterCollectable(registry_);
  const auto ports = exposer_->GetListeningPorts();
  if (!ports.empty()) port_ = static_cast<uint16_t>(ports.front());
}

MetricsServer::~MetricsServer() = default;

std::string MetricsServer::url() const {
  return fmt::format("http://{}/metrics", host_port(address_, port_));
}

}  // namespace etwire::telemetry
