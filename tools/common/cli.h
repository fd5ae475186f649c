// The command-line parser every einfer tool uses, so they all behave alike and speak llama.cpp's
// language where the concept is the same (-m/--model, -p/--prompt, -f/--file, -n/--n-predict,
// -c/--ctx-size, -s/--seed, --temp, --top-k, --top-p, --repeat-penalty, -t/--threads, -v):
//   - `--help`/`-h` prints the usage on stdout and exits 0; `--version` prints the version;
//   - an unknown flag is an error (exit 2) that suggests the closest known one ("did you mean");
//   - values are checked whole ("8x", " 8", "+8", "0x8" and "nan" are not numbers) and against
//     each option's range, with a message naming the option and the limits, so `-t 0.8` says
//     threads are whole numbers and points to --temp, and `-c 4294967296` names [0, 16777216]
//     instead of wrapping. This is the one place a tool turns an argument into a number;
//   - every error is one line on stderr ("tool: message (see tool --help)"), exit 2;
//   - `--name=value` and `--name value` both work; `--` ends the options.
// Tools may allocate: this is host/device tool code, not library code.
//
//   cli::Parser p("einfer-run", "-m MODEL.ein [-p PROMPT] [options]", "Generates text.");
//   p.option({"-m", "--model"}, &model, "FILE", "the packed model (.ein)");
//   p.positional("MODEL", &model, "the model, as the first argument instead of -m");
//   p.option({"-n", "--n-predict"}, &steps, "N", "tokens to generate").range(-1, 1 << 30);
//   if (int code; !p.parse(argc, argv, &code)) return code;
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

namespace einfer::tools::cli {

// Threads to use by default: the online cores (at least 1).
int default_threads();

// The one way a tool reads a number from its command line (options, positional numbers, the
// items of a list such as --prompt-ids or --contexts, the values of a spec such as --synthetic):
// the whole text is a plain decimal number, no leading space or '+', no hex, no inf/nan, no
// overflow. Callers check their own bounds with in_range() so every message names them alike.
bool read_integer(const std::string& text, int64_t* out);
bool read_number(const std::string& text, double* out);  // finite only
// Whole numbers in [lo, hi]: false with *error in the parser's words ("expects a whole number,
// got 'TEXT'" or "'TEXT' is out of range [LO, HI]"); the caller prefixes what was being read.
bool read_integer_in(const std::string& text, int64_t lo, int64_t hi, int64_t* out,
                     std::string* error);

// Levenshtein distance (for "did you mean"); exposed for tests.
size_t edit_distance(const std::string& a, const std::string& b);

class Parser;

// One option; the setters refine it and return it for chaining.
class Option {
 public:
  // Numeric bounds (inclusive); a value outside is an error naming them, e.g.
  // "-c/--ctx-size/--context: '100000000' is out of range [0, 16777216]" (whole bounds exactly).
  Option& range(double min, double max);
  // Makes the lower / upper bound exclusive ("(0, 1]" for --top-p).
  Option& exclusive_min();
  Option& exclusive_max();
  // Extra sentence appended to a bad-value error (e.g. "the sampling temperature is --temp").
  Option& hint(std::string text);
  // Allowed values of a string option ("md", "csv", ...).
  Option& choices(std::vector<std::string> allowed);
  // Left out of --help (kept for compatibility, e.g. an old spelling).
  Option& hidden();

  // Filled by Parser (read by its helpers).
  enum class Kind { flag, string, integer, floating, action };
  Kind kind = Kind::flag;
  std::vector<std::string> names;
  std::string metavar, help, hint_text, section;
  std::vector<std::string> allowed;
  double min = -1e300, max = 1e300;
  bool has_range = false, min_exclusive = false, max_exclusive = false, is_hidden = false;
  bool* flag_out = nullptr;
  std::string* string_out = nullptr;
  int64_t* int_out = nullptr;
  double* float_out = nullptr;
  std::function<bool(const std::string&, std::string*)> action;
};

class Parser {
 public:
  Parser(std::string tool, std::string synopsis, std::string description);

  // Options that take no value (set *out to true).
  Option& flag(std::initializer_list<const char*> names, bool* out, std::string help);
  // Options with a value; the value's type decides the parsing.
  Option& option(std::initializer_list<const char*> names, std::string* out, std::string metavar,
                 std::string help);
  Option& option(std::initializer_list<const char*> names, int64_t* out, std::string metavar,
                 std::string help);
  Option& option(std::initializer_list<const char*> names, double* out, std::string metavar,
                 std::string help);
  // An option handled by a callback: returns false and sets *error to reject the value.
  Option& option(std::initializer_list<const char*> names, std::string metavar, std::string help,
                 std::function<bool(const std::string&, std::string*)> handle);
  // Positional arguments in order; `out` receives the value (a -m given as well must agree with
  // it, else it is an error). Optional ones may be absent.
  void positional(std::string name, std::string* out, std::string help);
  // Starts a titled group of options in --help.
  void section(std::string title);
  // Text after the option list in --help (examples, notes).
  void epilog(std::string text);

  // Parses argv. Returns true to proceed; false to exit with *exit_code (0 after --help or
  // --version, 2 after an error, already reported on stderr).
  bool parse(int argc, char** argv, int* exit_code);
  // Was this option (any of its names) given on the command line?
  bool given(const char* name) const;

  // Prints "tool: message (see tool --help)" as one line on stderr; returns 2 (for
  // `return p.fail(...)`).
  int fail(const std::string& message) const;
  std::string help_text() const;
  // The last error message fail() reported ("" if none).
  const std::string& last_error() const { return last_error_; }
  const std::string& tool() const { return tool_; }

 private:
  Option& add(Option::Kind kind, std::initializer_list<const char*> names, std::string metavar,
              std::string help);
  Option* find(const std::string& name);
  bool apply(Option& o, const std::string& name, const std::string& value, std::string* error);
  std::string suggestion(const std::string& unknown) const;

  std::string tool_, synopsis_, description_, epilog_, current_section_;
  std::deque<Option> options_;  // a deque: references handed out stay valid as options are added
  struct Positional {
    std::string name, help;
    std::string* out;
  };
  std::vector<Positional> positionals_;
  std::vector<std::string> given_;
  mutable std::string last_error_;
};

}  // namespace einfer::tools::cli
