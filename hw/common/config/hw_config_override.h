#pragma once
// Command-line overrides of a hardware config (`--set pe.hbm.bandwidth_gbps=25.6`): one
// implementation for every subcommand that takes --hw (run, policy-eval, hw-config, noc-bench).
#include <string>
#include <vector>

#include "hw/common/config/hw_config.h"

namespace ahbm {

// Sets one field of a JSON tree from a command-line assignment "dotted.path=value" (`--set`,
// `--param`): the value is read as JSON when it parses (numbers, true, [1,2], "\"text\""), else
// taken as a string; objects missing on the path are created (a non-object on the path is
// replaced by one). What the field may hold is checked by whoever reads the tree. A malformed
// assignment is an InputError naming `option` and the text.
void set_json_path(Json& tree, const std::string& assignment, const std::string& option);

// A config file ("" = the built-in defaults) with overrides "dotted.path=value" applied
// (set_json_path), parsed and checked exactly as a file is. The file is checked on its own first,
// so its errors name it; errors that appear with the overrides name "--set".
HwConfig load_hw_config(const std::string& path, const std::vector<std::string>& overrides);
// The same for a config already read (`file` names it in errors; the Python module's dicts).
HwConfig parse_hw_config(Json tree, const std::string& file, const std::vector<std::string>& overrides);

}  // namespace ahbm
