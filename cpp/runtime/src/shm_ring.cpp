#include "scabench/runtime/shm_ring.hpp"

#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <new>
#include <system_error>

#include "scabench/core/thread_name.hpp"

namespace scabench::shm {

// The segment's first part. Fixed fields are written once by the sender
// before the receiver maps it; then each cache line is written by one side.
struct alignas(64) Control {
  uint64_t magic;
  uint32_t version;
  uint32_t slots;
  uint64_t dataBytes;
  uint32_t elementBytes;
  uint32_t senderPid;
  // The sender's.
  alignas(64) std::atomic<uint64_t> published;  // messages in the ring so far
  std::atomic<uint32_t> dataSeq;                // futex: bumped at each message
  std::atomic<uint32_t> spareSeq;               // futex: bumped to call a spare receiving thread
  // The receiving threads'.
  alignas(64) std::atomic<uint32_t> sleeping;  // threads waiting on dataSeq
  std::atomic<uint32_t> looking;               // threads sleeping on dataSeq or on their way to look
  std::atomic<uint32_t> spares;                // threads waiting on spareSeq
  std::atomic<uint32_t> onewayConcurrent;      // one-way messages may overlap (dispatch pool, pool:N)
  std::atomic<uint32_t> receiverPid;
  std::atomic<uint32_t> closed;  // the receiving port closed the connection
  // A sleeping receiving thread is woken once `published` reaches this (0 or
  // the next message's number: at each message; more: once a batch waits,
  // while the port's own thread behind it has work: RingReceiver::poke).
  std::atomic<uint64_t> wakeAt;
  alignas(64) std::atomic<uint64_t> releasedMsgs;  // messages whose slot and bytes are free again
  std::atomic<uint64_t> releasedBytes;             // the data position up to which bytes are free again
  std::atomic<uint32_t> spaceSeq;                  // futex: bumped when something is released
  std::atomic<uint32_t> sendersWaiting;            // sending threads waiting on spaceSeq
};

struct alignas(64) Slot {
  std::atomic<uint32_t> state;   // (message number & kSeqMask) << 2 | phase
  std::atomic<uint32_t> waiter;  // the phase a sending thread waits for; 0: none
  uint32_t flags;                // kTwoway, kEndOfStream
  uint32_t streamId;
  uint64_t sequence, sendTimeNs, link, token;
  uint64_t start;  // data position of the samples (a byte count that only grows)
  uint64_t bytes;
};
static_assert(sizeof(Slot) == 64);
static_assert(std::atomic<uint32_t>::is_always_lock_free && sizeof(std::atomic<uint32_t>) == 4);

namespace {

constexpr uint64_t kMagic = 0x314d48534843424eULL;  // "NBCHSHM1"
constexpr uint32_t kVersion = 2;                    // 2: Control::wakeAt
constexpr uint32_t kPublished = 1, kTaken = 2, kDone = 3;
constexpr uint32_t kSeqMask = 0x3FFFFFFF;
constexpr uint32_t kTwoway = 1, kEndOfStream = 2;
// A receiving connection's threads at most, and a process's beyond the
// first of each connection: omniORB's defaults (maxServerThreadPerConnection,
// maxServerThreadPoolSize).
constexpr uint32_t kMaxThreads = 100;
constexpr uint32_t kMaxProcessThreads = 100;
std::atomic<uint32_t> processThreads{0};
constexpr std::size_t kAlign = 64;
// How often a waiting sender looks whether its receiver still exists.
constexpr long kWatchNs = 100'000'000;
// A sender waiting for its packet to be taken or done looks for this long
// before it sleeps, if its last wait was no longer and it may run on more
// than one CPU (on one, the receiver cannot run while it looks).
constexpr int64_t kSpinNs = 20'000;

bool severalCpus() {
  cpu_set_t set;
  return sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 1;
}

int64_t nowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

uint32_t stateOf(uint64_t n, uint32_t phase) { return (uint32_t(n & kSeqMask) << 2) | phase; }
// Message n has reached `phase`, or its slot has moved on to a later message
// (which it can only once n was released, so done).
bool reached(uint32_t state, uint64_t n, uint32_t phase) {
  return (state >> 2) != uint32_t(n & kSeqMask) || (state & 3) >= phase;
}
uint64_t roundUp(uint64_t v, uint64_t to) { return (v + to - 1) / to * to; }

std::size_t controlBytes() { return roundUp(sizeof(Control), kAlign) + std::size_t(kSlots) * sizeof(Slot); }
std::size_t segmentBytes(std::size_t dataBytes) {
  return roundUp(controlBytes() + dataBytes, std::size_t(sysconf(_SC_PAGESIZE)));
}

// Process-shared futexes: the words live in the shared segment.
// Returns false if the wait timed out.
bool futexWait(std::atomic<uint32_t>* word, uint32_t expected, long timeoutNs = -1) {
  timespec ts{timeoutNs / 1'000'000'000, timeoutNs % 1'000'000'000};
  const long r = syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT, expected,
                         timeoutNs < 0 ? nullptr : &ts, nullptr, 0);
  return !(r == -1 && errno == ETIMEDOUT);
}
void futexWake(std::atomic<uint32_t>* word, int count) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE, count, nullptr, nullptr, 0);
}

