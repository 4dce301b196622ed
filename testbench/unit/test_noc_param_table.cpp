// Every built-in NoC model declares its noc.params as parameter-table rows (hw/noc/*_params,
// AHBM_PARAMS_NOC_*), like the hardware config's: these tests fail when a declared key is not
// what the model reads, when a declared range or name list is not the one enforced, or when the
// generated table in docs/noc.md drifts.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hw/common/base/error.h"
#include "hw/common/config/hw_config.h"
#include "hw/common/sim/sim_context.h"
#include "hw/noc/noc.h"
#include "test_support.h"

using namespace ahbm;

namespace {

// Builds the model with `params` and returns the InputError text ("" when it was accepted).
std::string build_error(const std::string& model, const Json& params) {
  SimContext context;
  SimContext::Scope use_context(context);
  NocContext ctx;
  ctx.params = params;
  ctx.config_file = "hw.json";
  ctx.endpoints = {"host", "qsrc", "g0.cube0", "g0.cube1", "g0.cube2", "g0.cube3"};
  try {
    NocRegistry::with_builtin_models().get(model).make("noc", ctx);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// A value just outside what the row allows, or null when every value of its type is allowed.
Json outside(const HwParam& p) {
  switch (p.type) {
    case ParamType::integer: return int64_t(p.allowed.hi) + 1;
    case ParamType::number: return p.allowed.hi * 2 + 1;
    case ParamType::string: return p.allowed.values.empty() ? Json() : Json("no_such_name");
    case ParamType::boolean: return "yes";
    case ParamType::object: return 3;
  }
  return Json();
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST(NocParamTable, EveryModelDeclaresTheKeysItReadsWithTheRangesItEnforces) {
  const NocRegistry reg = NocRegistry::with_builtin_models();
  int rows = 0;
  for (const NocModelInfo& m : reg.models()) {
    ASSERT_FALSE(m.params.empty()) << m.name << " declares no parameters";
    for (const HwParam& p : m.params) {
      ++rows;
      const std::string field = "noc.params." + p.path;
      // The declared key is one the model reads: its default may be refused only by a relation
      // to another field (route_seed without randomised routing), never as an unknown key.
      const std::string at_default = build_error(m.name, {{p.path, p.default_value}});
      EXPECT_FALSE(has(at_default, "unknown key")) << m.name << " " << field << ": " << at_default;
      // The declared bound or name list is the one the model enforces, in its message.
      const Json bad = outside(p);
      if (bad.is_null()) continue;
      const std::string e = build_error(m.name, {{p.path, bad}});
      EXPECT_TRUE(has(e, "hw.json") && has(e, field)) << m.name << " " << field << " = " << bad << ": " << e;
      if (p.type == ParamType::integer) {
        EXPECT_TRUE(has(e, range_text(int64_t(p.allowed.lo), int64_t(p.allowed.hi)))) << e;
      } else if (p.type == ParamType::number) {
        EXPECT_TRUE(has(e, range_text(p.allowed.lo, p.allowed.hi))) << e;
      }
      for (const std::string& v : p.allowed.values) EXPECT_TRUE(has(e, v)) << m.name << " " << field << ": " << e;
    }
    // A key no row declares is refused.
    EXPECT_TRUE(has(build_error(m.name, {{"no_such_param", 1}}), "unknown key")) << m.name;
  }
  EXPECT_GE(rows, 100);  // 7 models, the flit-level ones 21 rows each: the tables are walked
}

TEST(NocParamTable, ModelDefaultsAndSharedRowsAreTheModels) {
  const NocRegistry reg = NocRegistry::with_builtin_models();
  auto row = [&](const std::string& model, const std::string& key) {
    for (const HwParam& p : reg.get(model).params)
      if (p.path == key) return p;
    ADD_FAILURE() << model << " does not declare " << key;
    return HwParam{};
  };
  EXPECT_EQ(row("crossbar", "router_cycles").default_value, 2);  // arbitration, then traversal
  EXPECT_EQ(row("mesh", "router_cycles").default_value, 4);
  EXPECT_EQ(row("cmesh", "concentration").default_value, 4);
  EXPECT_EQ(row("flatfly", "concentration").default_value, 1);
  EXPECT_EQ(row("ideal", "latency_ns").default_value, 10.0);
  EXPECT_EQ(row("mesh", "sw_allocator").allowed.values,
            (std::vector<std::string>{"greedy", "input-first", "output-first", "islip", "wavefront"}));
  // The generated docs table lists a row shared alike by several models once, naming them all,
  // and a row whose default differs on its own line.
  const std::string t = plugin_params_markdown_table(reg.params());
  EXPECT_TRUE(has(t, "| `vcs` | crossbar, mesh, cmesh, flatfly, torus, ring |")) << t;
  const size_t crossbar = t.find("| `router_cycles` | crossbar |"), rest = t.find("| `router_cycles` | mesh, cmesh, flatfly, torus, ring |");
  ASSERT_NE(crossbar, std::string::npos) << t;
  ASSERT_NE(rest, std::string::npos) << t;
  EXPECT_EQ(t.find('\n', crossbar) + 1, rest) << "a key's declarations are adjacent";
}

TEST(NocParamTable, NocDocTableIsGenerated) {
  const std::string doc = test::read_file(test::source_path("docs/noc.md"));
  const size_t begin = doc.find("<!-- BEGIN noc-params table");
  const size_t end = doc.find("<!-- END noc-params table");
  ASSERT_NE(begin, std::string::npos);
  ASSERT_NE(end, std::string::npos);
  const size_t first = doc.find('\n', begin) + 1;
  ASSERT_LE(first, end);
  EXPECT_EQ(doc.substr(first, end - first), plugin_params_markdown_table(NocRegistry::with_builtin_models().params()))
      << "the NoC parameter table in docs/noc.md differs from the models' tables: run tools/gen-hw-config.sh";
}
