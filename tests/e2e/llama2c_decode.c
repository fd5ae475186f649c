/* llama2c_decode TOKENIZER.bin IDS_FILE: prints the text llama2.c's run.c prints for a greedy
 * run that starts from BOS and generated the ids in IDS_FILE (whitespace-separated), using
 * llama2.c's own decoding rule, written here independently of einfer's tokenizer: the piece of
 * `next` from tokenizer.bin; after BOS (1) a leading space is dropped; "<0xNN>" is the raw byte;
 * safe_printf skips single bytes that are neither printable nor whitespace; generation ends at BOS.
 * The e2e test compares einfer-run's text for the GGUF-packed model with this. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: llama2c_decode TOKENIZER.bin IDS_FILE\n");
    return 2;
  }
  FILE* f = fopen(argv[1], "rb");
  if (!f) {
    fprintf(stderr, "cannot open %s\n", argv[1]);
    return 1;
  }
  int max_len = 0;
  if (fread(&max_len, 4, 1, f) != 1) return 1;
  enum { kMaxVocab = 1 << 16 };
  static char* vocab[kMaxVocab];
  int n = 0;
  for (;;) {
    float score;
    int len;
    if (fread(&score, 4, 1, f) != 1) break;
    if (fread(&len, 4, 1, f) != 1 || len < 0 || len > max_len || n >= kMaxVocab) return 1;
    vocab[n] = calloc((size_t)len + 1, 1);
    if (fread(vocab[n], 1, (size_t)len, f) != (size_t)len) return 1;
    ++n;
  }
  fclose(f);
  FILE* ids = fopen(argv[2], "r");
  if (!ids) {
    fprintf(stderr, "cannot open %s\n", argv[2]);
    return 1;
  }
  int token = 1, next;
  while (fscanf(ids, "%d", &next) == 1) {
    if (next < 0 || next >= n) return 1;
    if (next == 1) break;
    char* piece = vocab[next];
    if (token == 1 && piece[0] == ' ') piece++;
    unsigned char byte_val;
    char one[2] = {0, 0};
    if (sscanf(piece, "<0x%02hhX>", &byte_val) == 1) {
      one[0] = (char)byte_val;
      piece = one;
    }
    if (piece[0] != '\0' && !(piece[1] == '\0' && !(isprint((unsigned char)piece[0]) ||
                                                    isspace((unsigned char)piece[0]))))
      fputs(piece, stdout);
    token = next;
  }
  printf("\n");
  return 0;
}
