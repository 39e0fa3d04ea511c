#include "collectives/data_executor.h"

#include <fmt/format.h>

#include <deque>
#include <random>
#include <unordered_map>

namespace etwire::collectives {

namespace {

struct Message {
  Cells data;
  uint32_t chunk = 0;
  std::vector<uint64_t> knowledge;
};

// One direction of one QP between two members: sends and receives in program order.
struct Channel {
  uint32_t src = 0;
  uint32_t dst = 0;
  uint16_t qp = 0;
  std::vector<uint64_t> sends;  // global op ids
  std::vector<uint64_t> recvs;
  size_t next_send = 0;
  size_t next_recv = 0;
  std::deque<Message> in_flight;
};

class Executor {
 public:
  Executor(const CollectiveProgram& program, std::vector<Cells> buffers,
           const ExecutionOptions& options)
      : program_(program), options_(options), rng_(options.seed) {
    result_.buffers = std::move(buffers);
  }

  ExecutionResult run() {
    if (!index()) return std::move(result_);
    for (uint64_t g = 0; g < member_of_.size(); ++g) consider(g);
    uint64_t executed = 0;
    while (!ready_.empty()) {
      const uint64_t g = pick();
      if (!execute(g)) return std::move(result_);
      ++executed;
    }
    if (executed != member_of_.size()) {
      result_.error = diagnose_stall();
      return std::move(result_);
    }
    for (const Channel& channel : channels_) {
      if (!channel.in_flight.empty()) {
        result_.error =
            fmt::format("{} sent {} message(s) on QP {} that {} never receives", who(channel.src),
                        channel.in_flight.size(), channel.qp, who(channel.dst));
        return std::move(result_);
      }
    }
    if (options_.track_causality) collect_causality();
    return std::move(result_);
  }

 private:
  // "rank R" for a member, "aggregation node K" for a CollNet node.
  std::string who(uint32_t position) const {
    return program_.is_member(position)
               ? fmt::format("rank {}", program_.ranks()[position])
               : fmt::format("aggregation node {}", position - program_.members());
  }
  // Executions are per chunk operation: g numbers every (operation, chunk) of every member,
  // members in order, each member's operations in order, each operation's chunks ascending.
  ChunkOpView view(uint64_t g) const {
    return program_.op(member_of_[g], index_of_[g], chunk_of_[g]);
  }
  // The chunk operation g waits for through dependency `dep` (an operation index of its member):
  // the same chunk of that operation.
  uint64_t dependency(uint64_t g, uint32_t dep) const {
    const uint64_t op = member_first_op_[member_of_[g]] + dep;
    return first_chunk_op_[op] + (chunk_of_[g] - chunk_begin_[op]);
  }

  std::string describe(uint64_t g) const {
    const ChunkOpView op = view(g);
    return fmt::format("{} op #{} ({} {} {}, {} bytes, chunk {}, step {}, QP {})",
                       who(member_of_[g]), index_of_[g], op_kind_name(op.kind),
                       op.is_send() ? "to" : "from", who(op.peer), op.range.length, op.chunk,
                       op.step, op.qp);
  }

  // Expands operations into chunk operations, checks each against the program's own rules, and
  // wires dependencies and channels.
  bool index() {
    const uint32_t n = program_.participants();
    if (program_.programs() != n) {
      result_.error = fmt::format("program holds {} of {} participants", program_.programs(), n);
      return false;
    }
    if (result_.buffers.size() != n) {
      result_.error = "one buffer per participant is required";
      return false;
    }
    words_ = (n + 63) / 64;
    std::unordered_map<uint64_t, uint32_t> channel_of;
    member_first_op_.assign(n + 1, 0);
    for (uint32_t m = 0; m < n; ++m) {
      member_first_op_[m + 1] = member_first_op_[m] + program_.ops(m);
    }
    first_chunk_op_.resize(member_first_op_[n]);
    chunk_begin_.resize(member_first_op_[n]);
    uint64_t total = 0;
    for (uint32_t m = 0; m < n; ++m) {
      if (program_.position(m) != m) {
        result_.error = "programs must be held in position order";
        return false;
      }
      for (uint32_t i = 0; i < program_.ops(m); ++i) {
        const ChunkRun chunks = program_.op(m, i).chunks;
        if (chunks.chunk_count == 0) {
          result_.error = fmt::format("{} op #{} covers no chunk", who(m), i);
          return false;
        }
        first_chunk_op_[member_first_op_[m] + i] = total;
        chunk_begin_[member_first_op_[m] + i] = chunks.chunk_begin;
        total += chunks.chunk_count;
      }
    }
    member_of_.resize(total);
    index_of_.resize(total);
    chunk_of_.resize(total);
    channel_.resize(total);
    waiting_.assign(total, 0);
    state_.assign(total, kPending);
    dependents_begin_.assign(total + 1, 0);
    uint64_t g = 0;
    for (uint32_t m = 0; m < n; ++m) {
      for (uint32_t i = 0; i < program_.ops(m); ++i) {
        const OpView run = program_.op(m, i);
        for (uint32_t k = run.chunks.chunk_begin; k < run.chunks.chunk_end(); ++k, ++g) {
          member_of_[g] = m;
          index_of_[g] = i;
          chunk_of_[g] = k;
          if (!check(g)) return false;
          for (uint32_t dep : run.deps) ++dependents_begin_[dependency(g, dep) + 1];
          waiting_[g] = static_cast<uint32_t>(run.deps.size());
          const uint32_t src = run.is_send() ? m : run.peer;
          const uint32_t dst = run.is_send() ? run.peer : m;
          const uint64_t key = (static_cast<uint64_t>(src) * n + dst) * 65536 + run.qp;
          auto [it, inserted] = channel_of.emplace(key, static_cast<uint32_t>(channels_.size()));
          if (inserted) channels_.push_back(Channel{src, dst, run.qp, {}, {}, 0, 0, {}});
          channel_[g] = it->second;
          (run.is_send() ? channels_[it->second].sends : channels_[it->second].recvs).push_back(g);
        }
      }
    }
    for (uint64_t x = 0; x < total; ++x) dependents_begin_[x + 1] += dependents_begin_[x];
    dependents_.resize(dependents_begin_[total]);
    std::vector<uint64_t> fill(dependents_begin_.begin(), dependents_begin_.end() - 1);
    for (uint64_t x = 0; x < total; ++x) {
      for (uint32_t dep : view(x).deps) dependents_[fill[dependency(x, dep)]++] = x;
    }
    if (options_.track_causality) knowledge_.assign(total * words_, 0);
    return true;
  }

