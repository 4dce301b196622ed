#include "hw/common/base/json_reader.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "hw/common/base/input_file.h"

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

std::string range_text(int64_t lo, int64_t hi) { return "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]"; }

std::string range_text(double lo, double hi) {
  std::ostringstream s;
  s << "[" << lo << ", " << hi << "]";
  return s.str();
}

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
  probed_.insert(key);
  return j_->contains(key);
}

const Json& JsonReader::get(const std::string& key) {
  asked_.insert(key);
  if (!j_->contains(key)) {
    // A misspelt required key shows up as missing: point at the unknown key it probably is.
    std::vector<std::string> present;
    for (auto it = j_->begin(); it != j_->end(); ++it) present.push_back(it.key());
    const std::string near = closest_name(key, present);
    fail(key, "missing required field" +
                  (near.empty() ? std::string() : "; the object has \"" + near + "\": misspelt?"));
  }
  used_.insert(key);
  return (*j_)[key];
}

void JsonReader::ignore(const std::string& key) {
  record(key, Json::object(), false);
  asked_.insert(key);
  if (j_->contains(key)) used_.insert(key);
}

const Json& JsonReader::raw(const std::string& key) {
  record(key, Json::object(), true);  // any value: another reader interprets it
  return get(key);
}

bool is_whole_number(const Json& v) {
  return v.is_number_integer() ||
         (v.is_number_float() && std::isfinite(v.get<double>()) && std::floor(v.get<double>()) == v.get<double>());
}

std::optional<int64_t> integer_in(const Json& v, int64_t lo, int64_t hi) {
  // Compared exactly, before any conversion to a narrower type: 2^32 is out of [0, 7], not 0.
  // Values beyond int64 (huge integers, 1e30) are out of range without being converted.
  if (!is_whole_number(v)) return std::nullopt;
  int64_t x = 0;
  if (v.is_number_unsigned()) {
    if (v.get<uint64_t>() > uint64_t(INT64_MAX)) return std::nullopt;
    x = int64_t(v.get<uint64_t>());
  } else if (v.is_number_integer()) {
    x = v.get<int64_t>();
  } else {
    const double d = v.get<double>();
    // double(hi) may round up past hi: convert only inside int64, then compare exactly.
    if (!(d >= -0x1p63 && d < 0x1p63)) return std::nullopt;
    x = int64_t(d);
  }
  if (x < lo || x > hi) return std::nullopt;
  return x;
}

namespace {

// "agents[3].sizes" -> "agents[].sizes": every element of an array shares one schema.
std::string element_pattern(const std::string& path) {
  std::string out;
  for (size_t i = 0; i < path.size(); ++i) {
    out += path[i];
    if (path[i] != '[') continue;
    size_t j = i + 1;
    while (j < path.size() && std::isdigit(static_cast<unsigned char>(path[j]))) ++j;
    if (j < path.size() && path[j] == ']' && j > i + 1) i = j - 1;
  }
  return out;
}

Json integer_decl(int64_t lo, int64_t hi) { return Json{{"type", "integer"}, {"minimum", lo}, {"maximum", hi}}; }
Json number_decl(double lo, double hi) { return Json{{"type", "number"}, {"minimum", lo}, {"maximum", hi}}; }
Json string_decl(const std::vector<std::string>& allowed) {
  Json d = {{"type", "string"}};
  if (!allowed.empty()) d["enum"] = allowed;
  return d;
}
// A default inside the field's range (a sentinel outside it, like -1 for "not given", is not
// a value a document could give, so the schema does not show it).
Json with_default(Json decl, Json def) {
  const bool below = decl.contains("minimum") && def.is_number() && def < decl["minimum"];
  const bool above = decl.contains("maximum") && def.is_number() && def > decl["maximum"];
  if (!below && !above) decl["default"] = std::move(def);
  return decl;
}

}  // namespace

int SchemaRecorder::open(const std::string& path) {
  ++instances_[path];
  return next_instance_++;
}

void SchemaRecorder::field(const std::string& path, int instance, const std::string& key, Json decl, bool required) {
  auto& fields = objects_[path];
  const std::string child = decl.contains("$child") ? decl["$child"].get<std::string>() : std::string();
  decl.erase("$child");
  auto it = fields.find(key);
  if (it == fields.end()) {
    it = fields.emplace(key, Field{std::move(decl), child}).first;
  } else {
    Field& f = it->second;
    Json a = f.decl, b = decl;
    a.erase("default");
    b.erase("default");
    if (a.empty() || b.empty()) {  // read raw somewhere: another reader takes any value there
      f.decl = Json::object();
      f.child.clear();
    } else if (a != b) {
      throw std::logic_error("schema: " + (path.empty() ? key : path + "." + key) +
                             " is read with different constraints (" + a.dump() + " and " + b.dump() +
                             "): a bound that depends on another field must be checked after the read");
    } else if (f.decl.contains("default") && (!decl.contains("default") || decl["default"] != f.decl["default"])) {
      f.decl.erase("default");  // the default depends on the document
    }
  }
  Field& f = it->second;
  if (!required) f.optional = true;
  else if (f.last_instance != instance) ++f.required_in;
  f.last_instance = instance;
}

