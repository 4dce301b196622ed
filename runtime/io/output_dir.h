#pragma once
// The --out contract (docs/outputs.md, "Where outputs go"; docs/reliability.md, section 3): the
// one implementation behind every command that writes a run directory (`run`) or a report file
// (`noc-bench --out`, `hbm-bench --out`), and the check of standard output.
//
// A run directory carries the marker file `.ahbm-run` (tool name and layout version). Only such
// a directory, an empty directory or a new path is replaced; anything else is refused (InputError,
// exit 2) and left untouched. Claiming the target (the constructor) does every check that can be
// done before the work starts: the path resolves, missing parents can be created, the lock can be
// taken, the staging tree can be created next to the target. Files are written into the staging
// tree with every write and close checked (OutputError, exit 1, naming the file and the OS reason);
// commit() swaps the staging tree and the old run atomically (renameat2 RENAME_EXCHANGE, or two
// renames where the file system lacks it) and removes the old tree. A target that is a mount point
// cannot be renamed: its contents are replaced entry by entry instead (the marker never missing).
// Not committed (an exception, SIGINT/SIGTERM): the staging tree, the lock and the parents the
// claim created are removed; the target is as it was.
#include <filesystem>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace ahbm {

// The marker file of a run directory and its exact contents (layout version 1).
inline constexpr const char* kRunMarker = ".ahbm-run";
inline constexpr const char* kRunMarkerText = "ahbm-sim run directory\nlayout 1\n";

// One output file written through a file descriptor. Every write is checked; the first failure is
// kept with its errno and close() reports it as OutputError "cannot write SHOWN: REASON" (SHOWN:
// the path the user knows, e.g. the final path of a file staged elsewhere). A SIGINT/SIGTERM
// during a write makes close() throw Interrupted.
class OutFile {
 public:
  OutFile(const std::filesystem::path& path, const std::string& shown);
  ~OutFile();  // closes without reporting: an exception is already on its way
  OutFile(const OutFile&) = delete;
  OutFile& operator=(const OutFile&) = delete;
  std::ostream& stream();
  void close();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

enum class OutputKind { directory, file };

class OutputTarget {
 public:
  // Claims `arg`, the --out value (see the header comment). Throws InputError "--out ARG: ..."
  // naming the path and the reason (OS reasons by strerror). `handle_signals` (the CLI): while
  // claimed, SIGINT/SIGTERM remove the partial output and end the process. Off (the Python
  // module), the process's own handlers stay: an interrupt that unwinds as an exception
  // (KeyboardInterrupt) removes the partial output through the destructor.
  OutputTarget(const std::string& arg, OutputKind kind, bool handle_signals = true);
  ~OutputTarget();
  OutputTarget(const OutputTarget&) = delete;
  OutputTarget& operator=(const OutputTarget&) = delete;

  const std::filesystem::path& target() const { return target_; }
  // Directory kind: writes `rel` (a file name, or "sub/name") into the staging tree.
  void write(const std::string& rel, const std::function<void(std::ostream&)>& fill);
  // File kind: writes the file.
  void write(const std::function<void(std::ostream&)>& fill);
  // Puts the staged output in place (see the header comment). Throws OutputError on failure.
  void commit();

 private:
  void claim();
  void take_lock();
  void remove_stale();
  void check_replaceable() const;
  void begin_writing();
  void release() noexcept;
  void commit_exchange();
  void commit_contents();

  std::string arg_;
  OutputKind kind_;
  std::filesystem::path target_;   // absolute, symlinks of existing components resolved
  std::filesystem::path staging_;  // directory kind: a directory; file kind: a file
  std::filesystem::path lock_;
  std::vector<std::filesystem::path> created_parents_;  // deepest last
  bool handle_signals_ = true;
  int lock_fd_ = -1;
  int slot_ = -1;           // signal-cleanup slot
  bool exists_ = false;     // the target existed when claimed
  bool mount_ = false;      // the target is a mount point: contents replaced in place
  bool direct_ = false;     // file kind, not a regular file (/dev/null, a FIFO): written in place
  bool writing_ = false;
  bool committed_ = false;
};

// Flushes standard output and throws OutputError "cannot write standard output: REASON" if
// anything written to it was lost (a full disk, a closed pipe, /dev/full).
void check_stdout();

// For a program's entry point, before it opens any file: standard input, output and error that
// the caller closed (`>&-`) are held by /dev/null opened read-only, so no file opened later (the
// --out lock file) takes their descriptor and receives the text meant for them; a write to them
// fails with EBADF as on a closed descriptor, which check_stdout() reports. And SIGPIPE is
// ignored: a closed pipe on standard output (`ahbm-sim run ... | true`) is a write that fails with
// EPIPE (check_stdout(): exit 1, the partial output removed), not a death that leaves the lock
// file and the staging tree behind.
void guard_standard_streams();

}  // namespace ahbm
