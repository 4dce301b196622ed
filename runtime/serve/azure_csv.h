#pragma once
// The Azure LLM inference trace importer (`arrival.process = "azure_csv"`, docs/serving.md).
#include <istream>
#include <string>
#include <vector>

namespace ahbm::serve {

// Rows of an Azure LLM inference trace CSV (header TIMESTAMP,ContextTokens,GeneratedTokens, an
// optional UTF-8 byte-order mark before it; TIMESTAMP as "YYYY-MM-DD HH:MM:SS[.fraction]" on the
// proleptic Gregorian calendar, or seconds), at most `max_rows`: arrival in ns after the first
// row, context and generated tokens. Bad rows and impossible dates are InputErrors naming the
// line, the column and the value.
// Arrivals are held as double ns from the first one. Up to 2^50 ns (1,125,900 s, about 13 days:
// a week-long trace fits) a double resolves 1/8 ns or better (below 2^43 ns, 1/1024 ns, under
// SystemC's 1 ps), and whole-ns times (a 1 GHz clock) stay exact; later arrivals (a CSV row, an
// element of times_ns, a Poisson arrival) are refused (docs/reliability.md, "Ranges of time").
constexpr double kMaxArrivalNs = 1125899906842624.0;  // 2^50

struct TraceRow {
  double arrival_ns = 0;
  int context_tokens = 0, generated_tokens = 0;
};
// The file: it must be a regular file (a FIFO or a device is refused before it is opened).
std::vector<TraceRow> read_azure_csv(const std::string& path, int max_rows);
// The parsing half, for text from any stream (`path` names it in messages).
std::vector<TraceRow> parse_azure_csv(std::istream& in, const std::string& path, int max_rows);

// Days from 1970-01-01 to the date y-m-d of the proleptic Gregorian calendar (negative before),
// for m in [1, 12] and d in [1, 31] (Howard Hinnant's days_from_civil).
long long days_from_civil(long long y, int m, int d);
// Days in month m (1 to 12) of year y.
int days_in_month(long long y, int m);

}  // namespace ahbm::serve
