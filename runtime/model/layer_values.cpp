#include "runtime/model/layer_values.h"

#include <cmath>

#include "hw/common/job.h"
#include "hw/common/vector_ops.h"
#include "runtime/model/layer_plan.h"
#include "runtime/tensor_gen.h"

namespace ahbm {

namespace {

// A layer's tensors, in the order of layer_operators()'s fused tensors (q, k, v, o, gate, up,
// down), then the two norm weights and the layer input (generator "head" numbers within a layer).
enum : int { kQ, kK, kV, kO, kGate, kUp, kDown, kNormIn, kNormPost, kInput, kTensors };

struct LayerWeights {
  std::vector<Eigen::MatrixXf> w;  // kQ .. kDown: K × N, stored (rounded to the dtype)
  Eigen::VectorXf norm_in, norm_post;
  Eigen::MatrixXf x;               // M × h, the layer input (fp32)
};

int gen_id(int layer, int tensor) { return layer * kTensors + tensor; }

LayerWeights make_weights(const ModelConfig& m, DType t, int rows, uint64_t seed, int layer) {
  const int64_t h = m.hidden_size, f = m.intermediate_size, q = m.q_dim(), kv = m.kv_dim();
  const std::pair<int64_t, int64_t> shape[] = {{h, q}, {h, kv}, {h, kv}, {q, h}, {h, f}, {h, f}, {f, h}};
  LayerWeights lw;
  for (int i = kQ; i <= kDown; ++i) {
    const auto [K, N] = shape[i];
    Eigen::MatrixXf w(K, N);
    const float s = 1.0f / std::sqrt(float(K));
    for (int64_t r = 0; r < K; ++r)
      for (int64_t c = 0; c < N; ++c)
        w(r, c) = round_to(t, s * tensor_value(seed, TensorKind::weight, gen_id(layer, i), 0, r, c));
    lw.w.push_back(std::move(w));
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

// The tensors (LayerWeights indices) behind each operator's fused columns.
const std::vector<std::vector<int>>& operator_tensors() {
  static const std::vector<std::vector<int>> t = {{kQ, kK, kV}, {kO}, {kGate, kUp}, {kDown}};
  return t;
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

Eigen::MatrixXd reference_layer(const ModelConfig& m, DType t, int rows, uint64_t seed, int layer) {
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
  const Eigen::MatrixXd g = hn * dbl(lw.w[kGate]), u = hn * dbl(lw.w[kUp]);
  Eigen::MatrixXd a(rows, m.intermediate_size);
  for (Eigen::Index r = 0; r < a.rows(); ++r)
    for (Eigen::Index c = 0; c < a.cols(); ++c) a(r, c) = hidden_act_ref(m.hidden_act, g(r, c)) * u(r, c);
  return h1 + a * dbl(lw.w[kDown]);
}

LayerValues run_layer_values(const ModelConfig& m, DType t, const HwConfig& hw, int rows, uint64_t seed, int layer) {
  const LayerWeights lw = make_weights(m, t, rows, seed, layer);
  const MemoryMap map = plan_memory(m, t, hw);
  std::vector<GemmJob> jobs = layer_gemms(m, t, map, rows, "prefill", layer);
  const std::vector<LayerOperator> ops = layer_operators();
  std::vector<OperatorLayout> lay;
  for (const LayerOperator& op : ops) lay.push_back(operator_layout(m, map, layer, op));
  Simulator sim(hw);
  LayerValues out;

  // X (rounded to the storage type: the broadcast) and the fused W of operator i, then its run;
  // returns Y unpacked to the operator's tensors' own columns: per tensor an M × N matrix.
  auto run_op = [&](size_t i, const Eigen::MatrixXf& x) {
    GemmJob& j = jobs[i];
    const OperatorLayout& L = lay[i];
    const std::vector<int>& tensors = operator_tensors()[i];
    j.x.resize(size_t(j.m) * size_t(j.k));
    for (int r = 0; r < j.m; ++r)
      for (int c = 0; c < j.k; ++c) j.x[size_t(r) * size_t(j.k) + size_t(c)] = round_to(t, x(r, c));
    j.w.resize(size_t(j.k) * size_t(j.n));
    for (int r = 0; r < j.k; ++r)
      for (int c = 0; c < j.n; ++c)
        j.w[size_t(r) * size_t(j.n) + size_t(c)] = lw.w[size_t(tensors[size_t(L.tensor[size_t(c)])])](r, L.column[size_t(c)]);
    const SimResult r = sim.run_gemms({j});
    out.sim_ns += r.end_ns;
    std::vector<Eigen::MatrixXf> y;
    for (int tensor : tensors) y.emplace_back(j.m, lw.w[size_t(tensor)].cols());
    for (int row = 0; row < j.m; ++row)
      for (int c = 0; c < j.n; ++c) y[size_t(L.tensor[size_t(c)])](row, L.column[size_t(c)]) = r.gemm_outputs[0](row, c);
    return y;
  };
  // The residual rows in an operator's fused column order (its single tensor's columns).
  auto residual = [&](size_t i, const Eigen::MatrixXf& res) {
    std::vector<float> v(size_t(rows) * lay[i].column.size());
    for (int r = 0; r < rows; ++r)
      for (size_t c = 0; c < lay[i].column.size(); ++c) v[size_t(r) * lay[i].column.size() + c] = res(r, lay[i].column[c]);
    return v;
  };

  // qkv_proj: input RMSNorm, RoPE on Q and K.
  jobs[0].fused.norm_weight.assign(lw.norm_in.data(), lw.norm_in.data() + lw.norm_in.size());
  const std::vector<Eigen::MatrixXf> qkv = run_op(0, lw.x);

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
  jobs[1].fused.residual_values = residual(1, lw.x);
  const Eigen::MatrixXf h1 = run_op(1, o)[0];
  jobs[2].fused.norm_weight.assign(lw.norm_post.data(), lw.norm_post.data() + lw.norm_post.size());
  const Eigen::MatrixXf act = run_op(2, h1)[0];  // the gate columns hold act(gate) · up
  jobs[3].fused.residual_values = residual(3, h1);
  const Eigen::MatrixXf y = run_op(3, act)[0];

  out.out = y;
  out.reference = reference_layer(m, t, rows, seed, layer);
  out.max_abs_err = (y.cast<double>() - out.reference).cwiseAbs().maxCoeff();
  out.ref_max_abs = out.reference.cwiseAbs().maxCoeff();
  return out;
}

}  // namespace ahbm
