// One set of port templates serves every element type; PortTraits maps an
// element type to its IDL interfaces and sequence types: scabench's own data
// port (scabench.idl) and BulkIO's (bulkio.idl), whose sequence is a typedef
// of its own, the same on the wire.
#pragma once

#include <string>

#include "bulkio.hh"
#include "scabench.hh"

namespace scabench {

template <class T>
struct PortTraits;

template <>
struct PortTraits<CORBA::Octet> {
  using Seq = CORBA::OctetSeq;
  using Ref = scabench::dataOctet;
  using Ref_var = scabench::dataOctet_var;
  using Servant = POA_scabench::dataOctet;
  using BulkioSeq = CF::OctetSequence;
  using BulkioRef = BULKIO::dataOctet;
  using BulkioRef_var = BULKIO::dataOctet_var;
  using BulkioServant = POA_BULKIO::dataOctet;
  static constexpr const char* name = "octet";
  static constexpr const char* bulkioRepid = "IDL:BULKIO/dataOctet:1.0";
};
template <>
struct PortTraits<CORBA::Short> {
  using Seq = CORBA::ShortSeq;
  using Ref = scabench::dataShort;
  using Ref_var = scabench::dataShort_var;
  using Servant = POA_scabench::dataShort;
  using BulkioSeq = PortTypes::ShortSequence;
  using BulkioRef = BULKIO::dataShort;
  using BulkioRef_var = BULKIO::dataShort_var;
  using BulkioServant = POA_BULKIO::dataShort;
  static constexpr const char* name = "short";
  static constexpr const char* bulkioRepid = "IDL:BULKIO/dataShort:1.0";
};
template <>
struct PortTraits<CORBA::Float> {
  using Seq = CORBA::FloatSeq;
  using Ref = scabench::dataFloat;
  using Ref_var = scabench::dataFloat_var;
  using Servant = POA_scabench::dataFloat;
  using BulkioSeq = PortTypes::FloatSequence;
  using BulkioRef = BULKIO::dataFloat;
  using BulkioRef_var = BULKIO::dataFloat_var;
  using BulkioServant = POA_BULKIO::dataFloat;
  static constexpr const char* name = "float";
  static constexpr const char* bulkioRepid = "IDL:BULKIO/dataFloat:1.0";
};
template <>
struct PortTraits<CORBA::Double> {
  using Seq = CORBA::DoubleSeq;
  using Ref = scabench::dataDouble;
  using Ref_var = scabench::dataDouble_var;
  using Servant = POA_scabench::dataDouble;
  using BulkioSeq = PortTypes::DoubleSequence;
  using BulkioRef = BULKIO::dataDouble;
  using BulkioRef_var = BULKIO::dataDouble_var;
  using BulkioServant = POA_BULKIO::dataDouble;
  static constexpr const char* name = "double";
  static constexpr const char* bulkioRepid = "IDL:BULKIO/dataDouble:1.0";
};

// omniORB's sequences predate C++11 and have no move constructor: std::move
// on one, or on a struct that holds one, copies every sample. A packet that a
// port keeps past its call (the reorder buffer, the worker queue, the
// sync=none sender's queue) is moved several times on its way; handOver moves
// it for real: the result takes `from`'s buffer and `from` is left empty. A
// sequence that does not own its buffer (a collocated caller lends its own, a
// sending port lends the component's) is copied, since that buffer is not
// ours to keep.
template <class Seq>
Seq handOver(Seq& from) {
  if (!from.release()) return Seq(from);
  const CORBA::ULong length = from.length(), maximum = from.maximum();
  auto* buffer = from.get_buffer(true);  // orphaned: `from` is left empty
  return Seq(maximum, length, buffer, true);
}

// A sequence's samples as another sequence type of the same element
// (BulkIO's typedefs against scabench's own: the same on the wire, distinct
// C++ classes): a buffer `from` owns is handed over (`from` is left empty),
// a lent one is lent again, as handOver does.
template <class To, class From>
To adoptSamples(From& from) {
  const CORBA::ULong length = from.length();
  if (!from.release()) return To(length, length, from.get_buffer(), false);
  const CORBA::ULong maximum = from.maximum();
  auto* buffer = from.get_buffer(true);
  return To(maximum, length, buffer, true);
}

// A sequence that a kept packet carries: each move hands the buffer over
// (handOver), and nothing copies it by accident. The reorder buffer, the
// worker queue and the sync=none sender's queue keep their packets in this.
template <class Seq>
class MovableSeq {
 public:
  MovableSeq() = default;
  // Implicit, so a packet is built as {header, samples, ...}: the sequence
  // given is handed over, not copied again.
  MovableSeq(Seq from) : seq_(handOver(from)) {}
  MovableSeq(MovableSeq&& o) : seq_(handOver(o.seq_)) {}
  MovableSeq(const MovableSeq&) = delete;
  MovableSeq& operator=(const MovableSeq&) = delete;
  MovableSeq& operator=(MovableSeq&&) = delete;  // no one assigns a kept packet; a move constructs

  Seq& operator*() { return seq_; }
  const Seq& operator*() const { return seq_; }
  Seq* operator->() { return &seq_; }
  const Seq* operator->() const { return &seq_; }

 private:
  Seq seq_;
};

// A received packet as the component's handler sees it. The samples belong
// to the caller: copy them to keep them past the handler.
template <class T>
struct PacketView {
  const PacketHeader& header;
  const T* samples;
  std::size_t count;
};

}  // namespace scabench
