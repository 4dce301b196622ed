#include "hw/bench/hbm_bench.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>

#include "hw/common/base/error.h"
#include "hw/hbm/channel_array.h"
#include "hw/hbm/dram_checker.h"
#include "hw/hbm/dram_controller.h"

namespace ahbm::hbm {

namespace {

struct Chunk {
  uint64_t addr, bytes;
  bool write;
};

std::string fmt_work(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

void check_options(const HbmBenchOptions& o) {
  auto need = [](bool ok, const std::string& opt, const std::string& value, const std::string& allowed) {
    if (!ok) throw InputError(opt + " " + value + ": allowed " + allowed);
  };
  need(o.pseudo_channels >= 1 && o.pseudo_channels <= 64, "--pseudo-channels", std::to_string(o.pseudo_channels), "[1, 64]");
  need(!o.keep_commands || o.pseudo_channels == 1, "--pseudo-channels", std::to_string(o.pseudo_channels),
       "1 with --command-trace (DRAMPower models one rank: one pseudo-channel's commands)");
  const uint64_t burst = uint64_t(o.spec.org.burst_bytes), cap = o.spec.org.bytes() * uint64_t(o.pseudo_channels);
  const double max_bursts = o.check || o.keep_commands ? kMaxHbmBenchCheckedBursts : kMaxHbmBenchBursts;
  const char* logged = o.check ? " with --check" : o.keep_commands ? " with --command-trace" : "";
  if (!o.trace.empty()) {  // a trace: its requests are checked by the reader, their number here
    need(o.inflight >= 1 && o.inflight <= 1024, "--inflight", std::to_string(o.inflight), "[1, 1024]");
    need(o.trace_clock_mhz >= 0 && o.trace_clock_mhz <= 1e6, "--trace-clock-mhz", fmt_work(o.trace_clock_mhz),
         "(0, 1e6], or 0 for the DRAM's clock");
    o.spec.validate("hbm-bench");
    const HbmBenchWork w = hbm_bench_work(o);
    if (!o.allow_large && (w.chunks > kMaxHbmBenchChunks || w.bursts > max_bursts))
      throw InputError("--trace " + o.trace_file + ": " + fmt_work(w.chunks) + " requests and " + fmt_work(w.bursts) +
                       " bursts exceed the bench's bound (allowed: up to " + fmt_work(kMaxHbmBenchChunks) +
                       " requests and " + fmt_work(max_bursts) + " bursts" + logged +
                       ", about 8 minutes and 1 GiB; a shorter trace, or --allow-large)");
    return;
  }
  need(o.pattern == "sequential" || o.pattern == "random" || o.pattern == "stream-write", "--pattern", o.pattern,
       "sequential, random, stream-write");
  need(o.chunk_bytes >= burst && o.chunk_bytes % burst == 0 && o.chunk_bytes <= cap / 4, "--chunk-bytes",
       std::to_string(o.chunk_bytes), "a multiple of " + std::to_string(burst) + " in [" + std::to_string(burst) + ", " +
       std::to_string(cap / 4) + "]");
  need(o.bytes >= o.chunk_bytes && o.bytes <= cap / 2, "--bytes", std::to_string(o.bytes),
       "[chunk bytes, " + std::to_string(cap / 2) + "]");
  need(o.write_bytes % burst == 0 && o.write_bytes <= cap / 4, "--write-bytes", std::to_string(o.write_bytes),
       "a multiple of " + std::to_string(burst) + " up to " + std::to_string(cap / 4));
  need((o.write_bytes == 0) == (o.write_every == 0), "--write-every", std::to_string(o.write_every),
       "> 0 exactly when --write-bytes > 0");
  need(o.inflight >= 1 && o.inflight <= 1024, "--inflight", std::to_string(o.inflight), "[1, 1024]");
  o.spec.validate("hbm-bench");
  const HbmBenchWork w = hbm_bench_work(o);
  if (!o.allow_large && (w.chunks > kMaxHbmBenchChunks || w.bursts > max_bursts))
    throw InputError("--bytes " + std::to_string(o.bytes) + " in chunks of --chunk-bytes " + std::to_string(o.chunk_bytes) +
                     (o.write_every ? " (and --write-bytes " + std::to_string(o.write_bytes) + " every --write-every " +
                                          std::to_string(o.write_every) + ")"
                                    : std::string()) +
                     " = " + fmt_work(w.chunks) + " chunks and " + fmt_work(w.bursts) + " bursts of " +
                     std::to_string(burst) + " bytes exceed the bench's bound (allowed: up to " +
                     fmt_work(kMaxHbmBenchChunks) + " chunks and " + fmt_work(max_bursts) + " bursts" +
                     logged +
                     ", about 8 minutes and 1 GiB; fewer --bytes, larger --chunk-bytes, or --allow-large)");
}

// The run's chunks in issue order: reads as the pattern says, and a write of write_bytes after
// every write_every bytes read (appended one after another above the read region).
std::vector<Chunk> make_chunks(const HbmBenchOptions& o) {
  if (!o.trace.empty()) {  // a request moves every burst it touches
    const uint64_t burst = uint64_t(o.spec.org.burst_bytes);
    std::vector<Chunk> chunks;
    for (const MemTraceRequest& q : o.trace) {
      const uint64_t first = q.addr / burst, last = (q.addr + q.bytes - 1) / burst;
      chunks.push_back({first * burst, (last - first + 1) * burst, q.write});
    }
    return chunks;
  }
  const uint64_t cap = o.spec.org.bytes() * uint64_t(o.pseudo_channels), write_base = cap / 2;
  std::mt19937_64 rng(o.seed);
  std::uniform_int_distribution<uint64_t> pick(0, write_base / o.chunk_bytes - 1);
  std::vector<Chunk> chunks;
  uint64_t read = 0, since_write = 0, written = 0;
  for (uint64_t i = 0; read < o.bytes; ++i) {
    const uint64_t n = std::min(o.chunk_bytes, o.bytes - read);
    const uint64_t addr = o.pattern == "random" ? pick(rng) * o.chunk_bytes : i * o.chunk_bytes;
    chunks.push_back({addr, n, false});
    read += n;
    since_write += n;
    if (o.write_every > 0 && since_write >= o.write_every) {
      chunks.push_back({write_base + (written % (cap / 4)), o.write_bytes, true});
      written += o.write_bytes;
      since_write = 0;
    }
  }
  return chunks;
}

}  // namespace

HbmBenchWork hbm_bench_work(const HbmBenchOptions& o) {
  const double burst = double(o.spec.org.burst_bytes);
  if (!o.trace.empty()) {
    HbmBenchWork w;
    w.chunks = double(o.trace.size());
    for (const MemTraceRequest& q : o.trace) w.bursts += std::ceil(double(q.bytes) / burst) + 1;  // at most
    return w;
  }
  const double reads = std::ceil(double(o.bytes) / double(std::max<uint64_t>(o.chunk_bytes, 1)));
  // A write after every write_every bytes read (make_chunks): at most one per read chunk.
  const double writes =
      o.write_every ? std::min(reads, std::floor(double(o.bytes) / double(std::max(o.write_every, o.chunk_bytes)))) : 0.0;
  HbmBenchWork w;
  w.chunks = reads + writes;
  w.bursts = std::ceil(double(o.bytes) / burst) + writes * std::ceil(double(o.write_bytes) / burst);
  return w;
}

HbmBenchResult run_hbm_bench(const HbmBenchOptions& opt) {
  HbmBenchOptions o = opt;
  if (o.pattern == "stream-write" && o.write_bytes == 0) {
    o.write_bytes = 512;
    o.write_every = 16 * 1024;
  }
  check_options(o);
  const std::vector<Chunk> chunks = make_chunks(o);
  const uint64_t pcs = uint64_t(o.pseudo_channels);
  std::vector<DramController> ctl(pcs, DramController(o.spec, o.check || o.keep_commands));
  // A timed trace: the cycle (tCK) each request may enter, at or after its time stamp.
  std::vector<int64_t> issue_at;
  if (!o.trace.empty() && o.trace.front().cycle >= 0) {
    const double trace_ns = o.trace_clock_mhz > 0 ? 1e3 / o.trace_clock_mhz : o.spec.t.tck_ns;
    for (const MemTraceRequest& q : o.trace)
      issue_at.push_back(int64_t(std::ceil(double(q.cycle) * trace_ns / o.spec.t.tck_ns - 1e-9)));
  }
  const uint64_t burst = uint64_t(o.spec.org.burst_bytes);
  std::vector<int64_t> start(chunks.size(), -1), finish(chunks.size(), -1);
  std::vector<uint64_t> left(chunks.size());
  for (size_t i = 0; i < chunks.size(); ++i) left[i] = chunks[i].bytes / burst;
  size_t next_chunk = 0, done_chunks = 0;
  uint64_t next_burst = 0;  // of next_chunk
  int64_t first_done = -1, now = 0;
  std::vector<DramCompletion> done;
  while (done_chunks < chunks.size()) {
    // Bursts enter in order; chunk i may start once chunk i - inflight has completed (its last
    // data has moved: `finish` is known when its last RD/WR issues, and lies ahead).
    int64_t wake = std::numeric_limits<int64_t>::max();
    while (next_chunk < chunks.size()) {
      if (next_chunk >= size_t(o.inflight)) {
        const int64_t f = finish[next_chunk - size_t(o.inflight)];
        if (f < 0) break;
        if (f > now) {
          wake = f;
          break;
        }
      }
      if (!issue_at.empty() && issue_at[next_chunk] > now) {
        wake = std::min(wake, issue_at[next_chunk]);
        break;
      }
      const Chunk& c = chunks[next_chunk];
      const ChannelBurst at = interleave_burst(c.addr / burst + next_burst, int(pcs), int(burst));
      DramController& pc = ctl[size_t(at.channel)];
      if (pc.full()) break;
      if (start[next_chunk] < 0) start[next_chunk] = issue_at.empty() ? now : issue_at[next_chunk];
      pc.enqueue({next_chunk * (uint64_t(1) << 24) + next_burst, at.addr, c.write, now});
      if (++next_burst == c.bytes / burst) {
        ++next_chunk;
        next_burst = 0;
      }
    }
    // One cycle while anything is queued, else straight to the next event.
    bool idle = true;
    int64_t next = wake;
    for (const DramController& c : ctl) {
      idle = idle && c.idle();
      next = std::min(next, c.next_event());
    }
    const int64_t until = idle ? std::max(now + 1, std::min(next, now + (int64_t(1) << 20))) : now + 1;
    done.clear();
    for (DramController& c : ctl) c.run_until(until, done);
    now = until;
    for (const DramCompletion& d : done) {
      const size_t ci = size_t(d.id >> 24);
      if (ci == 0 && (first_done < 0 || d.done < first_done)) first_done = d.done;
      if (--left[ci] == 0) {
        finish[ci] = d.done;
        ++done_chunks;
      }
    }
    if (o.progress && !done.empty()) o.progress(done_chunks, chunks.size(), double(now) * o.spec.t.tck_ns);
  }
  // Completions are reported at issue; the run ends when the last data has moved.
  const int64_t end = *std::max_element(finish.begin(), finish.end());
  const double tck = o.spec.t.tck_ns;
  HbmBenchResult r;
  r.options = o;
  r.chunks = chunks.size();
  for (const Chunk& c : chunks) (c.write ? r.bytes_written : r.bytes_read) += c.bytes;
  r.total_ns = double(end) * tck;
  r.first_access_ns = double(first_done - start[0]) * tck;  // start[0] = 0 but for a timed trace
  double sum = 0;
  for (size_t i = 0; i < chunks.size(); ++i) sum += double(finish[i] - start[i]) * tck;
  r.chunk_ns_mean = sum / double(chunks.size());
  r.peak_gbps = o.spec.peak_gbps() * double(pcs);
  r.achieved_gbps = double(r.bytes_read + r.bytes_written) / r.total_ns;
  r.efficiency = r.achieved_gbps / r.peak_gbps;
  int64_t refresh_cycles = 0;
  uint64_t hits_weighted = 0, cas = 0;
  r.bank_utilisation.assign(size_t(o.spec.org.banks()), 0.0);
  for (const DramController& c : ctl) {
    const DramStats& s = c.stats();
    refresh_cycles += s.refresh_cycles;
    cas += s.reads + s.writes;
    hits_weighted += s.reads + s.writes - std::min(s.reads + s.writes, s.acts);
    r.acts += s.acts;
    r.refreshes += s.refreshes;
    for (size_t b = 0; b < s.bank_bursts.size(); ++b)
      r.bank_utilisation[b] += double(s.bank_bursts[b]) * o.spec.t.burst / double(end) / double(pcs);
  }
  r.row_hit_rate = cas ? double(hits_weighted) / double(cas) : 0.0;
  r.refresh_share = double(refresh_cycles) / double(end) / double(pcs);
  if (o.keep_commands) r.commands = ctl[0].commands();
  if (o.check) {
    r.rule_violations = 0;
    for (const DramController& c : ctl) {
      const DramCheckResult k = check_dram_commands(o.spec, c.commands());
      r.rule_violations += int64_t(k.violations);
      for (const std::string& v : k.first)
        if (r.first_violations.size() < 10) r.first_violations.push_back(v);
    }
  }
  return r;
}

Json HbmBenchResult::to_json() const {
  Json j = {{"pattern", options.pattern},
            {"chunk_bytes", options.chunk_bytes},
            {"bytes_read", bytes_read},
            {"bytes_written", bytes_written},
            {"write_bytes", options.write_bytes},
            {"write_every", options.write_every},
            {"inflight", options.inflight},
            {"pseudo_channels", options.pseudo_channels},
            {"mapping", options.spec.mapping.name},
            {"mapping_layout", mapping_string(options.spec.mapping)},
            {"page_policy", options.spec.page == PagePolicy::open ? "open" : "closed"},
            {"refresh", refresh_name(options.spec.refresh)},
            {"queue_depth", options.spec.queue_depth},
            {"chunks", chunks},
            {"total_ns", total_ns},
            {"first_access_ns", first_access_ns},
            {"chunk_ns_mean", chunk_ns_mean},
            {"peak_gbps", peak_gbps},
            {"achieved_gbps", achieved_gbps},
            {"efficiency", efficiency},
            {"row_hit_rate", row_hit_rate},
            {"refresh_share", refresh_share},
            {"activates", acts},
            {"refreshes", refreshes},
            {"bank_utilisation", bank_utilisation}};
  if (!options.trace.empty()) {  // a trace's run: what it replayed (the pattern's fields do not apply)
    j["pattern"] = "trace";
    j["chunk_bytes"] = 0;
    j["trace"] = {{"file", options.trace_file},
                  {"format", options.trace_format},
                  {"requests", options.trace.size()},
                  {"timed", options.trace.front().cycle >= 0},
                  {"clock_mhz", options.trace_clock_mhz > 0 ? options.trace_clock_mhz : 1e3 / options.spec.t.tck_ns}};
  }
  if (rule_violations >= 0) {
    j["rule_violations"] = rule_violations;
    j["first_violations"] = first_violations;
  }
  return j;
}

std::string HbmBenchResult::line() const {
  char buf[320];
  if (!options.trace.empty()) {  // the file's name in full, however long
    std::snprintf(buf, sizeof buf,
                  " (%s, %zu requests), %s, refresh %s, inflight %d: %.2f of %.2f GB/s (efficiency %.3f), request "
                  "latency %.2f ns mean, row hits %.3f, refresh share %.3f",
                  options.trace_format.c_str(), options.trace.size(), options.spec.mapping.name.c_str(),
                  refresh_name(options.spec.refresh), options.inflight, achieved_gbps, peak_gbps, efficiency,
                  chunk_ns_mean, row_hit_rate, refresh_share);
    return "trace " + options.trace_file + buf;
  }
  std::snprintf(buf, sizeof buf,
                "%s %llu B chunks, %s, refresh %s, inflight %d: %.2f of %.2f GB/s (efficiency %.3f), first access "
                "%.2f ns, row hits %.3f, refresh share %.3f",
                options.pattern.c_str(), (unsigned long long)options.chunk_bytes, options.spec.mapping.name.c_str(),
                refresh_name(options.spec.refresh), options.inflight, achieved_gbps, peak_gbps, efficiency,
                first_access_ns, row_hit_rate, refresh_share);
  return buf;
}

}  // namespace ahbm::hbm
