# einfer_bare_metal_image(<target>): turn an executable target into a bootable Cortex-M image for
# the QEMU board the toolchain names (EINFER_CORTEX_M_BOARD: mps2-an386 for the Cortex-M4F,
# mps3-an547 for the Cortex-M55) — our startup code and the board's linker script (<board>.ld
# here, which includes test-image-sections.ld), newlib with rdimon semihosting (printf/exit reach
# the host), no crt0 (startup.c is the entry point).
set(EINFER_CORTEX_M_DIR ${CMAKE_CURRENT_LIST_DIR})
if(NOT EINFER_CORTEX_M_BOARD)
  set(EINFER_CORTEX_M_BOARD mps2-an386)
endif()
if(NOT EXISTS ${EINFER_CORTEX_M_DIR}/${EINFER_CORTEX_M_BOARD}.ld)
  message(FATAL_ERROR "no linker script ${EINFER_CORTEX_M_DIR}/${EINFER_CORTEX_M_BOARD}.ld for "
                      "EINFER_CORTEX_M_BOARD=${EINFER_CORTEX_M_BOARD}")
endif()

function(einfer_bare_metal_image target)
  set(script ${EINFER_CORTEX_M_DIR}/${EINFER_CORTEX_M_BOARD}.ld)
  target_sources(${target} PRIVATE ${EINFER_CORTEX_M_DIR}/startup.c)
  target_link_options(${target} PRIVATE
    -nostartfiles --specs=rdimon.specs
    -L${EINFER_CORTEX_M_DIR} -T${script}
    -Wl,-Map=$<TARGET_FILE:${target}>.map)
  set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS ${script}
                                                  ${EINFER_CORTEX_M_DIR}/test-image-sections.ld)
endfunction()
