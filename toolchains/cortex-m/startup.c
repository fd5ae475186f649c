// Startup code for the bare-metal Cortex-M test images (QEMU mps2-an386 Cortex-M4F, mps3-an547
// Cortex-M55; newlib + rdimon).
//
// Vector table, a reset handler that prepares the C/C++ environment (enable the FPU, copy .data,
// zero .bss, open the semihosting console, run static constructors) and calls main(), and fault
// handlers that report over semihosting and stop QEMU with a failure status instead of hanging.
// exit(n) ends in newlib's semihosting SYS_EXIT, which becomes QEMU's exit status.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

extern uint32_t __stack_top;
extern uint32_t __data_start__, __data_end__, __data_load__;
extern uint32_t __bss_start__, __bss_end__;

extern void initialise_monitor_handles(void);  // librdimon: semihosting stdin/stdout/stderr
extern void __libc_init_array(void);
extern int main(int argc, char** argv);

void einfer_reset_handler(void);

// crti.o/crtn.o (skipped with -nostartfiles) would provide these; .init_array does the real work.
void _init(void) {}
void _fini(void) {}
// crtbegin.o would define this: the handle __cxa_atexit registers static destructors under.
void* __dso_handle = &__dso_handle;

// Semihosting call (ARMv7-M: BKPT 0xAB): r0 = operation, r1 = argument.
static void semihost(uint32_t op, const void* arg) {
  register uint32_t r0 __asm__("r0") = op;
  register const void* r1 __asm__("r1") = arg;
  __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
}

static void fault(const char* what) {
  semihost(0x04, what);                  // SYS_WRITE0: NUL-terminated string to the console
  semihost(0x18, (const void*)0x20024);  // SYS_EXIT, ADP_Stopped_InternalError: QEMU exits 1
  for (;;) {
  }
}

static void hard_fault_handler(void) {
  fault("einfer: HardFault\n");
}
static void mem_manage_handler(void) {
  fault("einfer: MemManage fault\n");
}
static void bus_fault_handler(void) {
  fault("einfer: BusFault\n");
}
static void usage_fault_handler(void) {
  fault("einfer: UsageFault\n");
}
static void unexpected_handler(void) {
  fault("einfer: unexpected interrupt\n");
}

__attribute__((section(".vectors"), used)) static void (*const vector_table[16 + 32])(void) = {
    (void (*)(void))(&__stack_top),  // initial stack pointer
    einfer_reset_handler,
    unexpected_handler,  // NMI
    hard_fault_handler,
    mem_manage_handler,
    bus_fault_handler,
    usage_fault_handler,
    0,
    0,
    0,
    0,
    unexpected_handler,  // SVCall
    unexpected_handler,  // DebugMonitor
    0,
    unexpected_handler,  // PendSV
    unexpected_handler,  // SysTick
    // External interrupts stay disabled; they would land in unexpected_handler.
    [16 ... 47] = unexpected_handler,
};

void einfer_reset_handler(void) {
  // Full access to CP10/CP11 (the FPU, and on the M55 also Helium/MVE) before any float or vector
  // instruction runs.
  volatile uint32_t* const cpacr = (volatile uint32_t*)0xE000ED88u;
  *cpacr |= (0xFu << 20);
  __asm__ volatile("dsb\n\tisb" ::: "memory");
  // Trap divide by zero and unaligned double-word access patterns as UsageFaults.
  volatile uint32_t* const ccr = (volatile uint32_t*)0xE000ED14u;
  *ccr |= (1u << 4);  // DIV_0_TRP
  volatile uint32_t* const shcsr = (volatile uint32_t*)0xE000ED24u;
  *shcsr |= (1u << 16) | (1u << 17) | (1u << 18);  // enable MemManage, BusFault, UsageFault

  memcpy(&__data_start__, &__data_load__, (size_t)((char*)&__data_end__ - (char*)&__data_start__));
  memset(&__bss_start__, 0, (size_t)((char*)&__bss_end__ - (char*)&__bss_start__));

  initialise_monitor_handles();
  __libc_init_array();
  static char program_name[] = "einfer";
  static char* argv[] = {program_name, 0};
  exit(main(1, argv));
}
