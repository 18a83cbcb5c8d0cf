// The shared-memory transport of one connection (`transport = "shm"`): the
// packets travel in a ring of shared memory between the sending and the
// receiving process, and CORBA stays the control plane (connectPort, the
// attach that hands the ring over, flow-control signals, the lifecycle).
// No CORBA here: the ports put it to use (senders.hpp, in_port.hpp), and it
// is tested on its own between two processes (tests/cpp/shm_ring_test.cpp).
//
// The segment, one per connection, is made by the sending port (POSIX
// shm_open under a name that carries the run's owner tag, owner-only), whose
// receiver maps it during DataPort::attachSharedRing; the sender then
// removes the name, so nothing is left in /dev/shm once both have it mapped,
// whatever happens to either process later (a crash between the two leaves a
// name that the next run removes: python/scabench/run/processes.py).
//
//   Control       counters and futex words; each side writes its own cache line
//   Slot[kSlots]  one per message in flight: the packet's header, where its
//                 samples are, and its phase
//   data          the samples: a byte ring, each message's contiguous and
//                 64-byte aligned
//
// A message goes published (the sender wrote it) -> taken (a receiving
// thread dequeued it: what an ORB reading the request is) -> done (the
// receiving port's upcall returned). What a send waits for is the policy's:
//   Written  returns once the message is in the ring (call=oneway, sync=transport:
//            the bytes are in the socket, for a socket)
//   Taken    until a receiving thread has dequeued it (sync=server: the server
//            ORB has read the request)
//   Done     until the upcall returned (call=twoway, sync=target)
// A full ring (every slot, or the data area, in use) blocks the sender, as a
// full socket does. A receiving process that exits, or a receiving port that
// closes the connection, fails every send in bounded time (RingClosed): a
// waiting sender looks at the receiver's process (a pidfd) every 100 ms.
// Before it sleeps for taken or done, a sender looks for up to 20 µs when its
// last wait was that short and it may run on another CPU than its receiver.
//
// Receiving threads, like an ORB's threads per connection: one thread takes
// messages in order and runs each upcall; a message that may overlap an
// upcall in progress (a two-way one: under CORBA each concurrent two-way
// caller has a connection and a thread of its own; a one-way one when the
// port's dispatch lets one-way calls of a connection overlap, pool and
// pool:N) is taken by another thread while the first is busy, up to the
// dispatch's limit, omniORB's 100 threads per connection and per process,
// and no further ahead of the oldest upcall still running than the port's
// calls in progress (max_calls). Idle threads sleep on a futex, and the
// sender wakes one only when one sleeps (or, all being busy, a spare), so a
// paced stream costs one wake-up per message and nothing else.
//
// The receiver trusts nothing in the segment: it copies each message's
// header out once, checks where its samples lie before it reads them, and
// closes the connection (RingReceiver's `onBroken`) on anything a sender
// keeping to this protocol never writes.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace scabench::shm {

// A packet's header as it crosses the ring (PacketHeader's fields, scabench.idl).
struct PacketFields {
  uint32_t streamId = 0;
  bool endOfStream = false;
  uint64_t sequence = 0;
  uint64_t sendTimeNs = 0;
  uint64_t link = 0;
  uint64_t token = 0;
};

enum class Wait : uint8_t { Written, Taken, Done };

// The receiving end is gone (its process exited) or closed the connection.
class RingClosed : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Messages in flight per connection at most (slots of the ring). A full
// socket holds a few hundred kB; the data area's bytes (the port's
// shm_bytes) bound a ring the same way, and these slots bound it for tiny
// packets.
constexpr uint32_t kSlots = 1024;
// The data area's bytes, unless the port says otherwise, and its bounds.
constexpr std::size_t kDefaultDataBytes = std::size_t{1} << 20;
constexpr std::size_t kMinDataBytes = std::size_t{64} << 10;
constexpr std::size_t kMaxDataBytes = std::size_t{1} << 30;
// The prefix of every ring's name (shm_open), followed by the owner tag:
// processes.remove_leftovers() in Python removes those of dead owners.
constexpr const char* kNamePrefix = "/scabench-shm-";

