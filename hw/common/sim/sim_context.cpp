#include "hw/common/sim/sim_context.h"

#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#include <pthread.h>
#include <sanitizer/common_interface_defs.h>
#endif

namespace ahbm {

namespace {

// Error and fatal reports throw (no display: whoever catches prints the message once).
void throw_error_reports() {
  sc_core::sc_report_handler::set_actions(sc_core::SC_ERROR, sc_core::SC_THROW);
  sc_core::sc_report_handler::set_actions(sc_core::SC_FATAL, sc_core::SC_THROW);
}

}  // namespace

SimContext::SimContext() : mine_(new sc_core::sc_simcontext) { throw_error_reports(); }

InternalError internal_error(const sc_core::sc_report& r) {
  std::string msg = std::string("SystemC ") + (r.get_severity() == sc_core::SC_FATAL ? "fatal" : "error") + " " +
                    r.get_msg_type() + ": " + r.get_msg();
  const char* where = r.get_process_name();
  if (where && *where) msg += " (in " + std::string(where) + " at " + r.get_time().to_string() + ")";
  return InternalError(msg);
}

SimContext::~SimContext() {
  Scope current(*this);
  delete mine_;
}

SimContext::Scope::Scope(SimContext& c)
    : previous_(sc_core::sc_curr_simcontext), previous_default_(sc_core::sc_default_global_context) {
  sc_core::sc_curr_simcontext = c.mine_;
  sc_core::sc_default_global_context = c.mine_;
}

SimContext::Scope::~Scope() {
  sc_core::sc_curr_simcontext = previous_;
  sc_core::sc_default_global_context = previous_default_;
}

void resync_sanitizer_stack() {
#if defined(__SANITIZE_ADDRESS__)
  pthread_attr_t attr;
  void* bottom = nullptr;
  size_t size = 0;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return;
  pthread_attr_getstack(&attr, &bottom, &size);
  pthread_attr_destroy(&attr);
  void* fake_stack = nullptr;
  __sanitizer_start_switch_fiber(&fake_stack, bottom, size);
  __sanitizer_finish_switch_fiber(fake_stack, nullptr, nullptr);
#endif
}

void unwind_threads() {
  // Only a simulation that has started has threads with frames; kill() needs a paused kernel.
  if (sc_core::sc_get_status() != sc_core::SC_PAUSED) return;
  std::vector<sc_core::sc_object*> todo = sc_core::sc_get_top_level_objects();
  std::vector<sc_core::sc_process_handle> threads;
  while (!todo.empty()) {
    sc_core::sc_object* o = todo.back();
    todo.pop_back();
    for (sc_core::sc_object* c : o->get_child_objects()) todo.push_back(c);
    sc_core::sc_process_handle h(o);
    if (h.valid() && h.proc_kind() != sc_core::SC_METHOD_PROC_ && !h.terminated()) threads.push_back(h);
  }
  if (threads.empty()) return;
  // kill() must come from inside the simulation (SystemC 2.3.4 crashes when sc_main calls it):
  // a thread spawned for the purpose kills the others and ends (so it is freed too); one delta
  // cycle runs it.
  sc_core::sc_spawn(
      [threads]() mutable {
        for (auto& h : threads)
          if (!h.terminated()) h.kill();
        threads.clear();
      },
      sc_core::sc_gen_unique_name("unwind_threads"));
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  resync_sanitizer_stack();
}

}  // namespace ahbm
