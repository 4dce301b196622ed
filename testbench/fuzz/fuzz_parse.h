#pragma once
// The body both libFuzzer harnesses share: arbitrary bytes as a JSON file given to `parse`.
// The parser must either accept the text or throw InputError; anything else (another
// exception, a sanitizer report, a hang) is a bug. An accepted input must survive
// to_json -> parse unchanged.
#include <cstddef>
#include <cstdint>
#include <string>

#include "hw/common/base/error.h"
#include "hw/common/base/json_reader.h"

template <class Parse>
int fuzz_parse(const uint8_t* data, size_t size, Parse parse) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const ahbm::Json j = to_json(parse(ahbm::parse_json_text(text, "fuzz.json"), "fuzz.json"));
    if (to_json(parse(j, "roundtrip.json")) != j) __builtin_trap();
  } catch (const ahbm::InputError&) {
  }
  return 0;
}
