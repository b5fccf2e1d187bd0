// cusync-tile-rewriter: reorders the tile loads annotated with `#pragma tile` in a CUDA source so that the loads
// that need no wait are issued before those that wait on a producer (the cuSync paper's "R" optimization).
//
//   cusync-tile-rewriter kernel.cu -o build/kernel.cu [--line-directives] [--wait-function=NAME ...]
//                        [--pure-function=NAME ...] [--args-only-function=NAME ...] [--ignore-errors-in-headers]
//                        [--werror] [--depfile=FILE] [-- <clang arguments>]
//
// The source is parsed by Clang as CUDA device code for --cuda-gpu-arch (sm_90 by default) against the toolkit at
// --cuda-path; arguments after `--` (-I, -D, -std, ...) go to Clang. Exit status: 0 when the output was written
// (warnings about loads that could not move included), 1 when the input could not be parsed or --werror found a
// warning (nothing is written then), 2 for a command-line error.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "clang/Tooling/CompilationDatabase.h"
#include "clang/Tooling/Tooling.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include "cuda_shim.h"
#include "rewriter_options.h"
#include "tile_rewrite_action.h"

namespace {

using namespace llvm;

cl::OptionCategory category("cusync-tile-rewriter options");
cl::opt<std::string> inputPath(cl::Positional, cl::desc("<kernel source>"), cl::Required, cl::cat(category));
cl::opt<std::string> outputPath("o", cl::desc("Write the rewritten source here (default: standard output)"),
                                cl::value_desc("file"), cl::init("-"), cl::cat(category));
cl::list<std::string> waitFunctions(
    "wait-function", cl::desc("A call to a function or method of this name makes its statement a waiting load "
                              "(repeatable; replaces the defaults: 'wait' and the cusync runtime's 'blockWait', "
                              "'waitThread', 'waitThreadCached', 'spinUntilReached')"),
    cl::value_desc("name"), cl::cat(category));
cl::list<std::string> pureFunctions(
    "pure-function", cl::desc("Treat calls to this function as reading only their argument values (repeatable)"),
    cl::value_desc("name"), cl::cat(category));
cl::list<std::string> argsOnlyFunctions(
    "args-only-function",
    cl::desc("Treat calls to this function as accessing memory only through their pointer and reference arguments "
             "(repeatable)"),
    cl::value_desc("name"), cl::cat(category));
cl::opt<bool> lineDirectives("line-directives",
                             cl::desc("When loads move, emit #line directives naming the original source"),
                             cl::cat(category));
cl::opt<std::string> lineDirectivePath("line-directive-path",
                                       cl::desc("File name for #line directives (default: the input path as given)"),
                                       cl::value_desc("path"), cl::cat(category));
cl::opt<std::string> cudaPath("cuda-path", cl::desc("CUDA toolkit to parse against (default: $CUDA_PATH or "
                                                    "/usr/local/cuda)"),
                              cl::value_desc("dir"), cl::cat(category));
cl::opt<std::string> gpuArch("cuda-gpu-arch", cl::desc("GPU architecture of the device compilation"),
                             cl::init("sm_90"), cl::cat(category));
cl::opt<std::string> resourceDir("resource-dir", cl::desc("Clang resource directory (builtin and CUDA wrapper headers)"),
                                 cl::init(CUSYNC_CLANG_RESOURCE_DIR), cl::value_desc("dir"), cl::cat(category));
cl::opt<std::string> depfilePath("depfile", cl::desc("Write a Makefile dependency file for the output"),
                                 cl::value_desc("file"), cl::cat(category));
cl::opt<bool> ignoreErrorsInHeaders(
    "ignore-errors-in-headers",
    cl::desc("Rewrite even if Clang reports (non-fatal) errors in included files, e.g. constructs only nvcc "
             "accepts; calls into functions Clang could not parse are treated as barriers"),
    cl::cat(category));
cl::opt<bool> warningsAreErrors("werror", cl::desc("Fail (exit 1, write nothing) if the rewriter warns"),
                                cl::cat(category));

const char* kToolName = "cusync-tile-rewriter";

void removeStaleOutput() {
  if (outputPath != "-") llvm::sys::fs::remove(outputPath);
}

bool writeFile(const std::string& path, const std::string& contents) {
  const std::string temporary = path + ".partial";
  std::error_code error;
  if (llvm::StringRef parent = llvm::sys::path::parent_path(path); !parent.empty())
    error = llvm::sys::fs::create_directories(parent);
  if (error) {
    llvm::errs() << kToolName << ": error: cannot create the directory of '" << path << "': " << error.message() << "\n";
    return false;
  }
  {
    llvm::raw_fd_ostream stream(temporary, error);
    if (error) {
      llvm::errs() << kToolName << ": error: cannot write '" << temporary << "': " << error.message() << "\n";
      return false;
    }
    stream << contents;
  }
  if ((error = llvm::sys::fs::rename(temporary, path))) {
    llvm::errs() << kToolName << ": error: cannot write '" << path << "': " << error.message() << "\n";
    return false;
  }
  return true;
}

std::string escapeForMake(const std::string& path) {
  std::string escaped;
  for (char c : path) {
    if (c == ' ' || c == '#') escaped += '\\';
    if (c == '$') escaped += '$';
    escaped += c;
  }
  return escaped;
}

std::string defaultCudaPath() {
  if (const char* fromEnvironment = std::getenv("CUDA_PATH"); fromEnvironment && *fromEnvironment)
    return fromEnvironment;
  return "/usr/local/cuda";
}

// Splits the command line at `--`: what comes before is the tool's, what comes after goes to Clang.
void splitCommandLine(int argc, const char** argv, std::vector<const char*>& toolArguments,
                      std::vector<std::string>& clangArguments) {
  bool afterSeparator = false;
  for (int i = 0; i < argc; ++i) {
    if (!afterSeparator && std::string(argv[i]) == "--") {
      afterSeparator = true;
      continue;
    }
    if (afterSeparator) clangArguments.push_back(argv[i]);
    else toolArguments.push_back(argv[i]);
  }
}

// Checks the options that Clang would otherwise report less clearly; prints the error and returns false.
bool checkOptions() {
  if (!llvm::sys::fs::exists(inputPath)) {
    llvm::errs() << kToolName << ": error: no such file: '" << inputPath << "'\n";
    return false;
  }
  if (!llvm::sys::fs::is_directory(resourceDir)) {
    llvm::errs() << kToolName << ": error: Clang resource directory '" << resourceDir
                 << "' not found; pass --resource-dir=$(clang-19 -print-resource-dir)\n";
    return false;
  }
  if (!depfilePath.empty() && outputPath == "-") {
    llvm::errs() << kToolName << ": error: --depfile needs -o\n";
    return false;
  }
  return true;
}

// The Clang command line: CUDA device compilation of the source only (one compiler job). The CUDA 13 shim is
// searched after every other include directory, so a toolkit that still has texture_fetch_functions.h uses its own.
std::vector<std::string> clangCommandLine(const std::string& shimDirectory, const std::vector<std::string>& extra) {
  const std::string toolkit = cudaPath.empty() ? defaultCudaPath() : std::string(cudaPath);
  std::vector<std::string> arguments = {
      "-xcuda",
      "--cuda-path=" + toolkit,
      "--cuda-gpu-arch=" + gpuArch,
      "--cuda-device-only",
      "-std=c++20",
      "-resource-dir=" + std::string(resourceDir),
      "-idirafter",
      shimDirectory,
      "-Wno-unknown-cuda-version",
      "-Wno-pragma-once-outside-header",
      "-DCUSYNC_TILE_REWRITER=1",
  };
  // CUDA 13 moved libcu++/CCCL (cuda/std/..., cub, thrust) to include/cccl, which nvcc searches implicitly.
  if (llvm::sys::fs::is_directory(toolkit + "/include/cccl")) {
    arguments.push_back("-isystem");
    arguments.push_back(toolkit + "/include/cccl");
  }
  arguments.insert(arguments.end(), extra.begin(), extra.end());
  return arguments;
}

// Writes a Makefile rule `output: dependencies`, only when it changes: build systems that fold depfiles into their
// own dependency state (CMake's Makefile generator) would otherwise re-run the rewrite on every build. The shim lives
// in a temporary directory that is gone after this run: not a dependency.
bool writeDepfile(const std::vector<std::string>& dependencies, const std::string& shimDirectory) {
  std::string rule = escapeForMake(outputPath) + ":";
  for (const std::string& dependency : dependencies)
    if (llvm::sys::fs::exists(dependency) && !llvm::StringRef(dependency).starts_with(shimDirectory))
      rule += " \\\n  " + escapeForMake(dependency);
  rule += "\n";
  auto previous = llvm::MemoryBuffer::getFile(depfilePath);
  return (previous && (*previous)->getBuffer() == rule) || writeFile(depfilePath, rule);
}

}  // namespace

