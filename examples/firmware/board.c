/* Startup and board support for the firmware example on QEMU mps2-an386 (Cortex-M4F) and
 * mps3-an547 (Cortex-M55).
 *
 * Reset: enable the FPU, paint the stack with a pattern (the high-water mark is measured at the
 * end), copy .data, zero .bss, start SysTick, calibrate it against a loop of known instruction
 * count, run main() and exit with its status over semihosting. No C library start files, no
 * heap, no stdio: output goes straight to semihosting calls. */
#include "board.h"

#include <string.h>

extern int main(void);
void board_reset_handler(void);

enum { kPaint = 0xC0FFEE11u };

static volatile uint32_t g_systick_wraps;
static uint32_t g_calibration_ticks; /* ticks of kCalibrationInstructions */
static uint32_t g_heap_requested;

/* Semihosting call (ARMv7-M: BKPT 0xAB): r0 = operation, r1 = argument; r0 returns. */
static uint32_t semihost(uint32_t op, const void* arg) {
  register uint32_t r0 __asm__("r0") = op;
  register const void* r1 __asm__("r1") = arg;
  __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}

/* The host console: SYS_OPEN(":tt", "w") gives its handle (opened on first use). */
static uint32_t g_console = 0xFFFFFFFFu;

void board_write(const char* data, size_t len) {
  if (g_console == 0xFFFFFFFFu) {
    static const char tt[] = ":tt";
    const uint32_t open_block[3] = {(uint32_t)(uintptr_t)tt, 4u /* "w" */, 3u};
    g_console = semihost(0x01 /* SYS_OPEN */, open_block);
  }
  const uint32_t block[3] = {g_console, (uint32_t)(uintptr_t)data, (uint32_t)len};
  if (len) semihost(0x05 /* SYS_WRITE */, block);
}

void board_puts(const char* text) {
  board_write(text, strlen(text));
}

void board_put_u32(uint32_t v) {
  char buf[11];
  int i = (int)sizeof buf;
  do {
    buf[--i] = (char)('0' + v % 10u);
    v /= 10u;
  } while (v);
  board_write(buf + i, sizeof buf - (size_t)i);
}

void board_exit(int status) {
  /* ADP_Stopped_ApplicationExit with the status as subcode: QEMU exits with it. */
  const uint32_t block[2] = {0x20026u, (uint32_t)status};
  semihost(0x20 /* SYS_EXIT_EXTENDED */, block);
  for (;;) {
  }
}

/* ---- SysTick --------------------------------------------------------------------------------- */
#define SYST_CSR (*(volatile uint32_t*)0xE000E010u)
#define SYST_RVR (*(volatile uint32_t*)0xE000E014u)
#define SYST_CVR (*(volatile uint32_t*)0xE000E018u)

static void systick_handler(void) {
  g_systick_wraps = g_systick_wraps + 1u;
}

uint64_t board_ticks(void) {
  uint32_t wraps, value;
  do {
    wraps = g_systick_wraps;
    value = SYST_CVR;
  } while (wraps != g_systick_wraps);
  return ((uint64_t)wraps << 24) + (0xFFFFFFu - value);
}

enum { kCalibrationInstructions = 2000000 };

uint32_t board_instructions_per_tick_x100(void) {
  return g_calibration_ticks
             ? (uint32_t)((100ull * kCalibrationInstructions + g_calibration_ticks / 2u) /
                          g_calibration_ticks)
             : 0u;
}

uint64_t board_instructions(uint64_t ticks) {
  return g_calibration_ticks
             ? (ticks * kCalibrationInstructions + g_calibration_ticks / 2u) / g_calibration_ticks
             : 0u;
}

