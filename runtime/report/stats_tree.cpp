#include "runtime/report/stats_tree.h"

namespace ahbm::report {

namespace {

void fill(Json& obj, const StatsNode& node, const std::string& prefix) {
  for (const stats::Counter& c : node.counters())
    obj[prefix + c.name] = std::visit([](const auto& v) { return Json(v); }, c.value);
  for (const StatsNode& child : node.children()) {
    if (!child.inline_prefix.empty()) {
      fill(obj, child, prefix + child.inline_prefix);
    } else if (child.is_list()) {
      Json& a = obj[prefix + child.name()] = Json::array();
      for (const StatsNode& e : child.children()) a.push_back(stats_json(e));
    } else {
      obj[prefix + child.name()] = stats_json(child);
    }
  }
}

// Mirrors fill(): the same names, with "path." before them and "[]" for a list's elements.
void fill_docs(Json& out, const StatsNode& node, const std::string& path, const std::string& prefix) {
  for (const stats::Counter& c : node.counters())
    out[path + prefix + c.name] = {{"unit", c.unit}, {"description", c.description}, {"merge", stats::merge_name(c.merge)}};
  for (const StatsNode& child : node.children()) {
    if (!child.inline_prefix.empty()) {
      fill_docs(out, child, path, prefix + child.inline_prefix);
    } else if (child.is_list()) {
      for (const StatsNode& e : child.children()) fill_docs(out, e, path + prefix + child.name() + "[].", "");
    } else {
      fill_docs(out, child, path + prefix + child.name() + ".", "");
    }
  }
}

}  // namespace

Json stats_docs(const StatsNode& node) {
  Json out = Json::object();
  fill_docs(out, node, "", "");
  return out;
}

Json stats_json(const StatsNode& node) {
  Json obj = Json::object();
  fill(obj, node, "");
  return obj;
}

}  // namespace ahbm::report
