#include "hw/common/config/hw_config.h"

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <type_traits>

#include "hw/common/config/param_table.h"

namespace ahbm {

namespace {

// A JSON object of the config: the struct that holds it, its own fields, then its sub-objects.
struct Section {
  std::string key;  // in the parent object ("" = root)
  std::string doc;
  bool test_only = false;
  bool omit_at_defaults = false;  // left out of to_json when every field is at its default
  std::function<void*(void*)> member;  // the parent struct -> this one
  std::function<const void*(const void*)> cmember;
  std::vector<ParamField> fields;
  std::vector<Section> subs;
};

template <class P, class S>
Section section(const char* key, S P::*m, const char* doc, std::vector<ParamField> fields, std::vector<Section> subs = {},
                bool test_only = false, bool omit_at_defaults = false) {
  Section s;
  s.key = key;
  s.doc = doc;
  s.test_only = test_only;
  s.omit_at_defaults = omit_at_defaults || test_only;
  s.member = [m](void* p) -> void* { return &(static_cast<P*>(p)->*m); };
  s.cmember = [m](const void* p) -> const void* { return &(static_cast<const P*>(p)->*m); };
  s.fields = std::move(fields);
  s.subs = std::move(subs);
  return s;
}

// Which struct sits at which JSON path. Parsing follows this order: an object's own fields
// first, then its sub-objects (the first bad field of a file is the one reported).
const Section& root() {
  static const Section r = [] {
    Section s;
    s.doc = "an AHBM chip: KV-head groups of HBM CUBEs of PEs";
    s.fields = AHBM_PARAM_FIELDS(HwConfig, AHBM_PARAMS_CHIP);
    s.subs = {
        section("pe", &HwConfig::pe, "one processing element (PE) near its HBM slice", AHBM_PARAM_FIELDS(PeConfig, AHBM_PARAMS_PE),
                {section("gemm", &PeConfig::gemm, "the PE's GEMM engine", AHBM_PARAM_FIELDS(GemmConfig, AHBM_PARAMS_PE_GEMM)),
                 section("vector", &PeConfig::vector, "the PE's vector unit", AHBM_PARAM_FIELDS(VectorConfig, AHBM_PARAMS_PE_VECTOR)),
                 section("hbm", &PeConfig::hbm, "the PE's HBM slice", AHBM_PARAM_FIELDS(HbmSliceConfig, AHBM_PARAMS_PE_HBM)),
                 section("dma", &PeConfig::dma, "the PE's DMA from its HBM slice into SRAM",
                         AHBM_PARAM_FIELDS(DmaConfig, AHBM_PARAMS_PE_DMA))}),
        section("cube", &HwConfig::cube, "one HBM CUBE: its PEs, shared Q buffer and reducer",
                AHBM_PARAM_FIELDS(CubeConfig, AHBM_PARAMS_CUBE),
                {section("q_buffer", &CubeConfig::q_buffer, "the CUBE's shared Q buffer",
                         AHBM_PARAM_FIELDS(QBufferConfig, AHBM_PARAMS_CUBE_Q_BUFFER)),
                 section("reducer", &CubeConfig::reducer, "the CUBE's reducer of PE states",
                         AHBM_PARAM_FIELDS(ReducerConfig, AHBM_PARAMS_CUBE_REDUCER))}),
        section("group", &HwConfig::group, "a KV-head group of CUBEs", AHBM_PARAM_FIELDS(GroupConfig, AHBM_PARAMS_GROUP),
                {section("link", &GroupConfig::link, "the group's inter-CUBE reduction links",
                         AHBM_PARAM_FIELDS(LinkConfig, AHBM_PARAMS_GROUP_LINK))}),
        section("noc", &HwConfig::noc, "the network on chip", AHBM_PARAM_FIELDS(NocConfig, AHBM_PARAMS_NOC)),
        section("host", &HwConfig::host, "the host and its link to the chip", AHBM_PARAM_FIELDS(HostConfig, AHBM_PARAMS_HOST)),
        section("remote", &HwConfig::remote, "KV moved between PEs (Policy B1 remap, B2 remote reads)",
                AHBM_PARAM_FIELDS(RemoteConfig, AHBM_PARAMS_REMOTE)),
        section("energy", &HwConfig::energy, "energy per activity and static power (docs/energy.md)",
                AHBM_PARAM_FIELDS(EnergyConfig, AHBM_PARAMS_ENERGY)),
        section("fault_injection", &HwConfig::fault,
                "TEST ONLY: breaks the model on purpose (docs/reliability.md); off by default",
                AHBM_PARAM_FIELDS(FaultConfig, AHBM_PARAMS_FAULT), {}, true),
        section("system", &HwConfig::system,
                "several chips of this config and the chip-to-chip network (docs/system.md); left out of the resolved "
                "config at its defaults (one chip)",
                AHBM_PARAM_FIELDS(SystemConfig, AHBM_PARAMS_SYSTEM),
                {section("network", &SystemConfig::network, "the chip-to-chip network: a model and its parameters",
                         AHBM_PARAM_FIELDS(SystemNetworkConfig, AHBM_PARAMS_SYSTEM_NETWORK))},
                false, true),
    };
    return s;
  }();
  return r;
}

void read_section(const Section& s, void* obj, JsonReader& r) {
  for (const ParamField& f : s.fields) f.read(obj, r);
  for (const Section& sub : s.subs) {
    if (!r.has(sub.key)) continue;
    JsonReader sr = r.object(sub.key);
    read_section(sub, sub.member(obj), sr);
  }
  r.finish();
}

bool at_defaults(const Section& s, const void* obj) {
  for (const ParamField& f : s.fields)
    if (f.get(obj) != f.param.default_value) return false;
  for (const Section& sub : s.subs)
    if (!at_defaults(sub, sub.cmember(obj))) return false;
  return true;
}

Json write_section(const Section& s, const void* obj) {
  Json j = Json::object();
  for (const ParamField& f : s.fields) j[f.key] = f.get(obj);
  for (const Section& sub : s.subs) {
    const void* so = sub.cmember(obj);
    // Fault injection shows only when a test turns it on; the system block only when it is set.
    if (sub.omit_at_defaults && at_defaults(sub, so)) continue;
    j[sub.key] = write_section(sub, so);
  }
  return j;
}

// Every clock_scaled field of the section and its sub-sections: fn(field, its struct).
template <class Obj, class Fn>
void for_clock_scaled(const Section& s, Obj* obj, const Fn& fn) {
  for (const ParamField& f : s.fields)
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
  for (const ParamField& f : s.fields) {
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
  for_clock_scaled(root(), static_cast<void*>(&out), [f](const ParamField& field, void* obj) { field.scale(obj, f); });
  return out;
}

double min_clock_scale(const HwConfig& c) {
  double lowest = 0;
  for_clock_scaled(root(), static_cast<const void*>(&c), [&lowest](const ParamField& field, const void* obj) {
    lowest = std::max(lowest, field.param.allowed.lo / field.get(obj).get<double>());
  });
  return lowest;
}

const std::vector<HwParam>& hw_params() { return flat().params; }
const std::vector<HwSection>& hw_sections() { return flat().sections; }

}  // namespace ahbm
