// BulkIO's data interfaces (bulkio.idl) on the runtime's ports: a port whose
// protocol is "bulkio" (policy_schema.hpp) speaks them instead of scabench's
// own. docs/reference/bulkio.md says what each call means here.
//
// Receiving (a provides port; InPort<T> serves it through BulkioInServant).
// BulkIO has no attach, token or link sequence: any sender may push, and
// the port is one connection for its records, whatever its senders. Each
// call becomes a packet header as scabench's own port would have received
// it, so that the checks, the worker, the records and end of stream are the
// same:
//   streamID  the stream id: the number if it is one (canonical decimal,
//             below kFirstNamedStream), else a number of the port's own (from
//             kFirstNamedStream, in the order the names were first seen, kept
//             for the port's life)
//   T         the send time: UTC (CLOCK_REALTIME) converted to this machine's
//             monotonic clock by the realtime - monotonic offset now (sender
//             and receiver on one machine); a T whose tcstatus is not
//             TCS_VALID counts as sent on arrival
//   seq       the packet's position in its stream as received (BulkIO
//             carries no sequence number): order is judged by T instead, a T
//             earlier than its stream's last counted as gone backwards
//   EOS       ends that stream (forgotten then, its SRI with it); the
//             port's end of stream comes once every stream it has seen since
//             its start (by a packet or an SRI) has ended; a start closes
//             those left open
// pushSRI keeps the SRI per stream (activeSRIs answers those of the streams
// not ended), ignored while the component is stopped; state is BUSY while the worker queue is full, ACTIVE while a
// stream is open, else IDLE; statistics comes from the port's PortTraffic.
//
// Sending (a uses port's connection to a BulkIO provides port, found from
// the peer's repository id at connectPort: BulkioSender). Before a
// stream's first packet: pushSRI(streamID, xdelta 1, mode 0, blocking
// false); then pushPacket(data, T = the packet's send time in UTC, EOS
// false, streamID) for each packet, and at the end of the port's output
// pushPacket(empty, T, EOS true, streamID) for each stream announced on the
// connection (and the one the end names). streamID is the stream id in
// decimal.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "bulkio.hh"
#include "scabench/core/clock.hpp"
#include "scabench/runtime/port_traffic.hpp"
#include "scabench/runtime/port_types.hpp"
#include "scabench/runtime/senders.hpp"

namespace scabench::bulkio {

// The first number given to a stream whose streamID is not a number.
constexpr uint32_t kFirstNamedStream = 0x8000;

// CLOCK_REALTIME minus CLOCK_MONOTONIC now, in nanoseconds: both clocks are
// read within a microsecond, which bounds the conversion's error.
int64_t realtimeOffsetNs();
// A monotonic time as BulkIO's T (UTC, TCS_VALID, TCM_CPU), and back; a T
// that is not TCS_VALID gives `otherwise`.
BULKIO::PrecisionUTCTime utcTime(int64_t monotonicNs);
int64_t monotonicTime(const BULKIO::PrecisionUTCTime& t, int64_t otherwise);

// A stream id (the number, decimal) as a streamID, and a streamID's number
// when it is one: canonical decimal (no sign, no leading zero) below
// kFirstNamedStream.
std::string streamName(uint32_t streamId);
bool parseStreamNumber(const std::string& name, uint32_t& number);

// The streams pushed into one provides port: their numbers, positions,
// last T, SRI, and which are open. Every call takes its lock once.
class Streams {
 public:
  struct Packet {
    uint32_t streamId;
    uint64_t position;  // 0, 1, ... in its stream as received
  };
  struct End {
    uint32_t streamId;
    bool last;  // no stream is open any more: the port's end of stream
  };
  // A data packet of `name` sent at `sentNs` (monotonic): opens the stream
  // if it is not open; counts T going backwards.
  Packet packet(const std::string& name, int64_t sentNs);
  // EOS on `name` (a stream never seen is opened and ended at once). An
  // ended stream is forgotten: its SRI, position and last T go with it.
  End end(const std::string& name);
  void pushSRI(const BULKIO::StreamSRI& sri);
  // At the port's start: every stream is closed and its SRI dropped, so a
  // stream its sender left open (no EOS, or a stop mid-stream) cannot keep
  // the port from its end of stream.
  void reset();
  BULKIO::StreamSRISequence* activeSRIs() const;
  std::vector<std::string> open() const;
  bool anyOpen() const;
  // Packets whose T was earlier than their stream's last (BulkIO's reorder).
  uint64_t backwards() const;

