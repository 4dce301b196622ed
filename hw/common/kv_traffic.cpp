#include "hw/common/kv_traffic.h"

#include "hw/common/hw_config.h"

namespace ahbm {

int GroupFabric::cube_of(int pe) const {
  return pe / int(pes.size() / cube_endpoints.size());
}

}  // namespace ahbm