std::string systemError(const std::string& what) { return what + ": " + std::strerror(errno); }

void* mapSegment(int fd, std::size_t bytes) {
  // Populated now: no page fault on a packet's way later.
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  return p == MAP_FAILED ? nullptr : p;
}

}  // namespace

std::size_t overheadBytes(std::size_t dataBytes) { return segmentBytes(dataBytes) - dataBytes; }

std::string ownerTag() {
  if (const char* env = std::getenv("SCABENCH_RUN_OWNER")) {
    const std::string tag = env;
    bool ok = !tag.empty() && tag.size() < 40;
    for (char ch : tag) ok = ok && ((ch >= '0' && ch <= '9') || ch == '.');
    if (ok) return tag;
  }
  // pid.starttime, as processes.owner_tag() writes it: field 22 of /proc/self/stat.
  std::ifstream in("/proc/self/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto close = text.rfind(')');
  std::string start = "0";
  if (close != std::string::npos) {
    std::size_t pos = close + 2;
    for (int field = 3; field < 22 && pos != std::string::npos; ++field) pos = text.find(' ', pos) + 1;
    if (pos != std::string::npos && pos != 0) start = text.substr(pos, text.find(' ', pos) - pos);
  }
  return std::to_string(getpid()) + "." + start;
}

// ------------------------------------------------------------------ sender

RingSender::RingSender(std::size_t dataBytes, std::size_t elementBytes)
    : dataBytes_(roundUp(dataBytes, 4096)), severalCpus_(severalCpus()) {
  if (dataBytes_ < kMinDataBytes || dataBytes_ > kMaxDataBytes)
    throw std::invalid_argument("a shared-memory ring of " + std::to_string(dataBytes) + " bytes: use " +
                                std::to_string(kMinDataBytes) + " to " + std::to_string(kMaxDataBytes));
  static std::atomic<uint64_t> made{0};
  name_ = std::string(kNamePrefix) + ownerTag() + "-" + std::to_string(getpid()) + "-" + std::to_string(made++);
  const int fd = shm_open(name_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) throw std::runtime_error(systemError("shm_open " + name_));
  mapped_ = segmentBytes(dataBytes_);
  if (ftruncate(fd, off_t(mapped_)) != 0 || !(base_ = mapSegment(fd, mapped_))) {
    const std::string why = systemError("a shared-memory ring of " + std::to_string(mapped_) + " bytes");
    ::close(fd);
    shm_unlink(name_.c_str());
    throw std::runtime_error(why);
  }
  ::close(fd);
  // A new segment reads as zeros: every counter starts at 0, every slot empty.
  c_ = new (base_) Control;
  c_->magic = kMagic;
  c_->version = kVersion;
  c_->slots = kSlots;
  c_->dataBytes = dataBytes_;
  c_->elementBytes = uint32_t(elementBytes);
  c_->senderPid = uint32_t(getpid());
  slots_ = reinterpret_cast<Slot*>(static_cast<unsigned char*>(base_) + roundUp(sizeof(Control), kAlign));
  data_ = static_cast<unsigned char*>(base_) + controlBytes();
}

RingSender::~RingSender() {
  if (linked_) shm_unlink(name_.c_str());
  if (pidfd_ >= 0) ::close(pidfd_);
  if (base_) munmap(base_, mapped_);
}

void RingSender::attached() {
  shm_unlink(name_.c_str());
  linked_ = false;
  receiverPid_ = c_->receiverPid.load(std::memory_order_acquire);
  if (receiverPid_ == 0) throw RingClosed("the receiving port did not map the shared-memory ring " + name_);
  pidfd_ = int(syscall(SYS_pidfd_open, pid_t(receiverPid_), 0));
  if (pidfd_ < 0 && errno == ESRCH) gone();
}

bool RingSender::receiverGone() {
  if (c_->closed.load(std::memory_order_acquire)) return true;
  if (pidfd_ >= 0) {
    pollfd p{pidfd_, POLLIN, 0};
    return poll(&p, 1, 0) > 0;  // a pidfd reads ready once its process has exited
  }
  return kill(pid_t(receiverPid_), 0) != 0 && errno == ESRCH;
}

void RingSender::gone() {
  gone_.store(true, std::memory_order_relaxed);
  if (c_->closed.load(std::memory_order_acquire))
    throw RingClosed("the receiving port closed the shared-memory connection");
  throw RingClosed("the receiving process (pid " + std::to_string(receiverPid_) + ") has exited");
}

void RingSender::wakeReceiver() {
  c_->wakeAt.store(0);
  c_->dataSeq.fetch_add(1);
  futexWake(&c_->dataSeq, 1);
}

uint64_t RingSender::reserve(uint64_t n, std::size_t bytes) {
  for (;;) {
    if (c_->closed.load(std::memory_order_acquire) || gone_.load(std::memory_order_relaxed)) gone();
    const uint64_t released = c_->releasedMsgs.load(std::memory_order_acquire);
    if (n - released < kSlots) {
      if (released == n) {
        // Nothing in flight: the receiver no longer reads the data area, so
        // this side may say where its free bytes begin. Start again at the
        // area's beginning, the cache lines last used: a paced stream then
        // reuses the same few lines for every packet.
        if (pos_ % dataBytes_ != 0) pos_ += dataBytes_ - pos_ % dataBytes_;
        c_->releasedBytes.store(pos_, std::memory_order_relaxed);
        return pos_;
      }
      const uint64_t free = c_->releasedBytes.load(std::memory_order_acquire) + dataBytes_;
      const uint64_t at = pos_ % dataBytes_;
      // Contiguous: a message that would cross the area's end starts at its beginning.
      const uint64_t start = at + bytes <= dataBytes_ ? pos_ : pos_ + (dataBytes_ - at);
      if (start + bytes <= free) return start;
    }
    // Full: wait for the receiver to release (as a sender waits on a full
    // socket), after waking a receiving thread that put off its wake-up.
    if (c_->sleeping.load() > 0 && c_->wakeAt.load() > n) wakeReceiver();
    const uint32_t seq = c_->spaceSeq.load();
    c_->sendersWaiting.fetch_add(1);
    bool timedOut = false;
    if (c_->releasedMsgs.load() == released) timedOut = !futexWait(&c_->spaceSeq, seq, kWatchNs);
    c_->sendersWaiting.fetch_sub(1);
    if (timedOut && receiverGone()) gone();
  }
}

void RingSender::send(const PacketFields& h, const void* samples, std::size_t bytes, bool twoway, Wait wait) {
  if (bytes > dataBytes_)
    throw std::length_error("a message of " + std::to_string(bytes) +
                            " bytes does not fit in the shared-memory ring's " + std::to_string(dataBytes_));
  uint64_t n;
  {
    std::lock_guard lock(mutex_);
    n = published_;
    const uint64_t start = reserve(n, bytes);
    Slot& s = slots_[n % kSlots];
    s.waiter.store(0, std::memory_order_relaxed);
    s.flags = (twoway ? kTwoway : 0) | (h.endOfStream ? kEndOfStream : 0);
    s.streamId = h.streamId;
    s.sequence = h.sequence;
    s.sendTimeNs = h.sendTimeNs;
    s.link = h.link;
    s.token = h.token;
    s.start = start;
    s.bytes = bytes;
    if (bytes > 0) std::memcpy(data_ + start % dataBytes_, samples, bytes);
    pos_ = start + roundUp(bytes, kAlign);
    s.state.store(stateOf(n, kPublished), std::memory_order_release);
    published_ = n + 1;
    c_->published.store(n + 1);
    note(int64_t(n - c_->releasedMsgs.load(std::memory_order_relaxed)));
    c_->dataSeq.fetch_add(1);
    // Wake a receiving thread only if one sleeps, and then at once only if
    // the receiver asked for each message or this one is waited for (taken,
    // done), ends the stream or is two-way; otherwise once a batch waits (the
    // receiver's own thread behind it pokes it sooner if it runs out). If
    // every one is busy and this message may overlap their upcalls, a spare;
    // else the next to finish its upcall takes it.
    const bool urgent = wait != Wait::Written || twoway || h.endOfStream;
    if (c_->sleeping.load() > 0) {
      if (urgent || n + 1 >= c_->wakeAt.load()) futexWake(&c_->dataSeq, 1);
    } else if (c_->looking.load() == 0 && (twoway || c_->onewayConcurrent.load(std::memory_order_relaxed)) &&
               c_->spares.load() > 0) {
      c_->spareSeq.fetch_add(1);
      futexWake(&c_->spareSeq, 1);
    }
  }
  if (wait == Wait::Taken)
    waitFor(n, kTaken);
  else if (wait == Wait::Done)
    waitFor(n, kDone);
}

void RingSender::waitFor(uint64_t n, uint32_t phase) {
  Slot& s = slots_[n % kSlots];
  const int64_t start = nowNs();
  if (severalCpus_ && lastWaitNs_.load(std::memory_order_relaxed) <= kSpinNs) {
    while (!reached(s.state.load(std::memory_order_acquire), n, phase) && nowNs() - start < kSpinNs)
      __builtin_ia32_pause();
  }
  for (;;) {
    uint32_t state = s.state.load(std::memory_order_acquire);
    if (reached(state, n, phase)) break;
    // Ask for a wake-up at `phase` (the earliest any waiter of this slot wants).
    uint32_t w = s.waiter.load();
    while ((w == 0 || phase < w) && !s.waiter.compare_exchange_weak(w, phase)) {
    }
    state = s.state.load();
    if (reached(state, n, phase)) break;
    if (c_->closed.load(std::memory_order_acquire) || gone_.load(std::memory_order_relaxed)) gone();
    if (!futexWait(&s.state, state, kWatchNs) && receiverGone()) {
      if (reached(s.state.load(), n, phase)) break;
      gone();
    }
  }
  uint32_t mine = phase;
  s.waiter.compare_exchange_strong(mine, 0);
  lastWaitNs_.store(nowNs() - start, std::memory_order_relaxed);
}

void RingSender::flush() {
  uint64_t last;
  {
    std::lock_guard lock(mutex_);
    last = published_;
  }
  if (last == 0) return;
  // What waits behind a put-off wake-up is waited for here: the receiving
  // thread is woken now, not when the port's thread behind it asks (a
  // disconnect does not wait on the receiver's releaser).
  if (c_->wakeAt.load() != 0) wakeReceiver();
  try {
    waitFor(last - 1, kTaken);  // taken in order: the last taken, all are
  } catch (const RingClosed&) {
    // Nothing is left to wait for.
  }
  std::lock_guard lock(mutex_);
  note(int64_t(published_ - c_->releasedMsgs.load(std::memory_order_relaxed)));
}

uint64_t RingSender::depth() const {
  std::lock_guard lock(mutex_);
  const uint64_t released = c_->releasedMsgs.load(std::memory_order_acquire);
  return published_ > released ? published_ - released : 0;
}

void RingSender::countInto(std::atomic<int64_t>* gauge) {
  std::lock_guard lock(mutex_);
  if (gauge == gauge_) return;
  if (gauge_) gauge_->fetch_add(-counted_, std::memory_order_relaxed);
  gauge_ = gauge;
  counted_ = 0;
}

void RingSender::note(int64_t depth) {
  if (!gauge_ || depth == counted_) return;
  gauge_->fetch_add(depth - counted_, std::memory_order_relaxed);
  counted_ = depth;
}

// ---------------------------------------------------------------- receiver

RingReceiver::RingReceiver(const std::string& name, std::size_t elementBytes, uint32_t onewayConcurrency,
                           uint32_t maxAhead, std::recursive_mutex* serialize, Handler handler,
                           std::function<void(const std::string&)> onBroken, std::function<bool()> consumerBusy)
    : name_(name),
      elementBytes_(elementBytes),
      onewayLimit_(std::max<uint32_t>(1, onewayConcurrency)),
      maxAhead_(std::clamp<uint32_t>(maxAhead, 1, kSlots)),
      serialize_(serialize),
      handler_(std::move(handler)),
      onBroken_(std::move(onBroken)),
      consumerBusy_(std::move(consumerBusy)),
      wakeBatch_(std::min(kWakeBatch, maxAhead_)) {
  // Only a ring of this project's, named as a sending port names one.
  const std::size_t prefix = std::strlen(kNamePrefix);
  if (name.size() <= prefix || name.size() > 200 || name.compare(0, prefix, kNamePrefix) != 0 ||
      name.find('/', 1) != std::string::npos)
    throw std::invalid_argument("'" + name + "' is not the name of a shared-memory ring (" + kNamePrefix + "...)");
  const int fd = shm_open(name.c_str(), O_RDWR | O_CLOEXEC, 0);
  if (fd < 0) throw std::invalid_argument(systemError("shared-memory ring " + name));
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077) != 0 ||
      std::size_t(st.st_size) < segmentBytes(kMinDataBytes) || std::size_t(st.st_size) > segmentBytes(kMaxDataBytes)) {
    ::close(fd);
    throw std::invalid_argument("shared-memory ring " + name +
                                ": not an owner-only ring of this user's, of a size "
                                "a sending port makes");
  }
  mapped_ = std::size_t(st.st_size);
  base_ = mapSegment(fd, mapped_);
  ::close(fd);
  if (!base_) throw std::invalid_argument(systemError("shared-memory ring " + name + ": mmap"));
  c_ = static_cast<Control*>(base_);
  // The sender's fixed fields, read once: nothing later in the segment is
  // believed about its shape.
  dataBytes_ = std::size_t(c_->dataBytes);
  const bool ok = c_->magic == kMagic && c_->version == kVersion && c_->slots == kSlots &&
                  dataBytes_ >= kMinDataBytes && dataBytes_ <= kMaxDataBytes && dataBytes_ % 4096 == 0 &&
                  segmentBytes(dataBytes_) == mapped_ && c_->elementBytes == elementBytes;
  if (!ok) {
    munmap(base_, mapped_);
    base_ = nullptr;
    throw std::invalid_argument("shared-memory ring " + name + ": not a ring for samples of " +
                                std::to_string(elementBytes) + " bytes of this version");
  }
  slots_ = reinterpret_cast<Slot*>(static_cast<unsigned char*>(base_) + roundUp(sizeof(Control), kAlign));
  data_ = static_cast<const unsigned char*>(base_) + controlBytes();
  end_.assign(kSlots, 0);
  done_.assign(kSlots, 0);
  next_ = released_ = c_->published.load();  // a new ring: 0
  taken_.store(next_);
  c_->wakeAt.store(0);
  c_->onewayConcurrent.store(onewayLimit_ > 1 ? 1 : 0);
  std::lock_guard lock(mutex_);
  spawn(false);
  if (threads_ == 0) {
    munmap(base_, mapped_);
    base_ = nullptr;
    throw std::invalid_argument("shared-memory ring " + name + ": no thread to receive on");
  }
  c_->receiverPid.store(uint32_t(getpid()), std::memory_order_release);
}

