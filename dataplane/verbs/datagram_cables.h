// The software RNIC's cables between emulator processes on one machine. Each port a process
// drives gets a UDP socket on 127.0.0.1; a packet its transport starts leaves as one datagram to
// the socket of the packet's destination port, in whichever process that is. A datagram is the
// packet's header fields (nic::Packet), as the twin moves them: the payload is synthetic and only
// its length travels. The processes learn each other's socket ports over MPI when the cables are
// made, so concurrent runs never collide on a port number.
//
// Like a cable under overload, it loses what it cannot carry: a datagram the receiving socket's
// buffer cannot take is dropped by the kernel, and the transport's go-back-N resends it. Only
// the sender's side of a loss is counted (a refused send); the receiver's is the kernel's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "clock/time.h"
#include "cluster/session.h"
#include "nic/port.h"

struct sockaddr_in;

namespace etwire::dataplane {

struct CableCounters {
  uint64_t tx_packets = 0;
  uint64_t tx_bytes = 0;  // the packets' wire bytes, as the frames would be
  uint64_t rx_packets = 0;
  uint64_t rx_bytes = 0;
  uint64_t drops = 0;  // sends the kernel refused (its buffers full)
};

class DatagramCables {
 public:
  // One cable end per port of `speeds_bps` that `here` marks; the others are reached through
  // the processes of `session`. Collective: every process makes its cables at the same point.
  // Throws std::runtime_error when a socket cannot be made or the processes do not share a host.
  DatagramCables(const std::vector<bool>& here, const std::vector<uint64_t>& speeds_bps,
                 const cluster::Session& session);
  ~DatagramCables();
  DatagramCables(const DatagramCables&) = delete;
  DatagramCables& operator=(const DatagramCables&) = delete;

  // The cable end of run port `port`, which must be here.
  nic::Port& port(size_t port);
  const CableCounters& counters(size_t port) const;
  // Hands each datagram waiting at this process's ports to its port's receiver, at `now`;
  // returns how many.
  size_t receive(clock::Nanos now);

  class End;

 private:
  std::vector<std::unique_ptr<End>> ends_;  // by run port; null where another process drives it
  std::vector<sockaddr_in> peers_;          // every run port's socket, by run port
};

}  // namespace etwire::dataplane
