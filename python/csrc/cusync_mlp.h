/* The C interface of cusync's MLP as one launch (the fused chain of examples/mlp), for foreign callers such as the
 * Python package's ctypes binding (python/cusync/_library.py). C header: no exception, no C++ type crosses it.
 *
 * A plan is one (device, shape, activation, configuration): it owns the stages, semaphores, split-K buffers and
 * chain queue of the fused chain, allocated and zeroed once at creation. cusync_mlp_run only enqueues kernels on the
 * caller's stream (no allocation, no synchronization, no host-side iteration number), so a call can be captured
 * into a CUDA graph and the graph replayed any number of times.
 *
 * Every function but the queries returns a cusync_mlp_status; on failure cusync_mlp_last_error() says why (the
 * message of the last failed call in this thread, valid until the next failed call in this thread).
 *
 * Concurrency: a plan serves one launch at a time. Two runs of one plan must be ordered (one stream, or graphs
 * replayed on one stream); the caller keeps one plan per stream. */
#ifndef CUSYNC_MLP_H
#define CUSYNC_MLP_H

#include <stdint.h>

/* The library is built with hidden visibility: only these functions are its interface. */
#if defined(__GNUC__)
#define CUSYNC_MLP_API __attribute__((visibility("default")))
#else
#define CUSYNC_MLP_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define CUSYNC_MLP_ABI_VERSION 5

typedef enum {
  CUSYNC_MLP_OK = 0,
  CUSYNC_MLP_INVALID_ARGUMENT = 1, /* a shape, pointer, configuration or split the chain cannot run */
  CUSYNC_MLP_NOT_IMPLEMENTED = 2,  /* valid, but not supported (a second device in one process) */
  CUSYNC_MLP_UNSUPPORTED_DEVICE = 3, /* not an sm_90 GPU: the kernels are compiled for sm_90a only */
  CUSYNC_MLP_CAPTURING = 4,        /* plan creation allocates and zeroes memory: not while the stream captures */
  CUSYNC_MLP_CUDA_ERROR = 5,       /* a CUDA call failed (out of memory, launch failure, ...) */
  CUSYNC_MLP_INTERNAL_ERROR = 6
} cusync_mlp_status;

typedef enum {
  /* Y = GELU(X W1^T) W2^T, GELU in the form cusync_mlp_gelu_approximation names; W1 [I, H], W2 [H, I] */
  CUSYNC_MLP_GELU = 0,
  /* Y = (SiLU(X Wg^T) * X Wu^T) W2^T; W1 [2I, H] holds Wg and Wu paired: rows [128g, 128g + 64) are Wg's rows
   * [64g, 64g + 64), rows [128g + 64, 128g + 128) Wu's same rows (I a multiple of 64); W2 [H, I] */
  CUSYNC_MLP_SWIGLU = 1
} cusync_mlp_activation;

typedef struct cusync_mlp_plan cusync_mlp_plan;

CUSYNC_MLP_API int cusync_mlp_abi_version(void);
CUSYNC_MLP_API const char* cusync_mlp_last_error(void);
/* The GELU the library computes, by torch.nn.functional.gelu's name: "tanh" (the tanh approximation, GPT-3's, the
 * default) or "none" (exact, erf; a build with CUSYNC_GELU_ERF). */
CUSYNC_MLP_API const char* cusync_mlp_gelu_approximation(void);

/* The fused-chain configurations of an activation compiled into this library (examples/gemm's CUSYNC_FUSED_CONFIGS
 * for GELU, CUSYNC_SWIGLU_FUSED_CONFIGS for SwiGLU), by name, e.g. "fused_64x128x128_s4_ws". cusync_mlp_config_name
 * returns NULL past the end or for an unknown activation. */
