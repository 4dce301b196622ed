#include "hw/chip/energy.h"

#include <stdexcept>

#include "hw/chip/chip_stats.h"

namespace ahbm {

namespace {

constexpr double kPj = 1e-12;  // J per pJ

double mac_pj(const EnergyConfig& e, DType t) {
  switch (t) {
    case DType::fp32: return e.mac_fp32_pj;
    case DType::fp16: return e.mac_fp16_pj;
    case DType::bf16: return e.mac_bf16_pj;
  }
  throw std::logic_error("energy: unknown storage type");
}

double& at(ClassJoules& j, EnergyClass c) { return j[size_t(c)]; }

}  // namespace

const char* energy_class_name(EnergyClass c) {
  switch (c) {
    case EnergyClass::hbm: return "hbm";
    case EnergyClass::gemm: return "gemm";
    case EnergyClass::vector: return "vector";
    case EnergyClass::pe_sram: return "pe_sram";
    case EnergyClass::q_buffer: return "q_buffer";
    case EnergyClass::reducer: return "reducer";
    case EnergyClass::noc: return "noc";
    case EnergyClass::link: return "link";
    case EnergyClass::host_link: return "host_link";
    case EnergyClass::pe_static: return "pe_static";
    case EnergyClass::cube_static: return "cube_static";
    case EnergyClass::router_static: return "router_static";
    case EnergyClass::count: break;
  }
  throw std::logic_error("energy: unknown class");
}

ClassJoules dynamic_energy(const Activity& a, const EnergyConfig& e, DType t) {
  ClassJoules j{};
  const double hbm_pj_per_bit = e.hbm_activate_pj_per_bit + e.hbm_access_pj_per_bit + e.hbm_bank_group_pj_per_bit;
  at(j, EnergyClass::hbm) = double(a.hbm_bytes) * 8 * hbm_pj_per_bit * kPj;
  at(j, EnergyClass::gemm) = double(a.macs) * mac_pj(e, t) * kPj;
  at(j, EnergyClass::vector) = double(a.vector_ops) * e.vector_op_pj * kPj;
  at(j, EnergyClass::pe_sram) = double(a.sram_bytes) * 2 * e.sram_pj_per_byte * kPj;
  at(j, EnergyClass::q_buffer) = double(a.q_buffer_bytes) * e.sram_pj_per_byte * kPj;
  at(j, EnergyClass::reducer) =
      (double(a.merge_ops) * e.vector_op_pj + double(a.state_bytes) * 2 * e.sram_pj_per_byte) * kPj;
  at(j, EnergyClass::noc) =
      (double(a.flit_hops) * e.noc_flit_hop_pj + double(a.noc_bytes) * 8 * e.stack_io_pj_per_bit) * kPj;
  at(j, EnergyClass::link) = double(a.link_bytes) * 8 * e.link_pj_per_bit * kPj;
  at(j, EnergyClass::host_link) = double(a.host_bytes) * 8 * e.host_link_pj_per_bit * kPj;
  return j;
}

Activity gemm_activity(const GemmOpStats& s) {
  Activity a;
  // x_stationary: X rows from the PE's slice, W tiles over the NoC (w_stationary: both 0).
  // An unfused vector kernel (vector_kernel.h): its rows in (kernel_bytes_read) and out.
  a.hbm_bytes = s.w_bytes_read + s.y_bytes_written + s.residual_bytes_read + s.x_hbm_bytes_read + s.kernel_bytes_read;
  a.macs = s.macs;
  a.vector_ops = s.vector_ops;
  a.sram_bytes = s.w_bytes_read + s.y_bytes_written + s.residual_bytes_read + s.x_bytes_read + s.x_hbm_bytes_read +
                 s.kernel_bytes_read;
  // w_stationary's X path (host link, multicast, Q-buffer writes) and K-split partials are in the
  // chip's counters of the run (read_energy), not here: the summary's per-operator counters,
  // which docs/energy.md's operator formula reads, do not show them (x_noc_delivered_bytes,
  // k_reduce_bytes).
  a.noc_bytes = s.w_noc_delivered_bytes;
  a.q_buffer_bytes = s.x_bytes_read;
  return a;
}

std::vector<SpanEnergyShare> span_energy_shares(const std::string& activity) {
  using C = EnergyClass;
  // Activity names as the modules record them (hw/pe, hw/cube, hw/link, hw/noc, hw/chip).
  static const std::map<std::string, std::vector<SpanEnergyShare>> table = {
      {"dma_kv", {{C::hbm, true}, {C::pe_sram, true}}},      // KV burst from the PE's slice, staged
      {"remote_kv", {{C::hbm, true}, {C::pe_sram, true}}},   // KV read at the owner's slice, staged here
      {"w_in", {{C::hbm, true}, {C::pe_sram, true}}},        // weight tile
      {"y_out", {{C::hbm, true}, {C::pe_sram, true}}},       // Y block written back
      {"residual_in", {{C::hbm, true}, {C::pe_sram, true}}},
      {"kernel_in", {{C::hbm, true}, {C::pe_sram, true}}},   // an unfused vector kernel's rows in
      {"kernel_out", {{C::hbm, true}, {C::pe_sram, true}}},  // and out
      {"scores_out", {{C::hbm, true}, {C::pe_sram, true}}},  // unfused attention: S to HBM
      {"scores_in", {{C::hbm, true}, {C::pe_sram, true}}},   // and back
      {"q_read", {{C::q_buffer, true}, {C::pe_sram, true}}},  // Q tile out of the Q buffer into the PE
      {"x_in", {{C::q_buffer, true}, {C::pe_sram, true}}},
      {"q_write", {{C::q_buffer, true}}},
      {"gemm_qk", {{C::gemm, false}}},
      {"gemm_pv", {{C::gemm, false}}},
      {"softmax", {{C::vector, false}}},
      {"send_state", {{C::reducer, true}}},
      {"merge", {{C::reducer, false}}},
      {"xcube_merge", {{C::reducer, false}}},
      {"normalise", {{C::reducer, false}}},
      {"link_xfer", {{C::link, true}}},
      {"noc_deliver", {{C::noc, true}}},
      {"q_load", {{C::host_link, true}}},
      {"o_return", {{C::host_link, true}}},
  };
  auto it = table.find(activity);
  return it == table.end() ? std::vector<SpanEnergyShare>{} : it->second;
}

double EnergyReading::dynamic_j() const {
  double s = 0;
  for (size_t c = 0; c < kEnergyClasses; ++c)
    if (!is_static(EnergyClass(c))) s += by_class[c];
  return s;
}

double EnergyReading::static_j() const {
  double s = 0;
  for (size_t c = 0; c < kEnergyClasses; ++c)
    if (is_static(EnergyClass(c))) s += by_class[c];
  return s;
}

EnergyReading& EnergyReading::operator+=(const EnergyReading& o) {
  for (size_t c = 0; c < kEnergyClasses; ++c) by_class[c] += o.by_class[c];
  for (const auto& [name, j] : o.by_component) by_component[name] += j;
  elapsed_ns += o.elapsed_ns;
  return *this;
}

EnergyReading& EnergyReading::operator*=(double k) {
  for (double& j : by_class) j *= k;
  for (auto& [name, j] : by_component) j *= k;
  elapsed_ns *= k;
  return *this;
}

void EnergyReading::add(const std::string& component, const ClassJoules& j) {
  for (size_t c = 0; c < kEnergyClasses; ++c) by_class[c] += j[c];
  by_component[component] += total_of(j);
}

EnergyReading read_energy(const StatsNode& chip, const HwConfig& hw, DType t, double elapsed_ns, double repeats) {
  const EnergyConfig& e = hw.energy;
  const double s = elapsed_ns * 1e-9;
  EnergyReading r;
  r.elapsed_ns = elapsed_ns;
  auto dynamic = [&](const std::string& component, const Activity& a) {
    ClassJoules j = dynamic_energy(a, e, t);
    for (double& x : j) x *= repeats;
    r.add(component, j);
  };
  auto leak = [&](const std::string& component, EnergyClass c, double watts) {
    ClassJoules j{};
    at(j, c) = watts * s;
    r.add(component, j);
  };
  int groups_seen = 0;
  if (const StatsNode* groups = chip.find(ChipStats::groups))
    for (const StatsNode& g : groups->children()) {
      ++groups_seen;
      const std::string gname = g.name();
      for (const StatsNode& c : g.at(ChipStats::cubes).children()) {
        const std::string cname = gname + "." + c.name();
        Activity cube;
        const StatsNode& qb = c.at(CubeStats::q_buffer);
        cube.q_buffer_bytes = qb.get(QBufferStats::bytes_written) + qb.get(QBufferStats::bytes_read);
        const StatsNode& red = c.at(CubeStats::reducer);
        cube.merge_ops = red.get(CubeReducerStats::vector_ops);
        cube.state_bytes = red.get(CubeReducerStats::state_bytes);
        for (const StatsNode& pe : c.at(CubeStats::pes).children()) {
          Activity a;
          a.hbm_bytes = pe.get(HbmSliceStats::bytes_read) + pe.get(HbmSliceStats::bytes_written);
          a.macs = pe.get(PeStats::macs);
          a.vector_ops = pe.get(PeStats::vector_ops);
          a.sram_bytes = pe.get(PeStats::sram_bytes);
          cube.q_buffer_bytes += pe.get(PeStats::x_bytes_read);  // X blocks out of the CUBE's Q buffer
          const std::string pname = cname + "." + pe.name();
          dynamic(pname, a);
          leak(pname, EnergyClass::pe_static, e.pe_static_w);
        }
        dynamic(cname, cube);
        leak(cname, EnergyClass::cube_static, e.cube_static_w);
      }
      Activity xcube;
      xcube.merge_ops = g.get(LinkStats::vector_ops);
      dynamic(gname, xcube);
      if (const StatsNode* links = g.find(LinkStats::list))
        for (const StatsNode& l : links->children()) {
          Activity a;
          a.link_bytes = l.get(LinkStats::bytes);
          dynamic(gname + "." + l.name(), a);
        }
    }
  // Groups the chip has but the run left idle (fewer KV heads than groups) still leak.
  const int idle = hw.groups - groups_seen;
  if (idle > 0) {
    leak("idle_groups", EnergyClass::pe_static, double(idle) * hw.group.cubes * hw.cube.pes * e.pe_static_w);
    leak("idle_groups", EnergyClass::cube_static, double(idle) * hw.group.cubes * e.cube_static_w);
  }
  if (const StatsNode* noc = chip.find(ChipStats::noc)) {
    Activity a;
    a.flit_hops = noc->get(NocStats::flit_hops);
    a.noc_bytes = noc->get(NocStats::bytes_delivered);
    dynamic(ChipStats::noc, a);
    leak(ChipStats::noc, EnergyClass::router_static, double(noc->get(NocStats::routers)) * e.router_static_w);
  }
  if (const StatsNode* host = chip.find(ChipStats::host)) {
    Activity a;
    a.host_bytes = host->get(HostStats::q_bytes) + host->get(HostStats::o_bytes);
    dynamic(ChipStats::host, a);
  }
  return r;
}

}  // namespace ahbm
