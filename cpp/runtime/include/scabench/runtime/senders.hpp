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
#pragma once

#include <memory>
#include <string>
#include <thread>

#include "scabench/core/bounded_queue.hpp"
#include "scabench/runtime/policy_schema.hpp"
#include "scabench/runtime/port_types.hpp"

namespace scabench {

template <class T>
class Sender {
 public:
  using Traits = PortTraits<T>;
  virtual ~Sender() = default;
  virtual void send(const PacketHeader& header, const typename Traits::Seq& data) = 0;
  // Waits until every packet handed to send() has left this process.
  virtual void flush() {}
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

// SYNC_NONE: the caller only copies the packet into a client-side queue. One
// sender thread drains it, so the client never reorders.
template <class T>
class QueuedOnewaySender final : public Sender<T> {
 public:
  QueuedOnewaySender(typename PortTraits<T>::Ref_var ref, std::size_t depth)
      : ref_(ref), queue_(depth), thread_([this] { drain(); }) {}
  ~QueuedOnewaySender() override {
    queue_.close();
    thread_.join();
  }
  void send(const PacketHeader& h, const typename PortTraits<T>::Seq& d) override {
    Item item{h, typename PortTraits<T>::Seq(d)};  // deep copy: the caller keeps its buffer
    queue_.push(std::move(item));
  }
  void flush() override {
    queue_.close();
    if (thread_.joinable()) thread_.join();
  }

 private:
  struct Item {
    PacketHeader header;
    typename PortTraits<T>::Seq data;
    Item(const PacketHeader& h, typename PortTraits<T>::Seq d) : header(h), data(handOver(d)) {}
    // Through the queue and out, each move hands the buffer over (port_types.hpp).
    Item(Item&& o) : header(o.header), data(handOver(o.data)) {}
  };
  void drain() {
    while (auto item = queue_.pop()) {
      try {
        ref_->pushPacketOneway(item->header, item->data);
      } catch (...) {
        // A oneway has no one to report to; the receiver's counts show the loss.
      }
    }
  }
  typename PortTraits<T>::Ref_var ref_;
  BoundedQueue<Item> queue_;
  std::thread thread_;
};

template <class T>
std::unique_ptr<Sender<T>> makeSender(typename PortTraits<T>::Ref_var ref, CallKind call, SyncScope sync,
                                      std::size_t syncNoneDepth) {
  if (call == CallKind::Twoway || sync == SyncScope::Target) return std::make_unique<TwowaySender<T>>(ref);
  if (sync == SyncScope::None) return std::make_unique<QueuedOnewaySender<T>>(ref, syncNoneDepth);
  return std::make_unique<OnewaySender<T>>(ref, sync == SyncScope::Server);
}

}  // namespace scabench
