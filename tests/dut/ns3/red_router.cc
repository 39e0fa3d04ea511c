// A device under test that etwire did not write: an ns-3 (3.37) router in real time between two
// veths, with a point-to-point bottleneck whose egress queue is ns-3's RED with ECN.
//
//   veth --a-- [FdNetDevice  node A  p2p] ==bottleneck== [p2p  node B  FdNetDevice] --b-- veth
//
// Each p2p direction has its own RedQueueDisc (rate, delay, thresholds from the command line):
// frames from side a toward side b queue at A's egress, the reverse at B's. RED marks ECT packets
// CE (UseEcn) from its averaged queue (--qw 1: the instantaneous queue, as the twin marks), and
// with UseHardDrop=false also marks rather than drops above MaxTh; a full queue (MaxSize) drops.
//
// Addresses: each side is a /24 with the router's address (--a-router, --b-router) and etwire's
// port address (--a-host, --b-host). etwire does not answer ARP, so the router gets a permanent
// ARP entry for each etwire port (--a-host-mac, --b-host-mac) in its own ArpCache. The other way
// (giving the kernel end of the veth etwire's address so that the kernel answers ARP, and
// dropping UDP 4791 at its ingress) would put a second stack on etwire's wire: its own frames
// (IPv6 off or not, gratuitous ARP, ICMP errors for RoCE traffic the filter misses) would pass
// through the device's counters. Static entries keep the wire to etwire's frames alone.
//
// The router's MACs are fixed (--a-mac, --b-mac): etwire addresses its frames to them
// (ports[].next_hop_mac).
//
// Output (stdout): "ready" once the simulator runs in real time with the ARP entries in place; at
// the end (SIGTERM, SIGINT or --duration) one line per direction (ab: side a toward side b):
//   red dir=ab received=N sent=N marked=N unforced_marks=N forced_marks=N dropped=N
//       unforced_drops=N forced_drops=N queue_full_drops=N
// (drops: RED's early and forced ones, and the rest, which is the queue at MaxSize).
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "ns3/core-module.h"
#include "ns3/fd-net-device-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

// After ns-3's headers: <linux/if_packet.h> defines PACKET_HOST and friends as macros, which
// ns-3's NetDevice::PacketType enumerators would then collide with.
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <sys/socket.h>
#include <unistd.h>

using namespace ns3;

namespace {

std::atomic<bool> g_stop{false};

void on_signal(int) {
  g_stop = true;
}

// The simulator runs in the main thread; a signal only sets a flag that an event polls.
void poll_stop() {
  if (g_stop) {
    Simulator::Stop();
    return;
  }
  Simulator::Schedule(MilliSeconds(10), &poll_stop);
}

void say_ready() {
  std::printf("ready\n");
  std::fflush(stdout);
}

void print_stats(const char* dir, Ptr<QueueDisc> disc) {
  const QueueDisc::Stats& s = disc->GetStats();
  const uint32_t unforced_marks = s.GetNMarkedPackets(RedQueueDisc::UNFORCED_MARK);
  const uint32_t forced_marks = s.GetNMarkedPackets(RedQueueDisc::FORCED_MARK);
  const uint32_t unforced_drops = s.GetNDroppedPackets(RedQueueDisc::UNFORCED_DROP);
  const uint32_t forced_drops = s.GetNDroppedPackets(RedQueueDisc::FORCED_DROP);
  std::printf(
      "red dir=%s received=%u sent=%u marked=%u unforced_marks=%u forced_marks=%u dropped=%u "
      "unforced_drops=%u forced_drops=%u queue_full_drops=%u\n",
      dir, s.nTotalReceivedPackets, s.nTotalSentPackets, s.nTotalMarkedPackets, unforced_marks,
      forced_marks, s.nTotalDroppedPackets, unforced_drops, forced_drops,
      s.nTotalDroppedPackets - unforced_drops - forced_drops);
  std::fflush(stdout);
}

// A raw socket on `dev`, bound to it and promiscuous: what EmuFdNetDeviceHelper opens, but here,
// since Debian's ns-3 looks for its socket-creator helper at its build path. Needs root (or
// CAP_NET_RAW). Exits with the reason when it cannot.
int open_raw_socket(const std::string& dev) {
  auto fail = [&](const char* what) {
    std::fprintf(stderr, "error: %s on %s: %s\n", what, dev.c_str(), std::strerror(errno));
    std::exit(2);
  };
  const int fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
  if (fd < 0) fail("socket(AF_PACKET)");
  const unsigned index = if_nametoindex(dev.c_str());
  if (index == 0) fail("if_nametoindex");
  sockaddr_ll ll{};
  ll.sll_family = AF_PACKET;
  ll.sll_protocol = htons(ETH_P_ALL);
  ll.sll_ifindex = static_cast<int>(index);
  if (bind(fd, reinterpret_cast<sockaddr*>(&ll), sizeof ll) != 0) fail("bind");
  packet_mreq mreq{};
  mreq.mr_ifindex = static_cast<int>(index);
  mreq.mr_type = PACKET_MR_PROMISC;
  if (setsockopt(fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mreq, sizeof mreq) != 0) {
    fail("PACKET_ADD_MEMBERSHIP promiscuous");
  }
  // Frames arrive in bursts of etwire's pacing catch-up and its polling; the socket holds them
  // until the simulator's reader thread takes them (the default buffer held ~90 1 KB frames).
  const int bytes = 16 << 20;
  if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof bytes) != 0) {
    fail("SO_RCVBUFFORCE");
  }
  return fd;
}

