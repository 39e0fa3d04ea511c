#include "cluster/session.h"

#include <mpi.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "cluster/mpi_check.h"

namespace etwire::cluster {

namespace {

const Session* started = nullptr;

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "unknown";
  return name;
}

constexpr int kProbeTag = 17;

}  // namespace

bool launched_by_mpi() {
  for (const char* variable : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK"}) {
    if (std::getenv(variable) != nullptr) return true;
  }
  return false;
}

Session::Session(bool mpi, int rank, int size, std::string host)
    : mpi_(mpi), rank_(rank), size_(size), host_(std::move(host)), hosts_{host_} {}

std::unique_ptr<Session> Session::start(int* argc, char*** argv) {
  if (!launched_by_mpi()) {
    std::unique_ptr<Session> one(new Session(false, 0, 1, host_name()));
    started = one.get();
    return one;
  }
  // The main thread alone calls MPI; worker threads (DPDK lcores) never do.
  int provided = 0;
  check_mpi(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::unique_ptr<Session> session(new Session(true, rank, size, host_name()));
  session->hosts_ = session->all_gather(session->host_);
  started = session.get();
  return session;
}

const Session& Session::current() {
  static const Session one(false, 0, 1, host_name());
  return started != nullptr ? *started : one;
}

Session::~Session() {
  if (started == this) started = nullptr;
  if (mpi_) MPI_Finalize();
}

std::vector<std::string> Session::all_gather(const std::string& mine) const {
  if (!mpi_) return {mine};
  const int length = static_cast<int>(mine.size());
  std::vector<int> lengths(static_cast<size_t>(size_));
  check_mpi(MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, MPI_COMM_WORLD),
            "MPI_Allgather");
  std::vector<int> offsets(static_cast<size_t>(size_), 0);
  int total = 0;
  for (size_t p = 0; p < lengths.size(); ++p) {
    offsets[p] = total;
    total += lengths[p];
  }
  std::string all(static_cast<size_t>(total), '\0');
  check_mpi(MPI_Allgatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(),
                           offsets.data(), MPI_CHAR, MPI_COMM_WORLD),
            "MPI_Allgatherv");
  std::vector<std::string> out;
  for (size_t p = 0; p < lengths.size(); ++p) {
    out.push_back(all.substr(static_cast<size_t>(offsets[p]), static_cast<size_t>(lengths[p])));
  }
  return out;
}

void Session::barrier() const {
  if (mpi_) check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
}

Session::Arrival::Arrival(bool mpi) : mpi_(mpi), passed_(!mpi) {
  if (!mpi_) return;
  auto* request = new MPI_Request;
  check_mpi(MPI_Ibarrier(MPI_COMM_WORLD, request), "MPI_Ibarrier");
  request_ = request;
}

bool Session::Arrival::passed() {
  if (passed_) return true;
  int done = 0;
  check_mpi(MPI_Test(static_cast<MPI_Request*>(request_), &done, MPI_STATUS_IGNORE), "MPI_Test");
  passed_ = done != 0;
  return passed_;
}

Session::Arrival::~Arrival() {
  auto* request = static_cast<MPI_Request*>(request_);
  // A barrier left behind must still complete before MPI ends, unless it was abandoned: then the
  // process ends with abort(), and the request, still active, may not be freed.
  if (request == nullptr) return;
  if (abandoned_ && !passed_) return;
  if (!passed_) MPI_Wait(request, MPI_STATUS_IGNORE);
  delete request;
}

std::unique_ptr<Session::Arrival> Session::arrive() const {
  return std::unique_ptr<Arrival>(new Arrival(mpi_));
}

void Session::abort(int code) const {
  std::fflush(nullptr);
  if (mpi_) MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

std::vector<ClockOffset> Session::clock_offsets(int rounds) const {
  if (!mpi_) return {ClockOffset{}};
  std::vector<ClockOffset> offsets;
  if (rank_ == 0) {
    offsets.push_back(ClockOffset{});
    std::vector<RoundTrip> samples(static_cast<size_t>(rounds));
    for (int peer = 1; peer < size_; ++peer) {
      for (RoundTrip& sample : samples) {
        sample.sent_ns = now_ns();
        check_mpi(MPI_Send(&sample.sent_ns, 1, MPI_INT64_T, peer, kProbeTag, MPI_COMM_WORLD),
                  "MPI_Send");
        check_mpi(MPI_Recv(&sample.remote_ns, 1, MPI_INT64_T, peer, kProbeTag, MPI_COMM_WORLD,
                           MPI_STATUS_IGNORE),
                  "MPI_Recv");
        sample.received_ns = now_ns();
      }
      offsets.push_back(estimate_offset(samples));
    }
    return offsets;
  }
  for (int round = 0; round < rounds; ++round) {
    int64_t probe = 0;
    check_mpi(MPI_Recv(&probe, 1, MPI_INT64_T, 0, kProbeTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
              "MPI_Recv");
    const int64_t reading = now_ns();
    check_mpi(MPI_Send(&reading, 1, MPI_INT64_T, 0, kProbeTag, MPI_COMM_WORLD), "MPI_Send");
  }
  return offsets;
}

}  // namespace etwire::cluster
