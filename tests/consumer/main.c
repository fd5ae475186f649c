/* A consumer's C program: what a firmware or Linux-on-Arm project writes against the installed
 * package. Loads a packed model, generates greedily from BOS and prints the ids like
 * `einfer-run MODEL --prompt-ids 1 -n N --ids` does (stopping at EOS or BOS as it does).
 *
 *   consumer MODEL.ein N
 * Built three ways by tests/consumer/CMakeLists.txt: find_package(einfer), pkg-config, and (as C++)
 * add_subdirectory. */
#include <einfer/einfer.h>
#include <einfer/version.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned char* read_all(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  const long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  /* The model image must be 64-byte aligned. */
  unsigned char* buf = n > 0 ? aligned_alloc(64, ((size_t)n + 63) / 64 * 64) : NULL;
  if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  *size = (size_t)n;
  return buf;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: consumer MODEL.ein N\n");
    return 2;
  }
  fprintf(stderr, "einfer %s\n", EINFER_VERSION_STRING);
  size_t model_size = 0;
  unsigned char* model = read_all(argv[1], &model_size);
  if (!model) {
    fprintf(stderr, "cannot read %s\n", argv[1]);
    return 1;
  }
  const int steps = atoi(argv[2]);
  einfer_options o;
  einfer_options_default(&o);
  char err[256];
  size_t need = 0;
  if (einfer_arena_bytes(model, model_size, &o, &need, err, sizeof err) != EINFER_OK) {
    fprintf(stderr, "einfer_arena_bytes: %s\n", err);
    return 1;
  }
  void* arena = aligned_alloc(64, (need + 63) / 64 * 64);
  einfer_session* s = NULL;
  if (!arena ||
      einfer_session_create(model, model_size, &o, arena, need, &s, err, sizeof err) != EINFER_OK) {
    fprintf(stderr, "einfer_session_create: %s\n", arena ? err : "out of memory");
    return 1;
  }
  int32_t token = EINFER_TOKEN_BOS;
  if (einfer_prefill(s, &token, 1) != EINFER_OK) {
    fprintf(stderr, "einfer_prefill: %s\n", einfer_error(s));
    return 1;
  }
  for (int i = 0; i < steps; ++i) {
    token = einfer_next_token(s);
    if (token == EINFER_TOKEN_EOS || token == EINFER_TOKEN_BOS) break;
    printf(i ? " %d" : "%d", (int)token);
    if (i + 1 < steps && einfer_decode(s, token) != EINFER_OK) {
      fprintf(stderr, "einfer_decode: %s\n", einfer_error(s));
      return 1;
    }
  }
  printf("\n");
  free(arena);
  free(model);
  return 0;
}
