// The --out contract (runtime/io/output_dir.h; docs/reliability.md, section 3; docs/outputs.md):
// foreign directories are refused and untouched, runs are replaced whole and atomically, a kill at
// any step of the replacement leaves a complete run, concurrent writers are locked out, every
// --out problem is an exit 2 before the work, every failed write (each output file, standard
// output) is an exit 1 naming the path with no partial output. Every case runs the real binary.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "hw/common/base/json_reader.h"
#include "runtime/io/output_dir.h"
#include "test_reliability_support.h"

using namespace ahbm;
using namespace ahbm::test;

namespace {

const std::string kTrace = source_path("traces/fanout_8x20.json");

// Every file under `root` (hidden ones included) with its bytes, by relative path.
std::map<std::string, std::string> snapshot(const fs::path& root) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    const std::string rel = fs::relative(e.path(), root).string();
    files[rel] = e.is_directory() ? std::string("<dir>") : read_file(e.path());
  }
  return files;
}

// Entries of `dir` left by the machinery: temporaries, set-aside runs, lock files.
std::vector<std::string> leftovers(const fs::path& dir) {
  std::vector<std::string> found;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string n = e.path().filename().string();
    if (n.find(".tmp-") != std::string::npos || n.find(".old-") != std::string::npos || n.find(".lock") != std::string::npos)
      found.push_back(n);
  }
  return found;
}

// A run directory is complete when it holds exactly the files a healthy run writes, the marker
// first among them, and its summary parses.
void expect_complete_run(const fs::path& dir, const std::vector<std::string>& files) {
  EXPECT_EQ(files_under(dir), files);
  EXPECT_EQ(read_file(dir / kRunMarker), kRunMarkerText);
  EXPECT_TRUE(Json::accept(read_file(dir / "summary.json")));
}

int seed_of(const fs::path& dir) { return Json::parse(read_file(dir / "summary.json"))["seed"].get<int>(); }

