#include "hw/noc/noc.h"

#include <algorithm>

namespace ahbm {

Noc::Noc(sc_core::sc_module_name name, const NocContext& ctx)
    : sc_core::sc_module(name), ctx_(ctx), clients_(ctx.endpoints.size(), nullptr) {}

void Noc::attach(int endpoint, NocClient* client) { clients_.at(size_t(endpoint)) = client; }

void Noc::deliver(int endpoint, const NocPacket& packet) {
  ++deliveries_;
  bytes_delivered_ += packet.bytes;
  NocClient* c = clients_.at(size_t(endpoint));
  if (c) c->noc_receive(endpoint, packet);
}

Json Noc::stats() const {
  return Json{{"packets_sent", packets_sent_},
              {"deliveries", deliveries_},
              {"bytes_delivered", bytes_delivered_}};
}

NocRegistry NocRegistry::with_builtin_models() {
  NocRegistry r;
  register_builtin_noc_models(r);
  return r;
}

void NocRegistry::add(NocModelInfo info) {
  auto it = std::find_if(models_.begin(), models_.end(),
                         [&](const NocModelInfo& m) { return m.name == info.name; });
  if (it != models_.end()) *it = std::move(info);
  else models_.push_back(std::move(info));
}

std::vector<std::string> NocRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& m : models_) out.push_back(m.name);
  return out;
}

const NocModelInfo& NocRegistry::get(const std::string& name, const std::string& file,
                                     const std::string& field) const {
  for (const auto& m : models_)
    if (m.name == name) return m;
  std::string list;
  for (const auto& n : names()) list += (list.empty() ? "" : ", ") + n;
  std::string near = closest_name(name, names());
  throw InputError(file + ": " + field + ": unknown NoC model \"" + name + "\" (allowed: " + list + ")" +
                   (near.empty() ? std::string() : "; did you mean \"" + near + "\"?"));
}

}  // namespace ahbm
