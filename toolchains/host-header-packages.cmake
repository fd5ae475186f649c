# Shared by the cross toolchains: xsimd and doctest are header-only, installed for the host
# (Debian libxsimd-dev, doctest-dev). Point find_package at their host configs; the root
# CMakeLists then re-points the imported targets at ${CMAKE_BINARY_DIR}/host-headers, a folder of
# symlinks to just their header directories (never all of /usr/include, which holds x86 glibc).
set(xsimd_DIR /usr/lib/x86_64-linux-gnu/cmake/xsimd CACHE PATH "xsimd config (host package)")
set(doctest_DIR /usr/lib/cmake/doctest CACHE PATH "doctest config (host package)")
# A config given by <Pkg>_DIR is used as is; anything else searched must be in the sysroot.
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(EINFER_HOST_HEADER_LINKS ON)
