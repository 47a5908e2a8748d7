# sprawling_wasi_guest(TARGET NAME SOURCES c-files... [FLAGS ...]): compiles C guests to
# wasm32-wasi with Debian's clang-14 + wasi-libc, against a private sysroot that holds only
# wasi-libc (--sysroot=/usr would let host glibc headers leak in). The .wasm lands in
# ${CMAKE_CURRENT_BINARY_DIR}/NAME.wasm; TARGET is a custom target that builds it.
find_program(SPRAWLING_WASI_CC NAMES clang-14 REQUIRED)
set(SPRAWLING_WASI_SYSROOT ${PROJECT_BINARY_DIR}/wasi-sysroot)
if(NOT EXISTS ${SPRAWLING_WASI_SYSROOT}/include/wasm32-wasi)
  file(MAKE_DIRECTORY ${SPRAWLING_WASI_SYSROOT}/include ${SPRAWLING_WASI_SYSROOT}/lib)
  file(CREATE_LINK /usr/include/wasm32-wasi ${SPRAWLING_WASI_SYSROOT}/include/wasm32-wasi SYMBOLIC)
  file(CREATE_LINK /usr/lib/wasm32-wasi ${SPRAWLING_WASI_SYSROOT}/lib/wasm32-wasi SYMBOLIC)
endif()

function(sprawling_wasi_guest target name)
  cmake_parse_arguments(ARG "" "" "SOURCES;FLAGS" ${ARGN})
  set(out ${CMAKE_CURRENT_BINARY_DIR}/${name}.wasm)
  add_custom_command(OUTPUT ${out}
    COMMAND ${SPRAWLING_WASI_CC} --target=wasm32-wasi --sysroot=${SPRAWLING_WASI_SYSROOT} -O2 -Wall ${SPRAWLING_WERROR_FLAG}
            ${ARG_FLAGS} ${ARG_SOURCES} -o ${out}
    DEPENDS ${ARG_SOURCES}
    WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}
    COMMENT "wasm32-wasi guest ${name}.wasm"
    VERBATIM)
  add_custom_target(${target} ALL DEPENDS ${out})
endfunction()