static void calibrate(void) {
  /* 2 instructions per iteration (subs, bne): a non-integer ratio (31.25 on the AN547's 32 MHz
   * SysTick) is kept as the ratio of the two counts, not rounded. */
  uint32_t n = kCalibrationInstructions / 2;
  const uint64_t t0 = board_ticks();
  __asm__ volatile("1: subs %0, %0, #1\n\tbne 1b" : "+r"(n) : : "cc");
  g_calibration_ticks = (uint32_t)(board_ticks() - t0);
}

/* ---- stack and heap -------------------------------------------------------------------------- */
uint32_t board_stack_reserved(void) {
  return (uint32_t)(__stack_top - __stack_bottom);
}

uint32_t board_stack_used(void) {
  const uint32_t* p = (const uint32_t*)__stack_bottom;
  const uint32_t* top = (const uint32_t*)__stack_top;
  while (p < top && *p == kPaint) ++p;
  return (uint32_t)((const uint8_t*)top - (const uint8_t*)p);
}

uint32_t board_heap_requested(void) {
  return g_heap_requested;
}

/* newlib's malloc asks here; einfer never should. Refuse and remember how much was asked. */
void* _sbrk(ptrdiff_t increment) {
  g_heap_requested += (uint32_t)increment;
  return (void*)-1;
}

/* crti.o/crtn.o are not linked (-nostartfiles). */
void _init(void) {}
void _fini(void) {}

/* ---- faults, vectors, reset ------------------------------------------------------------------ */
static void fault(const char* what) {
  board_puts(what);
  board_exit(70);
}
static void hard_fault_handler(void) {
  fault("firmware: HardFault\n");
}
static void mem_manage_handler(void) {
  fault("firmware: MemManage fault\n");
}
static void bus_fault_handler(void) {
  fault("firmware: BusFault\n");
}
static void usage_fault_handler(void) {
  fault("firmware: UsageFault\n");
}
static void unexpected_handler(void) {
  fault("firmware: unexpected interrupt\n");
}

__attribute__((section(".vectors"), used)) static void (*const vector_table[16 + 32])(void) = {
    (void (*)(void))(__stack_top),
    board_reset_handler,
    unexpected_handler, /* NMI */
    hard_fault_handler,
    mem_manage_handler,
    bus_fault_handler,
    usage_fault_handler,
    0,
    0,
    0,
    0,
    unexpected_handler, /* SVCall */
    unexpected_handler, /* DebugMonitor */
    0,
    unexpected_handler, /* PendSV */
    systick_handler,
    [16 ... 47] = unexpected_handler,
};

extern void __libc_init_array(void);

__attribute__((noreturn, used)) void board_reset_handler(void) {
  /* Paint the stack below the current SP (this frame lives above it), word by word. */
  uint32_t sp;
  __asm__ volatile("mov %0, sp" : "=r"(sp));
  for (volatile uint32_t* p = (volatile uint32_t*)__stack_bottom; (uint32_t)(uintptr_t)p < sp - 64u;
       ++p) {
    *p = kPaint;
  }
  volatile uint32_t* const cpacr = (volatile uint32_t*)0xE000ED88u;
  *cpacr |= (0xFu << 20); /* CP10/CP11: the FPU */
  __asm__ volatile("dsb\n\tisb" ::: "memory");
  volatile uint32_t* const shcsr = (volatile uint32_t*)0xE000ED24u;
  *shcsr |= (1u << 16) | (1u << 17) | (1u << 18); /* MemManage, BusFault, UsageFault */

  memcpy(__data_start__, (const void*)__data_load__, (size_t)(__data_end__ - __data_start__));
  memset(__bss_start__, 0, (size_t)(__bss_end__ - __bss_start__));
  __libc_init_array();

  SYST_RVR = 0xFFFFFFu;
  SYST_CVR = 0u;
  /* Processor clock if the core's SysTick runs on it, else the reference clock. */
  SYST_CSR = 0x7u;
  for (volatile int i = 0; i < 1000; ++i) {
  }
  if (SYST_CVR == 0u) SYST_CSR = 0x3u;
  calibrate();
  board_exit(main());
}
