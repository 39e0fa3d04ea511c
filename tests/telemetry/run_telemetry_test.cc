// The host of a run's telemetry: the one its labels name, else this machine's host name; and the
// Pushgateway group the final values go to names the host as well as the run, so the processes of
// a run split between hosts do not replace each other's values.
#include "outputs/telemetry/run_telemetry.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <climits>
#include <string>
#include <thread>
#include <vector>

#include "outputs/telemetry/pushgateway.h"
#include "tests/telemetry/exposition.h"
#include "tests/telemetry/loopback_listener.h"

namespace etwire::telemetry {
namespace {

using testing::parse_exposition;

MetricLabels one_port(const std::string& host) {
  MetricLabels labels;
  labels.run = "host-test";
  labels.host = host;
  labels.jobs = {{"j", 1, 1}};
  labels.ports = {{"p0", 100'000'000'000}};
  return labels;
}

config::MetricsEndpoint unserved(const std::string& pushgateway = "") {
  config::MetricsEndpoint endpoint;
  endpoint.enabled = false;
  endpoint.pushgateway = pushgateway;
  return endpoint;
}

// A one-request HTTP server on 127.0.0.1: answers 200 and keeps the request line.
class FakeGateway {
 public:
  FakeGateway() : server_([this] { serve(); }) {}
  ~FakeGateway() {
    shutdown(listener_.fd(), SHUT_RDWR);
    if (server_.joinable()) server_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(listener_.port()); }
  // "POST /metrics/job/... HTTP/1.1"; valid once the push returned.
  std::string request_line() {
    if (server_.joinable()) server_.join();
    return request_line_;
  }

 private:
  void serve() {
    const int client = accept(listener_.fd(), nullptr, nullptr);
    if (client < 0) return;
    std::string request;
    char buffer[4096];
    ssize_t n = 0;
    size_t header_end = std::string::npos;
    while (header_end == std::string::npos && (n = recv(client, buffer, sizeof(buffer), 0)) > 0) {
      request.append(buffer, buffer + n);
      header_end = request.find("\r\n\r\n");
    }
    request_line_ = request.substr(0, request.find("\r\n"));
    // Read the body unless the client waits for "100 Continue": closing with unread data would
    // reset the connection before the client reads the answer.
    const std::string headers = request.substr(0, header_end);
    const size_t length_at = headers.find("Content-Length: ");
    if (header_end != std::string::npos && length_at != std::string::npos &&
        headers.find("100-continue") == std::string::npos) {
      const size_t body = std::stoul(headers.substr(length_at + 16));
      while (request.size() - header_end - 4 < body &&
             (n = recv(client, buffer, sizeof(buffer), 0)) > 0) {
        request.append(buffer, buffer + n);
      }
    }
    const std::string answer = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    send(client, answer.data(), answer.size(), MSG_NOSIGNAL);
    close(client);
  }

  testing::LoopbackListener listener_;  // before the thread that serves it
  std::thread server_;
  std::string request_line_;
};

// Accepts connections and never answers, until it is destroyed.
class SilentGateway {
 public:
  SilentGateway() : server_([this] { serve(); }) {}
  ~SilentGateway() {
    shutdown(listener_.fd(), SHUT_RDWR);
    if (server_.joinable()) server_.join();
    for (const int client : clients_) close(client);
  }
  std::string url() const { return "127.0.0.1:" + std::to_string(listener_.port()); }

 private:
  void serve() {
    for (int client; (client = accept(listener_.fd(), nullptr, nullptr)) >= 0;) {
      clients_.push_back(client);
    }
  }

  testing::LoopbackListener listener_;
  std::thread server_;
  std::vector<int> clients_;
};

TEST(RunTelemetry, KeepsTheHostItIsGiven) {
  RunTelemetry telemetry(one_port("emu-03"), unserved());
  telemetry.finish();
  EXPECT_EQ(telemetry.metrics().labels().host, "emu-03");
  for (const auto& sample : parse_exposition(telemetry.metrics().text())) {
    EXPECT_EQ(sample.labels.at("host"), "emu-03") << sample.name;
  }
}

TEST(RunTelemetry, AnEmptyHostIsThisMachinesHostName) {
  RunTelemetry telemetry(one_port(""), unserved());
  telemetry.finish();
  char name[HOST_NAME_MAX + 1] = {};
  ASSERT_EQ(gethostname(name, HOST_NAME_MAX), 0);
  EXPECT_EQ(telemetry.metrics().labels().host, name);
  for (const auto& sample : parse_exposition(telemetry.metrics().text())) {
    EXPECT_EQ(sample.labels.at("host"), name) << sample.name;
  }
}

TEST(RunTelemetry, PushesToAGroupOfTheRunAndTheHost) {
  FakeGateway gateway;
  RunTelemetry telemetry(one_port("emu-03"), unserved(gateway.url()));
  telemetry.finish();
  EXPECT_EQ(telemetry.push(), "");
  // The gateway reads the grouping key in any order; prometheus-cpp writes the labels sorted.
  const std::string line = gateway.request_line();
  const size_t path = line.find(' ') + 1;
  EXPECT_EQ(line.substr(path, line.find(' ', path) - path),
            "/metrics/job/etwire/host/emu-03/run/host-test")
      << line;
}

TEST(RunTelemetry, APushToAGatewayThatNeverAnswersIsGivenUp) {
  // It held a finished run forever, deaf to Ctrl-C.
  SilentGateway gateway;
  RunMetrics metrics(one_port("emu-03"));
  const std::string error = push_to_gateway(gateway.url(), "r", "h", metrics.registry(), nullptr,
                                            std::chrono::milliseconds(200));
  EXPECT_NE(error.find("no answer within 200 ms; not pushed"), std::string::npos) << error;
}

TEST(RunTelemetry, AStopRequestEndsAPush) {
  SilentGateway gateway;
  RunMetrics metrics(one_port("emu-03"));
  const std::atomic<bool> stop{true};
  // The timeout is far beyond any test's: only the stop request can end the push.
  const std::string error =
      push_to_gateway(gateway.url(), "r", "h", metrics.registry(), &stop, std::chrono::hours(1));
  EXPECT_NE(error.find("not pushed, the run was asked to stop"), std::string::npos) << error;
}

TEST(RunTelemetry, LabelValuesThatAreNotPlainGoInBase64) {
  FakeGateway gateway;
  RunMetrics metrics(one_port("emu-03"));
  EXPECT_EQ(push_to_gateway(gateway.url(), "a/b", "emu-03", metrics.registry()), "");
  const std::string line = gateway.request_line();
  // "a/b" in base64url is "YS9i".
  EXPECT_NE(line.find("/metrics/job/etwire/host/emu-03/run@base64/YS9i "), std::string::npos)
      << line;
}

}  // namespace
}  // namespace etwire::telemetry
