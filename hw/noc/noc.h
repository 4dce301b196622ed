#pragma once
// The network that carries Q tiles from the Q source to the CUBEs (multicast) and results back
// to the host. One abstract interface; concrete models live one per source file in this folder
// and are listed once in builtin_models.cpp. A user model is a subclass plus one
// NocRegistry::add() call (see docs/noc.md).
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <systemc>

#include "hw/common/json_reader.h"
#include "hw/common/timing.h"

namespace ahbm {

class TraceSink;
class SpanRecorder;

struct NocPacket {
  uint64_t id = 0;
  int src = 0;            // endpoint index
  std::vector<int> dsts;  // endpoint indices; more than one = multicast
  uint64_t bytes = 0;     // payload size; models split it into flits as they see fit
  std::shared_ptr<const void> payload;  // carried, never inspected, by the network
  int tag = 0;                          // meaning belongs to the sender (e.g. global tile index)
  sc_core::sc_time created;
};

// Whoever sits at an endpoint. Called from the network's process; must not wait.
class NocClient {
 public:
  virtual ~NocClient() = default;
  virtual void noc_receive(int endpoint, const NocPacket& packet) = 0;
};

// What a model is given when it is built.
struct NocContext {
  Json params;                          // the model's own parameters (hw config noc.params)
  std::string params_field = "noc.params";
  std::string config_file = "hw config";
  std::vector<std::string> endpoints;   // endpoint names: "host", "qsrc", "g0.cube0", ...
  Clock clock{1.0};
  TraceSink* trace = nullptr;
  SpanRecorder* spans = nullptr;
};

class Noc : public sc_core::sc_module {
 public:
  Noc(sc_core::sc_module_name name, const NocContext& ctx);
  void attach(int endpoint, NocClient* client);
  int endpoint_count() const { return int(ctx_.endpoints.size()); }
  const std::string& endpoint_name(int e) const { return ctx_.endpoints.at(size_t(e)); }

  // Accepts a packet at the current time. Non-blocking: the model queues it at the source.
  virtual void send(NocPacket packet) = 0;
  // Model statistics for summary.json; the base adds packets, deliveries and bytes.
  virtual Json stats() const;

 protected:
  // Hands a packet to the client at `endpoint` and counts the delivery.
  void deliver(int endpoint, const NocPacket& packet);
  const NocContext& context() const { return ctx_; }
  uint64_t packets_sent_ = 0;

 private:
  NocContext ctx_;
  std::vector<NocClient*> clients_;
  uint64_t deliveries_ = 0;
  uint64_t bytes_delivered_ = 0;
};

struct NocModelInfo {
  std::string name;
  std::string description;  // one line, shown by `ahbm-sim nocs`
  std::function<std::unique_ptr<Noc>(sc_core::sc_module_name, const NocContext&)> make;
};

// Models by name. An object, not a global: a program builds one (usually with_builtin_models())
// and may add its own models before handing it to the simulation.
class NocRegistry {
 public:
  static NocRegistry with_builtin_models();
  void add(NocModelInfo info);  // replaces a model of the same name
  // Throws InputError naming `field` in `file` and the valid names when `name` is unknown.
  const NocModelInfo& get(const std::string& name, const std::string& file = "hw config",
                          const std::string& field = "noc.model") const;
  std::vector<std::string> names() const;
  const std::vector<NocModelInfo>& models() const { return models_; }

 private:
  std::vector<NocModelInfo> models_;
};

// The one list of models shipped with ahbm-sim (builtin_models.cpp).
void register_builtin_noc_models(NocRegistry& registry);

}  // namespace ahbm
