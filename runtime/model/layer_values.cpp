#include "runtime/model/layer_values.h"

#include <cmath>
#include <functional>

#include "hw/common/contract/job.h"
#include "hw/common/model/vector_ops.h"
#include "runtime/model/layer_plan.h"
#include "runtime/numerics/tensor_gen.h"

namespace ahbm {

namespace {

// A layer's tensors, in the order of layer_operators()'s fused tensors (q, k, v, o, gate, up,
// down), then the two norm weights and the layer input (generator "head" numbers within a layer).
enum : int { kQ, kK, kV, kO, kGate, kUp, kDown, kNormIn, kNormPost, kInput, kTensors };

struct LayerWeights {
  std::vector<Eigen::MatrixXf> w;  // kQ .. kDown: K × N, stored (rounded to the dtype); an MoE
                                   // layer's kGate .. kDown are expert 0's
  Eigen::VectorXf norm_in, norm_post;
  Eigen::MatrixXf x;               // M × h, the layer input (fp32)
  // MoE: the router (h × E) and per expert its gate, up, down (experts[e][0..2]).
  Eigen::MatrixXf router;
  std::vector<std::vector<Eigen::MatrixXf>> experts;
};

int gen_id(int layer, int tensor) { return layer * kTensors + tensor; }
// MoE tensors' generator ids: expert 0's FFN is the dense layer's (kGate + i); expert e > 0's and
// the router's are numbered apart from every dense id.
constexpr int kMoeIds = 1 << 20;
int expert_id(int layer, int experts, int e, int i) {
  return e == 0 ? gen_id(layer, kGate + i) : kMoeIds + (layer * experts + e) * 3 + i;
}
int router_id(int layer) { return kMoeIds - 1 - layer; }

Eigen::MatrixXf stored_weight(uint64_t seed, DType t, int id, int64_t K, int64_t N) {
  Eigen::MatrixXf w(K, N);
  const float s = 1.0f / std::sqrt(float(K));
  for (int64_t r = 0; r < K; ++r)
    for (int64_t c = 0; c < N; ++c) w(r, c) = round_to(t, s * tensor_value(seed, TensorKind::weight, id, 0, r, c));
  return w;
}

LayerWeights make_weights(const ModelConfig& m, DType t, int rows, uint64_t seed, int layer) {
  const int64_t h = m.hidden_size, f = m.intermediate_size, q = m.q_dim(), kv = m.kv_dim();
  const std::pair<int64_t, int64_t> shape[] = {{h, q}, {h, kv}, {h, kv}, {q, h}, {h, f}, {h, f}, {f, h}};
  LayerWeights lw;
  for (int i = kQ; i <= kDown; ++i) lw.w.push_back(stored_weight(seed, t, gen_id(layer, i), shape[i].first, shape[i].second));
  if (m.moe()) {
    const int E = m.num_local_experts;
    lw.router = stored_weight(seed, t, router_id(layer), h, E);
    for (int e = 0; e < E; ++e) {
      lw.experts.emplace_back();
      for (int i = 0; i < 3; ++i)
        lw.experts.back().push_back(e == 0 ? lw.w[size_t(kGate + i)]
                                           : stored_weight(seed, t, expert_id(layer, E, e, i), shape[kGate + i].first,
                                                           shape[kGate + i].second));
    }
  }
  auto norm = [&](int id) {
    Eigen::VectorXf g(h);
    for (int64_t c = 0; c < h; ++c) g[c] = round_to(t, 1.0f + 0.125f * tensor_value(seed, TensorKind::weight, gen_id(layer, id), 0, 0, c));
    return g;
  };
  lw.norm_in = norm(kNormIn);
  lw.norm_post = norm(kNormPost);
  lw.x.resize(rows, h);
  for (int r = 0; r < rows; ++r)
    for (int64_t c = 0; c < h; ++c) lw.x(r, c) = tensor_value(seed, TensorKind::activation, gen_id(layer, kInput), 0, r, c);
  return lw;
}

// float64 helpers of the reference.
Eigen::MatrixXd rms_norm(const Eigen::MatrixXd& x, const Eigen::VectorXf& g, double eps) {
  Eigen::MatrixXd y = x;
  for (Eigen::Index r = 0; r < x.rows(); ++r) {
    const double s = 1.0 / std::sqrt(x.row(r).squaredNorm() / double(x.cols()) + eps);
    for (Eigen::Index c = 0; c < x.cols(); ++c) y(r, c) = x(r, c) * s * double(g[c]);
  }
  return y;
}

void rope(Eigen::MatrixXd& y, int heads, const ModelConfig& m) {
  const int d = m.head_dim;
  for (Eigen::Index r = 0; r < y.rows(); ++r)
    for (int hd = 0; hd < heads; ++hd)
      for (int j = 0; j < d / 2; ++j) {
        const double a = rope_angle(r, j, d, m.rope_theta);
        const Eigen::Index c = hd * d + 2 * j;
        const double u = y(r, c), w = y(r, c + 1);
        y(r, c) = u * std::cos(a) - w * std::sin(a);
        y(r, c + 1) = u * std::sin(a) + w * std::cos(a);
      }
}

Eigen::MatrixXd dbl(const Eigen::MatrixXf& a) { return a.cast<double>(); }

// The model-wide tensors' generator ids, after the last layer's (gen_id(L, ·)).
enum : int { kEmbed, kLmHead, kNormFinal, kHeadInput };

struct HeadWeights {
  Eigen::MatrixXf w;       // h × V, stored
  Eigen::VectorXf norm;    // the final norm's weight
  Eigen::MatrixXf x;       // rows × h, the last layer's output rows
};

HeadWeights make_head(const ModelConfig& m, DType t, int rows, uint64_t seed) {
  const int64_t h = m.hidden_size, V = m.vocab_size;
  const int L = m.num_hidden_layers;
  const int w_id = gen_id(L, m.tie_word_embeddings ? kEmbed : kLmHead);
  HeadWeights hw;
  hw.w.resize(h, V);
  const float s = 1.0f / std::sqrt(float(h));
  for (int64_t r = 0; r < h; ++r)
    for (int64_t c = 0; c < V; ++c) hw.w(r, c) = round_to(t, s * tensor_value(seed, TensorKind::weight, w_id, 0, r, c));
  hw.norm.resize(h);
  for (int64_t c = 0; c < h; ++c)
    hw.norm[c] = round_to(t, 1.0f + 0.125f * tensor_value(seed, TensorKind::weight, gen_id(L, kNormFinal), 0, 0, c));
  hw.x.resize(rows, h);
  for (int r = 0; r < rows; ++r)
    for (int64_t c = 0; c < h; ++c) hw.x(r, c) = tensor_value(seed, TensorKind::activation, gen_id(L, kHeadInput), 0, r, c);
  return hw;
}

}  // namespace

double layer_tolerance(DType t) {
  // Relative to the layer output's largest |value|. The layer rounds its activations to the
  // storage type five times on the way (X of each GEMM, Q, K and V): each rounding errs by at
  // most u relative (fp16 2^-11, bf16 2^-8), and the GEMMs sum K of them with random signs, so
  // the output errs by about one u relative to its scale (measured on the small model: 0.66 u
  // in fp16, 0.64 u in bf16); 4 u leaves room for seeds and shapes where the norms or a peaked
  // softmax amplify it. fp32 rounds nothing: fp32 accumulation over K ≤ 2^12 terms (measured
  // 4e-7).
  switch (t) {
    case DType::fp16: return 4.0 / 2048.0;
    case DType::bf16: return 4.0 / 256.0;
    default: return 1e-5;
  }
}

namespace {

// The gated FFN of one set of gate, up, down weights on the normed rows.
Eigen::MatrixXd reference_ffn(const ModelConfig& m, const Eigen::MatrixXd& hn, const Eigen::MatrixXf& gate,
                              const Eigen::MatrixXf& up, const Eigen::MatrixXf& down) {
  const Eigen::MatrixXd g = hn * dbl(gate), u = hn * dbl(up);
  Eigen::MatrixXd a(hn.rows(), g.cols());
  for (Eigen::Index r = 0; r < a.rows(); ++r)
    for (Eigen::Index c = 0; c < a.cols(); ++c) a(r, c) = hidden_act_ref(m.hidden_act, g(r, c)) * u(r, c);
  return a * dbl(down);
}

}  // namespace

Eigen::MatrixXd reference_router_logits(const ModelConfig& m, DType t, int rows, uint64_t seed, int layer) {
  Eigen::MatrixXd h1, hn;
  reference_layer(m, t, rows, seed, layer, nullptr, &h1, &hn);
  return hn * dbl(make_weights(m, t, rows, seed, layer).router);
}

Eigen::MatrixXd reference_layer(const ModelConfig& m, DType t, int rows, uint64_t seed, int layer, const Routing* routing,
                                Eigen::MatrixXd* h1_out, Eigen::MatrixXd* hn_out) {
  const LayerWeights lw = make_weights(m, t, rows, seed, layer);
  const int d = m.head_dim, H = m.num_attention_heads, qpk = H / m.num_key_value_heads;
  const Eigen::MatrixXd x = dbl(lw.x);
  const Eigen::MatrixXd xn = rms_norm(x, lw.norm_in, m.rms_norm_eps);
  Eigen::MatrixXd q = xn * dbl(lw.w[kQ]), k = xn * dbl(lw.w[kK]);
  const Eigen::MatrixXd v = xn * dbl(lw.w[kV]);
  rope(q, H, m);
  rope(k, m.num_key_value_heads, m);
  Eigen::MatrixXd att = Eigen::MatrixXd::Zero(rows, m.q_dim());
  for (int hd = 0; hd < H; ++hd) {
    const int kvh = hd / qpk;
    for (int r = 0; r < rows; ++r) {
      // Causal: row r sees keys 0 .. r. Two-pass softmax.
      std::vector<double> s(size_t(r) + 1);
      double mx = -INFINITY;
      for (int j = 0; j <= r; ++j) {
        s[size_t(j)] = q.row(r).segment(hd * d, d).dot(k.row(j).segment(kvh * d, d)) / std::sqrt(double(d));
        mx = std::max(mx, s[size_t(j)]);
      }
      double l = 0;
      for (double& e : s) l += (e = std::exp(e - mx));
      for (int j = 0; j <= r; ++j) att.row(r).segment(hd * d, d) += s[size_t(j)] / l * v.row(j).segment(kvh * d, d);
    }
  }
  const Eigen::MatrixXd h1 = x + att * dbl(lw.w[kO]);
  const Eigen::MatrixXd hn = rms_norm(h1, lw.norm_post, m.rms_norm_eps);
  if (h1_out) *h1_out = h1;
  if (hn_out) *hn_out = hn;
  if (!m.moe()) return h1 + reference_ffn(m, hn, lw.w[kGate], lw.w[kUp], lw.w[kDown]);
  // MoE: each row through its top-k experts, weighted (the routing given, else the float64 router's).
  Routing own;
  if (!routing) {
    const Eigen::MatrixXd logits = hn * dbl(lw.router);
    std::vector<float> l(size_t(logits.size()));
    for (Eigen::Index r = 0; r < logits.rows(); ++r)
      for (Eigen::Index e = 0; e < logits.cols(); ++e) l[size_t(r * logits.cols() + e)] = float(logits(r, e));
    own = route(l.data(), rows, m.num_local_experts, m.num_experts_per_tok);
    routing = &own;
  }
  Eigen::MatrixXd y = h1;
  for (int e = 0; e < m.num_local_experts; ++e) {
    const std::vector<Eigen::MatrixXf>& w = lw.experts[size_t(e)];
    const Eigen::MatrixXd f = reference_ffn(m, hn, w[0], w[1], w[2]);
    for (int r = 0; r < rows; ++r) y.row(r) += double(routing->weight_of(r, e)) * f.row(r);
  }
  return y;
}

LayerValues run_layer_values(const ModelConfig& m, DType t, const HwConfig& hw, int rows, uint64_t seed, int layer,
                             const ModelFusion& fusion) {
  const LayerWeights lw = make_weights(m, t, rows, seed, layer);
  const MemoryMap map = plan_memory(m, t, hw);
  std::vector<int64_t> positions(static_cast<size_t>(rows));
  for (int r = 0; r < rows; ++r) positions[size_t(r)] = r;
  const std::vector<LayerOperator> ops = layer_operators();
  Simulator sim(hw);
  LayerValues out;

  // Operator `op` on rows `x` (rounded to the storage type: the broadcast) with weights `w` (one
  // per tensor of op) and `fuse` setting its vector operators' values; returns Y unpacked to the
  // operator's tensors' own columns: per tensor an M × N matrix.
  using Fill = std::function<void(GemmJob&, const OperatorLayout&)>;
  auto run_op = [&](const LayerOperator& op, const std::vector<int64_t>& pos, const std::vector<const Eigen::MatrixXf*>& w,
                    const Eigen::MatrixXf& x, const Fill& fuse) {
    GemmJob j = layer_operator_gemm(m, t, map, op, pos, "prefill", layer, fusion);
    const OperatorLayout L = operator_layout(m, map, layer, op);
    j.x.resize(size_t(j.m) * size_t(j.k));
    for (int r = 0; r < j.m; ++r)
      for (int c = 0; c < j.k; ++c) j.x[size_t(r) * size_t(j.k) + size_t(c)] = round_to(t, x(r, c));
    j.w.resize(size_t(j.k) * size_t(j.n));
    for (int r = 0; r < j.k; ++r)
      for (int c = 0; c < j.n; ++c) j.w[size_t(r) * size_t(j.n) + size_t(c)] = (*w[size_t(L.tensor[size_t(c)])])(r, L.column[size_t(c)]);
    if (fuse) fuse(j, L);
    const SimResult r = sim.run_gemms({j});
    out.sim_ns += r.end_ns;
    std::vector<Eigen::MatrixXf> y;
    for (const Eigen::MatrixXf* wt : w) y.emplace_back(j.m, wt->cols());
    for (int row = 0; row < j.m; ++row)
      for (int c = 0; c < j.n; ++c) y[size_t(L.tensor[size_t(c)])](row, L.column[size_t(c)]) = r.gemm_outputs[0](row, c);
    return y;
  };
  // Fusion values: a norm weight; residual rows (their columns in the operator's fused order:
  // its single tensor's) with optional per-row weights.
  auto norm = [](const Eigen::VectorXf& g) {
    return Fill([&g](GemmJob& j, const OperatorLayout&) {
      if (j.fused.rms_norm) j.fused.norm_weight.assign(g.data(), g.data() + g.size());
    });
  };
  // An unfused operator's kernel on rows `x` (M × N in the kernel's column order); its output rows.
  auto run_kernel = [&](VectorKernelJob k, const Eigen::MatrixXf& x) {
    k.x.resize(size_t(k.m) * size_t(k.n));
    for (int r = 0; r < k.m; ++r)
      for (int c = 0; c < k.n; ++c) k.x[size_t(r) * size_t(k.n) + size_t(c)] = x(r, c);
    const SimResult r = sim.run_vector_kernels({k});
    out.sim_ns += r.end_ns;
    return Eigen::MatrixXf(r.kernel_outputs.at(0));
  };
  // The RMSNorm kernel `op` with weight g on the residual rows x (fp32): the next GEMM's X.
  auto norm_rows = [&](const std::string& op, const Eigen::VectorXf& g, const Eigen::MatrixXf& x) {
    VectorKernelJob k = norm_kernel(m, t, map, op, int(x.rows()), "prefill", layer);
    k.fused.norm_weight.assign(g.data(), g.data() + g.size());
    return run_kernel(std::move(k), x);
  };
  auto residual = [](const Eigen::MatrixXf& res, std::vector<float> scale = {}) {
    return Fill([&res, scale](GemmJob& j, const OperatorLayout& L) {
      std::vector<float>& v = j.fused.residual_values;
      v.resize(size_t(j.m) * L.column.size());
      for (int r = 0; r < j.m; ++r)
        for (size_t c = 0; c < L.column.size(); ++c) v[size_t(r) * L.column.size() + c] = res(r, L.column[c]);
      j.fused.residual_scale = scale;
    });
  };

  // qkv_proj: input RMSNorm, RoPE on Q and K (each fused, or a kernel before or after it).
  const Eigen::MatrixXf x_in = fusion.norm ? lw.x : norm_rows("input_norm", lw.norm_in, lw.x);
  std::vector<Eigen::MatrixXf> qkv = run_op(ops[0], positions, {&lw.w[kQ], &lw.w[kK], &lw.w[kV]}, x_in, norm(lw.norm_in));
  if (!fusion.linear_rope) {
    // The kernel rotates qkv_proj's Y where it lies: in the operator's fused column order.
    const OperatorLayout L = operator_layout(m, map, layer, ops[0]);
    Eigen::MatrixXf y(rows, Eigen::Index(L.column.size()));
    for (int r = 0; r < rows; ++r)
      for (Eigen::Index c = 0; c < y.cols(); ++c) y(r, c) = qkv[size_t(L.tensor[size_t(c)])](r, L.column[size_t(c)]);
    const Eigen::MatrixXf rotated = run_kernel(rope_kernel(m, map, positions, "prefill", layer), y);
    for (int r = 0; r < rows; ++r)
      for (Eigen::Index c = 0; c < y.cols(); ++c) qkv[size_t(L.tensor[size_t(c)])](r, L.column[size_t(c)]) = rotated(r, c);
  }

  // Attention: one job per KV head, its query heads' rows stacked (head-major), the M tokens' K
  // and V spread over the group's PEs token by token.
  const int d = m.head_dim, qpk = m.num_attention_heads / m.num_key_value_heads, pes = hw.pes_per_group();
  std::vector<AttentionJob> att(size_t(m.num_key_value_heads));
  for (int kvh = 0; kvh < m.num_key_value_heads; ++kvh) {
    AttentionJob& a = att[size_t(kvh)];
    a.phase = "prefill";
    a.group = kvh % hw.groups;
    a.head_dim = d;
    a.dtype = t;
    a.scale = 1.0f / std::sqrt(float(d));
    a.agents = {"main"};
    a.scores_in_hbm = !fusion.attention;
    for (int hq = 0; hq < qpk; ++hq)
      for (int r = 0; r < rows; ++r) {
        a.rows.push_back(RowInfo{0, r});
        for (int i = 0; i < d; ++i) a.q.push_back(round_to(t, qkv[0](r, (kvh * qpk + hq) * d + i)));
      }
    a.tiles = {QTile(0, a.row_count())};
    a.shards.resize(size_t(pes));
    for (int r = 0; r < rows; ++r) {
      KvShard& s = a.shards[size_t(r % pes)];
      ++s.tokens;
      s.info.push_back(KvInfo{kSharedOwner, r});
      for (int i = 0; i < d; ++i) {
        s.k.push_back(round_to(t, qkv[1](r, kvh * d + i)));
        s.v.push_back(round_to(t, qkv[2](r, kvh * d + i)));
      }
    }
  }
  const SimResult ar = sim.run(att);
  out.sim_ns += ar.end_ns;
  Eigen::MatrixXf o(rows, m.q_dim());
  for (int kvh = 0; kvh < m.num_key_value_heads; ++kvh)
    for (int hq = 0; hq < qpk; ++hq)
      for (int r = 0; r < rows; ++r)
        for (int i = 0; i < d; ++i) o(r, (kvh * qpk + hq) * d + i) = ar.outputs[size_t(kvh)](hq * rows + r, i);

  // o_proj + residual x; gate_up with the post-attention RMSNorm and the activation; down + h.
  const Eigen::MatrixXf h1 = run_op(ops[1], positions, {&lw.w[kO]}, o, residual(lw.x))[0];
  // The FFN's input: h1, normed in its GEMMs' prologue, or by a kernel of its own.
  const Eigen::MatrixXf h_ffn = fusion.norm ? h1 : norm_rows("post_attention_norm", lw.norm_post, h1);
  Eigen::MatrixXf y;
  if (!m.moe()) {
    const Eigen::MatrixXf act = run_op(ops[2], positions, {&lw.w[kGate], &lw.w[kUp]}, h_ffn, norm(lw.norm_post))[0];  // gate columns: act(gate) · up
    y = run_op(ops[3], positions, {&lw.w[kDown]}, act, residual(h1))[0];
  } else {
    // The router (the post-attention RMSNorm fused) on every row, its logits routed on the host;
    // then per expert its rows through gate_up and down, the down projection adding them into the
    // residual stream with their weights (one run per expert: each reads the stream the one before
    // left).
    const Eigen::MatrixXf logits = run_op(moe_router_operator(), positions, {&lw.router}, h_ffn, norm(lw.norm_post))[0];
    std::vector<float> flat;  // row-major
    for (int r = 0; r < rows; ++r)
      for (int e = 0; e < m.num_local_experts; ++e) flat.push_back(logits(r, e));
    out.routing = route(flat.data(), rows, m.num_local_experts, m.num_experts_per_tok);
    y = h1;
    const std::vector<std::vector<int>> rows_of = out.routing.rows_of_expert();
    for (int e = 0; e < m.num_local_experts; ++e) {
      const std::vector<int>& mine = rows_of[size_t(e)];
      if (mine.empty()) continue;
      const std::vector<int64_t> pos(mine.size(), 0);
      Eigen::MatrixXf x_e(Eigen::Index(mine.size()), h1.cols()), y_e(Eigen::Index(mine.size()), y.cols());
      std::vector<float> weight;
      for (size_t i = 0; i < mine.size(); ++i) {
        x_e.row(Eigen::Index(i)) = h_ffn.row(mine[i]);
        y_e.row(Eigen::Index(i)) = y.row(mine[i]);
        weight.push_back(out.routing.weight_of(mine[i], e));
      }
      const std::vector<LayerOperator> eops = moe_expert_operators(e);
      const std::vector<Eigen::MatrixXf>& w = lw.experts[size_t(e)];
      const Eigen::MatrixXf act = run_op(eops[0], pos, {&w[0], &w[1]}, x_e, norm(lw.norm_post))[0];
      const Eigen::MatrixXf sum = run_op(eops[1], pos, {&w[2]}, act, residual(y_e, weight))[0];
      for (size_t i = 0; i < mine.size(); ++i) y.row(mine[i]) = sum.row(Eigen::Index(i));
    }
    const Eigen::MatrixXd ref_logits = reference_router_logits(m, t, rows, seed, layer);
    std::vector<float> l;
    for (Eigen::Index r = 0; r < ref_logits.rows(); ++r)
      for (Eigen::Index e = 0; e < ref_logits.cols(); ++e) l.push_back(float(ref_logits(r, e)));
    out.routing_matches_reference =
        route(l.data(), rows, m.num_local_experts, m.num_experts_per_tok).expert == out.routing.expert;
  }

  out.out = y;
  out.reference = reference_layer(m, t, rows, seed, layer, m.moe() ? &out.routing : nullptr);
  out.max_abs_err = (y.cast<double>() - out.reference).cwiseAbs().maxCoeff();
  out.ref_max_abs = out.reference.cwiseAbs().maxCoeff();
  return out;
}

Eigen::MatrixXd reference_head(const ModelConfig& m, DType t, int rows, uint64_t seed) {
  const HeadWeights hv = make_head(m, t, rows, seed);
  return rms_norm(dbl(hv.x), hv.norm, m.rms_norm_eps) * dbl(hv.w);
}

HeadValues run_head_values(const ModelConfig& m, DType t, const HwConfig& hw, int rows, uint64_t seed) {
  const HeadWeights hv = make_head(m, t, rows, seed);
  GemmJob j = lm_head_gemm(m, t, plan_memory(m, t, hw), rows, "decode");
  // One tensor in PE order: the job's columns are the vocabulary's in order.
  j.x.resize(size_t(rows) * size_t(j.k));
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < j.k; ++c) j.x[size_t(r) * size_t(j.k) + size_t(c)] = round_to(t, hv.x(r, c));
  j.w.resize(size_t(j.k) * size_t(j.n));
  for (int r = 0; r < j.k; ++r)
    for (int c = 0; c < j.n; ++c) j.w[size_t(r) * size_t(j.n) + size_t(c)] = hv.w(r, c);
  j.fused.norm_weight.assign(hv.norm.data(), hv.norm.data() + hv.norm.size());
  const SimResult r = Simulator(hw).run_gemms({j});
  HeadValues out;
  out.logits = r.gemm_outputs.at(0);
  out.sim_ns = r.end_ns;
  out.reference = reference_head(m, t, rows, seed);
  out.max_abs_err = (out.logits.cast<double>() - out.reference).cwiseAbs().maxCoeff();
  out.ref_max_abs = out.reference.cwiseAbs().maxCoeff();
  return out;
}

}  // namespace ahbm
