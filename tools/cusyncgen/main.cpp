// cusyncgen: checks a cuSync dependency spec with isl and generates its synchronization policies.
#include "driver.h"

#include <exception>
#include <iostream>

int main(int argc, char** argv) {
  std::vector<std::string> arguments(argv + 1, argv + argc);
  try {
    return cusync::cusyncgen::runCusyncgen(arguments, std::cout, std::cerr);
  } catch (const std::exception& error) {
    // A bug, not a spec error: say so rather than crash silently.
    std::cerr << "cusyncgen: internal error: " << error.what() << '\n';
    return 70;
  }
}
