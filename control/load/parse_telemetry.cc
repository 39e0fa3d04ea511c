#include <fmt/format.h>

#include <charconv>
#include <cstdint>

#include "control/load/section_parsers.h"

namespace etwire::control {

namespace {

// "127.0.0.1:9464" or "[::1]:9464": a literal address (no name lookups while validating) and a
// port (0: any free port).
bool split_listen(const std::string& text, std::string& address, uint16_t& port) {
  size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon + 1 >= text.size()) return false;
  std::string host = text.substr(0, colon);
  std::string port_text = text.substr(colon + 1);
  unsigned value = 0;
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), value);
  if (ec != std::errc() || end != port_text.data() + port_text.size() || value > 65535) {
    return false;
  }
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
    if (!config::Ipv6Address::parse(host)) return false;
  } else if (!config::Ipv4Address::parse(host)) {
    return false;
  }
  address = host;
  port = static_cast<uint16_t>(value);
  return true;
}

bool is_loopback(const std::string& address) {
  if (auto v4 = config::Ipv4Address::parse(address)) return (v4->value >> 24) == 127;
  return address == "::1";
}

void parse_metrics(MapReader& section, config::MetricsEndpoint& out) {
  DocumentContext& ctx = section.context();
  section.boolean("enabled", out.enabled);
  std::string listen;
  if (section.text("listen", listen)) {
    if (!split_listen(listen, out.address, out.port)) {
      ctx.error(Problem::kWrongType, section.get("listen"), section.key_path("listen"),
                fmt::format("expected ADDRESS:PORT like 127.0.0.1:9464 or [::1]:9464, got \"{}\"",
                            listen));
    } else if (!is_loopback(out.address)) {
      ctx.warning(
          Problem::kBadValue, section.get("listen"), section.key_path("listen"),
          fmt::format("metrics will be served on {}, reachable beyond this machine", out.address));
    }
  }
  section.duration("linger", out.linger_ns, 0, kHourNs);
  section.boolean("per_qp", out.per_qp);
  if (section.text("pushgateway", out.pushgateway) && !out.pushgateway.empty() &&
      out.pushgateway.rfind("http://", 0) != 0 && out.pushgateway.rfind("https://", 0) != 0) {
    ctx.error(Problem::kBadValue, section.get("pushgateway"), section.key_path("pushgateway"),
              fmt::format("expected a URL like http://host:9091, got \"{}\"", out.pushgateway));
  }
  section.finish();
}

}  // namespace

void parse_telemetry(MapReader& section, config::TelemetryConfig& out) {
  MapReader metrics = section.section("metrics");
  parse_metrics(metrics, out.metrics);
  if (section.text("output_dir", out.output_dir) && out.output_dir.empty()) {
    section.context().error(Problem::kBadValue, section.get("output_dir"),
                            section.key_path("output_dir"), "expected a directory, got \"\"");
  }
  MapReader record = section.section("record");
  record.boolean("flows", out.record.flows);
  record.boolean("collectives", out.record.collectives);
  record.boolean("qps", out.record.qps);
  if (bool nodes = true; record.boolean("nodes", nodes)) out.record.nodes = nodes;
  record.boolean("pcap", out.record.pcap);
  record.duration("queue_sample_interval", out.record.queue_sample_interval_ns, 0, kHourNs);
  uint64_t port_interval = 0;
  if (record.duration("port_sample_interval", port_interval, 0, kHourNs)) {
    out.record.port_sample_interval_ns = port_interval;
  }
  record.finish();
  {
    MapReader capture = section.section("capture");
    // 0 keeps whole frames; a frame needs 60 bytes to show its headers.
    if (capture.bytes("snap_length", out.capture.snap_length, 0, 65535) &&
        out.capture.snap_length != 0 && out.capture.snap_length < 60) {
      capture.context().error(Problem::kBadValue, capture.get("snap_length"),
                              capture.key_path("snap_length"),
                              fmt::format("{} bytes keep less than a frame's headers; use 60 or "
                                          "more, or 0 for whole frames",
                                          out.capture.snap_length));
    }
    capture.bytes("max_bytes", out.capture.max_bytes, 0, UINT64_MAX);
    capture.integer("max_packets", out.capture.max_packets, 0, INT64_MAX);
    // Checked against the twin's switch ports once the fabric is known (check_capture).
    for (const ListItem& item : capture.list("switch_ports")) {
      config::CapturedSwitchPort port;
      port.key_path = item.path;
      if (read_text(capture.context(), item.node, item.path, port.name)) {
        out.capture.switch_ports.push_back(std::move(port));
      }
    }
    capture.finish();
    if (section.has("capture") && !out.record.pcap) {
      section.context().warning(
          Problem::kBadValue, section.get("capture"), section.key_path("capture"),
          "capture limits have no effect while telemetry.record.pcap is false");
    }
  }
  section.finish();
}

}  // namespace etwire::control
