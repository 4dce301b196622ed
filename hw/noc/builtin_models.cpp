// The one list of NoC models built into ahbm-sim. Adding a model: its own source file in this
// folder plus one line here.
#include "hw/noc/ideal_noc.h"

namespace ahbm {

namespace {
template <class Model>
NocModelInfo model(const char* name, const char* description) {
  return {name, description, [](sc_core::sc_module_name n, const NocContext& c) -> std::unique_ptr<Noc> {
            return std::make_unique<Model>(n, c);
          }};
}
}  // namespace

void register_builtin_noc_models(NocRegistry& r) {
  r.add(model<IdealNoc>("ideal", "fixed latency (params.latency_ns, default 10), unlimited bandwidth"));
}

}  // namespace ahbm
