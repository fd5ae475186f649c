// What a plan runs, by name (see einsum.h): its kernel family and the microkernel it calls, as
// tools print them (-v, --inspect, the benchmarks).
#include "kernels/einsum/einsum.h"
#include "kernels/gemm_f32/gemm_f32.h"
#include "kernels/half/half.h"

namespace einfer {

const char* einsum_plan_kind_name(const EinsumPlan& plan) {
  switch (plan.kind) {
    case EinsumKernel::generic:
      return "generic";
    case EinsumKernel::gemm:
      return "gemm";
    case EinsumKernel::gemv:
      return "gemv";
    case EinsumKernel::dot:
      return "dot";
    case EinsumKernel::outer:
      return "outer";
    case EinsumKernel::elementwise:
      return "elementwise";
    case EinsumKernel::reduction:
      return "reduction";
    case EinsumKernel::copy:
      return "copy";
    case EinsumKernel::quant_matmul:
      return dtype_is_half(plan.in_dtype[1]) ? "half_matmul" : "quant_matmul";
  }
  return "?";
}

const char* einsum_plan_kernel_name(const EinsumPlan& plan) {
  switch (plan.kind) {
    case EinsumKernel::generic:
      switch (plan.generic_reason) {
        case EinsumGenericReason::f16_operand:
          return "generic_loop_f16";
        case EinsumGenericReason::empty:
          return "generic_loop_empty";
        default:
          return "generic_loop";
      }
    case EinsumKernel::gemm:
    case EinsumKernel::outer:
      return gemm_f32_kernel_name();
    case EinsumKernel::gemv:
      return "gemv_f32";
    case EinsumKernel::dot:
      return "dot_f32";
    case EinsumKernel::elementwise:
      return "mul_f32";
    case EinsumKernel::reduction:
      return "sum_f32";
    case EinsumKernel::copy:
      return "copy_strided";
    case EinsumKernel::quant_matmul:
      return dtype_is_half(plan.in_dtype[1])
                 ? matmul_half_kernel_name(plan.in_dtype[1], plan.layout.mt)
                 : "matmul_quant";
  }
  return "?";
}

}  // namespace einfer
