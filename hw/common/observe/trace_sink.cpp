#include "hw/common/observe/trace_sink.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>

#include <systemc>

#include "hw/common/base/timing.h"

namespace ahbm {

namespace {

std::string vcd_id(int n) {
  std::string s;
  do {
    s += char(33 + n % 94);
    n /= 94;
  } while (n > 0);
  return s;
}

std::string vcd_value(uint64_t v, int width, const std::string& id) {
  if (width == 0) {  // real: the shortest text that reads back as the same double
    double d;
    std::memcpy(&d, &v, sizeof d);
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, d);
    return "r" + std::string(buf, r.ptr) + " " + id;
  }
  if (width == 1) return std::string(v ? "1" : "0") + id;
  std::string bits;
  for (int b = width - 1; b >= 0; --b) {
    if (bits.empty() && b > 0 && !((v >> b) & 1)) continue;  // leading zeros are implied
    bits += ((v >> b) & 1) ? '1' : '0';
  }
  return "b" + bits + " " + id;
}

struct Scope {
  std::map<std::string, std::unique_ptr<Scope>> children;
  std::vector<std::pair<std::string, int>> vars;  // leaf name, signal id
};

void write_scope(std::ostream& os, const std::string& name, const Scope& s,
                 const std::vector<int>& widths) {
  os << "$scope module " << name << " $end\n";
  for (const auto& [leaf, id] : s.vars) {
    if (widths[id] == 0) {
      os << "$var real 64 " << vcd_id(id) << " " << leaf << " $end\n";
      continue;
    }
    os << "$var wire " << widths[id] << " " << vcd_id(id) << " " << leaf;
    if (widths[id] > 1) os << " [" << widths[id] - 1 << ":0]";
    os << " $end\n";
  }
  for (const auto& [child, sub] : s.children) write_scope(os, child, *sub, widths);
  os << "$upscope $end\n";
}

}  // namespace

int TraceSink::add_signal(const std::string& name, int width, uint64_t initial) {
  return add(name, std::clamp(width, 1, 64), initial);
}

int TraceSink::add_real_signal(const std::string& name) { return add(name, kReal, 0); }  // 0.0's bits are 0

int TraceSink::add(const std::string& name, int width, uint64_t initial) {
  names_.push_back(name);
  widths_.push_back(width);
  initial_.push_back(initial);
  last_.push_back(initial);
  return int(names_.size()) - 1;
}

void TraceSink::set(int id, uint64_t value) {
  if (!enabled_) return;
  set_at_ns(id, value, uint64_t(std::llround(to_ns(sc_core::sc_time_stamp() - epoch_))));
}

TraceSink TraceSink::take_run() {
  TraceSink run(enabled_);
  run.names_ = names_;
  run.widths_ = widths_;
  run.initial_ = initial_;
  run.last_ = last_;
  run.changes_ = std::move(changes_);
  changes_.clear();
  last_ = initial_;
  return run;
}

void TraceSink::set_at_ns(int id, uint64_t value, uint64_t t_ns) {
  if (!enabled_ || last_[id] == value) return;
  last_[id] = value;
  changes_.push_back({t_ns, id, value});
}

void TraceSink::set_real_at_ns(int id, double value, uint64_t t_ns) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  set_at_ns(id, bits, t_ns);
}

void TraceSink::append(const TraceSink& other, uint64_t offset_ns) {
  if (!enabled_) return;
  std::map<std::string, int> mine;
  for (size_t i = 0; i < names_.size(); ++i) mine.emplace(names_[i], int(i));
  std::vector<int> id_of(other.names_.size());
  for (size_t i = 0; i < other.names_.size(); ++i) {
    auto it = mine.find(other.names_[i]);
    id_of[i] = it != mine.end() ? it->second : add(other.names_[i], other.widths_[i], other.initial_[i]);
    set_at_ns(id_of[i], other.initial_[i], offset_ns);  // each step starts from its reset state
  }
  for (const Change& c : other.changes_) set_at_ns(id_of[size_t(c.id)], c.value, c.t_ns + offset_ns);
}

void TraceSink::write_vcd(std::ostream& os) const {
  os << "$version ahbm-sim $end\n$timescale 1 ns $end\n";
  Scope root;
  for (size_t i = 0; i < names_.size(); ++i) {
    Scope* s = &root;
    std::string n = names_[i];
    size_t pos;
    while ((pos = n.find('.')) != std::string::npos) {
      auto& child = s->children[n.substr(0, pos)];
      if (!child) child = std::make_unique<Scope>();
      s = child.get();
      n = n.substr(pos + 1);
    }
    s->vars.emplace_back(n, int(i));
  }
  write_scope(os, "ahbm", root, widths_);
  os << "$enddefinitions $end\n#0\n$dumpvars\n";
  for (size_t i = 0; i < names_.size(); ++i) os << vcd_value(initial_[i], widths_[i], vcd_id(int(i))) << "\n";
  os << "$end\n";
  // Changes arrive in time order; several within one ns collapse to the last value.
  std::vector<uint64_t> shown = initial_;
  std::vector<Change> sorted = changes_;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const Change& a, const Change& b) { return a.t_ns < b.t_ns; });
  size_t i = 0;
  while (i < sorted.size()) {
    const uint64_t t = sorted[i].t_ns;
    std::map<int, uint64_t> final_values;
    for (; i < sorted.size() && sorted[i].t_ns == t; ++i) final_values[sorted[i].id] = sorted[i].value;
    bool stamped = false;
    for (const auto& [id, v] : final_values) {
      if (shown[id] == v) continue;
      if (!stamped && t > 0) os << "#" << t << "\n";
      stamped = true;
      os << vcd_value(v, widths_[id], vcd_id(id)) << "\n";
      shown[id] = v;
    }
  }
}

}  // namespace ahbm
