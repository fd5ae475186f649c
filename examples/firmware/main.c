/* einfer firmware example: greedy text generation on a Cortex-M4F or M55 with a static arena.
 *
 * The model header is generated at build time by `einfer-pack --emit-c` (q8 weights, tokenizer
 * embedded) together with the run options and the exact arena size einfer_session_create needs
 * for them; the weights are used in place from flash. Only the C API (models/einfer.h) is called.
 * Prints the text, the token ids, flash and RAM figures and instructions per token, then exits 0;
 * any failure prints the message and exits with the einfer status code. */
#include <stdint.h>
#include <string.h>

#include "board.h"
#include "einfer_model.h" /* generated: einfer_model_data, EINFER_MODEL_* */
#include "models/einfer.h"

#ifndef FIRMWARE_STEPS
#define FIRMWARE_STEPS 64
#endif

/* The one static arena: .bss, 64-byte aligned as the C API requires. */
static uint8_t arena[EINFER_MODEL_ARENA_BYTES] __attribute__((aligned(64)));
static int32_t generated[FIRMWARE_STEPS];

static int fail(const char* what, const char* message, int status) {
  board_puts("firmware: error: ");
  board_puts(what);
  board_puts(": ");
  board_puts(message);
  board_puts("\n");
  return status ? status : 1;
}

static void put_field(const char* label, uint32_t value, const char* unit) {
  board_puts(label);
  board_put_u32(value);
  board_puts(unit);
}

int main(void) {
  einfer_options options;
  einfer_options_default(&options);
  options.context = EINFER_MODEL_CONTEXT;
  options.window = EINFER_MODEL_WINDOW;
  options.sinks = EINFER_MODEL_SINKS;
  options.kv_int8 = EINFER_MODEL_KV_INT8;
  options.max_batch = EINFER_MODEL_MAX_BATCH;
  options.no_plan_cache = EINFER_MODEL_NO_PLAN_CACHE;
  options.with_tokenizer = EINFER_MODEL_WITH_TOKENIZER;
  options.max_prompt_bytes = EINFER_MODEL_MAX_PROMPT_BYTES;
  options.skip_crc = 0; /* check the flash image once at start-up */

  char err[160];
  size_t need = 0;
  int rc =
      einfer_arena_bytes(einfer_model_data, EINFER_MODEL_BYTES, &options, &need, err, sizeof err);
  if (rc) return fail("sizing the arena", err, rc);
  einfer_session* session = 0;
  rc = einfer_session_create(einfer_model_data, EINFER_MODEL_BYTES, &options, arena, sizeof arena,
                             &session, err, sizeof err);
  if (rc) return fail("creating the session", err, rc);
  /* Per-stage SysTick ticks (the clock is read only at stage boundaries: ~20 reads a token). */
  einfer_profile_clock(session, board_ticks);

  /* Greedy generation from BOS, stopping at the model's end-of-generation ids or BOS as llama2.c
   * does. The clock runs only around the model (prefill, decode, argmax), not around printing. */
  board_puts("--- text ---\n");
  const int32_t bos = einfer_token_bos(session);
  uint64_t model_ticks = 0;
  uint64_t t0 = board_ticks();
  rc = einfer_prefill(session, &bos, 1);
  if (rc) return fail("prefill", einfer_error(session), rc);
  int32_t n = 0, prev = bos;
  while (n < FIRMWARE_STEPS) {
    const int32_t next = einfer_next_token(session);
    model_ticks += board_ticks() - t0;
    if (einfer_token_is_eog(session, next) || next == bos) break;
    generated[n++] = next;
    size_t len = 0;
    const char* piece = einfer_token_text(session, prev, next, &len);
    board_write(piece, len);
    prev = next;
    if (n == FIRMWARE_STEPS) break; /* the last token's logits are not needed */
    t0 = board_ticks();
    rc = einfer_decode(session, next);
    if (rc) return fail("decode", einfer_error(session), rc);
  }
  board_puts("\n--- end ---\n");

  board_puts("ids:");
  for (int32_t i = 0; i < n; ++i) put_field(" ", (uint32_t)generated[i], "");
  board_puts("\n");

  const uint32_t text = (uint32_t)(__text_end - __text_start);
  const uint32_t model = (uint32_t)(__model_end - __model_start);
  const uint32_t rodata = (uint32_t)(__rodata_end - __rodata_start);
  const uint32_t flash_used = (uint32_t)(__flash_used_end - __flash_start);
  const uint32_t data = (uint32_t)(__data_end__ - __data_start__);
  const uint32_t bss = (uint32_t)(__bss_end__ - __bss_start__);
  const uint32_t stack_used = board_stack_used();
  const uint32_t stack_reserved = board_stack_reserved();
  put_field("tokens: ", (uint32_t)n, " generated\n");
  put_field("flash: code (.text) ", text, " B");
  put_field(", model ", model, " B");
  put_field(", other rodata ", rodata, " B");
  put_field(", .data image ", data, " B");
  put_field(", total ", flash_used, " B");
  put_field(" of ", (uint32_t)(__flash_end - __flash_start), " B budget\n");
  put_field("ram: .data ", data, " B");
  put_field(" + .bss ", bss, " B");
  put_field(" (arena ", (uint32_t)sizeof arena, " B");
  put_field(", the session needs ", (uint32_t)need, " B");
  put_field(", uses ", (uint32_t)einfer_arena_used(session), " B)");
  put_field(" + stack ", stack_used, " B");
  put_field(" (of ", stack_reserved, " B reserved)");
  put_field(" = ", data + bss + stack_used, " B");
  put_field("; linked ", data + bss + stack_reserved, " B");
  put_field(" of ", (uint32_t)(__ram_end - __ram_start), " B budget\n");
  put_field("heap: ", board_heap_requested(), " B requested\n");
  const uint64_t insns = board_instructions(model_ticks);
  put_field("instructions: ", (uint32_t)(insns / 1000u), " k for ");
  put_field("", (uint32_t)n, " tokens, ");
  put_field("", n ? (uint32_t)(insns / (uint64_t)n) : 0u, " per token");
  const uint32_t ipt100 = board_instructions_per_tick_x100();
  put_field(" (SysTick x ", ipt100 / 100u, ".");
  put_field(ipt100 % 100u < 10u ? "0" : "", ipt100 % 100u,
            " instructions per tick; exact under qemu -icount shift=0)\n");
  uint64_t stage_ticks[EINFER_STAGE_COUNT];
  einfer_profile_times(session, stage_ticks);
  static const char* const stage_names[EINFER_STAGE_COUNT] = {
      "projections ", ", attention ", ", feed-forward ", ", norms+rope ", ", classifier "};
  uint64_t staged = 0;
  board_puts("instructions per token by stage: ");
  for (int i = 0; i < EINFER_STAGE_COUNT; ++i) {
    staged += stage_ticks[i];
    put_field(stage_names[i], n ? (uint32_t)(board_instructions(stage_ticks[i]) / (uint64_t)n) : 0u,
              "");
  }
  /* The rest: argmax, the C API and the layer loop between stages. */
  put_field(", other ", n ? (uint32_t)(board_instructions(model_ticks - staged) / (uint64_t)n) : 0u,
            "\n");

  if (stack_used + 64u > stack_reserved)
    return fail("stack", "high-water mark reached the reserve", 1);
  if (board_heap_requested() != 0u) return fail("heap", "something called malloc", 1);
  return 0;
}
