#include "runtime/serve/sampling.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace ahbm::serve {

SamplingSpec read_sampling(JsonReader r) {
  SamplingSpec s;
  s.period = int(r.integer("period", 10, 2, 1 << 20));
  s.max_period = int(r.integer("max_period", 256, 2, 1 << 20));
  if (s.max_period < s.period)
    r.fail("max_period", "value " + std::to_string(s.max_period) + " is out of range (allowed: " +
                             range_text(int64_t(s.period), int64_t(1 << 20)) + "); at least period");
  s.warmup = int(r.integer("warmup", 20, 2, 1 << 20));
  s.target_error = r.number("target_error", 0.02, 1e-6, 1.0);
  s.window = int(r.integer("window", 16, 2, 4096));
  s.replays = int(r.integer("replays", 8, 0, 1000));
  if (s.replays == 1)
    r.fail("replays", "value 1 is out of range (allowed: 0, or 2 to 1000): an interval needs the spread of at least two");
  s.seed = uint64_t(r.integer("seed", 1, 0, INT64_MAX));
  s.operator_grid = int(r.integer("operator_grid", 0, 0, 1 << 16));
  s.operator_exact_rows = int(r.integer("operator_exact_rows", 64, 0, 1 << 24));
  s.operator_check = int(r.integer("operator_check", 8, 0, 1 << 20));
  r.finish();
  return s;
}

Json sampling_json(const SamplingSpec& s) {
  return {{"period", s.period},   {"max_period", s.max_period}, {"warmup", s.warmup}, {"target_error", s.target_error},
          {"window", s.window},   {"replays", s.replays},       {"seed", s.seed},
          {"operator_grid", s.operator_grid}, {"operator_exact_rows", s.operator_exact_rows},
          {"operator_check", s.operator_check}};
}

StepFeatures step_features(const std::vector<Step>& parts, const KvPageManager& kv) {
  double rows = 0, decoding = 0, tokens = 0, causal = 0, longest = 0, part_busiest = 0;
  std::vector<int64_t> on_pe(size_t(kv.pes()), 0), part_pe(size_t(kv.pes()), 0);
  std::vector<PageId> pages;
  for (const Step& part : parts) {
    if (part.agents.empty()) continue;
    pages.clear();
    double part_tokens = 0, max_len = 0;
    for (const StepAgent& a : part.agents) {
      rows += a.new_tokens;
      decoding += a.new_tokens == 1;
      causal += double(a.new_tokens) * double(a.length);
      max_len = std::max(max_len, double(a.length));
      const std::vector<PageId>& t = kv.table(a.seq);
      pages.insert(pages.end(), t.begin(), t.end());
    }
    // Branches share their parent's prefix pages: the part reads each page once.
    if (part.agents.size() > 1) {
      std::sort(pages.begin(), pages.end());
      pages.erase(std::unique(pages.begin(), pages.end()), pages.end());
    }
    std::fill(part_pe.begin(), part_pe.end(), 0);
    for (PageId p : pages) ++part_pe[size_t(kv.page(p).pe)];
    for (size_t pe = 0; pe < on_pe.size(); ++pe) on_pe[pe] += part_pe[pe];
    part_busiest += double(*std::max_element(part_pe.begin(), part_pe.end()));
    part_tokens = double(pages.size()) * kv.page_tokens();
    tokens += std::min(part_tokens, max_len * double(part.agents.size()));
    longest = std::max(longest, max_len);
  }
  const double busiest = double(*std::max_element(on_pe.begin(), on_pe.end()));
  const auto hinge = [&](double k) { return std::max(0.0, rows - k); };
  return {1.0,     rows,         decoding,  tokens,     causal,     double(parts.size()), longest,
          busiest, part_busiest, hinge(32), hinge(128), hinge(512), hinge(2048)};
}

// Measured on the first 100 requests of the Azure conversation trace on LLaMA-3-8B (docs/serving.md,
// "Sampled serving"): the predicted steps' attention time summed was 2.6% short of the detailed
// time with weights 1/y^2 and no fading, 0.9% with 1/y, 0.6% with 1/y and 0.97.
constexpr double kForget = 0.97;