// Waits (up to 60 s: a hung binary fails the test, no timing is asserted) for the pause hook.
bool wait_for_pause(const Child& c, const std::string& point) {
  for (int i = 0; i < 600; ++i) {
    if (read_file(c.err).find("test hook: paused at " + point) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

std::vector<std::string> run_args(const fs::path& out, int seed, std::vector<std::string> more = {}) {
  std::vector<std::string> a = {"run", kTrace, "--seed", std::to_string(seed), "--out", out.string()};
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

TEST(OutputDir, ForeignDirectoryIsRefusedAndUntouched) {
  ScratchDir dir;
  fs::create_directories(dir.path() / "proj/src");
  write_file(dir.path() / "proj/summary.json", "{}\n");
  write_file(dir.path() / "proj/src/main.c", "x\n");
  const auto before = snapshot(dir.path());
  const CliResult r = run_cli("run " + quote(kTrace) + " --out " + quote(dir / "proj"), dir.path());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  for (const std::string& s : {dir / "proj", std::string("not an ahbm-sim run directory"), std::string("summary.json"),
                               std::string(kRunMarker)})
    EXPECT_NE(r.err.find(s), std::string::npos) << s << " not in: " << r.err;
  EXPECT_EQ(snapshot(dir.path()), before);  // nothing added, changed or removed, no lock left
}

TEST(OutputDir, OldRunIsReplacedCompletely) {
  ScratchDir dir;
  const fs::path out = dir.path() / "out";
  ASSERT_EQ(wait_child(spawn_cli(run_args(out, 3, {"--dump-tensors"}), dir.path(), "a")), 0);
  EXPECT_TRUE(fs::exists(out / "tensors/o.npy"));
  write_file(out / "notes.txt", "a file the user put into a run directory goes with it\n");
  ASSERT_EQ(wait_child(spawn_cli(run_args(out, 4, {"--no-vcd"}), dir.path(), "b")), 0);
  // The same run into a fresh directory: the replaced one must be identical to it, byte for byte.
  ASSERT_EQ(wait_child(spawn_cli(run_args(dir.path() / "fresh", 4, {"--no-vcd"}), dir.path(), "c")), 0);
  EXPECT_EQ(snapshot(out), snapshot(dir.path() / "fresh"));
  EXPECT_FALSE(fs::exists(out / "tensors"));
  EXPECT_FALSE(fs::exists(out / "waves.vcd"));
  EXPECT_EQ(read_file(out / kRunMarker), kRunMarkerText);
  EXPECT_EQ(seed_of(out), 4);
  EXPECT_TRUE(leftovers(dir.path()).empty());
}

// SIGKILL at every step of claiming and replacing: the target holds the old run or the new one,
// complete, and the next run clears what the killed one left.
TEST(OutputDir, KillAtEachReplaceStepLeavesOldOrNewRunComplete) {
  ScratchDir dir;
  const fs::path out = dir.path() / "out";
  ASSERT_EQ(wait_child(spawn_cli(run_args(out, 3), dir.path(), "ref")), 0);
  const std::vector<std::string> files = files_under(out);
  // "aside" exists only on file systems without RENAME_EXCHANGE: the pause never comes here.
  for (const auto& [point, seed_after] : std::vector<std::pair<std::string, int>>{{"claimed", 3}, {"staged", 3}, {"exchanged", 4}}) {
    SCOPED_TRACE(point);
    ASSERT_EQ(wait_child(spawn_cli(run_args(out, 3), dir.path(), "old")), 0);
    const Child c = spawn_cli(run_args(out, 4), dir.path(), "kill", {"AHBM_TEST_PAUSE_AT=" + point});
    ASSERT_TRUE(wait_for_pause(c, point)) << read_file(c.err);
    kill(c.pid, SIGKILL);
    EXPECT_EQ(wait_child(c), -SIGKILL);
    expect_complete_run(out, files);
    EXPECT_EQ(seed_of(out), seed_after);
  }
  // The killed process left temporaries (its pid is gone now): the next run removes them.
  EXPECT_FALSE(leftovers(dir.path()).empty());
  ASSERT_EQ(wait_child(spawn_cli(run_args(out, 5), dir.path(), "next")), 0);
  expect_complete_run(out, files);
  EXPECT_EQ(seed_of(out), 5);
  EXPECT_TRUE(leftovers(dir.path()).empty()) << leftovers(dir.path()).front();
}

// SIGINT/SIGTERM clean up: during the simulation (claimed) nothing is left, not even the parent
// directories the claim created; while files are written (staged) the old run stays.
TEST(OutputDir, SignalsRemoveThePartialOutput) {
  ScratchDir dir;
  const fs::path fresh = dir.path() / "a/b/out";
  Child c = spawn_cli(run_args(fresh, 3), dir.path(), "term", {"AHBM_TEST_PAUSE_AT=claimed"});
  ASSERT_TRUE(wait_for_pause(c, "claimed")) << read_file(c.err);
  kill(c.pid, SIGTERM);
  EXPECT_EQ(wait_child(c), -SIGTERM);
  EXPECT_FALSE(fs::exists(dir.path() / "a"));

  const fs::path out = dir.path() / "out";
  ASSERT_EQ(wait_child(spawn_cli(run_args(out, 3), dir.path(), "old")), 0);
  const auto before = snapshot(out);
  c = spawn_cli(run_args(out, 4), dir.path(), "int", {"AHBM_TEST_PAUSE_AT=staged"});
  ASSERT_TRUE(wait_for_pause(c, "staged")) << read_file(c.err);
  kill(c.pid, SIGINT);
  EXPECT_EQ(wait_child(c), -SIGINT);
  EXPECT_NE(read_file(c.err).find("partial output removed"), std::string::npos) << read_file(c.err);
  EXPECT_EQ(snapshot(out), before);
  std::vector<std::string> left = leftovers(dir.path());
  left.erase(std::remove_if(left.begin(), left.end(), [](const std::string& n) { return n.rfind(".cli.", 0) == 0; }), left.end());
  EXPECT_TRUE(left.empty()) << left.front();
}

// The first writer holds the lock (paused right after claiming); three more exit 2 at once.
TEST(OutputDir, FourConcurrentWritersLeaveOneRunAndThreeRefusals) {
  ScratchDir dir;
  const fs::path out = dir.path() / "out";
  const fs::path resume = dir.path() / "resume";
  const Child first = spawn_cli(run_args(out, 3), dir.path(), "w0",
                                {"AHBM_TEST_PAUSE_AT=claimed", "AHBM_TEST_RESUME_FILE=" + resume.string()});
  ASSERT_TRUE(wait_for_pause(first, "claimed")) << read_file(first.err);
  std::vector<Child> others;
  for (int i = 1; i <= 3; ++i) others.push_back(spawn_cli(run_args(out, 3 + i), dir.path(), "w" + std::to_string(i)));
  for (const Child& c : others) {
    EXPECT_EQ(wait_child(c), 2);
    const std::string err = read_file(c.err);
    EXPECT_NE(err.find("--out " + out.string() + ": another ahbm-sim process (pid " + std::to_string(first.pid) + ") is writing it"),
              std::string::npos) << err;
  }
  write_file(resume, "");
  EXPECT_EQ(wait_child(first), 0) << read_file(first.err);
  EXPECT_EQ(seed_of(out), 3);
  EXPECT_EQ(read_file(out / kRunMarker), kRunMarkerText);
  ASSERT_EQ(wait_child(spawn_cli(run_args(dir.path() / "fresh", 3), dir.path(), "f")), 0);
  EXPECT_EQ(snapshot(out), snapshot(dir.path() / "fresh"));
  fs::remove(resume);
  std::vector<std::string> left = leftovers(dir.path());
  EXPECT_TRUE(left.empty()) << left.front();
}

// Each --out problem: exit 2 naming the path and the OS reason, before anything else is looked at
// (the scenario does not exist: its error would come first if --out were checked late).
TEST(OutputDir, OutProblemsAreRefusedBeforeTheWork) {
  ScratchDir dir;
  write_file(dir.path() / "file", "not a directory\n");
  const std::string long_name = std::string(300, 'n');
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"/proc/ahbm-out", {"/proc", "lock file"}},
      {"/proc/self", {"/proc/self", "not an ahbm-sim run directory"}},
      {dir / long_name, {long_name, "File name too long"}},
      {dir / "file", {dir / "file", "exists and is not a directory"}},
      {dir / "file/sub/out", {dir / "file", "Not a directory"}},
  };
  const auto before = snapshot(dir.path());
  for (const auto& [out, says] : cases) {
    SCOPED_TRACE(out);
    const CliResult r = run_cli("run " + quote(dir / "no-such-scenario.json") + " --out " + quote(out), dir.path());
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("--out " + out), std::string::npos) << r.err;
    for (const auto& s : says) EXPECT_NE(r.err.find(s), std::string::npos) << s << " not in: " << r.err;
  }
  // The report-file commands check their --out the same way, before they run.
  const CliResult noc = run_cli("noc-bench --noc ring --cycles 300 --warmup 0 --out " + quote(dir.path()), dir.path());
  EXPECT_EQ(noc.exit_code, 2) << noc.err;
  EXPECT_NE(noc.err.find("is a directory; expected a file"), std::string::npos) << noc.err;
  EXPECT_EQ(snapshot(dir.path()), before);
}

// A file-size limit just below each output file's size makes the first file that reaches it fail
// with EFBIG (a full disk as seen by write): exit 1 naming that file and the reason, and no
// partial output: a new path is not created, an old run stays byte for byte, no temporary left.
TEST(OutputDir, FailedWriteOfEachOutputFileLeavesNoPartialOutput) {
  ScratchDir dir;
  const fs::path out = dir.path() / "out";
  ASSERT_EQ(wait_child(spawn_cli(run_args(out, 3, {"--dump-tensors"}), dir.path(), "ref")), 0);
  const auto before = snapshot(out);
  std::map<uintmax_t, std::string> by_size;
  for (const std::string& f : files_under(out)) by_size.emplace(fs::file_size(out / f), f);
  ASSERT_GE(by_size.size(), 6u);
  for (const auto& [size, file] : by_size) {
    // The limit holds for the child's stdout and stderr files too: below 1 KiB it would cut the
    // message. summary.json, written first, is larger, so smaller limits would fail it again.
    if (size < 1024) continue;
    SCOPED_TRACE(file);
    for (const fs::path& target : {out, dir.path() / "new"}) {
      const Child c = spawn_cli(run_args(target, 4, {"--dump-tensors"}), dir.path(), "full", {}, long(size) - 1);
      EXPECT_EQ(wait_child(c), 1);
      const std::string err = read_file(c.err);
      EXPECT_NE(err.find("error: cannot write " + target.string() + "/"), std::string::npos) << err;
      EXPECT_NE(err.find(": File too large"), std::string::npos) << err;
      // The file named is one of the run's files, at least as large as the limit.
      const size_t at = err.find(target.string() + "/") + target.string().size() + 1;
      const std::string named = err.substr(at, err.find(':', at) - at);
      EXPECT_GE(fs::file_size(out / named), size) << named;
    }
    EXPECT_EQ(snapshot(out), before);
    EXPECT_FALSE(fs::exists(dir.path() / "new"));
    std::vector<std::string> left = leftovers(dir.path());
    EXPECT_TRUE(left.empty()) << left.front();
  }
  // The report files of noc-bench and hbm-bench: exit 1 and the previous file untouched.
  for (const std::string cmd : {"noc-bench --noc ring --cycles 300 --warmup 0", "hbm-bench --bytes 65536"}) {
    SCOPED_TRACE(cmd);
    std::vector<std::string> args;
    std::istringstream words(cmd);
    for (std::string w; words >> w;) args.push_back(w);
    args.insert(args.end(), {"--out", (dir.path() / "r.json").string()});
    ASSERT_EQ(wait_child(spawn_cli(args, dir.path(), "r")), 0) << read_file(dir.path() / ".cli.r.stderr");
    const std::string report = read_file(dir.path() / "r.json");
    const Child c = spawn_cli(args, dir.path(), "rfull", {}, long(report.size()) - 1);
    EXPECT_EQ(wait_child(c), 1);
    EXPECT_NE(read_file(c.err).find("cannot write " + (dir.path() / "r.json").string() + ": File too large"), std::string::npos)
        << read_file(c.err);
    EXPECT_EQ(read_file(dir.path() / "r.json"), report);
    fs::remove(dir.path() / "r.json");
  }
}

// Standard output on a full device: every printing command exits 1 saying so; `run` then
// writes no run directory.
TEST(OutputDir, StdoutOnAFullDeviceIsAnError) {
  ScratchDir dir;
  for (const std::string& cmd : std::vector<std::string>{"--help", "nocs", "hw-config --schema", "policy-eval " + quote(kTrace),
                                 "noc-bench --noc ring --cycles 300 --warmup 0", "hbm-bench --bytes 65536",
                                 "run " + quote(kTrace) + " --out " + quote(dir / "out")}) {
    SCOPED_TRACE(cmd);
    const std::string line = "SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 " + quote(AHBM_CLI) + " " + cmd + " >/dev/full 2>" +
                             quote(dir / "err");
    const int status = std::system(line.c_str());
    EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 1);
    EXPECT_NE(read_file(dir.path() / "err").find("cannot write standard output: No space left on device"), std::string::npos)
        << read_file(dir.path() / "err");
  }
  EXPECT_FALSE(fs::exists(dir.path() / "out"));
}

