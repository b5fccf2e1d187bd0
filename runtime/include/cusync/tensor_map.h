// TMA descriptors (CUtensorMap) for row-major fp16 matrices, made on the host through the driver entry point the
// CUDA runtime hands out, so that nothing links libcuda directly. Host header.
#pragma once

#include <cstdint>
#include <string>

#include <cuda.h>
#include <cuda_runtime.h>
#include <cudaTypedefs.h>

#include "cusync/error.h"

namespace cusync {

// A descriptor of `rows` x `columns` fp16 elements, row-major at `base` (16-byte aligned, the row pitch a multiple
// of 16 bytes), whose copies move boxes of `boxRows` x `boxColumns` (each at most 256; boxColumns * 2 a multiple of
// 16) into dense shared memory. Elements outside the matrix arrive as zeros.
inline CUtensorMap rowMajorHalfTensorMap(const void* base, std::uint64_t rows, std::uint64_t columns,
                                         std::uint32_t boxRows, std::uint32_t boxColumns) {
  static PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
    void* function = nullptr;
    cudaDriverEntryPointQueryResult found{};
    CUSYNC_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &function, 12000, cudaEnableDefault,
                                                       &found));
    if (found != cudaDriverEntryPointSuccess || function == nullptr)
      throw Error("cusync: the CUDA driver offers no cuTensorMapEncodeTiled (TMA needs sm_90 and CUDA 12)");
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(function);
  }();
  CUtensorMap map{};
  const cuuint64_t dims[2] = {columns, rows};
  const cuuint64_t strides[1] = {columns * 2};  // bytes between rows
  const cuuint32_t box[2] = {boxColumns, boxRows};
  const cuuint32_t elementStrides[2] = {1, 1};
  const CUresult result = encode(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, const_cast<void*>(base), dims, strides, box,
                                 elementStrides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                                 CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (result != CUDA_SUCCESS)
    throw Error("cusync: cuTensorMapEncodeTiled refused a " + std::to_string(rows) + " x " + std::to_string(columns) +
                " fp16 matrix with " + std::to_string(boxRows) + " x " + std::to_string(boxColumns) +
                " boxes (error " + std::to_string(int(result)) + ")");
  return map;
}

}  // namespace cusync
