// The wire directory: connections found by their QPs' run numbers to send, and by the receiving
// port and the wire number for a frame received, where each port numbers its own QPs.
#include "nic/frame/wire_directory.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace etwire::nic {
namespace {

Packet to_qp(uint8_t op, uint32_t qpn) {
  Packet p;
  p.opcode = op;
  p.dest_qpn = qpn;
  return p;
}

WireRoute route(WireEnd requester, WireEnd responder) {
  WireRoute r;
  r.requester = requester;
  r.responder = responder;
  return r;
}

// Ports 0 and 1 each number their QPs from 256: connection 0 from port 0 to 1, connection 1 back.
class WireDirectoryTest : public ::testing::Test {
 protected:
  WireDirectoryTest() {
    directory.add(0, route({0, 256, 0, 256}, {1, 257, 0, 256}));
    directory.add(1, route({1, 258, 0, 257}, {0, 259, 0, 257}));
  }
  WireDirectory directory;
};

TEST_F(WireDirectoryTest, SendsByRunNumber) {
  EXPECT_EQ(directory.connection_of(to_qp(opcode::kWriteOnly, 257)), 0u);
  EXPECT_EQ(directory.connection_of(to_qp(opcode::kAcknowledge, 256)), 0u);
  EXPECT_EQ(directory.connection_of(to_qp(opcode::kWriteOnly, 259)), 1u);
  EXPECT_EQ(directory.connection_of(to_qp(opcode::kCnp, 258)), 1u);
  EXPECT_EQ(directory.connection_of(to_qp(opcode::kWriteOnly, 256)), WireDirectory::kNone);
}

TEST_F(WireDirectoryTest, ReceivesByPortAndWireNumber) {
  // Data to wire QP 256: port 1's responder is connection 0's; port 0 has no responder 256.
  EXPECT_EQ(directory.connection_received(1, to_qp(opcode::kWriteFirst, 256)), 0u);
  EXPECT_EQ(directory.connection_received(0, to_qp(opcode::kWriteFirst, 256)),
            WireDirectory::kNone);
  EXPECT_EQ(directory.connection_received(0, to_qp(opcode::kWriteFirst, 257)), 1u);
  // ACKs and CNPs go to requesters: 256 on port 0, 257 on port 1.
  EXPECT_EQ(directory.connection_received(0, to_qp(opcode::kAcknowledge, 256)), 0u);
  EXPECT_EQ(directory.connection_received(1, to_qp(opcode::kCnp, 257)), 1u);
  EXPECT_EQ(directory.connection_received(1, to_qp(opcode::kAcknowledge, 256)),
            WireDirectory::kNone);
  EXPECT_EQ(directory.connection_received(7, to_qp(opcode::kAcknowledge, 256)),
            WireDirectory::kNone)
      << "a port no connection uses";
  // The route turns the wire number back into the run number, and a packet's into the wire's.
  const WireRoute* r = directory.route(0);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->run_dest_qpn(to_qp(opcode::kWriteFirst, 256)), 257u);
  EXPECT_EQ(r->wire_dest_qpn(to_qp(opcode::kWriteFirst, 257)), 256u);
  EXPECT_EQ(r->wire_dest_qpn(to_qp(opcode::kAcknowledge, 256)), 256u);
}

TEST_F(WireDirectoryTest, AWireNumberTwiceOnAPortOrPastTwentyFourBitsIsRefused) {
  // Port 1 already has responder 256 on the wire (connection 0).
  EXPECT_THROW(directory.add(2, route({0, 300, 0, 300}, {1, 301, 0, 256})), std::invalid_argument);
  // The same wire number on another port is that port's own.
  EXPECT_NO_THROW(directory.add(3, route({2, 302, 0, 256}, {3, 303, 0, 256})));
  EXPECT_THROW(directory.add(4, route({0, 304, 0, 1u << 24}, {1, 305, 0, 400})),
               std::invalid_argument);
  // Without a wire number a QP's run number is its wire number, and must fit.
  EXPECT_THROW(directory.add(5, route({0, 1u << 24, 0, 0}, {1, 306, 0, 0})), std::invalid_argument);
}

}  // namespace
}  // namespace etwire::nic
