#include "hw/common/config/hw_config.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <stdexcept>
#include <type_traits>

namespace ahbm {

namespace {

// One table line bound to the member it declares: reads it from a JSON object (range checked,
// with JsonReader's messages) and writes it back.
struct Field {
  std::string key;
  HwParam param;  // path and test_only are filled in when the sections are flattened
  std::function<void(void*, JsonReader&)> read;
  std::function<Json(const void*)> get;
  std::function<void(void*, double)> scale;  // a number's member *= factor (clock_scaled fields)
};

template <class T>
constexpr ParamType type_of() {
  if constexpr (std::is_same_v<T, bool>) return ParamType::boolean;
  else if constexpr (std::is_integral_v<T>) return ParamType::integer;
  else if constexpr (std::is_floating_point_v<T>) return ParamType::number;
  else if constexpr (std::is_same_v<T, std::string>) return ParamType::string;
  else return ParamType::object;
}

template <class S, class T>
Field field(const char* key, T S::*member, ParamAllowed allowed, const char* unit, const char* meaning,
            const char* source) {
  static_assert(std::is_same_v<T, bool> || std::is_same_v<T, int> || std::is_same_v<T, uint64_t> ||
                    std::is_same_v<T, double> || std::is_same_v<T, std::string> || std::is_same_v<T, Json>,
                "a parameter is bool, int, uint64_t, double, std::string or Json (an object its owner reads)");
  Field f;
  f.key = key;
  f.param.type = type_of<T>();
  f.param.default_value = Json(S{}.*member);
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    // The declared range must fit the member's width (an int field may not allow 2^31): the
    // parser range-checks against it, then converts.
    f.param.type_lo = double(std::numeric_limits<T>::min());
    f.param.type_hi = double(std::numeric_limits<T>::max());
    if (allowed.lo < f.param.type_lo || allowed.hi > f.param.type_hi || allowed.lo > allowed.hi)
      throw std::logic_error(std::string("hw_config.h: the range of ") + key + " does not fit its C++ type");
  }
  if (allowed.scaled && !std::is_floating_point_v<T>)
    throw std::logic_error(std::string("hw_config.h: ") + key + " is clock_scaled but not a number");
  if (allowed.slower != SlowerWhen::none && !std::is_arithmetic_v<T>)
    throw std::logic_error(std::string("hw_config.h: ") + key + " has a timing direction but is not a number");
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
    } else if (r.has(k)) {  // an object its owner interprets and validates (noc.params)
      const Json& v = r.raw(k);
      if (!v.is_object()) r.fail(k, "must be a JSON object");
      x = v;
    }
  };
  f.get = [member](const void* obj) { return Json(static_cast<const S*>(obj)->*member); };
  if constexpr (std::is_floating_point_v<T>)
    f.scale = [member](void* obj, double factor) { static_cast<S*>(obj)->*member *= factor; };
  return f;
}

// A JSON object of the config: the struct that holds it, its own fields, then its sub-objects.
struct Section {
  std::string key;  // in the parent object ("" = root)
  std::string doc;
  bool test_only = false;
  std::function<void*(void*)> member;  // the parent struct -> this one
  std::function<const void*(const void*)> cmember;
  std::vector<Field> fields;
  std::vector<Section> subs;
};

template <class P, class S>
Section section(const char* key, S P::*m, const char* doc, std::vector<Field> fields, std::vector<Section> subs = {},
                bool test_only = false) {
  Section s;
  s.key = key;
  s.doc = doc;
  s.test_only = test_only;
  s.member = [m](void* p) -> void* { return &(static_cast<P*>(p)->*m); };
  s.cmember = [m](const void* p) -> const void* { return &(static_cast<const P*>(p)->*m); };
  s.fields = std::move(fields);
  s.subs = std::move(subs);
  return s;
}

