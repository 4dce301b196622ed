// The HBM slice's contents: fp32 placements mapped in place (no copy of the job's K/V), fp16
// placements and remapped writes owned, bursts that cross extents, and reads of bytes nobody
// placed refused (the DMA then reports a burst outside the shard).
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "hw/common/sim_context.h"
#include "hw/pe/hbm_slice.h"

using namespace ahbm;

namespace {

std::vector<float> read_floats(HbmSlice& s, uint64_t addr, size_t n, bool* ok) {
  std::vector<float> out(n);
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  *ok = s.read(addr, reinterpret_cast<unsigned char*>(out.data()), n * 4, delay);
  return out;
}

}  // namespace

TEST(HbmSlice, Fp32PlacementIsMappedInPlace) {
  SimContext context;
  SimContext::Scope use_context(context);
  HbmSlice slice("hbm", HbmSliceConfig{});
  std::vector<float> k = {1.f, 2.f, 3.f, 4.f};
  slice.backdoor_write(64, k.data(), k.size());
  k[2] = 30.f;  // the slice reads the caller's array, so it sees the change
  bool ok = false;
  const std::vector<float> got = read_floats(slice, 64 + 4, 3, &ok);
  ASSERT_TRUE(ok);
  EXPECT_EQ(got, (std::vector<float>{2.f, 30.f, 4.f}));
}

TEST(HbmSlice, BurstsCrossAdjacentExtentsAndStopAtGaps) {
  SimContext context;
  SimContext::Scope use_context(context);
  HbmSlice slice("hbm", HbmSliceConfig{});
  const std::vector<float> own = {1.f, 2.f};
  slice.backdoor_write(0, own.data(), own.size());
  const std::vector<float> copy = {5.f, 6.f};
  slice.write(8, reinterpret_cast<const unsigned char*>(copy.data()), 8);  // owned (a remapped copy)
  bool ok = false;
  EXPECT_EQ(read_floats(slice, 4, 3, &ok), (std::vector<float>{2.f, 5.f, 6.f}));
  EXPECT_TRUE(ok);
  read_floats(slice, 8, 3, &ok);  // the last 4 bytes were never placed
  EXPECT_FALSE(ok);
  slice.backdoor_write(32, own.data(), own.size());
  read_floats(slice, 12, 6, &ok);  // bytes 16..31 lie between two extents
  EXPECT_FALSE(ok);
  EXPECT_EQ(slice.bytes_written(), 8u);
}

TEST(HbmSlice, Fp16PlacementIsEncodedAndOwned) {
  SimContext context;
  SimContext::Scope use_context(context);
  HbmSlice slice("hbm", HbmSliceConfig{});
  std::vector<float> k = {1.f, 1.0009765625f, -2.5f};  // 1 + 2^-10 is the fp16 step above 1
  slice.backdoor_write(0, k.data(), k.size(), DType::fp16);
  k.assign(k.size(), 0.f);  // owned bytes: later changes to the source do not reach the slice
  std::vector<unsigned char> bytes(6);
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  ASSERT_TRUE(slice.read(0, bytes.data(), bytes.size(), delay));
  std::vector<float> back(3);
  decode(DType::fp16, bytes.data(), 3, back.data());
  EXPECT_EQ(back, (std::vector<float>{1.f, 1.0009765625f, -2.5f}));
}

TEST(HbmSlice, RewritingTheSameRangeReplacesIt) {
  SimContext context;
  SimContext::Scope use_context(context);
  HbmSlice slice("hbm", HbmSliceConfig{});
  const std::vector<float> a = {1.f, 2.f}, b = {7.f, 8.f};
  slice.backdoor_write(16, a.data(), a.size());
  slice.write(16, reinterpret_cast<const unsigned char*>(b.data()), 8);
  bool ok = false;
  EXPECT_EQ(read_floats(slice, 16, 2, &ok), b);
  EXPECT_TRUE(ok);
}

TEST(HbmSlice, GrantsReadOnlyDmiOverTheExtentHoldingTheAddress) {
  SimContext context;
  SimContext::Scope use_context(context);
  HbmSlice slice("hbm", HbmSliceConfig{});
  const std::vector<float> k = {1.f, 2.f, 3.f};
  slice.backdoor_write(100, k.data(), k.size());
  tlm::tlm_generic_payload trans;
  trans.set_command(tlm::TLM_READ_COMMAND);
  trans.set_address(104);
  tlm::tlm_dmi dmi;
  ASSERT_TRUE(slice.get_direct_mem_ptr(trans, dmi));
  EXPECT_TRUE(dmi.is_read_allowed());
  EXPECT_FALSE(dmi.is_write_allowed());
  EXPECT_EQ(dmi.get_start_address(), 100u);
  EXPECT_EQ(dmi.get_end_address(), 111u);
  EXPECT_EQ(dmi.get_dmi_ptr(), reinterpret_cast<const unsigned char*>(k.data()));  // in place, no copy
  trans.set_address(112);  // just past the extent
  tlm::tlm_dmi none;
  EXPECT_FALSE(slice.get_direct_mem_ptr(trans, none));
  trans.set_command(tlm::TLM_WRITE_COMMAND);  // the slice is written through its owner only
  trans.set_address(104);
  EXPECT_FALSE(slice.get_direct_mem_ptr(trans, none));
}
