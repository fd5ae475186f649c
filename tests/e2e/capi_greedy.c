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
#include "tests/consumer/model_session.h"

int main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: capi_greedy MODEL.ein EXPECTED_IDS_FILE N [--kv-int8]\n");
    return 2;
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
  model_session m;
  if (open_model_session(argv[1], &o, &m) != 0) return 1;
  einfer_session* s = m.s;
  const size_t need = m.arena_bytes;
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
  close_model_session(&m);
  return 0;
}