Ptr<NetDevice> install_fd_device(Ptr<Node> node, const std::string& dev, const std::string& mac) {
  FdNetDeviceHelper helper;
  helper.SetAttribute("RxQueueSize", UintegerValue(16384));
  Ptr<FdNetDevice> device = DynamicCast<FdNetDevice>(helper.Install(node).Get(0));
  device->SetFileDescriptor(open_raw_socket(dev));
  device->SetAddress(Mac48Address(mac.c_str()));
  return device;
}

// Interface `device` of `node`, addressed `address`/24, with a permanent ARP entry for the host.
void address_side(Ptr<Node> node, Ptr<NetDevice> device, const std::string& address,
                  const std::string& host, const std::string& host_mac) {
  Ptr<Ipv4> ipv4 = node->GetObject<Ipv4>();
  const int32_t index = ipv4->AddInterface(device);
  ipv4->AddAddress(index, Ipv4InterfaceAddress(Ipv4Address(address.c_str()), "255.255.255.0"));
  ipv4->SetUp(index);
  // An ARP cache is flushed when its device's link comes up, which an FdNetDevice reports when
  // it starts (at time 0): the entry goes in just after.
  Ptr<ArpCache> arp = node->GetObject<Ipv4L3Protocol>()->GetInterface(index)->GetArpCache();
  Simulator::Schedule(MilliSeconds(1), [arp, host, host_mac]() {
    ArpCache::Entry* entry = arp->Lookup(Ipv4Address(host.c_str()));
    if (entry == nullptr) entry = arp->Add(Ipv4Address(host.c_str()));
    entry->SetMacAddress(Mac48Address(host_mac.c_str()));
    entry->MarkPermanent();
  });
}

}  // namespace

