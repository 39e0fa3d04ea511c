#include "cluster/spread_work.h"

#include <mpi.h>

#include <limits>

#include "cluster/mpi_check.h"

namespace etwire::cluster {

namespace {

// MPI counts bytes in int.
std::vector<int> offsets_of(const std::vector<int>& lengths, const char* what) {
  std::vector<int> offsets(lengths.size());
  int64_t total = 0;
  for (size_t p = 0; p < lengths.size(); ++p) {
    offsets[p] = static_cast<int>(total);
    total += lengths[p];
  }
  if (total > std::numeric_limits<int>::max()) {
    throw std::runtime_error(std::string(what) + ": more than 2 GiB in one exchange");
  }
  return offsets;
}

}  // namespace

std::vector<std::string> all_to_all(const Session& session,
                                    const std::vector<std::string>& to_each) {
  const auto processes = static_cast<size_t>(session.size());
  if (to_each.size() != processes) {
    throw std::logic_error("all_to_all: one block per process");
  }
  if (!session.mpi()) return to_each;
  std::vector<int> sent_lengths(processes);
  std::string sent;
  for (size_t p = 0; p < processes; ++p) {
    if (to_each[p].size() > static_cast<size_t>(std::numeric_limits<int>::max())) {
      throw std::runtime_error("all_to_all: a block of more than 2 GiB");
    }
    sent_lengths[p] = static_cast<int>(to_each[p].size());
    sent += to_each[p];
  }
  std::vector<int> received_lengths(processes);
  check_mpi(MPI_Alltoall(sent_lengths.data(), 1, MPI_INT, received_lengths.data(), 1, MPI_INT,
                         MPI_COMM_WORLD),
            "MPI_Alltoall");
  const std::vector<int> sent_offsets = offsets_of(sent_lengths, "all_to_all");
  const std::vector<int> received_offsets = offsets_of(received_lengths, "all_to_all");
  std::string received(static_cast<size_t>(received_offsets.back() + received_lengths.back()),
                       '\0');
  check_mpi(MPI_Alltoallv(sent.data(), sent_lengths.data(), sent_offsets.data(), MPI_CHAR,
                          received.data(), received_lengths.data(), received_offsets.data(),
                          MPI_CHAR, MPI_COMM_WORLD),
            "MPI_Alltoallv");
  std::vector<std::string> from_each(processes);
  for (size_t p = 0; p < processes; ++p) {
    from_each[p] = received.substr(static_cast<size_t>(received_offsets[p]),
                                   static_cast<size_t>(received_lengths[p]));
  }
  return from_each;
}

namespace {

template <typename Value>
void all_reduce(const Session& session, std::span<Value> values, MPI_Datatype type, MPI_Op op) {
  if (!session.mpi() || values.empty()) return;
  if (values.size() > static_cast<size_t>(std::numeric_limits<int>::max())) {
    throw std::runtime_error("all_reduce: too many values in one call");
  }
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), type, op,
                          MPI_COMM_WORLD),
            "MPI_Allreduce");
}

}  // namespace

void all_sum(const Session& session, std::span<uint64_t> values) {
  all_reduce(session, values, MPI_UINT64_T, MPI_SUM);
}

void all_sum(const Session& session, std::span<double> values) {
  all_reduce(session, values, MPI_DOUBLE, MPI_SUM);
}

void all_min(const Session& session, std::span<int64_t> values) {
  all_reduce(session, values, MPI_INT64_T, MPI_MIN);
}

}  // namespace etwire::cluster