RingReceiver::~RingReceiver() {
  close();
  join();
  if (base_) munmap(base_, mapped_);
}

uint32_t RingReceiver::threads() const {
  std::lock_guard lock(mutex_);
  return uint32_t(pool_.size());
}

void RingReceiver::close() {
  {
    std::lock_guard lock(mutex_);
    if (closed_) return;
    closed_ = true;
    c_->closed.store(1);
  }
  wakeAll();
}

void RingReceiver::poke() {
  // A store then a load, as the sender's publish then its load of wakeAt:
  // one of the two sees the other (sequentially consistent), so a message
  // published meanwhile is never left behind a put-off wake-up.
  if (c_->wakeAt.load() == 0) return;
  c_->wakeAt.store(0);
  if (c_->sleeping.load() > 0 && c_->published.load() > taken_.load()) {
    c_->dataSeq.fetch_add(1);
    futexWake(&c_->dataSeq, 1);
  }
}

void RingReceiver::wakeAll() {
  c_->dataSeq.fetch_add(1);
  futexWake(&c_->dataSeq, INT_MAX);
  c_->spareSeq.fetch_add(1);
  futexWake(&c_->spareSeq, INT_MAX);
  c_->spaceSeq.fetch_add(1);
  futexWake(&c_->spaceSeq, INT_MAX);
  for (uint32_t i = 0; i < kSlots; ++i)
    if (slots_[i].waiter.load() != 0) futexWake(&slots_[i].state, INT_MAX);
}

