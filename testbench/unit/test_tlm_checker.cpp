// The TLM-2.0 base-protocol checker (hw/common/observe/tlm_checker.h) catches deliberate violations of
// each rule it enforces, between a test initiator and a misbehaving memory.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "hw/common/sim/sim_context.h"
#include "hw/common/observe/tlm_checker.h"
#include "test_text.h"

using namespace ahbm;

namespace {

using test::joined;

}  // namespace

namespace {

// A 256-byte memory at [0, 255] that misbehaves on demand.
struct BadMemory : sc_core::sc_module {
  tlm_utils::simple_target_socket<BadMemory> socket;
  unsigned char mem[256] = {}, remapped[256] = {};
  bool serve_remapped = false;  // transport reads `remapped`, DMI still shows `mem`
  bool leave_incomplete = false, change_address = false, wait_10ns = false, grant_write_only = false;
  explicit BadMemory(sc_core::sc_module_name n) : sc_core::sc_module(n), socket("socket") {
    socket.register_b_transport(this, &BadMemory::b_transport);
    socket.register_get_direct_mem_ptr(this, &BadMemory::get_direct_mem_ptr);
  }
  void b_transport(tlm::tlm_generic_payload& t, sc_core::sc_time&) {
    if (wait_10ns) sc_core::wait(10, sc_core::SC_NS);
    if (leave_incomplete) return;
    if (t.get_address() + t.get_data_length() > sizeof mem) {
      t.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
      return;
    }
    if (t.get_command() == tlm::TLM_READ_COMMAND && t.get_data_ptr()) std::memcpy(t.get_data_ptr(), (serve_remapped ? remapped : mem) + t.get_address(), t.get_data_length());
    if (change_address) t.set_address(t.get_address() + 1);
    t.set_response_status(tlm::TLM_OK_RESPONSE);
  }
  bool get_direct_mem_ptr(tlm::tlm_generic_payload&, tlm::tlm_dmi& d) {
    d.set_dmi_ptr(mem);
    d.set_start_address(0);
    d.set_end_address(255);
    if (grant_write_only) d.allow_write();
    else d.allow_read();
    return true;
  }
};

struct Initiator : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<Initiator> socket;
  explicit Initiator(sc_core::sc_module_name n) : sc_core::sc_module(n), socket("socket") {}
};

struct Bench {
  SimContext context;
  SimContext::Scope use{context};
  TlmCheckLog log;
  Initiator init{"init"};
  BadMemory mem{"mem"};
  TlmLinks links;
  unsigned char buf[64] = {};
  Bench() {
    links.bind(init.socket, mem.socket, "check", &log, [] { return std::make_pair(uint64_t(0), uint64_t(255)); });
    sc_core::sc_start(sc_core::SC_ZERO_TIME);
  }
  // A well-formed read of `len` bytes at `addr` into buf.
  void read(uint64_t addr, unsigned len, tlm::tlm_generic_payload& t) {
    t.set_command(tlm::TLM_READ_COMMAND);
    t.set_address(addr);
    t.set_data_ptr(buf);
    t.set_data_length(len);
    t.set_streaming_width(len);
    t.set_byte_enable_ptr(nullptr);
    t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  }
  std::string transport(tlm::tlm_generic_payload& t) {
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    init.socket->b_transport(t, d);
    return joined(log.violations);
  }
};

}  // namespace

TEST(TlmChecker, AcceptsAWellFormedRead) {
  Bench b;
  tlm::tlm_generic_payload t;
  b.read(16, 32, t);
  EXPECT_EQ(b.transport(t), "");
  EXPECT_EQ(b.log.transactions, 1u);
}

TEST(TlmChecker, CatchesEachRequestRule) {
  auto violation_of = [](auto&& spoil) {
    Bench b;
    tlm::tlm_generic_payload t;
    b.read(0, 16, t);
    spoil(t, b);
    return b.transport(t);
  };
  EXPECT_NE(violation_of([](auto& t, auto&) { t.set_data_ptr(nullptr); }).find("null data pointer"), std::string::npos);
  EXPECT_NE(violation_of([](auto& t, auto&) { t.set_address(250); }).find("outside the target's range"), std::string::npos);
  EXPECT_NE(violation_of([](auto& t, auto&) { t.set_streaming_width(0); }).find("streaming width"), std::string::npos);
  EXPECT_NE(violation_of([](auto& t, auto&) { t.set_streaming_width(17); }).find("streaming width"), std::string::npos);
  EXPECT_NE(violation_of([](auto& t, auto&) { t.set_response_status(tlm::TLM_OK_RESPONSE); }).find("on entry"),
            std::string::npos);
  // 3: no command, yet inside the enum's value range (its enumerators 0..2 need 2 bits), so the
  // payload holds it without undefined behaviour (UBSan rejects 7 when the checker loads it).
  EXPECT_NE(violation_of([](auto& t, auto&) { t.set_command(tlm::tlm_command(3)); }).find("is not READ"), std::string::npos);
  EXPECT_NE(violation_of([](auto& t, auto& b) {
              t.set_byte_enable_ptr(b.buf);
              t.set_byte_enable_length(0);
            }).find("byte-enable length 0"),
            std::string::npos);
  EXPECT_NE(violation_of([](auto&, auto& b) { b.mem.leave_incomplete = true; }).find("INCOMPLETE"), std::string::npos);
  EXPECT_NE(violation_of([](auto&, auto& b) { b.mem.change_address = true; }).find("target changed"), std::string::npos);
}

TEST(TlmChecker, CatchesStaleDmiAndRepeatedRequests) {
  Bench b;
  tlm::tlm_generic_payload req;
  req.set_command(tlm::TLM_READ_COMMAND);
  req.set_address(8);
  tlm::tlm_dmi dmi;
  ASSERT_TRUE(b.init.socket->get_direct_mem_ptr(req, dmi));
  tlm::tlm_generic_payload t;
  b.read(0, 16, t);
  EXPECT_EQ(b.transport(t), "");  // the transport returns what DMI shows
  // The target re-maps its contents (transport now serves other bytes) without invalidating.
  b.mem.remapped[3] = 42;
  b.mem.serve_remapped = true;
  b.read(0, 16, t);
  EXPECT_NE(b.transport(t).find("differ from the DMI region"), std::string::npos);
  // Ask again inside the granted region: grants must be cached.
  tlm::tlm_dmi again;
  b.init.socket->get_direct_mem_ptr(req, again);
  EXPECT_NE(joined(b.log.violations).find("asked again"), std::string::npos);
}

TEST(TlmChecker, CatchesAGrantWithoutTheRequestedAccess) {
  Bench b;
  b.mem.grant_write_only = true;
  tlm::tlm_generic_payload req;
  req.set_command(tlm::TLM_READ_COMMAND);
  req.set_address(8);
  tlm::tlm_dmi dmi;
  b.init.socket->get_direct_mem_ptr(req, dmi);
  EXPECT_NE(joined(b.log.violations).find("granted access"), std::string::npos);
}

TEST(TlmChecker, CatchesAPayloadReusedWhileInFlight) {
  Bench b;
  b.mem.wait_10ns = true;
  tlm::tlm_generic_payload t;
  b.read(0, 8, t);
  auto send = [&] {
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    b.init.socket->b_transport(t, d);
  };
  sc_core::sc_spawn(send);
  sc_core::sc_spawn(send);  // the same payload, while the first transaction waits in the target
  sc_core::sc_start(sc_core::sc_time(100, sc_core::SC_NS));
  EXPECT_NE(joined(b.log.violations).find("re-used while"), std::string::npos);
}
