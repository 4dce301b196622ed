#include "runtime/report/gzip_stream.h"

#include <zlib.h>

#include <stdexcept>
#include <vector>

namespace ahbm::report {

class GzipOstream::Buf : public std::streambuf {
 public:
  Buf(std::ostream& sink, int level) : sink_(sink), in_(1 << 16), out_(1 << 16) {
    // windowBits 15 + 16: a gzip wrapper instead of zlib's.
    if (deflateInit2(&z_, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
      throw std::runtime_error("zlib: deflateInit2 failed");
    setp(in_.data(), in_.data() + in_.size());
  }
  ~Buf() override { deflateEnd(&z_); }
  void finish() {
    if (finished_) return;
    deflate_pending(Z_FINISH);
    finished_ = true;
    sink_.flush();
  }

 protected:
  int_type overflow(int_type c) override {
    if (finished_) return traits_type::eof();
    deflate_pending(Z_NO_FLUSH);
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    if (finished_) return 0;
    if (n > epptr() - pptr()) {  // a large write goes straight to the compressor
      deflate_pending(Z_NO_FLUSH);
      if (n >= std::streamsize(in_.size())) {
        deflate_block(s, size_t(n), Z_NO_FLUSH);
        return n;
      }
    }
    std::copy(s, s + n, pptr());
    pbump(int(n));
    return n;
  }

 private:
  void deflate_pending(int flush) {
    deflate_block(pbase(), size_t(pptr() - pbase()), flush);
    setp(in_.data(), in_.data() + in_.size());
  }
  void deflate_block(const char* data, size_t n, int flush) {
    z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data));
    z_.avail_in = uInt(n);
    int rc;
    do {
      z_.next_out = reinterpret_cast<Bytef*>(out_.data());
      z_.avail_out = uInt(out_.size());
      rc = deflate(&z_, flush);
      if (rc == Z_STREAM_ERROR) throw std::runtime_error("zlib: deflate failed");
      sink_.write(out_.data(), std::streamsize(out_.size() - z_.avail_out));
    } while (z_.avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
  }

  std::ostream& sink_;
  z_stream z_{};
  std::vector<char> in_, out_;
  bool finished_ = false;
};

GzipOstream::GzipOstream(std::ostream& sink, int level) : std::ostream(nullptr), buf_(new Buf(sink, level)) {
  rdbuf(buf_.get());
}

GzipOstream::~GzipOstream() {
  try {
    buf_->finish();
  } catch (...) {
  }
}

void GzipOstream::finish() { buf_->finish(); }

}  // namespace ahbm::report
