// Across emulator processes: a connection between ports of two processes has its requester QP in
// one and its responder QP in the other, and what only the devices know (QP numbers, GIDs,
// starting PSNs, the responder buffer's address and rkey) crosses over MPI once, after every
// planned connection is opened. Each process then completes its halves with its peers' facts.
#include <fmt/format.h>

#include <cstdlib>
#include <map>
#include <sstream>
#include <stdexcept>

#include "dataplane/verbs/verbs_data_plane.h"
#include "dataplane/verbs/verbs_data_plane_internal.h"

namespace etwire::dataplane {

namespace {

std::string gid_hex(const ibv_gid& gid) {
  std::string hex;
  for (uint8_t byte : gid.raw) hex += fmt::format("{:02x}", byte);
  return hex;
}

bool parse_gid(const std::string& hex, ibv_gid& gid) {
  if (hex.size() != 2 * sizeof(gid.raw)) return false;
  for (size_t i = 0; i < sizeof(gid.raw); ++i) {
    char* end = nullptr;
    const std::string byte = hex.substr(2 * i, 2);
    gid.raw[i] = static_cast<uint8_t>(std::strtoul(byte.c_str(), &end, 16));
    if (end != byte.c_str() + 2) return false;
  }
  return true;
}

}  // namespace

void VerbsDataPlane::finish_connecting() {
  finished_connecting_ = true;
  // In one process every connection was completed when it was opened.
  if (processes_ == nullptr) return;
  // One line per half held here: its plan requester number, its side, and its facts.
  std::string mine;
  for (uint32_t index : unfinished_) {
    const Connection& c = *connections_[index];
    const bool requester = c.requester != nullptr;
    const PeerFacts f = local_facts(c, requester);
    mine += fmt::format("{} {} {} {} {} {} {}\n", c.plan_requester,
                        requester ? "requester" : "responder", f.qpn, gid_hex(f.gid), f.psn,
                        f.address, f.rkey);
  }
  const std::vector<std::string> all = processes_->all_gather(mine);
  std::map<std::pair<uint32_t, bool>, PeerFacts> announced;  // (plan requester, is requester)
  for (size_t process = 0; process < all.size(); ++process) {
    std::istringstream lines(all[process]);
    std::string line;
    while (std::getline(lines, line)) {
      std::istringstream fields(line);
      uint32_t plan = 0;
      std::string side;
      std::string gid;
      PeerFacts f;
      if (!(fields >> plan >> side >> f.qpn >> gid >> f.psn >> f.address >> f.rkey) ||
          !parse_gid(gid, f.gid)) {
        throw std::runtime_error(fmt::format(
            "emulator process {} announced a QP this process cannot read: \"{}\"", process, line));
      }
      announced[{plan, side == "requester"}] = f;
    }
  }
  for (uint32_t index : unfinished_) {
    Connection& c = *connections_[index];
    const bool requester = c.requester != nullptr;
    auto peer = announced.find({c.plan_requester, !requester});
    if (peer == announced.end()) {
      throw std::runtime_error(fmt::format(
          "the connection of {}: no emulator process announced its {} QP; the processes do not "
          "agree on the traffic plan",
          ports_between(c.src_port, c.dst_port), requester ? "responder" : "requester"));
    }
    const PeerFacts here = local_facts(c, requester);
    complete_connection(c, requester ? here : peer->second, requester ? peer->second : here);
  }
  if (!unfinished_.empty()) {
    notes_.push_back(fmt::format(
        "{} connection(s) between this process's ports and other processes' were completed with "
        "the QP numbers, GIDs, PSNs and rkeys the processes exchanged over MPI",
        unfinished_.size()));
  }
  unfinished_.clear();
}

}  // namespace etwire::dataplane
