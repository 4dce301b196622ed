#pragma once
// One table line (hw_config_param.h's X(type, key, default, allowed, unit, meaning, source))
// bound to the struct member it declares: what reads it from a JSON object (range checked, with
// JsonReader's messages), writes it back, and describes it to the generators. The hardware
// config's sections (hw_config.cpp) and a plug-in's own parameters (a NoC model's noc.params,
// hw/noc) are both lists of these, so a plug-in's parameter is declared like the core's.
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "hw/common/config/choice.h"
#include "hw/common/config/hw_config_param.h"

namespace ahbm {

struct ParamField {
  std::string key;
  HwParam param;  // path = key here; a section or a registry entry prefixes it
  std::function<void(void*, JsonReader&)> read;
  std::function<Json(const void*)> get;
  std::function<void(void*, double)> scale;  // a number's member *= factor (clock_scaled fields)
};

namespace detail {

template <class T>
constexpr ParamType param_type_of() {
  if constexpr (std::is_same_v<T, bool>) return ParamType::boolean;
  else if constexpr (std::is_integral_v<T>) return ParamType::integer;
  else if constexpr (std::is_floating_point_v<T>) return ParamType::number;
  else if constexpr (std::is_same_v<T, std::string> || is_choice_v<T>) return ParamType::string;
  else return ParamType::object;
}

template <class T>
Json param_json(const T& x) {
  if constexpr (is_choice_v<T>) return Json(choice_name(x));
  else return Json(x);
}

}  // namespace detail

// The field of member `member` of struct S. A bad declaration is a std::logic_error when the
// table is first built (every test run builds them all).
template <class S, class T>
ParamField param_field(const char* key, T S::*member, ParamAllowed allowed, const char* unit, const char* meaning,
                       const char* source) {
  static_assert(std::is_same_v<T, bool> || std::is_same_v<T, int> || std::is_same_v<T, uint64_t> ||
                    std::is_same_v<T, double> || std::is_same_v<T, std::string> || std::is_same_v<T, Json> ||
                    is_choice_v<T>,
                "a parameter is bool, int, uint64_t, double, std::string, an AHBM_CHOICE enum or Json (an "
                "object its owner reads)");
  ParamField f;
  f.key = key;
  f.param.path = key;
  f.param.type = detail::param_type_of<T>();
  f.param.default_value = detail::param_json(S{}.*member);
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    // The declared range must fit the member's width (an int field may not allow 2^31): the
    // parser range-checks against it, then converts.
    f.param.type_lo = double(std::numeric_limits<T>::min());
    f.param.type_hi = double(std::numeric_limits<T>::max());
    if (allowed.lo < f.param.type_lo || allowed.hi > f.param.type_hi || allowed.lo > allowed.hi)
      throw std::logic_error(std::string("parameter table: the range of ") + key + " does not fit its C++ type");
  }
  if constexpr (is_choice_v<T>) {
    if (!allowed.values.empty() || !allowed.note.empty())
      throw std::logic_error(std::string("parameter table: ") + key + " is a choice: its names are its allowed values");
    allowed.values = choice_names(T{});
  }
  if (allowed.scaled && !std::is_floating_point_v<T>)
    throw std::logic_error(std::string("parameter table: ") + key + " is clock_scaled but not a number");
  if (allowed.slower != SlowerWhen::none && !std::is_arithmetic_v<T>)
    throw std::logic_error(std::string("parameter table: ") + key + " has a timing direction but is not a number");
  f.param.allowed = allowed;
  f.param.unit = unit;
  f.param.meaning = meaning;
  f.param.source = source;
  f.read = [member, k = f.key, a = std::move(allowed)](void* obj, JsonReader& r) {
    T& x = static_cast<S*>(obj)->*member;
    if constexpr (std::is_same_v<T, bool>) {
      x = r.boolean(k, x);
    } else if constexpr (std::is_integral_v<T>) {
      x = T(r.integer(k, int64_t(x), int64_t(a.lo), int64_t(a.hi)));
    } else if constexpr (std::is_floating_point_v<T>) {
      x = r.number(k, x, a.lo, a.hi);
    } else if constexpr (std::is_same_v<T, std::string>) {
      x = r.string(k, x, a.values);
    } else if constexpr (is_choice_v<T>) {
      x = choice_of<T>(r.string(k, choice_name(x), a.values));
    } else if (r.has(k)) {  // an object its owner interprets and validates (noc.params, a placement)
      const Json& v = r.raw(k);
      if (!v.is_object()) r.fail(k, "must be a JSON object");
      x = v;
    }
  };
  f.get = [member](const void* obj) { return detail::param_json(static_cast<const S*>(obj)->*member); };
  if constexpr (std::is_floating_point_v<T>)
    f.scale = [member](void* obj, double factor) { static_cast<S*>(obj)->*member *= factor; };
  return f;
}

// Expands one table line into its field (inside AHBM_PARAM_FIELDS, where Self is the struct).
#define AHBM_PARAM_FIELD(type, key, def, allowed, unit, meaning, source) \
  ::ahbm::param_field(#key, &Self::key, allowed, unit, meaning, source),
// The fields of struct S, from its table list.
#define AHBM_PARAM_FIELDS(S, LIST)                         \
  [] {                                                     \
    using Self = S;                                        \
    return std::vector<::ahbm::ParamField>{LIST(AHBM_PARAM_FIELD)}; \
  }()

// The parameters of one JSON object a plug-in reads (a NoC model's noc.params), as a table:
// declared with the same X(...) lines as the hardware config, read in table order.
template <class S>
class ParamTable {
 public:
  explicit ParamTable(std::vector<ParamField> fields) : fields_(std::move(fields)) {}
  // Reads every field present in `r` into `s`; an absent field keeps the value `s` has (the
  // model's or a preset's default). Does not call r.finish(): the model may read more.
  void read(S& s, JsonReader& r) const {
    for (const ParamField& f : fields_) f.read(&s, r);
  }
  // Reads the one field `key` (a preset, which decides the others' defaults, is read first).
  void read(S& s, JsonReader& r, const std::string& key) const {
    for (const ParamField& f : fields_)
      if (f.key == key) return f.read(&s, r);
    throw std::logic_error("parameter table: no field " + key);
  }
  // The rows as the generators see them (path = key), with the defaults of `defaults` (a
  // model whose defaults differ from S{}'s gives its own).
  std::vector<HwParam> rows(const S& defaults = S{}) const {
    std::vector<HwParam> out;
    for (const ParamField& f : fields_) {
      out.push_back(f.param);
      out.back().default_value = f.get(&defaults);
    }
    return out;
  }

 private:
  std::vector<ParamField> fields_;
};

}  // namespace ahbm
