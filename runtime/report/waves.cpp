#include "runtime/report/waves.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#include "hw/pe/pe.h"
#include "runtime/report/components.h"
#include "runtime/report/latency.h"

namespace ahbm::report {

namespace {

// GTKWave trace flags (gtkwave's analyzer.h): display format, group begin/end, filters.
constexpr unsigned kHex = 0x2, kDec = 0x4, kBin = 0x8, kRjustify = 0x20, kBlank = 0x200,
                   kTranslated = 0x2000, kAnalogStep = 0x8000, kAnalogBlankStretch = 0x20000, kReal = 0x40000,
                   kGroupBegin = 0x800000, kGroupEnd = 0x1000000;

const char* kActivityFilter = "pe_activity.gtkw-filter";
const char* kPhaseFilter = "phases.gtkw-filter";
const char* kOperatorFilter = "operators.gtkw-filter";
constexpr int kPhaseWidth = 8;
constexpr int kOperatorWidth = 8;
constexpr int kLayerWidth = 16;

// The operator a span of the operator track is ("qkv_proj", "lm_head"), or "" for any other span.
std::string operator_of(const std::string& component) {
  static const std::string layer = "runtime.layer.";
  if (component.rfind(layer, 0) == 0) return component.substr(layer.size());
  return component == "runtime.lm_head" ? "lm_head" : "";
}

uint64_t at_ns(double t) { return uint64_t(std::llround(t)); }

std::string hex_code(uint64_t v, int width) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%0*llx", (width + 3) / 4, static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

std::vector<VcdVar> vcd_vars(const std::string& vcd) {
  std::vector<VcdVar> out;
  std::vector<std::string> scope;
  std::istringstream in(vcd);
  std::string tok;
  while (in >> tok) {
    if (tok == "$scope") {
      std::string kind, name;
      in >> kind >> name;
      scope.push_back(name);
    } else if (tok == "$upscope") {
      scope.pop_back();
    } else if (tok == "$var") {
      std::string kind, id, name, rest;
      int width = 1;
      in >> kind >> width >> id >> name >> rest;
      if (rest != "$end") name += rest;  // the bit range, "[2:0]"
      std::string full;
      for (const auto& s : scope) full += s + ".";
      out.push_back({full + name, width, kind == "real"});
    } else if (tok == "$enddefinitions") {
      break;
    }
  }
  return out;
}

const std::vector<std::string>& pe_activity_names() {
  static const std::vector<std::string> names = [] {
    const std::pair<PeActivity, const char*> table[] = {
        {PeActivity::idle, "idle"},       {PeActivity::q_read, "q_read"},   {PeActivity::gemm_qk, "gemm_qk"},
        {PeActivity::softmax, "softmax"}, {PeActivity::gemm_pv, "gemm_pv"}, {PeActivity::send_state, "send_state"}};
    std::vector<std::string> v;
    for (const auto& [code, name] : table) {
      if (v.size() <= size_t(code)) v.resize(size_t(code) + 1);
      v[size_t(code)] = name;
    }
    return v;
  }();
  return names;
}

namespace {

// The names `name_of` gives the spans ("" = none), ordered by their first span's start (ties by
// name): the codes host.phase and host.operator number them by.
template <class NameOf>
std::vector<std::string> names_by_first_start(const SpanRecorder& spans, NameOf name_of) {
  std::map<std::string, sc_core::sc_time> first;
  for (const Span& s : spans.spans()) {
    const std::string name = name_of(s);
    if (name.empty()) continue;
    auto [it, fresh] = first.try_emplace(name, s.start);
    if (!fresh) it->second = std::min(it->second, s.start);
  }
  std::vector<std::string> order;
  for (const auto& [name, t] : first) order.push_back(name);
  std::stable_sort(order.begin(), order.end(), [&](const std::string& a, const std::string& b) { return first[a] < first[b]; });
  return order;
}

}  // namespace

std::vector<std::string> phase_order(const SpanRecorder& spans) {
  return names_by_first_start(spans, [&](const Span& s) { return spans.name(s.phase); });
}

namespace {

// host.operator and host.layer from the operator track. The operators of a step run one after
// another (model_steps.h), so each span sets both at its start; the code drops to 0 at a span's
// end unless the next operator starts there. Nothing is added for an attention-only run, whose
// waveform stays as it was.
void add_operator_signals(TraceSink& t, const SpanRecorder& spans) {
  const std::vector<std::string> order = operator_order(spans);
  if (order.empty()) return;
  struct Run {
    uint64_t start, end, code, layer;
  };
  std::vector<Run> runs;
  uint64_t layers = 0;
  for (const Span& s : spans.spans()) {
    const std::string op = operator_of(spans.name(s.component));
    if (op.empty()) continue;
    const std::string& where = spans.name(s.activity);  // "layer<l>" or "head"
    const uint64_t code = uint64_t(std::find(order.begin(), order.end(), op) - order.begin()) + 1;
    const bool head = where.rfind("layer", 0) != 0;
    const uint64_t layer = head ? 0 : std::stoull(where.substr(5));
    if (!head) layers = std::max(layers, layer + 1);
    runs.push_back({at_ns(to_ns(s.start)), at_ns(to_ns(s.end)), code, head ? UINT64_MAX : layer});
  }
  std::stable_sort(runs.begin(), runs.end(), [](const Run& a, const Run& b) { return a.start < b.start; });
  const int op_sig = t.add_signal("host.operator", kOperatorWidth);
  const int layer_sig = t.add_signal("host.layer", kLayerWidth);
  for (size_t i = 0; i < runs.size(); ++i) {
    const Run& r = runs[i];
    t.set_at_ns(op_sig, r.code, r.start);
    t.set_at_ns(layer_sig, r.layer == UINT64_MAX ? layers : r.layer, r.start);
    if (i + 1 == runs.size() || runs[i + 1].start > r.end) t.set_at_ns(op_sig, 0, r.end);
  }
}

}  // namespace

std::vector<std::string> operator_order(const SpanRecorder& spans) {
  return names_by_first_start(spans, [&](const Span& s) { return operator_of(spans.name(s.component)); });
}

TraceSink with_host_signals(const TraceSink& trace, const SpanRecorder& spans, const std::vector<double>& tile_done_ns) {
  TraceSink t = trace;
  // Each signal's changes are applied in time order: (time, order within the time, value).
  using Changes = std::vector<std::tuple<uint64_t, int, uint64_t>>;
  auto apply = [&t](int sig, Changes ch) {
    std::sort(ch.begin(), ch.end());
    for (const auto& [when, order, v] : ch) t.set_at_ns(sig, v, when);
  };
  const std::vector<std::string> phases = phase_order(spans);
  std::map<std::string, std::pair<double, double>> ext;
  Changes q_load, agents;
  for (const Span& s : spans.spans()) {
    const double a = to_ns(s.start), b = to_ns(s.end);
    auto [it, fresh] = ext.try_emplace(spans.name(s.phase), a, b);
    if (!fresh) it->second = {std::min(it->second.first, a), std::max(it->second.second, b)};
    const std::string& comp = spans.name(s.component);
    if (comp == "host" && spans.name(s.activity) == "q_load") {
      q_load.emplace_back(at_ns(a), 1, 1);
      q_load.emplace_back(at_ns(b), 0, 0);  // a load starting when the previous ends keeps the line high
    }
    if (comp.rfind("agent.", 0) == 0) agents.emplace_back(at_ns(b), 0, 0);
  }
  // Phase: the most recently started phase that has not ended; 0 between phases.
  Changes phase;
  {
    std::vector<std::tuple<uint64_t, int, uint64_t>> edges;  // (time, 0 = end / 1 = start, code)
    for (size_t i = 0; i < phases.size(); ++i) {
      edges.emplace_back(at_ns(ext[phases[i]].first), 1, i + 1);
      edges.emplace_back(at_ns(ext[phases[i]].second), 0, i + 1);
    }
    std::sort(edges.begin(), edges.end());
    std::vector<uint64_t> active;
    for (const auto& [when, start, code] : edges) {
      if (start) active.push_back(code);
      else active.erase(std::remove(active.begin(), active.end(), code), active.end());
      phase.emplace_back(when, int(phase.size()), active.empty() ? 0 : active.back());
    }
  }
  std::sort(agents.begin(), agents.end());
  for (size_t i = 0; i < agents.size(); ++i) std::get<2>(agents[i]) = i + 1;
  Changes tiles;
  std::vector<double> done = tile_done_ns;
  std::sort(done.begin(), done.end());
  for (size_t i = 0; i < done.size(); ++i) tiles.emplace_back(at_ns(done[i]), int(i), i + 1);

  apply(t.add_signal("host.phase", kPhaseWidth), phase);
  apply(t.add_signal("host.q_load", 1), q_load);
  apply(t.add_signal("host.o_tiles_returned", 32), tiles);
  apply(t.add_signal("host.agents_done", 32), agents);
  add_operator_signals(t, spans);
  return t;
}

void add_power_signals(TraceSink& trace, const PowerTrace& power) {
  std::vector<int> ids;
  const int chip = trace.add_real_signal("chip.power_w");
  for (size_t c = 0; c < kEnergyClasses; ++c)
    ids.push_back(trace.add_real_signal(std::string("chip.power.") + energy_class_name(EnergyClass(c)) + "_w"));
  for (size_t k = 0; k < power.windows.size(); ++k) {
    const uint64_t t = at_ns(power.start_ns(k));
    trace.set_real_at_ns(chip, power.watts(k), t);
    for (size_t c = 0; c < kEnergyClasses; ++c) trace.set_real_at_ns(ids[c], power.watts(k, EnergyClass(c)), t);
  }
  const uint64_t end = at_ns(power.total_ns);
  if (end > at_ns(power.start_ns(power.windows.size() - 1))) {
    trace.set_real_at_ns(chip, 0.0, end);
    for (int id : ids) trace.set_real_at_ns(id, 0.0, end);
  }
}

GtkwFiles make_gtkw(const std::string& vcd_text, const std::vector<std::string>& phases, double total_ns,
                    const ComponentTable& components, const std::vector<std::string>& operators) {
  GtkwFiles f;
  {
    std::ostringstream a;
    // Colours are X11 names; GTKWave draws the value box in them.
    const std::map<std::string, std::string> colour = {{"q_read", "Yellow"}, {"gemm_qk", "Green"},
                                                        {"softmax", "Orange"}, {"gemm_pv", "Cyan"},
                                                        {"send_state", "Violet"}};
    a << "# GTKWave translate filter: PE activity codes (hw/pe/pe.h) -> names\n";
    const auto& names = pe_activity_names();
    for (size_t v = 0; v < names.size(); ++v) {
      auto it = colour.find(names[v]);
      a << hex_code(v, 3) << ' ' << (it == colour.end() ? "" : "?" + it->second + "?") << names[v] << '\n';
    }
    f.activity_filter = a.str();
    std::ostringstream p;
    p << "# GTKWave translate filter: host.phase codes -> phase names\n" << hex_code(0, kPhaseWidth) << " -\n";
    for (size_t i = 0; i < phases.size(); ++i) p << hex_code(i + 1, kPhaseWidth) << ' ' << phases[i] << '\n';
    f.phase_filter = p.str();
    if (!operators.empty()) {
      std::ostringstream o;
      o << "# GTKWave translate filter: host.operator codes -> operator names\n" << hex_code(0, kOperatorWidth) << " -\n";
      for (size_t i = 0; i < operators.size(); ++i) o << hex_code(i + 1, kOperatorWidth) << ' ' << operators[i] << '\n';
      f.operator_filter = o.str();
    }
  }

  // Signals by section, ordered as in components.h.
  std::vector<VcdVar> vars = vcd_vars(vcd_text);
  auto dotted = [](const std::string& full) {  // "ahbm.group0.cube0.pe0.activity[2:0]" -> "group0.cube0.pe0.activity"
    std::string n = full.substr(full.find('.') + 1);
    return n.substr(0, n.find('['));
  };
  std::stable_sort(vars.begin(), vars.end(), [&](const VcdVar& a, const VcdVar& b) {
    return place(dotted(a.name), components).key < place(dotted(b.name), components).key;
  });

  // Zoom: the view shows 2^(-zoom) / kGtkwaveZoomScale ns per pixel of the wave pane. The scale
  // was measured on GTKWave 3.3.118 with this 1 ns VCD (zoom -16 shows 328 ns per pixel, at
  // several window sizes); 5% of the pane is left free after the end of the run.
  constexpr double kGtkwaveZoomScale = 200.0;
  const int width = 1600, height = 1000, signals_width = 330;
  const double wave_px = (width - signals_width - 40) * 0.95;
  const double zoom = -std::log2(std::max(total_ns, 1.0) / wave_px * kGtkwaveZoomScale);

  std::ostringstream g;
  char zbuf[64];
  std::snprintf(zbuf, sizeof zbuf, "%.6f", zoom);
  g << "[*] GTKWave save file written by ahbm-sim; open it from the run directory: gtkwave waves.gtkw\n"
    << "[dumpfile] \"waves.vcd\"\n"
    << "[savefile] \"waves.gtkw\"\n"
    << "[timestart] 0\n"
    << "[size] " << width << ' ' << height << "\n[pos] -1 -1\n"
    << '*' << zbuf << " -1";
  for (int i = 0; i < 26; ++i) g << " -1";
  g << "\n[sst_expanded] 0\n[signals_width] " << signals_width << "\n[sst_vpaned_height] 200\n";
  std::string section, label;
  unsigned flags = 0;
  auto set_flags = [&](unsigned fl) {
    if (fl != flags) {
      char buf[16];
      std::snprintf(buf, sizeof buf, "@%x\n", fl);
      g << buf;
      flags = fl;
    }
  };
  auto close_group = [&] {
    if (section.empty()) return;
    set_flags(kGroupEnd | kBlank);
    g << '-' << label << '\n';
  };
  for (const VcdVar& v : vars) {
    const std::string n = dotted(v.name);
    const Placement p = place(n, components);
    if (p.section != section) {
      close_group();
      section = p.section;
      label = p.label;
      set_flags(kGroupBegin | kBlank);
      g << '-' << label << '\n';
    }
    const bool activity = n.size() > 9 && n.compare(n.size() - 9, 9, ".activity") == 0;
    if (v.real) {
      // An analog step trace, made taller by blank "analog extension" rows below it: the chip's
      // power three rows, each class's one.
      set_flags(kReal | kAnalogStep | kRjustify);
      std::string alias = p.item;
      std::replace(alias.begin(), alias.end(), '.', '/');
      g << "+{" << alias << "} " << v.name << '\n';
      for (int r = 0; r < (n == "chip.power_w" ? 3 : 1); ++r) {
        set_flags(kAnalogBlankStretch);
        g << "-\n";
      }
      continue;
    }
    if (activity || n == "host.phase" || n == "host.operator") {
      set_flags(kTranslated | kHex | kRjustify);
      g << (activity ? "^1 " : n == "host.phase" ? "^2 " : "^3 ")
        << (activity ? kActivityFilter : n == "host.phase" ? kPhaseFilter : kOperatorFilter) << '\n';
    } else {
      set_flags((v.width == 1 ? kBin : kDec) | kRjustify);
    }
    // Alias: the name within its group; GTKWave shows only the text after an alias's last '.'.
    std::string alias = p.item;
    std::replace(alias.begin(), alias.end(), '.', '/');
    g << "+{" << alias << "} " << v.name << '\n';
  }
  close_group();
  g << "[pattern_trace] 1\n[pattern_trace] 0\n";
  f.gtkw = g.str();
  return f;
}

void write_waves(OutputTarget& out, const TraceSink& trace, const SpanRecorder& spans,
                 const std::vector<double>& tile_done_ns, double total_ns, const PowerTrace* power) {
  std::ostringstream vcd;
  TraceSink all = with_host_signals(trace, spans, tile_done_ns);
  if (power) add_power_signals(all, *power);
  all.write_vcd(vcd);
  const GtkwFiles f = make_gtkw(vcd.str(), phase_order(spans), total_ns, spans.components(), operator_order(spans));
  const std::pair<const char*, const std::string*> files[] = {
      {"waves.vcd", nullptr}, {"waves.gtkw", &f.gtkw}, {kActivityFilter, &f.activity_filter}, {kPhaseFilter, &f.phase_filter},
      {kOperatorFilter, &f.operator_filter}};
  for (const auto& [name, text] : files) {
    if (text && text->empty()) continue;  // no operators: no operators.gtkw-filter
    out.write(name, [&](std::ostream& os) { os << (text ? *text : vcd.str()); });
  }
}

}  // namespace ahbm::report