// Standard output a pipe whose reader is gone (`ahbm-sim run ... | true`) or closed (`>&-`), for
// run and serve: exit 1 naming standard output and the reason, no DIR, no lock file, no staging
// tree. They died of SIGPIPE (141) leaving the lock and the staging tree, and with stdout closed the
// lock file took descriptor 1 and received the summary text (exit 0).
TEST(OutputDir, BrokenOrClosedStdoutLeavesNoLockOrStaging) {
  ScratchDir dir;
  const std::string serve = "serve " + quote(source_path("traces/serve/agentic_mix.json"));
  // A pipe with its read end closed before the command starts (no race with a reader exiting);
  // subprocess restores SIGPIPE's default action in the child, as a shell does.
  const std::string broken_pipe = "/usr/bin/python3 -c 'import os, subprocess, sys; r, w = os.pipe(); os.close(r); "
                                  "c = subprocess.call(sys.argv[1:], stdout=w); sys.exit(128 - c if c < 0 else c)' ";
  struct Case {
    std::string prefix, command, redirect, reason;
  };
  for (const Case& c : std::vector<Case>{{broken_pipe, "run " + quote(kTrace), "", "Broken pipe"},
                                         {broken_pipe, serve, "", "Broken pipe"},
                                         {"", "run " + quote(kTrace), " >&-", "Bad file descriptor"},
                                         {"", serve, " >&-", "Bad file descriptor"}}) {
    SCOPED_TRACE(c.command + c.redirect);
    const std::string line = "SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 " + c.prefix + quote(AHBM_CLI) + " " + c.command +
                             " --out " + quote(dir / "out") + c.redirect + " 2>" + quote(dir / "err");
    const int status = std::system(line.c_str());
    EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 1);
    EXPECT_NE(read_file(dir.path() / "err").find("cannot write standard output: " + c.reason), std::string::npos)
        << read_file(dir.path() / "err");
    EXPECT_FALSE(fs::exists(dir.path() / "out"));
    const std::vector<std::string> left = leftovers(dir.path());
    EXPECT_TRUE(left.empty()) << left.front();
  }
}

