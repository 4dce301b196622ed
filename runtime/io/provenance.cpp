#include "runtime/io/provenance.h"

#include <stdexcept>

#include <openssl/evp.h>

#include "runtime/io/version.h"

namespace ahbm {

std::string sha256_hex(const std::string& bytes) {
  // OpenSSL's libcrypto: a vetted implementation instead of our own. EVP_Digest hashes the bytes
  // in one call; it fails only on allocation failure or a broken library, which is no bad input.
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest, &len, EVP_sha256(), nullptr) != 1 || len != 32)
    throw std::runtime_error("sha256_hex: OpenSSL's EVP_Digest(SHA-256) failed");
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * len);
  for (unsigned int i = 0; i < len; ++i) {
    hex.push_back(kHex[digest[i] >> 4]);
    hex.push_back(kHex[digest[i] & 0xf]);
  }
  return hex;
}

std::string hw_config_text(const HwConfig& hw) { return to_json(hw).dump(2) + "\n"; }

Json simulator_json(const HwConfig& hw) {
  return Json{{"version", simulator_version()},
              {"commit", simulator_commit()},
              {"config_sha256", sha256_hex(hw_config_text(hw))}};
}

}  // namespace ahbm
