#include "hw/common/model/hidden_act.h"

#include <cmath>

namespace ahbm {

const char* hidden_act_name(HiddenAct a) {
  switch (a) {
    case HiddenAct::gelu: return "gelu";
    case HiddenAct::gelu_pytorch_tanh: return "gelu_pytorch_tanh";
    default: return "silu";
  }
}

const std::vector<std::string>& hidden_act_names() {
  static const std::vector<std::string> names = {"silu", "gelu", "gelu_pytorch_tanh"};
  return names;
}

double hidden_act_ref(HiddenAct a, double x) {
  switch (a) {
    case HiddenAct::gelu: return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    case HiddenAct::gelu_pytorch_tanh: {
      const double c = std::sqrt(2.0 / M_PI);
      return 0.5 * x * (1.0 + std::tanh(c * (x + 0.044715 * x * x * x)));
    }
    default: return x / (1.0 + std::exp(-x));
  }
}

float hidden_act_f32(HiddenAct a, float x) {
  switch (a) {
    case HiddenAct::gelu: return 0.5f * x * (1.0f + std::erf(x * 0.70710678f));
    case HiddenAct::gelu_pytorch_tanh: return 0.5f * x * (1.0f + std::tanh(0.79788456f * (x + 0.044715f * x * x * x)));
    default: return x / (1.0f + std::exp(-x));
  }
}

}  // namespace ahbm
