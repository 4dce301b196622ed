#pragma once
// Reading an input file the user named (a JSON config, a trace CSV, a BookSim config), with the
// checks every reader needs before it reads a byte: the path exists, is a regular file (not a
// directory, a FIFO that would block forever or a device like /dev/zero that never ends) and is
// at most `max_bytes` long. Each failure is an InputError naming the path and saying which.
#include <cstdint>
#include <string>
#include <string_view>

namespace ahbm {

// The checks alone, for a reader that streams the file (message "is a directory, not `kind`").
void check_input_file(const std::string& path, const std::string& kind);
// The whole file, after check_input_file. `kind` names what was expected, for the directory message ("DIR: is a
// directory, not a JSON file").
std::string read_input_file(const std::string& path, const std::string& kind, uintmax_t max_bytes);

// `text` as a message may show it: bytes below 0x20 (NUL, a carriage return, ...) other than a
// tab, and 0x7f, as \xNN, so that a NUL cannot cut the message short and control bytes cannot
// disguise it. UTF-8 passes unchanged.
std::string printable(std::string_view text);

}  // namespace ahbm
