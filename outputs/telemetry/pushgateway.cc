#include "outputs/telemetry/pushgateway.h"

#include <fmt/format.h>
#include <prometheus/gateway.h>
#include <prometheus/registry.h>

namespace etwire::telemetry {

std::string push_to_gateway(const std::string& url, const std::string& run, const std::string& host,
                            const std::shared_ptr<prometheus::Registry>& registry) {
  // "http://host:9091" -> scheme and host, port. The gateway joins them as host:port/metrics/...
  const size_t scheme_end = url.find("://");
  const size_t host_start = scheme_end == std::string::npos ? 0 : scheme_end + 3;
  std::string rest = url.substr(host_start);
  while (!rest.empty() && rest.back() == '/') rest.pop_back();
  const size_t colon = rest.rfind(':');
  const bool has_port = colon != std::string::npos && rest.find(']', colon) == std::string::npos;
  const std::string gateway_host =
      url.substr(0, host_start) + (has_port ? rest.substr(0, colon) : rest);
  const std::string port = has_port ? rest.substr(colon + 1) : std::string("9091");

  prometheus::Gateway gateway(gateway_host, port, "etwire", {{"run", run}, {"host", host}});
  gateway.RegisterCollectable(registry);
  const int status = gateway.Push();
  if (status >= 200 && status < 300) return "";
  if (status < 0) return fmt::format("pushgateway {}: could not be reached", url);
  return fmt::format("pushgateway {}: HTTP status {}", url, status);
}

}  // namespace etwire::telemetry
