// The HBM slice, driven only through its TLM socket (and its placement backdoor): fp32
// placements mapped in place (no copy of the job's K/V), fp16 placements and written copies
// owned, bursts that cross extents, reads of bytes nobody placed refused, timing-only transfers
// (every byte disabled) timed but moving nothing, DMI read-only over an extent and invalidated
// when the slice re-maps it. Every transaction also passes a base-protocol checker.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>

#include "hw/common/sim/sim_context.h"
#include "hw/common/observe/tlm_checker.h"
#include "hw/common/sim/tlm_payload.h"
#include "hw/pe/hbm_slice.h"

using namespace ahbm;

namespace {

struct Port : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<Port> socket;
  std::vector<std::pair<uint64_t, uint64_t>> invalidated;
  explicit Port(sc_core::sc_module_name n) : sc_core::sc_module(n), socket("socket") {
    socket.register_invalidate_direct_mem_ptr(this, &Port::invalidate);
  }
  void invalidate(sc_dt::uint64 a, sc_dt::uint64 b) { invalidated.emplace_back(a, b); }
};

// A slice with one initiator bound through a checker, elaborated.
struct Bench {
  SimContext context;
  SimContext::Scope use{context};
  TlmCheckLog log;
  HbmSliceConfig cfg;
  HbmSlice slice{"hbm", cfg};
  Port port{"port"};
  TlmLinks links;
  Bench() {
    links.bind(port.socket, slice.socket, "check", &log, [this] { return std::make_pair(uint64_t(0), slice.last()); });
    sc_core::sc_start(sc_core::SC_ZERO_TIME);
  }
  ~Bench() { EXPECT_TRUE(log.violations.empty()) << log.violations.front(); }
  tlm::tlm_response_status transport(tlm::tlm_command cmd, uint64_t addr, unsigned char* data, uint64_t len,
                                     bool timing_only = false, sc_core::sc_time* delay = nullptr) {
    tlm::tlm_generic_payload t;
    unsigned char none;
    set_payload(t, cmd, addr, data, len);
    if (timing_only) set_timing_only(t, none);
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    port.socket->b_transport(t, d);
    if (delay) *delay = d;
    return t.get_response_status();
  }
  std::vector<float> read_floats(uint64_t addr, size_t n, bool* ok) {
    std::vector<float> out(n);
    *ok = transport(tlm::TLM_READ_COMMAND, addr, reinterpret_cast<unsigned char*>(out.data()), n * 4) == tlm::TLM_OK_RESPONSE;
    return out;
  }
  bool write_floats(uint64_t addr, std::vector<float> v) {
    return transport(tlm::TLM_WRITE_COMMAND, addr, reinterpret_cast<unsigned char*>(v.data()), v.size() * 4) ==
           tlm::TLM_OK_RESPONSE;
  }
};

}  // namespace

TEST(HbmSlice, Fp32PlacementIsMappedInPlace) {
  Bench b;
  std::vector<float> k = {1.f, 2.f, 3.f, 4.f};
  b.slice.backdoor_write(64, k.data(), k.size());
  k[2] = 30.f;  // the slice reads the caller's array, so it sees the change
  bool ok = false;
  const std::vector<float> got = b.read_floats(64 + 4, 3, &ok);
  ASSERT_TRUE(ok);
  EXPECT_EQ(got, (std::vector<float>{2.f, 30.f, 4.f}));
}

TEST(HbmSlice, BurstsCrossAdjacentExtentsAndStopAtGaps) {
  Bench b;
  const std::vector<float> own = {1.f, 2.f};
  b.slice.backdoor_write(0, own.data(), own.size());
  ASSERT_TRUE(b.write_floats(8, {5.f, 6.f}));  // owned (a remapped copy)
  bool ok = false;
  EXPECT_EQ(b.read_floats(4, 3, &ok), (std::vector<float>{2.f, 5.f, 6.f}));
  EXPECT_TRUE(ok);
  b.read_floats(8, 3, &ok);  // the last 4 bytes were never placed
  EXPECT_FALSE(ok);
  b.slice.backdoor_write(32, own.data(), own.size());
  b.read_floats(12, 6, &ok);  // bytes 16..31 lie between two extents
  EXPECT_FALSE(ok);
  EXPECT_EQ(b.slice.bytes_written(), 8u);
}

TEST(HbmSlice, Fp16PlacementIsEncodedAndOwned) {
  Bench b;
  std::vector<float> k = {1.f, 1.0009765625f, -2.5f};  // 1 + 2^-10 is the fp16 step above 1
  b.slice.backdoor_write(0, k.data(), k.size(), DType::fp16);
  k.assign(k.size(), 0.f);  // owned bytes: later changes to the source do not reach the slice
  std::vector<unsigned char> bytes(6);
  ASSERT_EQ(b.transport(tlm::TLM_READ_COMMAND, 0, bytes.data(), bytes.size()), tlm::TLM_OK_RESPONSE);
  std::vector<float> back(3);
  decode(DType::fp16, bytes.data(), 3, back.data());
  EXPECT_EQ(back, (std::vector<float>{1.f, 1.0009765625f, -2.5f}));
}

