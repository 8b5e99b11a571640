// What the tests of `mini-run demo` share (demo_test.cpp from the source tree,
// install_test.cpp from an installed binary): reading a demo's output, checking the facts
// each demo prints against the host, and that a demo left nothing behind.
#pragma once

#include "helpers.hpp"

#include <set>
#include <string>
#include <vector>

namespace it::demo {

// The value after "<who>  <what>: " in a demo's output ("inside  echo $$: 1").
std::string fact(const std::string& out, const std::string& who, const std::string& what);

// The host's mount table, as lines.
std::set<std::string> mount_lines();

// Runs demos with TMPDIR pointing at a directory of the test, so that their temporary
// bundles, state roots and rootfs can be checked to be gone. By default `mini-run demo`
// of the build with MINIRUN_SOURCE_DIR set; a `prefix` runs something else with the
// demo's arguments appended (install_test.cpp: the installed binary in a namespace of its
// own), TMPDIR at tmp().
class DemoRun {
public:
    DemoRun();
    explicit DemoRun(std::vector<std::string> prefix);
    [[nodiscard]] const std::string& tmp() const { return tmp_.path(); }
    void set_prefix(std::vector<std::string> prefix) { prefix_ = std::move(prefix); }
    [[nodiscard]] std::vector<std::string> argv(const std::vector<std::string>& args) const;
    RunResult operator()(const std::string& name) const;
    // Everything the demos made is gone: nothing in TMPDIR, no process with the marker, no
    // veth, no new mount that names a demo.
    void check_clean(const std::set<std::string>& mounts_before) const;

private:
    TempDir tmp_{"minirun-it-demo"};
    std::vector<std::string> prefix_;
};

// "/proc/self/ns/NAME  inside X  host Y": X differs from Y, and Y is the test's own link
// unless `host_is_ours` is false (the demo ran in a namespace of its own, install_test.cpp).
void check_ns(const std::string& out, const std::string& name, bool host_is_ours = true);

// Runs one demo and checks the parts every demo has.
RunResult run_demo(const DemoRun& demos, const std::string& name, const std::string& ns);

// The facts of each demo, from its output (alone or within `demo all`'s), against the host.
void check_uts_facts(const std::string& out, const std::string& host_name);
void check_ipc_facts(const std::string& out);
void check_pid_facts(const std::string& out);
// `rootfs_end`: how the path of the demo's rootfs ends.
void check_mount_facts(const std::string& out, const std::string& rootfs_end = "/rootfs");
void check_net_facts(const std::string& out);
void check_user_facts(const std::string& out);
void check_cgroup_facts(const std::string& out);
void check_time_facts(const std::string& out);
// `demo all`: exit 0, no UNEXPECTED, every namespace differs, every demo's heading and
// facts. `not_ours`: namespaces the demo ran in that are not the test's (check_ns).
void check_all(const RunResult& result, const std::string& host_name,
               const std::vector<std::string>& not_ours = {});

std::string host_hostname();

} // namespace it::demo