Json SchemaRecorder::object_schema(const std::string& path) const {
  Json s = {{"type", "object"}, {"properties", Json::object()}, {"patternProperties", {{"^_", Json::object()}}},
            {"additionalProperties", false}};
  Json required = Json::array();
  auto it = objects_.find(path);
  if (it != objects_.end())
    for (const auto& [key, f] : it->second) {
      Json d = f.decl;
      if (!f.child.empty()) {
        if (d.value("type", "") == "array") d["items"] = object_schema(f.child);
        else d.update(object_schema(f.child));
      }
      s["properties"][key] = std::move(d);
      // Required: every object read at this path read it without a default or has() first.
      if (!f.optional && f.required_in == instances_.at(path)) required.push_back(key);
    }
  if (!required.empty()) s["required"] = required;
  return s;
}

Json SchemaRecorder::schema(const std::string& title, const std::string& description) const {
  Json s = {{"$schema", "https://json-schema.org/draft/2020-12/schema"}, {"title", title}, {"description", description}};
  s.update(object_schema(""));
  return s;
}

void JsonReader::record_into(SchemaRecorder* r) {
  rec_ = r;
  instance_ = r ? r->open(element_pattern(path_)) : -1;
}

void JsonReader::record(const std::string& key, Json decl, bool required, const std::string& child) const {
  if (!rec_) return;
  if (!child.empty()) decl["$child"] = element_pattern(child);
  // A key the parser checked with has() before reading it is optional.
  rec_->field(element_pattern(path_), instance_, key, std::move(decl), required && !probed_.count(key));
}

int64_t JsonReader::integer(const std::string& key, int64_t lo, int64_t hi) {
  record(key, integer_decl(lo, hi), true);
  return read_integer(key, lo, hi);
}

int64_t JsonReader::read_integer(const std::string& key, int64_t lo, int64_t hi) {
  const Json& v = get(key);
  const std::string range = range_text(lo, hi);
  // 4.0 is accepted as 4; 4.5, strings, booleans and null are not integers.
  if (!is_whole_number(v)) fail(key, "value " + show(v) + " is not an integer (allowed: integers in " + range + ")");
  const std::optional<int64_t> x = integer_in(v, lo, hi);
  if (!x) fail(key, "value " + show(v) + " is out of range (allowed: " + range + ")");
  return *x;
}

int64_t JsonReader::integer(const std::string& key, int64_t def, int64_t lo, int64_t hi) {
  record(key, with_default(integer_decl(lo, hi), def), false);
  return has(key) ? read_integer(key, lo, hi) : def;
}

double JsonReader::number(const std::string& key, double lo, double hi) {
  record(key, number_decl(lo, hi), true);
  return read_number(key, lo, hi);
}

double JsonReader::read_number(const std::string& key, double lo, double hi) {
  const Json& v = get(key);
  const std::string range = range_text(lo, hi);
  if (!v.is_number()) fail(key, "value " + show(v) + " is not a number (allowed: " + range + ")");
  double x = v.get<double>();
  if (!std::isfinite(x) || x < lo || x > hi) fail(key, "value " + show(v) + " is out of range (allowed: " + range + ")");
  return x;
}

double JsonReader::number(const std::string& key, double def, double lo, double hi) {
  record(key, with_default(number_decl(lo, hi), def), false);
  return has(key) ? read_number(key, lo, hi) : def;
}

bool JsonReader::boolean(const std::string& key, bool def) {
  record(key, Json{{"type", "boolean"}, {"default", def}}, false);
  if (!has(key)) return def;
  const Json& v = get(key);
  if (!v.is_boolean()) fail(key, "value " + show(v) + " is not a boolean (allowed: true, false)");
  return v.get<bool>();
}

std::string JsonReader::string(const std::string& key, const std::vector<std::string>& allowed) {
  record(key, string_decl(allowed), true);
  return read_string(key, allowed);
}

std::string JsonReader::read_string(const std::string& key, const std::vector<std::string>& allowed) {
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
  record(key, with_default(string_decl(allowed), def), false);
  return has(key) ? read_string(key, allowed) : def;
}

