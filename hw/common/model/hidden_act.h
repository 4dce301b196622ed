#pragma once
// The gate activation of a gated FFN (down(act(gate(x)) · up(x))), HuggingFace's `hidden_act`.
// A header of its own, free of SystemC and Eigen, because the model-config parser names it and
// the parser is also built alone, without the simulator (testbench/fuzz/CMakeLists.txt).
#include <string>
#include <vector>

namespace ahbm {

enum class HiddenAct { silu, gelu, gelu_pytorch_tanh };
const char* hidden_act_name(HiddenAct a);
const std::vector<std::string>& hidden_act_names();  // in enum order

// The activation of one value in float64 (the reference) and float32 (the PE's vector unit).
double hidden_act_ref(HiddenAct a, double x);
float hidden_act_f32(HiddenAct a, float x);

}  // namespace ahbm
