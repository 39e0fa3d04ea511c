// The cost of telemetry to a run: the same configuration replayed with telemetry off and on,
// alternating, on the same machine in the same process. The ratio of the median wall times is the
// overhead; the data-plane thread's CPU time is reported too, as other load on the machine
// disturbs it less. "On" is what `etwire run` does with metrics enabled: a record per flow,
// collective and iteration into the worker's ring, a snapshot every 100 ms, the aggregator thread,
// and the /metrics endpoint, here scraped every 100 ms (ten times as often as a 1 s Prometheus).
//
//   bench_telemetry [--config FILE] [--rounds N] [--set KEY=VALUE]...
//
// Default: configs/twin-congestion.yaml, the bundled run with the most flows per second, so the
// most records; 7 rounds.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "control/resolve/config_loader.h"
#include "dataplane/loopback/loopback_data_plane.h"
#include "engine/run_engine.h"
#include "outputs/telemetry/run_telemetry.h"

namespace {

using namespace etwire;

struct Options {
  std::string config = std::string(ETWIRE_SOURCE_DIR) + "/configs/twin-congestion.yaml";
  int rounds = 7;
  std::vector<std::string> overrides;
};

Options parse(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "bench_telemetry: %s needs a value\n", flag.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (flag == "--config") {
      options.config = value();
    } else if (flag == "--rounds") {
      options.rounds = std::max(1, std::atoi(value().c_str()));
    } else if (flag == "--set") {
      options.overrides.push_back(value());
    } else {
      std::puts("bench_telemetry [--config FILE] [--rounds N] [--set KEY=VALUE]...");
      std::exit(flag == "--help" || flag == "-h" ? 0 : 2);
    }
  }
  return options;
}

// Reads http://127.0.0.1:port/metrics to the end; the bytes read.
size_t scrape(uint16_t port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  size_t total = 0;
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0) {
    const char request[] = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    if (send(fd, request, sizeof(request) - 1, 0) > 0) {
      char buffer[16384];
      ssize_t n = 0;
      while ((n = recv(fd, buffer, sizeof(buffer), 0)) > 0) total += static_cast<size_t>(n);
    }
  }
  close(fd);
  return total;
}

// CPU time of the calling thread: what telemetry costs the data-plane thread itself, whatever
// else the machine is doing.
double thread_cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

struct Measured {
  double wall_seconds = 0;
  double cpu_seconds = 0;  // the data-plane thread's
  uint64_t events = 0;
  uint64_t flows = 0;
  uint64_t dropped = 0;
  uint64_t scrapes = 0;
};

Measured run_once(const control::RunPlan& loaded, bool with_telemetry) {
  engine::RunOptions options;
  options.data_plane = dataplane::loopback_data_plane_factory();
  engine::RunEngine engine(loaded, options);
  Measured measured;
  if (!with_telemetry) {
    const double cpu_start = thread_cpu_seconds();
    const auto& results = engine.run();
    return {results.wall_seconds,
            thread_cpu_seconds() - cpu_start,
            results.events,
            results.flows,
            0,
            0};
  }
  config::MetricsEndpoint endpoint;
  endpoint.port = 0;
  telemetry::RunTelemetry telemetry(engine.metric_labels(), endpoint);
  engine.set_telemetry(&telemetry.ring());
  std::atomic<bool> done{false};
  std::thread scraper([&] {
    while (!done.load()) {
      if (scrape(telemetry.server()->port()) > 0) ++measured.scrapes;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  const double cpu_start = thread_cpu_seconds();
  const auto& results = engine.run();
  measured.cpu_seconds = thread_cpu_seconds() - cpu_start;
  done = true;
  scraper.join();
  telemetry.finish();
  measured.wall_seconds = results.wall_seconds;
  measured.events = results.events;
  measured.flows = results.flows;
  measured.dropped = telemetry.ring().dropped();
  return measured;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse(argc, argv);
  control::LoadOptions load_options;
  load_options.overrides = options.overrides;
  const auto loaded = control::load_config_file(options.config, load_options);
  if (!loaded.ok() || !loaded.addresses) {
    std::fprintf(stderr, "%s", loaded.diagnostics.to_text().c_str());
    return 2;
  }
  std::printf("config %s, %d rounds (off and on alternating, order flipped every round)\n",
              options.config.c_str(), options.rounds);
  std::vector<double> off;
  std::vector<double> on;
  std::vector<double> off_cpu;
  std::vector<double> on_cpu;
  Measured last_on;
  for (int round = 0; round < options.rounds; ++round) {
    for (int k = 0; k < 2; ++k) {
      const bool with_telemetry = (k == 0) == (round % 2 == 1);
      const Measured m = run_once(loaded, with_telemetry);
      (with_telemetry ? on : off).push_back(m.wall_seconds);
      (with_telemetry ? on_cpu : off_cpu).push_back(m.cpu_seconds);
      if (with_telemetry) last_on = m;
      std::printf("  round %d telemetry %-3s wall %.3f s  cpu %.3f s  %llu events  %llu flows",
                  round, with_telemetry ? "on" : "off", m.wall_seconds, m.cpu_seconds,
                  static_cast<unsigned long long>(m.events),
                  static_cast<unsigned long long>(m.flows));
      if (with_telemetry) {
        std::printf("  %llu scrapes  %llu records dropped",
                    static_cast<unsigned long long>(m.scrapes),
                    static_cast<unsigned long long>(m.dropped));
      }
      std::printf("\n");
    }
  }
  const double median_off = median(off);
  const double median_on = median(on);
  std::printf("median wall: off %.3f s, on %.3f s; on/off = %.3f (overhead %+.1f %%)\n", median_off,
              median_on, median_on / median_off, (median_on / median_off - 1) * 100);
  const double cpu_off = median(off_cpu);
  const double cpu_on = median(on_cpu);
  std::printf(
      "median data-plane thread CPU: off %.3f s, on %.3f s; on/off = %.3f (overhead %+.1f %%)\n",
      cpu_off, cpu_on, cpu_on / cpu_off, (cpu_on / cpu_off - 1) * 100);
  std::printf("records dropped in the last run with telemetry: %llu\n",
              static_cast<unsigned long long>(last_on.dropped));
  return 0;
}
