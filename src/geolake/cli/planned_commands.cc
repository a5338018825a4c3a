// Subcommands that docs/architecture.md plans but that are not built yet. Each declares the options
// it gives, so `geolake COMMAND --help` already shows the interface, and fails with
// kNotImplemented (exit code 9) naming the issue that builds it. A command moves out of this
// file into its own file when it is built.
#include <memory>
#include <string>
#include <vector>

#include "geolake/cli/commands.h"

namespace geolake::cli {
namespace {

// Options of a planned command only need somewhere to land while parsing.
struct Sink {
  std::vector<std::string> strings;
  std::vector<std::vector<std::string>> lists;
  std::vector<int64_t> ints;
  bool flag = false;
};

class Planned {
 public:
  Planned(CLI::App* sub, Action* action, std::string what)
      : sub_(sub), sink_(std::make_shared<Sink>()) {
    sink_->strings.reserve(32);
    sink_->lists.reserve(8);
    sink_->ints.reserve(16);
    auto sink = sink_;  // keep option storage alive as long as the action
    *action = [sink, what = std::move(what)](const GlobalOptions&) -> Status {
      return Status::NotImplemented(what);
    };
  }
  Planned& Pos(const char* name, const char* help, bool required = true) {
    sub_->add_option(name, sink_->strings.emplace_back(), help)->required(required);
    return *this;
  }
  Planned& Many(const char* name, const char* help) {
    sub_->add_option(name, sink_->lists.emplace_back(), help)->required();
    return *this;
  }
  Planned& Opt(const char* name, const char* help) {
    sub_->add_option(name, sink_->strings.emplace_back(), help);
    return *this;
  }
  Planned& Choice(const char* name, const char* help, std::vector<std::string> choices) {
    sub_->add_option(name, sink_->strings.emplace_back(), help)->check(CLI::IsMember(choices));
    return *this;
  }
  Planned& Int(const char* name, const char* help) {
    sub_->add_option(name, sink_->ints.emplace_back(), help);
    return *this;
  }
  Planned& Flag(const char* name, const char* help) {
    sub_->add_flag(name, sink_->flag, help);
    return *this;
  }

 private:
  CLI::App* sub_;
  std::shared_ptr<Sink> sink_;
};

constexpr const char* kQueryIssue = "not built yet (issue #6: queries and pictures)";
constexpr const char* kLaterIssue = "not built yet (no issue filed yet)";

}  // namespace

void RegisterPlannedEliminate(CLI::App* sub, Action* action) {
  Planned(sub, action, kLaterIssue)
      .Pos("table", "Table name")
      .Opt("--min-area", "Polygons smaller than this merge into a neighbour")
      .Opt("-o,--output", "Output table");
}

}  // namespace geolake::cli
