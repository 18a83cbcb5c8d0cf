// The component API: derive from Component, declare properties and ports in
// the constructor, react to packets and to start/stop. The base class
// provides the whole CF::Resource interface as REDHAWK 2.x has it
// (initializeProperties, initialize, configure, query, getPort, getPortSet,
// start, stop, started, softwareProfile, Logging, releaseObject), so SCA and
// REDHAWK tools can drive it (docs/reference/cf.md: what each answers).
//
// Lifecycle, as CF::Resource means it (docs/architecture.md, "Lifecycle"):
//   start()      makes the packet records (the first time), starts the ports'
//                threads, runs onStart(); only then do the ports take
//                packets. If any of it fails, what was started is stopped
//                again and start() raises CF::Resource::StartError: the
//                component is stopped, can be configured, and a later
//                start() tries again.
//   stop()       the ports take no more packets (refused and counted, as
//                before start), onStop() runs (a source stops sending), and
//                the ports' worker and releaser finish what they had taken
//                before it returns (an ORB thread already in the handler
//                finishes its packet); then the component neither processes
//                nor forwards. A later start() goes on where it stopped.
//                It writes the connections' counts (below).
//   initializeProperties()  the initial values, all or nothing, once and
//                only before initialize() (CF::PropertyEmitter::AlreadyInitialized
//                otherwise), as a REDHAWK deployment gives them.
//   configure()  all or nothing (properties.hpp). While started, only the
//                properties declared Configurable::AnyTime (a stage's work,
//                say); the component picks them up in onConfigure().
//
//   class Doubler : public scabench::Component {
//    public:
//     explicit Doubler(const scabench::ComponentContext& ctx) : Component(ctx) {
//       out_ = &addOutPort<CORBA::Double>("out");
//       addInPort<CORBA::Double>("in", [this](const scabench::PacketView<CORBA::Double>& p) {
//         std::vector<double> y(p.samples, p.samples + p.count);
//         for (double& v : y) v *= 2;
//         out_->push(p.header, y.data(), y.size());
//       });
//     }
//    private:
//     scabench::OutPort<CORBA::Double>* out_;
//   };
//   SCABENCH_REGISTER_COMPONENT("doubler", Doubler);   // see registry.hpp
//
// Connection counts. When it stops, and at each end of stream it sends, a
// component writes `<recordDir>/<name>.connections.json` (a temporary file,
// renamed over the last): per uses port connection its counts
// (UsesConnectionCounts, out_port.hpp), per provides port connection the
// number its packet records carry:
//   {"uses": [{"port", "connection_id", "fanout", "sent", "dropped", "unsent",
//              "queue_peak", "blocked_ns"}],
//    "provides": [{"port", "number"}]}
#pragma once

#include <array>
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cf.hh"
#include "scabench/core/record_log.hpp"
#include "scabench/runtime/in_port.hpp"
#include "scabench/runtime/out_port.hpp"
#include "scabench/runtime/port_types.hpp"
#include "scabench/runtime/properties.hpp"

namespace scabench {

// What a host gives its components.
class HostServices {
 public:
  virtual ~HostServices() = default;
  // Sends one event line to the launcher ("eos stage3 1000", "error ...").
  virtual void notify(const std::string& line) = 0;
  // The POA for ports, one of each kind per host (createPortPoa, below).
  virtual PortableServer::POA_ptr portPoa(bool singleThread) = 0;
  virtual void componentReleased(const std::string& name) = 0;
};

// Creates, under `root`, the POA that a host serves its components' ports
// from (HostServices::portPoa). singleThread: SINGLE_THREAD_MODEL, and every
// call goes through the POA, which is what serialises them. Otherwise the
// ORB's own threading, and a call from a component of the same process goes
// straight to the servant (omniORB's LOCAL_CALLS_SHORTCUT, with stubs built
// for it): omniORB's collocated dispatch (call descriptor, POA lock, servant
// lookup) would do nothing else for it, since the host never holds or
// discards its POA manager. A port's servant is never deactivated during a
// run; if it were, omniORB stops taking the shortcut and dispatches again.
// One difference: a C++ exception escaping the servant reaches the caller as
// itself, not as CORBA::UNKNOWN; the caller's port reports either.
PortableServer::POA_ptr createPortPoa(PortableServer::POA_ptr root, bool singleThread);

struct ComponentContext {
  std::string name;       // its name binding: how the launcher, logs and events name it
  std::string recordDir;  // where the component's packet records go
  HostServices* host = nullptr;
  // CF::Resource::identifier: the SCA exec parameter COMPONENT_IDENTIFIER
  // (the instance in its application, "stage1:waveform_1"); empty: the name.
  std::string identifier = {};
  // CF::Resource::softwareProfile: the SPD it was deployed from (the exec
  // parameter PROFILE_NAME); empty when none was given.
  std::string softwareProfile = {};
};

// Whether a component needs its provides port connected to run. An optional
// one that nothing connects to takes no part in the component's end of
// stream; a required one waits for a stream from its sender.
enum class Presence { Required, Optional };

// A port as the component declared it: what `scabench-host --describe`
// publishes under "ports" (docs/reference), besides each kind's lists.
struct PortDeclaration {
  std::string name;
  bool provides = true;  // false: a uses port
  std::string type;      // the element type's IDL name (PortTraits<T>::name)
  std::string repid;     // the repository id of the data interface it provides or uses
  bool required = true;  // uses ports never are
  std::string description;
  std::string bulkioRepid;  // the BulkIO interface's, for a port whose protocol is bulkio (getPortSet)
};

// Names a CORBA system exception the way an operator can act on it.
std::string describeException(const CORBA::Exception& ex);

class Component : public virtual POA_CF::Resource {
 public:
  explicit Component(const ComponentContext& ctx);
  ~Component() override;

