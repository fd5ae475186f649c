# Cross toolchain: bare-metal Cortex-M4F (arm-none-eabi, newlib), tests run on qemu-system-arm's
# mps2-an386 board with semihosting (console and exit status go to the host).
#
# Executables need the startup code and linker script in toolchains/cortex-m/: call
# einfer_bare_metal_image(<target>) (toolchains/cortex-m/image.cmake, included by the root
# CMakeLists when EINFER_BARE_METAL is ON). The emulator command ends in -kernel, so ctest's
# "<emulator> <image>" boots the image; bare-metal tests therefore take no arguments.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR cortex-m4)

set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_CXX_COMPILER arm-none-eabi-g++)
set(CMAKE_ASM_COMPILER arm-none-eabi-gcc)
# No OS to link a test program against during compiler checks.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

set(EINFER_M4_FLAGS "-mcpu=cortex-m4 -mthumb -mfpu=fpv4-sp-d16 -mfloat-abi=hard")
set(CMAKE_C_FLAGS_INIT "${EINFER_M4_FLAGS} -ffunction-sections -fdata-sections")
set(CMAKE_CXX_FLAGS_INIT "${EINFER_M4_FLAGS} -ffunction-sections -fdata-sections")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-Wl,--gc-sections")

# newlib's headers hide some POSIX/GNU declarations under strict -std=c++20 that xsimd and
# doctest use; the root CMakeLists honours this instead of its default OFF.
set(CMAKE_CXX_EXTENSIONS ON)

set(EINFER_BARE_METAL ON CACHE BOOL "Target has no OS (Cortex-M)")

set(CMAKE_CROSSCOMPILING_EMULATOR
    qemu-system-arm;-M;mps2-an386;-cpu;cortex-m4;-nographic;-monitor;none;-serial;null;-semihosting-config;enable=on,target=native;-kernel)

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)

include(${CMAKE_CURRENT_LIST_DIR}/host-header-packages.cmake)
