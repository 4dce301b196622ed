#pragma once
// The float64 reference: softmax(Q K^T * scale + mask) V in float64, independently of the
// datapath code (its float32 engines, tiles, SRAM blocks and state merges): one pass over the
// keys in blocks, each row keeping its running maximum, sum and weighted V sum in float64
// (rescaled when the maximum grows), so it costs the two float64 products and no buffer of
// whole score rows. Agrees with the textbook two-pass softmax within 1e-12 relative
// (test_reference.cpp).
#include <cstdint>
#include <vector>

#include <Eigen/Core>

#include "hw/common/model/attn_state.h"
#include "hw/common/contract/job.h"

namespace ahbm {

// q: rows x d, k/v: tokens x d, all row-major float32; mask: rows x tokens, nonzero = the row
// may attend to the key. Rows with no visible key give zeros.
Eigen::MatrixXd reference_attention_masked(const std::vector<float>& q, const std::vector<float>& k,
                                           const std::vector<float>& v, const std::vector<uint8_t>& mask, int d,
                                           double scale);
// The mask from the rows' and keys' metadata (hw/common/contract/job.h visible()).
std::vector<uint8_t> visibility_mask(const std::vector<RowInfo>& rows, const std::vector<KvInfo>& kv);
Eigen::MatrixXd reference_attention(const std::vector<float>& q, const std::vector<RowInfo>& rows,
                                    const std::vector<float>& k, const std::vector<float>& v,
                                    const std::vector<KvInfo>& kv, int d, double scale);
// The same for a job with values, reading its Q and its shards' K/V in place (no flattened copy).
Eigen::MatrixXd reference_attention(const AttentionJob& job, double scale);

struct NumericCheck {
  double max_abs_err = 0;
  double max_rel_err = 0;  // max_abs_err / largest |reference| element
  double ref_max_abs = 0;
};
NumericCheck compare_to_reference(const MatrixRM& o, const Eigen::MatrixXd& ref);
// Each field's maximum over two checks (several jobs, several steps).
NumericCheck worst_of(const NumericCheck& a, const NumericCheck& b);

// Documented tolerance of O against the float64 reference on the tensors before rounding to
// the storage type (docs/scenarios.md): what storing Q, K, V in `t` may cost.
double storage_tolerance(DType t);

}  // namespace ahbm
