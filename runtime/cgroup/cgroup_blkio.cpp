// The block I/O controller, blkio on v1 and io on v2: weights (CFQ's or BFQ's) and
// per-device throttles, and their statistics.
//
//   v1  blkio.weight or blkio.bfq.weight, blkio.leaf_weight, blkio.weight_device (or
//       blkio.bfq.weight_device), blkio.leaf_weight_device, blkio.throttle.{read,write}_
//       {bps,iops}_device (runc's libcontainer/cgroups/fs/blkio.go)
//   v2  io.weight (converted range) or io.bfq.weight (as given), io.max
//       "MAJ:MIN rbps=|wbps=|riops=|wiops=" (runc's libcontainer/cgroups/fs2/io.go)
#include "cgroup/cgroup_files.hpp"
#include "cgroup/controllers.hpp"
#include "fs.hpp"
#include "minirun/log.hpp"

#include <algorithm>

namespace minirun::runtime::cgroup {

uint64_t blkio_weight_to_io_weight(uint64_t weight) {
    if (weight == 0) {
        return 0;
    }
    weight = std::clamp<uint64_t>(weight, 10, 1000);
    return 1 + (weight - 10) * 9999 / 990;
}

namespace controllers {
namespace {

using files::exists;
using files::parse_uint;
using files::set_nonzero;
using files::write;
using files::write_supported;

std::string device(int64_t major, int64_t minor) {
    return cat(major, ":", minor);
}

Status throttle_v1(const std::string& dir, const std::string& name,
                   const std::vector<spec::BlockIoDeviceThrottle>& devices) {
    for (const auto& entry : devices) {
        MR_TRY(write(dir, name, cat(device(entry.major, entry.minor), " ", entry.rate)));
    }
    return {};
}

Status throttle_v2(const std::string& dir, const std::vector<spec::BlockIoDeviceThrottle>& devices,
                   const char* key) {
    for (const auto& entry : devices) {
        // v1 takes rate 0 as "remove the limit"; io.max refuses 0 and says "max".
        std::string rate = entry.rate == 0 ? std::string("max") : cat(entry.rate);
        MR_TRY(write(dir, "io.max", cat(entry.major, ":", entry.minor, " ", key, "=", rate)));
    }
    return {};
}

// v1's weights: the whole cgroup's, then each device's.
Status weights_v1(const std::string& dir, const spec::BlockIoResources& block_io) {
    // Under BFQ the weights are blkio.bfq.*; blkio.weight is CFQ's (gone since Linux 5.0).
    // runc picks BFQ's where both exist.
    bool bfq = exists(dir, "blkio.bfq.weight");
    std::string weight_file = bfq ? "blkio.bfq.weight" : "blkio.weight";
    std::string weight_device_file = bfq ? "blkio.bfq.weight_device" : "blkio.weight_device";
    if (block_io.weight && *block_io.weight != 0) {
        MR_TRY(write_supported(dir, weight_file, cat(*block_io.weight),
                               "linux.resources.blockIO.weight"));
    }
    if (block_io.leaf_weight && *block_io.leaf_weight != 0) {
        MR_TRY(write_supported(dir, "blkio.leaf_weight", cat(*block_io.leaf_weight),
                               "linux.resources.blockIO.leafWeight"));
    }
    for (const auto& entry : block_io.weight_device) {
        std::string where = device(entry.major, entry.minor);
        if (entry.weight && *entry.weight != 0) {
            MR_TRY(write_supported(dir, weight_device_file, cat(where, " ", *entry.weight),
                                   "linux.resources.blockIO.weightDevice.weight"));
        }
        if (entry.leaf_weight && *entry.leaf_weight != 0) {
            MR_TRY(write_supported(dir, "blkio.leaf_weight_device",
                                   cat(where, " ", *entry.leaf_weight),
                                   "linux.resources.blockIO.weightDevice.leafWeight"));
        }
    }
    return {};
}

// blkio.*_recursive: "8:0 Read 4096" lines, and a "Total N" line that runc skips.
nlohmann::json blkio_entries(const std::string& dir, const std::string& name) {
    nlohmann::json entries = nlohmann::json::array();
    auto text = files::read(dir, name);
    if (!text) {
        return entries;
    }
    for (std::string_view line : fs::split(*text, '\n')) {
        auto fields = fs::split(line, ' ');
        if (fields.size() < 2 || fields[0] == "Total") {
            continue;
        }
        auto numbers_of = fs::split(fields[0], ':');
        if (numbers_of.size() != 2) {
            continue;
        }
        uint64_t major = 0;
        uint64_t minor = 0;
        uint64_t value = 0;
        if (!parse_uint(numbers_of[0], major) || !parse_uint(numbers_of[1], minor) ||
            !parse_uint(fields.back(), value)) {
            continue;
        }
        nlohmann::json entry = nlohmann::json::object();
        set_nonzero(entry, "major", major);
        set_nonzero(entry, "minor", minor);
        set_nonzero(entry, "value", value);
        if (fields.size() == 3) {
            entry["op"] = std::string(fields[1]);
        }
        entries.push_back(std::move(entry));
    }
    return entries;
}

// One io.stat line, "8:0 rbytes=1 wbytes=2 rios=3 wios=4 dbytes=0 dios=0", into v1's shape:
// bytes and operations, "Read" and "Write".
void io_stat_line(std::string_view line, nlohmann::json& bytes, nlohmann::json& ios) {
    auto fields = fs::split(line, ' ');
    auto numbers = fs::split(fields[0], ':');
    uint64_t major = 0;
    uint64_t minor = 0;
    if (numbers.size() != 2 || !parse_uint(numbers[0], major) || !parse_uint(numbers[1], minor)) {
        return;
    }
    for (size_t i = 1; i < fields.size(); ++i) {
        size_t equals = fields[i].find('=');
        uint64_t value = 0;
        if (equals == std::string_view::npos || !parse_uint(fields[i].substr(equals + 1), value)) {
            continue;
        }
        std::string_view key = fields[i].substr(0, equals);
        nlohmann::json* table = key == "rbytes" || key == "wbytes" ? &bytes
                                : key == "rios" || key == "wios"   ? &ios
                                                                   : nullptr;
        if (table == nullptr) {
            continue;
        }
        nlohmann::json entry = {{"op", key.starts_with('r') ? "Read" : "Write"}};
        set_nonzero(entry, "major", major);
        set_nonzero(entry, "minor", minor);
        set_nonzero(entry, "value", value);
        table->push_back(std::move(entry));
    }
}

} // namespace

bool blkio_wanted(const spec::Resources& resources) {
    const auto& block_io = resources.block_io;
    return block_io &&
           (block_io->weight || block_io->leaf_weight || !block_io->weight_device.empty() ||
            !block_io->throttle_read_bps_device.empty() ||
            !block_io->throttle_write_bps_device.empty() ||
            !block_io->throttle_read_iops_device.empty() ||
            !block_io->throttle_write_iops_device.empty());
}

Status blkio_v1(const std::string& dir, const Request& request) {
    const spec::BlockIoResources& block_io = *request.resources.block_io;
    MR_TRY(weights_v1(dir, block_io));
    MR_TRY(throttle_v1(dir, "blkio.throttle.read_bps_device", block_io.throttle_read_bps_device));
    MR_TRY(throttle_v1(dir, "blkio.throttle.write_bps_device", block_io.throttle_write_bps_device));
    MR_TRY(throttle_v1(dir, "blkio.throttle.read_iops_device", block_io.throttle_read_iops_device));
    MR_TRY(
        throttle_v1(dir, "blkio.throttle.write_iops_device", block_io.throttle_write_iops_device));
    return {};
}

Status io_v2(const std::string& dir, const Request& request) {
    const spec::BlockIoResources& block_io = *request.resources.block_io;
    // With the BFQ scheduler io.bfq.weight takes the blkio weights as they are (and is
    // the only per-device one that works); io.weight wants the converted range.
    bool bfq = exists(dir, "io.bfq.weight");
    auto weight_value = [&](uint16_t weight) {
        return bfq ? uint64_t{weight} : blkio_weight_to_io_weight(weight);
    };
    std::string weight_file = bfq ? "io.bfq.weight" : "io.weight";
    if (block_io.weight && *block_io.weight != 0) {
        MR_TRY(write(dir, weight_file, cat("default ", weight_value(*block_io.weight))));
    }
    if (block_io.leaf_weight) {
        log::debug("cgroup v2 has no leaf weights: blockIO.leafWeight is ignored");
    }
    for (const auto& entry : block_io.weight_device) {
        if (entry.weight && *entry.weight != 0) {
            MR_TRY(write(dir, weight_file,
                         cat(entry.major, ":", entry.minor, " ", weight_value(*entry.weight))));
        }
    }
    MR_TRY(throttle_v2(dir, block_io.throttle_read_bps_device, "rbps"));
    MR_TRY(throttle_v2(dir, block_io.throttle_write_bps_device, "wbps"));
    MR_TRY(throttle_v2(dir, block_io.throttle_read_iops_device, "riops"));
    MR_TRY(throttle_v2(dir, block_io.throttle_write_iops_device, "wiops"));
    return {};
}

void blkio_stats_v1(const std::string& dir, nlohmann::json& out) {
    // BFQ's counters where the BFQ scheduler is in use, the throttling layer's otherwise
    // (it sees every request, whatever the scheduler).
    std::string prefix =
        exists(dir, "blkio.bfq.io_service_bytes_recursive") ? "blkio.bfq." : "blkio.throttle.";
    if (auto bytes = blkio_entries(dir, prefix + "io_service_bytes_recursive"); !bytes.empty()) {
        out["ioServiceBytesRecursive"] = bytes;
    }
    if (auto ios = blkio_entries(dir, prefix + "io_serviced_recursive"); !ios.empty()) {
        out["ioServicedRecursive"] = ios;
    }
}

void io_stats_v2(const std::string& dir, nlohmann::json& out) {
    auto text = files::read(dir, "io.stat");
    if (!text) {
        return;
    }
    nlohmann::json bytes = nlohmann::json::array();
    nlohmann::json ios = nlohmann::json::array();
    for (std::string_view line : fs::split(*text, '\n')) {
        io_stat_line(line, bytes, ios);
    }
    if (!bytes.empty()) {
        out["ioServiceBytesRecursive"] = bytes;
    }
    if (!ios.empty()) {
        out["ioServicedRecursive"] = ios;
    }
}

} // namespace controllers
} // namespace minirun::runtime::cgroup
