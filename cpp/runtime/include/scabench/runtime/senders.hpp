// The sending half of a connection's messaging policy: how a uses port hands
// a packet to the ORB, and so when the caller gets control back.
//
//   call=twoway              pushPacket; returns after the servant ran.
//   call=oneway sync=none      queued here; a sender thread does the oneway.
//   call=oneway sync=transport the ORB's native oneway: returns once the bytes
//                              are in the socket (omniORB's only sync scope).
//   call=oneway sync=server    native oneway, then the two-way syncMarker on the
//                              same connection: its reply proves that the server
//                              ORB has read the packet's request.
//   call=oneway sync=target    pushPacket: returns after the servant ran,
//                              which is what SYNC_WITH_TARGET promises.
// Collocated references make every one of these a direct call on the
// caller's thread, as the paper's section 4.1 describes; only sync=none keeps
// its own thread and so stays asynchronous.
//
// Over a shared-memory ring (transport shm, shm_ring.hpp) the same policy
// maps onto the ring's phases: twoway and sync=target wait until the
// receiver's upcall returned (done), sync=server until a receiving thread
// dequeued the packet (taken: what the server ORB reading the request is),
// sync=transport until the packet is in the ring, and sync=none queues it
// here as above, its sender thread putting it in the ring.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "scabench/core/bounded_queue.hpp"
#include "scabench/core/thread_name.hpp"
#include "scabench/runtime/policy_schema.hpp"
#include "scabench/runtime/port_types.hpp"
#include "scabench/runtime/shm_fields.hpp"
#include "scabench/runtime/shm_ring.hpp"

namespace scabench {

template <class T>
class Sender {
 public:
  using Traits = PortTraits<T>;
  virtual ~Sender() = default;
  virtual void send(const PacketHeader& header, const typename Traits::Seq& data) = 0;
  // Waits until every packet handed to send() has left this process.
  virtual void flush() {}
  // The connection goes (disconnectPort): ends what its protocol says it
  // began and did not end (BulkIO's open streams get their EOS).
  virtual void disconnected() {}
};

template <class T>
class TwowaySender final : public Sender<T> {
 public:
  explicit TwowaySender(typename PortTraits<T>::Ref_var ref) : ref_(ref) {}
  void send(const PacketHeader& h, const typename PortTraits<T>::Seq& d) override { ref_->pushPacket(h, d); }

 private:
  typename PortTraits<T>::Ref_var ref_;
};

template <class T>
class OnewaySender final : public Sender<T> {
 public:
  OnewaySender(typename PortTraits<T>::Ref_var ref, bool waitForServer) : ref_(ref), waitForServer_(waitForServer) {}
  void send(const PacketHeader& h, const typename PortTraits<T>::Seq& d) override {
    ref_->pushPacketOneway(h, d);
    if (waitForServer_) ref_->syncMarker();
  }

 private:
  typename PortTraits<T>::Ref_var ref_;
  const bool waitForServer_;
};

// A packet through a shared-memory ring, waiting as the policy says.
template <class T>
class ShmSender final : public Sender<T> {
 public:
  ShmSender(std::shared_ptr<shm::RingSender> ring, bool twoway, shm::Wait wait)
      : ring_(std::move(ring)), twoway_(twoway), wait_(wait) {}
  void send(const PacketHeader& h, const typename PortTraits<T>::Seq& d) override {
    ring_->send(ringFieldsOf(h), d.get_buffer(), std::size_t(d.length()) * sizeof(T), twoway_, wait_);
  }
  void flush() override { ring_->flush(); }

 private:
  std::shared_ptr<shm::RingSender> ring_;
  const bool twoway_;
  const shm::Wait wait_;
};

// SYNC_NONE: the caller only copies the packet into a client-side queue. One
// sender thread drains it through `inner` (the connection's sync=transport
// sender: the ORB's oneway, or the ring), so the client never reorders.
template <class T>
class QueuedOnewaySender final : public Sender<T> {
 public:
  QueuedOnewaySender(std::unique_ptr<Sender<T>> inner, std::size_t depth)
      : inner_(std::move(inner)), queue_(depth), thread_([this] {
          nameThisThread("sb-send-q");
          drain();
        }) {}
  ~QueuedOnewaySender() override {
    queue_.close();
    if (thread_.joinable()) thread_.join();  // flush() may have joined it (a disconnect flushes first)
  }
  void send(const PacketHeader& h, const typename PortTraits<T>::Seq& d) override {
    Item item{h, typename PortTraits<T>::Seq(d)};  // deep copy: the caller keeps its buffer
    queue_.push(std::move(item));
  }
  void flush() override {
    // A disconnect flushes on an ORB thread while the component's own
    // thread may flush after its end of stream: one joins the drain thread.
    std::lock_guard lock(flushing_);
    queue_.close();
    if (thread_.joinable()) thread_.join();
    inner_->flush();
  }

 private:
  struct Item {
    PacketHeader header;
    MovableSeq<typename PortTraits<T>::Seq> data;  // through the queue and out, each move hands it over
  };
  void drain() {
    while (auto item = queue_.pop()) {
      try {
        inner_->send(item->header, *item->data);
      } catch (...) {
        // A oneway has no one to report to; the receiver's counts show the loss.
      }
    }
  }
  std::unique_ptr<Sender<T>> inner_;
  BoundedQueue<Item> queue_;
  std::mutex flushing_;
  std::thread thread_;
};

template <class T>
std::unique_ptr<Sender<T>> makeSender(typename PortTraits<T>::Ref_var ref, CallKind call, SyncScope sync,
                                      std::size_t syncNoneDepth) {
  if (call == CallKind::Twoway || sync == SyncScope::Target) return std::make_unique<TwowaySender<T>>(ref);
  if (sync == SyncScope::None)
    return std::make_unique<QueuedOnewaySender<T>>(std::make_unique<OnewaySender<T>>(ref, false), syncNoneDepth);
  return std::make_unique<OnewaySender<T>>(ref, sync == SyncScope::Server);
}

// The same policy over a shared-memory ring (the mapping above).
template <class T>
std::unique_ptr<Sender<T>> makeRingSender(std::shared_ptr<shm::RingSender> ring, CallKind call, SyncScope sync,
                                          std::size_t syncNoneDepth) {
  if (call == CallKind::Twoway || sync == SyncScope::Target)
    return std::make_unique<ShmSender<T>>(ring, true, shm::Wait::Done);
  if (sync == SyncScope::None)
    return std::make_unique<QueuedOnewaySender<T>>(std::make_unique<ShmSender<T>>(ring, false, shm::Wait::Written),
                                                   syncNoneDepth);
  return std::make_unique<ShmSender<T>>(ring, false, sync == SyncScope::Server ? shm::Wait::Taken : shm::Wait::Written);
}

}  // namespace scabench