std::string JsonReader::identifier(const std::string& key) {
  record(key, Json{{"type", "string"}, {"pattern", "^[A-Za-z0-9_.-]{1,64}$"}}, true);
  const std::string s = read_string(key, {});
  const bool ok = !s.empty() && s.size() <= 64 && std::all_of(s.begin(), s.end(), [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '.' || ch == '-';
  });
  if (!ok)
    fail(key, "value " + show(Json(s)) + " is not a valid name (allowed: 1 to 64 characters from A-Z a-z 0-9 _ . -)");
  return s;
}

bool JsonReader::has_object(const std::string& key) const { return has(key) && (*j_)[key].is_object(); }

JsonReader JsonReader::object(const std::string& key) {
  record(key, Json{{"type", "object"}}, true, field(key));
  const Json& v = get(key);
  if (!v.is_object()) fail(key, "value " + show(v) + " must be a JSON object");
  JsonReader sub(v, file_, field(key));
  sub.record_into(rec_);
  return sub;
}

std::vector<JsonReader> JsonReader::array_of_objects(const std::string& key, size_t min_len,
                                                     size_t max_len) {
  record(key, Json{{"type", "array"}, {"minItems", min_len}, {"maxItems", max_len}}, true, field(key) + "[]");
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
    out.back().record_into(rec_);
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

namespace {

// Rejects a key that appears twice in one object (nlohmann would silently keep the last one, so
// a pasted-over field would win unnoticed) and absurd nesting. Tracks the path being parsed.
class DuplicateKeyCheck {
 public:
  static constexpr int kMaxDepth = 64;
  explicit DuplicateKeyCheck(std::string file) : file_(std::move(file)) {}
  bool operator()(int depth, Json::parse_event_t ev, Json& parsed) {
    using E = Json::parse_event_t;
    // Configs are a few levels deep; a bound keeps recursive copies and dumps of a
    // pathological document off the end of the stack.
    if (depth > kMaxDepth) {
      std::string p = path();
      if (p.size() > 60) p = p.substr(0, 60) + "...";
      throw InputError(file_ + ": " + p + ": nested deeper than " + std::to_string(kMaxDepth) +
                       " levels (allowed: up to " + std::to_string(kMaxDepth) + ")");
    }
    if (ev == E::object_start || ev == E::array_start || ev == E::value) {
      if (!frames_.empty() && frames_.back().array) ++frames_.back().index;
    }
    if (ev == E::object_start) frames_.push_back({false, -1, {}, ""});
    else if (ev == E::array_start) frames_.push_back({true, -1, {}, ""});
    else if ((ev == E::object_end || ev == E::array_end) && !frames_.empty()) frames_.pop_back();
    else if (ev == E::key && !frames_.empty()) {
      Frame& f = frames_.back();
      f.key = parsed.get<std::string>();
      if (!f.keys.insert(f.key).second)
        throw InputError(file_ + ": " + path() + ": duplicate key (each key may appear once per object)");
    }
    return true;
  }

 private:
  struct Frame {
    bool array;
    long index;
    std::set<std::string> keys;
    std::string key;
  };
  std::string path() const {
    std::string p;
    for (const Frame& f : frames_) {
      if (f.array) p += f.index >= 0 ? "[" + std::to_string(f.index) + "]" : "[]";
      else p += (p.empty() ? "" : ".") + f.key;
    }
    return p;
  }
  std::string file_;
  std::vector<Frame> frames_;
};

constexpr uintmax_t kMaxJsonBytes = uintmax_t(64) << 20;

}  // namespace

Json load_json_file(const std::string& path) {
  // A missing file, a directory, a device (reading /dev/zero would never end), an oversized and
  // an empty file each get their own message (read_input_file, parse_json_text).
  return parse_json_text(read_input_file(path, "a JSON file", kMaxJsonBytes), path);
}

std::optional<Json> parse_json_argument(const std::string& text, const std::string& option) {
  try {
    return Json::parse(text, DuplicateKeyCheck(option));
  } catch (const Json::exception&) {
    return std::nullopt;  // not JSON; a nesting or duplicate-key InputError passes through
  }
}

Json parse_json_text(const std::string& text, const std::string& file) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    throw InputError(file + ": file is empty (expected a JSON object)");
  try {
    return Json::parse(text, DuplicateKeyCheck(file));
  } catch (const Json::parse_error& e) {
    // nlohmann reports a byte offset; convert to line:column for humans.
    size_t off = std::min<size_t>(e.byte, text.size());
    size_t line = 1, col = 1;
    for (size_t i = 0; i + 1 < off; ++i) {
      if (text[i] == '\n') ++line, col = 1;
      else ++col;
    }
    throw InputError(file + ":" + std::to_string(line) + ":" + std::to_string(col) + ": malformed JSON: " + e.what());
  } catch (const Json::out_of_range& e) {  // a number beyond double, e.g. 1e400
    throw InputError(file + ": malformed JSON: " + e.what() + " (allowed: numbers within +-1.8e308)");
  }
}

}  // namespace ahbm
