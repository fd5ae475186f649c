# Cross toolchain: bare-metal Cortex-M55 (arm-none-eabi, newlib; ARMv8.1-M with Helium/MVE integer
# and float lanes, the DSP extension and a hard-float FPU), tests run on qemu-system-arm's
# mps3-an547 board with semihosting. -mcpu=cortex-m55 enables MVE and the FPU (__ARM_FEATURE_MVE
# = 3); newlib comes from the thumb/v8.1-m.main+mve/hard multilib.
#
# Executables need the startup code and linker script in toolchains/cortex-m/: call
# einfer_bare_metal_image(<target>) (toolchains/cortex-m/image.cmake, included by the root
# CMakeLists when EINFER_BARE_METAL is ON). The rest is toolchains/cortex-m/toolchain-common.cmake.
set(CMAKE_SYSTEM_PROCESSOR cortex-m55)
set(EINFER_CORTEX_M_CPU_FLAGS "-mcpu=cortex-m55 -mthumb -mfloat-abi=hard")
set(EINFER_CORTEX_M_BOARD mps3-an547)
set(EINFER_CORTEX_M_QEMU_CPU cortex-m55)
set(EINFER_CORTEX_M_TEST_NAME einfer_tests_m55)
include(${CMAKE_CURRENT_LIST_DIR}/cortex-m/toolchain-common.cmake)
