// config.json, structure-aware: each mutation parses the input as JSON, changes one node of
// the tree and writes it back, so that mutants of a valid config stay JSON and reach the
// field rules, the cross-field rules and the planner instead of the JSON parser's first
// error. The keys and values it adds come from dict/config.dict (the spec's keys, the
// values mini-run knows). Input that is not JSON gets libFuzzer's own byte mutations.
#include "config_check.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <vector>

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace {

using Json = nlohmann::json;

struct Words {
    std::vector<std::string> keys;
    std::vector<std::string> values;
};

// The key= and value= entries of the dictionary: "\"hostname\"" -> hostname.
Words read_dictionary() {
    Words words;
    const char* path = std::getenv("MINIRUN_FUZZ_DICT");
    std::ifstream in(path != nullptr ? path : MINIRUN_FUZZ_DIR "/dict/config.dict");
    for (std::string line; std::getline(in, line);) {
        bool key = line.starts_with("key=\"\\\"");
        if (!key && !line.starts_with("value=\"\\\"")) {
            continue;
        }
        size_t begin = line.find("\\\"") + 2;
        size_t end = line.rfind("\\\"");
        if (end != std::string::npos && end > begin) {
            (key ? words.keys : words.values).push_back(line.substr(begin, end - begin));
        }
    }
    if (words.keys.empty() || words.values.empty()) {
        minirun::fuzz::fail("config_json: no key= and value= entries in the dictionary");
    }
    return words;
}

const Words& words() {
    static const Words loaded = read_dictionary();
    return loaded;
}

// Every node of the tree, with its parent (null for the root), in document order.
struct Node {
    Json* value;
    Json* parent;
};

void collect(Json& value, Json* parent, std::vector<Node>& out) {
    out.push_back({&value, parent});
    if (value.is_structured()) {
        for (Json& child : value) {
            collect(child, &value, out);
        }
    }
}

template <typename T>
const T& pick(const std::vector<T>& list, std::mt19937& rng) {
    return list[std::uniform_int_distribution<size_t>(0, list.size() - 1)(rng)];
}

// A value of some type, often one the field does not take, often at a boundary.
Json random_value(std::mt19937& rng) {
    switch (std::uniform_int_distribution<int>(0, 13)(rng)) {
    case 0:
        return nullptr;
    case 1:
        return true;
    case 2:
        return -1;
    case 3:
        return 0;
    case 4:
        return 4294967295U;
    case 5:
        return 4294967296ULL;
    case 6:
        return std::numeric_limits<int64_t>::min();
    case 7:
        return std::numeric_limits<uint64_t>::max();
    case 8:
        return 1.5e300;
    case 9:
        return "";
    case 10:
        return Json::array({pick(words().values, rng)});
    case 11:
        return Json::object({{pick(words().keys, rng), pick(words().values, rng)}});
    case 12:
        return std::string(std::uniform_int_distribution<size_t>(1, 300)(rng), '/');
    default:
        return pick(words().values, rng);
    }
}

// One change to the tree. False when the chosen change did not apply to the chosen node.
bool mutate_tree(Json& root, std::mt19937& rng) {
    std::vector<Node> nodes;
    collect(root, nullptr, nodes);
    const Node& node = pick(nodes, rng);
    Json& value = *node.value;
    switch (std::uniform_int_distribution<int>(0, 6)(rng)) {
    case 0: // replace with another value
        value = random_value(rng);
        return true;
    case 1: { // remove from its parent
        if (node.parent == nullptr) {
            return false;
        }
        Json& parent = *node.parent;
        for (auto it = parent.begin(); it != parent.end(); ++it) {
            if (&*it == &value) {
                parent.erase(it);
                return true;
            }
        }
        return false;
    }
    case 2: // a known key in an object
        if (!value.is_object()) {
            return false;
        }
        value[pick(words().keys, rng)] = random_value(rng);
        return true;
    case 3: // an array one longer: a copy of one of its entries, or a new value
        if (!value.is_array()) {
            return false;
        }
        value.push_back(value.empty()
                            ? random_value(rng)
                            : Json(pick(std::vector<Json>(value.begin(), value.end()), rng)));
        return true;
    case 4: { // a string's bytes through libFuzzer's mutator (which uses the dictionary)
        if (!value.is_string()) {
            return false;
        }
        std::string text = value.get<std::string>();
        size_t max = text.size() * 2 + 16;
        text.resize(max);
        size_t size = LLVMFuzzerMutate(reinterpret_cast<uint8_t*>(text.data()),
                                       value.get_ref<std::string&>().size(), max);
        text.resize(size);
        value = text; // invalid UTF-8 makes dump() below throw: that mutant is dropped
        return true;
    }
    case 5: // a number off by one, negated or doubled
        if (!value.is_number()) {
            return false;
        }
        if (value.is_number_float()) {
            value = -value.get<double>() * 2;
        } else if (value.is_number_unsigned()) {
            value = value.get<uint64_t>() + std::uniform_int_distribution<int>(-1, 1)(rng);
        } else if (int64_t number = value.get<int64_t>();
                   number == std::numeric_limits<int64_t>::min()) {
            value = std::numeric_limits<int64_t>::max();
        } else {
            value = -number - std::uniform_int_distribution<int>(0, 1)(rng);
        }
        return true;
    default: // a subtree copied to another place of the same kind
        if (node.parent == nullptr) {
            return false;
        }
        *pick(nodes, rng).value = Json(value);
        return true;
    }
}

} // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
    Json document = Json::parse(data, data + size, nullptr, false);
    if (document.is_discarded()) {
        return LLVMFuzzerMutate(data, size, max_size);
    }
    std::mt19937 rng(seed);
    int changes = std::uniform_int_distribution<int>(1, 3)(rng);
    for (int done = 0, tries = 0; done < changes && tries < 20; ++tries) {
        done += mutate_tree(document, rng) ? 1 : 0;
    }
    std::string text;
    try {
        text = document.dump(std::uniform_int_distribution<int>(0, 1)(rng) == 0 ? -1 : 2);
    } catch (const Json::exception&) {
        return LLVMFuzzerMutate(data, size, max_size);
    }
    if (text.size() > max_size) {
        return LLVMFuzzerMutate(data, size, max_size);
    }
    std::memcpy(data, text.data(), text.size());
    return text.size();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    minirun::fuzz::check_config_text(minirun::fuzz::text_of(data, size));
    return 0;
}
