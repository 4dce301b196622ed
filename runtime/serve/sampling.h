#pragma once
// Sampled serving (docs/serving.md, "Sampled serving"): SMARTS-style statistical sampling of a
// serve run's steps. Every step is still scheduled by the exact engine (admission, KV pages,
// preemption, P-B-D); only its cost (time, HBM bytes, energy) comes either from the detailed
// simulation (StepTimer) or from a predictor trained online, in this run, on the detailed steps.
//
// Which steps are simulated in detail, per shape class (the pool's hardware x whether the step
// prefills):
//   - the first `warmup` steps of the class (training);
//   - every step whose shape lies outside what the class has seen (a feature beyond 1.25x the
//     largest seen or below 0.8x the smallest): the predictor is not asked to extrapolate;
//   - held-back steps: each is first predicted, then simulated; the relative error of its whole
//     cost (operators included) is the predictor's measured error on a step it had not seen;
//     then it is learnt. A class is on probation, every step held back, until `window` steps
//     have been held back, and again whenever the RMS error of its last `window` is above
//     `target_error` (the period back to `period`). Off probation, one step in `period` is held
//     back (a systematic sample with a seeded offset); the period doubles, up to `max_period`,
//     each `window` held-back steps whose error stays under half the target.
// What is predicted is one layer's attention (its time, dynamic energy and HBM bytes): a whole
// model's operators around it stay exact (simulated once per row count, StepTimer). The
// predictor, per class, is a weighted least-squares fit (weights 1/y, recent samples first) on
// features of the batch (step_features): linear in the KV tokens and pages per PE read, with
// hinge terms in the rows (piecewise linear in the Q rows).
//
// Confidence intervals (sampled_serve.cpp): `replays` runs of the same engine whose every step is
// predicted by the final predictor and, where the sampled run predicted it, perturbed as the
// errors measured near it in time say: the `window` held-back steps of its class nearest its start
// give a local bias (their ratio estimator, drawn within its standard error, one draw per class
// and replay) and a per-step error (one of them, about that ratio). The errors of a predictor
// drift with the load, so a replay's errors follow the run's. Each headline metric's interval is
// its sampled value plus the replays' mean change from an unperturbed reference replay, ±
// t(0.975, replays - 1) x the replays' standard deviation.
#include <array>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "hw/common/base/json_reader.h"
#include "runtime/kv/page_manager.h"
#include "runtime/scenario/session.h"

namespace ahbm::serve {

// The workload's `sampling` block (absent: exact mode, every step simulated).
struct SamplingSpec {
  int period = 10;              // initial systematic-sample period (steps per class)
  int max_period = 256;         // the period's upper bound as it adapts
  int warmup = 20;              // detailed steps per class before any is predicted
  double target_error = 0.02;   // the held-back relative error (RMS) the period adapts to
  int window = 16;              // held-back steps over which that error is measured
  int replays = 8;              // perturbed replays for the confidence intervals (0: none)
  uint64_t seed = 1;            // the sample's offsets and the replays' draws
  // The operator grid (model_steps.h ModelSteps::OperatorGrid): a whole model's operators at row
  // counts above `operator_exact_rows` interpolated between `operator_grid` simulated points per
  // power of two (0: every row count simulated), a systematic sample of them (period
  // `operator_check`, doubling every 8 checks; 0: none) simulated too.
  int operator_grid = 0;  // off by default: its error is not in the intervals (docs/serving.md)
  int operator_exact_rows = 64;
  int operator_check = 8;
};
SamplingSpec read_sampling(JsonReader r);
Json sampling_json(const SamplingSpec& s);

// What a step costs, as the step timer reports it (step_timer.h StepCost's fields).
struct CostVector {
  double ns = 0, energy_j = 0, static_j = 0, hbm_bytes = 0;
};

constexpr size_t kStepFeatures = 13;
using StepFeatures = std::array<double, kStepFeatures>;

// The batch's features, from its parts and their pages in `kv` (the pool's): 1, rows (new
// tokens), decoding agents, KV tokens read (each part's distinct pages: branches read their
// shared prefix once), Σ new x length (a prefill's causal attention), parts, the longest
// sequence, the pages of the busiest PE (over every part: the PE that ends last), Σ over the
// parts of each part's busiest PE, and max(0, rows - k) for k = 32, 128, 512, 2048.
StepFeatures step_features(const std::vector<Step>& parts, const KvPageManager& kv);

// Weighted least squares of one target on the features (weight 1/y, older samples fading), with a
// small ridge on the standardised features; refit lazily when asked after new samples.
class LinearFit {
 public:
  void add(const StepFeatures& x, double y);
  double predict(const StepFeatures& x);
  size_t samples() const { return n_; }

