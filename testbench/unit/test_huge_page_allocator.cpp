// The allocator behind the long-run containers (hw/common/base/huge_page_allocator.h): growth across
// its 2 MiB switch keeps every element, large blocks sit on a 2 MiB boundary (what transparent
// huge pages need), and the report's in-place percentiles give what the copying ones give.
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "hw/common/base/huge_page_allocator.h"
#include "hw/common/observe/span_recorder.h"
#include "runtime/report/percentiles.h"

namespace ahbm {
namespace {

TEST(HugePageAllocator, GrowthAcrossTheSwitchKeepsEveryElementAndLargeBlocksAreAligned) {
  constexpr uint64_t kMul = 2654435761u;  // distinct values, so a misplaced element shows
  std::vector<uint64_t, HugePageAllocator<uint64_t>> v;
  const size_t n = 3 * huge_pages::kSize / sizeof(uint64_t) + 12345;  // ~6 MiB: past the switch
  bool aligned = true;
  for (size_t i = 0; i < n; ++i) {
    v.push_back(i * kMul);
    if (v.capacity() * sizeof(uint64_t) >= huge_pages::kSize)
      aligned = aligned && reinterpret_cast<std::uintptr_t>(v.data()) % huge_pages::kSize == 0;
  }
  EXPECT_TRUE(aligned);
  for (size_t i = 0; i < n; i += 997) ASSERT_EQ(v[i], i * kMul) << i;
  EXPECT_EQ(v.back(), (n - 1) * kMul);
  v.resize(10);
  v.shrink_to_fit();  // back below the switch: operator new again
  EXPECT_EQ(v[9], 9 * kMul);
  EXPECT_THROW(HugePageAllocator<uint64_t>().allocate(size_t(-1) / 4), std::bad_array_new_length);
}

TEST(HugePageAllocator, SpanListIsTheRecordersStore) {
  SpanRecorder r;
  const int c = r.intern("pe0"), a = r.intern("gemm_qk"), p = r.intern("fanout"), g = r.intern("agent0");
  const size_t n = huge_pages::kSize / sizeof(Span) + 7;
  for (size_t i = 0; i < n; ++i)
    r.record(sc_core::sc_time(double(i), sc_core::SC_NS), sc_core::sc_time(double(i + 1), sc_core::SC_NS), c, a, p, g,
             int64_t(i), 0);
  ASSERT_EQ(r.spans().size(), n);
  EXPECT_EQ(r.spans()[n - 1].rows, int64_t(n - 1));
  EXPECT_EQ(r.spans()[n - 1].end, sc_core::sc_time(double(n), sc_core::SC_NS));
}

TEST(Percentiles, SortingInPlaceGivesTheCopyingSummary) {
  std::vector<double> s;
  for (int i = 0; i < 1001; ++i) s.push_back(double((i * 7919) % 1009) + 0.1 * i);
  report::Samples in_place(s.begin(), s.end());
  const Json copied = report::to_json(report::distribution(s));
  EXPECT_EQ(report::to_json(report::distribution_sorting(in_place)), copied);
  EXPECT_TRUE(std::is_sorted(in_place.begin(), in_place.end()));
  // The total adds the samples in their recorded order, as it always did.
  EXPECT_EQ(copied["total_ns"].get<double>(), std::accumulate(s.begin(), s.end(), 0.0));
  report::Samples none;
  EXPECT_EQ(report::to_json(report::distribution_sorting(none)), Json({{"count", 0}}));
}

}  // namespace
}  // namespace ahbm
