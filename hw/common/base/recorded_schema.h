#pragma once
// The JSON Schema of an input format, recorded from its parser's reads over probe files
// (SchemaRecorder, hw/common/base/json_reader.h; docs/schema/README.md).
#include <string>
#include <vector>

#include "hw/common/base/error.h"
#include "hw/common/base/json_reader.h"

namespace ahbm {

// Parses each probe with `parse(json, file, recorder)` into one recorder and returns the union.
template <class Parse>
Json recorded_schema(const std::vector<std::string>& probes, const std::string& title, const std::string& description,
                     Parse parse) {
  if (probes.empty()) throw InputError(title + " schema: no probe files given");
  SchemaRecorder rec;
  for (const auto& p : probes) parse(load_json_file(p), p, &rec);
  return rec.schema(title, description);
}

}  // namespace ahbm