void RingReceiver::join() {
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(mutex_);
    threads.swap(pool_);
  }
  for (auto& t : threads)
    if (t.joinable()) t.join();
}

void RingReceiver::spawn(bool spare) {
  if (closed_ || threads_ >= kMaxThreads || (threads_ > 0 && processThreads.load() >= kMaxProcessThreads)) return;
  ++threads_;
  ++processThreads;
  if (!spare) c_->looking.fetch_add(1);  // counted before it runs: a sender sees someone will look
  try {
    pool_.emplace_back([this, spare] {
      nameThisThread("sb-ring-rx");
      loop(spare);
    });
  } catch (const std::exception&) {
    // No thread to be had (the process's limit: system_error; or no memory
    // for the pool's growth: bad_alloc): the connection goes on with the
    // threads it has, as an ORB whose pool is exhausted does, and counts
    // none it did not start.
    --threads_;
    --processThreads;
    if (!spare) c_->looking.fetch_sub(1);
  }
}

void RingReceiver::broken(const std::string& why) {
  if (closed_) return;
  closed_ = true;
  c_->closed.store(1);
  if (onBroken_) onBroken_("shared-memory ring " + name_ + ": " + why + "; connection closed");
}

bool RingReceiver::headTakeable() {
  const uint64_t published = c_->published.load();
  if (published == next_) return false;
  const Slot& s = slots_[next_ % kSlots];
  if (s.state.load(std::memory_order_acquire) != stateOf(next_, kPublished) || next_ - released_ >= maxAhead_)
    return false;
  return (s.flags & kTwoway) != 0 || busyOneway_ < onewayLimit_;
}

