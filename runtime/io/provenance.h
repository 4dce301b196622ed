#pragma once
// Where a run's numbers came from: summary.json's "simulator" block (docs/outputs.md).
#include <string>

#include "hw/common/config/hw_config.h"

namespace ahbm {

// SHA-256 of `bytes` as 64 lowercase hex digits (FIPS 180-4), computed by OpenSSL's libcrypto.
std::string sha256_hex(const std::string& bytes);

// The resolved hardware config exactly as `ahbm-sim hw-config` prints it (two-space JSON and a
// newline), so `ahbm-sim hw-config HW.json [--set ...] | sha256sum` reproduces config_sha256.
std::string hw_config_text(const HwConfig& hw);

// {"version", "commit", "config_sha256"}: runtime/io/version.h and sha256_hex(hw_config_text(hw)).
Json simulator_json(const HwConfig& hw);

}  // namespace ahbm
