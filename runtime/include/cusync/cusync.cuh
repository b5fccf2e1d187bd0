// The cusync runtime, all of it: include this from a .cu file.
#pragma once

#include "cusync/tile.h"
#include "cusync/grouped_order.h"
#include "cusync/semaphore.cuh"
#include "cusync/stage_view.cuh"
#include "cusync/typed_stage_view.cuh"
#include "cusync/block_sync.cuh"
#include "cusync/block_tile.cuh"
#include "cusync/output_policy.h"
#include "cusync/error.h"
#include "cusync/stage.cuh"
#include "cusync/wait_kernel.cuh"
#include "cusync/launch.cuh"
#include "cusync/chain_queue.cuh"
#include "cusync/fused_chain.cuh"
#include "cusync/chain_executor.cuh"
