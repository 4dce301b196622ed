#include "runtime/reference.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ahbm {

namespace {

using RowMajorD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// A run of keys and values: `n` rows of d floats each, row-major.
struct KvChunk {
  const float* k;
  const float* v;
  long n;
};

// may_attend(row, key) -> bool, key indexing the concatenation of the chunks; a template
// parameter so the per-score test inlines. Scores are kept for whole rows (exact two-pass
// softmax); K and V are widened to float64 one chunk at a time, so the reference reads a job's
// shards in place instead of a flattened copy.
template <class MayAttend>
Eigen::MatrixXd reference_core(const std::vector<float>& q, const std::vector<KvChunk>& chunks, int d, double scale,
                               const MayAttend& may_attend) {
  const long n_rows = long(q.size()) / d;
  long n_kv = 0;
  for (const KvChunk& c : chunks) n_kv += c.n;
  Eigen::MatrixXd out = Eigen::MatrixXd::Zero(n_rows, d);
  // Rows per block: as many as keep the score block within 16 MiB (bounded memory for long
  // sequences), so each chunk is widened and packed for the products as few times as possible.
  const long block = std::max(1L, std::min(std::max(n_rows, 1L), (16L << 20) / (8 * std::max(n_kv, 1L))));
  RowMajorD s, wide;  // the score block; one chunk of K or V in float64
  for (long r0 = 0; r0 < n_rows; r0 += block) {
    const long nr = std::min(block, n_rows - r0);
    const RowMajorD Q = Eigen::Map<const MatrixRM>(q.data() + r0 * d, nr, d).cast<double>();
    s.resize(nr, n_kv);
    long at = 0;
    for (const KvChunk& c : chunks) {
      wide = Eigen::Map<const MatrixRM>(c.k, c.n, d).cast<double>();
      s.middleCols(at, c.n).noalias() = Q * wide.transpose();
      at += c.n;
    }
    for (long r = 0; r < nr; ++r) {
      double mx = -std::numeric_limits<double>::infinity();
      for (long c = 0; c < n_kv; ++c) {
        s(r, c) = may_attend(r0 + r, c) ? s(r, c) * scale : -std::numeric_limits<double>::infinity();
        mx = std::max(mx, s(r, c));
      }
      if (mx == -std::numeric_limits<double>::infinity()) {
        s.row(r).setZero();
        continue;
      }
      double sum = 0;
      for (long c = 0; c < n_kv; ++c) sum += (s(r, c) = std::exp(s(r, c) - mx));
      s.row(r) /= sum;
    }
    auto o = out.middleRows(r0, nr);
    at = 0;
    for (const KvChunk& c : chunks) {
      wide = Eigen::Map<const MatrixRM>(c.v, c.n, d).cast<double>();
      o.noalias() += s.middleCols(at, c.n) * wide;
      at += c.n;
    }
  }
  return out;
}

std::vector<KvChunk> one_chunk(const std::vector<float>& k, const std::vector<float>& v, int d) {
  return {KvChunk{k.data(), v.data(), long(k.size()) / d}};
}

}  // namespace

Eigen::MatrixXd reference_attention_masked(const std::vector<float>& q, const std::vector<float>& k,
                                           const std::vector<float>& v, const std::vector<uint8_t>& mask, int d,
                                           double scale) {
  const long n_kv = long(k.size()) / d;
  return reference_core(q, one_chunk(k, v, d), d, scale, [&](long r, long c) { return mask[size_t(r * n_kv + c)] != 0; });
}

std::vector<uint8_t> visibility_mask(const std::vector<RowInfo>& rows, const std::vector<KvInfo>& kv) {
  std::vector<uint8_t> mask(rows.size() * kv.size());
  for (size_t r = 0; r < rows.size(); ++r)
    for (size_t c = 0; c < kv.size(); ++c) mask[r * kv.size() + c] = visible(rows[r], kv[c]);
  return mask;
}

Eigen::MatrixXd reference_attention(const std::vector<float>& q, const std::vector<RowInfo>& rows,
                                    const std::vector<float>& k, const std::vector<float>& v,
                                    const std::vector<KvInfo>& kv, int d, double scale) {
  return reference_core(q, one_chunk(k, v, d), d, scale,
                        [&](long r, long c) { return visible(rows[size_t(r)], kv[size_t(c)]); });
}

Eigen::MatrixXd reference_attention(const AttentionJob& job, double scale) {
  std::vector<KvChunk> chunks;
  std::vector<const KvInfo*> info;  // key index -> its metadata, across the shards
  for (const KvShard& s : job.shards) {
    if (s.tokens > 0) chunks.push_back({s.k.data(), s.v.data(), long(s.tokens)});
    for (const KvInfo& k : s.info) info.push_back(&k);
  }
  return reference_core(job.q, chunks, job.head_dim, scale,
                        [&](long r, long c) { return visible(job.rows[size_t(r)], *info[size_t(c)]); });
}

NumericCheck compare_to_reference(const MatrixRM& o, const Eigen::MatrixXd& ref) {
  NumericCheck c;
  if (ref.size() == 0) return c;
  c.ref_max_abs = ref.cwiseAbs().maxCoeff();
  c.max_abs_err = (o.cast<double>() - ref).cwiseAbs().maxCoeff();
  c.max_rel_err = c.ref_max_abs > 0 ? c.max_abs_err / c.ref_max_abs : c.max_abs_err;
  return c;
}

NumericCheck worst_of(const NumericCheck& a, const NumericCheck& b) {
  NumericCheck w;
  w.max_abs_err = std::max(a.max_abs_err, b.max_abs_err);
  w.max_rel_err = std::max(a.max_rel_err, b.max_rel_err);
  w.ref_max_abs = std::max(a.ref_max_abs, b.ref_max_abs);
  return w;
}

}  // namespace ahbm
