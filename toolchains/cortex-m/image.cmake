# einfer_bare_metal_image(<target>): turn an executable target into a bootable Cortex-M4F image
# for QEMU mps2-an386 — our startup code and linker script, newlib with rdimon semihosting
# (printf/exit reach the host), no crt0 (startup.c is the entry point).
set(EINFER_CORTEX_M_DIR ${CMAKE_CURRENT_LIST_DIR})

function(einfer_bare_metal_image target)
  target_sources(${target} PRIVATE ${EINFER_CORTEX_M_DIR}/startup.c)
  target_link_options(${target} PRIVATE
    -nostartfiles --specs=rdimon.specs
    -T${EINFER_CORTEX_M_DIR}/mps2-an386.ld
    -Wl,-Map=$<TARGET_FILE:${target}>.map)
  set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS ${EINFER_CORTEX_M_DIR}/mps2-an386.ld)
endfunction()