int main(int argc, char* argv[]) {
  std::string a_dev = "r0", b_dev = "r1";
  std::string a_mac = "02:00:00:00:01:00", b_mac = "02:00:00:00:01:01";
  std::string a_router = "10.0.0.254", b_router = "10.0.1.254";
  std::string a_host = "10.0.0.1", b_host = "10.0.1.1";
  std::string a_host_mac = "02:00:00:00:00:10", b_host_mac = "02:00:00:00:00:11";
  std::string rate = "30Mbps", delay = "50us";
  double min_th = 10, max_th = 30, qw = 0.002, l_interm = 50;
  std::string max_size = "100p";
  bool use_ecn = true, gentle = false, hard_drop = false;
  double duration = 0;
  CommandLine cmd(__FILE__);
  cmd.AddValue("a-dev", "veth toward etwire's side a", a_dev);
  cmd.AddValue("b-dev", "veth toward etwire's side b", b_dev);
  cmd.AddValue("a-mac", "the router's MAC on side a", a_mac);
  cmd.AddValue("b-mac", "the router's MAC on side b", b_mac);
  cmd.AddValue("a-router", "the router's IPv4 address on side a (/24)", a_router);
  cmd.AddValue("b-router", "the router's IPv4 address on side b (/24)", b_router);
  cmd.AddValue("a-host", "etwire's port address on side a", a_host);
  cmd.AddValue("b-host", "etwire's port address on side b", b_host);
  cmd.AddValue("a-host-mac", "etwire's port MAC on side a (static ARP)", a_host_mac);
  cmd.AddValue("b-host-mac", "etwire's port MAC on side b (static ARP)", b_host_mac);
  cmd.AddValue("rate", "bottleneck rate, each direction", rate);
  cmd.AddValue("delay", "bottleneck one-way delay", delay);
  cmd.AddValue("min-th", "RED MinTh (in MaxSize's unit: packets or bytes)", min_th);
  cmd.AddValue("max-th", "RED MaxTh (in MaxSize's unit)", max_th);
  cmd.AddValue("max-size", "RED queue limit (\"100p\" or \"150000B\")", max_size);
  cmd.AddValue("qw", "RED queue weight of the average (1: the instantaneous queue)", qw);
  cmd.AddValue("l-interm", "RED 1/max_p: marking probability at MaxTh is 1/this", l_interm);
  cmd.AddValue("use-ecn", "mark ECT packets CE instead of dropping them", use_ecn);
  cmd.AddValue("gentle", "RED gentle mode (probability from max_p to 1 up to 2 x MaxTh)", gentle);
  cmd.AddValue("hard-drop", "drop (not mark) above MaxTh", hard_drop);
  cmd.AddValue("duration", "stop after this many seconds (0: at SIGTERM or SIGINT)", duration);
  cmd.Parse(argc, argv);

  GlobalValue::Bind("SimulatorImplementationType", StringValue("ns3::RealtimeSimulatorImpl"));
  // Routing rewrites TTL and ECN: the IPv4 header checksum must be written (etwire checks it).
  GlobalValue::Bind("ChecksumEnabled", BooleanValue(true));

  NodeContainer nodes;
  nodes.Create(2);
  PointToPointHelper p2p;
  p2p.SetDeviceAttribute("DataRate", StringValue(rate));
  p2p.SetChannelAttribute("Delay", StringValue(delay));
  // The device's own queue holds one packet: the queue builds in the queue disc.
  p2p.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("1p"));
  NetDeviceContainer link = p2p.Install(nodes);

  Ptr<NetDevice> a = install_fd_device(nodes.Get(0), a_dev, a_mac);
  Ptr<NetDevice> b = install_fd_device(nodes.Get(1), b_dev, b_mac);

  InternetStackHelper internet;
  internet.Install(nodes);

  // The queue discs go on before any address: the internet stack installs default queue discs on
  // devices as they get addresses, and TrafficControlHelper::Uninstall crashes on a device
  // without one.
  TrafficControlHelper tch;
  tch.SetRootQueueDisc("ns3::RedQueueDisc", "MinTh", DoubleValue(min_th), "MaxTh",
                       DoubleValue(max_th), "MaxSize", QueueSizeValue(QueueSize(max_size)), "QW",
                       DoubleValue(qw), "LInterm", DoubleValue(l_interm), "UseEcn",
                       BooleanValue(use_ecn), "Gentle", BooleanValue(gentle), "UseHardDrop",
                       BooleanValue(hard_drop), "LinkBandwidth", DataRateValue(DataRate(rate)),
                       "LinkDelay", TimeValue(Time(delay)));
  QueueDiscContainer discs = tch.Install(link);

  Ipv4AddressHelper p2p_addresses("10.255.255.0", "255.255.255.252");
  p2p_addresses.Assign(link);  // node A .1, node B .2
  address_side(nodes.Get(0), a, a_router, a_host, a_host_mac);
  address_side(nodes.Get(1), b, b_router, b_host, b_host_mac);

  Ipv4StaticRoutingHelper routing;
  const Ipv4Address b_net = Ipv4Address(b_router.c_str()).CombineMask("255.255.255.0");
  const Ipv4Address a_net = Ipv4Address(a_router.c_str()).CombineMask("255.255.255.0");
  routing.GetStaticRouting(nodes.Get(0)->GetObject<Ipv4>())
      ->AddNetworkRouteTo(b_net, "255.255.255.0", "10.255.255.2", 1);
  routing.GetStaticRouting(nodes.Get(1)->GetObject<Ipv4>())
      ->AddNetworkRouteTo(a_net, "255.255.255.0", "10.255.255.1", 1);
  for (uint32_t i = 0; i < 2; ++i) {
    nodes.Get(i)->GetObject<Ipv4>()->SetAttribute("IpForward", BooleanValue(true));
  }

  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);
  Simulator::Schedule(MilliSeconds(2), &say_ready);
  Simulator::ScheduleNow(&poll_stop);
  if (duration > 0) Simulator::Stop(Seconds(duration));
  Simulator::Run();
  print_stats("ab", discs.Get(0));
  print_stats("ba", discs.Get(1));
  Simulator::Destroy();
  return 0;
}
