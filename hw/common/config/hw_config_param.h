#pragma once
// How one hardware parameter is declared (the table in hw_config.h) and what the rest of the
// program learns from that one declaration: the parser, to_json, hw/configs/default.json, the
// parameter table of docs/model.md, the JSON Schema (docs/schema/hw_config.schema.json) and the
// fuzz dictionary all come from it.
#include <cstdint>
#include <string>
#include <vector>

#include "hw/common/base/json_reader.h"

namespace ahbm {

// Which way a parameter's value makes the model slower (none: it does not set a rate or a delay).
enum class SlowerWhen { none, larger, smaller };

// The values a parameter accepts: an inclusive range for integers and numbers, a list of names
// for a string. A string or object with neither is checked by its owner (`note` says which).
// The same column says how the value acts on timing, chained onto the range
// (`between(0.001, 1e6).slower_when_smaller().clock_scaled()`), so no list elsewhere restates it:
// `slower` is what a run too long to simulate names (slow_parameters), `clock_scaled` what a
// power cap scales with the clock (at_clock_scale).
struct ParamAllowed {
  double lo = 0, hi = 0;
  std::vector<std::string> values;
  std::string note;
  SlowerWhen slower = SlowerWhen::none;
  bool scaled = false;  // multiplied by the power cap's clock scale (a number)

  ParamAllowed slower_when_larger() const { return with_slower(SlowerWhen::larger); }
  ParamAllowed slower_when_smaller() const { return with_slower(SlowerWhen::smaller); }
  ParamAllowed clock_scaled() const {
    ParamAllowed a = *this;
    a.scaled = true;
    return a;
  }

 private:
  ParamAllowed with_slower(SlowerWhen w) const {
    ParamAllowed a = *this;
    a.slower = w;
    return a;
  }
};
// Integer bounds are exact: every bound in the table is below 2^53.
inline ParamAllowed between(double lo, double hi) { return ParamAllowed{lo, hi, {}, ""}; }
inline ParamAllowed one_of(std::vector<std::string> values) { return ParamAllowed{0, 0, std::move(values), ""}; }
// A choice (an AHBM_CHOICE enum, choice.h): its names are the allowed values.
inline ParamAllowed one_of_names() { return ParamAllowed{}; }
inline ParamAllowed true_or_false() { return ParamAllowed{0, 0, {}, "true, false"}; }
inline ParamAllowed checked_by(std::string who) { return ParamAllowed{0, 0, {}, std::move(who)}; }

enum class ParamType { integer, number, boolean, string, object };

// One row of the table, as the generators see it.
struct HwParam {
  std::string path;  // JSON path from the config's root, e.g. "pe.gemm.tile_m"
  ParamType type = ParamType::integer;
  Json default_value;
  ParamAllowed allowed;
  // Integers: the range of the C++ member (int: [-2^31, 2^31 - 1]); `allowed` lies inside it.
  double type_lo = 0, type_hi = 0;
  std::string unit;
  std::string meaning;
  std::string source;      // why this default: the public figure it follows
  bool test_only = false;  // fault injection: left out of default.json and the docs table
};

// A plug-in's own parameters as its registry entry declares them: a NoC model's noc.params
// (paths are keys inside that object). The schema and docs generators take a list of these.
struct PluginParams {
  std::string name;  // the model's registry name ("mesh")
  std::vector<HwParam> params;
};

// A JSON object of the config ("" = root, "pe", "pe.gemm", ...), in table order.
struct HwSection {
  std::string path;
  std::string doc;
  bool test_only = false;
};

// Expands one table line into a struct member with its default; the other columns describe it.
#define AHBM_HW_MEMBER(type, key, def, allowed, unit, meaning, source) type key = def;

}  // namespace ahbm