  const std::string& name() const { return ctx_.name; }

  // CF::Resource
  char* identifier() override;
  CORBA::Boolean started() override;
  char* softwareProfile() override;
  void initializeProperties(const CF::Properties& props) override;
  char* registerPropertyListener(CORBA::Object_ptr listener, const CF::StringSequence& ids,
                                 CORBA::Float interval) override;
  void unregisterPropertyListener(const char* id) override;
  CF::PortSet::PortInfoSequence* getPortSet() override;
  // CF::Logging: one logger, the component's own, at INFO (docs/reference/cf.md).
  CF::LogEventSequence* retrieve_records(CORBA::ULong& howMany, CORBA::ULong startingRecord) override;
  CF::LogEventSequence* retrieve_records_by_date(CORBA::ULong& howMany, CORBA::ULongLong toTimeStamp) override;
  CF::LogEventSequence* retrieve_records_from_date(CORBA::ULong& howMany, CORBA::ULongLong fromTimeStamp) override;
  CF::LogLevel log_level() override;
  void log_level(CF::LogLevel level) override;
  CF::LogLevel getLogLevel(const char* loggerId) override;
  void setLogLevel(const char* loggerId, CF::LogLevel level) override;
  CF::StringSequence* getNamedLoggers() override;
  void resetLog() override;
  char* getLogConfig() override;
  void setLogConfig(const char* config) override;
  void setLogConfigURL(const char* url) override;
  void initialize() override;
  void releaseObject() override;
  void runTest(CORBA::ULong testId, CF::Properties& values) override;
  void configure(const CF::Properties& props) override;
  void query(CF::Properties& props) override;
  CORBA::Object_ptr getPort(const char* name) override;
  void start() override;
  void stop() override;

  // Reports a failure to the launcher, which ends the run naming this
  // component. Safe from any thread.
  void fail(const std::string& message);

  RecordLog& records();
  // Between a successful start() and stop(): the ports take packets only then.
  bool running() const { return running_.load(std::memory_order_acquire); }
  // From the moment stop() begins until the next start(): a packet source
  // sends no further packet. Set before the output ports are halted, so that
  // a source whose waiting packet the halt gives up sees it before its next
  // packet, which would otherwise be given up too.
  bool stopRequested() const { return stopRequested_.load(std::memory_order_acquire); }
  // Counts one thing a port refused from a peer, into the record header
  // (before start, held until the header exists). Safe from any thread.
  void countRefusal(Refusal why);
  PropertyBag& properties() { return properties_; }
  std::vector<std::string> providesPorts() const;
  std::vector<std::string> usesPorts() const;
  // Every port, provides ports first, each in declaration order.
  std::vector<PortDeclaration> portDeclarations() const;
  HostServices& host() { return *ctx_.host; }

 protected:
  // `description` says what the port carries (--describe publishes it); an
  // in port declared Presence::Optional may stay unconnected.
  template <class T>
  InPort<T>& addInPort(const std::string& name, std::function<void(const PacketView<T>&)> handler,
                       std::string description = {}, Presence presence = Presence::Required);
  template <class T>
  OutPort<T>& addOutPort(const std::string& name, std::string description = {});

