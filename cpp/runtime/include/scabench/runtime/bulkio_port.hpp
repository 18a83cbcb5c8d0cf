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
//             and receiver on one machine), if it is a time this machine
//             could have stamped (sendTime: TCS_VALID, and within [boot,
//             arrival + kFutureAllowanceNs]); any other T gives the packet no
//             send time (kNoSendTime), counted as t_invalid
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
// false); then pushPacket(data, T = the packet's send time in UTC, or a T
// not set for a packet without one, EOS false, streamID) for each packet,
// and at the end of the port's output pushPacket(empty, T, EOS true,
// streamID) for each stream announced on the connection (and the one the
// end names); at a disconnect, the same for each stream still open on it.
// streamID is the stream id in decimal.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
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

// A packet header's send_time_ns when the packet has none: a BulkIO T that
// was no usable time (sendTime). Every time the runtime stamps is later than
// the monotonic clock's zero, so 0 is no time it could have read.
constexpr uint64_t kNoSendTime = 0;

// How far past its arrival a T may lie and still be taken as a send time.
// A T stamped on this machine is never later than the packet's arrival;
// what can make it look later is the conversion (both clocks read within a
// microsecond) and the realtime clock slewed between the send and the
// arrival (NTP slews by 0.5 ms a second at most): 10 ms covers both for any
// packet that took less than 20 s, and a T further ahead is no send time.
constexpr int64_t kFutureAllowanceNs = 10'000'000;

// CLOCK_REALTIME minus CLOCK_MONOTONIC now, in nanoseconds: both clocks are
// read within a microsecond, which bounds the conversion's error.
int64_t realtimeOffsetNs();
// A monotonic time as BulkIO's T (UTC, TCS_VALID, TCM_CPU); kNoSendTime as
// a T that is not set (TCS_INVALID, zero), as BulkIO's own ports send one.
BULKIO::PrecisionUTCTime utcTime(int64_t monotonicNs);
// T as a monotonic send time, if it is one: tcstatus TCS_VALID, twsec and
// tfsec finite, 0 <= twsec < 2^34 (no overflow in nanoseconds) and
// 0 <= tfsec < 1 (BulkIO's fraction), and the time it maps to on this
// machine's monotonic clock not before its zero (the machine's boot: a
// time before it was stamped by no clock here) and not after `arrivedNs` +
// kFutureAllowanceNs. Anything else is no send time (nullopt): a latency
// or an order computed from it would mean nothing.
std::optional<int64_t> sendTime(const BULKIO::PrecisionUTCTime& t, int64_t arrivedNs);

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
  // A data packet of `name` sent at `sentNs` (monotonic), or with no send
  // time (nullopt: its T was not one, counted as such): opens the stream if
  // it is not open; counts T going backwards, against the stream's last
  // packet that had a send time.
  Packet packet(const std::string& name, std::optional<int64_t> sentNs);
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
  // Data packets whose T was no send time (sendTime): their latency is not
  // computed, nor their order judged.
  uint64_t invalidTimes() const;

 private:
  // An open stream (one that has ended is not kept).
  struct Stream {
    uint32_t id = 0;
    uint64_t next = 0;
    std::optional<int64_t> lastSentNs;  // the last packet's that had one
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
  uint64_t invalid_ = 0;
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
  // At a disconnect, as BulkIO's uses ports do: EOS for each stream that is
  // open on the connection, so that the peer's streams end (Bulkio tests,
  // ADisconnectEndsTheStreamsOpenOnTheConnection).
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
