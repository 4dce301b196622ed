#include "hw/common/json_reader.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

namespace ahbm {

namespace {

std::string show(const Json& v) {
  std::string s = v.dump();
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + v[i];
  return out;
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace

std::string closest_name(const std::string& key, const std::vector<std::string>& names) {
  std::string best;
  size_t best_d = std::max<size_t>(2, key.size() / 3) + 1;
  for (const auto& n : names) {
    size_t d = edit_distance(key, n);
    if (d < best_d) best_d = d, best = n;
  }
  return best;
}

JsonReader::JsonReader(const Json& j, std::string file, std::string path)
    : j_(&j), file_(std::move(file)), path_(std::move(path)) {
  if (!j.is_object()) {
    throw InputError(file_ + ": " + (path_.empty() ? std::string("top level") : path_) +
                     " must be a JSON object, got " + show(j));
  }
}

std::string JsonReader::field(const std::string& key) const {
  return path_.empty() ? key : path_ + "." + key;
}

void JsonReader::fail(const std::string& key, const std::string& what) const {
  throw InputError(file_ + ": " + field(key) + ": " + what);
}

bool JsonReader::has(const std::string& key) const {
  asked_.insert(key);
  return j_->contains(key);
}

const Json& JsonReader::get(const std::string& key) {
  asked_.insert(key);
  if (!j_->contains(key)) fail(key, "missing required field");
  used_.insert(key);
  return (*j_)[key];
}

const Json& JsonReader::raw(const std::string& key) { return get(key); }

int64_t JsonReader::integer(const std::string& key, int64_t lo, int64_t hi) {
  const Json& v = get(key);
  bool integral = v.is_number_integer() ||
                  (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>() &&
                   std::fabs(v.get<double>()) < 9.0e15);
  if (!integral)
    fail(key, "value " + show(v) + " is not an integer (allowed: integers in [" +
                  std::to_string(lo) + ", " + std::to_string(hi) + "])");
  int64_t x = v.is_number_integer() ? v.get<int64_t>() : static_cast<int64_t>(v.get<double>());
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) x = INT64_MAX;
  if (x < lo || x > hi)
    fail(key, "value " + std::to_string(x) + " is out of range (allowed: [" + std::to_string(lo) +
                  ", " + std::to_string(hi) + "])");
  return x;
}

int64_t JsonReader::integer(const std::string& key, int64_t def, int64_t lo, int64_t hi) {
  return has(key) ? integer(key, lo, hi) : def;
}

double JsonReader::number(const std::string& key, double lo, double hi) {
  const Json& v = get(key);
  std::ostringstream range;
  range << "[" << lo << ", " << hi << "]";
  if (!v.is_number()) fail(key, "value " + show(v) + " is not a number (allowed: " + range.str() + ")");
  double x = v.get<double>();
  if (!std::isfinite(x) || x < lo || x > hi)
    fail(key, "value " + show(v) + " is out of range (allowed: " + range.str() + ")");
  return x;
}

double JsonReader::number(const std::string& key, double def, double lo, double hi) {
  return has(key) ? number(key, lo, hi) : def;
}

bool JsonReader::boolean(const std::string& key, bool def) {
  if (!has(key)) return def;
  const Json& v = get(key);
  if (!v.is_boolean()) fail(key, "value " + show(v) + " is not a boolean (allowed: true, false)");
  return v.get<bool>();
}

std::string JsonReader::string(const std::string& key, const std::vector<std::string>& allowed) {
  const Json& v = get(key);
  if (!v.is_string())
    fail(key, "value " + show(v) + " is not a string" +
                  (allowed.empty() ? std::string() : " (allowed: " + join(allowed) + ")"));
  std::string s = v.get<std::string>();
  if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), s) == allowed.end()) {
    std::string near = closest_name(s, allowed);
    fail(key, "unknown value \"" + s + "\" (allowed: " + join(allowed) + ")" +
                  (near.empty() ? std::string() : "; did you mean \"" + near + "\"?"));
  }
  return s;
}

std::string JsonReader::string(const std::string& key, const std::string& def,
                               const std::vector<std::string>& allowed) {
  return has(key) ? string(key, allowed) : def;
}

bool JsonReader::has_object(const std::string& key) const { return has(key) && (*j_)[key].is_object(); }

JsonReader JsonReader::object(const std::string& key) {
  const Json& v = get(key);
  if (!v.is_object()) fail(key, "value " + show(v) + " must be a JSON object");
  return JsonReader(v, file_, field(key));
}

std::vector<JsonReader> JsonReader::array_of_objects(const std::string& key, size_t min_len,
                                                     size_t max_len) {
  const Json& v = get(key);
  if (!v.is_array()) fail(key, "value " + show(v) + " must be a JSON array");
  if (v.size() < min_len || v.size() > max_len)
    fail(key, "has " + std::to_string(v.size()) + " elements (allowed: " + std::to_string(min_len) +
                  " to " + std::to_string(max_len) + ")");
  std::vector<JsonReader> out;
  for (size_t i = 0; i < v.size(); ++i) {
    std::string p = field(key) + "[" + std::to_string(i) + "]";
    if (!v[i].is_object()) throw InputError(file_ + ": " + p + " must be a JSON object, got " + show(v[i]));
    out.emplace_back(v[i], file_, p);
  }
  return out;
}

void JsonReader::finish() const {
  std::vector<std::string> known(asked_.begin(), asked_.end());
  for (auto it = j_->begin(); it != j_->end(); ++it) {
    if (used_.count(it.key())) continue;
    if (!it.key().empty() && it.key()[0] == '_') continue;  // "_comment" and friends are allowed
    std::string near = closest_name(it.key(), known);
    throw InputError(file_ + ": " + field(it.key()) + ": unknown key" +
                     (near.empty() ? std::string() : "; did you mean \"" + field(near) + "\"?"));
  }
}

Json load_json_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot open file");
  std::stringstream ss;
  ss << in.rdbuf();
  try {
    return Json::parse(ss.str());
  } catch (const Json::parse_error& e) {
    // nlohmann reports a byte offset; convert to line:column for humans.
    size_t off = std::min<size_t>(e.byte, ss.str().size());
    size_t line = 1, col = 1;
    for (size_t i = 0; i + 1 < off; ++i) {
      if (ss.str()[i] == '\n') ++line, col = 1;
      else ++col;
    }
    throw InputError(path + ":" + std::to_string(line) + ":" + std::to_string(col) +
                     ": malformed JSON: " + e.what());
  }
}

}  // namespace ahbm
