#include "runtime/report/trace_level.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <vector>

#include "hw/common/base/error.h"
#include "runtime/report/latency.h"

namespace ahbm::report {

namespace {
constexpr const char* kNames[] = {"auto", "summary", "phase", "step", "tile"};
}

TraceLevel parse_trace_level(const std::string& name) {
  for (size_t i = 0; i < std::size(kNames); ++i)
    if (name == kNames[i]) return TraceLevel(i);
  throw InputError("--trace: \"" + name + "\" is not an output level (allowed: auto, summary, phase, step, tile)");
}

const char* trace_level_name(TraceLevel level) { return kNames[size_t(level)]; }

TraceLevel resolve_trace_level(TraceLevel level, size_t spans) {
  if (level != TraceLevel::automatic) return level;
  return spans <= kAutoTileSpans ? TraceLevel::tile : TraceLevel::step;
}

SpanRecorder spans_at_level(const SpanRecorder& spans, TraceLevel level) {
  SpanRecorder out;
  // The same names under the same ids: every id a span uses, interned in id order.
  int max_id = -1;
  for (const Span& s : spans.spans()) max_id = std::max({max_id, s.component, s.activity, s.phase, s.agent});
  for (int id = 0; id <= max_id; ++id) out.intern(spans.name(id));
  out.declare_all(spans.components());
  if (level == TraceLevel::summary) return out;

  // Per component id: annotation (agent.*, runtime.*), per-tile (a PE or its DMA), or other.
  enum Kind : char { annotation, per_tile, other };
  std::vector<Kind> kind(size_t(max_id + 1), other);
  std::vector<sc_core::sc_time> step_starts;  // runtime.step spans, by start
  const int step_comp = max_id >= 0 ? out.intern("runtime.step") : -1;
  for (int id = 0; id <= max_id; ++id) {
    const std::string& n = spans.name(id);
    if (is_annotation_component(n)) {
      kind[size_t(id)] = annotation;
    } else if (auto it = spans.components().find(n); it != spans.components().end()) {
      const auto k = it->second.kind;
      if (k == ComponentInfo::Kind::pe || k == ComponentInfo::Kind::pe_dma) kind[size_t(id)] = per_tile;
    }
  }
  for (const Span& s : spans.spans())
    if (s.component == step_comp) step_starts.push_back(s.start);
  std::sort(step_starts.begin(), step_starts.end());

  struct Fold {
    Span span;
    bool one_activity = true, one_agent = true;
  };
  std::vector<Fold> folds;
  std::map<std::tuple<int, size_t, int>, size_t> fold_of;  // (component, step, phase) -> folds index
  for (const Span& s : spans.spans()) {
    const Kind k = size_t(s.component) < kind.size() ? kind[size_t(s.component)] : other;
    if (k == annotation || (level == TraceLevel::step && k == other)) {
      out.record(s.start, s.end, s.component, s.activity, s.phase, s.agent, s.rows, s.bytes);
      continue;
    }
    if (level != TraceLevel::step || k != per_tile) continue;
    // The step the span starts in: the last runtime.step starting at or before it.
    const size_t step = size_t(std::upper_bound(step_starts.begin(), step_starts.end(), s.start) - step_starts.begin());
    auto [it, fresh] = fold_of.try_emplace({s.component, step, s.phase}, folds.size());
    if (fresh) {
      folds.push_back({s});
      continue;
    }
    Fold& f = folds[it->second];
    f.span.start = std::min(f.span.start, s.start);
    f.span.end = std::max(f.span.end, s.end);
    f.span.rows += s.rows;
    f.span.bytes += s.bytes;
    f.one_activity = f.one_activity && f.span.activity == s.activity;
    f.one_agent = f.one_agent && f.span.agent == s.agent;
  }
  const int mixed = folds.empty() ? -1 : out.intern("pe_tiles");
  const int agents = folds.empty() ? -1 : out.intern("*");
  for (const Fold& f : folds)
    out.record(f.span.start, f.span.end, f.span.component, f.one_activity ? f.span.activity : mixed, f.span.phase,
               f.one_agent ? f.span.agent : agents, f.span.rows, f.span.bytes);
  return out;
}

}  // namespace ahbm::report
