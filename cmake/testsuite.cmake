# Finds the WebAssembly spec testsuite (a folder whose core/ holds the .wast files) for the spec
# tests (tests/spec), the text front end's cross-checks (tests/text) and the fuzz seeds (fuzz/).
# Nothing needs it to build `sprawl`: when it is missing, those tests are left out of the build
# with ONE loud configure line saying how to get it, never a configure error.
#
# Where it looks, first match wins:
#   1. the cache variable SPRAWLING_TESTSUITE_DIR (-DSPRAWLING_TESTSUITE_DIR=…),
#   2. the environment variable SPRAWLING_TESTSUITE_DIR,
#   3. ../shared/testsuite beside the checkout (the shared machine and CI),
#   4. .artifacts/testsuite, where `scripts/get-testsuite` puts the pinned commit (one command).
# The 3.0 suite: when the engine switches to it, ../shared/testsuite-3.0 replaces place 3 and
# scripts/get-testsuite's pin moves to WebAssembly/testsuite 193e551f (see that folder's README);
# the layout (core/*.wast) and this file's callers stay as they are.
#
# SPRAWLING_REQUIRE_TESTSUITE (cache or environment variable, .ci/run sets it): a missing
# testsuite or wast2json is a configure error instead, so that CI cannot turn green without the
# spec tests.
set(SPRAWLING_TESTSUITE_DIR "" CACHE PATH
    "The WebAssembly spec testsuite (holds core/*.wast); empty: search (cmake/testsuite.cmake)")
option(SPRAWLING_REQUIRE_TESTSUITE "Fail the configure when the spec testsuite or wast2json is missing" OFF)

# sprawling_testsuite_core(OUT): sets OUT to the testsuite's core/ folder, or to "" when it or
# wast2json is missing (said once per configure, however many callers ask).
function(sprawling_testsuite_core out)
  get_property(resolved GLOBAL PROPERTY SPRAWLING_TESTSUITE_RESOLVED SET)
  if(resolved)
    get_property(core GLOBAL PROPERTY SPRAWLING_TESTSUITE_RESOLVED)
    set(${out} "${core}" PARENT_SCOPE)
    return()
  endif()

  set(candidates)
  if(SPRAWLING_TESTSUITE_DIR)
    list(APPEND candidates "${SPRAWLING_TESTSUITE_DIR}")
  elseif(DEFINED ENV{SPRAWLING_TESTSUITE_DIR} AND NOT "$ENV{SPRAWLING_TESTSUITE_DIR}" STREQUAL "")
    list(APPEND candidates "$ENV{SPRAWLING_TESTSUITE_DIR}")
  else()
    get_filename_component(beside "${PROJECT_SOURCE_DIR}/../shared/testsuite" ABSOLUTE)
    list(APPEND candidates "${beside}" "${PROJECT_SOURCE_DIR}/.artifacts/testsuite")
  endif()
  set(core "")
  foreach(dir IN LISTS candidates)
    file(GLOB wast_files "${dir}/core/*.wast")
    if(wast_files)
      set(core "${dir}/core")
      break()
    endif()
  endforeach()
  find_program(WAST2JSON wast2json)

  set(why "")
  if(NOT core)
    list(JOIN candidates ", " looked)
    set(why "no WebAssembly testsuite (core/*.wast) at ${looked}; get it with `scripts/get-testsuite` or set SPRAWLING_TESTSUITE_DIR")
  elseif(NOT WAST2JSON)
    set(why "wast2json (Debian package wabt) not found; run scripts/setup")
    set(core "")
  endif()
  if(why)
    if(SPRAWLING_REQUIRE_TESTSUITE OR "$ENV{SPRAWLING_REQUIRE_TESTSUITE}")
      message(FATAL_ERROR "SPRAWLING_REQUIRE_TESTSUITE is on, but ${why}")
    endif()
    message(NOTICE "*** SPEC TESTS SKIPPED (tests/spec, tests/text cross-checks, fuzz seeds): ${why}")
  else()
    message(STATUS "spec testsuite: ${core}")
  endif()
  set_property(GLOBAL PROPERTY SPRAWLING_TESTSUITE_RESOLVED "${core}")
  set(${out} "${core}" PARENT_SCOPE)
endfunction()

# The WebAssembly 3.0 testsuite (../shared/testsuite-3.0 beside the checkout, or the cache
# variable SPRAWLING_TESTSUITE_3_DIR): its SIMD files are replayed by tests/wasm (lane semantics)
# and run whole by tests/spec (`sprawl wast`). Missing: those tests are left out, said loudly by
# each caller; SPRAWLING_REQUIRE_TESTSUITE makes it a configure error there.
set(SPRAWLING_TESTSUITE_3_DIR "${PROJECT_SOURCE_DIR}/../shared/testsuite-3.0" CACHE PATH
    "The WebAssembly 3.0 spec testsuite checkout (holds core/*.wast)")

# sprawling_testsuite3_simd(OUT WHAT): sets OUT to the 3.0 suite's core/simd_*.wast files, or to
# nothing after one loud warning naming WHAT (the tests left out) or, under
# SPRAWLING_REQUIRE_TESTSUITE, a configure error.
function(sprawling_testsuite3_simd out what)
  file(GLOB files CONFIGURE_DEPENDS ${SPRAWLING_TESTSUITE_3_DIR}/core/simd_*.wast)
  if(NOT files)
    set(why "no simd_*.wast under ${SPRAWLING_TESTSUITE_3_DIR}/core (set SPRAWLING_TESTSUITE_3_DIR)")
    if(SPRAWLING_REQUIRE_TESTSUITE OR "$ENV{SPRAWLING_REQUIRE_TESTSUITE}")
      message(FATAL_ERROR "SPRAWLING_REQUIRE_TESTSUITE is on, but ${why}")
    endif()
    message(WARNING "*** ${what} SKIPPED: ${why}")
  endif()
  set(${out} "${files}" PARENT_SCOPE)
endfunction()

# sprawling_testsuite_3_root(OUT FILES...): sets OUT to the 3.0 suite's folder when every FILES
# (paths under it, e.g. core/tag.wast) is there, else to "" after one loud line (a configure error
# under SPRAWLING_REQUIRE_TESTSUITE, as for the 2.0 suite).
function(sprawling_testsuite_3_root out)
  foreach(file IN LISTS ARGN)
    if(NOT EXISTS "${SPRAWLING_TESTSUITE_3_DIR}/${file}")
      set(why "no ${file} under ${SPRAWLING_TESTSUITE_3_DIR} (set SPRAWLING_TESTSUITE_3_DIR)")
      if(SPRAWLING_REQUIRE_TESTSUITE OR "$ENV{SPRAWLING_REQUIRE_TESTSUITE}")
        message(FATAL_ERROR "SPRAWLING_REQUIRE_TESTSUITE is on, but ${why}")
      endif()
      message(NOTICE "*** 3.0 SPEC TESTS SKIPPED (spec3.*): ${why}")
      set(${out} "" PARENT_SCOPE)
      return()
    endif()
  endforeach()
  set(${out} "${SPRAWLING_TESTSUITE_3_DIR}" PARENT_SCOPE)
endfunction()
