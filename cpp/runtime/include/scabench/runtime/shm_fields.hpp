// A packet's header as a shared-memory ring carries it, and back. The ring
// (shm_ring.hpp) knows nothing of the IDL, so its slot holds the header's
// fields as plain integers; the sender (senders.hpp) and the receiving port
// (in_port.hpp) convert here, in one place, so a field added to PacketHeader
// is added to both directions at once.
#pragma once

#include "scabench.hh"
#include "scabench/runtime/shm_ring.hpp"

namespace scabench {

inline shm::PacketFields ringFieldsOf(const PacketHeader& h) {
  shm::PacketFields f;
  f.streamId = h.stream_id;
  f.endOfStream = h.end_of_stream;
  f.sequence = h.sequence_number;
  f.sendTimeNs = h.send_time_ns;
  f.link = h.link_sequence;
  f.token = h.connection_token;
  return f;
}

inline PacketHeader headerOf(const shm::PacketFields& f) {
  PacketHeader h;
  h.stream_id = f.streamId;
  h.end_of_stream = f.endOfStream;
  h.sequence_number = f.sequence;
  h.send_time_ns = f.sendTimeNs;
  h.link_sequence = f.link;
  h.connection_token = f.token;
  return h;
}

}  // namespace scabench
