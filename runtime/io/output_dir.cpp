#include "runtime/io/output_dir.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "hw/common/base/error.h"

namespace ahbm {

namespace fs = std::filesystem;

namespace {

std::string os_reason(int err) { return std::strerror(err); }

// ---- Signals --------------------------------------------------------------------------------
// SIGINT/SIGTERM while a target is claimed: before its files are written (the simulation runs),
// the handler removes the empty staging entry, the lock and the parents the claim created with
// async-signal-safe calls and dies of the signal. While files are written it only records the
// signal: the next write fails, the exception unwinds through ~OutputTarget (which removes the
// staging tree) and the CLI re-raises the signal (tools/cli/main.cpp). Process-wide by nature.
constexpr int kSlots = 4, kMaxParents = 8;
struct SignalSlot {
  volatile sig_atomic_t used = 0;
  bool staging_is_dir = false;
  char staging[PATH_MAX] = {};
  char lock[PATH_MAX] = {};
  int parents = 0;
  char parent[kMaxParents][PATH_MAX] = {};
};
SignalSlot g_slots[kSlots];
volatile sig_atomic_t g_signal = 0;   // the signal that arrived while files were written
volatile sig_atomic_t g_writing = 0;  // claimed targets in their write phase
int g_claims = 0;
struct sigaction g_old_int, g_old_term;

void on_signal(int sig) {
  g_signal = sig;
  if (g_writing > 0) return;
  for (SignalSlot& s : g_slots) {
    if (!s.used) continue;
    if (s.staging[0]) s.staging_is_dir ? rmdir(s.staging) : unlink(s.staging);
    if (s.lock[0]) unlink(s.lock);
    for (int i = s.parents - 1; i >= 0; --i) rmdir(s.parent[i]);
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

bool copy_path(char* dst, const fs::path& p) {
  const std::string s = p.string();
  if (s.size() >= PATH_MAX) return false;
  std::memcpy(dst, s.c_str(), s.size() + 1);
  return true;
}

// Test-only hook (documented in docs/reliability.md, section 3): AHBM_TEST_PAUSE_AT=POINT makes
// the process announce "test hook: paused at POINT" on stderr and wait up to 60 s there, so a
// test can kill it at that exact step. A signal ends the wait, or AHBM_TEST_RESUME_FILE appearing.
void test_pause(const char* point) {
  const char* want = std::getenv("AHBM_TEST_PAUSE_AT");
  if (!want || std::strcmp(want, point) != 0) return;
  std::fprintf(stderr, "ahbm-sim: test hook: paused at %s\n", point);
  std::fflush(stderr);
  const char* resume = std::getenv("AHBM_TEST_RESUME_FILE");  // or until this file exists
  for (int i = 0; i < 600 && !g_signal && !(resume && access(resume, F_OK) == 0); ++i) usleep(100000);
}

// ---- Checked file output ------------------------------------------------------------------------

// Writes everything or records why not (errno). A recorded signal stops the writing.
bool write_all(int fd, const char* p, size_t n, int* err, bool* interrupted) {
  while (n > 0) {
    if (g_signal) {
      *interrupted = true;
      return false;
    }
    const ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      *err = errno;
      return false;
    }
    p += w;
    n -= size_t(w);
  }
  return true;
}

class FdBuf : public std::streambuf {
 public:
  explicit FdBuf(int fd) : fd_(fd), buf_(1 << 16) { setp(buf_.data(), buf_.data() + buf_.size()); }
  bool drain() {
    const size_t n = size_t(pptr() - pbase());
    setp(buf_.data(), buf_.data() + buf_.size());
    if (failed()) return false;
    return write_all(fd_, buf_.data(), n, &err_, &interrupted_);
  }
  bool failed() const { return err_ != 0 || interrupted_; }
  int err() const { return err_; }
  bool interrupted() const { return interrupted_; }

 protected:
  int_type overflow(int_type c) override {
    if (!drain()) return traits_type::eof();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    if (n < epptr() - pptr()) {
      std::memcpy(pptr(), s, size_t(n));
      pbump(int(n));
      return n;
    }
    if (!drain() || !write_all(fd_, s, size_t(n), &err_, &interrupted_)) return 0;
    return n;
  }
  int sync() override { return drain() ? 0 : -1; }

 private:
  int fd_;
  std::vector<char> buf_;
  int err_ = 0;
  bool interrupted_ = false;
};

std::string short_name(const std::string& name) {
  // Temporaries are named after the target: keep their names within NAME_MAX (255).
  if (name.size() <= 200) return name;
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : name) h = (h ^ c) * 1099511628211ull;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return name.substr(0, 180) + "~" + hex;
}

// ".ahbm-lock", ".ahbm-tmp-PID", ".ahbm-old-PID": our own entries inside a mount-point target.
bool internal_entry(const std::string& n) { return n == ".ahbm-lock" || n.rfind(".ahbm-tmp-", 0) == 0 || n.rfind(".ahbm-old-", 0) == 0; }

std::string unescape_mountinfo(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      out += char((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

// A mount point cannot be renamed (EBUSY). Another device than the parent's, or (a bind mount of
// the same file system) listed in /proc/self/mountinfo.
bool is_mount_point(const fs::path& p) {
  struct stat a {}, b {};
  if (stat(p.c_str(), &a) != 0 || stat((p / "..").c_str(), &b) != 0) return false;
  if (a.st_dev != b.st_dev || a.st_ino == b.st_ino) return true;
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string field;
    for (int i = 0; i < 5 && (f >> field); ++i) {
    }
    if (unescape_mountinfo(field) == p.string()) return true;
  }
  return false;
}

// The pid in a temporary's name (after `prefix`), if that process is gone.
bool dead_owner(const std::string& name, const std::string& prefix) {
  if (name.rfind(prefix, 0) != 0 || name.size() == prefix.size()) return false;
  const std::string digits = name.substr(prefix.size());
  if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }) || digits.size() > 9)
    return false;
  const long pid = std::stol(digits);
  return pid != long(getpid()) && kill(pid_t(pid), 0) != 0 && errno == ESRCH;
}

std::vector<std::string> entries_of(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    names.push_back(it->path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

void make_dir(const fs::path& d, const std::string& shown) {
  if (mkdir(d.c_str(), 0777) != 0 && errno != EEXIST)
    throw OutputError("cannot write " + shown + ": " + os_reason(errno));
}

void rename_or_throw(const fs::path& from, const fs::path& to, const std::string& what) {
  if (std::rename(from.c_str(), to.c_str()) != 0) throw OutputError(what + ": " + os_reason(errno));
}

}  // namespace

// ---- OutFile ----------------------------------------------------------------------------------

struct OutFile::Impl {
  Impl(int f, std::string s) : fd(f), buf(f), os(&buf), shown(std::move(s)) {}
  int fd;
  FdBuf buf;
  std::ostream os;
  std::string shown;
};

OutFile::OutFile(const fs::path& path, const std::string& shown) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) throw OutputError("cannot write " + shown + ": " + os_reason(errno));
  impl_ = std::make_unique<Impl>(fd, shown);
}