  // onStart() may throw (std::exception or a CORBA exception) to refuse to
  // start, having started nothing itself; start() raises StartError with its
  // message. onStop() may throw to raise StopError; the component is
  // stopped all the same.
  virtual void onStart() {}
  virtual void onStop() {}
  // After configure() has changed properties while the component is started
  // (only Configurable::AnyTime ones can have changed): copy them to where
  // the packet threads read them. Under the same lock as start and stop. It
  // must not throw: what it could refuse belongs in the properties' checks,
  // which configure runs before it changes anything.
  virtual void onConfigure() {}
  // Called once every in-port has seen end of stream and delivered every
  // packet announced by it. The default forwards end of stream on every
  // connected out port, or tells the launcher if none is connected,
  // announcing packetsInStream() with the stream's id (endedStreamId()).
  virtual void onEndOfStream();
  // Called each time one in-port's stream ends (every connection into it
  // ended its stream, every packet before the ends delivered), before
  // onEndOfStream when it is the last in-port to end. `port` is its name,
  // `streamId` the id its end of stream carried. The default does nothing:
  // a component's output streams end together, once all its inputs have. A
  // component whose in-ports feed outputs of their own (the duplex: a TX
  // and an RX path) ends each output's stream here, and so its
  // onEndOfStream must not end them again.
  virtual void onInPortEndOfStream(const std::string& /*port*/, uint32_t /*streamId*/) {}

  // Sends end of stream downstream (or tells the launcher, for a terminal
  // component). `count` is how many packets this component emitted in the
  // stream; `streamId` the stream's id, which a receiver that tells streams
  // apart matches with its packets'. Without it: the stream that ended on
  // the in-ports (endedStreamId(); 0 for a source, which passes its own).
  void endStream(uint64_t count, uint32_t streamId);
  void endStream(uint64_t count) { endStream(count, endedStreamId()); }
  // In onEndOfStream: the id the ending stream's end of stream carried (of
  // the last connection to end, with several), and the packets this
  // component handled in it: since the previous end of stream, not since
  // it was made (a second stream of 200 announces 200).
  uint32_t endedStreamId() const { return endedStreamId_.load(); }
  uint64_t packetsInStream() const { return packetsInStream_.load(); }
  bool anyOutPortConnected() const;

 private:
  friend class InPortBase;
  void inPortReachedEndOfStream(const std::string& port, uint32_t streamId);
  // The next connection into any of its provides ports: numbered per
  // component, in attach order (the launcher attaches in the plan's order).
  uint32_t nextInConnection() { return nextInConnection_.fetch_add(1); }
  // `<name>.connections.json`, written whole or not at all; a failure to
  // write it fails the component.
  void writeConnectionCounts();

  ComponentContext ctx_;
  PropertyBag properties_;
  std::vector<std::unique_ptr<InPortBase>> inPorts_;
  std::vector<std::unique_ptr<OutPortBase>> outPorts_;
  std::vector<PortDeclaration> inDeclarations_, outDeclarations_;  // as the ports above
  std::unique_ptr<RecordLog> records_;
  std::atomic<int> inPortsAtEnd_{0};
  int inPortsTakingPart_ = 0;  // those whose end of stream counts (InPortBase::takesPart), set at start
  std::atomic<uint32_t> nextInConnection_{0};
  std::mutex countsFile_;  // one writer of the connections' counts at a time
  // The stream that ended last (inPortReachedEndOfStream): its id, its
  // packets, and the completed count where it began.
  std::atomic<uint32_t> endedStreamId_{0};
  std::atomic<uint64_t> packetsInStream_{0};
  uint64_t streamBegan_ = 0;  // only on the thread that ends a stream; one stream ends at a time
  std::atomic<bool> failed_{false};
  std::atomic<bool> running_{false};
  std::atomic<bool> stopRequested_{false};
  // initialize() has been called, initializeProperties() has: each once.
  bool initialized_ = false, propertiesInitialized_ = false;
  // Whether records_ exists: made at the first start, kept across a stop.
  std::atomic<bool> recording_{false};
  std::array<std::atomic<uint32_t>, kRefusalReasons> earlyRefusals_{};  // before the header exists
  // configure, start and stop come on any ORB thread: one at a time.
  std::mutex lifecycle_;
  // The property values, between configure and query (which does not wait
  // for a start or stop under way).
  std::mutex propertiesMutex_;
};

template <class T>
InPort<T>& Component::addInPort(const std::string& name, std::function<void(const PacketView<T>&)> handler,
                                std::string description, Presence presence) {
  auto port = std::make_unique<InPort<T>>(*this, name, std::move(handler));
  auto& ref = *port;
  ref.setRequired(presence == Presence::Required);
  inPorts_.push_back(std::move(port));
  inDeclarations_.push_back({name, true, PortTraits<T>::name, PortTraits<T>::Ref::_PD_repoId,
                             presence == Presence::Required, std::move(description), PortTraits<T>::bulkioRepid});
  return ref;
}

template <class T>
OutPort<T>& Component::addOutPort(const std::string& name, std::string description) {
  auto port = std::make_unique<OutPort<T>>(*this, name);
  auto& ref = *port;
  outPorts_.push_back(std::move(port));
  outDeclarations_.push_back({name, false, PortTraits<T>::name, PortTraits<T>::Ref::_PD_repoId, false,
                              std::move(description), PortTraits<T>::bulkioRepid});
  return ref;
}

}  // namespace scabench
