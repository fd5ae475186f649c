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

#include "model_session.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: consumer MODEL.ein N\n");
    return 2;
  }
  fprintf(stderr, "einfer %s\n", EINFER_VERSION_STRING);
  const int steps = atoi(argv[2]);
  einfer_options o;
  einfer_options_default(&o);
  model_session m;
  if (open_model_session(argv[1], &o, &m) != 0) return 1;
  einfer_session* s = m.s;
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
  close_model_session(&m);
  return 0;
}
