#include "outputs/telemetry/metrics_server.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <prometheus/exposer.h>
#include <prometheus/registry.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

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

namespace {

// Opens and closes a connection to the server: its listening thread waits in poll() for up to
// two seconds between looks at the stop flag, and an incoming connection ends that wait.
void knock(const std::string& address, uint16_t port) {
  sockaddr_in v4{};
  v4.sin_family = AF_INET;
  v4.sin_port = htons(port);
  // An unspecified address listens on loopback too.
  const std::string target = address == "0.0.0.0" ? "127.0.0.1" : address;
  if (inet_pton(AF_INET, target.c_str(), &v4.sin_addr) != 1) return;
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  connect(fd, reinterpret_cast<sockaddr*>(&v4), sizeof(v4));
  close(fd);
}

}  // namespace

// Stopping the exposer waits for its listening thread, which sees the stop flag only when its
// poll() returns: knocking until it is gone keeps every run from ending up to 2 s late.
MetricsServer::~MetricsServer() {
  if (!exposer_) return;
  std::atomic<bool> stopped{false};
  std::thread knocker([&] {
    while (!stopped.load()) {
      knock(address_, port_);
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  exposer_.reset();
  stopped = true;
  knocker.join();
}

std::string MetricsServer::url() const {
  return fmt::format("http://{}/metrics", host_port(address_, port_));
}

}  // namespace etwire::telemetry
