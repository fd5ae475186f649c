// Internal to the AMX kernels (gemm_q8_q4_16x16_amx.cpp, gemm_gguf_q45k_16x16_amx.cpp): the
// ldtilecfg operand, palette 1, then bytes per row and rows of tiles 0-15.
#pragma once

#include <cstdint>

namespace einfer {

struct alignas(64) AmxTileConfig {
  uint8_t palette;
  uint8_t start_row;
  uint8_t reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
};

}  // namespace einfer
