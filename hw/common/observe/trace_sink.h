#pragma once
// Collects value changes of the model's observable state (PE activity, Q-buffer occupancy,
// link busy, rows merged) and writes them as VCD with time unit 1 ns. Modules call set() only
// when their state changes; unchanged values are dropped here too, so the VCD holds state
// changes only. A disabled sink records nothing (zero cost beyond a branch).
// Our own writer (rather than sc_trace) keeps the VCD byte-identical across runs (no date
// stamp) and lets signals live outside sc_signal, which costs a delta cycle per write.
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <systemc>

namespace ahbm {

class TraceSink {
 public:
  explicit TraceSink(bool enabled) : enabled_(enabled) {}
  bool enabled() const { return enabled_; }

  // `name` is dotted: "group0.cube1.pe3.activity" becomes scopes group0/cube1/pe3.
  int add_signal(const std::string& name, int width, uint64_t initial = 0);
  // A real-valued signal (VCD `$var real`, drawn as an analog waveform), initially 0.
  int add_real_signal(const std::string& name);
  // Records a change at the current simulated time (sc_time_stamp), counted from the epoch.
  void set(int id, uint64_t value);
  void set_at_ns(int id, uint64_t value, uint64_t t_ns);
  void set_real_at_ns(int id, double value, uint64_t t_ns);

  // Appends another sink's changes shifted by `offset_ns` (signals matched by name, added when
  // new): the runtime strings several simulated steps into one waveform.
  void append(const TraceSink& other, uint64_t offset_ns);

  // A chip reused for several runs (hw/chip/simulate.h) starts each run at a later simulated
  // time, its epoch: changes are recorded relative to it.
  void set_epoch(const sc_core::sc_time& t) { epoch_ = t; }
  // Hands over this run's signals and changes, and goes back to the signals' initial values
  // with no changes (the modules keep their signal ids).
  TraceSink take_run();

  void write_vcd(std::ostream& os) const;
  const std::vector<std::string>& names() const { return names_; }

 private:
  struct Change {
    uint64_t t_ns;
    int id;
    uint64_t value;
  };
  static constexpr int kReal = 0;  // the width of a real signal; its values are the doubles' bits
  int add(const std::string& name, int width, uint64_t initial);
  bool enabled_;
  sc_core::sc_time epoch_ = sc_core::SC_ZERO_TIME;
  std::vector<std::string> names_;
  std::vector<int> widths_;
  std::vector<uint64_t> initial_;
  std::vector<uint64_t> last_;
  std::vector<Change> changes_;
};

}  // namespace ahbm
