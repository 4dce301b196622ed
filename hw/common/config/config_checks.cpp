// Cross-field consistency of a hardware config (docs/reliability.md, "Inconsistent
// configurations"). Single-field ranges are checked while parsing (hw_config.cpp); these rules
// relate fields to each other and hold for every scenario.
#include <algorithm>
#include <sstream>
#include <utility>

#include "hw/common/config/hw_config.h"

namespace ahbm {

namespace {

std::string kv(const std::string& field, int64_t value) { return field + " = " + std::to_string(value); }

}  // namespace

void check_hw_config(const HwConfig& c, const std::string& file) {
  auto fail = [&](const std::string& what) { throw InputError(file + ": " + what); };
  const auto& g = c.pe.gemm;
  const int kv_tile = c.pe.dma.kv_tile_tokens;
  // "Divides the engine": a DMA tile of KV tokens is whole GEMM tiles in both GEMMs. In
  // S = Q K^T the KV tokens are the output columns (tile_n); in O += P V they are the reduction
  // depth (tile_k). Otherwise every KV tile, not just a shard's last one, pads the engine.
  if (kv_tile % g.tile_n != 0)
    fail(kv("pe.dma.kv_tile_tokens", kv_tile) + " is not a multiple of " + kv("pe.gemm.tile_n", g.tile_n) +
         " (allowed: multiples of tile_n and tile_k; KV tokens are the N side of S = Q K^T)");
  if (kv_tile % g.tile_k != 0)
    fail(kv("pe.dma.kv_tile_tokens", kv_tile) + " is not a multiple of " + kv("pe.gemm.tile_k", g.tile_k) +
         " (allowed: multiples of tile_n and tile_k; KV tokens are the K side of O += P V)");
  const HbmSliceConfig& h = c.pe.hbm;
  if (h.banked() && h.capacity_bytes > uint64_t(h.pseudo_channels) * kHbm3PseudoChannelBytes)
    fail("pe.hbm.capacity_bytes = " + std::to_string(h.capacity_bytes) + " exceeds " + kv("pe.hbm.pseudo_channels", h.pseudo_channels) +
         " x 512 MiB of the banked model (allowed: capacity_bytes <= " +
         std::to_string(uint64_t(h.pseudo_channels) * kHbm3PseudoChannelBytes) + ", or more pseudo-channels)");
  const int64_t needed = int64_t(c.groups) * c.group.cubes;
  if (c.chip_cubes > 0 && c.group.cubes > c.chip_cubes)
    fail(kv("group.cubes", c.group.cubes) + " CUBEs per KV head exceed " + kv("chip_cubes", c.chip_cubes) +
         " (allowed: group.cubes <= chip_cubes)");
  if (c.chip_cubes > 0 && needed > c.chip_cubes)
    fail(kv("groups", c.groups) + " x " + kv("group.cubes", c.group.cubes) + " = " + std::to_string(needed) +
         " CUBEs exceed " + kv("chip_cubes", c.chip_cubes) + " (allowed: groups <= " +
         std::to_string(c.chip_cubes / c.group.cubes) + ")");
  // A cap below the static power cannot be met at any clock (the NoC's routers add theirs
  // when the model is built: runtime/run/power_cap.cpp checks again with them).
  const double static_w = static_power_w(c, 0);
  if (c.power_cap_w > 0 && c.power_cap_w < static_w)
    fail(power_cap_below_static(c.power_cap_w, static_w));
  const FaultConfig& f = c.fault;
  if (f.leak_q_credit_cube >= c.group.cubes)
    fail(kv("fault_injection.leak_q_credit_cube", f.leak_q_credit_cube) + " names no CUBE (allowed: -1 = off, 0 to " +
         std::to_string(c.group.cubes - 1) + ")");
  if (f.drop_state_cube >= c.group.cubes)
    fail(kv("fault_injection.drop_state_cube", f.drop_state_cube) + " names no CUBE (allowed: -1 = off, 0 to " +
         std::to_string(c.group.cubes - 1) + ")");
  if (f.nan_state_pe >= c.pes_per_group())
    fail(kv("fault_injection.nan_state_pe", f.nan_state_pe) + " names no PE (allowed: -1 = off, 0 to " +
         std::to_string(c.pes_per_group() - 1) + ")");
}

}  // namespace ahbm

namespace ahbm {

std::string power_cap_below_static(double cap_w, double static_w) {
  std::ostringstream s;
  s << "power_cap_w (the chip's power cap) = " << cap_w << " W is below the chip's static power " << static_w
    << " W, which no clock scale lowers (allowed: 0 = off, or " << range_text(static_w, 1e6) << " W)";
  return s.str();
}

double static_power_w(const HwConfig& c, int routers) {
  const double cubes = double(c.groups) * c.group.cubes;
  return cubes * (c.energy.cube_static_w + c.cube.pes * c.energy.pe_static_w) + routers * c.energy.router_static_w;
}

std::string slow_parameters(const HwConfig& c) {
  // The timing parameters are those the table gives a direction (hw_config_param.h, SlowerWhen).
  const Json j = to_json(c);
  std::string out;
  for (const HwParam& p : hw_params()) {
    if (p.allowed.slower == SlowerWhen::none) continue;
    std::string pointer = "/" + p.path;
    std::replace(pointer.begin(), pointer.end(), '.', '/');
    const Json& v = j.at(Json::json_pointer(pointer));
    const double value = v.get<double>(), def = p.default_value.get<double>();
    if (p.allowed.slower == SlowerWhen::larger ? value > def : value < def) out += (out.empty() ? "" : ", ") + p.path + " = " + v.dump() + " (default " + p.default_value.dump() + ")";
  }
  return out.empty() ? "no timing parameter is slower than its default (the scenario is too large for this hardware)"
                     : "timing parameters slower than their defaults: " + out;
}

}  // namespace ahbm
