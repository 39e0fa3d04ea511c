#include "runner/data_plane_choice.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <iostream>
#include <stdexcept>

#include "cluster/session.h"
#include "runner/exit_codes.h"

#include "dataplane/dpdk/dpdk_data_plane.h"
#include "dataplane/loopback/loopback_data_plane.h"
#include "dataplane/loopback/partitioned_data_plane.h"
#include "dataplane/verbs/verbs_backend.h"
#include "nic/verbs/rdma_devices.h"

namespace etwire::runner {

dataplane::DataPlaneFactory data_plane_factory(const control::RunPlan& plan, uint32_t threads,
                                               dataplane::SpreadOver spread) {
  const config::RunConfig& config = plan.config;
  const twin::FabricLayout* layout = plan.twin.layout ? &*plan.twin.layout : nullptr;
  const config::Backend backend =
      config.ports.empty() ? config::Backend::kLoopback : config.ports.front().backend;
  spdlog::debug("data plane: {} ({} port{}{})", config::backend_name(backend), config.ports.size(),
                config.ports.size() == 1 ? "" : "s",
                backend == config::Backend::kLoopback
                    ? fmt::format(", fabric twin {}", config::topology_name(config.fabric.topology))
                    : "");
  switch (backend) {
    case config::Backend::kDpdk: {
      // Under MPI, this process's emulator's ports.
      const auto emulator = static_cast<uint32_t>(cluster::Session::current().rank());
      return [emulator](const config::RunConfig& c, transport::FlowObserver& observer) {
        return std::make_unique<dataplane::DpdkDataPlane>(c, observer, emulator);
      };
    }
    case config::Backend::kVerbs:
      return dataplane::verbs_data_plane_factory(layout);
    case config::Backend::kLoopback:
      break;
  }
  if (config.fabric.partitions > 1) {
    // Partitions cut to carry about equal traffic: the twin's hosts are the ports, then the
    // aggregation hosts.
    std::vector<uint64_t> weights;
    if (plan.traffic) {
      for (const auto& port : plan.traffic->ports) {
        weights.push_back(port.bytes_sent + port.bytes_received);
      }
      for (const auto& host : plan.traffic->aggregation_hosts) {
        weights.push_back(host.bytes_sent + host.bytes_received);
      }
    }
    return [threads, layout, weights, spread](
               const config::RunConfig& c,
               transport::FlowObserver& observer) -> std::unique_ptr<dataplane::DataPlane> {
      return std::make_unique<dataplane::PartitionedDataPlane>(c, observer, threads, layout,
                                                               weights, spread);
    };
  }
  return dataplane::loopback_data_plane_factory(1, layout);
}

namespace {

// Where a port's traffic goes: the device, or the twin for a loopback port.
std::string port_device(const config::PortConfig& port) {
  switch (port.backend) {
    case config::Backend::kDpdk:
      if (!port.dpdk.vdev.empty()) return port.dpdk.vdev;
      if (!port.dpdk.pci.empty()) return port.dpdk.pci;
      return port.dpdk.port_id ? fmt::format("DPDK port {}", *port.dpdk.port_id) : "";
    case config::Backend::kVerbs:
      return fmt::format("{} port {}", port.verbs.device, port.verbs.port);
    case config::Backend::kLoopback:
      break;
  }
  return "fabric twin";
}

}  // namespace

void log_ports_set_up(const config::RunConfig& config) {
  if (!spdlog::should_log(spdlog::level::debug)) return;
  const auto emulator = static_cast<uint32_t>(cluster::Session::current().rank());
  for (const config::PortConfig& port : config.ports) {
    if (!config::drives_port(config, port, emulator)) continue;
    spdlog::debug("port {}: {}, {:g} Gb/s, MTU {}, {}, {}", port.name,
                  config::backend_name(port.backend), static_cast<double>(port.speed_bps) / 1e9,
                  port.mtu, port.ipv4.to_string(), port_device(port));
  }
}

int set_up(const std::function<void()>& setup) {
  try {
    setup();
    return kExitOk;
  } catch (const std::invalid_argument& e) {
    std::cerr << fmt::format("error: {}\n", e.what());
    return kExitBadInput;
  } catch (const nic::verbs::NoRdmaDevice& e) {
    // Verbs ports on a machine without such a device: nothing to run them on.
    std::cerr << fmt::format("error: {}\n", e.what());
    return kExitBadInput;
  } catch (const std::runtime_error& e) {
    // A device that cannot be set up: the environment, not the configuration.
    std::cerr << fmt::format("error: {}\n", e.what());
    return kExitFailure;
  }
}

}  // namespace etwire::runner
