// The hardware parameter table (hw/common/config/hw_config.h) is the one declaration of every
// parameter: these tests fail when a checked-in artefact generated from it drifts
// (hw/configs/default.json, docs/schema/hw_config.schema.json, the table in docs/model.md, the
// fuzz seeds), when a field does not survive JSON, or when a range is not enforced with the
// message the docs show.
#include <cmath>
#include <filesystem>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hw/common/base/error.h"
#include "hw/common/config/hw_config.h"
#include "hw/noc/noc.h"
#include "hw/system/system_network.h"
#include "test_support.h"

namespace fs = std::filesystem;
using namespace ahbm;

namespace {

Json::json_pointer pointer(const std::string& path) {
  std::string p;
  size_t start = 0;
  for (size_t dot; (dot = path.find('.', start)) != std::string::npos; start = dot + 1) p += "/" + path.substr(start, dot - start);
  return Json::json_pointer(p + "/" + path.substr(start));
}

// {"a": {"b": v}} for "a.b".
Json with_field(const std::string& path, const Json& v) {
  Json j = Json::object();
  j[pointer(path)] = v;
  return j;
}

// The message of the InputError parsing `j` throws, "" when it parses.
std::string parse_error(const Json& j) {
  try {
    parse_hw_config(j, "t.json");
    return "";
  } catch (const InputError& e) {
    return e.what();
  }
}

bool is_param(const std::string& path) {
  for (const HwParam& p : hw_params())
    if (p.path == path) return true;
  return false;
}

// Paths of the parameters a JSON config sets ("_comment"-style keys are not parameters).
void leaf_paths(const Json& j, const std::string& path, std::set<std::string>& out) {
  if (!path.empty() && (is_param(path) || !j.is_object())) {
    out.insert(path);
    return;
  }
  for (auto it = j.begin(); it != j.end(); ++it)
    if (it.key()[0] != '_') leaf_paths(it.value(), path.empty() ? it.key() : path + "." + it.key(), out);
}

// Values of a parameter worth trying: its bounds, a middle value, every allowed name.
std::vector<Json> candidates(const HwParam& p) {
  const ParamAllowed& a = p.allowed;
  switch (p.type) {
    case ParamType::integer:
      return {int64_t(a.hi), int64_t(a.lo), int64_t(a.lo) + 1, (int64_t(a.lo) + int64_t(a.hi)) / 2};
    case ParamType::number: return {a.hi, a.lo, (a.lo + a.hi) / 2};
    case ParamType::boolean: return {true, false};
    case ParamType::string:
      if (!a.values.empty()) return {a.values.begin(), a.values.end()};
      return {"mesh", "any_model_name"};  // noc.model: the chip checks the registry
    case ParamType::object: return {Json{{"latency_ns", 5}}, Json::object()};
  }
  return {};
}

std::string source(const std::string& rel) { return test::read_file(test::source_path(rel)); }

TEST(HwConfigTable, DefaultJsonIsGenerated) {
  EXPECT_EQ(source("hw/configs/default.json"), to_json(HwConfig{}).dump(2) + "\n")
      << "hw/configs/default.json differs from the parameter table: run tools/gen-hw-config.sh";
}

TEST(HwConfigTable, SchemaFileIsGenerated) {
  EXPECT_EQ(source("docs/schema/hw_config.schema.json"),
            hw_config_schema(NocRegistry::with_builtin_models().params(), system_network_registry().params()).dump(2) + "\n")
      << "docs/schema/hw_config.schema.json differs from the parameter table: run tools/gen-hw-config.sh";
}

TEST(HwConfigTable, ModelDocTableIsGenerated) {
  const std::string doc = source("docs/model.md");
  const size_t begin = doc.find("<!-- BEGIN hw-config table");
  const size_t end = doc.find("<!-- END hw-config table");
  ASSERT_NE(begin, std::string::npos);
  ASSERT_NE(end, std::string::npos);
  const size_t first = doc.find('\n', begin) + 1;
  ASSERT_LE(first, end);
  EXPECT_EQ(doc.substr(first, end - first), hw_config_markdown_table())
      << "the table in docs/model.md differs from the parameter table: run tools/gen-hw-config.sh";
}

TEST(HwConfigTable, ToJsonHasExactlyTheTableFields) {
  std::set<std::string> in_json, in_table;
  leaf_paths(to_json(HwConfig{}), "", in_json);
  for (const HwParam& p : hw_params()) {
    // Left out at their defaults: the test-only fault injection, and the system block (one chip
    // echoes as before it existed; docs/system.md).
    const bool omitted = p.test_only || p.path.rfind("system.", 0) == 0;
    if (!omitted) in_table.insert(p.path);
    EXPECT_EQ(to_json(HwConfig{}).value(pointer(p.path), Json()), omitted ? Json() : p.default_value) << p.path;
  }
  EXPECT_EQ(in_json, in_table);
  EXPECT_GE(in_table.size(), 35u);  // the table is walked, not empty
}

TEST(HwConfigTable, FuzzSeedsCoverEveryParameter) {
  // The fuzzers start from hw/configs/ and testbench/fuzz/corpus/hw/ (testbench/fuzz/run.sh):
  // together they must set every parameter, test-only ones included, so no field goes unfuzzed.
  std::set<std::string> seeded;
  for (const char* dir : {"hw/configs", "testbench/fuzz/corpus/hw"})
    for (const auto& e : fs::directory_iterator(test::source_path(dir)))
      if (e.path().extension() == ".json") leaf_paths(load_json_file(e.path().string()), "", seeded);
  for (const HwParam& p : hw_params()) EXPECT_TRUE(seeded.count(p.path)) << p.path << " is in no fuzz seed";
}

TEST(HwConfigTable, EveryFieldRoundTrips) {
  for (const HwParam& p : hw_params()) {
    int accepted_changes = 0;
    for (const Json& v : candidates(p)) {
      const Json in = with_field(p.path, v);
      HwConfig c;
      try {
        c = parse_hw_config(in, "t.json");
      } catch (const InputError& e) {
        // Only a relation to another field may refuse a value inside the range.
        EXPECT_EQ(std::string(e.what()).find("out of range"), std::string::npos) << p.path << " = " << v << ": " << e.what();
        continue;
      }
      const Json out = to_json(c);
      if (v != p.default_value) {
        ++accepted_changes;
        ASSERT_TRUE(out.contains(pointer(p.path))) << p.path;
        EXPECT_EQ(out.at(pointer(p.path)), v) << p.path;
      }
      // parse(to_json(x)) == x, field by field.
      EXPECT_EQ(to_json(parse_hw_config(out, "roundtrip")), out) << p.path << " = " << v;
    }
    EXPECT_GE(accepted_changes, 1) << p.path << ": no value other than the default was accepted";
  }
}

TEST(HwConfigTable, RangeBoundsAreEnforcedWithTheDocumentedMessage) {
  const std::string table = hw_config_markdown_table();
  int checked = 0;
  for (const HwParam& p : hw_params()) {
    if (p.type != ParamType::integer && p.type != ParamType::number) continue;
    const std::string range = p.type == ParamType::integer ? range_text(int64_t(p.allowed.lo), int64_t(p.allowed.hi))
                                                           : range_text(p.allowed.lo, p.allowed.hi);
    // The docs table shows the same range the error message gives.
    if (!p.test_only) {
      const size_t row = table.find("| `" + p.path + "` |");
      ASSERT_NE(row, std::string::npos) << p.path;
      const std::string line = table.substr(row, table.find('\n', row) - row);
      EXPECT_NE(line.find("| " + range + " |"), std::string::npos) << line;
    }
    std::vector<Json> outside;
    if (p.type == ParamType::integer) {
      outside = {int64_t(p.allowed.hi) + 1, int64_t(p.allowed.lo) - 1};
    } else {
      outside = {std::nextafter(p.allowed.hi, std::numeric_limits<double>::infinity()),
                 std::nextafter(p.allowed.lo, -std::numeric_limits<double>::infinity())};
    }
    for (const Json& v : outside) {
      EXPECT_EQ(parse_error(with_field(p.path, v)),
                "t.json: " + p.path + ": value " + v.dump() + " is out of range (allowed: " + range + ")");
      ++checked;
    }
    // The bounds themselves are inside (a relation to another field may still refuse them).
    for (const Json& v : {Json(p.allowed.lo), Json(p.allowed.hi)})
      EXPECT_EQ(parse_error(with_field(p.path, v)).find("out of range"), std::string::npos) << p.path << " = " << v;
  }
  EXPECT_GE(checked, 80);
}

TEST(HwConfigTable, NamesAndObjectsAreChecked) {
  for (const HwParam& p : hw_params()) {
    if (p.type == ParamType::string && !p.allowed.values.empty()) {
      std::string list;
      for (const auto& v : p.allowed.values) list += (list.empty() ? "" : ", ") + v;
      EXPECT_EQ(parse_error(with_field(p.path, "no_such_value")),
                "t.json: " + p.path + ": unknown value \"no_such_value\" (allowed: " + list + ")");
    }
    if (p.type == ParamType::object) {
      EXPECT_EQ(parse_error(with_field(p.path, 3)), "t.json: " + p.path + ": must be a JSON object");
    }
    if (p.type == ParamType::boolean) {
      EXPECT_EQ(parse_error(with_field(p.path, 1)),
                "t.json: " + p.path + ": value 1 is not a boolean (allowed: true, false)");
    }
  }
}

TEST(HwConfigTable, EverySectionRejectsUnknownKeys) {
  for (const HwSection& s : hw_sections()) {
    const std::string key = s.path.empty() ? "no_such_field" : s.path + ".no_such_field";
    const std::string msg = parse_error(with_field(key, 1));
    EXPECT_EQ(msg.rfind("t.json: " + key + ": unknown key", 0), 0u) << msg;
  }
}

}  // namespace