// A link planted at the lock file's name (--out in a shared directory such as /tmp) is not
// followed: its target was truncated and overwritten with the pid (issue 42, item 19).
TEST(OutputDir, LinkAtTheLockNameIsNotFollowed) {
  ScratchDir dir;
  write_file(dir / "victim", "keep me\n");
  fs::create_symlink(dir / "victim", dir / ".out.lock");
  const Child c = spawn_cli(run_args(dir / "out", 3), dir.path(), "lock");
  EXPECT_EQ(wait_child(c), 2);
  EXPECT_NE(read_file(c.err).find("cannot create the lock file"), std::string::npos) << read_file(c.err);
  EXPECT_EQ(read_file(dir / "victim"), "keep me\n");
  EXPECT_FALSE(fs::exists(dir / "out"));
}

// A stale temporary of a dead process (pid beyond pid_max) goes on the next run; a run set aside
// by a process killed between the two renames of the fallback replacement is put back first.
TEST(OutputDir, StaleTemporariesOfDeadProcessesAreRemoved) {
  ScratchDir dir;
  const fs::path out = dir.path() / "out";
  ASSERT_EQ(wait_child(spawn_cli(run_args(out, 3), dir.path(), "a")), 0);
  const std::string dead = std::to_string(std::stol(read_file("/proc/sys/kernel/pid_max")) + 1);
  fs::create_directories(dir.path() / (".out.tmp-" + dead) / "tensors");
  write_file(dir.path() / (".out.tmp-" + dead) / "summary.json", "{}");
  fs::rename(out, dir.path() / (".out.old-" + dead));  // killed between the fallback's renames
  ASSERT_EQ(wait_child(spawn_cli(run_args(out, 4), dir.path(), "b")), 0) << read_file(dir.path() / ".cli.b.stderr");
  EXPECT_EQ(seed_of(out), 4);
  std::vector<std::string> left = leftovers(dir.path());
  EXPECT_TRUE(left.empty()) << left.front();
}

