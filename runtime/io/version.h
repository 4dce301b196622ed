#pragma once
// The simulator's identity, recorded in summary.json ("simulator") and printed by
// `ahbm-sim --version`. The definitions are generated at build time (cmake/version.cmake) into a
// library of their own, so a new commit recompiles one file, not the project.

namespace ahbm {

// The project version of CMakeLists.txt's project() (semantic versioning; CHANGELOG.md).
const char* simulator_version();
// `git describe --always --dirty` of the source tree when it was built ("<hash>-dirty" with
// uncommitted changes to tracked files), or "unknown" when built outside its git repository.
const char* simulator_commit();

}  // namespace ahbm
