// The one registry of named parts (hw/common/base/registry.h) and its three users outside serve:
// a duplicate name is a programming error, a replacement keeps its place, an unknown name is an
// input error naming where, the value, the allowed names and the nearest one.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "hw/common/base/registry.h"
#include "hw/noc/noc.h"
#include "runtime/join/strategy.h"

using namespace ahbm;

namespace {

struct Part {
  std::string name;
  int value = 0;
  static constexpr const char* kKind = "widget";
};

std::string error_of(const Registry<Part>& r, const std::string& name, const std::string& where) {
  try {
    r.get(name, where);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Registry, KeepsRegistrationOrderAndRefusesADuplicateName) {
  Registry<Part> r;
  r.add({"mesh", 1});
  r.add({"ring", 2});
  EXPECT_EQ(r.names(), (std::vector<std::string>{"mesh", "ring"}));
  EXPECT_EQ(r.get("ring").value, 2);
  EXPECT_EQ(r.find("torus"), nullptr);
  try {
    r.add({"mesh", 3});
    FAIL() << "a second mesh was accepted";
  } catch (const std::logic_error& e) {
    EXPECT_STREQ(e.what(), "widget \"mesh\" registered twice");
  }
  EXPECT_EQ(r.get("mesh").value, 1);
}

TEST(Registry, AddOrReplaceKeepsThePlaceOfTheReplacedEntry) {
  Registry<Part> r;
  r.add({"mesh", 1});
  r.add({"ring", 2});
  r.add_or_replace({"mesh", 7});
  r.add_or_replace({"torus", 3});
  EXPECT_EQ(r.names(), (std::vector<std::string>{"mesh", "ring", "torus"}));
  EXPECT_EQ(r.get("mesh").value, 7);
}

TEST(Registry, UnknownNameNamesWhereTheValueTheAllowedNamesAndTheNearestOne) {
  Registry<Part> r;
  r.add({"mesh", 1});
  r.add({"ring", 2});
  EXPECT_EQ(error_of(r, "rign", "hw.json: noc.model"),
            "hw.json: noc.model: unknown widget \"rign\" (allowed: mesh, ring); did you mean \"ring\"?");
  EXPECT_EQ(error_of(r, "crossbar", ""), "unknown widget \"crossbar\" (allowed: mesh, ring)");
}

TEST(Registry, NocModelsAndJoinStrategiesAnswerThroughIt) {
  NocRegistry nocs = NocRegistry::with_builtin_models();
  const std::vector<std::string> before = nocs.names();
  ASSERT_FALSE(before.empty());
  NocModelInfo mine = nocs.get(before.front());
  mine.description = "a user's replacement";
  nocs.add(mine);  // replaces the built-in model of that name, in its place
  EXPECT_EQ(nocs.names(), before);
  EXPECT_EQ(nocs.get(before.front()).description, "a user's replacement");
  try {
    nocs.get("idael", "hw.json", "noc.model");
    FAIL() << "an unknown NoC model was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("hw.json: noc.model: unknown NoC model \"idael\" (allowed: ", 0), 0u) << e.what();
    EXPECT_NE(std::string(e.what()).find("did you mean \"ideal\""), std::string::npos) << e.what();
  }

  join::JoinStrategyRegistry joins = join::builtin_join_strategies();
  EXPECT_THROW(joins.add("dedup", "again", nullptr), std::logic_error);
  try {
    joins.get("shema");
    FAIL() << "an unknown join strategy was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("unknown join strategy \"shema\" (allowed: full_text, schema, ", 0), 0u) << e.what();
  }
}
