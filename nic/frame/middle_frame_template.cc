#include "nic/frame/middle_frame_template.h"

#include <algorithm>

#include "nic/frame/icrc.h"
#include "nic/frame_size.h"

namespace etwire::frame {

PsnWordShift::PsnWordShift(const PayloadPattern& payload, uint32_t payload_and_pad)
    : payload_(payload), payload_and_pad_(payload_and_pad) {
  // A word's effect with the starting register's taken out: extend(crc(0, w)) ^ extend(0).
  const uint32_t none = payload.extend(0, payload_and_pad);
  for (uint32_t k = 0; k < 4; ++k) {
    for (uint32_t b = 0; b < 256; ++b) {
      const uint32_t word = b << (24 - 8 * k);
      tables_[k][b] = payload.extend(crc32_update_be_words(0, &word, 1), payload_and_pad) ^ none;
    }
  }
  // The source port is the high half of the UDP header's first word; four words follow it to
  // the payload (the rest of the UDP header, the BTH), which the shift passes over as zeros.
  const std::array<uint32_t, 4> after{};
  for (uint32_t k = 0; k < 2; ++k) {
    for (uint32_t b = 0; b < 256; ++b) {
      const uint32_t word = b << (24 - 8 * k);
      const uint32_t reg =
          crc32_update_be_words(crc32_update_be_words(0, &word, 1), after.data(), after.size());
      source_port_tables_[k][b] = payload.extend(reg, payload_and_pad) ^ none;
    }
  }
}

void MiddleFrameTemplate::build(const FrameWriter& writer, const PsnWordShift& shift,
                                const nic::Packet& prototype, uint32_t dest_qpn,
                                const FrameAddresses& addresses, uint8_t* scratch) {
  key_ = kNotBuilt;
  shift_ = &shift;
  nic::Packet first = prototype;
  first.psn = 0;
  first.dest_qpn = dest_qpn;
  first.bth_flags &= static_cast<uint8_t>(~nic::bth_flag::kAckRequest);
  const bool vlan = addresses.vlan_id != 0;
  header_bytes_ = FrameWriter::header_bytes(first, addresses.ip_version, vlan);
  length_ = static_cast<uint32_t>(writer.write_around_payload(first, addresses, scratch));
  if (length_ == 0 || header_bytes_ > kMaxHeaderBytes) return;
  wire_bytes_ = nic::wire_bytes_of_frame(length_);
  uint8_t* headers = header_.data() + (kMaxHeaderBytes - header_bytes_);
  std::copy_n(scratch, header_bytes_, headers);
  payload_and_pad_ = (first.payload_bytes + 3) & ~3u;
  if (payload_and_pad_ != shift.payload_and_pad()) return;

  // The covered headers run from the IP header to the end of the BTH, whose last word is the
  // PSN word; the register is taken over the masked words before it.
  const uint32_t ip_offset = nic::kEthernetHeaderBytes + (vlan ? nic::kVlanTagBytes : 0);
  const uint32_t covered_words = (header_bytes_ - ip_offset) / 4;
  std::array<uint32_t, kMaxHeaderBytes / 4> words{};
  for (uint32_t i = 0; i < covered_words; ++i) {
    words[i] = load_be32(headers + ip_offset + 4 * i);
  }
  mask_icrc_words(words.data(), addresses.ip_version);
  // All covered words with the PSN word at zero, then the payload.
  words[covered_words - 1] = 0;
  register_without_psn_ = shift.payload().extend(
      crc32_update_be_words(kIcrcSeed, words.data(), covered_words), payload_and_pad_);
  key_ = header_key(first);
  payload_bytes_ = first.payload_bytes;
  source_port_ = first.udp_source_port;
  bth_flags_ = first.bth_flags;
}

}  // namespace etwire::frame
