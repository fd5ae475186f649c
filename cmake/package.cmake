# Packaging: the public include root, the version header, install rules, the CMake package
# (einferConfig.cmake + einferConfigVersion.cmake exporting einfer::einfer) and einfer.pc.
#
# Consumers include <einfer/einfer.h> (C API), <einfer/version.h>, and the C++ headers as
# <einfer/models/session.h>, <einfer/runtime/model.h>, ... Kernel internals (*_internal.h, headers
# that include xsimd or arm_neon.h, and headers that include those) are not installed. In the build tree <einfer/...> resolves to
# ${PROJECT_BINARY_DIR}/include/einfer, which links to the source folders (same files, no copies).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(EINFER_PUBLIC_INCLUDE ${PROJECT_BINARY_DIR}/include)
set(EINFER_HEADER_DIRS runtime kernels models)
configure_file(${CMAKE_CURRENT_LIST_DIR}/version.h.in ${EINFER_PUBLIC_INCLUDE}/einfer/version.h @ONLY)
foreach(dir ${EINFER_HEADER_DIRS})
  if(NOT EXISTS ${EINFER_PUBLIC_INCLUDE}/einfer/${dir})
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/${dir} ${EINFER_PUBLIC_INCLUDE}/einfer/${dir} SYMBOLIC)
  endif()
endforeach()
if(NOT EXISTS ${EINFER_PUBLIC_INCLUDE}/einfer/einfer.h)
  file(CREATE_LINK ${PROJECT_SOURCE_DIR}/models/einfer.h ${EINFER_PUBLIC_INCLUDE}/einfer/einfer.h
       SYMBOLIC)
endif()

# The headers' own includes name their folder ("runtime/status.h"), so the einfer/ folder is an
# include root too.
function(einfer_public_library target)
  target_include_directories(${target} PUBLIC
    $<BUILD_INTERFACE:${EINFER_PUBLIC_INCLUDE}> $<BUILD_INTERFACE:${EINFER_PUBLIC_INCLUDE}/einfer>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/einfer>)
  target_compile_features(${target} PUBLIC cxx_std_20)
  set_property(GLOBAL APPEND PROPERTY EINFER_EXPORTED_LIBRARIES ${target})
endfunction()

# Called once the libraries exist: the umbrella target and the install rules.
function(einfer_package)
  # einfer::einfer: every library, in link order, for add_subdirectory/FetchContent and
  # find_package users alike.
  add_library(einfer INTERFACE)
  target_link_libraries(einfer INTERFACE einfer_models)
  add_library(einfer::einfer ALIAS einfer)
  if(NOT EINFER_INSTALL)
    return()
  endif()
  get_property(libraries GLOBAL PROPERTY EINFER_EXPORTED_LIBRARIES)
  install(TARGETS ${libraries} einfer EXPORT einferTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(FILES ${EINFER_PUBLIC_INCLUDE}/einfer/version.h ${PROJECT_SOURCE_DIR}/models/einfer.h
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/einfer)
  # Kernel internals stay out: *_internal.h, headers that include xsimd, NEON or x86 intrinsics, and
  # headers that include those.
  set(headers "")
  foreach(dir ${EINFER_HEADER_DIRS})
    file(GLOB_RECURSE dir_headers CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/${dir}/*.h)
    list(APPEND headers ${dir_headers})
  endforeach()
  set(internal_patterns "<xsimd" "<arm_neon" "<immintrin")
  foreach(header ${headers})
    if(header MATCHES "_internal\\.h$")
      file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR} ${header})
      list(APPEND internal_patterns "\"${rel}\"")
    endif()
  endforeach()
  foreach(pass RANGE 3)
    foreach(header ${headers})
      file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR} ${header})
      if(NOT "\"${rel}\"" IN_LIST internal_patterns)
        list(JOIN internal_patterns "|" regex)
        file(STRINGS ${header} internal_include REGEX "#include (${regex})")
        if(internal_include)
          list(APPEND internal_patterns "\"${rel}\"")
        endif()
      endif()
    endforeach()
  endforeach()
  foreach(header ${headers})
    file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR} ${header})
    if(NOT "\"${rel}\"" IN_LIST internal_patterns)
      get_filename_component(dir ${rel} DIRECTORY)
      install(FILES ${header} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/einfer/${dir})
    endif()
  endforeach()

  set(cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/einfer)
  install(EXPORT einferTargets NAMESPACE einfer:: DESTINATION ${cmake_dir})
  configure_package_config_file(${CMAKE_CURRENT_FUNCTION_LIST_DIR}/einferConfig.cmake.in
    ${PROJECT_BINARY_DIR}/einferConfig.cmake INSTALL_DESTINATION ${cmake_dir})
  write_basic_package_version_file(${PROJECT_BINARY_DIR}/einferConfigVersion.cmake
    COMPATIBILITY SameMinorVersion)
  install(FILES ${PROJECT_BINARY_DIR}/einferConfig.cmake ${PROJECT_BINARY_DIR}/einferConfigVersion.cmake
          DESTINATION ${cmake_dir})

  # pkg-config: static libraries in dependency order, then what a C program needs to link C++
  # objects (libstdc++ for the odd runtime helper, libm). The prefix is found relative to the .pc
  # file, so the package can be installed anywhere (cmake --install --prefix DIR).
  set(EINFER_PC_LIBS "")
  foreach(lib ${EINFER_LINK_ORDER})
    string(APPEND EINFER_PC_LIBS " -l${lib}")
  endforeach()
  set(pc_dir ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
  file(RELATIVE_PATH EINFER_PC_PREFIX_FROM_PCFILEDIR /${pc_dir} /)
  string(REGEX REPLACE "/$" "" EINFER_PC_PREFIX_FROM_PCFILEDIR "${EINFER_PC_PREFIX_FROM_PCFILEDIR}")
  configure_file(${CMAKE_CURRENT_FUNCTION_LIST_DIR}/einfer.pc.in ${PROJECT_BINARY_DIR}/einfer.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/einfer.pc DESTINATION ${pc_dir})
  install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/einfer)
endfunction()
