// This process's place among the emulator processes of one run. Under an MPI launcher (mpirun,
// or any that sets the MPI environment) it is an MPI process of MPI_COMM_WORLD; otherwise a
// session of one. Emulator processes (a run split by `emulators`) use MPI for setup only
// (agreeing on what was loaded, a start barrier, clock offsets): their traffic never waits on an
// MPI call. A fabric twin spread over the processes meets them after every window of virtual
// time (spread_work.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cluster/clock_offset.h"

namespace etwire::cluster {

// Whether an MPI launcher started this process: its environment has Open MPI's, PMI's or PMIx's
// rank variables.
bool launched_by_mpi();

class Session {
 public:
  // Starts MPI when launched_by_mpi(), else a session of one process. Once per process, before
  // any other thread starts; MPI ends with the session. `current()` returns it from then on.
  static std::unique_ptr<Session> start(int* argc, char*** argv);
  // The session start() made; a session of one when there is none (tests, tools).
  static const Session& current();
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  bool mpi() const { return mpi_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  const std::string& host() const { return host_; }
  // The host of every process, in rank order (learnt when the session started).
  const std::vector<std::string>& hosts() const { return hosts_; }

  // Every process's `mine`, in rank order; collective (every process must call it).
  std::vector<std::string> all_gather(const std::string& mine) const;
  void barrier() const;
  // A barrier this process arrives at now and keeps working past (polling its ports, answering
  // the others' traffic) until every process has arrived: passed() says when. Collective.
  class Arrival {
   public:
    bool passed();
    // Stops waiting for the others (a stop request): the barrier is left behind, and the
    // process must then end with Session::abort, never a normal MPI finish.
    void abandon() { abandoned_ = true; }
    ~Arrival();

   private:
    friend class Session;
    explicit Arrival(bool mpi);
    bool mpi_ = false;
    bool passed_ = false;
    bool abandoned_ = false;
    void* request_ = nullptr;  // an MPI_Request, kept out of this header
  };
  std::unique_ptr<Arrival> arrive() const;
  // On process 0: every process's clock offset to process 0 (its own is zero), from `rounds`
  // round trips each; elsewhere empty. Collective.
  std::vector<ClockOffset> clock_offsets(int rounds) const;
  // Ends every process of the run with `code` (the launcher ends the others): for a process that
  // cannot meet the others again. Outside MPI, exits with `code`.
  [[noreturn]] void abort(int code) const;

 private:
  Session(bool mpi, int rank, int size, std::string host);

  bool mpi_ = false;
  int rank_ = 0;
  int size_ = 1;
  std::string host_;
  std::vector<std::string> hosts_;
};

}  // namespace etwire::cluster
