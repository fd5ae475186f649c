// The shared tool command-line parser (tools/common/cli.h): llama.cpp flag names, strict values,
// help/version exits, unknown flags with a suggestion.
// einfer-test: no-bare-metal
#if EINFER_HAVE_TOOL_COMMON
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tools/common/cli.h"

using einfer::tools::cli::Parser;

namespace {

struct Run {
  std::string model, prompt;
  int64_t steps = -1, threads = 4;
  double temp = 0.8;
  bool verbose = false;
};

Parser make_parser(Run* r) {
  Parser p("einfer-test", "-m MODEL [options]", "test tool");
  p.option({"-m", "--model"}, &r->model, "FILE", "model");
  p.positional("MODEL", &r->model, "model");
  p.option({"-p", "--prompt"}, &r->prompt, "TEXT", "prompt");
  p.option({"-n", "--n-predict"}, &r->steps, "N", "tokens").range(-1, 1 << 20);
  p.option({"-t", "--threads"}, &r->threads, "N", "threads")
      .range(1, 1024)
      .hint("the sampling temperature is --temp");
  p.option({"--temp"}, &r->temp, "T", "temperature").range(0, 100);
  p.option({"--temperature"}, &r->temp, "T", "old spelling").range(0, 100).hidden();
  p.flag({"-v", "--verbose"}, &r->verbose, "verbose");
  return p;
}

int parse(Parser& p, std::vector<std::string> args, bool* proceed) {
  std::vector<char*> argv;
  std::string tool = "einfer-test";
  argv.push_back(tool.data());
  for (std::string& a : args) argv.push_back(a.data());
  int code = -1;
  *proceed = p.parse(static_cast<int>(argv.size()), argv.data(), &code);
  return code;
}

}  // namespace

TEST_CASE("cli: short and long llama.cpp flags set the same fields; the model may be positional") {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"-m", "a.ein", "-p", "hi", "-n", "5", "--temp", "0", "-t", "2", "-v"},
           {"--model", "a.ein", "--prompt", "hi", "--n-predict", "5", "--temp=0", "--threads=2",
            "--verbose"},
           {"a.ein", "-p", "hi", "-n", "5", "--temperature", "0", "-t", "2", "-v"}}) {
    Run r;
    Parser p = make_parser(&r);
    bool proceed = false;
    parse(p, args, &proceed);
    CHECK(proceed);
    CHECK(r.model == "a.ein");
    CHECK(r.prompt == "hi");
    CHECK(r.steps == 5);
    CHECK(r.temp == 0.0);
    CHECK(r.threads == 2);
    CHECK(r.verbose);
    CHECK(p.given("-t"));
    CHECK(p.given("--threads"));
  }
}

TEST_CASE("cli: -t takes whole thread counts: -t 0.8 is an error pointing to --temp") {
  Run r;
  Parser p = make_parser(&r);
  bool proceed = true;
  CHECK(parse(p, {"a.ein", "-t", "0.8"}, &proceed) == 2);
  CHECK_FALSE(proceed);
  CHECK(p.last_error().find("-t/--threads") != std::string::npos);
  CHECK(p.last_error().find("whole number") != std::string::npos);
  CHECK(p.last_error().find("--temp") != std::string::npos);
  Run r2;
  Parser p2 = make_parser(&r2);
  CHECK(parse(p2, {"a.ein", "-t", "0"}, &proceed) == 2);
  CHECK(p2.last_error().find("out of range [1, 1024]") != std::string::npos);
}

TEST_CASE("cli: unknown flags are errors with a suggestion; bad values are named") {
  Run r;
  Parser p = make_parser(&r);
  bool proceed = true;
  CHECK(parse(p, {"--tmp", "0.5"}, &proceed) == 2);
  CHECK(p.last_error().find("unknown option '--tmp' (did you mean --temp?)") != std::string::npos);
  Run r2;
  Parser p2 = make_parser(&r2);
  CHECK(parse(p2, {"--n-predcit", "4"}, &proceed) == 2);
  CHECK(p2.last_error().find("did you mean --n-predict?") != std::string::npos);
  Run r3;
  Parser p3 = make_parser(&r3);
  CHECK(parse(p3, {"--zzzzzzzz"}, &proceed) == 2);
  CHECK(p3.last_error().find("did you mean") == std::string::npos);
  Run r4;
  Parser p4 = make_parser(&r4);
  CHECK(parse(p4, {"-n", "5x"}, &proceed) == 2);
  CHECK(p4.last_error().find("-n/--n-predict: expects a whole number, got '5x'") !=
        std::string::npos);
  Run r5;
  Parser p5 = make_parser(&r5);
  CHECK(parse(p5, {"-n"}, &proceed) == 2);
  CHECK(p5.last_error().find("-n needs a value") != std::string::npos);
  Run r6;
  Parser p6 = make_parser(&r6);
  CHECK(parse(p6, {"a.ein", "b.ein"}, &proceed) == 2);
  Run r7;
  Parser p7 = make_parser(&r7);
  CHECK(parse(p7, {"-m", "a.ein", "b.ein"}, &proceed) == 2);
  CHECK(p7.last_error().find("given twice") != std::string::npos);
}

TEST_CASE("cli: help lists every visible option; edit distance") {
  Run r;
  Parser p = make_parser(&r);
  const std::string help = p.help_text();
  CHECK(help.find("usage: einfer-test -m MODEL [options]") == 0);
  CHECK(help.find("-t, --threads N") != std::string::npos);
  CHECK(help.find("--temp T") != std::string::npos);
  CHECK(help.find("--temperature") == std::string::npos);  // hidden
  CHECK(help.find("--version") != std::string::npos);
  CHECK(einfer::tools::cli::edit_distance("--tmp", "--temp") == 1);
  CHECK(einfer::tools::cli::edit_distance("", "abc") == 3);
  CHECK(einfer::tools::cli::edit_distance("kitten", "sitting") == 3);
  CHECK(einfer::tools::cli::edit_distance("--hepl", "--help") == 1);  // a transposition
  CHECK(einfer::tools::cli::default_threads() >= 1);
}
#endif
