// Serve's step cache (runtime/serve/step_cache.h): exact keys, a bound on the bytes its keys
// hold, the oldest entries evicted first.
#include <gtest/gtest.h>

#include <string>

#include "runtime/serve/step_cache.h"

using ahbm::serve::StepCache;

TEST(StepCache, FindsOnlyTheExactKey) {
  StepCache<double> c(1 << 10);
  const std::string key(100, 'a');
  c.insert(key, 1.5);
  ASSERT_NE(c.find(key), nullptr);
  EXPECT_EQ(*c.find(key), 1.5);
  std::string near = key;
  near[57] = 'b';  // one byte differs: another step
  EXPECT_EQ(c.find(near), nullptr);
  EXPECT_EQ(c.find(key.substr(0, 99)), nullptr);
  c.insert(key, 2.5);  // a key already present keeps its value
  EXPECT_EQ(*c.find(key), 1.5);
  EXPECT_EQ(c.entries(), 1u);
  EXPECT_EQ(c.key_bytes(), 100u);
}

TEST(StepCache, KeepsItsKeysWithinTheBoundEvictingTheOldestFirst) {
  StepCache<int> c(250);
  auto key = [](char ch) { return std::string(100, ch); };
  c.insert(key('a'), 1);
  c.insert(key('b'), 2);
  EXPECT_EQ(c.key_bytes(), 200u);
  c.insert(key('c'), 3);  // 300 > 250: 'a', the oldest, leaves
  EXPECT_EQ(c.key_bytes(), 200u);
  EXPECT_EQ(c.evicted(), 1u);
  EXPECT_EQ(c.find(key('a')), nullptr);
  EXPECT_EQ(*c.find(key('b')), 2);
  EXPECT_EQ(*c.find(key('c')), 3);
  c.insert(std::string(240, 'd'), 4);  // needs both of the others' room
  EXPECT_EQ(c.evicted(), 3u);
  EXPECT_EQ(c.entries(), 1u);
  EXPECT_EQ(*c.find(std::string(240, 'd')), 4);
  c.insert(std::string(251, 'e'), 5);  // longer than the bound: not kept, nothing evicted
  EXPECT_EQ(c.find(std::string(251, 'e')), nullptr);
  EXPECT_EQ(c.evicted(), 3u);
  EXPECT_LE(c.key_bytes(), 250u);
  // Many inserts: the bound holds and the newest survive.
  for (int i = 0; i < 1000; ++i) c.insert(std::to_string(i) + std::string(20, 'x'), i);
  EXPECT_LE(c.key_bytes(), 250u);
  EXPECT_EQ(*c.find("999" + std::string(20, 'x')), 999);
  EXPECT_EQ(c.find("0" + std::string(20, 'x')), nullptr);
}

// A key built by appending (as step_key builds one) has room to spare; the cache keeps it at its
// size, and the bound counts what each kept key holds.
TEST(StepCache, KeepsAKeyBuiltByAppendingAtItsSize) {
  StepCache<int> c(1 << 20);
  std::string key;
  for (int i = 0; i < 1000; ++i) key.push_back(char('a' + i % 26));
  ASSERT_GT(key.capacity(), key.size());  // the growth's spare room, which must not be kept
  c.insert(key, 7);
  EXPECT_EQ(c.key_bytes(), 1000u);
  EXPECT_EQ(*c.find(key), 7);
}
