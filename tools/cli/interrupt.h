#pragma once
// Ctrl-C during a long command (ahbm-sim serve): while an InterruptScope lives, the first SIGINT
// only sets a flag the command polls at its next safe point (a step boundary), so it can stop
// there and still write what it simulated, marked partial; the handler is reset by that signal
// (SA_RESETHAND), so a second Ctrl-C ends the process at once, writing nothing.
namespace ahbm::cli {

class InterruptScope {
 public:
  InterruptScope();   // installs the handler (the flag cleared)
  ~InterruptScope();  // puts back the handler it replaced
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;
  bool requested() const;
};

}  // namespace ahbm::cli
