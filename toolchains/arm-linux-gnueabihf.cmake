# Cross toolchain: 32-bit Arm Linux, hard float, NEON (Debian g++-arm-linux-gnueabihf).
# Tests run under qemu-arm (called explicitly: binfmt_misc may be absent).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR armv7-a)

set(CMAKE_C_COMPILER arm-linux-gnueabihf-gcc)
set(CMAKE_CXX_COMPILER arm-linux-gnueabihf-g++)

set(EINFER_ARM_FLAGS "-march=armv7-a -mfpu=neon -mfloat-abi=hard")
set(CMAKE_C_FLAGS_INIT "${EINFER_ARM_FLAGS}")
set(CMAKE_CXX_FLAGS_INIT "${EINFER_ARM_FLAGS}")
# Device tools (einfer-run, einfer-bench, ...) link statically so they run on any board with this
# ABI; tests stay dynamic (the malloc-counting test interposes glibc's allocator).
set(EINFER_STATIC_TOOLS ON CACHE BOOL "Link tools/ executables statically")

set(EINFER_CROSS_SYSROOT /usr/arm-linux-gnueabihf)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-arm;-cpu;max;-L;${EINFER_CROSS_SYSROOT})

set(CMAKE_FIND_ROOT_PATH ${EINFER_CROSS_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)

include(${CMAKE_CURRENT_LIST_DIR}/host-header-packages.cmake)
