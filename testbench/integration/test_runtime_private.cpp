// Branch-private KV pages: the fan-out step's O for every row matches the float64 reference
// computed from the dumped tensors and mask, and the mask follows page ownership (each row sees
// exactly its own causal history: the shared prefix and its own earlier tokens, once each).
#include <gtest/gtest.h>

#include <filesystem>

#include "runtime/run/driver.h"
#include "runtime/io/npy.h"
#include "runtime/numerics/reference.h"
#include "test_runtime_support.h"

using namespace ahbm;
namespace fs = std::filesystem;

namespace {

// A prefix that ends inside a page (so every branch copies that page on write), three
// branches of unequal length spanning several pages, and a page-interleaved prefix.
Scenario private_scenario() {
  return test::inline_scenario(R"({
    "name": "private", "model": {"head_dim": 32},
    "kv": {"page_tokens": 8, "prefix_placement": "interleaved"},
    "shared_prefix_tokens": 1003, "seed": 7,
    "agents": [{"name": "a", "new_tokens": 5}, {"name": "b", "new_tokens": 17}, {"name": "c", "new_tokens": 30}]
  })", "private");
}

}  // namespace

TEST(RuntimePrivate, FanoutMatchesReferenceFromDumpedTensorsAndMask) {
  const fs::path dir = fs::temp_directory_path() / ("ahbm_private_" + std::to_string(::getpid()));
  RunOptions opt = test::in_memory_options();
  opt.dump_tensors = true;
  const RunOutput run = execute(private_scenario(), HwConfig{}, opt);
  write_run_dir(dir.string(), run, opt);

  const NpyArray q = read_npy((dir / "tensors/q.npy").string()), k = read_npy((dir / "tensors/k.npy").string()),
                 v = read_npy((dir / "tensors/v.npy").string()), o = read_npy((dir / "tensors/o.npy").string()),
                 mask = read_npy((dir / "tensors/mask.npy").string());
  const int rows = 5 + 17 + 30, d = 32;
  // The prefix ends 3 tokens into a page; each branch wrote into that page and so holds its
  // own copy (copy-on-write) with those 3 prefix tokens. The job reads every page a branch
  // references once: the full prefix pages (shared) and each branch's pages (private,
  // including its copy); the original partial page belongs to the parent only and is not read.
  const uint64_t keys = (1003 - 3) + 3 * 3 + 5 + 17 + 30;
  ASSERT_EQ(q.rows, uint64_t(rows));
  ASSERT_EQ(k.rows, keys);
  ASSERT_EQ(mask.rows, uint64_t(rows));
  ASSERT_EQ(mask.cols, keys);

  // Each row sees exactly pos + 1 keys: its whole causal history, nothing of other branches.
  const std::vector<uint8_t> m = mask.as_bool();
  int r = 0;
  for (int n : {5, 17, 30})
    for (int t = 0; t < n; ++t, ++r) {
      uint64_t seen = 0;
      for (uint64_t c = 0; c < keys; ++c) seen += m[size_t(r) * keys + c];
      EXPECT_EQ(seen, uint64_t(1003 + t + 1)) << "row " << r;
    }
  // Private keys exist: some key is visible to some rows and not to others at the same position.
  size_t partly = 0;
  for (uint64_t c = 0; c < keys; ++c) {
    bool any_a = false, any_c = false;
    for (int row = 0; row < 5; ++row) any_a = any_a || m[size_t(row) * keys + c];
    for (int row = 22; row < rows; ++row) any_c = any_c || m[size_t(row) * keys + c];
    partly += any_a != any_c;
  }
  EXPECT_GE(partly, size_t(5 + 30));

  const Eigen::MatrixXd ref = reference_attention_masked(q.as_f32(), k.as_f32(), v.as_f32(), m, d, 1.0 / std::sqrt(double(d)));
  const std::vector<float> of = o.as_f32();
  const MatrixRM out = Eigen::Map<const MatrixRM>(of.data(), rows, d);
  EXPECT_LE(compare_to_reference(out, ref).max_abs_err, 1e-4);
  EXPECT_GT(ref.cwiseAbs().maxCoeff(), 1e-2);  // a non-trivial output
  EXPECT_EQ(run.summary.kv.cow_copies, 3);  // 1003 % 8 != 0: each branch copied the last prefix page
  fs::remove_all(dir);
}

TEST(RuntimePrivate, EveryStepMatchesReferenceWithPrivatePages) {
  Scenario sc = private_scenario();
  sc.phases = {PhaseSpec{PhaseType::fanout, 0, 0}, PhaseSpec{PhaseType::decode, 0, 3}, PhaseSpec{PhaseType::join, 9, 0}};
  const RunOutput run = execute(sc, HwConfig{}, test::in_memory_options());
  ASSERT_EQ(run.summary.steps.size(), 5u);
  for (const StepSummary& s : run.summary.steps) EXPECT_LE(s.max_abs_err.value(), 1e-4) << s.label;
  EXPECT_TRUE(run.summary.numerics.pass);
}
