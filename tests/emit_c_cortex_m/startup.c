/* Minimal Cortex-M4 reset handler for the emit-c check: copy .data, enable the FPU, enter newlib.
 */
#include <string.h>
extern char _etext[], _sdata[], _edata[];
extern void _start(void);
void Reset_Handler(void) {
  memcpy(_sdata, _etext, (size_t)(_edata - _sdata));
  /* enable the FPU (CPACR CP10/CP11 full access) */
  *(volatile unsigned*)0xE000ED88 |= (0xFu << 20);
  _start();
  for (;;) {
  }
}
__attribute__((section(".vectors"), used)) void* const vectors[2] = {(void*)(0x20000000 + 0x400000),
                                                                     (void*)Reset_Handler};
