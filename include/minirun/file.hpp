// Reading a whole file: the one file system helper a front end needs (`exec --process`,
// `update --resources`). The runtime's own helpers are in src/fs.hpp, which includes this.
#pragma once

#include "minirun/error.hpp"

#include <string>

namespace minirun::fs {

Result<std::string> read_file(const std::string& path);

} // namespace minirun::fs