int main(int argc, const char** argv) {
  std::vector<const char*> toolArguments;
  std::vector<std::string> clangArguments;
  splitCommandLine(argc, argv, toolArguments, clangArguments);
  cl::HideUnrelatedOptions(category);
  if (!cl::ParseCommandLineOptions(int(toolArguments.size()), toolArguments.data(),
                                   "Reorders #pragma tile loads so that loads without a wait come first\n",
                                   &llvm::errs()))
    return 2;
  if (!checkOptions()) {
    removeStaleOutput();
    return 2;
  }

  cusync::tile_rewriter::RewriterOptions options;
  if (!waitFunctions.empty()) options.waitFunctions = {waitFunctions.begin(), waitFunctions.end()};
  options.pureFunctions = {pureFunctions.begin(), pureFunctions.end()};
  options.argsOnlyFunctions = {argsOnlyFunctions.begin(), argsOnlyFunctions.end()};
  cusync::tile_rewriter::LineDirectiveOptions lines;
  lines.enabled = lineDirectives;
  lines.originalPath = lineDirectivePath.empty() ? std::string(inputPath) : std::string(lineDirectivePath);

  cusync::tile_rewriter::CudaShimDirectory shim;
  if (!shim.ok()) {
    llvm::errs() << kToolName << ": error: cannot create a temporary directory for the CUDA header shim\n";
    removeStaleOutput();
    return 1;
  }
  clang::tooling::FixedCompilationDatabase database(".", clangCommandLine(shim.path(), clangArguments));
  clang::tooling::ClangTool tool(database, {inputPath});
  cusync::tile_rewriter::ParseErrorCounter errors;
  tool.setDiagnosticConsumer(&errors);
  const cusync::tile_rewriter::ParseErrorPolicy errorPolicy{&errors, ignoreErrorsInHeaders};
  cusync::tile_rewriter::RewriteResult result;
  tool.run(cusync::tile_rewriter::makeTileRewriteActionFactory(options, lines, errorPolicy, result).get());

  if (result.parsed && errors.headerErrors() > 0)
    llvm::errs() << kToolName << ": warning: ignored " << errors.headerErrors()
                 << " error(s) in included files (--ignore-errors-in-headers)\n";
  if (!result.parsed) {
    llvm::errs() << kToolName << ": error: '" << inputPath << "' could not be parsed; nothing was written\n";
    removeStaleOutput();
    return 1;
  }
  if (warningsAreErrors && result.warnings > 0) {
    llvm::errs() << kToolName << ": error: " << result.warnings << " warning(s) with --werror; nothing was written\n";
    removeStaleOutput();
    return 1;
  }
  if (outputPath == "-") llvm::outs() << result.output;
  else if (!writeFile(outputPath, result.output)) return 1;
  if (!depfilePath.empty() && !writeDepfile(result.dependencies, shim.path())) return 1;
  return 0;
}
