# No-heap proof, run by ctest: cmake -DNM=<nm> -DLIBRARIES=<a.a>,<b.a>,... -P check_no_heap.cmake
#
# Lists the undefined symbols of each static library (`nm -u -A`, the target's nm for cross builds)
# and fails, naming object file and symbol, if any library refers to the heap or to C++ exception
# machinery: malloc & co., every operator new/delete variant (plain, array, nothrow, sized,
# aligned; 32- and 64-bit size_t manglings), exception allocation/throw, and libstdc++'s
# std::__throw_* helpers (which std containers call). Names match exactly, so e.g. `free` never
# matches `freeze` or `einfer_free_list`.
cmake_minimum_required(VERSION 3.25)

if(NOT NM OR NOT LIBRARIES)
  message(FATAL_ERROR "usage: cmake -DNM=<nm> -DLIBRARIES=<lib.a>[,<lib.a>...] -P check_no_heap.cmake")
endif()

set(forbidden_exact
  malloc calloc realloc reallocarray free aligned_alloc posix_memalign memalign valloc pvalloc
  strdup strndup
  _malloc_r _calloc_r _realloc_r _free_r _memalign_r  # newlib reentrant forms
  __cxa_allocate_exception __cxa_throw __cxa_rethrow __cxa_begin_catch)
set(forbidden_regex
  "^_Zn[wa][jm]"          # operator new / new[] (size_t = unsigned int j / unsigned long m), all variants
  "^_Zd[la]Pv"            # operator delete / delete[], all variants
  "^_ZSt[0-9]+__throw_")  # std::__throw_bad_alloc, __throw_length_error, ...

string(REPLACE "," ";" LIBRARIES "${LIBRARIES}")
set(violations "")
foreach(lib ${LIBRARIES})
  if(NOT EXISTS "${lib}")
    message(FATAL_ERROR "FAIL: library not found: ${lib}")
  endif()
  execute_process(COMMAND ${NM} -u -A "${lib}" OUTPUT_VARIABLE out ERROR_VARIABLE err
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "FAIL: ${NM} -u -A ${lib} failed (${rc}): ${err}")
  endif()
  string(REPLACE "\n" ";" lines "${out}")
  foreach(line ${lines})
    # "<archive>:<object>:                 U <symbol>"
    if(NOT line MATCHES "^(.*):[ \t]+U[ \t]+([^ \t]+)$")
      continue()
    endif()
    set(where "${CMAKE_MATCH_1}")
    set(symbol "${CMAKE_MATCH_2}")
    string(REGEX REPLACE "@.*$" "" symbol "${symbol}")  # drop symbol versions
    set(bad FALSE)
    if(symbol IN_LIST forbidden_exact)
      set(bad TRUE)
    else()
      foreach(re ${forbidden_regex})
        if(symbol MATCHES "${re}")
          set(bad TRUE)
        endif()
      endforeach()
    endif()
    if(bad)
      get_filename_component(where_name "${where}" NAME)
      list(APPEND violations "  ${where_name}: ${symbol}")
    endif()
  endforeach()
  message(STATUS "checked ${lib}")
endforeach()

if(violations)
  list(LENGTH violations n)
  string(REPLACE ";" "\n" violations "${violations}")
  message(FATAL_ERROR "FAIL: ${n} heap/exception reference(s) in no-heap libraries:\n${violations}")
endif()
message(STATUS "OK: no heap or exception references")
