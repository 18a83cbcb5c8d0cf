// Per-packet records kept in a preallocated, memory-mapped file.
//
// The hot path only claims a slot with one atomic increment and writes plain
// memory: no lock, no system call, no allocation. Because the mapping is a
// shared file, the records survive the process: the launcher can tell which
// packet a killed component handled last, and the analysis reads the file
// after the run (python/scabench/run/records.py knows this layout).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

namespace scabench {

struct PacketRecord {
  uint64_t sequence;  // packet sequence number
  int64_t arriveNs;   // stage: upcall entry; producer: send start
  int64_t doneNs;     // stage: processed and forwarded; producer: send returned
  uint32_t threadId;  // kernel thread that received the packet
  uint32_t flags;     // where it came from: recordFlags(); 0 in files written before
};
static_assert(sizeof(PacketRecord) == 32);

// A record's flags: the connection the packet came in on (its number at the
// receiving component, across all its provides ports, in the order
// connections were attached; `<name>.connections.json` names each number's
// port) in the low 16 bits, the packet's stream id in the high 16. With
// several connections into a component (fan-in) and several packet sources,
// the analysis counts order per connection and per stream from them
// (python/scabench/run/records.py).
// The largest stream id a record keeps whole: a source declares its
// stream_id within it, so that two sources' packets never share one.
constexpr uint32_t kMaxRecordedStreamId = 0xFFFFu;
constexpr uint32_t recordFlags(uint32_t connection, uint32_t streamId) {
  return (connection & 0xFFFFu) | ((streamId & 0xFFFFu) << 16);
}

struct RecordFileHeader {
  char magic[8];  // "SCABREC2"
  uint32_t headerSize;
  uint32_t recordSize;
  uint64_t capacity;
  std::atomic<uint64_t> claimed;        // slots handed out, may exceed capacity
  std::atomic<uint32_t> maxConcurrent;  // most upcalls in progress at once
  // Packets an output port gave up unsent: its component was stopped, or
  // its connection disconnected, while the packet waited for credits or a
  // resume. Reserved (0) in files written before.
  std::atomic<uint32_t> unsent;
  std::atomic<uint64_t> completed;  // records whose doneNs is written
  // Ordering and flow control, summed over the component's input ports
  // (peaks: the largest of them); written as they change.
  std::atomic<uint64_t> reorderPeak;  // most packets a reorder buffer held
  std::atomic<uint64_t> skipped;      // link sequences given up on after the timeout
  std::atomic<uint64_t> late;         // arrived after being skipped, dropped
  std::atomic<uint64_t> duplicates;   // arrived twice, dropped
  std::atomic<uint64_t> heldPeak;     // most packets a port held at once (upcalls + buffers + queue)
  std::atomic<uint64_t> suspends;     // times a port told its sender to suspend (watermarks)
  std::atomic<uint64_t> sendStalls;   // times an output port waited for credits or a resume
  // What the component's ports refused from a peer, by reason (Refusal):
  // packets and signals that a sending port keeping to its connection never
  // sends (docs/trust-model.md). Summed over the ports; each count wraps at
  // 2^32, far beyond any run. These were reserved bytes: files written before
  // them read as no refusals.
  std::atomic<uint32_t> refused[6];
  // Gauges: what the component holds now, summed over its ports and
  // connections, each kept by the part of the runtime that changes it with
  // one relaxed atomic add (no lock, no system call), so that a reader of
  // the mapped file (run --live, scabench.watch) sees the depths as they
  // are rather than inferring them. A file written before them has the
  // 128-byte header (headerSize says which): python/scabench/run/records.py
  // reads both. docs/reference/result-files.md#record-header says what each
  // counts.
  std::atomic<int64_t> workerQueued;        // in its ports' worker queues (an end of stream among them)
  std::atomic<int64_t> reorderHeld;         // packets in its ports' reorder buffers
  std::atomic<int64_t> ringDepth;           // its shm uses connections: messages ahead of the last one sent
  std::atomic<int64_t> creditsOutstanding;  // its credits uses connections: sent, not yet acknowledged
  std::atomic<int64_t> upcalls;             // calls in its provides ports now (max_concurrent is their peak)
  uint64_t reserved[3];
};
static_assert(sizeof(RecordFileHeader) == 192);
static_assert(offsetof(RecordFileHeader, refused) == 104);
static_assert(offsetof(RecordFileHeader, workerQueued) == 128);
// The header's size before the gauges: such a file has no gauges.
constexpr uint32_t kRecordHeaderWithoutGauges = 128;

// Why a port refused something, an index into RecordFileHeader::refused
// (python/scabench/run/records.py names them in this order).
enum class Refusal : uint8_t {
  Sequence,     // a link sequence outside the port's window
  Length,       // a packet of another length than the port's packet_length
  EndOfStream,  // an end of stream not from the connection's sender, a second one, or out of sequence
  Credit,       // a flow-control signal granting more than was sent
  Threads,      // a call beyond the port's limit of calls in progress
  Sender,       // a packet without the connection's token, or a sender attached after start
};
constexpr std::size_t kRefusalReasons = 6;

class RecordLog {
 public:
  RecordLog() = default;
  // Creates (truncates) `path` with room for `capacity` records and touches
  // every page now so that the run never takes a page fault on it.
  RecordLog(const std::string& path, uint64_t capacity);
  ~RecordLog();
  RecordLog(const RecordLog&) = delete;
  RecordLog& operator=(const RecordLog&) = delete;

  bool active() const { return header_ != nullptr; }

  // Claims the next slot in arrival order; returns the slot index.
  uint64_t arrive(uint64_t sequence, int64_t arriveNs, uint32_t flags = 0);
  void done(uint64_t slot, int64_t doneNs);

  // Tracks how many upcalls run at once (the "server threads" of the paper).
  void enterUpcall();
  void leaveUpcall();

  // Adds to a gauge (RecordFileHeader): relaxed, as a reader only wants
  // its value now, and one locked add is all a change costs.
  static void add(std::atomic<int64_t>& gauge, int64_t delta) { gauge.fetch_add(delta, std::memory_order_relaxed); }

  // Raises a peak counter to `value` if higher; adds to a count.
  static void raise(std::atomic<uint64_t>& peak, uint64_t value) {
    uint64_t seen = peak.load(std::memory_order_relaxed);
    while (value > seen && !peak.compare_exchange_weak(seen, value)) {
    }
  }
  RecordFileHeader& header() { return *header_; }

  // Records whose packet has been fully handled so far.
  uint64_t completedCount() const { return header_->completed.load(std::memory_order_acquire); }

 private:
  RecordFileHeader* header_ = nullptr;
  PacketRecord* records_ = nullptr;
  std::size_t mappedBytes_ = 0;
};

uint32_t currentThreadId();

}  // namespace scabench
