// mixt-bench: the benchmark suite. Google Benchmark's flags apply, plus
//   --mixt_check       compare every variant with mixt::eval at a small size, print one line per
//                      expression, and exit (0 when all agree)
//   --mixt_sizes=N,..  the sizes to register (default: 4096,262144,16777216)
//   --mixt_rounds=R    register every benchmark R times, the single-threaded variants of an expression at
//                      a size in turn, then mixt_threads (default 1; the report runs R rounds of one
//                      repetition each and takes medians)
// Without --mixt_check the comparison still runs first, silently, and a disagreement stops the program:
// a benchmark of a wrong result is no benchmark.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "config.hpp"
#include "suite.hpp"

namespace {

using namespace mixt_suite;

bool for_each_group(action a, index_t n) {
    bool ok = true;
    for (auto* group : {group_1, group_2, group_3, group_4, stream}) ok = group(a, n) && ok;
    if (a != action::register_benchmarks) {
        ok = shapes(a, n) && ok;
        ok = reductions(a, n) && ok;
        ok = short_rows(a, n) && ok;
        ok = narrow(a, n) && ok;
    }
    return ok;
}

const char* compiler() {
#if defined(__clang__)
    return "clang++ " __clang_version__;
#elif defined(__GNUC__)
    return "g++ " __VERSION__;
#else
    return "unknown";
#endif
}

std::vector<index_t> parse_sizes(const char* text) {
    std::vector<index_t> out;
    for (const char* p = text; *p;) {
        char* end = nullptr;
        const long long v = std::strtoll(p, &end, 10);
        if (end == p || v <= 0) {
            std::fprintf(stderr, "mixt-bench: --mixt_sizes wants positive integers separated by commas: %s\n", text);
            std::exit(2);
        }
        out.push_back(static_cast<index_t>(v));
        p = *end == ',' ? end + 1 : end;
    }
    return out;
}

int parse_rounds(const char* text) {
    char* end = nullptr;
    const long v = std::strtol(text, &end, 10);
    if (end == text || *end != '\0' || v < 1 || v > 1000) {
        std::fprintf(stderr, "mixt-bench: --mixt_rounds wants an integer from 1 to 1000: %s\n", text);
        std::exit(2);
    }
    return static_cast<int>(v);
}

} // namespace

int main(int argc, char** argv) {
    // A line at a time, also into a pipe: report.py shows the run's progress from each benchmark's line.
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    bool check_only = false;
    std::vector<index_t> chosen(std::begin(sizes), std::end(sizes));
    std::vector<char*> rest{argv[0]};
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--mixt_check") == 0)
            check_only = true;
        else if (std::strncmp(argv[i], "--mixt_sizes=", 13) == 0)
            chosen = parse_sizes(argv[i] + 13);
        else if (std::strncmp(argv[i], "--mixt_rounds=", 14) == 0)
            rounds = parse_rounds(argv[i] + 14);
        else
            rest.push_back(argv[i]);
    }

    const bool header_ok = check_bench_header(check_only);
    if (!for_each_group(action::check, check_only ? 1 : 0) || !header_ok) {
        std::fprintf(stderr, "mixt-bench: a variant computes something else than mixt::eval (see above)\n");
        return 1;
    }
    if (check_only) return 0;

    int rest_argc = static_cast<int>(rest.size());
    rest.push_back(nullptr);
    benchmark::Initialize(&rest_argc, rest.data());
    if (benchmark::ReportUnrecognizedArguments(rest_argc, rest.data())) return 2;

    benchmark::AddCustomContext("mixt_compiler", compiler());
    benchmark::AddCustomContext("mixt_flags", MIXT_BENCH_FLAGS);
    benchmark::AddCustomContext("mixt_threads", std::to_string(thread_count()));
    benchmark::AddCustomContext("mixt_rounds", std::to_string(rounds));
    for_each_group(action::describe, 0);
    for (const index_t n : chosen) for_each_group(action::register_benchmarks, n);
    // B1-B6, R1-R6, S1-S5 and Q1-Q5 have their own full sizes: registered once, with the DRAM size (not in smoke runs).
    if (std::find(chosen.begin(), chosen.end(), index_t{16777216}) != chosen.end()) {
        shapes(action::register_benchmarks, 0);
        reductions(action::register_benchmarks, 0);
        short_rows(action::register_benchmarks, 0);
        narrow(action::register_benchmarks, 0);
    }

    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
