#include "tools/einfer-pack/attention_options.h"

#include "runtime/run_options.h"
#include "tools/common/cli.h"
#include "tools/einfer-pack/ein_writer.h"

namespace einfer::pack {

namespace {

int32_t positive(const std::string& term, const std::string& text) {
  int64_t v = 0;
  std::string why;
  if (!tools::cli::read_integer_in(text, 1, kMaxRunPositions, &v, &why))
    throw PackError("--attention-pattern: '" + term + "': " + why);
  return static_cast<int32_t>(v);
}

void set_once(int32_t* field, int32_t value, const std::string& term) {
  if (*field != 0) throw PackError("--attention-pattern: term '" + term + "' given twice");
  *field = value;
}

}  // namespace

void apply_attention_options(const AttentionOptions& o, ModelConfig* c) {
  if (o.attention == "linear-elu")
    c->attention = AttentionKind::linear_elu;
  else if (o.attention.empty() || o.attention == "softmax")
    c->attention = AttentionKind::softmax;
  else
    throw PackError("--attention: softmax or linear-elu, got '" + o.attention + "'");
  if (o.positions == "sinusoidal")
    c->positions = PositionsKind::sinusoidal;
  else if (o.positions.empty() || o.positions == "none")
    c->positions = PositionsKind::none;
  else
    throw PackError("--positions: none or sinusoidal, got '" + o.positions + "'");
  if (o.pattern.empty()) return;
  if (c->arch != ArchKind::encoder)
    throw PackError("--attention-pattern applies to encoders (--arch torch-encoder)");
  size_t start = 0;
  while (start <= o.pattern.size()) {
    size_t plus = o.pattern.find('+', start);
    if (plus == std::string::npos) plus = o.pattern.size();
    const std::string term = o.pattern.substr(start, plus - start);
    const size_t colon = term.find(':');
    if (colon == std::string::npos)
      throw PackError("--attention-pattern: term '" + term +
                      "' is not window:W, global:G, strided:S or fixed:L,C");
    const std::string name = term.substr(0, colon), arg = term.substr(colon + 1);
    if (name == "window") {
      set_once(&c->pattern_window, positive(term, arg), term);
    } else if (name == "global") {
      set_once(&c->pattern_global, positive(term, arg), term);
    } else if (name == "strided") {
      set_once(&c->pattern_stride, positive(term, arg), term);
    } else if (name == "fixed") {
      const size_t comma = arg.find(',');
      if (comma == std::string::npos) throw PackError("--attention-pattern: fixed:L,C needs C");
      set_once(&c->pattern_block, positive(term, arg.substr(0, comma)), term);
      c->pattern_block_summary = positive(term, arg.substr(comma + 1));
      if (c->pattern_block_summary > c->pattern_block)
        throw PackError("--attention-pattern: fixed:L,C needs C <= L");
    } else {
      throw PackError("--attention-pattern: unknown term '" + name +
                      "' (window, global, strided, fixed)");
    }
    start = plus + 1;
  }
}

std::string describe_attention_variant(const ModelConfig& c) {
  std::string s = c.attention == AttentionKind::linear_elu ? "linear-elu" : "softmax";
  std::string terms;
  auto add = [&terms](const std::string& t) { terms += (terms.empty() ? "" : "+") + t; };
  if (c.pattern_window) add("window:" + std::to_string(c.pattern_window));
  if (c.pattern_global) add("global:" + std::to_string(c.pattern_global));
  if (c.pattern_stride) add("strided:" + std::to_string(c.pattern_stride));
  if (c.pattern_block)
    add("fixed:" + std::to_string(c.pattern_block) + "," + std::to_string(c.pattern_block_summary));
  if (c.attention == AttentionKind::softmax) s += terms.empty() ? " dense" : " pattern " + terms;
  if (c.causal) s += " causal";
  s += c.positions == PositionsKind::sinusoidal ? ", positions sinusoidal" : ", positions none";
  return s;
}

}  // namespace einfer::pack
