#include "runtime/report/components.h"

#include <cstdlib>
#include <regex>

namespace ahbm::report {

namespace {

// Rank of an item inside a CUBE: Q buffer first, each PE followed by its DMA, reducer last.
int cube_item_rank(const std::string& item) {
  static const std::regex pe(R"(pe(\d+)(\.dma)?(\..*)?)");
  std::smatch m;
  if (item.rfind("q_buffer", 0) == 0) return 0;
  if (std::regex_match(item, m, pe)) return 1 + 2 * std::atoi(m[1].str().c_str()) + (m[2].matched ? 1 : 0);
  if (item.rfind("reducer", 0) == 0) return 1 << 20;
  return (1 << 20) + 1;
}

}  // namespace

Placement place(const std::string& name) {
  static const std::regex cube(R"(group(\d+)\.cube(\d+)\.(.+))");
  static const std::regex link(R"(group(\d+)\.link\.(.+))");
  std::smatch m;
  if (std::regex_match(name, m, cube)) {
    const int g = std::atoi(m[1].str().c_str()), c = std::atoi(m[2].str().c_str());
    const std::string item = m[3].str();
    return {"group" + m[1].str() + ".cube" + m[2].str(), item, {1, g, c, cube_item_rank(item), item}};
  }
  if (std::regex_match(name, m, link)) {
    const int g = std::atoi(m[1].str().c_str());
    return {"group" + m[1].str() + ".links", m[2].str(), {1, g, 1 << 20, 0, m[2].str()}};
  }
  if (name.rfind("q_source", 0) == 0 || name.rfind("noc", 0) == 0)
    return {"q_source+noc", name, {0, 0, 0, name.rfind("noc", 0) == 0 ? 1 : 0, name}};
  if (name.rfind("host", 0) == 0) return {"host", name, {2, 0, 0, 0, name}};
  if (name.rfind("agent.", 0) == 0) return {"agents", name.substr(6), {3, 0, 0, 0, name.substr(6)}};
  return {"other", name, {4, 0, 0, 0, name}};
}

std::string section_label(const std::string& section) {
  static const std::regex cube(R"(group(\d+)\.cube(\d+))");
  static const std::regex links(R"(group(\d+)\.links)");
  std::smatch m;
  if (section == "q_source+noc") return "Q source + NoC";
  if (std::regex_match(section, m, cube)) return "group" + m[1].str() + " / cube" + m[2].str();
  if (std::regex_match(section, m, links)) return "group" + m[1].str() + " inter-CUBE links";
  return section;
}

}  // namespace ahbm::report
