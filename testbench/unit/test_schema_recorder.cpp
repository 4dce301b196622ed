// SchemaRecorder (hw/common/base/json_reader.h): the schema a parser's JsonReader calls record.
#include <gtest/gtest.h>

#include <stdexcept>

#include "hw/common/base/json_reader.h"

namespace ahbm {
namespace {

// A small parser in the style of the project's: a required name, an optional count with a
// constant default, a sub-object read only when present, an array of objects.
void parse(const Json& j, SchemaRecorder* rec) {
  JsonReader r(j, "t.json");
  r.record_into(rec);
  r.identifier("name");
  r.integer("count", 4, 1, 64);
  if (r.has("opt")) {
    JsonReader o = r.object("opt");
    o.string("mode", "fast", {"fast", "slow"});
    o.finish();
  }
  for (JsonReader e : r.array_of_objects("items", 1, 8)) {
    e.number("w", 0.0, 1.0);
    if (e.has("tag")) e.string("tag");
    e.finish();
  }
  r.finish();
}

TEST(SchemaRecorder, RecordsTypesRangesDefaultsAndNesting) {
  SchemaRecorder rec;
  parse(Json::parse(R"({"name": "a", "opt": {"mode": "slow"}, "items": [{"w": 0.5}, {"w": 1, "tag": "x"}]})"), &rec);
  const Json s = rec.schema("t", "d");
  EXPECT_EQ(s["$schema"], "https://json-schema.org/draft/2020-12/schema");
  EXPECT_EQ(s["properties"]["count"], (Json{{"type", "integer"}, {"minimum", 1}, {"maximum", 64}, {"default", 4}}));
  EXPECT_EQ(s["properties"]["name"]["pattern"], "^[A-Za-z0-9_.-]{1,64}$");
  EXPECT_EQ(s["properties"]["opt"]["properties"]["mode"]["enum"], (Json{"fast", "slow"}));
  const Json& items = s["properties"]["items"];
  EXPECT_EQ(items["minItems"], 1);
  EXPECT_EQ(items["maxItems"], 8);
  EXPECT_EQ(items["items"]["properties"]["w"]["maximum"], 1.0);
  // Required: read without a default and without has() first, in every object of its path.
  EXPECT_EQ(s["required"], (Json{"items", "name"}));
  EXPECT_EQ(items["items"]["required"], Json{"w"});  // tag: has() first
  EXPECT_FALSE(s["properties"]["opt"].contains("required"));
  EXPECT_EQ(s["additionalProperties"], false);
  EXPECT_TRUE(s["patternProperties"].contains("^_"));
}

TEST(SchemaRecorder, AFieldReadInOnlySomeObjectsOfAPathIsOptional) {
  SchemaRecorder rec;
  // "steps" is read (required) only in the objects whose kind asks for it, as a phase's is.
  for (const char* text : {R"({"kind": "a", "steps": 2})", R"({"kind": "b"})"}) {
    const Json j = Json::parse(text);  // the reader keeps a pointer to it
    JsonReader r(j, "t.json");
    r.record_into(&rec);
    if (r.string("kind", std::vector<std::string>{"a", "b"}) == "a") r.integer("steps", 1, 9);
    r.finish();
  }
  EXPECT_EQ(rec.schema("t", "d")["required"], Json{"kind"});
}

TEST(SchemaRecorder, ABoundThatDependsOnTheDocumentIsAnError) {
  SchemaRecorder rec;
  auto read = [&](int hi) {
    const Json j = Json::parse(R"({"n": 1})");
    JsonReader r(j, "t.json");
    r.record_into(&rec);
    r.integer("n", 1, hi);
  };
  read(8);
  read(8);  // the same constraints again: fine
  try {
    read(16);
    FAIL() << "expected a logic_error";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("n is read with different constraints"), std::string::npos) << e.what();
  }
}

TEST(SchemaRecorder, ARawReadAcceptsAnyValueAndADefaultThatVariesIsDropped) {
  SchemaRecorder rec;
  for (int def : {1, 2}) {
    const Json j = Json::parse(R"({"x": "path", "y": 3})");
    JsonReader r(j, "t.json");
    r.record_into(&rec);
    r.raw("x");
    r.integer("y", def, 0, 9);
  }
  {
    const Json j = Json::parse(R"({"x": [{"a": 1}]})");
    JsonReader r(j, "t.json");
    r.record_into(&rec);
    r.array_of_objects("x", 0, 4);
  }
  const Json s = rec.schema("t", "d");
  EXPECT_EQ(s["properties"]["x"], Json::object());
  EXPECT_FALSE(s["properties"]["y"].contains("default"));
}

TEST(SchemaRecorder, NoRecorderChangesNothing) {
  // Reads without a recorder behave as before: the same values and the same errors.
  const Json j = Json::parse(R"({"count": 70})");
  JsonReader r(j, "t.json");
  EXPECT_THROW(r.integer("count", 4, 1, 64), InputError);
}

}  // namespace
}  // namespace ahbm
