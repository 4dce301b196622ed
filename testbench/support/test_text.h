#pragma once
// Text helpers shared by tests.
#include <string>
#include <vector>

namespace ahbm::test {

// Each string followed by a newline: a log of messages (e.g. TlmCheckLog::violations) as one
// text to search or print.
inline std::string joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const std::string& x : lines) s += x + "\n";
  return s;
}

}  // namespace ahbm::test
