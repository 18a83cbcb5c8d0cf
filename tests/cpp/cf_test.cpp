// The CF as REDHAWK 2.x and SCA 2.2.2 have it on the wire, in this process
// over a real omniORB: the CF_E* number chosen for what happened, initial
// values once and before initialize, the ports as getPortSet lists them, and
// a uses port answering its connections (ExtendedCF::QueryablePort).
#include <gtest/gtest.h>

#include <cerrno>
#include <new>
#include <stdexcept>
#include <string>
#include <system_error>

#include "scabench/runtime/cf_errors.hpp"
#include "scabench/runtime/registry.hpp"
#include "test_host.hpp"

using namespace scabench;

TEST(CfErrorNumber, APosixErrnoIsNamedAsTheCfNamesIt) {
  EXPECT_EQ(cfErrorNumber(ENOENT), CF::CF_ENOENT);
  EXPECT_EQ(cfErrorNumber(ENOEXEC), CF::CF_ENOEXEC);
  EXPECT_EQ(cfErrorNumber(EXDEV), CF::CF_EXDEV);
  EXPECT_EQ(cfErrorNumber(ENOTSUP), CF::CF_ENOTSUP);
  EXPECT_EQ(cfErrorNumber(ECONNREFUSED), CF::CF_NOTSET);  // no CF name
  EXPECT_EQ(cfErrorNumber(0), CF::CF_NOTSET);
}

TEST(CfErrorNumber, AFailureIsReadForWhatHappened) {
  EXPECT_EQ(cfErrorNumber(std::system_error(EACCES, std::generic_category(), "open")), CF::CF_EACCES);
  EXPECT_EQ(cfErrorNumber(std::invalid_argument("bad")), CF::CF_EINVAL);
  EXPECT_EQ(cfErrorNumber(std::out_of_range("far")), CF::CF_ERANGE);
  EXPECT_EQ(cfErrorNumber(std::bad_alloc()), CF::CF_ENOMEM);
  EXPECT_EQ(cfErrorNumber(std::runtime_error("other")), CF::CF_NOTSET);
  EXPECT_EQ(cfErrorNumber(CORBA::TIMEOUT()), CF::CF_ETIMEDOUT);
  EXPECT_EQ(cfErrorNumber(CORBA::TRANSIENT()), CF::CF_EPIPE);
  EXPECT_EQ(cfErrorNumber(CORBA::UNKNOWN()), CF::CF_NOTSET);
}

TEST(Resource, InitialValuesComeOnceAndBeforeInitialize) {
  Component* c = createComponent("stage", "double", {"cf-initial", ::testing::TempDir(), &host()});
  EXPECT_THROW(c->initializeProperties(props({{"work_us", text("long")}})), CF::PropertySet::InvalidConfiguration);
  c->initializeProperties(props({{"work_us", integer(7)}}));  // the refused call did not count
  CF::Properties asked = props({{"work_us", CORBA::Any()}});
  c->query(asked);
  CORBA::ULong value = 0;  // as declared
  ASSERT_TRUE(asked[0].value >>= value);
  EXPECT_EQ(value, 7);
  EXPECT_THROW(c->initializeProperties(props({})), CF::PropertyEmitter::AlreadyInitialized);
  Component* late = createComponent("stage", "double", {"cf-late", ::testing::TempDir(), &host()});
  late->initialize();
  EXPECT_THROW(late->initializeProperties(props({})), CF::PropertyEmitter::AlreadyInitialized);
  EXPECT_FALSE(c->started());
  c->_remove_ref();
  late->_remove_ref();
}

TEST(Resource, GetPortSetListsEveryPortWithItsRepidAndDirection) {
  Component* c = createComponent("stage", "float", {"cf-ports", ::testing::TempDir(), &host(), "cf-ports:w", "/x.spd"});
  CORBA::String_var profile = c->softwareProfile(), id = c->identifier();
  EXPECT_STREQ(profile.in(), "/x.spd");
  EXPECT_STREQ(id.in(), "cf-ports:w");
  CF::PortSet::PortInfoSequence_var ports = c->getPortSet();
  ASSERT_EQ(ports->length(), 2u);
  EXPECT_STREQ(ports[0].name.in(), "in");
  EXPECT_STREQ(ports[0].direction.in(), CF::PortSet::DIRECTION_PROVIDES);
  EXPECT_STREQ(ports[0].repid.in(), "IDL:scabench/dataFloat:1.0");
  EXPECT_STREQ(ports[1].name.in(), "out");
  EXPECT_STREQ(ports[1].direction.in(), CF::PortSet::DIRECTION_USES);
  EXPECT_STREQ(ports[1].repid.in(), "IDL:scabench/dataFloat:1.0");
  c->_remove_ref();
}

TEST(Resource, AUsesPortAnswersItsConnectionsInConnectOrder) {
  Component* src = createComponent("stage", "double", {"cf-src", ::testing::TempDir(), &host()});
  Component* a = createComponent("sink", "double", {"cf-a", ::testing::TempDir(), &host()});
  Component* b = createComponent("sink", "double", {"cf-b", ::testing::TempDir(), &host()});
  CORBA::Object_var outObj = src->getPort("out");
  ExtendedCF::QueryablePort_var out = ExtendedCF::QueryablePort::_narrow(outObj);
  ASSERT_FALSE(CORBA::is_nil(out));
  CORBA::Object_var aIn = a->getPort("in"), bIn = b->getPort("in");
  out->connectPort(aIn, "to-a");
  out->connectPort(bIn, "to-b");
  ExtendedCF::UsesConnectionSequence_var connections = out->connections();
  ASSERT_EQ(connections->length(), 2u);
  EXPECT_STREQ(connections[0].connectionId.in(), "to-a");
  EXPECT_TRUE(connections[0].port->_is_equivalent(aIn));
  EXPECT_STREQ(connections[1].connectionId.in(), "to-b");
  out->disconnectPort("to-a");
  connections = out->connections();
  ASSERT_EQ(connections->length(), 1u);
  EXPECT_STREQ(connections[0].connectionId.in(), "to-b");
  out->disconnectPort("to-b");
  for (auto* c : {src, a, b}) c->_remove_ref();
}
