# cmake -P script: links one ISA level's kernel objects into one relocatable object and gives its
# C++ symbols a per-level suffix (".isa_<level>", shown by c++filt as "[clone .isa_<level>]"), so
# that level's bodies, and every inline function or template instantiated in them with the
# level's instruction set flags, never merge with another level's (the ODR hazard of compiling
# one header with different -m flags). Called by cmake/isa.cmake.
#   CXX, NM, OBJCOPY   tools of the target toolchain
#   OBJECTS            the level's object files, separated by "|"
#   LEVEL, OUT         level name and output object
#   MODE               all:    every defined external symbol except the table (an added level)
#                      public: only the dispatched entry points the table takes (the baseline
#                              level: its internals stay the library's baseline internals)
#   CXXFILT            (public mode, optional) demangler: a function of namespace einfer defined
#                      by the level but missing from the table fails the build, since every level
#                      would run its baseline body (an ISA-independent function belongs in a
#                      source compiled once, kernels/CMakeLists.txt)
string(REPLACE "|" ";" objects "${OBJECTS}")
set(combined "${OUT}.combined.o")
execute_process(COMMAND ${CXX} -r -nostdlib -o ${combined} ${objects} RESULT_VARIABLE rc
                ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "isa_rename: relocatable link of level ${LEVEL} failed: ${err}")
endif()

if(MODE STREQUAL "all")
  execute_process(COMMAND ${NM} --defined-only --extern-only --format=posix ${combined}
                  OUTPUT_VARIABLE listing RESULT_VARIABLE rc)
else()
  set(table "")
  foreach(obj ${objects})
    if(obj MATCHES "isa_table\\.cpp\\.o(bj)?$")
      set(table ${obj})
    endif()
  endforeach()
  if(NOT table)
    message(FATAL_ERROR "isa_rename: no isa_table object among ${OBJECTS}")
  endif()
  execute_process(COMMAND ${NM} --undefined-only --format=posix ${table} OUTPUT_VARIABLE listing
                  RESULT_VARIABLE rc)
endif()
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "isa_rename: ${NM} failed for level ${LEVEL}")
endif()

string(REPLACE "\n" ";" lines "${listing}")
set(map "")
set(count 0)
foreach(line ${lines})
  string(REGEX MATCH "^[^ ]+" sym "${line}")
  if(NOT sym OR sym MATCHES "^einfer_isa_table_")
    continue()
  endif()
  if(MODE STREQUAL "public" AND NOT sym MATCHES "^_Z")
    continue()
  endif()
  string(APPEND map "${sym} ${sym}.isa_${LEVEL}\n")
  math(EXPR count "${count} + 1")
endforeach()
if(count EQUAL 0)
  message(FATAL_ERROR "isa_rename: no symbols to rename in level ${LEVEL}")
endif()
file(WRITE "${OUT}.map" "${map}")

if(MODE STREQUAL "public" AND CXXFILT)
  execute_process(COMMAND ${NM} --defined-only --extern-only --format=posix ${combined}
                  OUTPUT_VARIABLE defined RESULT_VARIABLE rc)
  # Strong text symbols only: inline functions a -O0 build emits out of line (weak, W) are
  # header helpers every level may share, not entry points a level would shadow.
  string(REPLACE "\n" ";" defined_lines "${defined}")
  set(defined "")
  foreach(line ${defined_lines})
    if(line MATCHES "^([^ ]+) T ")
      string(APPEND defined "${CMAKE_MATCH_1}\n")
    endif()
  endforeach()
  file(WRITE "${OUT}.defined" "${defined}")
  execute_process(COMMAND ${CXXFILT} INPUT_FILE "${OUT}.defined" OUTPUT_VARIABLE demangled
                  RESULT_VARIABLE rc)
  file(REMOVE "${OUT}.defined")
  string(REPLACE "\n" ";" demangled "${demangled}")
  set(missing "")
  foreach(fn ${demangled})
    if(fn MATCHES "^einfer::([A-Za-z0-9_]+)\\(")
      set(name ${CMAKE_MATCH_1})
      string(LENGTH "${name}" len)
      string(FIND "${map}" "N6einfer${len}${name}E" in_table)  # its mangled name is renamed
      if(in_table EQUAL -1)
        list(APPEND missing ${fn})
      endif()
    endif()
  endforeach()
  if(missing)
    string(REPLACE ";" "\n  " missing "${missing}")
    message(FATAL_ERROR "isa_rename: functions defined in ISA sources are missing from the kernel "
                        "table (kernels/isa/kernel_table.h), so every level would run their ${LEVEL} "
                        "body:\n  ${missing}\nAdd an X(...) line for each (or, if ISA-independent, "
                        "move it to a source compiled once: one named neither for an ISA nor "
                        "*_dispatch.cpp, kernels/CMakeLists.txt).")
  endif()
endif()
execute_process(COMMAND ${OBJCOPY} --redefine-syms=${OUT}.map ${combined} ${OUT}
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "isa_rename: ${OBJCOPY} failed for level ${LEVEL}: ${err}")
endif()
file(REMOVE ${combined})