void LinearFit::add(const StepFeatures& x, double y) {
  if (!(y > 0)) return;  // a step of no cost (e.g. no HBM bytes) adds no relative information
  // Weight 1/y: between absolute errors (the long steps dominate the fit) and relative ones
  // (1/y^2: the many short steps do, and the long steps' error, which is most of the time, grows).
  // The older samples fade by kForget per new one: the batch's make-up drifts over a run (contexts
  // grow, the load changes), and the recent steps are the ones like the next.
  const double w = 1.0 / y;
  for (size_t i = 0; i < kStepFeatures; ++i) {
    xty_[i] *= kForget;
    for (size_t j = 0; j < kStepFeatures; ++j) xtx_[i][j] *= kForget;
  }
  for (size_t i = 0; i < kStepFeatures; ++i) {
    scale_[i] = std::max(scale_[i], std::fabs(x[i]));
    xty_[i] += w * x[i] * y;
    for (size_t j = 0; j < kStepFeatures; ++j) xtx_[i][j] += w * x[i] * x[j];
  }
  ++n_;
  stale_ = true;
}

// Solves (D A D + ridge) c = D b by Cholesky, D = diag(1 / scale), then coef = D c: the fit on
// standardised features without keeping the rows. The ridge (1e-9 of the mean diagonal) only
// settles features that never varied (a hinge never reached, a count that equals another).
void LinearFit::refit() {
  stale_ = false;
  coef_.fill(0.0);
  if (n_ == 0) return;
  constexpr size_t p = kStepFeatures;
  std::array<double, p> d{};
  for (size_t i = 0; i < p; ++i) d[i] = scale_[i] > 0 ? 1.0 / scale_[i] : 1.0;
  std::array<std::array<double, p>, p> a{};
  std::array<double, p> b{};
  double trace = 0;
  for (size_t i = 0; i < p; ++i) {
    b[i] = d[i] * xty_[i];
    for (size_t j = 0; j < p; ++j) a[i][j] = d[i] * xtx_[i][j] * d[j];
    trace += a[i][i];
  }
  const double ridge = 1e-9 * trace / double(p) + 1e-300;
  for (size_t i = 0; i < p; ++i) a[i][i] += ridge;
  // Cholesky A = L L^T in place (lower triangle).
  for (size_t j = 0; j < p; ++j) {
    double s = a[j][j];
    for (size_t k = 0; k < j; ++k) s -= a[j][k] * a[j][k];
    a[j][j] = std::sqrt(std::max(s, ridge));
    for (size_t i = j + 1; i < p; ++i) {
      double t = a[i][j];
      for (size_t k = 0; k < j; ++k) t -= a[i][k] * a[j][k];
      a[i][j] = t / a[j][j];
    }
  }
  std::array<double, p> z{};
  for (size_t i = 0; i < p; ++i) {
    double t = b[i];
    for (size_t k = 0; k < i; ++k) t -= a[i][k] * z[k];
    z[i] = t / a[i][i];
  }
  for (size_t i = p; i-- > 0;) {
    double t = z[i];
    for (size_t k = i + 1; k < p; ++k) t -= a[k][i] * coef_[k];
    coef_[i] = t / a[i][i];
  }
  for (size_t i = 0; i < p; ++i) coef_[i] *= d[i];
}

double LinearFit::predict(const StepFeatures& x) {
  if (stale_) refit();
  double y = 0;
  for (size_t i = 0; i < kStepFeatures; ++i) y += coef_[i] * x[i];
  return y;
}

SamplingClass& StepSampler::klass(const std::string& pool_key, const std::string& pool_name, bool prefill) {
  const std::string key = pool_key + (prefill ? "\x01p" : "\x01d");
  const auto it = classes_.find(key);
  if (it != classes_.end()) return it->second;
  SamplingClass& c = classes_[key];
  c.name = pool_name + (prefill ? ".prefill" : ".decode");
  c.period = spec_.period;
  c.offset = rng_() % uint64_t(spec_.period);  // the systematic sample's seeded phase
  c.lo.fill(std::numeric_limits<double>::infinity());
  c.hi.fill(-std::numeric_limits<double>::infinity());
  return c;
}