// --out a mount point (a container volume) cannot be renamed: its contents are replaced. Needs a
// mount namespace (root, or an unprivileged user namespace).
TEST(OutputDir, MountPointIsReplacedInPlace) {
  ScratchDir dir;
  fs::create_directories(dir.path() / "vol");
  const std::string cli = "SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 " + quote(AHBM_CLI) + " run " + quote(kTrace);
  const std::string vol = quote(dir / "vol");
  const std::string script = "set -e; mount -t tmpfs -o size=16m tmpfs " + vol + "; " +
                             cli + " --seed 3 --out " + vol + " >/dev/null; " +
                             "echo x > " + vol + "/extra; " +
                             cli + " --seed 4 --no-vcd --out " + vol + " >/dev/null; " +
                             "cp -a " + vol + " " + quote(dir / "copy") + "; " +
                             "mkdir " + vol + "/foreign; " +
                             "rm " + vol + "/.ahbm-run; " +
                             "if " + cli + " --out " + vol + " 2>" + quote(dir / "refused") + "; then exit 9; fi";
  const std::string unshare = geteuid() == 0 ? "unshare --mount --propagation private" : "unshare --mount --map-root-user";
  // Where no mount namespace can be made (a container without CAP_SYS_ADMIN, user namespaces
  // off), there is no mount point to test with: say so rather than fail on the environment.
  const std::string probe = dir.path() / "probe";
  fs::create_directories(probe);
  if (std::system((unshare + " sh -c " + quote("mount -t tmpfs -o size=1m tmpfs " + quote(probe)) + " 2>/dev/null").c_str()) != 0)
    GTEST_SKIP() << "cannot mount a tmpfs in a private mount namespace here (" << unshare << ")";
  const int status = std::system((unshare + " sh -c " + quote(script) + " 2>" + quote(dir / "err")).c_str());
  ASSERT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0) << read_file(dir.path() / "err");
  ASSERT_EQ(wait_child(spawn_cli(run_args(dir.path() / "fresh", 4, {"--no-vcd"}), dir.path(), "f")), 0);
  EXPECT_EQ(snapshot(dir.path() / "copy"), snapshot(dir.path() / "fresh"));
  EXPECT_NE(read_file(dir.path() / "refused").find("not an ahbm-sim run directory"), std::string::npos);
}

}  // namespace
