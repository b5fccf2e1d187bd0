// The tile orders the MLP examples try for their GEMM stages (--orders): rows taken `groupRows` at a time, column by
// column inside a group (grouped_order.h; 1 = row-major, 0 = column-major, i.e. all rows in one group).
// Words: row, col, gN (groups of N rows), or P:C for different producer (first GEMM) and consumer (second GEMM)
// orders, e.g. g8:row. Host header.
#pragma once

#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/command_line_numbers.h"
#include "cusync/grouped_order.h"
#include "cusync/stage.cuh"
#include "cluster_group_order.h"

namespace cusync::examples {

struct TileOrders {
  std::uint32_t producerGroupRows = 1, consumerGroupRows = 1;
  std::string text = "row";  // as given on the command line

  static std::uint32_t parseOne(const std::string& word, const std::string& program) {
    if (word == "row") return 1;
    if (word == "col") return 0;
    if (word.size() > 1 && word[0] == 'g') {
      if (const auto rows = parseIntegerInRange(word.substr(1), 1, INT_MAX)) return std::uint32_t(*rows);
    }
    std::fprintf(stderr, "%s: unknown tile order '%s' (row, col, gN or P:C)\n", program.c_str(), word.c_str());
    std::exit(2);
  }
  static TileOrders parse(const std::string& text, const std::string& program) {
    const auto colon = text.find(':');
    TileOrders orders;
    orders.text = text;
    orders.producerGroupRows = parseOne(text.substr(0, colon), program);
    orders.consumerGroupRows =
        colon == std::string::npos ? orders.producerGroupRows : parseOne(text.substr(colon + 1), program);
    return orders;
  }
  // Every --orders entry, parsed once before any GPU work: a bad word stops the program up front.
  static std::vector<TileOrders> parseList(const std::vector<std::string>& texts, const std::string& program) {
    std::vector<TileOrders> list;
    for (const std::string& text : texts) list.push_back(parse(text, program));
    return list;
  }
  std::string label() const { return text == "row" ? std::string() : "_" + text; }

  // For a kernel in clusters of `clusterRows` tile rows (GemmKernelEntry::clusterRows) the order is over the cluster
  // grid (cluster_group_order.h), each cluster's tiles consecutive (Stage::setClusterTileOrderBy).
  static void apply(Stage& stage, std::uint32_t groupRows, std::uint32_t clusterRows = 1) {
    if (clusterRows > 1) {
      stage.setClusterTileOrderBy(clusterRows, [groupRows, clusterRows](TileCoord cluster, GridShape clusters) {
        return clusterGroupedOrderIndex(cluster, clusters, groupRows, clusterRows);
      });
      return;
    }
    if (groupRows == 1) return;  // the stage's default order
    stage.setGroupedTileOrder(groupRows == 0 ? stage.grid().y : groupRows);
  }
};

}  // namespace cusync::examples
