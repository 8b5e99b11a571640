// A temporary directory, removed with everything in it when the test ends.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

namespace minirun::testing {

class TempDir {
public:
    TempDir() {
        std::string pattern = (std::filesystem::temp_directory_path() / "minirun-unit.XXXXXX");
        char* made = ::mkdtemp(pattern.data());
        path_ = made != nullptr ? made : "";
        // Resolve symlinks (a /tmp that is a link), since the runtime compares real paths.
        path_ = std::filesystem::canonical(path_).string();
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    ~TempDir() {
        std::error_code ignored;
        std::filesystem::remove_all(path_, ignored);
    }
    [[nodiscard]] const std::string& path() const { return path_; }

private:
    std::string path_;
};

} // namespace minirun::testing
