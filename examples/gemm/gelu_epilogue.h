// The GELU of CUTLASS epilogues (every GELU GEMM here: hooked, fused chain, stock, Stream-K, sm_80), the form
// cusync/gelu.cuh chooses: CUTLASS's GELU_taylor (tanh.approx) by default, GELU (erff) with CUSYNC_GELU_ERF. Needs
// CUTLASS.
#pragma once

#include <type_traits>

#include <cutlass/epilogue/thread/activation.h>

#include "cusync/gelu.cuh"

namespace cusync::examples {

template <class T>
using GeluEpilogueFn = std::conditional_t<kGeluTanh, cutlass::epilogue::thread::GELU_taylor<T>,
                                          cutlass::epilogue::thread::GELU<T>>;

}  // namespace cusync::examples