RingReceiver::Take RingReceiver::tryTake(Taken& t) {
  if (closed_) return Take::Closed;
  const uint64_t published = c_->published.load(std::memory_order_acquire);
  if (published == next_) return Take::Empty;
  Slot& s = slots_[next_ % kSlots];
  if (published - next_ > kSlots || s.state.load(std::memory_order_acquire) != stateOf(next_, kPublished)) {
    broken("message " + std::to_string(next_) + " announced but not written");
    return Take::Closed;
  }
  // Copied out once: the sender cannot change what is checked below.
  const uint32_t flags = s.flags;
  const uint64_t start = s.start, bytes = s.bytes;
  t.twoway = (flags & kTwoway) != 0;
  if ((!t.twoway && busyOneway_ >= onewayLimit_) || next_ - released_ >= maxAhead_) return Take::Blocked;
  if (bytes > dataBytes_ || bytes % elementBytes_ != 0 || start % dataBytes_ + bytes > dataBytes_) {
    broken("message " + std::to_string(next_) + " has samples outside the ring");
    return Take::Closed;
  }
  t.n = next_;
  t.header.streamId = s.streamId;
  t.header.endOfStream = (flags & kEndOfStream) != 0;
  t.header.sequence = s.sequence;
  t.header.sendTimeNs = s.sendTimeNs;
  t.header.link = s.link;
  t.header.token = s.token;
  t.samples = data_ + start % dataBytes_;
  t.bytes = std::size_t(bytes);
  end_[t.n % kSlots] = start + roundUp(bytes, kAlign);
  done_[t.n % kSlots] = 0;
  ++next_;
  taken_.store(next_, std::memory_order_relaxed);
  if (!t.twoway) ++busyOneway_;
  s.state.store(stateOf(t.n, kTaken));
  const uint32_t w = s.waiter.load();
  if (w != 0 && w <= kTaken) futexWake(&s.state, INT_MAX);
  return Take::Took;
}

