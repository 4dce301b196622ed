#pragma once
// Errors the user can fix (bad config, bad scenario, inconsistent sizes). The CLI maps them
// to exit code 2; everything else is an internal error.
#include <stdexcept>
#include <string>

namespace ahbm {

class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace ahbm
