#include "runtime/report/stats_tree.h"

namespace ahbm::report {

namespace {

// The one walk of a node as stats.json writes it: each counter under its written name (the
// inline prefixes of the children it sits in before it), then each child that is not inlined,
// a list or an object, under its name. Both the values and their docs follow it.
template <class OnCounter, class OnList, class OnObject>
void walk(const StatsNode& node, const std::string& prefix, const OnCounter& on_counter, const OnList& on_list,
          const OnObject& on_object) {
  for (const stats::Counter& c : node.counters()) on_counter(prefix + c.name, c);
  for (const StatsNode& child : node.children()) {
    if (!child.inline_prefix.empty()) walk(child, prefix + child.inline_prefix, on_counter, on_list, on_object);
    else if (child.is_list()) on_list(prefix + child.name(), child);
    else on_object(prefix + child.name(), child);
  }
}

// `path` is where the node sits: "" at the root, "groups[].cubes[]." below.
void fill_docs(Json& out, const StatsNode& node, const std::string& path) {
  walk(
      node, path,
      [&out](const std::string& name, const stats::Counter& c) {
        out[name] = {{"unit", c.unit}, {"description", c.description}, {"merge", stats::merge_name(c.merge)}};
      },
      [&out](const std::string& name, const StatsNode& list) {
        for (const StatsNode& e : list.children()) fill_docs(out, e, name + "[].");
      },
      [&out](const std::string& name, const StatsNode& child) { fill_docs(out, child, name + "."); });
}

}  // namespace

Json stats_docs(const StatsNode& node) {
  Json out = Json::object();
  fill_docs(out, node, "");
  return out;
}

Json stats_json(const StatsNode& node) {
  Json obj = Json::object();
  walk(
      node, "",
      [&obj](const std::string& name, const stats::Counter& c) {
        obj[name] = std::visit([](const auto& v) { return Json(v); }, c.value);
      },
      [&obj](const std::string& name, const StatsNode& list) {
        Json& a = obj[name] = Json::array();
        for (const StatsNode& e : list.children()) a.push_back(stats_json(e));
      },
      [&obj](const std::string& name, const StatsNode& child) { obj[name] = stats_json(child); });
  return obj;
}

}  // namespace ahbm::report