CUSYNC_MLP_API int cusync_mlp_config_count(int activation);
CUSYNC_MLP_API const char* cusync_mlp_config_name(int activation, int index);
CUSYNC_MLP_API int cusync_mlp_config_tile(int activation, const char* config, int* tile_m, int* tile_n, int* tile_k);
/* Blocks of the configuration's kernel that fit on one SM of `device` (0: it does not fit). */
CUSYNC_MLP_API int cusync_mlp_config_blocks_per_sm(int activation, const char* config, int device, int* blocks);

/* Whether `config` reads its weights packed (*packs = 1: the gemv_packed_mma16_p* GEMV chains) rather than as given.
 * Such a configuration's cusync_mlp_run takes, in W1's and W2's place, copies made by cusync_mlp_pack_weights. */
CUSYNC_MLP_API int cusync_mlp_config_packs_weights(int activation, const char* config, int* packs);
/* Bytes of the packed copy of W1 (`which` 1) or W2 (`which` 2) of an MLP with these sizes. */
CUSYNC_MLP_API int cusync_mlp_packed_weight_bytes(int activation, int hidden, int intermediate, int which,
                                                  uint64_t* bytes);
/* Enqueues on `stream` the packing of W1 (`which` 1; for SwiGLU in the paired layout above) or W2 (`which` 2) into
 * `packed` (cusync_mlp_packed_weight_bytes, 16-byte aligned): a read of W and a write of the copy. The copy is the
 * packed configurations' operand until W changes; packing again refreshes it. */
CUSYNC_MLP_API int cusync_mlp_pack_weights(int activation, int hidden, int intermediate, int which, const void* w,
                                           void* packed, void* stream);

/* A plan for X [m, hidden] on `device` with configuration `config`, split-K parts per GEMM (1: none) and tile
 * orders as rows per group (1: row-major, 0: column-major, N: groups of N rows; grouped_order.h). `stream`
 * (a cudaStream_t, may be NULL) is only asked whether it is capturing. */
CUSYNC_MLP_API int cusync_mlp_plan_create(int device, int m, int hidden, int intermediate, int activation,
                                          const char* config, uint32_t first_parts, uint32_t second_parts,
                                          uint32_t producer_group_rows, uint32_t consumer_group_rows, void* stream,
                                          cusync_mlp_plan** plan);

/* How GEMM 2's work units wait for the GEMM-1 tiles they read: whole_unit 0 (the default), k-block by k-block;
 * 1, for their whole k-range before loading any of it. Both are correct; which is faster depends on the shape
 * (python/cusync/data/tuning_table.json, "unit_wait"). Takes effect from the next cusync_mlp_run. */
CUSYNC_MLP_API int cusync_mlp_plan_set_unit_wait(cusync_mlp_plan* plan, int whole_unit);

/* Work units per launch (both GEMMs, all split-K parts) and the blocks of the launch: the fused chain's persistent
 * grid, or for the GEMV chains (a launch per GEMM, not persistent) the larger of their two grids. */
CUSYNC_MLP_API int cusync_mlp_plan_info(const cusync_mlp_plan* plan, uint32_t* work_units,
                                        uint32_t* persistent_blocks);

/* Enqueues Y = act(X W1^T) W2^T on `stream`: fp16, row-major and contiguous, 16-byte aligned; `intermediate` is
 * [m, I] (GELU(X W1^T) or the SwiGLU product, written), `out` [m, hidden]. Returns once enqueued. For a configuration
 * that packs its weights (cusync_mlp_config_packs_weights), w1 and w2 are the packed copies. */
CUSYNC_MLP_API int cusync_mlp_run(cusync_mlp_plan* plan, const void* x, const void* w1, const void* w2,
                                  void* intermediate, void* out, void* stream);

/* Waits for the device, then frees the plan's memory. The plan must not be in a graph that is still replayed. */
CUSYNC_MLP_API int cusync_mlp_plan_destroy(cusync_mlp_plan* plan);

#ifdef __cplusplus
}
#endif

#endif /* CUSYNC_MLP_H */
