// The ORB's message limit, applied by a sending port before it sends.
//
// omniORB refuses a GIOP message over giopMaxMsgSize (scabench-host and the
// Python components set 64 MiB; omniORB's default is 2 MiB), on either side
// and differently (docs/architecture.md, "Message limit"):
//   - over the sender's own limit: CORBA::MARSHAL
//     (MARSHAL_MessageSizeExceedLimitOnClient) before the message is sent;
//     the connection stays up;
//   - over the receiver's limit only: the receiver reads the header, answers
//     MessageError and closes the connection. A two-way caller gets
//     COMM_FAILURE; a one-way is lost, without a word (the next call on the
//     connection fails) or with COMM_FAILURE if the connection closed while
//     it was still being written.
//   - between components of one process no message is made, so no limit
//     applies at all.
// A sending port therefore judges every packet against its own ORB's limit,
// wherever the peer is, and refuses one that would not fit with
// PacketTooLarge, naming the limit: the packet is not sent, its link number
// not used, and the same spec behaves the same collocated or not. Hosts of a
// run share the limit, so what the sender takes, the receiver takes.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace scabench {

// Room left in a message for everything but the samples: the GIOP request
// header (object key, operation, service contexts) and the packet header.
// They take about 150 bytes; the rest is margin. The spec checker uses the
// same room (python/scabench/model/checks.py, MAX_PACKET_BYTES).
constexpr std::size_t kMessageHeaderRoom = 4096;

// The message limit of every process of a run: scabench-host sets it for
// itself, and the runner gives every program it starts the same option
// (python/scabench/run/runner.py, BASE_ORB_OPTIONS).
constexpr std::size_t kRunMessageLimit = std::size_t{64} << 20;

// The most samples of `sampleBytes` bytes each that one packet can carry
// under kRunMessageLimit: what a property that sizes packets declares as its
// range (the producer's `samples`, a port's `packet_length`), so that a spec
// is refused before any process starts rather than when the packet is sent.
constexpr int64_t maxPacketSamples(std::size_t sampleBytes) {
  return int64_t((kRunMessageLimit - kMessageHeaderRoom) / sampleBytes);
}

class PacketTooLarge : public std::length_error {
 public:
  using std::length_error::length_error;
};

// This process's ORB's giopMaxMsgSize, in bytes (ORB_init must have run).
std::size_t messageLimit();

// Throws PacketTooLarge if `samples` samples of `sampleBytes` bytes each
// (`typeName`) leave less than kMessageHeaderRoom of the message limit.
// `port` names the sending port in the message.
void checkPacketFits(const std::string& port, std::size_t samples, std::size_t sampleBytes, const char* typeName);

// Over a shared-memory ring (transport shm) a packet's samples must also fit
// in the ring's data area, `ringBytes` (the port's shm_bytes): a larger one
// is refused the same way, PacketTooLarge naming the ring, unsent. The runner
// sizes the ring for the largest packet a spec declares (python/scabench/model/transport.py).
void checkRingFits(const std::string& port, std::size_t samples, std::size_t sampleBytes, const char* typeName,
                   std::size_t ringBytes);

}  // namespace scabench