// What a ring maps besides a data area of `dataBytes` (its control block,
// its slots, and the rest of its last page): the memory a ring takes is
// dataBytes plus this. `scabench-host --describe` publishes it for the
// default data area, so that a run's memory estimate is the runtime's.
std::size_t overheadBytes(std::size_t dataBytes = kDefaultDataBytes);

struct Control;
struct Slot;

// The sending end: made by the uses port when it connects.
class RingSender {
 public:
  // Makes and maps a new segment with a data area of `dataBytes` for
  // samples of `elementBytes`. Throws std::runtime_error (the system's words).
  RingSender(std::size_t dataBytes, std::size_t elementBytes);
  ~RingSender();
  RingSender(const RingSender&) = delete;
  RingSender& operator=(const RingSender&) = delete;

  const std::string& name() const { return name_; }
  // The largest message's samples, in bytes.
  std::size_t capacity() const { return dataBytes_; }

  // Once the receiver has mapped the segment (attachSharedRing returned):
  // removes the name and watches the receiver's process. Throws RingClosed
  // if no receiver mapped it.
  void attached();

  // Puts one message in the ring and waits as `wait` says. Safe from several
  // threads (a port served by a thread pool sends from each). Throws
  // std::length_error for samples beyond capacity(), RingClosed.
  void send(const PacketFields& header, const void* samples, std::size_t bytes, bool twoway, Wait wait);
  // Waits until every message sent so far is taken (or the receiver gone),
  // waking a receiving thread that put its wake-up off.
  void flush();

  // Messages in the ring now: put in by this side, not yet released by the
  // receiver (their upcalls not all returned).
  uint64_t depth() const;
  // Keeps `gauge` (the component's ringDepth, record_log.hpp) added to by
  // this ring's depth as each send found it: the messages ahead of the one
  // it put in, so 0 while the receiver keeps up and the ring's size when a
  // send had to wait for room. Written at each send (one relaxed add, under
  // the lock the send holds) and at flush; between sends it keeps the last
  // send's value (the depth now: depth()). Several rings add to one gauge.
  void countInto(std::atomic<int64_t>* gauge);

 private:
  uint64_t reserve(uint64_t n, std::size_t bytes);  // under mutex_
  // Undoes a receiving thread's put-off wake-up (Control::wakeAt) and wakes
  // one: what is in the ring is taken now.
  void wakeReceiver();
  void note(int64_t depth);  // under mutex_: the gauge (countInto)
  void waitFor(uint64_t n, uint32_t phase);
  // Whether the receiver's process has exited, or its port closed the ring.
  bool receiverGone();
  [[noreturn]] void gone();

  std::string name_;
  bool linked_ = true;
  int pidfd_ = -1;
  uint32_t receiverPid_ = 0;
  void* base_ = nullptr;
  std::size_t mapped_ = 0;
  Control* c_ = nullptr;
  Slot* slots_ = nullptr;
  unsigned char* data_ = nullptr;
  const std::size_t dataBytes_;
  mutable std::mutex mutex_;
  uint64_t published_ = 0;  // messages put in the ring (under mutex_)
  uint64_t pos_ = 0;        // the data area's write position, a byte count that only grows (under mutex_)
  // Spinning before a wait for taken or done (waitFor): how long the last
  // wait took, and whether this process may run on more than one CPU.
  std::atomic<int64_t> lastWaitNs_{INT64_MAX};
  const bool severalCpus_;
  // The receiver was found gone: every later send fails at once (a sync=none
  // queue behind a dead receiver drains in no time, not 100 ms a packet).
  std::atomic<bool> gone_{false};
  std::atomic<int64_t>* gauge_ = nullptr;  // countInto (under mutex_)
  int64_t counted_ = 0;                    // what this ring has added to it
};

