#include <fmt/format.h>

#include "control/load/section_parsers.h"

namespace etwire::control {

namespace {

constexpr uint64_t kMaxRate = 3'200'000'000'000ull;

void parse_pmtu(MapReader& section, config::TransportConfig& out) {
  if (!section.has("pmtu")) return;
  DocumentContext& ctx = section.context();
  YAML::Node node = section.get("pmtu");
  std::string path = section.key_path("pmtu");
  std::vector<std::string> allowed{"auto"};
  for (uint32_t mtu : config::kRocePathMtus) allowed.push_back(std::to_string(mtu));
  std::string text;
  if (!read_text(ctx, node, path, text)) return;
  if (config::normalize_name(text) == "auto") {
    out.pmtu_auto = true;
    return;
  }
  for (uint32_t mtu : config::kRocePathMtus) {
    if (text == std::to_string(mtu)) {
      out.pmtu = mtu;
      out.pmtu_auto = false;
      return;
    }
  }
  report_bad_name(ctx, node, path, allowed, "a RoCE path MTU: ");
}

void parse_dcqcn(MapReader& section, config::DcqcnConfig& out) {
  section.boolean("enabled", out.enabled);
  section.real("alpha_gain", out.alpha_gain, RealRange{0, 1, true});
  section.duration("alpha_update_period", out.alpha_update_period_ns, 1, kSecond);
  section.real("initial_alpha", out.initial_alpha, RealRange{0, 1, false});
  section.duration("rate_reduce_period", out.rate_reduce_period_ns, 0, kSecond);
  section.real("rate_cut_scale", out.rate_cut_scale, RealRange{0, 1, true});
  section.real("max_rate_cut", out.max_rate_cut, RealRange{0, 1, true});
  section.duration("rate_increase_period", out.rate_increase_period_ns, 1, 10 * kSecond);
  section.bytes("rate_increase_bytes", out.rate_increase_bytes, 1, 1ull << 40);
  section.integer("fast_recovery_stages", out.fast_recovery_stages, 0, 255);
  section.rate("additive_increase", out.additive_increase_bps, 0, kMaxRate);
  section.rate("hyper_increase", out.hyper_increase_bps, 0, kMaxRate);
  section.rate("min_rate", out.min_rate_bps, 1, kMaxRate);
  section.rate("rate_on_first_cnp", out.rate_on_first_cnp_bps, 0, kMaxRate);
  section.boolean("clamp_target_rate", out.clamp_target_rate);
  section.boolean("clamp_target_rate_after_time_increase",
                  out.clamp_target_rate_after_time_increase);
  section.duration("min_time_between_cnps", out.min_time_between_cnps_ns, 0, kSecond);
  section.finish();
}

// Each retransmission model reads only its own keys: one set for the other is refused rather
// than left without effect.
void check_retransmission(MapReader& section, config::TransportConfig& out, bool first_timeout_set,
                          bool naks_set) {
  DocumentContext& ctx = section.context();
  if (out.retransmission == config::Retransmission::kAdaptive) {
    if (naks_set) {
      ctx.error(Problem::kInconsistent, section.get("naks_count_as_retries"),
                section.key_path("naks_count_as_retries"),
                "naks_count_as_retries applies to retransmission: fixed; adaptive retransmission "
                "fails a connection on time without progress (retransmit_timeout x "
                "retry_count), whatever NAKs it received");
    }
    if (first_timeout_set && out.adaptive_first_timeout_ns > out.retransmit_timeout_ns) {
      ctx.error(Problem::kInconsistent, section.get("adaptive_first_timeout"),
                section.key_path("adaptive_first_timeout"),
                fmt::format("{} ns is longer than retransmit_timeout ({} ns), which caps every "
                            "timeout of adaptive retransmission",
                            out.adaptive_first_timeout_ns, out.retransmit_timeout_ns));
    }
  } else if (first_timeout_set) {
    ctx.error(Problem::kInconsistent, section.get("adaptive_first_timeout"),
              section.key_path("adaptive_first_timeout"),
              "adaptive_first_timeout applies to retransmission: adaptive; fixed retransmission "
              "waits retransmit_timeout every time");
  }
}

}  // namespace

void parse_entropy(MapReader& section, config::EntropyConfig& out) {
  section.choice("mode", out.mode, config::entropy_mode_names());
  const bool every = section.integer("every", out.every, 1, 1u << 24);
  const bool values = section.integer("values", out.values, 2, 16384);
  if ((every || values) && out.mode != config::EntropyMode::kSpray) {
    const char* key = every ? "every" : "values";
    section.context().error(Problem::kInconsistent, section.get(key), section.key_path(key),
                            fmt::format("{} applies to entropy mode spray; mode per-qp sends "
                                        "every packet of a QP on its one source port",
                                        key));
  }
  section.finish();
}

void parse_out_of_order(MapReader& parent, config::TransportConfig& out,
                        bool some_port_out_of_order) {
  DocumentContext& ctx = parent.context();
  parent.choice("receiver", out.receiver, config::receiver_names());
  MapReader section = parent.section("out_of_order");
  if (parent.has("out_of_order") && out.receiver != config::Receiver::kOutOfOrder &&
      !some_port_out_of_order) {
    ctx.error(Problem::kInconsistent, parent.get("out_of_order"), parent.key_path("out_of_order"),
              "out_of_order applies to out-of-order receivers (transport.receiver or a port's "
              "receiver); a go-back-n receiver takes only the next PSN");
    return;
  }
  section.integer("window", out.out_of_order.window, 2, 1u << 20);
  const bool loss_after = section.integer("loss_after", out.out_of_order.loss_after, 1, 1u << 20);
  if (out.out_of_order.loss_after >= out.out_of_order.window) {
    const char* key = loss_after ? "loss_after" : "window";
    ctx.error(Problem::kInconsistent, section.get(key), section.key_path(key),
              fmt::format("loss_after ({}) must be below window ({}): a PSN is reported lost "
                          "only by one the window can still place",
                          out.out_of_order.loss_after, out.out_of_order.window));
  }
  section.finish();
}

void parse_transport(MapReader& section, config::TransportConfig& out,
                     bool some_port_out_of_order) {
  section.choice("op", out.op, config::rdma_op_names());
  parse_pmtu(section, out);
  std::string version;
  if (section.text("ip_version", version)) {
    if (version == "4" || version == "6") {
      out.ip_version = static_cast<uint8_t>(version[0] - '0');
    } else {
      report_bad_name(section.context(), section.get("ip_version"), section.key_path("ip_version"),
                      {"4", "6"}, "an IP version: ");
    }
  }
  section.integer("ack_interval", out.ack_interval, 1, 1 << 16);
  const bool model_set =
      section.choice("retransmission", out.retransmission, config::retransmission_names());
  section.duration("retransmit_timeout", out.retransmit_timeout_ns, 1'000, 60 * kSecond);
  section.integer("retry_count", out.retry_count, 0, 7);
  const bool first_timeout_set = section.duration(
      "adaptive_first_timeout", out.adaptive_first_timeout_ns, 1'000, 60 * kSecond);
  const bool naks_set = section.boolean("naks_count_as_retries", out.naks_count_as_retries);
  check_retransmission(section, out, first_timeout_set, naks_set);
  out.retransmission_model_set = model_set || first_timeout_set || naks_set;
  parse_out_of_order(section, out, some_port_out_of_order);
  MapReader entropy = section.section("entropy");
  parse_entropy(entropy, out.entropy);
  MapReader dcqcn = section.section("dcqcn");
  parse_dcqcn(dcqcn, out.dcqcn);
  section.finish();
}

}  // namespace etwire::control
