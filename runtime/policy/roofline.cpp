#include "runtime/policy/roofline.h"

#include <algorithm>
#include <map>

#include "hw/chip/chip_stats.h"

namespace ahbm {

double gemm_intensity(double m, double k, double n, double elem_bytes) {
  return m * k * n / (elem_bytes * (m * k + k * n + m * n));
}

Roofline pe_roofline(const HwConfig& hw) {
  const auto& g = hw.pe.gemm;
  Roofline r;
  r.peak_macs_per_s = double(g.tile_m) * g.tile_n * g.tile_k / g.issue_interval * hw.clock_ghz * 1e9;
  r.bandwidth_bytes_per_s = hw.pe.hbm.bandwidth_gbps * 1e9;
  return r;
}

Roofline group_roofline(const HwConfig& hw) {
  Roofline r = pe_roofline(hw);
  r.peak_macs_per_s *= hw.pes_per_group();
  r.bandwidth_bytes_per_s *= hw.pes_per_group();
  return r;
}

Json roofline_point(const Roofline& r, double macs, double bytes, double seconds) {
  const double intensity = bytes > 0 ? macs / bytes : 0.0;
  const double achieved = seconds > 0 ? macs / seconds : 0.0;
  return Json{{"macs", macs},
              {"hbm_bytes", bytes},
              {"intensity_mac_per_byte", intensity},
              {"ridge_mac_per_byte", r.ridge()},
              {"peak_macs_per_s", r.peak_macs_per_s},
              {"bandwidth_bytes_per_s", r.bandwidth_bytes_per_s},
              {"attainable_macs_per_s", r.attainable(intensity)},
              {"achieved_macs_per_s", achieved},
              {"bound", r.bandwidth_bound(intensity) ? "bandwidth" : "compute"}};
}

Json roofline_by_step_kind(const HwConfig& hw, int groups, const std::map<std::string, StepKindWork>& kinds,
                           bool whole_model) {
  Roofline r = group_roofline(hw);
  r.peak_macs_per_s *= groups;
  r.bandwidth_bytes_per_s *= groups;
  Json by_kind = Json::object();
  for (const auto& [kind, w] : kinds) {
    Json p = roofline_point(r, w.macs, w.hbm_bytes, w.ns * 1e-9);
    p["steps"] = w.steps;
    p["ns"] = w.ns;
    // How close the steps came to their bound (attained / attainable).
    const double attainable = p["attainable_macs_per_s"].get<double>();
    p["share_of_attainable"] = attainable > 0 ? p["achieved_macs_per_s"].get<double>() / attainable : 0.0;
    by_kind[kind] = p;
  }
  return Json{{"unit", "MAC per byte; MAC/s"},
              {"groups", groups},
              {"ridge_mac_per_byte", r.ridge()},
              {"what", std::string("per kind of step (prefill: a prefill phase or a join's prompt prefill; fanout; decode; "
                                   "join: the rest of a join), its MACs and HBM bytes over its simulated time, on the "
                                   "roofline of the groups used") +
                           (whole_model ? "; a whole model's steps: every layer's attention and operators and the LM "
                                          "head, on every group"
                                        : "")},
              {"by_step_kind", by_kind}};
}

Json roofline_summary(const HwConfig& hw, const std::vector<AttentionJob>& jobs, const StatsNode& stats, double total_ns) {
  // Per phase: the MACs and HBM bytes of the groups that ran jobs of that phase.
  std::map<std::string, std::vector<int>> groups_of_phase;
  for (const auto& j : jobs) groups_of_phase[j.phase].push_back(j.group);
  const Roofline pe = pe_roofline(hw), grp = group_roofline(hw);
  Json phases = Json::object();
  const double seconds = total_ns * 1e-9;
  for (auto& [phase, groups] : groups_of_phase) {
    std::sort(groups.begin(), groups.end());
    groups.erase(std::unique(groups.begin(), groups.end()), groups.end());
    Json per_group = Json::array();
    double worst_pe_macs = 0, worst_pe_bytes = 0;
    for (const int g : groups) {
      double macs = 0, bytes = 0;
      bool ran = false;
      for_each_pe(stats, [&](int group, const StatsNode& pe) {
        if (group != g) return;
        ran = true;
        const double m = double(pe.get(PeStats::macs)), b = double(pe.get(HbmSliceStats::bytes_read));
        macs += m;
        bytes += b;
        if (m > worst_pe_macs) worst_pe_macs = m, worst_pe_bytes = b;
      });
      if (!ran) continue;  // a group without a node in the tree (not simulated)
      Json gj = roofline_point(grp, macs, bytes, seconds);
      gj["group"] = g;
      per_group.push_back(gj);
    }
    phases[phase] = {{"per_pe_busiest", roofline_point(pe, worst_pe_macs, worst_pe_bytes, seconds)}, {"per_group", per_group}};
  }
  return Json{{"unit", "MAC per byte; MAC/s"}, {"pe", {{"ridge_mac_per_byte", pe.ridge()}}},
              {"group", {{"ridge_mac_per_byte", grp.ridge()}}}, {"phases", phases}};
}

}  // namespace ahbm
