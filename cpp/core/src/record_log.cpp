#include "scabench/core/record_log.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <new>
#include <stdexcept>
#include <system_error>

namespace scabench {

uint32_t currentThreadId() {
  thread_local const uint32_t tid = uint32_t(::syscall(SYS_gettid));
  return tid;
}

RecordLog::RecordLog(const std::string& path, uint64_t capacity) {
  // Owner-only: the records are the run's results, and the header's counters
  // are live; nobody else should read or write them (docs/trust-model.md).
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "open " + path);
  mappedBytes_ = sizeof(RecordFileHeader) + capacity * sizeof(PacketRecord);
  if (::ftruncate(fd, off_t(mappedBytes_)) != 0) {
    const int err = errno;
    ::close(fd);
    throw std::system_error(err, std::generic_category(), "size " + path);
  }
  void* base = ::mmap(nullptr, mappedBytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (base == MAP_FAILED) throw std::system_error(errno, std::generic_category(), "map " + path);
  std::memset(base, 0, mappedBytes_);  // touch every page before the run
  header_ = new (base) RecordFileHeader{};
  std::memcpy(header_->magic, "SCABREC2", 8);
  header_->headerSize = sizeof(RecordFileHeader);
  header_->recordSize = sizeof(PacketRecord);
  header_->capacity = capacity;
  records_ = reinterpret_cast<PacketRecord*>(static_cast<char*>(base) + sizeof(RecordFileHeader));
}

RecordLog::~RecordLog() {
  if (header_) ::munmap(header_, mappedBytes_);
}

uint64_t RecordLog::arrive(uint64_t sequence, int64_t arriveNs, uint32_t flags) {
  const uint64_t slot = header_->claimed.fetch_add(1, std::memory_order_relaxed);
  if (slot < header_->capacity) {
    PacketRecord& r = records_[slot];
    r.sequence = sequence;
    r.threadId = currentThreadId();
    r.flags = flags;
    // The arrival time last, released: a reader of the mapped file while the
    // run goes on (run/live.py) takes a record whose arrival is set as
    // whole, so it never sees a record's arrival before its thread and flags.
    std::atomic_ref<int64_t>(r.arriveNs).store(arriveNs, std::memory_order_release);
  }
  return slot;
}

void RecordLog::done(uint64_t slot, int64_t doneNs) {
  if (slot < header_->capacity) {
    records_[slot].doneNs = doneNs;
    header_->completed.fetch_add(1, std::memory_order_release);
  }
}

void RecordLog::enterUpcall() {
  // The count lives in the header: the gauge of calls in progress costs
  // nothing beyond the add the peak needed anyway.
  const auto now = uint32_t(header_->upcalls.fetch_add(1, std::memory_order_relaxed) + 1);
  uint32_t seen = header_->maxConcurrent.load(std::memory_order_relaxed);
  while (now > seen && !header_->maxConcurrent.compare_exchange_weak(seen, now)) {
  }
}

void RecordLog::leaveUpcall() { header_->upcalls.fetch_sub(1, std::memory_order_relaxed); }

}  // namespace scabench
