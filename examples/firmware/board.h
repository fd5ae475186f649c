/* Board support for the firmware example (QEMU mps2-an386 Cortex-M4F, mps3-an547 Cortex-M55):
 * semihosting console and exit, SysTick time base, and the linker-script symbols the memory report
 * reads. board.c holds the startup code (vector table, reset handler, stack painting); nothing here
 * allocates. */
#ifndef EINFER_FIRMWARE_BOARD_H
#define EINFER_FIRMWARE_BOARD_H

#include <stddef.h>
#include <stdint.h>

/* Console output over semihosting (SYS_WRITE to the host's stdout). */
void board_write(const char* data, size_t len);
void board_puts(const char* text);
void board_put_u32(uint32_t value);
/* Ends the emulation with `status` as QEMU's exit status (semihosting SYS_EXIT_EXTENDED). */
void board_exit(int status) __attribute__((noreturn));

/* SysTick ticks since board start (24-bit counter extended by its wrap interrupt). Under
 * `qemu -icount shift=0` every instruction advances virtual time by 1 ns, so ticks count
 * instructions at a fixed ratio, measured at start-up on a loop of known length. */
uint64_t board_ticks(void);
/* Instructions `ticks` SysTick ticks stand for, and the ratio x 100 (for the report). */
uint64_t board_instructions(uint64_t ticks);
uint32_t board_instructions_per_tick_x100(void);

/* Deepest stack use so far (bytes below the initial SP that no longer hold the paint pattern). */
uint32_t board_stack_used(void);
uint32_t board_stack_reserved(void);
/* Bytes malloc asked for (the heap is disabled: _sbrk always fails). */
uint32_t board_heap_requested(void);

/* Linker-script symbols (sections.ld). */
extern const uint8_t __text_start[], __text_end[];
extern const uint8_t __rodata_start[], __rodata_end[];
extern const uint8_t __model_start[], __model_end[];
extern const uint8_t __flash_used_end[];
extern uint8_t __data_start__[], __data_end__[];
extern const uint8_t __data_load__[];
extern uint8_t __bss_start__[], __bss_end__[];
extern uint8_t __stack_bottom[], __stack_top[];
extern uint8_t __ram_start[], __ram_end[], __flash_start[], __flash_end[];

#endif