StepSampler::Use StepSampler::decide(SamplingClass& c, const StepFeatures& x) {
  ++c.steps;
  if (replay_) return Use::predicted;
  if (c.ns.samples() < size_t(spec_.warmup)) return Use::warmup;
  for (size_t i = 1; i < kStepFeatures; ++i)
    if (x[i] > 1.25 * c.hi[i] || x[i] < 0.8 * c.lo[i]) return Use::novel;
  // On probation (every step held back) until the fit has been measured on `window` steps it had
  // not seen, and again while their error is above the target.
  if (c.probation) return Use::held_back;
  if ((uint64_t(c.steps) + c.offset) % uint64_t(c.period) == 0) return Use::held_back;
  return Use::predicted;
}

CostVector StepSampler::predict(SamplingClass& c, const StepFeatures& x) {
  if (c.ns.samples() == 0) throw std::logic_error("sampling: class " + c.name + " predicted before any detailed step");
  // A fit is not asked to extrapolate (novel steps are simulated), but a linear form can still
  // dip below zero between its samples: no step costs less than half the cheapest seen.
  CostVector p;
  p.ns = std::max(c.ns.predict(x), 0.5 * c.min_ns);
  p.energy_j = std::max(c.energy.predict(x), 0.0);
  p.hbm_bytes = std::max(c.bytes.predict(x), 0.0);
  p.static_j = c.static_w * p.ns;
  p.energy_j += p.static_j;
  return p;
}

void StepSampler::held_back(SamplingClass& c, const CostVector& predicted, const CostVector& detailed, double now_ns) {
  ++c.held_back;
  c.held_ns.push_back({predicted.ns, detailed.ns, now_ns});
  c.held_energy.push_back({predicted.energy_j - predicted.static_j, detailed.energy_j - detailed.static_j, now_ns});
  // Probation and the period follow the error of the last `window` held-back steps.
  ++c.since_change;
  const size_t n = std::min(c.held_ns.size(), size_t(spec_.window));
  double sq = 0;
  for (size_t i = c.held_ns.size() - n; i < c.held_ns.size(); ++i) {
    const double e = c.held_ns[i].detailed / c.held_ns[i].predicted - 1.0;
    sq += e * e;
  }
  const double rms = std::sqrt(sq / double(n));
  if (n < size_t(spec_.window) || rms > spec_.target_error) {
    c.probation = true;
    c.period = spec_.period;
    c.since_change = 0;
  } else if (c.probation) {
    c.probation = false;
    c.since_change = 0;
  } else if (rms < 0.5 * spec_.target_error && c.since_change >= spec_.window && c.period < spec_.max_period) {
    c.period = std::min(spec_.max_period, c.period * 2);
    c.since_change = 0;
  }
}

void StepSampler::learn(SamplingClass& c, const StepFeatures& x, const CostVector& cost, Use use) {
  ++c.detailed;
  if (use == Use::warmup) ++c.warmup;
  if (use == Use::novel) ++c.novel;
  for (size_t i = 0; i < kStepFeatures; ++i) {
    c.lo[i] = std::min(c.lo[i], x[i]);
    c.hi[i] = std::max(c.hi[i], x[i]);
  }
  c.min_ns = c.min_ns > 0 ? std::min(c.min_ns, cost.ns) : cost.ns;
  c.ns.add(x, cost.ns);
  c.energy.add(x, cost.energy_j - cost.static_j);
  c.bytes.add(x, cost.hbm_bytes);
  if (cost.ns > 0) c.static_w = cost.static_j / cost.ns;
}