// The receiving end: made by the provides port when a sender attaches with
// a ring. Its threads call `handler` for each message, in the order the
// sender put them in, overlapping as said above.
class RingReceiver {
 public:
  using Handler = std::function<void(const PacketFields& header, const void* samples, std::size_t bytes, bool twoway)>;
  // onewayConcurrency: how many one-way messages may be in the handler at
  // once (1: serial, single; N: pool:N; the ORB's 100: pool). maxAhead: a
  // message is taken only if fewer than this many, counted from the oldest
  // whose handler has not returned, have been taken (the port's max_calls:
  // the link window it judges packets by assumes no more). serialize: a
  // lock every handler call holds (dispatch single: the host's single-thread
  // lock), or null. onBroken: told once, with why, if the sender breaks the
  // protocol (the receiver then closes the connection).
  // Throws std::invalid_argument saying what is wrong with the segment.
  // consumerBusy (optional): whether the port's own thread behind the
  // handler (a reorder buffer's releaser) has work queued; while it has, a
  // receiving thread that finds the ring empty asks to be woken only once
  // kWakeBatch messages wait (or one is waited for, two-way, or ends the
  // stream, or the ring is full), and that thread calls poke() when it runs
  // low, so that no message waits in the ring while it idles. It is asked
  // again once the put-off is stored, and must decide under the lock the
  // consumer hands on under before it pokes (Resequencer::feederMayWait):
  // then a poke cannot fall between the decision and the put-off.
  RingReceiver(const std::string& name, std::size_t elementBytes, uint32_t onewayConcurrency, uint32_t maxAhead,
               std::recursive_mutex* serialize, Handler handler, std::function<void(const std::string&)> onBroken,
               std::function<bool()> consumerBusy = {});
  ~RingReceiver();  // close() and join()
  RingReceiver(const RingReceiver&) = delete;
  RingReceiver& operator=(const RingReceiver&) = delete;

  // No more messages are taken; threads waiting for one stop, a sender
  // waiting on this end fails (RingClosed). Threads in the handler finish
  // their message first.
  void close();
  // Waits for every receiving thread to end (after close()).
  void join();
  // Receiving threads started so far (at most the dispatch allows, and spares).
  uint32_t threads() const;
  // The consumer behind the handler runs low: a put-off wake-up happens now
  // if a message waits, and the next message wakes a sleeping thread. Cheap
  // (two loads) when nothing was put off; safe from any thread.
  void poke();
  // Messages a put-off wake-up waits for (clamped to maxAhead).
  static constexpr uint32_t kWakeBatch = 16;

 private:
  enum class Take { Took, Empty, Blocked, Closed };
  struct Taken {
    uint64_t n;
    PacketFields header;
    const void* samples;
    std::size_t bytes;
    bool twoway;
  };
  void loop(bool spare);
  Take tryTake(Taken& t);               // under mutex_
  bool headTakeable();                  // under mutex_
  void handOff(bool twoway);            // under mutex_
  void spawn(bool spare);               // under mutex_
  void finish(const Taken& t);          // under mutex_
  void broken(const std::string& why);  // under mutex_
  void wakeAll();

  std::string name_;
  void* base_ = nullptr;
  std::size_t mapped_ = 0;
  Control* c_ = nullptr;
  Slot* slots_ = nullptr;
  const unsigned char* data_ = nullptr;
  std::size_t dataBytes_ = 0;
  const std::size_t elementBytes_;
  const uint32_t onewayLimit_;
  const uint32_t maxAhead_;
  std::recursive_mutex* const serialize_;
  const Handler handler_;
  const std::function<void(const std::string&)> onBroken_;
  const std::function<bool()> consumerBusy_;
  const uint32_t wakeBatch_;
  std::atomic<uint64_t> taken_{0};  // next_, for poke() outside mutex_

  mutable std::mutex mutex_;
  bool closed_ = false;
  bool concurrentTraffic_ = false;  // a message that may overlap another was seen: keep a spare thread
  uint64_t next_ = 0;               // the next message to take
  uint64_t released_ = 0, releasedBytes_ = 0;
  std::vector<uint64_t> end_;  // per slot: the data position after its message (copied at take)
  std::vector<uint8_t> done_;  // per slot: its upcall returned
  uint32_t busyOneway_ = 0, threads_ = 0, spares_ = 0;
  std::vector<std::thread> pool_;
};

// The owner tag rings are named with: the run's (SCABENCH_RUN_OWNER, which
// every process of a run inherits), or this process's own pid.starttime.
std::string ownerTag();

}  // namespace scabench::shm
