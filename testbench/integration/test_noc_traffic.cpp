// The testbench's traffic (docs/noc.md, "Traffic patterns"): each deterministic pattern's
// destinations against its definition (PPIN section 3.2, as BookSim defines them), uniform with
// and without self (mean hops), rates in flits or packets, packet-size mixes, on-off bursts
// (same mean, longer queues), and errors naming the option.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "hw/bench/noc_bench.h"

using namespace ahbm;

namespace {
std::vector<int> dests(const std::string& pattern, int nodes, uint64_t perm_seed = 1) {
  NocBenchOptions o;
  o.traffic = pattern;
  o.nodes = nodes;
  o.perm_seed = perm_seed;
  return pattern_destinations(o);
}

NocBenchResult bench(NocBenchOptions o) {
  if (o.cycles == 10000) o.cycles = 6000;
  return run_noc_bench(NocRegistry::with_builtin_models(), o);
}
}  // namespace

TEST(NocTraffic, DeterministicPatternsFollowTheirDefinitions) {
  // 16 nodes = 4 bits = a 4 x 4 arrangement (node = 4 y + x).
  const auto bitcomp = dests("bitcomp", 16), bitrev = dests("bitrev", 16), shuffle = dests("shuffle", 16),
             transpose = dests("transpose", 16);
  for (int s = 0; s < 16; ++s) {
    EXPECT_EQ(bitcomp[size_t(s)], 15 - s);
    int rev = 0;
    for (int i = 0; i < 4; ++i)
      if (s & (1 << i)) rev |= 1 << (3 - i);
    EXPECT_EQ(bitrev[size_t(s)], rev);
    EXPECT_EQ(shuffle[size_t(s)], ((s << 1) & 15) | (s >> 3));  // rotate left one bit
    EXPECT_EQ(transpose[size_t(s)], (s % 4) * 4 + s / 4);
  }
  // Digit patterns on 8 x 8 (k = 8): tornado adds ceil(8/2) - 1 = 3 to each digit, neighbor 1.
  const auto tornado = dests("tornado", 64), neighbor = dests("neighbor", 64);
  for (int s = 0; s < 64; ++s) {
    const int x = s % 8, y = s / 8;
    EXPECT_EQ(tornado[size_t(s)], ((y + 3) % 8) * 8 + (x + 3) % 8);
    EXPECT_EQ(neighbor[size_t(s)], ((y + 1) % 8) * 8 + (x + 1) % 8);
  }
  // A node count that is not a square: one ring (k = 10; tornado + 4).
  EXPECT_EQ(dests("tornado", 10)[7], 1);
  EXPECT_EQ(dests("neighbor", 10)[9], 0);
  // randperm: a permutation, fixed by its seed.
  const auto p1 = dests("randperm", 64, 1), p1again = dests("randperm", 64, 1), p2 = dests("randperm", 64, 2);
  EXPECT_EQ(std::set<int>(p1.begin(), p1.end()).size(), 64u);
  EXPECT_EQ(p1, p1again);
  EXPECT_NE(p1, p2);
  EXPECT_TRUE(dests("uniform", 16).empty());
}

TEST(NocTraffic, UniformWithAndWithoutSelf) {
  // Mean routers traversed on a 4 x 4 mesh: 1 + mean Manhattan distance = 1 + 2.5 over all
  // ordered pairs, 1 + 2.5 * 16/15 without self pairs.
  NocBenchOptions o;
  o.rate = 0.05;
  o.cycles = 20000;
  const NocBenchResult without = bench(o);
  o.include_self = true;
  const NocBenchResult with = bench(o);
  EXPECT_NEAR(without.avg_hops, 1 + 2.5 * 16 / 15, 0.05);
  EXPECT_NEAR(with.avg_hops, 3.5, 0.05);
}

TEST(NocTraffic, RatesInPacketsAndPacketMixes) {
  NocBenchOptions o;
  o.rate = 0.05;  // packets
  o.rate_in_packets = true;
  o.packet_flits = 4;
  const NocBenchResult packets = bench(o);
  EXPECT_NEAR(packets.offered, 0.2, 0.01);  // flits
  EXPECT_NEAR(packets.accepted, packets.offered, 0.01);
  NocBenchOptions m;
  m.rate = 0.2;  // flits, with a mix of mean (1 * 3 + 9 * 1) / 4 = 3 flits
  m.packet_mix = {{1, 3.0}, {9, 1.0}};
  const NocBenchResult mix = bench(m);
  EXPECT_NEAR(mix.offered, 0.2, 0.01);
  EXPECT_NEAR(double(mix.packets_measured) / (16.0 * 6000), 0.2 / 3, 0.004);  // packets per node per cycle
}

TEST(NocTraffic, OnOffBurstsKeepTheMeanAndLengthenQueues) {
  NocBenchOptions o;
  o.rate = 0.3;
  const NocBenchResult bernoulli = bench(o);
  o.injection = "on-off";
  o.burst_alpha = 0.02;
  o.burst_beta = 0.08;  // on 20 % of the time, in bursts of 12.5 cycles, at five times the mean rate
  const NocBenchResult bursty = bench(o);
  EXPECT_NEAR(bursty.offered, 0.3, 0.03);
  EXPECT_FALSE(bursty.saturated);
  EXPECT_GT(bursty.avg_latency, bernoulli.avg_latency * 1.25);  // bursts queue at the source
}

TEST(NocTraffic, BadOptionsNameTheOption) {
  auto error_of = [](NocBenchOptions o) {
    try {
      run_noc_bench(NocRegistry::with_builtin_models(), o);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  NocBenchOptions o;
  o.traffic = "bitcomp";
  o.nodes = 12;
  EXPECT_NE(error_of(o).find("--nodes 12"), std::string::npos);
  o.traffic = "zigzag";
  EXPECT_NE(error_of(o).find("randperm"), std::string::npos);  // lists the allowed patterns
  o = NocBenchOptions{};
  o.injection = "on-off";
  o.burst_alpha = 0.1;
  o.burst_beta = 0.9;
  o.rate = 1.0;
  o.packet_flits = 1;  // on-state probability 10 > 1
  EXPECT_NE(error_of(o).find("--rate"), std::string::npos);
  o = NocBenchOptions{};
  o.packet_mix = {{0, 1.0}};
  EXPECT_NE(error_of(o).find("--packet-mix"), std::string::npos);
}
