/* The C API from C: load a packed model, generate greedily, compare with the expected ids.
 *
 *   capi_greedy MODEL.ein EXPECTED_IDS_FILE N [--kv-int8]
 * EXPECTED_IDS_FILE holds whitespace-separated ids (the first N are compared).
 * Exit status: 0 match, 1 mismatch or error (with a message). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/einfer.h"

static unsigned char* read_all(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  /* The model image must be 64-byte aligned. */
  unsigned char* buf = aligned_alloc(64, ((size_t)n + 63) / 64 * 64);
  if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  *size = (size_t)n;
  return buf;
}

int main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: capi_greedy MODEL.ein EXPECTED_IDS_FILE N [--kv-int8]\n");
    return 2;
  }
  size_t model_size = 0;
  unsigned char* model = read_all(argv[1], &model_size);
  if (!model) {
    fprintf(stderr, "cannot read %s\n", argv[1]);
    return 1;
  }
  FILE* ef = fopen(argv[2], "r");
  if (!ef) {
    fprintf(stderr, "cannot read %s\n", argv[2]);
    return 1;
  }
  int n = atoi(argv[3]);
  int32_t expected[1024];
  int n_expected = 0;
  while (n_expected < n && n_expected < 1024 && fscanf(ef, "%d", &expected[n_expected]) == 1)
    ++n_expected;
  fclose(ef);
  if (n_expected < n) {
    fprintf(stderr, "expected %d ids in %s, found %d\n", n, argv[2], n_expected);
    return 1;
  }

  einfer_options o;
  einfer_options_default(&o);
  o.kv_int8 = argc > 4 && strcmp(argv[4], "--kv-int8") == 0;
  char err[256];
  size_t need = 0;
  if (einfer_arena_bytes(model, model_size, &o, &need, err, sizeof err) != EINFER_OK) {
    fprintf(stderr, "einfer_arena_bytes: %s\n", err);
    return 1;
  }
  void* arena = aligned_alloc(64, (need + 63) / 64 * 64);
  einfer_session* s = NULL;
  if (einfer_session_create(model, model_size, &o, arena, need, &s, err, sizeof err) != EINFER_OK) {
    fprintf(stderr, "einfer_session_create: %s\n", err);
    return 1;
  }
  int32_t token = EINFER_TOKEN_BOS;
  int mismatches = 0;
  printf("generated:");
  for (int i = 0; i < n; ++i) {
    if (einfer_decode(s, token) != EINFER_OK) {
      fprintf(stderr, "einfer_decode: %s\n", einfer_error(s));
      return 1;
    }
    token = einfer_next_token(s);
    printf(" %d", token);
    mismatches += token != expected[i];
  }
  printf("\narena: %zu bytes used of %zu\n", einfer_arena_used(s), need);
  if (einfer_arena_used(s) != need) {
    fprintf(stderr, "arena use %zu differs from the size einfer_arena_bytes reported (%zu)\n",
            einfer_arena_used(s), need);
    return 1;
  }
  if (mismatches) {
    fprintf(stderr, "%d of %d ids differ from the expected ids\n", mismatches, n);
    return 1;
  }
  printf("all %d ids match\n", n);
  free(arena);
  free(model);
  return 0;
}