 private:
  // An open stream (one that has ended is not kept).
  struct Stream {
    uint32_t id = 0;
    uint64_t next = 0;
    int64_t lastSentNs = 0;
    bool hasSri = false;
    BULKIO::StreamSRI sri;
  };
  Stream& openStream(const std::string& name);  // under mutex_
  uint32_t numberFor(const std::string& name);  // under mutex_
  mutable std::mutex mutex_;
  std::map<std::string, Stream> streams_;  // the open ones
  // The numbers given to names, kept for the port's life so that a name
  // keeps its number over its streams and restarts.
  std::map<std::string, uint32_t> named_;
  uint32_t nextNamed_ = kFirstNamedStream;
  uint64_t backwards_ = 0;
};

// BulkIO's PortStatistics from a port's traffic. Keywords: the totals
// (calls, elements) and what the port adds (extraCounts: docs/reference/bulkio.md
// lists every keyword a scabench port answers).
BULKIO::PortStatistics portStatistics(const std::string& portName, const PortTraffic& traffic,
                                      const std::vector<std::string>& streamIDs,
                                      const std::map<std::string, uint64_t>& extraCounts = {});
// The process a port lives in, read when its statistics are asked (one
// getrusage and a read of /proc/self/stat; nothing on a packet's way):
// `pid`, `process_cpu_us` (user + system CPU so far) and `process_threads`,
// so that a watcher over CORBA (scabench top) shows CPU per process, as
// run --live does from /proc. Several components in one host share them.
std::map<std::string, uint64_t> processCounts();

// The BulkIO servant of a provides port: each operation is the port's own
// (InPort<T>::bulkioPush and the rest). A template over the port so that
// this header need not know InPort.
template <class T, class Port>
class InServant final : public virtual PortTraits<T>::BulkioServant {
 public:
  explicit InServant(Port& port) : port_(port) {}
  void pushPacket(const typename PortTraits<T>::BulkioSeq& data, const BULKIO::PrecisionUTCTime& t, CORBA::Boolean eos,
                  const char* streamID) override {
    port_.bulkioPush(data, t, eos, streamID);
  }
  void pushSRI(const BULKIO::StreamSRI& sri) override { port_.bulkioPushSRI(sri); }
  BULKIO::StreamSRISequence* activeSRIs() override { return port_.bulkioStreams().activeSRIs(); }
  BULKIO::PortUsageType state() override { return port_.bulkioState(); }
  BULKIO::PortStatistics* statistics() override { return new BULKIO::PortStatistics(port_.bulkioStatistics()); }

 private:
  Port& port_;
};

// A uses port's connection to a BulkIO provides port (the mapping above).
// The packet header's link sequence and token stay here: BulkIO has no
// place for them.
template <class T>
class Sender final : public scabench::Sender<T> {
 public:
  explicit Sender(typename PortTraits<T>::BulkioRef_var ref) : ref_(ref) {}
  void send(const PacketHeader& h, const typename PortTraits<T>::Seq& d) override {
    const std::string name = streamName(h.stream_id);
    const BULKIO::PrecisionUTCTime t = utcTime(int64_t(h.send_time_ns));
    if (h.end_of_stream) {
      // The runtime ends a port's output once, but a stage may have
      // forwarded several streams on it; the receiving port ends only once
      // each of them has, so every stream announced here gets its EOS.
      for (const uint32_t id : takeAnnounced(h.stream_id))
        ref_->pushPacket(typename PortTraits<T>::BulkioSeq(), t, true, streamName(id).c_str());
      return;
    }
    announce(h.stream_id, name);
    // A view of the caller's samples: the ORB marshals from them.
    auto& samples = const_cast<typename PortTraits<T>::Seq&>(d);
    const typename PortTraits<T>::BulkioSeq view(samples.length(), samples.length(), samples.get_buffer(), false);
    ref_->pushPacket(view, t, false, name.c_str());
  }
  // Meant as REDHAWK's uses port at a disconnect: EOS for each stream that
  // is open on the connection. Not yet seen to end the peer's stream in a
  // test (Bulkio tests): unverified.
  void disconnected() override {
    std::set<uint32_t> open;
    {
      std::lock_guard lock(mutex_);
      open.swap(announced_);
    }
    const BULKIO::PrecisionUTCTime t = utcTime(monotonicNs());
    for (const uint32_t id : open)
      ref_->pushPacket(typename PortTraits<T>::BulkioSeq(), t, true, streamName(id).c_str());
  }

 private:
  void announce(uint32_t streamId, const std::string& name) {
    {
      std::lock_guard lock(mutex_);
      if (!announced_.insert(streamId).second) return;
    }
    BULKIO::StreamSRI sri{};
    sri.hversion = 1;
    sri.xdelta = 1.0;  // the sample rate is not known to the port
    sri.mode = 0;
    sri.streamID = name.c_str();
    sri.blocking = false;
    ref_->pushSRI(sri);
  }
  // The streams announced and not yet ended, with `also` (the stream the
  // end names, announced or not); none is announced afterwards, so that a
  // next stream of any of those ids is announced anew.
  std::set<uint32_t> takeAnnounced(uint32_t also) {
    std::lock_guard lock(mutex_);
    std::set<uint32_t> streams;
    streams.swap(announced_);
    streams.insert(also);
    return streams;
  }
  typename PortTraits<T>::BulkioRef_var ref_;
  std::mutex mutex_;
  std::set<uint32_t> announced_;
};

}  // namespace scabench::bulkio