StepSampler StepSampler::replay(int k) const {
  StepSampler s = *this;
  s.replay_ = true;
  s.rng_.seed(spec_.seed * 1000003u + uint64_t(k) + 1);
  s.reference_ = k == 0;
  std::normal_distribution<double> normal(0.0, 1.0);
  for (auto& [key, c] : s.classes_) {
    c.steps_main = c.steps;
    c.steps = 0;
    c.replay_z = normal(s.rng_);
  }
  return s;
}

// A replayed step's cost: the prediction with the measured error of a held-back step drawn at
// random (time and energy of the same step, so their correlation is kept) and the class's bias,
// on a predicted step only (in the sampled run a detailed step had no error): with the
// probability of the class's steps being predicted there. Replay 0, the reference, is unperturbed.
CostVector StepSampler::perturb(SamplingClass& c, CostVector p, double now_ns) {
  if (!replay_ || reference_ || c.held_ns.empty()) return p;
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const double predicted = c.steps_main > 0 ? 1.0 - double(c.detailed) / double(c.steps_main) : 0.0;
  if (u(rng_) >= predicted) return p;
  // The `window` held-back steps nearest in time (held in time order).
  const size_t n = c.held_ns.size(), w = std::min(n, size_t(spec_.window));
  const size_t at = size_t(std::lower_bound(c.held_ns.begin(), c.held_ns.end(), now_ns,
                                            [](const HeldBack& h, double t) { return h.at_ns < t; }) -
                           c.held_ns.begin());
  const size_t first = std::min(n - w, at > w / 2 ? at - w / 2 : 0);
  const HeldBack* near_ns = c.held_ns.data() + first;
  const HeldBack* near_energy = c.held_energy.data() + first;
  const ErrorStats e = error_stats(near_ns, near_ns + w), f = error_stats(near_energy, near_energy + w);
  // The local bias, drawn within its standard error, times one step's error about it.
  const size_t j = size_t(rng_() % w);
  const double step_ns = near_ns[j].detailed / near_ns[j].predicted / e.ratio;
  const double step_energy =
      near_energy[j].predicted > 0 && f.ratio > 0 ? near_energy[j].detailed / near_energy[j].predicted / f.ratio : 1.0;
  const double dynamic = (p.energy_j - p.static_j) * (f.ratio + f.ratio_se * c.replay_z) * step_energy;
  p.ns *= (e.ratio + e.ratio_se * c.replay_z) * step_ns;
  p.static_j = c.static_w * p.ns;
  p.energy_j = std::max(0.0, dynamic) + p.static_j;
  return p;
}

SamplingResult sampling_result(const StepSampler& s) {
  SamplingResult r;
  r.spec = s.spec();
  for (const auto& [key, c] : s.classes())
    r.classes.push_back({c.name, c.steps, c.detailed, c.warmup, c.novel, c.held_back, c.period, error_stats(c.held_ns),
                         error_stats(c.held_energy)});
  return r;
}

ErrorStats error_stats(const HeldBack* first, const HeldBack* last) {
  ErrorStats s;
  s.n = size_t(last - first);
  if (s.n == 0) return s;
  double sum = 0, sq = 0, sum_p = 0, sum_d = 0;
  for (const HeldBack* h = first; h != last; ++h) {
    const double e = h->predicted > 0 ? h->detailed / h->predicted - 1.0 : 0.0;
    sum += e;
    sq += e * e;
    s.max_abs = std::max(s.max_abs, std::fabs(e));
    sum_p += h->predicted;
    sum_d += h->detailed;
  }
  s.mean = sum / double(s.n);
  s.rms = std::sqrt(sq / double(s.n));
  if (sum_p > 0) s.ratio = sum_d / sum_p;
  if (s.n > 1 && sum_p > 0) {
    double var = 0;
    for (const HeldBack* h = first; h != last; ++h)
      var += (h->detailed - s.ratio * h->predicted) * (h->detailed - s.ratio * h->predicted);
    var /= double(s.n - 1);
    s.ratio_se = std::sqrt(var / double(s.n)) / (sum_p / double(s.n));
  }
  return s;
}

}  // namespace ahbm::serve
