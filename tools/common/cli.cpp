#include "tools/common/cli.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "einfer/version.h"

namespace einfer::tools::cli {

int default_threads() {
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

namespace {

// The text strtoll/strtod would take beyond a plain number: leading space or '+', hex ("0x10"),
// "inf"/"nan" words. A number starts with a digit, or '-' / '.' then a digit.
bool plain_number_text(const std::string& s, bool allow_fraction) {
  size_t i = s.empty() || s[0] != '-' ? 0 : 1;
  if (allow_fraction && i < s.size() && s[i] == '.') ++i;
  if (i >= s.size() || !std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  return s.find_first_of("xX") == std::string::npos;
}

}  // namespace

bool read_integer(const std::string& text, int64_t* out) {
  if (!plain_number_text(text, false)) return false;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (*end != '\0' || errno == ERANGE) return false;
  *out = v;
  return true;
}

bool read_number(const std::string& text, double* out) {
  if (!plain_number_text(text, true)) return false;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (*end != '\0' || errno == ERANGE || !std::isfinite(v)) return false;
  *out = v;
  return true;
}

bool read_integer_in(const std::string& text, int64_t lo, int64_t hi, int64_t* out,
                     std::string* error) {
  int64_t v = 0;
  if (!read_integer(text, &v)) {
    *error = "expects a whole number, got '" + text + "'";
    return false;
  }
  if (v < lo || v > hi) {  // the parser's wording (Parser::apply)
    *error =
        "'" + text + "' is out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
    return false;
  }
  *out = v;
  return true;
}

size_t edit_distance(const std::string& a, const std::string& b) {
  // Optimal string alignment: insertions, deletions, substitutions and adjacent transpositions
  // ("--hepl" is one edit from "--help") each cost 1.
  const size_t w = b.size() + 1;
  std::vector<size_t> d((a.size() + 1) * w);
  for (size_t i = 0; i <= a.size(); ++i) d[i * w] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      size_t v =
          std::min({d[(i - 1) * w + j] + 1, d[i * w + j - 1] + 1, d[(i - 1) * w + j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        v = std::min(v, d[(i - 2) * w + j - 2] + 1);
      d[i * w + j] = v;
    }
  }
  return d[a.size() * w + b.size()];
}

Option& Option::range(double lo, double hi) {
  min = lo;
  max = hi;
  has_range = true;
  return *this;
}

Option& Option::exclusive_min() {
  min_exclusive = true;
  return *this;
}

Option& Option::exclusive_max() {
  max_exclusive = true;
  return *this;
}

Option& Option::hint(std::string text) {
  hint_text = std::move(text);
  return *this;
}

Option& Option::choices(std::vector<std::string> values) {
  allowed = std::move(values);
  return *this;
}

Option& Option::hidden() {
  is_hidden = true;
  return *this;
}

Parser::Parser(std::string tool, std::string synopsis, std::string description)
    : tool_(std::move(tool)),
      synopsis_(std::move(synopsis)),
      description_(std::move(description)) {}

Option& Parser::add(Option::Kind kind, std::initializer_list<const char*> names,
                    std::string metavar, std::string help) {
  Option& o = options_.emplace_back();
  o.kind = kind;
  for (const char* n : names) o.names.emplace_back(n);
  o.metavar = std::move(metavar);
  o.help = std::move(help);
  o.section = current_section_;
  return o;
}

Option& Parser::flag(std::initializer_list<const char*> names, bool* out, std::string help) {
  Option& o = add(Option::Kind::flag, names, "", std::move(help));
  o.flag_out = out;
  return o;
}

Option& Parser::option(std::initializer_list<const char*> names, std::string* out,
                       std::string metavar, std::string help) {
  Option& o = add(Option::Kind::string, names, std::move(metavar), std::move(help));
  o.string_out = out;
  return o;
}

Option& Parser::option(std::initializer_list<const char*> names, int64_t* out, std::string metavar,
                       std::string help) {
  Option& o = add(Option::Kind::integer, names, std::move(metavar), std::move(help));
  o.int_out = out;
  return o;
}

Option& Parser::option(std::initializer_list<const char*> names, double* out, std::string metavar,
                       std::string help) {
  Option& o = add(Option::Kind::floating, names, std::move(metavar), std::move(help));
  o.float_out = out;
  return o;
}

Option& Parser::option(std::initializer_list<const char*> names, std::string metavar,
                       std::string help,
                       std::function<bool(const std::string&, std::string*)> handle) {
  Option& o = add(Option::Kind::action, names, std::move(metavar), std::move(help));
  o.action = std::move(handle);
  return o;
}

void Parser::positional(std::string name, std::string* out, std::string help) {
  positionals_.push_back({std::move(name), std::move(help), out});
}

void Parser::section(std::string title) {
  current_section_ = std::move(title);
}

void Parser::epilog(std::string text) {
  epilog_ = std::move(text);
}

Option* Parser::find(const std::string& name) {
  for (Option& o : options_)
    for (const std::string& n : o.names)
      if (n == name) return &o;
  return nullptr;
}

bool Parser::given(const char* name) const {
  for (const Option& o : options_) {
    if (std::find(o.names.begin(), o.names.end(), name) == o.names.end()) continue;
    for (const std::string& g : given_)
      if (std::find(o.names.begin(), o.names.end(), g) != o.names.end()) return true;
  }
  return false;
}

namespace {

std::string join_names(const Option& o) {
  std::string s;
  for (const std::string& n : o.names) {
    if (!s.empty()) s += '/';
    s += n;
  }
  return s;
}

// A bound as the user would type it: whole bounds exactly (16777216, not 1.67772e+07).
std::string format_number(double v) {
  char buf[40];
  if (v == std::floor(v) && std::fabs(v) < 9.0e15)
    std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
  else
    std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

bool Parser::apply(Option& o, const std::string& name, const std::string& value,
                   std::string* error) {
  const std::string label = join_names(o);
  auto bad = [&](const std::string& what) {
    *error = label + ": " + what;
    if (!o.hint_text.empty()) *error += "; " + o.hint_text;
    return false;
  };
  auto check_range = [&](double v) {
    const bool below = o.min_exclusive ? v <= o.min : v < o.min;
    const bool above = o.max_exclusive ? v >= o.max : v > o.max;
    if (o.has_range && (below || above))
      return bad("'" + value + "' is out of range " + (o.min_exclusive ? "(" : "[") +
                 format_number(o.min) + ", " + format_number(o.max) +
                 (o.max_exclusive ? ")" : "]"));
    return true;
  };
  (void)name;
  switch (o.kind) {
    case Option::Kind::flag:
      *o.flag_out = true;
      return true;
    case Option::Kind::string:
      if (!o.allowed.empty() &&
          std::find(o.allowed.begin(), o.allowed.end(), value) == o.allowed.end()) {
        std::string list;
        for (const std::string& a : o.allowed) {
          if (!list.empty()) list += ", ";
          list += a;
        }
        return bad("'" + value + "' is not one of " + list);
      }
      *o.string_out = value;
      return true;
    case Option::Kind::integer: {
      int64_t v = 0;
      if (!read_integer(value, &v)) return bad("expects a whole number, got '" + value + "'");
      if (!check_range(static_cast<double>(v))) return false;
      *o.int_out = v;
      return true;
    }
    case Option::Kind::floating: {
      double v = 0;
      if (!read_number(value, &v)) return bad("expects a finite number, got '" + value + "'");
      if (!check_range(v)) return false;
      *o.float_out = v;
      return true;
    }
    case Option::Kind::action: {
      std::string why;
      if (!o.action(value, &why)) return bad(why.empty() ? "bad value '" + value + "'" : why);
      return true;
    }
  }
  return false;
}

std::string Parser::suggestion(const std::string& unknown) const {
  // The closest name within a third of its length (at least 2 edits); a unique prefix also counts.
  std::string best;
  size_t best_distance = SIZE_MAX;
  const std::string key = unknown.substr(0, unknown.find('='));
  for (const Option& o : options_) {
    for (const std::string& n : o.names) {
      size_t d = edit_distance(key, n);
      if (n.size() > key.size() + 1 && n.compare(0, key.size(), key) == 0 && key.size() >= 4) d = 1;
      if (d < best_distance) {
        best_distance = d;
        best = n;
      }
    }
  }
  for (const char* builtin : {"--help", "--version"}) {
    const size_t d = edit_distance(key, builtin);
    if (d < best_distance) {
      best_distance = d;
      best = builtin;
    }
  }
  // Short options ("-t") are one letter: any other letter is as close, so no guess.
  if (key.compare(0, 2, "--") != 0) return std::string();
  const size_t limit = std::max<size_t>(2, key.size() / 3);
  return best_distance <= limit ? best : std::string();
}

int Parser::fail(const std::string& message) const {
  last_error_ = message;
  // One line: scripts and the hostile-input tests take the first stderr line as the reason.
  std::fprintf(stderr, "%s: %s (see %s --help)\n", tool_.c_str(), message.c_str(), tool_.c_str());
  return 2;
}

std::string Parser::help_text() const {
  std::string out = "usage: " + tool_ + " " + synopsis_ + "\n";
  if (!description_.empty()) out += "\n" + description_ + "\n";
  if (!positionals_.empty()) {
    out += "\narguments:\n";
    for (const Positional& p : positionals_) {
      std::string left = "  " + p.name;
      if (left.size() < 28) left.resize(28, ' ');
      out += left + " " + p.help + "\n";
    }
  }
  std::string section = "\x01";
  for (const Option& o : options_) {
    if (o.is_hidden) continue;
    if (o.section != section) {
      section = o.section;
      out += '\n';
      out += section.empty() ? std::string("options") : section;
      out += ":\n";
    }
    std::string left = "  ";
    for (size_t i = 0; i < o.names.size(); ++i) {
      if (i) left += ", ";
      left += o.names[i];
    }
    if (!o.metavar.empty()) {
      left += ' ';
      left += o.metavar;
    }
    if (left.size() < 28)
      left.resize(28, ' ');
    else
      left += "\n" + std::string(28, ' ');
    out += left + " " + o.help + "\n";
  }
  out += "\ncommon:\n";
  out += "  -h, --help                   this help (on stdout)\n";
  out += "  --version                    the einfer version\n";
  if (!epilog_.empty()) out += "\n" + epilog_ + "\n";
  return out;
}

bool Parser::parse(int argc, char** argv, int* exit_code) {
  size_t next_positional = 0;
  bool options_done = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    // "-x..." or "--x...": an option; "-", "-1" or an einsum spec such as "->" are values.
    const bool looks_like_option =
        !options_done && arg.size() > 1 && arg[0] == '-' &&
        (std::isalpha(static_cast<unsigned char>(arg[1])) || arg[1] == '-');
    if (!looks_like_option) {
      if (next_positional >= positionals_.size()) {
        *exit_code = fail("unexpected argument '" + arg + "'");
        return false;
      }
      const Positional& p = positionals_[next_positional++];
      if (!p.out->empty() && *p.out != arg) {
        *exit_code = fail(p.name + " given twice ('" + *p.out + "' and '" + arg + "')");
        return false;
      }
      *p.out = arg;
      continue;
    }
    if (arg == "--") {
      options_done = true;
      continue;
    }
    if (arg == "-h" || arg == "--help") {
      std::fputs(help_text().c_str(), stdout);
      *exit_code = 0;
      return false;
    }
    if (arg == "--version") {
      std::printf("%s %s\n", tool_.c_str(), EINFER_VERSION_STRING);
      *exit_code = 0;
      return false;
    }
    std::string name = arg, value;
    bool inline_value = false;
    if (arg.compare(0, 2, "--") == 0 && arg.find('=') != std::string::npos) {
      name = arg.substr(0, arg.find('='));
      value = arg.substr(arg.find('=') + 1);
      inline_value = true;
    }
    Option* o = find(name);
    if (!o) {
      const std::string close = suggestion(name);
      *exit_code = fail("unknown option '" + name + "'" +
                        (close.empty() ? "" : " (did you mean " + close + "?)"));
      return false;
    }
    if (o->kind == Option::Kind::flag) {
      if (inline_value) {
        *exit_code = fail(name + " takes no value");
        return false;
      }
    } else if (!inline_value) {
      if (i + 1 >= argc) {
        *exit_code = fail(name + " needs a value (" + o->metavar + ")");
        return false;
      }
      value = argv[++i];
    }
    std::string error;
    if (!apply(*o, name, value, &error)) {
      *exit_code = fail(error);
      return false;
    }
    given_.push_back(name);
  }
  return true;
}

}  // namespace einfer::tools::cli
