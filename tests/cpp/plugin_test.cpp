// Component libraries (plugins) loaded into a process that has built-in
// kinds, as scabench-host loads them: the libraries are built next to this
// test (tests/cpp/plugins/), their paths come from the build.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "scabench/runtime/registry.hpp"

using namespace scabench;

namespace {

// Components here are only created and inspected: no port is served.
class NoHost final : public HostServices {
 public:
  NoHost() {
    int argc = 0;
    orb_ = CORBA::ORB_init(argc, nullptr);  // the process's ORB, if a test started it already
  }
  void notify(const std::string&) override {}
  PortableServer::POA_ptr portPoa(bool) override { return PortableServer::POA::_nil(); }
  void componentReleased(const std::string&) override {}

 private:
  CORBA::ORB_var orb_;
};

// The message loadComponentLibrary throws for `path`.
std::string loadError(const std::string& path) {
  try {
    loadComponentLibrary(path);
  } catch (const std::runtime_error& ex) {
    return ex.what();
  }
  return "";
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST(ComponentLibrary, ItsKindsAreRegisteredAndCreatedLikeBuiltInOnes) {
  const auto kinds = loadComponentLibrary(SCABENCH_TEST_PLUGIN_ECHO);
  ASSERT_EQ(kinds, std::vector<std::string>{"test-echo"});
  EXPECT_EQ(libraryOf("test-echo"), SCABENCH_TEST_PLUGIN_ECHO);
  EXPECT_EQ(libraryOf("stage"), "");
  // Registered for no particular sample type: created for any.
  EXPECT_EQ(sampleTypesOf("test-echo"), std::vector<std::string>{""});
  NoHost host;
  Component* c = createComponent("test-echo", "float", {"echo", ::testing::TempDir(), &host});
  EXPECT_EQ(c->properties().integer("echo_marker"), 7);
  EXPECT_EQ(c->providesPorts(), std::vector<std::string>{"in"});
  EXPECT_EQ(c->usesPorts(), std::vector<std::string>{"out"});
  c->_remove_ref();
  // A second component of the same library in one host loads it once.
  EXPECT_EQ(loadComponentLibrary(SCABENCH_TEST_PLUGIN_ECHO), kinds);
}

TEST(ComponentLibrary, ABuiltInKindCannotBeTaken) {
  const std::string why = loadError(SCABENCH_TEST_PLUGIN_TAKES_STAGE);
  EXPECT_TRUE(contains(why, SCABENCH_TEST_PLUGIN_TAKES_STAGE)) << why;
  EXPECT_TRUE(contains(why, "'stage', which this program already registers")) << why;
  // The built-in stage is still the one created.
  NoHost host;
  Component* c = createComponent("stage", "double", {"still-stage", ::testing::TempDir(), &host});
  EXPECT_NO_THROW(c->properties().integer("work_us"));
  EXPECT_EQ(c->properties().entries().count("impostor"), 0u);
  EXPECT_EQ(libraryOf("stage"), "");
  c->_remove_ref();
}

TEST(ComponentLibrary, ALibraryThatRegistersNothingIsRefused) {
  const std::string why = loadError(SCABENCH_TEST_PLUGIN_REGISTERS_NOTHING);
  EXPECT_TRUE(contains(why, std::string(SCABENCH_TEST_PLUGIN_REGISTERS_NOTHING) + " registers no component kind"))
      << why;
}

TEST(ComponentLibrary, TheLoadersOwnWordsNameWhatIsMissing) {
  std::string why = loadError(SCABENCH_TEST_PLUGIN_UNRESOLVED);
  EXPECT_TRUE(contains(why, "cannot load")) << why;
  EXPECT_TRUE(contains(why, "undefined symbol")) << why;
  EXPECT_TRUE(contains(why, "scabenchTestNowhere")) << why;
  why = loadError("/nonexistent/libnothing.so");
  EXPECT_TRUE(contains(why, "cannot load /nonexistent/libnothing.so")) << why;
  EXPECT_TRUE(contains(why, "No such file")) << why;
}