  // Chunk operation g against the program's rules: peer, bytes, and dependencies on earlier
  // operations that have the same chunk.
  bool check(uint64_t g) {
    const ChunkOpView op = view(g);
    const uint32_t m = member_of_[g];
    const uint32_t i = index_of_[g];
    if (op.peer >= program_.participants()) {
      result_.error = fmt::format("{}: peer position {} outside the group", describe(g), op.peer);
      return false;
    }
    if (op.range.end() > result_.buffers[m].size()) {
      result_.error = fmt::format("{}: bytes [{}, {}) outside the {}-byte buffer", describe(g),
                                  op.range.offset, op.range.end(), result_.buffers[m].size());
      return false;
    }
    for (uint32_t dep : op.deps) {
      if (dep >= i) {
        result_.error =
            fmt::format("{}: depends on op #{}, which does not precede it", describe(g), dep);
        return false;
      }
      if (!program_.op(m, dep).chunks.covers(op.chunk)) {
        result_.error =
            fmt::format("{}: depends on op #{}, which has no chunk {}", describe(g), dep, op.chunk);
        return false;
      }
    }
    return true;
  }

  // Queues g if everything it waits for is there.
  void consider(uint64_t g) {
    if (state_[g] != kPending || waiting_[g] != 0) return;
    const Channel& channel = channels_[channel_[g]];
    if (view(g).is_send()) {
      if (channel.sends[channel.next_send] != g) return;
    } else {
      if (channel.recvs[channel.next_recv] != g || channel.in_flight.empty()) return;
    }
    state_[g] = kReady;
    ready_.push_back(g);
  }

  uint64_t pick() {
    size_t at = 0;
    switch (options_.policy) {
      case SchedulePolicy::kFifo:
        at = ready_head_;
        break;
      case SchedulePolicy::kLifo:
        at = ready_.size() - 1;
        break;
      case SchedulePolicy::kRandom:
        at = ready_head_ +
             std::uniform_int_distribution<size_t>(0, ready_.size() - ready_head_ - 1)(rng_);
        break;
    }
    const uint64_t g = ready_[at];
    if (options_.policy == SchedulePolicy::kFifo) {
      ++ready_head_;
    } else {
      ready_[at] = ready_.back();
      ready_.pop_back();
    }
    if (ready_head_ == ready_.size()) {
      ready_.clear();
      ready_head_ = 0;
    }
    return g;
  }

  std::span<uint64_t> knowledge(uint64_t g) { return {&knowledge_[g * words_], words_}; }

