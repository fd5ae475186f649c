// The kernel table of one instruction set level. Compiled only as part of a level's object set
// (cmake/isa.cmake), with that level's flags, EINFER_ISA_LEVEL (its name) and EINFER_ISA_TABLE
// (the C symbol the table is exported as). The level's C++ symbols are then given a per-level
// suffix (cmake/isa_rename.cmake), so the addresses taken here are this level's own bodies.
#include "kernels/isa/kernel_table.h"

namespace einfer {

#define EINFER_KERNEL_TABLE_ENTRY(ret, name, params, args) , static_cast<ret(*) params>(&name)

extern "C" const KernelTable EINFER_ISA_TABLE = {
    EINFER_ISA_LEVEL EINFER_DISPATCHED_KERNELS(EINFER_KERNEL_TABLE_ENTRY)};

}  // namespace einfer
