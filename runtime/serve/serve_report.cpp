#include "runtime/serve/serve_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "hw/common/observe/trace_sink.h"
#include "runtime/report/trace_time.h"

namespace ahbm::serve {

namespace {

// Shortest round-trip text of a double (CSV cells); -1 stays -1 (not reached).
std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// The P-B-D pools' names in StepSample::pool order: "prefill" and "decode", or each pool's
// ("prefill0", …, "decode0", …) for a stage of several.
std::vector<std::string> pbd_pool_names(const PbdResult& p) {
  std::vector<std::string> names;
  for (const auto* stage : {&p.prefill_pools, &p.decode_pools}) {
    for (const PoolStats& s : *stage) names.push_back(s.name);
    if (stage->empty()) names.push_back(stage == &p.prefill_pools ? "prefill" : "decode");
  }
  return names;
}

// The pools that step at once when there are several besides P-B-D's, in StepSample::pool order:
// prefix_affinity's slices (every replica's), else the data-parallel replicas (a pool each).
const std::vector<PoolStats>& parallel_pools(const ServeResult& r) { return r.slices.empty() ? r.replicas : r.slices; }

}  // namespace

std::string requests_csv(const ServeResult& r) {
  std::ostringstream os;
  os << "workflow,template,round,branch,prefill_tokens,requested_tokens,generated_tokens,ready_ns,scheduled_ns,"
        "first_token_ns,last_token_ns,tool_ns,done_ns,cancelled,energy_j"
     << (r.preemption ? ",preemptions\n" : "\n");  // the column under on_demand admission only
  for (const RequestRecord& q : r.requests) {
    os << q.workflow << ',' << r.workflows[size_t(q.workflow)].tmpl << ',' << q.round << ',' << q.branch << ','
       << q.prefill_tokens << ',' << q.requested_tokens << ',' << q.generated_tokens << ',' << num(q.ready_ns) << ','
       << num(q.scheduled_ns) << ',' << num(q.first_token_ns) << ',' << num(q.last_token_ns) << ',' << num(q.tool_ns)
       << ',' << num(q.done_ns) << ',' << (q.cancelled ? 1 : 0) << ',' << num(q.energy_j);
    if (r.preemption) os << ',' << q.preemptions;
    os << '\n';
  }
  return os.str();
}

namespace {

// trace.json's events as text. Each event's other fields as nlohmann::json prints them, then its
// times: ts (and dur for a slice) as the exact decimal µs of whole ns (runtime/report/
// trace_time.h), which a double could not hold (94.329 µs is 94.32899999... as a double).
class TraceEvents {
 public:
  explicit TraceEvents(std::string& out) : out_(out) {}
  void metadata(const Json& fields) { append(fields); out_ += '}'; }
  // A slice from start to end (ns): both rounded to whole ns, dur their difference, so a slice
  // that follows or holds another still does.
  void slice(const Json& fields, double start_ns, double end_ns) {
    const int64_t start = report::whole_ns(start_ns), end = report::whole_ns(end_ns);
    append(fields);
    out_ += ",\"dur\":";
    report::append_trace_us(out_, end - start);
    at(start);
  }
  void counter(const Json& fields, double at_ns) {
    append(fields);
    at(report::whole_ns(at_ns));
  }