  bool execute(uint64_t g) {
    const ChunkOpView op = view(g);
    const uint32_t m = member_of_[g];
    Channel& channel = channels_[channel_[g]];
    Cells& buffer = result_.buffers[m];
    if (options_.track_causality) {
      auto mine = knowledge(g);
      mine[m / 64] |= uint64_t{1} << (m % 64);
      for (uint32_t dep : op.deps) {
        auto theirs = knowledge(dependency(g, dep));
        for (size_t w = 0; w < words_; ++w) mine[w] |= theirs[w];
      }
    }
    if (op.is_send()) {
      Message message;
      message.data.assign(buffer.begin() + static_cast<ptrdiff_t>(op.range.offset),
                          buffer.begin() + static_cast<ptrdiff_t>(op.range.end()));
      message.chunk = op.chunk;
      if (options_.track_causality) {
        auto mine = knowledge(g);
        message.knowledge.assign(mine.begin(), mine.end());
      }
      channel.in_flight.push_back(std::move(message));
      ++channel.next_send;
      finish(g);
      if (channel.next_send < channel.sends.size()) consider(channel.sends[channel.next_send]);
      if (channel.next_recv < channel.recvs.size()) consider(channel.recvs[channel.next_recv]);
      return true;
    }
    Message message = std::move(channel.in_flight.front());
    channel.in_flight.pop_front();
    const uint64_t sender = channel.sends[channel.next_recv];
    if (message.data.size() != op.range.length || message.chunk != op.chunk) {
      result_.error =
          fmt::format("{} is matched by {}, which carries {} bytes of chunk {}", describe(g),
                      describe(sender), message.data.size(), message.chunk);
      return false;
    }
    for (uint64_t i = 0; i < op.range.length; ++i) {
      uint64_t& cell = buffer[op.range.offset + i];
      cell = op.kind == OpKind::kRecvReduce ? cell + message.data[i] : message.data[i];
    }
    if (options_.track_causality) {
      auto mine = knowledge(g);
      for (size_t w = 0; w < words_; ++w) mine[w] |= message.knowledge[w];
    }
    ++channel.next_recv;
    finish(g);
    if (channel.next_recv < channel.recvs.size()) consider(channel.recvs[channel.next_recv]);
    return true;
  }

  void finish(uint64_t g) {
    state_[g] = kDone;
    for (uint64_t i = dependents_begin_[g]; i < dependents_begin_[g + 1]; ++i) {
      const uint64_t d = dependents_[i];
      --waiting_[d];
      consider(d);
    }
  }

  // Nothing can run but some operations have not: name one that waits on the network.
  std::string diagnose_stall() const {
    uint64_t pending = 0;
    for (uint64_t g = 0; g < state_.size(); ++g) pending += state_[g] == kPending ? 1 : 0;
    for (uint64_t g = 0; g < state_.size(); ++g) {
      if (state_[g] != kPending || waiting_[g] != 0 || view(g).is_send()) continue;
      const Channel& channel = channels_[channel_[g]];
      if (channel.recvs[channel.next_recv] != g) continue;
      if (channel.next_send == channel.sends.size()) {
        return fmt::format("{} never gets a matching send ({} operations cannot run)", describe(g),
                           pending);
      }
      return fmt::format("deadlock: {} waits for {}, which cannot run ({} operations stuck)",
                         describe(g), describe(channel.sends[channel.next_send]), pending);
    }
    return fmt::format("deadlock: {} operations wait on each other", pending);
  }

  void collect_causality() {
    const uint32_t n = program_.members();
    result_.heard_from.assign(n, std::vector<bool>(n, false));
    for (uint64_t g = 0; g < member_of_.size(); ++g) {
      auto mine = std::span<const uint64_t>(&knowledge_[g * words_], words_);
      auto& heard = result_.heard_from[member_of_[g]];
      for (uint32_t q = 0; q < n; ++q) {
        if ((mine[q / 64] >> (q % 64)) & 1) heard[q] = true;
      }
    }
    for (uint32_t m = 0; m < n; ++m) result_.heard_from[m][m] = true;
  }

  static constexpr uint8_t kPending = 0;
  static constexpr uint8_t kReady = 1;
  static constexpr uint8_t kDone = 2;

  const CollectiveProgram& program_;
  ExecutionOptions options_;
  std::mt19937_64 rng_;
  ExecutionResult result_;
  size_t words_ = 1;
  std::vector<uint64_t> member_first_op_;  // per member: index of its first operation, overall
  std::vector<uint64_t> first_chunk_op_;   // per operation overall: its first chunk operation
  std::vector<uint32_t> chunk_begin_;      // per operation overall: its first chunk
  // Per chunk operation: member, operation index in the member's program, chunk.
  std::vector<uint32_t> member_of_;
  std::vector<uint32_t> index_of_;
  std::vector<uint32_t> chunk_of_;
  std::vector<uint32_t> channel_;
  std::vector<uint32_t> waiting_;
  std::vector<uint8_t> state_;
  std::vector<uint64_t> dependents_begin_;
  std::vector<uint64_t> dependents_;
  std::vector<Channel> channels_;
  std::vector<uint64_t> ready_;
  size_t ready_head_ = 0;
  std::vector<uint64_t> knowledge_;
};

}  // namespace

ExecutionResult execute(const CollectiveProgram& program, std::vector<Cells> buffers,
                        const ExecutionOptions& options) {
  return Executor(program, std::move(buffers), options).run();
}

}  // namespace etwire::collectives
