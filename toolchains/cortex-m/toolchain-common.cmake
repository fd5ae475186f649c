# Shared by the bare-metal Cortex-M toolchain files (cortex-m4.cmake, cortex-m55.cmake): they set
#   EINFER_CORTEX_M_CPU_FLAGS  compiler flags for the core (-mcpu, FPU, float ABI)
#   EINFER_CORTEX_M_BOARD      QEMU machine, also the name of the board's linker scripts
#                              (toolchains/cortex-m/<board>.ld, examples/firmware/<board>-*.ld)
#   EINFER_CORTEX_M_QEMU_CPU   qemu-system-arm -cpu
#   EINFER_CORTEX_M_TEST_NAME  name of the doctest image (einfer_tests_m4, einfer_tests_m55)
# and include this file. Tests boot under qemu-system-arm with semihosting (console and exit
# status reach the host); the emulator command ends in -kernel, so ctest's "<emulator> <image>"
# boots the image and bare-metal tests take no arguments.
set(CMAKE_SYSTEM_NAME Generic)

set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_CXX_COMPILER arm-none-eabi-g++)
set(CMAKE_ASM_COMPILER arm-none-eabi-gcc)
# No OS to link a test program against during compiler checks.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

set(CMAKE_C_FLAGS_INIT "${EINFER_CORTEX_M_CPU_FLAGS} -ffunction-sections -fdata-sections")
set(CMAKE_CXX_FLAGS_INIT "${EINFER_CORTEX_M_CPU_FLAGS} -ffunction-sections -fdata-sections")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-Wl,--gc-sections")

# newlib's headers hide some POSIX/GNU declarations under strict -std=c++20 that xsimd and
# doctest use; the root CMakeLists honours this instead of its default OFF.
set(CMAKE_CXX_EXTENSIONS ON)

set(EINFER_BARE_METAL ON CACHE BOOL "Target has no OS (Cortex-M)")

set(CMAKE_CROSSCOMPILING_EMULATOR
    qemu-system-arm;-M;${EINFER_CORTEX_M_BOARD};-cpu;${EINFER_CORTEX_M_QEMU_CPU};-nographic;-monitor;none;-serial;null;-semihosting-config;enable=on,target=native;-kernel)

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)

include(${CMAKE_CURRENT_LIST_DIR}/../host-header-packages.cmake)