OutFile::~OutFile() {
  if (impl_ && impl_->fd >= 0) ::close(impl_->fd);
}

std::ostream& OutFile::stream() { return impl_->os; }

void OutFile::close() {
  impl_->os.flush();
  impl_->buf.drain();
  int err = impl_->buf.err();
  if (::close(impl_->fd) != 0 && err == 0) err = errno;  // NFS and quotas report here
  impl_->fd = -1;
  if (impl_->buf.interrupted()) throw Interrupted(g_signal);
  if (err != 0) throw OutputError("cannot write " + impl_->shown + ": " + os_reason(err));
}

// ---- OutputTarget ------------------------------------------------------------------------------

OutputTarget::OutputTarget(const std::string& arg, OutputKind kind, bool handle_signals)
    : arg_(arg), kind_(kind), handle_signals_(handle_signals) {
  try {
    claim();
  } catch (...) {
    release();
    throw;
  }
}

OutputTarget::~OutputTarget() { release(); }

void OutputTarget::claim() {
  const auto refuse = [&](const std::string& why) { return InputError("--out " + arg_ + ": " + why); };
  if (arg_.empty()) throw refuse("empty path");
  std::error_code ec;
  fs::path p = fs::absolute(arg_, ec);
  if (ec) throw refuse("cannot resolve: " + ec.message());
  p = p.lexically_normal();
  if (!p.has_filename()) p = p.parent_path();  // a trailing slash
  std::string name = p.filename().string();
  if (name.empty() || name == "." || name == ".." || p == p.root_path()) throw refuse("not a usable output path");

  // The nearest existing ancestor must be a directory; the missing ones are created (and removed
  // again if the run fails).
  fs::path up = p.parent_path();
  std::vector<std::string> missing;
  struct stat st {};
  while (stat(up.c_str(), &st) != 0) {
    if (errno != ENOENT || up == up.parent_path()) throw refuse("cannot access " + up.string() + ": " + os_reason(errno));
    missing.push_back(up.filename().string());
    up = up.parent_path();
  }
  if (!S_ISDIR(st.st_mode)) throw refuse(up.string() + " is not a directory");
  fs::path parent = fs::canonical(up, ec);
  if (ec) throw refuse("cannot resolve " + up.string() + ": " + ec.message());
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    parent /= *it;
    if (mkdir(parent.c_str(), 0777) != 0) throw refuse("cannot create directory " + parent.string() + ": " + os_reason(errno));
    created_parents_.push_back(parent);
  }
  target_ = parent / name;

  if (lstat(target_.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {  // write where the link points
    const fs::path to = fs::canonical(target_, ec);
    if (ec) throw refuse("a symbolic link that does not resolve: " + ec.message());
    target_ = to;
    parent = to.parent_path();
    name = to.filename().string();
  }
  if (lstat(target_.c_str(), &st) == 0) {
    exists_ = true;
  } else if (errno != ENOENT) {
    throw refuse(os_reason(errno));  // "File name too long", "Permission denied", ...
  }
  if (kind_ == OutputKind::directory && exists_ && !S_ISDIR(st.st_mode))
    throw refuse("exists and is not a directory; not replacing it");
  if (kind_ == OutputKind::file && exists_ && S_ISDIR(st.st_mode)) throw refuse("is a directory; expected a file");
  if (kind_ == OutputKind::file && exists_ && !S_ISREG(st.st_mode)) {
    direct_ = true;  // a device or a FIFO (/dev/null): written in place, nothing to rename
    return;
  }
  mount_ = kind_ == OutputKind::directory && exists_ && is_mount_point(target_);

  if (kind_ == OutputKind::directory && exists_) check_replaceable();  // before the lock too: say why first
  const std::string base = short_name(name);
  lock_ = mount_ ? target_ / ".ahbm-lock" : parent / ("." + base + ".lock");
  take_lock();
  remove_stale();
  if (kind_ == OutputKind::directory && exists_) check_replaceable();

  staging_ = mount_ ? target_ / (".ahbm-tmp-" + std::to_string(getpid()))
                    : parent / ("." + base + ".tmp-" + std::to_string(getpid()));
  if (kind_ == OutputKind::directory) {
    if (mkdir(staging_.c_str(), 0777) != 0) {
      const int e = errno;
      staging_.clear();
      throw refuse("cannot create a directory next to it: " + os_reason(e));
    }
  } else {
    const int fd = ::open(staging_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) {
      const int e = errno;
      staging_.clear();
      throw refuse("cannot create a file next to it: " + os_reason(e));
    }
    ::close(fd);
  }
  if (!exists_) {  // the name itself must be creatable (length, file system)
    const bool made = kind_ == OutputKind::directory
                          ? mkdir(target_.c_str(), 0777) == 0 && rmdir(target_.c_str()) == 0
                          : [&] {
                              const int fd = ::open(target_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
                              return fd >= 0 && ::close(fd) == 0 && unlink(target_.c_str()) == 0;
                            }();
    if (!made) throw refuse("cannot create: " + os_reason(errno));
  }

  // Register for signal cleanup.
  for (int i = 0; i < kSlots && handle_signals_; ++i) {
    SignalSlot& s = g_slots[i];
    if (s.used) continue;
    s.staging_is_dir = kind_ == OutputKind::directory;
    s.parents = 0;
    bool ok = copy_path(s.staging, staging_) && copy_path(s.lock, lock_);
    for (const fs::path& d : created_parents_)
      if (s.parents < kMaxParents) ok = ok && copy_path(s.parent[s.parents++], d);
    if (!ok) break;  // a path beyond PATH_MAX: no signal cleanup
    s.used = 1;
    slot_ = i;
    break;
  }
  test_pause("claimed");
}

void OutputTarget::take_lock() {
  // flock on a lock file next to the target (inside it for a mount point). The holder removes the
  // file before unlocking, so a process that opened the old file retries on the new one.
  for (int attempt = 0; attempt < 100; ++attempt) {
    // O_NOFOLLOW: a link planted at the lock's name (a shared directory) would have its target
    // truncated and overwritten with our pid.
    const int fd = ::open(lock_.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) throw InputError("--out " + arg_ + ": cannot create the lock file " + lock_.string() + ": " + os_reason(errno));
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int e = errno;
      char pid[32] = {};
      const ssize_t n = pread(fd, pid, sizeof pid - 1, 0);
      ::close(fd);
      if (e == EWOULDBLOCK) {
        const std::string who = n > 0 ? " (pid " + std::string(pid, size_t(n)) + ")" : "";
        throw InputError("--out " + arg_ + ": another ahbm-sim process" + who + " is writing it (lock " +
                         lock_.string() + " is held); try again when it has finished");
      }
      throw InputError("--out " + arg_ + ": cannot lock " + lock_.string() + ": " + os_reason(e));
    }
    struct stat a {}, b {};
    if (fstat(fd, &a) == 0 && stat(lock_.c_str(), &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
      const std::string pid = std::to_string(getpid());
      if (ftruncate(fd, 0) != 0 || pwrite(fd, pid.data(), pid.size(), 0) < 0) {
        // the pid only improves the loser's message
      }
      lock_fd_ = fd;
      if (handle_signals_ && g_claims++ == 0) {  // released with the lock (release())
        struct sigaction sa {};
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = 0;  // no SA_RESTART: a blocked write returns EINTR and sees the signal
        sigaction(SIGINT, &sa, &g_old_int);
        sigaction(SIGTERM, &sa, &g_old_term);
      }
      return;
    }
    ::close(fd);  // removed by its previous holder after we opened it: lock the new one
  }
  throw InputError("--out " + arg_ + ": cannot take the lock " + lock_.string());
}

void OutputTarget::remove_stale() {
  // Temporaries of processes that died (SIGKILL, power loss) before removing them. A run set
  // aside by a process killed between the two renames of the fallback is put back first.
  const fs::path where = mount_ ? target_ : target_.parent_path();
  const std::string base = "." + short_name(target_.filename().string());
  const std::string tmp = mount_ ? ".ahbm-tmp-" : base + ".tmp-", old = mount_ ? ".ahbm-old-" : base + ".old-";
  std::error_code ec;
  for (const std::string& n : entries_of(where)) {
    if (dead_owner(n, old) && !mount_ && !exists_ && std::rename((where / n).c_str(), target_.c_str()) == 0) {
      exists_ = true;
      continue;
    }
    if (dead_owner(n, tmp) || dead_owner(n, old)) fs::remove_all(where / n, ec);
  }
}

void OutputTarget::check_replaceable() const {
  std::vector<std::string> names;
  for (const std::string& n : entries_of(target_))
    if (!internal_entry(n)) names.push_back(n);
  if (names.empty()) return;
  std::ifstream marker(target_ / kRunMarker);
  std::string first;
  if (marker && std::getline(marker, first) && first + "\n" == std::string(kRunMarkerText).substr(0, first.size() + 1))
    return;
  std::string some;
  for (size_t i = 0; i < names.size() && i < 3; ++i) some += (i ? ", " : "") + names[i];
  if (names.size() > 3) some += ", ...";
  throw InputError("--out " + arg_ + ": exists and is not an ahbm-sim run directory (it holds " + some + " but no " +
                   kRunMarker + " marker); not replacing it: remove it yourself or choose another --out");
}

void OutputTarget::begin_writing() {
  if (writing_) return;
  writing_ = true;
  ++g_writing;
  if (g_signal) throw Interrupted(g_signal);
}

void OutputTarget::write(const std::string& rel, const std::function<void(std::ostream&)>& fill) {
  begin_writing();
  const fs::path sub = fs::path(rel).parent_path();
  if (!sub.empty()) make_dir(staging_ / sub, (target_ / sub).string());
  OutFile f(staging_ / rel, (target_ / rel).string());
  fill(f.stream());
  f.close();
}

void OutputTarget::write(const std::function<void(std::ostream&)>& fill) {
  begin_writing();
  OutFile f(direct_ ? target_ : staging_, target_.string());
  fill(f.stream());
  f.close();
}

void OutputTarget::commit() {
  begin_writing();
  if (kind_ == OutputKind::file) {
    if (!direct_) rename_or_throw(staging_, target_, "cannot write " + target_.string());
  } else {
    write(kRunMarker, [](std::ostream& os) { os << kRunMarkerText; });
    test_pause("staged");
    if (g_signal) throw Interrupted(g_signal);
    if (mount_) {
      commit_contents();
    } else {
      commit_exchange();
    }
  }
  committed_ = true;
  release();
  if (g_signal) throw Interrupted(g_signal);  // the output is complete; die of the signal now
}

void OutputTarget::commit_exchange() {
  struct stat st {};
  if (lstat(target_.c_str(), &st) != 0) {  // a new path
    rename_or_throw(staging_, target_, "cannot create " + target_.string());
    return;
  }
  // One system call swaps the two trees: the target holds the old or the new run at every instant.
  if (renameat2(AT_FDCWD, staging_.c_str(), AT_FDCWD, target_.c_str(), RENAME_EXCHANGE) == 0) {
    test_pause("exchanged");
    std::error_code ec;
    fs::remove_all(staging_, ec);  // now the old run; a kill here leaves it to remove_stale()
    return;
  }
  if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP)
    throw OutputError("cannot replace " + target_.string() + ": " + os_reason(errno));
  // No RENAME_EXCHANGE on this file system: the old run is renamed aside first; a kill between
  // the renames leaves it there and the next claim puts it back (remove_stale).
  const fs::path old = target_.parent_path() / ("." + short_name(target_.filename().string()) + ".old-" + std::to_string(getpid()));
  rename_or_throw(target_, old, "cannot replace " + target_.string());
  test_pause("aside");
  if (std::rename(staging_.c_str(), target_.c_str()) != 0) {
    const int e = errno;
    std::rename(old.c_str(), target_.c_str());
    throw OutputError("cannot replace " + target_.string() + ": " + os_reason(e));
  }
  std::error_code ec;
  fs::remove_all(old, ec);
}

void OutputTarget::commit_contents() {
  // A mount point stays; its entries move. The old entries go aside (inside the mount, same file
  // system), the marker is replaced in one rename (so the directory is never without it), then the
  // new entries move in. Not atomic as a whole: a kill part-way leaves a mix that the marker still
  // identifies as a run, and the next run replaces it.
  const fs::path old = target_ / (".ahbm-old-" + std::to_string(getpid()));
  if (mkdir(old.c_str(), 0777) != 0) throw OutputError("cannot replace the contents of " + target_.string() + ": " + os_reason(errno));
  for (const std::string& n : entries_of(target_))
    if (!internal_entry(n) && n != kRunMarker)
      rename_or_throw(target_ / n, old / n, "cannot replace " + (target_ / n).string());
  rename_or_throw(staging_ / kRunMarker, target_ / kRunMarker, "cannot write " + (target_ / kRunMarker).string());
  for (const std::string& n : entries_of(staging_))
    rename_or_throw(staging_ / n, target_ / n, "cannot write " + (target_ / n).string());
  std::error_code ec;
  fs::remove_all(old, ec);
  fs::remove_all(staging_, ec);
}

void OutputTarget::release() noexcept {
  if (slot_ >= 0) {
    g_slots[slot_].used = 0;
    slot_ = -1;
  }
  std::error_code ec;
  if (!committed_ && !staging_.empty()) fs::remove_all(staging_, ec);
  staging_.clear();
  if (lock_fd_ >= 0) {
    unlink(lock_.c_str());  // before unlocking: see take_lock()
    ::close(lock_fd_);
    lock_fd_ = -1;
    if (handle_signals_ && --g_claims == 0) {
      sigaction(SIGINT, &g_old_int, nullptr);
      sigaction(SIGTERM, &g_old_term, nullptr);
    }
  }
  // After the lock file: it lies in the deepest parent, which is not empty while it is there.
  if (!committed_)
    for (auto it = created_parents_.rbegin(); it != created_parents_.rend(); ++it) rmdir(it->c_str());
  created_parents_.clear();
  if (writing_) {
    writing_ = false;
    --g_writing;
  }
}

void guard_standard_streams() {
  for (int fd = 0; fd <= 2; ++fd)
    if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
      const int held = ::open("/dev/null", O_RDONLY);  // the lowest free descriptor: fd itself
      if (held >= 0 && held != fd) ::close(held);
    }
  std::signal(SIGPIPE, SIG_IGN);
}

void check_stdout() {
  std::cout.flush();
  const bool lost = !std::cout;
  errno = 0;
  const int r = std::fflush(stdout);
  int e = errno;
  if (g_signal) throw Interrupted(g_signal);
  if (r != 0 || std::ferror(stdout) || lost) {
    // stdio drops a buffer it failed to write, and the errno of that write with it: one more
    // byte on the broken stream tells the reason (/dev/full: "No space left on device").
    if (e == 0 && ::write(STDOUT_FILENO, "\n", 1) < 0) e = errno;
    throw OutputError("cannot write standard output: " + (e ? os_reason(e) : std::string("a write failed")));
  }
}

}  // namespace ahbm
