#pragma once
// A TLM-2.0 base-protocol checker for blocking transport and DMI, as a pass-through module:
// inserted between an initiator and a target socket (TlmLinks below does it at bind time when
// the simulation asks for checks), it forwards every call unchanged and records a violation of
// the base-protocol rules that apply to b_transport and DMI (IEEE 1666-2011, section 14):
//   - the command is READ, WRITE or IGNORE (DMI requests: that and the address only); the data pointer is not null; the data length is > 0;
//     the streaming width is > 0 and at most the data length; a byte-enable pointer comes with a
//     byte-enable length > 0; the response status is INCOMPLETE on entry and the DMI hint false;
//   - the address range [address, address + length) lies in the target's address range;
//   - the target sets a response status (not INCOMPLETE) and leaves command, address, data
//     pointer, data length, byte enables and streaming width as it found them;
//   - a payload is not used for a second transaction while one is in flight;
//   - a DMI grant covers the requested address, lies in the target's range, has a non-null
//     pointer and grants the requested access; data a later READ transports from inside a
//     granted region equals what the DMI pointer shows (a target that changes its contents
//     must invalidate first);
//   - an initiator does not ask again for DMI over an address it holds a valid grant for (grants
//     are cached, as in the Accellera examples; this one is stricter than the standard).
// This replaces the Accellera tlm2 base-protocol checker, which Debian does not ship. Checks
// are for tests: production runs bind initiators to targets directly.
#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

namespace ahbm {

// Violations found by every checker of one simulation, in the order they happened.
struct TlmCheckLog {
  std::vector<std::string> violations;
  uint64_t transactions = 0;  // b_transport calls checked
  uint64_t dmi_grants = 0;
  uint64_t links = 0;         // checkers inserted
};

// [first, last] byte addresses a target decodes; may change between runs (asked per call).
using TlmRange = std::function<std::pair<uint64_t, uint64_t>()>;

class TlmChecker : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<TlmChecker> target;        // bind the initiator here
  tlm_utils::simple_initiator_socket<TlmChecker> initiator;  // bind this to the target

  TlmChecker(sc_core::sc_module_name name, TlmCheckLog& log, TlmRange range);

 private:
  struct Region {
    uint64_t start, end;
    const unsigned char* ptr;
    bool read, write;
  };
  void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  bool get_direct_mem_ptr(tlm::tlm_generic_payload& trans, tlm::tlm_dmi& dmi);
  unsigned int transport_dbg(tlm::tlm_generic_payload& trans);
  void invalidate_direct_mem_ptr(sc_dt::uint64 start, sc_dt::uint64 end);
  // Request-side rules: all of them for a transport, command and address for a DMI request.
  void check_request(const tlm::tlm_generic_payload& trans, const char* call, bool transport);
  void violation(const std::string& what);
  const Region* region_at(uint64_t addr) const;

  TlmCheckLog& log_;
  TlmRange range_;
  std::set<const tlm::tlm_generic_payload*> in_flight_;
  std::vector<Region> regions_;  // valid DMI grants
};

// The TLM links a module binds: direct when `log` is null, else each through a TlmChecker it
// owns (named after the link).
class TlmLinks {
 public:
  template <typename Initiator, typename Target>
  void bind(Initiator& initiator, Target& target, const std::string& name, TlmCheckLog* log, TlmRange range) {
    if (!log) {
      initiator.bind(target);
      return;
    }
    checkers_.push_back(std::make_unique<TlmChecker>(name.c_str(), *log, std::move(range)));
    ++log->links;
    initiator.bind(checkers_.back()->target);
    checkers_.back()->initiator.bind(target);
  }

 private:
  std::vector<std::unique_ptr<TlmChecker>> checkers_;
};

}  // namespace ahbm
