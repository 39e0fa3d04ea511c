// The data executor must reject broken programs, not only pass good ones: otherwise the
// correctness sweep proves nothing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>

#include "collectives/data_executor.h"
#include "collectives/generate.h"
#include "collectives/program_builder.h"
#include "collectives/verify.h"

namespace etwire::collectives {
namespace {

using ::testing::HasSubstr;

// A copy of `program` with every dependency dropped (QP ids and chunk runs kept).
CollectiveProgram without_dependencies(const CollectiveProgram& program) {
  CollectiveProgram copy;
  ProgramBuilder builder(copy, program.ranks(), 1, 1);
  for (size_t m = 0; m < program.programs(); ++m) {
    builder.begin_member(program.position(m));
    builder.set_buffer_bytes(program.buffer_bytes(m));
    for (uint32_t i = 0; i < program.ops(m); ++i) {
      const OpView op = program.op(m, i);
      const StepTag tag{op.step, op.qp};
      if (op.is_send()) {
        builder.send_run(op.peer, op.chunks, tag);
      } else {
        builder.recv_run(op.peer, op.chunks, tag, op.kind == OpKind::kRecvReduce);
      }
    }
    builder.end_member();
  }
  return copy;
}

ResolvedSpec spec_of(CollectiveKind kind, Algorithm algorithm, uint32_t n, uint64_t bytes,
                     uint32_t chunks = 1) {
  CollectiveSpec spec;
  spec.collective = kind;
  spec.algorithm = algorithm;
  for (uint32_t r = 0; r < n; ++r) spec.ranks.push_back(static_cast<int32_t>(r));
  spec.bytes = bytes;
  spec.chunks = chunks;
  return resolve(spec);
}

// Runs every policy (and many random seeds) and returns the first error, if any.
std::string first_error(const ResolvedSpec& spec, const CollectiveProgram& program) {
  for (SchedulePolicy policy : {SchedulePolicy::kFifo, SchedulePolicy::kLifo}) {
    ExecutionOptions options;
    options.policy = policy;
    if (auto error = verify(spec, program, options); !error.empty()) return error;
  }
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    ExecutionOptions options;
    options.policy = SchedulePolicy::kRandom;
    options.seed = seed;
    if (auto error = verify(spec, program, options); !error.empty()) return error;
  }
  return "";
}

TEST(DataExecutor, MissingDependenciesForwardStaleDataUnderSomeSchedule) {
  for (Algorithm algorithm : {Algorithm::kRing, Algorithm::kBidirectionalRing,
                              Algorithm::kHalvingDoubling, Algorithm::kDoubleBinaryTree}) {
    const ResolvedSpec spec = spec_of(trace::CollectiveType::kAllReduce, algorithm, 6, 600, 2);
    const CollectiveProgram good = ProgramGenerator(spec).generate();
    ASSERT_EQ(first_error(spec, good), "") << algorithm_name(algorithm);
    EXPECT_THAT(first_error(spec, without_dependencies(good)), HasSubstr("expected"))
        << algorithm_name(algorithm);
  }
}

TEST(DataExecutor, BarrierWithoutDependenciesLetsARankLeaveEarly) {
  const ResolvedSpec spec =
      spec_of(trace::CollectiveType::kBarrier, Algorithm::kDissemination, 5, 0);
  const CollectiveProgram good = ProgramGenerator(spec).generate();
  ASSERT_EQ(first_error(spec, good), "");
  EXPECT_THAT(first_error(spec, without_dependencies(good)),
              HasSubstr("can leave the barrier before rank"));
}

TEST(DataExecutor, WrongReductionIsCaught) {
  // Both members of a 2-rank all-reduce copy instead of adding: each ends with the other's data.
  const ResolvedSpec spec = spec_of(trace::CollectiveType::kAllReduce, Algorithm::kRing, 2, 8);
  CollectiveProgram program;
  ProgramBuilder b(program, spec.ranks, 1, 128);
  for (uint32_t p = 0; p < 2; ++p) {
    b.begin_member(p);
    b.set_buffer_bytes(8);
    b.send(1 - p, {0, 8}, {});
    b.recv(1 - p, {0, 8}, {}, false);
    b.end_member();
  }
  EXPECT_THAT(verify(spec, program), HasSubstr("rank 0: byte 0 is"));
}

CollectiveProgram two_members(const std::function<void(ProgramBuilder&, uint32_t)>& body,
                              uint64_t buffer = 16) {
  CollectiveProgram program;
  const std::vector<int32_t> ranks = {10, 20};
  ProgramBuilder b(program, ranks, 1, 128);
  for (uint32_t p = 0; p < 2; ++p) {
    b.begin_member(p);
    b.set_buffer_bytes(buffer);
    body(b, p);
    b.end_member();
  }
  return program;
}

ExecutionResult run(const CollectiveProgram& program) {
  std::vector<Cells> buffers;
  for (size_t p = 0; p < program.programs(); ++p) buffers.emplace_back(program.buffer_bytes(p), 0);
  return execute(program, std::move(buffers), {});
}

TEST(DataExecutor, ReceiveWithoutSendIsReported) {
  auto program = two_members([](ProgramBuilder& b, uint32_t p) {
    if (p == 1) b.recv(0, {0, 4}, {}, false);
  });
  EXPECT_THAT(run(program).error, HasSubstr("rank 20 op #0 (recv from rank 10"));
  EXPECT_THAT(run(program).error, HasSubstr("never gets a matching send"));
}

TEST(DataExecutor, SendNobodyReceivesIsReported) {
  auto program = two_members([](ProgramBuilder& b, uint32_t p) {
    if (p == 0) b.send(1, {0, 4}, {});
  });
  EXPECT_THAT(run(program).error, HasSubstr("rank 10 sent 1 message(s) on QP 0 that rank 20"));
}

TEST(DataExecutor, CircularWaitIsADeadlock) {
  // Each member forwards only what it has received first: nobody starts.
  auto program = two_members([](ProgramBuilder& b, uint32_t p) {
    const Transfer got = b.recv(1 - p, {0, 4}, {}, false);
    b.send(1 - p, {0, 4}, {}, {&got, 1});
  });
  EXPECT_THAT(run(program).error, HasSubstr("deadlock"));
}

TEST(DataExecutor, QpOrderMatchesSendsToReceives) {
  // Member 0 sends 4 then 8 bytes; member 1 posts 8 then 4: the first pair disagrees.
  auto program = two_members([](ProgramBuilder& b, uint32_t p) {
    if (p == 0) {
      b.send(1, {0, 4}, {});
      b.send(1, {4, 8}, {});
    } else {
      b.recv(0, {0, 8}, {}, false);
      b.recv(0, {8, 4}, {}, false);
    }
  });
  EXPECT_THAT(run(program).error, HasSubstr("which carries 4 bytes"));
}

TEST(DataExecutor, RangeOutsideTheBufferIsRejected) {
  auto program = two_members(
      [](ProgramBuilder& b, uint32_t p) {
        if (p == 0) b.send(1, {6, 4}, {});
        if (p == 1) b.recv(0, {0, 4}, {}, false);
      },
      8);
  EXPECT_THAT(run(program).error, HasSubstr("outside the 8-byte buffer"));
}

TEST(DataExecutor, DistinctQpsAreIndependentQueues) {
  // Sends on QP 0 and 1 may be received in either order across QPs, but in order within one.
  auto program = two_members([](ProgramBuilder& b, uint32_t p) {
    if (p == 0) {
      b.send(1, {0, 4}, {0, 0, 1});
      b.send(1, {4, 4}, {0, 0, 0});
    } else {
      b.recv(0, {4, 4}, {0, 0, 0}, false);
      b.recv(0, {0, 4}, {0, 0, 1}, false);
    }
  });
  EXPECT_TRUE(run(program).ok()) << run(program).error;
}

TEST(DataExecutor, ChunkRunsMatchChunkByChunk) {
  // A run of three chunks sent as one operation fills three one-chunk receives, in chunk order.
  auto program = two_members([](ProgramBuilder& b, uint32_t p) {
    if (p == 0) {
      b.send_run(1, {0, 3, {0, 4}, 4}, {});
    } else {
      for (uint32_t c = 0; c < 3; ++c) b.recv(0, {4 * c, 4}, {c, 0, 0}, false);
    }
  });
  EXPECT_TRUE(run(program).ok()) << run(program).error;
  // Receives posted in another chunk order do not match the run's posting order.
  auto swapped = two_members([](ProgramBuilder& b, uint32_t p) {
    if (p == 0) {
      b.send_run(1, {0, 2, {0, 4}, 4}, {});
    } else {
      b.recv(0, {4, 4}, {1, 0, 0}, false);
      b.recv(0, {0, 4}, {0, 0, 0}, false);
    }
  });
  EXPECT_THAT(run(swapped).error, HasSubstr("which carries 4 bytes of chunk 0"));
}

TEST(DataExecutor, ChunkRunWaitsChunkWise) {
  // Member 1 forwards each chunk back as soon as that chunk arrived: chunk k of the send waits
  // only for chunk k of the receive, so the run completes (with one-chunk receives in between).
  auto program = two_members(
      [](ProgramBuilder& b, uint32_t p) {
        if (p == 0) {
          b.send_run(1, {0, 2, {0, 4}, 4}, {});
          b.recv_run(1, {0, 2, {8, 4}, 4}, {1, 0}, false);
        } else {
          const Transfer got = b.recv_run(0, {0, 2, {0, 4}, 4}, {}, false);
          b.send_run(0, {0, 2, {0, 4}, 4}, {1, 0}, {&got, 1});
        }
      },
      16);
  const ExecutionResult result = run(program);
  ASSERT_TRUE(result.ok()) << result.error;
  EXPECT_EQ(result.buffers[0][8], result.buffers[0][0]);
}

}  // namespace
}  // namespace etwire::collectives