TEST(HbmSlice, RewritingTheSameRangeReplacesItAndInvalidatesDmi) {
  Bench b;
  const std::vector<float> a = {1.f, 2.f}, c = {7.f, 8.f};
  b.slice.backdoor_write(16, a.data(), a.size());
  ASSERT_TRUE(b.write_floats(16, c));
  bool ok = false;
  EXPECT_EQ(b.read_floats(16, 2, &ok), c);
  EXPECT_TRUE(ok);
  ASSERT_FALSE(b.port.invalidated.empty());
  EXPECT_EQ(b.port.invalidated.back(), std::make_pair(uint64_t(16), uint64_t(23)));
  b.slice.begin_run();  // the next run re-maps everything
  EXPECT_EQ(b.port.invalidated.back(), std::make_pair(uint64_t(0), b.slice.last()));
}

TEST(HbmSlice, TimingOnlyTransfersAreTimedAndMoveNoByte) {
  Bench b;
  std::vector<unsigned char> buf(4096, 0xAB);
  sc_core::sc_time d1, d2;
  // Nothing is stored at 0: a timing-only read is still served (no byte is read) ...
  ASSERT_EQ(b.transport(tlm::TLM_READ_COMMAND, 0, buf.data(), buf.size(), true, &d1), tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(buf[0], 0xAB);
  // ... and timed: latency + 4096 B at the slice bandwidth; a second one queues behind it.
  const double xfer_ns = 4096 / b.cfg.bandwidth_gbps;
  EXPECT_NEAR(d1.to_seconds() * 1e9, b.cfg.latency_ns + xfer_ns, 1e-3);
  ASSERT_EQ(b.transport(tlm::TLM_READ_COMMAND, 0, buf.data(), buf.size(), true, &d2), tlm::TLM_OK_RESPONSE);
  EXPECT_NEAR(d2.to_seconds() * 1e9, b.cfg.latency_ns + 2 * xfer_ns, 1e-3);
  // A timing-only write stores nothing: a real read of the range still finds no data.
  ASSERT_EQ(b.transport(tlm::TLM_WRITE_COMMAND, 0, buf.data(), 16, true), tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(b.transport(tlm::TLM_READ_COMMAND, 0, buf.data(), 16), tlm::TLM_ADDRESS_ERROR_RESPONSE);
  EXPECT_EQ(b.slice.bytes_read(), 2 * 4096u);
}

TEST(HbmSlice, RefusesWhatItDoesNotDecode) {
  Bench b;
  std::vector<unsigned char> buf(16);
  EXPECT_EQ(b.transport(tlm::TLM_READ_COMMAND, b.slice.last() - 7, buf.data(), 16, true), tlm::TLM_ADDRESS_ERROR_RESPONSE);
  b.log.violations.clear();  // the checker rightly flagged the out-of-range address
  EXPECT_EQ(b.transport(tlm::TLM_IGNORE_COMMAND, 0, buf.data(), 16), tlm::TLM_COMMAND_ERROR_RESPONSE);
}

TEST(HbmSlice, GrantsReadOnlyDmiOverTheExtentHoldingTheAddress) {
  Bench b;
  const std::vector<float> k = {1.f, 2.f, 3.f};
  b.slice.backdoor_write(100, k.data(), k.size());
  tlm::tlm_generic_payload trans;
  trans.set_command(tlm::TLM_READ_COMMAND);
  trans.set_address(104);
  tlm::tlm_dmi dmi;
  ASSERT_TRUE(b.port.socket->get_direct_mem_ptr(trans, dmi));
  EXPECT_TRUE(dmi.is_read_allowed());
  EXPECT_FALSE(dmi.is_write_allowed());
  EXPECT_EQ(dmi.get_start_address(), 100u);
  EXPECT_EQ(dmi.get_end_address(), 111u);
  EXPECT_EQ(dmi.get_dmi_ptr(), reinterpret_cast<const unsigned char*>(k.data()));  // in place, no copy
  trans.set_address(112);  // just past the extent
  tlm::tlm_dmi none;
  EXPECT_FALSE(b.port.socket->get_direct_mem_ptr(trans, none));
  trans.set_command(tlm::TLM_WRITE_COMMAND);  // written through transport only
  trans.set_address(112);
  EXPECT_FALSE(b.port.socket->get_direct_mem_ptr(trans, none));
}
