# Cross toolchain: bare-metal Cortex-M4F (arm-none-eabi, newlib; ARMv7E-M with the DSP extension's
# SIMD32, single-precision FPU), tests run on qemu-system-arm's mps2-an386 board with semihosting.
#
# Executables need the startup code and linker script in toolchains/cortex-m/: call
# einfer_bare_metal_image(<target>) (toolchains/cortex-m/image.cmake, included by the root
# CMakeLists when EINFER_BARE_METAL is ON). The rest is toolchains/cortex-m/toolchain-common.cmake.
set(CMAKE_SYSTEM_PROCESSOR cortex-m4)
set(EINFER_CORTEX_M_CPU_FLAGS "-mcpu=cortex-m4 -mthumb -mfpu=fpv4-sp-d16 -mfloat-abi=hard")
set(EINFER_CORTEX_M_BOARD mps2-an386)
set(EINFER_CORTEX_M_QEMU_CPU cortex-m4)
set(EINFER_CORTEX_M_TEST_NAME einfer_tests_m4)
include(${CMAKE_CURRENT_LIST_DIR}/cortex-m/toolchain-common.cmake)
