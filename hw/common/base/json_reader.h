#pragma once
// Reads one JSON object field by field, keeping the field path for error messages and
// rejecting keys nobody asked for (with a "did you mean" when a near name exists).
// Usage: JsonReader r(j, "hw.json"); int x = r.integer("x", 1, 1, 64); r.finish();
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hw/common/base/error.h"

namespace ahbm {

using Json = nlohmann::json;

// Records what a parser asks of its document, field by field, as a JSON Schema (draft
// 2020-12): the schema of a file format is generated from the parser's own JsonReader calls
// (docs/schema/, `ahbm-sim schema`), so it cannot drift from what the parser accepts. A parser
// visits the sub-objects a document has: parse several documents (probes) into one recorder to
// cover every optional block. Bounds passed to a reader call must not depend on other fields
// (check such rules after reading): a field recorded twice with different constraints is a
// std::logic_error naming it, so a probe set catches a bound that does.
class SchemaRecorder {
 public:
  // One more object at `path` (array indices as "[]") was read; returns its instance id.
  int open(const std::string& path);
  // A field of instance `instance` of the object at `path`; `decl` is its schema fragment.
  void field(const std::string& path, int instance, const std::string& key, Json decl, bool required);
  // The schema of the root object, with `title` and `description`.
  Json schema(const std::string& title, const std::string& description) const;

 private:
  struct Field {
    Json decl;
    std::string child;             // path of the object (or array elements) it holds, "" = a value
    bool optional = false;         // read with a default, or after has(), somewhere
    int required_in = 0;           // instances that read it as required
    int last_instance = -1;
  };
  Json object_schema(const std::string& path) const;
  std::map<std::string, std::map<std::string, Field>> objects_;
  std::map<std::string, int> instances_;  // objects read per path
  int next_instance_ = 0;
};

class JsonReader {
 public:
  // `file` names the source in messages; `path` is the field path of this object ("" = root).
  JsonReader(const Json& j, std::string file, std::string path = "");

  bool has(const std::string& key) const;
  // Required fields: throw InputError when missing. Optional ones take a default.
  int64_t integer(const std::string& key, int64_t lo, int64_t hi);
  int64_t integer(const std::string& key, int64_t def, int64_t lo, int64_t hi);
  double number(const std::string& key, double lo, double hi);
  double number(const std::string& key, double def, double lo, double hi);
  bool boolean(const std::string& key, bool def);
  std::string string(const std::string& key, const std::vector<std::string>& allowed = {});
  std::string string(const std::string& key, const std::string& def,
                     const std::vector<std::string>& allowed = {});
  // A name that ends up in CSV columns, span components and file names: 1 to 64 characters
  // from [A-Za-z0-9_.-].
  std::string identifier(const std::string& key);
  // Sub-objects and arrays: the returned reader/elements carry the extended path.
  JsonReader object(const std::string& key);
  bool has_object(const std::string& key) const;
  std::vector<JsonReader> array_of_objects(const std::string& key, size_t min_len, size_t max_len);
  // Raw access for a field whose content another reader interprets (still marks it used).
  const Json& raw(const std::string& key);
  // An optional key whose value, if any, is accepted and not used (metadata such as a
  // HuggingFace config's "architectures").
  void ignore(const std::string& key);
  // Throws InputError naming the first unknown key.
  void finish() const;
  // Records every field this reader (and every reader it hands out) is asked for.
  void record_into(SchemaRecorder* r);

  std::string field(const std::string& key) const;  // "a.b.key"
  [[noreturn]] void fail(const std::string& key, const std::string& what) const;
  const std::string& file() const { return file_; }
  const std::string& path() const { return path_; }

 private:
  const Json& get(const std::string& key);
  void record(const std::string& key, Json decl, bool required, const std::string& child = "") const;
  int64_t read_integer(const std::string& key, int64_t lo, int64_t hi);
  double read_number(const std::string& key, double lo, double hi);
  std::string read_string(const std::string& key, const std::vector<std::string>& allowed);
  const Json* j_;
  SchemaRecorder* rec_ = nullptr;
  int instance_ = -1;  // this object's instance in rec_
  std::string file_;
  std::string path_;
  std::set<std::string> used_;
  mutable std::set<std::string> asked_;  // every key looked up: the "did you mean" candidates
  mutable std::set<std::string> probed_;  // keys asked with has(): optional where read
};

// A JSON integer (4, or 4.0) in [lo, hi], compared exactly before any narrowing: nullopt for
// anything else (2^32 where an int is wanted is out of range, never 0). JsonReader::integer
// reads fields with it; code that reads integers inside arrays or maps uses it too.
bool is_whole_number(const Json& v);
std::optional<int64_t> integer_in(const Json& v, int64_t lo, int64_t hi);

// An inclusive range as the messages print it ("[1, 1024]", "[0.001, 1e+06]"); the generated
// docs table and schema descriptions show the same text.
std::string range_text(int64_t lo, int64_t hi);
std::string range_text(double lo, double hi);

// Closest name by edit distance, or "" when none is close (for "did you mean").
std::string closest_name(const std::string& key, const std::vector<std::string>& names);
// Parses a JSON file; malformed JSON becomes an InputError naming the file, line and column. A
// missing, unreadable, non-regular, oversized (> 64 MiB) or empty file, and a key repeated
// within one object, are InputErrors too.
Json load_json_file(const std::string& path);
// The parsing half of load_json_file, for text already in memory (`file` names it in messages).
Json parse_json_text(const std::string& text, const std::string& file);
// A command-line value that may be JSON (`--set key=[1,2]`, `noc-bench --params {...}`): the
// parsed value under the same nesting and duplicate-key limits, or nullopt when `text` is not
// JSON (the caller takes it as a string or refuses it).
std::optional<Json> parse_json_argument(const std::string& text, const std::string& option);

}  // namespace ahbm
