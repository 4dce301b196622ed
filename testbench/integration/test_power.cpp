// Power over time (runtime/report/power.h, docs/energy.md "Power over time") on simulated runs:
// the windows add up to summary.json's energy (total and per class) on fanout_8x20 and on a
// join trace; a coarser window is the sum of the finer ones; the summary's power block, power.csv,
// the VCD's real-valued signals and trace.json's counter tracks carry the same numbers.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "runtime/report/trace_json.h"
#include "test_outputs_common.h"

using namespace ahbm;
using ahbm::test::ScratchDir;
using ahbm::test::read_file;

namespace {

RunOutput run_of(const std::string& trace, double window_ns = 0) {
  RunOptions opt;
  opt.vcd = false;
  opt.values = false;  // energy and timing are the same with values (test_energy.cpp)
  opt.power_window_ns = window_ns;
  return execute(load_scenario(std::string(AHBM_SOURCE_DIR) + "/traces/" + trace), HwConfig{}, opt);
}

void expect_rel(double got, double want, const std::string& what) {
  EXPECT_NEAR(got, want, 1e-9 * std::max(1e-30, std::abs(want))) << what;
}

void expect_conserves(const RunOutput& run) {
  const Json e = report::to_json(run.summary.energy);
  const report::PowerTrace& p = run.power;
  ASSERT_EQ(p.windows.size(), size_t(std::ceil(run.sim.end_ns / p.window_ns)));
  expect_rel(p.total_j(), e["total_j"].get<double>(), "windows vs energy.total_j");
  for (size_t c = 0; c < kEnergyClasses; ++c) {
    double j = 0;
    for (const ClassJoules& w : p.windows) j += w[c];
    expect_rel(j, e["by_class"][energy_class_name(EnergyClass(c))].get<double>(), energy_class_name(EnergyClass(c)));
  }
  // Static power is paid in every window, so no window is below it; the peak is above the mean.
  const double static_w = e["static_power_w"].get<double>();
  for (size_t k = 0; k < p.windows.size(); ++k) EXPECT_GE(p.watts(k), static_w * (1 - 1e-9)) << k;
  const Json pj = report::to_json(run.summary.power);
  expect_rel(pj["mean_w"].get<double>(), e["average_power_w"].get<double>(), "mean_w vs average_power_w");
  EXPECT_GT(pj["peak_w"].get<double>(), pj["mean_w"].get<double>());
  EXPECT_EQ(pj["peak_w"].get<double>(), p.watts(p.peak_window()));
  EXPECT_EQ(pj["windows"].get<size_t>(), p.windows.size());
}

}  // namespace

TEST(Power, WindowsAddUpToTheEnergyOnFanout) {
  const RunOutput run = run_of("fanout_8x20.json");
  EXPECT_EQ(run.power.window_ns, 100.0);  // the default for a ~68 µs run
  expect_conserves(run);
  // The dynamic classes follow the spans: some window has no HBM traffic, another has plenty.
  double lo = INFINITY, hi = 0;
  for (size_t k = 0; k < run.power.windows.size(); ++k) {
    lo = std::min(lo, run.power.watts(k, EnergyClass::hbm));
    hi = std::max(hi, run.power.watts(k, EnergyClass::hbm));
  }
  EXPECT_EQ(lo, 0.0);
  EXPECT_GT(hi, 10.0);
}

TEST(Power, WindowsAddUpToTheEnergyOnAJoinTrace) {
  const RunOutput run = run_of("join_8x1000.json");
  ASSERT_TRUE(run.summary.energy.by_phase.count("join"));
  expect_conserves(run);
}

TEST(Power, ACoarserWindowIsTheSumOfTheFinerOnes) {
  const RunOutput fine = run_of("fanout_8x20.json", 100), coarse = run_of("fanout_8x20.json", 1000);
  ASSERT_EQ(coarse.power.window_ns, 1000.0);
  for (size_t k = 0; k < coarse.power.windows.size(); ++k) {
    double j = 0;
    for (size_t f = 10 * k; f < std::min(10 * k + 10, fine.power.windows.size()); ++f) j += total_of(fine.power.windows[f]);
    EXPECT_NEAR(total_of(coarse.power.windows[k]), j, 1e-9 * j) << k;
  }
}

