#pragma once
// An output stream that gzip-compresses (zlib, RFC 1952) into another stream: trace.json.gz,
// which Perfetto and `zcat` open as they are. The header carries no file name and no time
// stamp, so the same input gives the same bytes.
#include <memory>
#include <ostream>
#include <streambuf>

namespace ahbm::report {

class GzipOstream : public std::ostream {
 public:
  // level: zlib's 1 (fastest) to 9 (smallest).
  explicit GzipOstream(std::ostream& sink, int level = 1);
  ~GzipOstream() override;
  // Compresses what is buffered, writes the trailer and flushes `sink`; needed before the
  // sink is closed (the destructor does it too, without reporting a failure).
  void finish();

 private:
  class Buf;
  std::unique_ptr<Buf> buf_;
};

}  // namespace ahbm::report
