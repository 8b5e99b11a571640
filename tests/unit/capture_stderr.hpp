// What the code under test writes to stderr (where warnings go), for checking messages.
#pragma once

#include "temp_dir.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>

namespace minirun::testing {

// stderr's output while `body` runs.
inline std::string capture_stderr(const std::function<void()>& body) {
    TempDir tmp;
    std::string path = tmp.path() + "/stderr";
    int file = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    REQUIRE(file >= 0);
    int saved = ::dup(STDERR_FILENO);
    REQUIRE(saved >= 0);
    ::dup2(file, STDERR_FILENO);
    body();
    ::dup2(saved, STDERR_FILENO);
    ::close(saved);
    ::close(file);
    std::ifstream in(path);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

} // namespace minirun::testing