TEST(Power, CsvVcdAndTraceCountersCarryTheWindows) {
  ScratchDir s("power");
  const RunOutput run = test::default_run(s.path("run"));
  const report::PowerTrace& p = run.power;
  // power.csv: one row per window, the chip's power then each class's.
  std::istringstream csv(read_file(s.path("run/power.csv")));
  std::string line;
  std::getline(csv, line);
  EXPECT_EQ(line.rfind("window_start_ns,window_ns,power_w,hbm_w,", 0), 0u) << line;
  size_t rows = 0;
  while (std::getline(csv, line)) {
    const double w = std::stod(line.substr(line.find(',', line.find(',') + 1) + 1));
    EXPECT_NEAR(w, p.watts(rows), 1e-8 * p.watts(rows)) << rows;
    ++rows;
  }
  EXPECT_EQ(rows, p.windows.size());
  // waves.vcd: chip.power_w is a real variable whose values are the windows' power.
  const std::string vcd = read_file(s.path("run/waves.vcd"));
  const size_t decl = vcd.find(" power_w $end");
  ASSERT_NE(decl, std::string::npos);
  const size_t var = vcd.rfind("$var real 64 ", decl);
  ASSERT_NE(var, std::string::npos);
  const std::string id = vcd.substr(var + 13, decl - var - 13);
  std::vector<double> values;
  std::istringstream vin(vcd.substr(vcd.find("$enddefinitions")));
  while (std::getline(vin, line))
    if (line[0] == 'r' && line.substr(line.find(' ') + 1) == id) values.push_back(std::stod(line.substr(1)));
  ASSERT_GE(values.size(), 3u);
  EXPECT_EQ(values[1], p.watts(0));  // after the $dumpvars 0
  EXPECT_EQ(values.back(), 0.0);     // after the end of the run
  EXPECT_EQ(*std::max_element(values.begin(), values.end()), p.watts(p.peak_window()));
  // waves.gtkw draws it as an analog step trace (real | analog step flags).
  const std::string gtkw = read_file(s.path("run/waves.gtkw"));
  EXPECT_NE(gtkw.find("@48020\n+{power_w} ahbm.chip.power_w\n"), std::string::npos);
  // trace.json: counter events, one "power_w" per window and one at the end, in a process of their own.
  const Json events = Json::parse(read_file(s.path("run/trace.json")))["traceEvents"];
  std::vector<const Json*> chip;
  for (const Json& e : events)
    if (e["ph"] == "C" && e["name"] == "power_w") chip.push_back(&e);
  ASSERT_EQ(chip.size(), p.windows.size() + 1);
  for (size_t k = 0; k < p.windows.size(); ++k) {
    EXPECT_EQ((*chip[k])["args"]["chip"].get<double>(), p.watts(k));
    EXPECT_EQ(std::llround((*chip[k])["ts"].get<double>() * 1000), std::llround(p.start_ns(k)));
  }
  // The file stays what nlohmann::json prints for the same events.
  EXPECT_EQ(Json::parse(read_file(s.path("run/trace.json"))).dump() + "\n", read_file(s.path("run/trace.json")));
}

namespace {

RunOutput fanout_with_values(const HwConfig& hw) {
  RunOptions opt;
  opt.vcd = false;
  return execute(load_scenario(std::string(AHBM_SOURCE_DIR) + "/traces/fanout_8x20.json"), hw, opt);
}

}  // namespace

