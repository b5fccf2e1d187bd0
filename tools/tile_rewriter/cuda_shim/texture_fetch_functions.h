// Intentionally empty. CUDA 13 removed texture_fetch_functions.h, but Clang 19's CUDA wrapper
// (__clang_cuda_runtime_wrapper.h) still includes it. cusync-tile-rewriter puts this directory on the include path
// with -idirafter, so it is only found when the CUDA toolkit does not provide the header itself.
// For manual parsing: clang-19 -fsyntax-only -x cuda --cuda-path=/usr/local/cuda --cuda-gpu-arch=sm_90
//   --cuda-device-only -Wno-unknown-cuda-version -idirafter tools/tile_rewriter/cuda_shim kernel.cu
