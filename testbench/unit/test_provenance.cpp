// summary.json's provenance block: SHA-256 against the FIPS 180-2 example vectors, and the
// config hash following the resolved config.
#include <gtest/gtest.h>

#include "runtime/io/provenance.h"

using namespace ahbm;

TEST(Provenance, Sha256MatchesTheStandardVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // 56 bytes: the length no longer fits the first block, so padding takes a second one.
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Provenance, ConfigHashFollowsTheResolvedConfig) {
  HwConfig a, b;
  b.pe.gemm.tile_m = a.pe.gemm.tile_m * 2;
  const Json ja = simulator_json(a), jb = simulator_json(b);
  EXPECT_EQ(ja["config_sha256"], sha256_hex(hw_config_text(a)));
  EXPECT_EQ(ja["config_sha256"], simulator_json(HwConfig{})["config_sha256"]);
  EXPECT_NE(ja["config_sha256"], jb["config_sha256"]);
  EXPECT_EQ(hw_config_text(a), to_json(a).dump(2) + "\n");
}
