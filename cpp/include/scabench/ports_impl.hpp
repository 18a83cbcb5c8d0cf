// Template bodies of InPort<T>; they need the complete Component.
#pragma once

#include "scabench/component.hpp"

namespace scabench {

template <class T>
void InPort<T>::upcall(const PacketHeader& h, const typename Traits::Seq& data) {
  RecordLog& log = owner_.records();
  log.enterUpcall();
  if (resequencer_) {
    // File it under its link number; the releaser hands it on in order. The
    // record slot is claimed on acceptance, so dropped duplicates leave none.
    Queued item{h, h.end_of_stream ? typename Traits::Seq() : takeSamples(data), 0};
    resequencer_->offer(h.link_sequence, std::move(item), [&](Queued& q) {
      if (q.header.end_of_stream) return;
      q.slot = log.arrive(h.sequence_number, monotonicNs());
      held(+1);
    });
  } else if (h.end_of_stream) {
    if (queue_)
      queue_->push(Queued{h, {}, 0});
    else
      endOfStreamArrived(h.sequence_number);
  } else {
    const uint64_t slot = log.arrive(h.sequence_number, monotonicNs());
    held(+1);
    if (queue_)
      queue_->push(Queued{h, takeSamples(data), slot});
    else
      process(h, data.get_buffer(), data.length(), slot);
  }
  log.leaveUpcall();
}

template <class T>
void InPort<T>::releaserLoop() {
  auto skipped = [this](uint64_t first, uint64_t count) {
    finished(first, count);
    packetsSkipped(count);
  };
  while (auto item = resequencer_->next(skipped)) release(std::move(*item));
}

template <class T>
void InPort<T>::release(Queued&& item) {
  if (queue_) {
    queue_->push(std::move(item));
  } else if (item.header.end_of_stream) {
    endOfStreamArrived(item.header.sequence_number);
  } else {
    process(item.header, item.samples.get_buffer(), item.samples.length(), item.slot);
  }
}

// The worker keeps the samples past the upcall. A remote call's sequence owns
// the buffer the ORB unmarshalled into: adopt it instead of copying. A
// collocated call lends the caller's own buffer, which must be copied.
template <class T>
typename PortTraits<T>::Seq InPort<T>::takeSamples(const typename Traits::Seq& data) {
  if (!data.release()) return typename Traits::Seq(data);
  auto& owned = const_cast<typename Traits::Seq&>(data);
  const CORBA::ULong length = owned.length(), maximum = owned.maximum();
  T* buffer = owned.get_buffer(true);  // orphan: `data` is left empty
  return typename Traits::Seq(maximum, length, buffer, true);
}

template <class T>
void InPort<T>::process(const PacketHeader& h, const T* samples, std::size_t count, uint64_t slot) {
  guarded([&] { handler_(PacketView<T>{h, samples, count}); });
  owner_.records().done(slot, monotonicNs());
  held(-1);
  finished(h.link_sequence);
  packetDelivered();
}

template <class T>
void InPort<T>::workerLoop() {
  while (auto item = queue_->pop()) {
    if (item->header.end_of_stream)
      endOfStreamArrived(item->header.sequence_number);
    else
      process(item->header, item->samples.get_buffer(), item->samples.length(), item->slot);
  }
}

}  // namespace scabench