 private:
  void refit();
  std::array<std::array<double, kStepFeatures>, kStepFeatures> xtx_{};
  std::array<double, kStepFeatures> xty_{};
  std::array<double, kStepFeatures> scale_{};  // each feature's largest magnitude seen (standardisation)
  std::array<double, kStepFeatures> coef_{};
  size_t n_ = 0;
  bool stale_ = true;
};

// A held-back step's prediction and its detailed value.
struct HeldBack {
  double predicted = 0, detailed = 0;
  double at_ns = 0;  // the step's start
};

// One shape class's predictor and sample.
struct SamplingClass {
  std::string name;  // "pool<i>.decode" | "pool<i>.prefill"
  LinearFit ns, energy, bytes;
  double static_w = 0;  // static J per ns (a pool's static power): static_j = static_w x ns
  StepFeatures lo{}, hi{};  // the box of features seen
  int64_t steps = 0, detailed = 0, warmup = 0, novel = 0, held_back = 0;
  int period = 0;
  uint64_t offset = 0;
  // Held-back steps' predicted and detailed time and dynamic energy, in order.
  std::vector<HeldBack> held_ns, held_energy;
  int64_t since_change = 0;  // held-back steps since the period last changed
  bool probation = true;     // every step held back (not yet measured, or the error above target)
  double min_ns = 0;         // the cheapest detailed step
  // Replays: the sampled run's step count and this replay's drawn bias.
  int64_t steps_main = 0;
  double replay_z = 0;  // this replay's standard normal draw for the class's local bias
};

// The sampler of one run: decides, predicts, learns; or, frozen, replays with perturbations.
class StepSampler {
 public:
  explicit StepSampler(const SamplingSpec& spec) : spec_(spec), rng_(spec.seed) {}

  // Why a step is simulated in detail, or not.
  enum class Use { warmup, novel, held_back, predicted };
  // The class of a step on pool `pool_key` (pool name for the report) and its use.
  SamplingClass& klass(const std::string& pool_key, const std::string& pool_name, bool prefill);
  Use decide(SamplingClass& c, const StepFeatures& x);
  // One layer's attention, predicted.
  CostVector predict(SamplingClass& c, const StepFeatures& x);
  // A detailed step's attention (one layer's cost), learnt.
  void learn(SamplingClass& c, const StepFeatures& x, const CostVector& attention, Use use);
  // A held-back step's whole cost (its operators included), as predicted and in detail, at
  // `now_ns`: the error measured, the class's probation and period adapted.
  void held_back(SamplingClass& c, const CostVector& predicted, const CostVector& detailed, double now_ns);
  // A replay: a predicted step's whole cost perturbed by the errors measured near `now_ns` (as is
  // outside replays).
  CostVector perturb(SamplingClass& c, CostVector step, double now_ns);

  // Replay k: every step predicted by this sampler's fits (a copy), perturbed by draws of the
  // measured errors; replay 0 is the unperturbed reference.
  StepSampler replay(int k) const;
  bool replaying() const { return replay_; }

  const SamplingSpec& spec() const { return spec_; }
  const std::map<std::string, SamplingClass>& classes() const { return classes_; }

 private:
  SamplingSpec spec_;
  std::map<std::string, SamplingClass> classes_;
  std::mt19937_64 rng_;
  bool replay_ = false, reference_ = false;
};

// The held-back steps' errors: the relative errors (detailed / predicted - 1) of single steps
// (mean, RMS, largest), and the ratio estimator of the sum (Σ detailed / Σ predicted, what a
// total over many predicted steps is off by) with its standard error (Cochran's ratio estimator:
// s / (sqrt(n) x mean predicted), s the residuals' standard deviation about the ratio).
struct ErrorStats {
  size_t n = 0;
  double mean = 0, rms = 0, max_abs = 0;
  double ratio = 1, ratio_se = 0;
};
ErrorStats error_stats(const HeldBack* first, const HeldBack* last);
inline ErrorStats error_stats(const std::vector<HeldBack>& e) { return error_stats(e.data(), e.data() + e.size()); }

// What sampling did in a run (ServeResult::sampling; the summary's "sampling" block).
struct SamplingResult {
  SamplingSpec spec;
  struct Class {
    std::string name;
    int64_t steps = 0, detailed = 0, warmup = 0, novel = 0, held_back = 0;
    int period = 0;      // at the end
    ErrorStats ns, energy;  // the held-back relative errors
  };
  std::vector<Class> classes;
  // The operator grid over every pool's model: dense layers' row counts simulated and
  // interpolated (x representative layers), and the checked ones' errors of a layer's time.
  struct Operators {
    uint64_t simulated = 0, interpolated = 0;
    ErrorStats error;
  } operators;
  // Each replay's headline metrics (serve_summary.h headline_metrics), replay 0 the reference.
  std::vector<std::vector<std::pair<std::string, double>>> replays;
};
SamplingResult sampling_result(const StepSampler& s);

}  // namespace ahbm::serve