TEST(PowerCap, BelowThePeakSlowsTheRunAndNoWindowExceedsIt) {
  const RunOutput free = fanout_with_values(HwConfig{});
  HwConfig hw;
  hw.power_cap_w = 0.7 * free.summary.power.peak_w;
  const RunOutput capped = fanout_with_values(hw);
  EXPECT_GT(capped.sim.end_ns, free.sim.end_ns);
  ASSERT_EQ(capped.power.window_ns, 100.0);  // the uncapped run's default window, not the longer run's
  for (size_t k = 0; k < capped.power.windows.size(); ++k) EXPECT_LE(capped.power.watts(k), hw.power_cap_w) << k;
  const Json p = report::to_json(capped.summary.power);
  EXPECT_LE(p["peak_w"].get<double>(), hw.power_cap_w);
  EXPECT_EQ(p["throttled_ns"].get<double>(), capped.sim.end_ns - free.sim.end_ns);
  EXPECT_GT(p["throttled_ns"].get<double>(), 0.0);
  EXPECT_EQ(p["cap"]["uncapped_ns"].get<double>(), free.sim.end_ns);
  const double f = p["cap"]["clock_scale"].get<double>();
  EXPECT_GT(f, 0.0);
  EXPECT_LT(f, 1.0);
  // O still matches the float64 reference.
  EXPECT_TRUE(capped.summary.numerics.pass);
  EXPECT_LE(capped.summary.numerics.max_abs_err, capped.summary.numerics.tolerance_abs);
  // The same activity at a lower rate: the same dynamic energy, more static energy.
  expect_rel(capped.summary.energy.run.dynamic_j(), free.summary.energy.run.dynamic_j(),
             "dynamic energy");
  EXPECT_GT(capped.summary.energy.run.static_j(), free.summary.energy.run.static_j());
  // The config is echoed as given.
  EXPECT_EQ(capped.summary.config.hw["clock_ghz"].get<double>(), 1.0);
  EXPECT_EQ(capped.summary.config.hw["power_cap_w"].get<double>(), hw.power_cap_w);
}

TEST(PowerCap, AtOrAboveThePeakIsTheUncappedRun) {
  const RunOutput free = fanout_with_values(HwConfig{});
  HwConfig hw;
  hw.power_cap_w = free.summary.power.peak_w;
  const RunOutput capped = fanout_with_values(hw);
  Json a = to_json(free.summary), b = to_json(capped.summary);
  EXPECT_EQ(b["power"]["throttled_ns"].get<double>(), 0.0);
  EXPECT_EQ(b["power"]["cap"]["clock_scale"].get<double>(), 1.0);
  EXPECT_EQ(b["power"]["cap"]["runs"].get<int>(), 1);
  // Apart from the cap's own fields, the echoed cap and the config's hash, the same summary.
  b["power"].erase("throttled_ns");
  b["power"].erase("cap");
  for (Json* j : {&a, &b}) {
    (*j)["config"]["hw"].erase("power_cap_w");
    (*j)["simulator"].erase("config_sha256");
  }
  for (const auto& [key, value] : a.items()) EXPECT_EQ(value.dump(), b[key].dump()) << key;
  EXPECT_EQ(a.size(), b.size());
}

TEST(PowerCap, BelowTheStaticPowerIsBadInput) {
  // The default chip leaks 4 CUBEs × (1 W + 8 PEs × 0.1 W) = 7.2 W.
  Json j = {{"power_cap_w", 5.0}};
  try {
    parse_hw_config(j, "hw.json");
    FAIL() << "a cap below the static power was accepted";
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("hw.json: power_cap_w"), std::string::npos) << m;
    EXPECT_NE(m.find("= 5 W"), std::string::npos) << m;
    EXPECT_NE(m.find("static power 7.2 W"), std::string::npos) << m;
    EXPECT_NE(m.find("allowed: 0 = off, or [7.2, 1e+06] W"), std::string::npos) << m;
  }
  EXPECT_NO_THROW(parse_hw_config(Json{{"power_cap_w", 7.2}}, "hw.json"));
  EXPECT_NO_THROW(parse_hw_config(Json{{"power_cap_w", 0.0}}, "hw.json"));
}
