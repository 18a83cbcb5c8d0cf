// Template bodies of InPort<T>; they need the complete Component.
#pragma once

#include "scabench/component.hpp"

namespace scabench {

template <class T>
void InPort<T>::upcall(const PacketHeader& h, const typename Traits::Seq& data) {
  RecordLog& log = owner_.records();
  log.enterUpcall();
  if (h.end_of_stream) {
    if (queue_)
      queue_->push(Queued{h, {}, 0});
    else
      endOfStreamArrived(h.sequence_number);
  } else {
    const uint64_t slot = log.arrive(h.sequence_number, monotonicNs());
    const T* samples = data.get_buffer();
    if (queue_)
      queue_->push(Queued{h, std::vector<T>(samples, samples + data.length()), slot});
    else
      process(h, samples, data.length(), slot);
  }
  log.leaveUpcall();
}

template <class T>
void InPort<T>::process(const PacketHeader& h, const T* samples, std::size_t count, uint64_t slot) {
  guarded([&] { handler_(PacketView<T>{h, samples, count}); });
  owner_.records().done(slot, monotonicNs());
  packetDelivered();
}

template <class T>
void InPort<T>::workerLoop() {
  while (auto item = queue_->pop()) {
    if (item->header.end_of_stream)
      endOfStreamArrived(item->header.sequence_number);
    else
      process(item->header, item->samples.data(), item->samples.size(), item->slot);
  }
}

}  // namespace scabench
