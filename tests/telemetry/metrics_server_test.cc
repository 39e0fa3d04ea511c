// The /metrics endpoint: serves the registry over HTTP on the address asked for, takes a free port
// for port 0, and refuses an address it cannot bind with a message that names it and says why.
#include "outputs/telemetry/metrics_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include "outputs/telemetry/run_metrics.h"
#include "tests/telemetry/loopback_listener.h"

namespace etwire::telemetry {
namespace {

using Listener = testing::LoopbackListener;

// GET http://127.0.0.1:port/path; the whole response, headers included.
std::string http_get(uint16_t port, const std::string& path) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    close(fd);
    return "";
  }
  const std::string request =
      "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
  EXPECT_EQ(send(fd, request.data(), request.size(), 0), static_cast<ssize_t>(request.size()));
  std::string response;
  char buffer[4096];
  ssize_t n = 0;
  while ((n = recv(fd, buffer, sizeof(buffer), 0)) > 0) response.append(buffer, buffer + n);
  close(fd);
  return response;
}

MetricLabels one_port() {
  MetricLabels labels;
  labels.run = "server-test";
  labels.host = "emu-a";
  labels.jobs = {{"j", 1, 1}};
  labels.ports = {{"p0", 100'000'000'000}};
  return labels;
}

TEST(MetricsServer, ServesTheRegistryOnAFreePort) {
  RunMetrics metrics(one_port());
  MetricsServer server("127.0.0.1", 0, metrics.registry());
  ASSERT_NE(server.port(), 0);
  EXPECT_EQ(server.url(), "http://127.0.0.1:" + std::to_string(server.port()) + "/metrics");
  const std::string response = http_get(server.port(), "/metrics");
  EXPECT_NE(response.find("200 OK"), std::string::npos) << response;
  EXPECT_NE(
      response.find("etwire_run_state{host=\"emu-a\",run=\"server-test\",state=\"running\"} 1"),
      std::string::npos)
      << response;
}

TEST(MetricsServer, AnAddressInUseIsRefusedWithTheAddressAndAWayOut) {
  Listener taken;
  RunMetrics metrics(one_port());
  try {
    MetricsServer server("127.0.0.1", taken.port(), metrics.registry());
    FAIL() << "bound a port that is in use";
  } catch (const EndpointError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("127.0.0.1:" + std::to_string(taken.port())), std::string::npos)
        << message;
    EXPECT_NE(message.find("in use"), std::string::npos) << message;
    EXPECT_NE(message.find("--no-metrics"), std::string::npos) << message;
  }
}

TEST(MetricsServer, AnAddressNotOnThisMachineIsRefused) {
  RunMetrics metrics(one_port());
  // 192.0.2.0/24 is reserved for documentation: no machine has it.
  try {
    MetricsServer server("192.0.2.1", 0, metrics.registry());
    FAIL() << "bound an address this machine does not have";
  } catch (const EndpointError& e) {
    EXPECT_NE(std::string(e.what()).find("192.0.2.1:0"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("not one of this machine's"), std::string::npos)
        << e.what();
  }
}

// Debian 12's HTTP server underneath may be built without IPv6: then the error must say so.
TEST(MetricsServer, ServesOnIpv6LoopbackOrSaysWhyNot) {
  RunMetrics metrics(one_port());
  try {
    MetricsServer server("::1", 0, metrics.registry());
    EXPECT_NE(server.port(), 0);
    EXPECT_EQ(server.url(), "http://[::1]:" + std::to_string(server.port()) + "/metrics");
  } catch (const EndpointError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("[::1]:0"), std::string::npos) << message;
    EXPECT_NE(message.find("use an IPv4 address"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace etwire::telemetry
