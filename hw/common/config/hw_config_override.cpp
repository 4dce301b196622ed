#include "hw/common/config/hw_config_override.h"

#include <sstream>

namespace ahbm {

void set_json_path(Json& tree, const std::string& assignment, const std::string& option) {
  const size_t eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError(option + " " + assignment + ": expected KEY=VALUE (KEY a dotted field path)");
  const std::string text = assignment.substr(eq + 1);
  Json value = parse_json_argument(text, option + " " + assignment.substr(0, eq)).value_or(Json(text));
  if (!tree.is_object()) tree = Json::object();
  Json* at = &tree;
  std::stringstream path(assignment.substr(0, eq));
  std::string part, next;
  std::getline(path, part, '.');
  while (std::getline(path, next, '.')) {
    if (!(*at)[part].is_object()) (*at)[part] = Json::object();
    at = &(*at)[part];
    part = next;
  }
  (*at)[part] = std::move(value);
}

HwConfig parse_hw_config(Json tree, const std::string& file, const std::vector<std::string>& overrides) {
  if (overrides.empty()) return parse_hw_config(tree, file);
  parse_hw_config(tree, file);
  for (const std::string& kv : overrides) set_json_path(tree, kv, "--set");
  return parse_hw_config(tree, "--set");
}

HwConfig load_hw_config(const std::string& path, const std::vector<std::string>& overrides) {
  if (path.empty()) return parse_hw_config(Json::object(), "defaults", overrides);
  return parse_hw_config(load_json_file(path), path, overrides);
}

}  // namespace ahbm
