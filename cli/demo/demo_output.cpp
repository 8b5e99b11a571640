// The demo's output: headings and facts on stdout, with colour when it is a terminal
// (demo.hpp: Output).
#include "demo.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>

namespace minirun::cli::demo {

// ---------------------------------------------------------------------------------------
// Output

Output::Output() {
    const char* no_colour = std::getenv("NO_COLOR");
    colour_ = ::isatty(STDOUT_FILENO) == 1 && (no_colour == nullptr || *no_colour == '\0');
}

std::string Output::paint(std::string_view code, std::string_view text) const {
    if (!colour_) {
        return std::string(text);
    }
    return cat("\033[", code, "m", text, "\033[0m");
}

void Output::heading(std::string_view title) const {
    std::cout << "\n" << paint("1;34", cat("== ", title, " ==")) << "\n" << std::flush;
}

void Output::text(std::string_view paragraph) const {
    for (const auto& line : lines_of(paragraph)) {
        std::cout << "  " << line << "\n";
    }
    std::cout << std::flush;
}

void Output::field(std::string_view label, std::string_view value) const {
    std::string padded(label);
    padded.resize(std::max<size_t>(padded.size(), 9), ' ');
    std::cout << "  " << paint("1", padded) << " " << value << "\n" << std::flush;
}

void Output::inside(std::string_view what, std::string_view value) const {
    std::cout << "  " << paint("36", "inside") << "  " << what << ": " << value << "\n"
              << std::flush;
}

void Output::host(std::string_view what, std::string_view value) const {
    std::cout << "  " << paint("33", "host  ") << "  " << what << ": " << value << "\n"
              << std::flush;
}

void Output::command(std::string_view line) const {
    std::cout << "  " << paint("33", "host  ") << "  $ " << line << "\n" << std::flush;
}

void Output::ns_compare(std::string_view name, std::string_view inside,
                        std::string_view host) const {
    bool differs = inside != host;
    std::cout << "  /proc/self/ns/" << name << "  " << paint("36", "inside") << " " << inside
              << "  " << paint("33", "host") << " " << host << "  "
              << paint(differs ? "32" : "31", differs ? "(different)" : "(the same)") << "\n"
              << std::flush;
}

void Output::good(std::string_view fact) const {
    std::cout << "  " << paint("32", "ok") << "      " << fact << "\n" << std::flush;
}

void Output::bad(std::string_view fact) const {
    std::cout << "  " << paint("1;31", "UNEXPECTED") << " " << fact << "\n" << std::flush;
}

void Output::note(std::string_view text) const {
    std::cout << "  " << paint("2", text) << "\n" << std::flush;
}

} // namespace minirun::cli::demo
