/* A session of a packed model file, opened as a C program on a hosted system opens one: the file
 * read into 64-byte aligned memory (what einfer_session_create wants) and a session in an arena of
 * exactly einfer_arena_bytes. Shared by the consumer program and the e2e test of the C API
 * (tests/e2e/capi_greedy.c); include <einfer/einfer.h> (or models/einfer.h) first. */
#ifndef EINFER_TESTS_MODEL_SESSION_H
#define EINFER_TESTS_MODEL_SESSION_H

#include <stdio.h>
#include <stdlib.h>

typedef struct {
  unsigned char* model;
  void* arena;
  size_t arena_bytes; /* einfer_arena_bytes for the options */
  einfer_session* s;
} model_session;

static unsigned char* read_model(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  const long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char* buf = n > 0 ? aligned_alloc(64, ((size_t)n + 63) / 64 * 64) : NULL;
  if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  *size = (size_t)n;
  return buf;
}

/* 0 on success; otherwise 1 with a message on stderr (and nothing to close). */
static int open_model_session(const char* path, const einfer_options* o, model_session* m) {
  size_t model_size = 0;
  m->model = read_model(path, &model_size);
  m->arena = NULL;
  m->arena_bytes = 0;
  m->s = NULL;
  if (!m->model) {
    fprintf(stderr, "cannot read %s\n", path);
    return 1;
  }
  char err[256];
  size_t need = 0;
  if (einfer_arena_bytes(m->model, model_size, o, &need, err, sizeof err) != EINFER_OK) {
    fprintf(stderr, "einfer_arena_bytes: %s\n", err);
    free(m->model);
    return 1;
  }
  m->arena_bytes = need;
  m->arena = aligned_alloc(64, (need + 63) / 64 * 64);
  if (!m->arena || einfer_session_create(m->model, model_size, o, m->arena, need, &m->s, err,
                                         sizeof err) != EINFER_OK) {
    fprintf(stderr, "einfer_session_create: %s\n", m->arena ? err : "out of memory");
    free(m->arena);
    free(m->model);
    return 1;
  }
  return 0;
}

static void close_model_session(model_session* m) {
  free(m->arena);
  free(m->model);
}

#endif
