// The inline namespace that keeps a GEMM built from the rewritten mainloop (`#pragma tile` loads reordered by
// cusync-tile-rewriter) distinct from the one built as written: the rewritten header defines the same templates
// with a different body, so each build puts them in its own namespace (CUSYNC_LOAD_ORDER_NAMESPACE), and the two
// kernels can live in one program without colliding. Device and host.
#pragma once

#ifndef CUSYNC_LOAD_ORDER_NAMESPACE
#define CUSYNC_LOAD_ORDER_NAMESPACE loads_as_written
#endif