void RingReceiver::handOff(bool twoway) {
  concurrentTraffic_ = concurrentTraffic_ || twoway || onewayLimit_ > 1;
  if (c_->looking.load() == 0 && headTakeable()) {
    // More is waiting that may overlap this upcall, and no thread is on its
    // way to it: a spare takes it now (the sender saw this thread looking).
    if (spares_ > 0) {
      c_->spareSeq.fetch_add(1);
      futexWake(&c_->spareSeq, 1);
    } else {
      spawn(false);
    }
  } else if (concurrentTraffic_ && spares_ == 0) {
    spawn(true);  // for the sender to call while this thread is busy
  }
}

void RingReceiver::finish(const Taken& t) {
  Slot& s = slots_[t.n % kSlots];
  s.state.store(stateOf(t.n, kDone));
  const uint32_t w = s.waiter.load();
  if (w != 0) futexWake(&s.state, INT_MAX);
  if (!t.twoway) --busyOneway_;
  done_[t.n % kSlots] = 1;
  // Slots and bytes are freed in order, once every earlier upcall returned.
  bool moved = false;
  while (released_ < next_ && done_[released_ % kSlots]) {
    releasedBytes_ = end_[released_ % kSlots];
    done_[released_ % kSlots] = 0;
    ++released_;
    moved = true;
  }
  if (!moved) return;
  c_->releasedBytes.store(releasedBytes_, std::memory_order_relaxed);
  c_->releasedMsgs.store(released_);  // after the bytes: a sender that sees it sees them
  if (c_->sendersWaiting.load() > 0) {
    c_->spaceSeq.fetch_add(1);
    futexWake(&c_->spaceSeq, INT_MAX);
  }
}

