#include "mountinfo.hpp"

#include "fs.hpp"

#include <algorithm>
#include <charconv>

namespace minirun::fs {
namespace {

std::string unescape(std::string_view field) {
    if (field.find('\\') == std::string_view::npos) {
        return std::string(field); // the usual case: nothing escaped
    }
    std::string out;
    out.reserve(field.size());
    for (size_t i = 0; i < field.size(); ++i) {
        if (field[i] == '\\' && i + 3 < field.size()) {
            int value = 0;
            auto [end, ec] = std::from_chars(field.data() + i + 1, field.data() + i + 4, value, 8);
            if (ec == std::errc() && end == field.data() + i + 4) {
                out.push_back(static_cast<char>(value));
                i += 3;
                continue;
            }
        }
        out.push_back(field[i]);
    }
    return out;
}

int to_int(std::string_view text) {
    int value = 0;
    std::from_chars(text.data(), text.data() + text.size(), value);
    return value;
}

} // namespace

std::vector<std::string_view> split(std::string_view text, char separator) {
    std::vector<std::string_view> fields;
    size_t pos = 0;
    while (pos <= text.size()) {
        size_t next = text.find(separator, pos);
        if (next == std::string_view::npos) {
            next = text.size();
        }
        fields.push_back(text.substr(pos, next - pos));
        pos = next + 1;
    }
    return fields;
}

std::vector<std::string_view> split_words(std::string_view text) {
    std::vector<std::string_view> words;
    size_t pos = 0;
    while (pos < text.size()) {
        size_t start = text.find_first_not_of(" \t\n", pos);
        if (start == std::string_view::npos) {
            break;
        }
        size_t end = text.find_first_of(" \t\n", start);
        end = end == std::string_view::npos ? text.size() : end;
        words.push_back(text.substr(start, end - start));
        pos = end;
    }
    return words;
}

std::vector<MountInfo> parse_mountinfo(std::string_view text) {
    std::vector<MountInfo> mounts;
    mounts.reserve(static_cast<size_t>(std::count(text.begin(), text.end(), '\n')));
    std::vector<std::string_view> fields; // one line's, its storage kept from line to line
    while (!text.empty()) {
        size_t end = text.find('\n');
        std::string_view line = text.substr(0, end);
        text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
        if (line.empty()) {
            continue;
        }
        fields.clear();
        for (size_t pos = 0; pos <= line.size();) {
            size_t next = std::min(line.find(' ', pos), line.size());
            fields.push_back(line.substr(pos, next - pos));
            pos = next + 1;
        }
        // id parent major:minor root mount-point options [optional...] - type source super
        size_t dash = 6;
        while (dash < fields.size() && fields[dash] != "-") {
            ++dash;
        }
        if (dash + 2 >= fields.size()) {
            continue;
        }
        MountInfo info;
        info.id = to_int(fields[0]);
        info.parent_id = to_int(fields[1]);
        info.root = unescape(fields[3]);
        info.mount_point = unescape(fields[4]);
        info.mount_options = std::string(fields[5]);
        for (size_t i = 6; i < dash; ++i) {
            if (!info.optional.empty()) {
                info.optional += ' ';
            }
            info.optional += fields[i];
        }
        info.fs_type = std::string(fields[dash + 1]);
        info.source = unescape(fields[dash + 2]);
        if (dash + 3 < fields.size()) {
            info.super_options = std::string(fields[dash + 3]);
        }
        mounts.push_back(std::move(info));
    }
    return mounts;
}

Result<std::vector<MountInfo>> read_mountinfo(const std::string& path) {
    MR_ASSIGN(std::string text, read_file(path));
    return parse_mountinfo(text);
}

std::vector<CgroupMembership> parse_proc_cgroup(std::string_view text) {
    std::vector<CgroupMembership> out;
    for (std::string_view line : split(text, '\n')) {
        size_t first = line.find(':');
        size_t second = first == std::string_view::npos ? first : line.find(':', first + 1);
        if (second == std::string_view::npos) {
            continue;
        }
        CgroupMembership membership;
        membership.hierarchy_id = to_int(line.substr(0, first));
        membership.controllers = std::string(line.substr(first + 1, second - first - 1));
        membership.path = std::string(line.substr(second + 1));
        out.push_back(std::move(membership));
    }
    return out;
}

bool has_option(std::string_view options, std::string_view option) {
    for (std::string_view candidate : split(options, ',')) {
        if (candidate == option) {
            return true;
        }
    }
    return false;
}

} // namespace minirun::fs
