#pragma once
// A parameter that takes one of a few names, as a C++ enum. The names are declared once, beside
// the enumerators, so the parser, to_json, the generated docs and the schema list exactly the
// enum's values, and code compares enumerators, never strings:
//
//   #define AHBM_HBM_MODELS(V) V(simple, "simple") V(banked, "banked")
//   AHBM_CHOICE(HbmModel, AHBM_HBM_MODELS)          // enum class HbmModel { simple, banked };
//
// A parameter table line of that type (hw_config_param.h) needs no list of allowed values: the
// names are its allowed values.
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#define AHBM_CHOICE_ENUMERATOR(id, name) id,
#define AHBM_CHOICE_NAME(id, name) name,
#define AHBM_CHOICE(Enum, LIST)                                                   \
  enum class Enum { LIST(AHBM_CHOICE_ENUMERATOR) };                               \
  inline const std::vector<std::string>& choice_names(Enum) {                     \
    static const std::vector<std::string> names{LIST(AHBM_CHOICE_NAME)};          \
    return names;                                                                 \
  }

namespace ahbm {

// True for an enum declared with AHBM_CHOICE (its choice_names is found by argument lookup).
template <class E, class = void>
struct is_choice : std::false_type {};
template <class E>
struct is_choice<E, std::void_t<decltype(choice_names(E{}))>> : std::true_type {};
template <class E>
constexpr bool is_choice_v = is_choice<E>::value;

// The name of an enumerator ("banked").
template <class E>
const std::string& choice_name(E e) {
  return choice_names(e).at(size_t(e));
}

// The enumerator named `name`, or none (user input: the caller's error names its field and
// choice_list).
template <class E>
std::optional<E> find_choice(const std::string& name) {
  const std::vector<std::string>& names = choice_names(E{});
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return E(i);
  return std::nullopt;
}

// The names for an error message's "allowed: ...": "w_stationary, x_stationary".
template <class E>
std::string choice_list() {
  std::string out;
  for (const std::string& n : choice_names(E{})) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// The enumerator of a name the parser has already checked against choice_names (a name outside
// them is a bug, not user input).
template <class E>
E choice_of(const std::string& name) {
  if (const std::optional<E> e = find_choice<E>(name)) return *e;
  throw std::logic_error("choice_of: \"" + name + "\" is not a name of this choice");
}

}  // namespace ahbm