 private:
  void append(const Json& fields) {  // "{...": the closing brace left off for the times
    if (!first_) out_ += ',';
    first_ = false;
    const std::string text = fields.dump();
    out_.append(text, 0, text.size() - 1);
  }
  void at(int64_t ns) {
    out_ += ",\"ts\":";
    report::append_trace_us(out_, ns);
    out_ += '}';
  }
  std::string& out_;
  bool first_ = true;
};

}  // namespace

std::string serve_trace_json(const ServeResult& r) {
  // Chrome trace events: ts and dur in µs. pid 0 = the chip (steps, counters), pid 1 = workflows.
  // Every track (pid, tid) of a slice is named by a thread_name event.
  std::string out = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[";
  TraceEvents ev(out);
  const auto thread_name = [&](int pid, size_t tid, const std::string& name) {
    ev.metadata({{"name", "thread_name"}, {"ph", "M"}, {"pid", pid}, {"tid", tid}, {"args", {{"name", name}}}});
  };
  ev.metadata({{"name", "process_name"}, {"ph", "M"}, {"pid", 0}, {"args", {{"name", "chip"}}}});
  ev.metadata({{"name", "process_name"}, {"ph", "M"}, {"pid", 1}, {"args", {{"name", "workflows"}}}});
  // The step tracks: P-B-D: each pool's steps on a thread of its own (the prefill pools', then the
  // decode pools'), KV transfers on the next, and a counter track of the buffer's sequences;
  // several pools stepping at once (slices, data-parallel replicas): a thread each; else one, the
  // whole chip's.
  if (r.pbd) {
    std::vector<std::string> names;
    for (const std::string& pool : pbd_pool_names(*r.pbd)) names.push_back(pool + " pool");
    names.push_back("kv transfer");
    for (size_t t = 0; t < names.size(); ++t) thread_name(0, t, names[t]);
    for (const KvTransfer& t : r.pbd->transfers) {
      Json args = {{"sequences", t.sequences}, {"bytes", t.bytes}};
      if (t.overlap_ns > 0) args["overlap_ns"] = t.overlap_ns;  // per-layer migration: alongside the prefill
      ev.slice({{"name", "kv transfer"}, {"ph", "X"}, {"pid", 0}, {"tid", names.size() - 1}, {"args", args}},
               t.start_ns, t.start_ns + t.ns);
    }
    for (const auto& [at, n] : r.pbd->buffer)
      ev.counter({{"name", "buffer"}, {"ph", "C"}, {"pid", 0}, {"args", {{"sequences", n}}}}, at);
  } else if (parallel_pools(r).size() > 1) {
    for (size_t i = 0; i < parallel_pools(r).size(); ++i) thread_name(0, i, parallel_pools(r)[i].name);
  } else {
    thread_name(0, 0, "chip");
  }
  for (size_t i = 0; i < r.steps.size(); ++i) {
    const StepSample& s = r.steps[i];
    Json step = {{"name", "step"}, {"ph", "X"}, {"pid", 0}, {"tid", s.pool},
                 {"args", {{"step", i}, {"workflows", s.workflows}, {"agents", s.agents}, {"tokens", s.tokens},
                           {"reused", s.reused}}}};
    if (s.swap_ns > 0)  // preemption = swap: the boundary's swaps, at the step's start
      step["args"]["swap_ns"] = s.swap_ns;
    if (s.host_wait_ns > 0)  // before them, the wait for the host link
      step["args"]["host_wait_ns"] = s.host_wait_ns;
    ev.slice(step, s.start_ns, s.start_ns + s.ns);
    ev.counter({{"name", "kv_pages"}, {"ph", "C"}, {"pid", 0}, {"args", {{"in_use", s.kv_pages}}}}, s.start_ns);
    ev.counter({{"name", "queue"}, {"ph", "C"}, {"pid", 0}, {"args", {{"waiting", s.waiting}, {"active", s.active}}}},
               s.start_ns);
    ev.counter({{"name", "batch"}, {"ph", "C"}, {"pid", 0}, {"args", {{"tokens", s.tokens}, {"workflows", s.workflows}}}},
               s.start_ns);
    ev.counter({{"name", "hbm_gbps"}, {"ph", "C"}, {"pid", 0},
                {"args", {{"read", s.ns > 0 ? double(s.hbm_bytes) / s.ns : 0.0}}}},
               s.start_ns);
  }
  for (const WorkflowRecord& f : r.workflows) {
    thread_name(1, size_t(f.id), "workflow " + std::to_string(f.id));
    if (f.admitted_ns > f.arrival_ns)
      ev.slice({{"name", "queued"}, {"ph", "X"}, {"pid", 1}, {"tid", f.id}}, f.arrival_ns, f.admitted_ns);
    ev.slice({{"name", f.tmpl}, {"ph", "X"}, {"pid", 1}, {"tid", f.id},
              {"args", {{"workflow", f.id}, {"tokens", f.generated_tokens}}}},
             f.admitted_ns, f.done_ns);
  }
  out += "]}\n";
  return out;
}

std::string serve_vcd(const ServeResult& r) {
  TraceSink t(true);
  const auto ns = [](double v) { return uint64_t(report::whole_ns(v)); };
  const int pages = t.add_signal("serve.kv_pages", 64), waiting = t.add_signal("serve.queue.waiting", 32),
            active = t.add_signal("serve.queue.active", 32), tokens = t.add_signal("serve.batch.tokens", 32),
            workflows = t.add_signal("serve.batch.workflows", 32);
  std::vector<int> busy;  // by StepSample::pool
  if (r.pbd) {
    for (const std::string& pool : pbd_pool_names(*r.pbd))
      busy.push_back(t.add_signal("serve.pbd." + pool + "_busy", 1));
  } else if (parallel_pools(r).size() > 1) {  // slices, replicas: they step at once, each its own signal
    for (const PoolStats& p : parallel_pools(r)) busy.push_back(t.add_signal("serve." + p.name + ".busy", 1));
  } else {
    busy = {t.add_signal("serve.busy", 1)};
  }
  // Per signal in time order (a pool's steps follow one another): a step's end and the next
  // step's start at the same ns collapse to the start.
  for (const StepSample& s : r.steps) {
    const uint64_t at = ns(s.start_ns);
    t.set_at_ns(pages, uint64_t(s.kv_pages), at);
    t.set_at_ns(waiting, uint64_t(s.waiting), at);
    t.set_at_ns(active, uint64_t(s.active), at);
    t.set_at_ns(tokens, uint64_t(s.tokens), at);
    t.set_at_ns(workflows, uint64_t(s.workflows), at);
    t.set_at_ns(busy[size_t(s.pool)], 1, at);
    t.set_at_ns(busy[size_t(s.pool)], 0, ns(s.start_ns + s.ns));
  }
  if (r.pbd) {
    const int buffer = t.add_signal("serve.pbd.buffer", 32), transfer = t.add_signal("serve.pbd.transfer", 1);
    for (const auto& [at, n] : r.pbd->buffer) t.set_at_ns(buffer, uint64_t(n), ns(at));
    for (const KvTransfer& x : r.pbd->transfers) {
      t.set_at_ns(transfer, 1, ns(x.start_ns));
      t.set_at_ns(transfer, 0, ns(x.start_ns + x.ns));
    }
  }
  std::ostringstream os;
  t.write_vcd(os);
  return os.str();
}

void write_serve_files(OutputTarget& out, const ServeSummary& summary, const ServeResult& r, bool vcd) {
  out.write("summary.json", [&](std::ostream& os) { os << to_json(summary).dump(2) << '\n'; });
  out.write("requests.csv", [&](std::ostream& os) { os << requests_csv(r); });
  out.write("trace.json", [&](std::ostream& os) { os << serve_trace_json(r); });
  if (vcd) out.write("waves.vcd", [&](std::ostream& os) { os << serve_vcd(r); });
}

}  // namespace ahbm::serve