#define AHBM_HW_FIELD(type, key, def, allowed, unit, meaning, source) \
  field(#key, &Self::key, allowed, unit, meaning, source),
// The fields of struct S, from its table list.
#define AHBM_FIELDS(S, LIST)                          \
  [] {                                                \
    using Self = S;                                   \
    return std::vector<Field>{LIST(AHBM_HW_FIELD)};   \
  }()

// Which struct sits at which JSON path. Parsing follows this order: an object's own fields
// first, then its sub-objects (the first bad field of a file is the one reported).
const Section& root() {
  static const Section r = [] {
    Section s;
    s.doc = "an AHBM chip: KV-head groups of HBM CUBEs of PEs";
    s.fields = AHBM_FIELDS(HwConfig, AHBM_PARAMS_CHIP);
    s.subs = {
        section("pe", &HwConfig::pe, "one processing element (PE) near its HBM slice", AHBM_FIELDS(PeConfig, AHBM_PARAMS_PE),
                {section("gemm", &PeConfig::gemm, "the PE's GEMM engine", AHBM_FIELDS(GemmConfig, AHBM_PARAMS_PE_GEMM)),
                 section("vector", &PeConfig::vector, "the PE's vector unit", AHBM_FIELDS(VectorConfig, AHBM_PARAMS_PE_VECTOR)),
                 section("hbm", &PeConfig::hbm, "the PE's HBM slice", AHBM_FIELDS(HbmSliceConfig, AHBM_PARAMS_PE_HBM)),
                 section("dma", &PeConfig::dma, "the PE's DMA from its HBM slice into SRAM",
                         AHBM_FIELDS(DmaConfig, AHBM_PARAMS_PE_DMA))}),
        section("cube", &HwConfig::cube, "one HBM CUBE: its PEs, shared Q buffer and reducer",
                AHBM_FIELDS(CubeConfig, AHBM_PARAMS_CUBE),
                {section("q_buffer", &CubeConfig::q_buffer, "the CUBE's shared Q buffer",
                         AHBM_FIELDS(QBufferConfig, AHBM_PARAMS_CUBE_Q_BUFFER)),
                 section("reducer", &CubeConfig::reducer, "the CUBE's reducer of PE states",
                         AHBM_FIELDS(ReducerConfig, AHBM_PARAMS_CUBE_REDUCER))}),
        section("group", &HwConfig::group, "a KV-head group of CUBEs", AHBM_FIELDS(GroupConfig, AHBM_PARAMS_GROUP),
                {section("link", &GroupConfig::link, "the group's inter-CUBE reduction links",
                         AHBM_FIELDS(LinkConfig, AHBM_PARAMS_GROUP_LINK))}),
        section("noc", &HwConfig::noc, "the network on chip", AHBM_FIELDS(NocConfig, AHBM_PARAMS_NOC)),
        section("host", &HwConfig::host, "the host and its link to the chip", AHBM_FIELDS(HostConfig, AHBM_PARAMS_HOST)),
        section("remote", &HwConfig::remote, "KV moved between PEs (Policy B1 remap, B2 remote reads)",
                AHBM_FIELDS(RemoteConfig, AHBM_PARAMS_REMOTE)),
        section("energy", &HwConfig::energy, "energy per activity and static power (docs/energy.md)",
                AHBM_FIELDS(EnergyConfig, AHBM_PARAMS_ENERGY)),
        section("fault_injection", &HwConfig::fault,
                "TEST ONLY: breaks the model on purpose (docs/reliability.md); off by default",
                AHBM_FIELDS(FaultConfig, AHBM_PARAMS_FAULT), {}, true),
    };
    return s;
  }();
  return r;
}

#undef AHBM_FIELDS
#undef AHBM_HW_FIELD

void read_section(const Section& s, void* obj, JsonReader& r) {
  for (const Field& f : s.fields) f.read(obj, r);
  for (const Section& sub : s.subs) {
    if (!r.has(sub.key)) continue;
    JsonReader sr = r.object(sub.key);
    read_section(sub, sub.member(obj), sr);
  }
  r.finish();
}

bool at_defaults(const Section& s, const void* obj) {
  for (const Field& f : s.fields)
    if (f.get(obj) != f.param.default_value) return false;
  for (const Section& sub : s.subs)
    if (!at_defaults(sub, sub.cmember(obj))) return false;
  return true;
}

Json write_section(const Section& s, const void* obj) {
  Json j = Json::object();
  for (const Field& f : s.fields) j[f.key] = f.get(obj);
  for (const Section& sub : s.subs) {
    const void* so = sub.cmember(obj);
    if (sub.test_only && at_defaults(sub, so)) continue;  // fault injection shows only when a test turns it on
    j[sub.key] = write_section(sub, so);
  }
  return j;
}

// Every clock_scaled field of the section and its sub-sections: fn(field, its struct).
template <class Obj, class Fn>
void for_clock_scaled(const Section& s, Obj* obj, const Fn& fn) {
  for (const Field& f : s.fields)
    if (f.param.allowed.scaled) fn(f, obj);
  for (const Section& sub : s.subs) {
    if constexpr (std::is_const_v<Obj>) for_clock_scaled(sub, sub.cmember(obj), fn);
    else for_clock_scaled(sub, sub.member(obj), fn);
  }
}

void flatten(const Section& s, const std::string& path, bool test_only, std::vector<HwParam>& params,
             std::vector<HwSection>& sections) {
  const bool t = test_only || s.test_only;
  sections.push_back({path, s.doc, t});
  for (const Field& f : s.fields) {
    HwParam p = f.param;
    p.path = path.empty() ? f.key : path + "." + f.key;
    p.test_only = t;
    params.push_back(std::move(p));
  }
  for (const Section& sub : s.subs) flatten(sub, path.empty() ? sub.key : path + "." + sub.key, t, params, sections);
}

struct Flat {
  std::vector<HwParam> params;
  std::vector<HwSection> sections;
};

const Flat& flat() {
  static const Flat f = [] {
    Flat x;
    flatten(root(), "", false, x.params, x.sections);
    return x;
  }();
  return f;
}

}  // namespace

HwConfig parse_hw_config(const Json& j, const std::string& file) {
  HwConfig c;
  JsonReader r(j, file);
  read_section(root(), &c, r);
  check_hw_config(c, file);
  return c;
}

HwConfig load_hw_config(const std::string& path) { return parse_hw_config(load_json_file(path), path); }

Json to_json(const HwConfig& c) { return write_section(root(), &c); }

HwConfig at_clock_scale(const HwConfig& c, double f) {
  HwConfig out = c;
  for_clock_scaled(root(), static_cast<void*>(&out), [f](const Field& field, void* obj) { field.scale(obj, f); });
  return out;
}

double min_clock_scale(const HwConfig& c) {
  double lowest = 0;
  for_clock_scaled(root(), static_cast<const void*>(&c), [&lowest](const Field& field, const void* obj) {
    lowest = std::max(lowest, field.param.allowed.lo / field.get(obj).get<double>());
  });
  return lowest;
}

const std::vector<HwParam>& hw_params() { return flat().params; }
const std::vector<HwSection>& hw_sections() { return flat().sections; }

}  // namespace ahbm