// The table's timing column: what a run too long to simulate names, in table order, each with its
// value and default; a parameter set faster, or one without a direction, is not named.
TEST(HwConfigTable, SlowParametersAreTheTimingColumnsSetSlower) {
  HwConfig c;
  c.clock_ghz = 0.5;                 // slower when smaller
  c.pe.gemm.tile_m = 32;             // faster: not named
  c.pe.hbm.latency_ns = 60.0;        // slower when larger
  c.pe.hbm.capacity_bytes = 1 << 20; // no direction: not named
  c.host.bandwidth_gbps = 32.0;      // slower when smaller
  EXPECT_EQ(slow_parameters(c),
            "timing parameters slower than their defaults: clock_ghz = 0.5 (default 1.0), pe.hbm.latency_ns = 60.0 "
            "(default 30.0), host.bandwidth_gbps = 32.0 (default 64.0)");
  HwConfig fast;
  fast.clock_ghz = 2.0;
  fast.remote.overhead_ns = 0.0;
  EXPECT_EQ(slow_parameters(fast), "no timing parameter is slower than its default (the scenario is too large for this hardware)");
}

// A power cap's operating point scales the PE clock and the HBM and inter-CUBE link bandwidths
// (docs/energy.md "Power cap"), nothing else; its lowest scale keeps each within its range.
TEST(HwConfigTable, ClockScaleMultipliesTheClockScaledParametersOnly) {
  const HwConfig c;
  Json scaled = to_json(at_clock_scale(c, 0.5)), want = to_json(c);
  want["clock_ghz"] = 0.5;
  want["pe"]["hbm"]["bandwidth_gbps"] = 153.6;
  want["group"]["link"]["bandwidth_gbps"] = 32.0;
  EXPECT_EQ(scaled, want);
  EXPECT_DOUBLE_EQ(min_clock_scale(c), 0.01);  // clock_ghz >= 0.01 binds first
  HwConfig slow;
  slow.clock_ghz = 0.02;
  slow.group.link.bandwidth_gbps = 0.004;  // >= 0.001: 0.25
  EXPECT_DOUBLE_EQ(min_clock_scale(slow), 0.5);
  slow.group.link.bandwidth_gbps = 0.0015;
  EXPECT_NEAR(min_clock_scale(slow), 0.001 / 0.0015, 1e-15);
}
