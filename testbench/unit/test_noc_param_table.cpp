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
#include "hw/system/system_network.h"
#include "test_support.h"

using namespace ahbm;

namespace {

// A registry of plug-in networks as its config sees it: the on-chip NoC (noc.params) or the
// chip-to-chip network (system.network.params, docs/system.md).
struct Plugins {
  NocRegistry registry;
  std::string params_field;
  std::vector<std::string> endpoints;
  int min_rows;  // rows the models declare between them, at least
};
std::vector<Plugins> every_registry() {
  return {{NocRegistry::with_builtin_models(), "noc.params", {"host", "qsrc", "g0.cube0", "g0.cube1", "g0.cube2", "g0.cube3"},
           100},  // 7 models, the flit-level ones 21 rows each
          {system_network_registry(), "system.network.params", system_endpoints(8), 20}};
}

// Builds the model with `params` and returns the InputError text ("" when it was accepted).
std::string build_error(const Plugins& plugins, const std::string& model, const Json& params) {
  SimContext context;
  SimContext::Scope use_context(context);
  NocContext ctx;
  ctx.params = params;
  ctx.config_file = "hw.json";
  ctx.params_field = plugins.params_field;
  ctx.endpoints = plugins.endpoints;
  try {
    plugins.registry.get(model).make("noc", ctx);
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
  for (const Plugins& plugins : every_registry()) {
    int rows = 0;
    for (const NocModelInfo& m : plugins.registry.models()) {
      ASSERT_FALSE(m.params.empty()) << m.name << " declares no parameters";
      for (const HwParam& p : m.params) {
        ++rows;
        const std::string field = plugins.params_field + "." + p.path;
        // The declared key is one the model reads: its default may be refused only by a relation
        // to another field (route_seed without randomised routing), never as an unknown key.
        const std::string at_default = build_error(plugins, m.name, {{p.path, p.default_value}});
        EXPECT_FALSE(has(at_default, "unknown key")) << m.name << " " << field << ": " << at_default;
        // The declared bound or name list is the one the model enforces, in its message.
        const Json bad = outside(p);
        if (bad.is_null()) continue;
        const std::string e = build_error(plugins, m.name, {{p.path, bad}});
        EXPECT_TRUE(has(e, "hw.json") && has(e, field)) << m.name << " " << field << " = " << bad << ": " << e;
        if (p.type == ParamType::integer) {
          EXPECT_TRUE(has(e, range_text(int64_t(p.allowed.lo), int64_t(p.allowed.hi)))) << e;
        } else if (p.type == ParamType::number) {
          EXPECT_TRUE(has(e, range_text(p.allowed.lo, p.allowed.hi))) << e;
        }
        for (const std::string& v : p.allowed.values) EXPECT_TRUE(has(e, v)) << m.name << " " << field << ": " << e;
      }
      // A key no row declares is refused.
      EXPECT_TRUE(has(build_error(plugins, m.name, {{"no_such_param", 1}}), "unknown key")) << m.name;
    }
    EXPECT_GE(rows, plugins.min_rows) << plugins.params_field << ": the tables are walked";
  }
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

// The table between a doc's BEGIN/END `marker` lines.
std::string generated_table(const std::string& doc_path, const std::string& marker) {
  const std::string doc = test::read_file(test::source_path(doc_path));
  const size_t begin = doc.find("<!-- BEGIN " + marker);
  const size_t end = doc.find("<!-- END " + marker);
  if (begin == std::string::npos || end == std::string::npos) return doc_path + " lacks the " + marker + " markers";
  const size_t first = doc.find('\n', begin) + 1;
  return first <= end ? doc.substr(first, end - first) : "";
}

TEST(NocParamTable, NocDocTableIsGenerated) {
  EXPECT_EQ(generated_table("docs/noc.md", "noc-params table"),
            plugin_params_markdown_table(NocRegistry::with_builtin_models().params()))
      << "the NoC parameter table in docs/noc.md differs from the models' tables: run tools/gen-hw-config.sh";
}

TEST(NocParamTable, SystemNetworkDocTableIsGenerated) {
  EXPECT_EQ(generated_table("docs/system.md", "system-network-params table"),
            plugin_params_markdown_table(system_network_registry().params()))
      << "the system network parameter table in docs/system.md differs from the models' tables: run tools/gen-hw-config.sh";
}
