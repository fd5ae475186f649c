# Cross toolchain: 64-bit Arm Linux (Debian g++-aarch64-linux-gnu), tests run under qemu-aarch64.
#
#   EINFER_AARCH64_MARCH  baseline -march (default armv8-a; dotprod kernels are a runtime level)
#   EINFER_QEMU_CPU       CPU qemu emulates (default max, which has dotprod). The aarch64-nodot
#                         preset builds for armv8-a and runs on cortex-a53 (no dotprod), so the
#                         kernels' non-dotprod fallback is compiled and executed too.
# binfmt_misc may be absent, so ctest calls qemu explicitly (CMAKE_CROSSCOMPILING_EMULATOR).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

set(EINFER_AARCH64_MARCH "armv8-a" CACHE STRING "-march (baseline) for the aarch64 build")
set(EINFER_QEMU_CPU "max" CACHE STRING "qemu-aarch64 -cpu used to run the tests")
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES EINFER_AARCH64_MARCH EINFER_QEMU_CPU)

set(CMAKE_C_FLAGS_INIT "-march=${EINFER_AARCH64_MARCH}")
set(CMAKE_CXX_FLAGS_INIT "-march=${EINFER_AARCH64_MARCH}")
# Device tools (einfer-run, einfer-bench, ...) link statically so they run on any board with this
# ABI; tests stay dynamic (the malloc-counting test interposes glibc's allocator).
set(EINFER_STATIC_TOOLS ON CACHE BOOL "Link tools/ executables statically")

set(EINFER_CROSS_SYSROOT /usr/aarch64-linux-gnu)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64;-cpu;${EINFER_QEMU_CPU};-L;${EINFER_CROSS_SYSROOT})

# Libraries and headers come from the cross sysroot; programs (nm, qemu) from the host.
set(CMAKE_FIND_ROOT_PATH ${EINFER_CROSS_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)

# xsimd and doctest are header-only host packages: use their configs directly. The root
# CMakeLists re-points their include directory at a folder holding only their headers, so the
# host's /usr/include never reaches the cross compiler.
include(${CMAKE_CURRENT_LIST_DIR}/host-header-packages.cmake)