void RingReceiver::loop(bool spare) {
  std::unique_lock lock(mutex_);
  for (;;) {
    if (spare) {
      const uint32_t seq = c_->spareSeq.load();
      c_->spares.fetch_add(1);
      ++spares_;
      const bool work = closed_ || (c_->looking.load() == 0 && headTakeable());
      if (!work) {
        lock.unlock();
        futexWait(&c_->spareSeq, seq);
        lock.lock();
      }
      c_->spares.fetch_sub(1);
      --spares_;
      if (closed_) break;
      spare = false;
      c_->looking.fetch_add(1);
    }
    Taken t;
    const Take took = tryTake(t);
    if (took == Take::Took) {
      c_->looking.fetch_sub(1);
      handOff(t.twoway);
      lock.unlock();
      try {
        if (serialize_) {
          std::lock_guard one(*serialize_);
          handler_(t.header, t.samples, t.bytes, t.twoway);
        } else {
          handler_(t.header, t.samples, t.bytes, t.twoway);
        }
      } catch (...) {
        // The port reports its own failures; the connection goes on.
      }
      lock.lock();
      c_->looking.fetch_add(1);  // before the sender can see this message done
      finish(t);
      continue;
    }
    if (took == Take::Empty) {
      const uint32_t seq = c_->dataSeq.load();
      // While the port's thread behind this one has work queued, put the
      // wake-up off until a batch waits: it pokes this thread (poke()) once
      // it runs low, so nothing waits in the ring while it idles.
      const bool putOff = wakeBatch_ > 1 && consumerBusy_ && consumerBusy_();
      c_->wakeAt.store(putOff ? next_ + wakeBatch_ : 0);
      c_->sleeping.fetch_add(1);
      // Looked at again now that the put-off is stored: a consumer that ran
      // low between the first look and the store poked while wakeAt was
      // still 0, and would not poke again. consumerBusy decides under the
      // consumer's lock, the one it hands on under before it pokes; so
      // either this look sees it low, or its poke sees this wakeAt.
      if (putOff && !consumerBusy_()) c_->wakeAt.store(0);
      if (!closed_ && c_->published.load() == next_) {
        lock.unlock();
        futexWait(&c_->dataSeq, seq);
        lock.lock();
      }
      c_->sleeping.fetch_sub(1);
      continue;
    }
    c_->looking.fetch_sub(1);
    if (took == Take::Blocked) {
      // A one-way message the dispatch does not let overlap the ones in
      // progress: the thread that finishes first takes it; this one waits
      // as a spare.
      spare = true;
      continue;
    }
    break;  // closed
  }
  --threads_;
  --processThreads;
  if (closed_) {
    lock.unlock();
    wakeAll();  // a thread that found the ring broken closed it: the others, and the sender, stop too
  }
}

}  // namespace scabench::shm
