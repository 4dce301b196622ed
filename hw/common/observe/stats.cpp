#include "hw/common/observe/stats.h"

namespace ahbm {

const char* stats::merge_name(Merge m) {
  switch (m) {
    case Merge::sum: return "sum";
    case Merge::max: return "max";
    case Merge::time_mean: return "time_mean";
    case Merge::label: return "label";
  }
  return "?";
}

const StatsNode* StatsNode::find(const std::string& name) const {
  for (const StatsNode& c : children_)
    if (c.name_ == name) return &c;
  return nullptr;
}

const StatsNode& StatsNode::at(const std::string& name) const {
  if (const StatsNode* c = find(name)) return *c;
  throw std::logic_error("statistics node \"" + name_ + "\" has no child \"" + name + "\"");
}

StatsNode& StatsNode::add_child(const std::string& name, Kind kind) {
  for (StatsNode& c : children_)
    if (c.name_ == name) {
      if (c.kind_ != kind) throw std::logic_error("statistics node \"" + name + "\" is both a list and an object");
      return c;
    }
  children_.emplace_back(name, kind);
  return children_.back();
}

const stats::Counter* StatsNode::find_counter(const std::string& name) const {
  for (const stats::Counter& c : counters_)
    if (c.name == name) return &c;
  return nullptr;
}

namespace {

double as_double(const stats::Value& v) {
  if (const auto* u = std::get_if<uint64_t>(&v)) return double(*u);
  if (const auto* i = std::get_if<int64_t>(&v)) return double(*i);
  return std::get<double>(v);
}

void merge_counter(stats::Counter& a, const stats::Counter& s, double acc_ns, double step_ns) {
  if (a.merge != s.merge || a.value.index() != s.value.index())
    throw std::logic_error("statistics counter \"" + a.name + "\" changed its type or merge rule between steps");
  switch (a.merge) {
    case stats::Merge::label:
      return;
    case stats::Merge::sum:
      if (auto* u = std::get_if<uint64_t>(&a.value)) *u += std::get<uint64_t>(s.value);
      else if (auto* i = std::get_if<int64_t>(&a.value)) *i += std::get<int64_t>(s.value);
      else if (auto* d = std::get_if<double>(&a.value)) *d += std::get<double>(s.value);
      else throw std::logic_error("statistics counter \"" + a.name + "\": only numbers can be summed");
      return;
    case stats::Merge::max:
      if (as_double(s.value) > as_double(a.value)) a.value = s.value;
      return;
    case stats::Merge::time_mean: {
      double& m = std::get<double>(a.value);
      const double total = acc_ns + step_ns;
      m = total > 0 ? (m * acc_ns + std::get<double>(s.value) * step_ns) / total : std::get<double>(s.value);
      return;
    }
  }
}

}  // namespace

void merge_stats(StatsNode& acc, const StatsNode& step, double acc_ns, double step_ns) {
  for (const stats::Counter& s : step.counters()) {
    stats::Counter* a = nullptr;
    for (stats::Counter& c : acc.counters_)
      if (c.name == s.name) a = &c;
    if (a) merge_counter(*a, s, acc_ns, step_ns);
    else acc.counters_.push_back(s);
  }
  for (const StatsNode& s : step.children()) {
    StatsNode* a = nullptr;
    for (StatsNode& c : acc.children_)
      if (c.name() == s.name()) a = &c;
    if (!a) acc.children_.push_back(s);
    else if (a->is_list() != s.is_list()) throw std::logic_error("statistics node \"" + s.name() + "\" changed shape between steps");
    else merge_stats(*a, s, acc_ns, step_ns);
  }
}

}  // namespace ahbm
