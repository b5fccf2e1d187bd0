// Must NOT compile: a BlockTile made from an untyped StageView knows no output policy, so post() is refused at
// compile time instead of posting under a policy the host never checked. tests/runtime/CMakeLists.txt expects
// nvcc's static_assert message.
#include <cusync/cusync.cuh>

__global__ void postsWithoutPolicy(cusync::StageView stage) {
  cusync::BlockTile t(stage);
  t.post();
}
