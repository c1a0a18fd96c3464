// run_in_pieces (eval/pool.hpp): every index of [0, items) in exactly one piece, pieces in multiples of the
// granule but the last, the calling thread alone for one thread or one piece, and a piece's exception rethrown
// on the caller after every piece has run.
#define EIGEN_USE_THREADS

#include <mixt/eval/pool.hpp>

#include <atomic>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <unsupported/Eigen/CXX11/ThreadPool>

namespace {

struct recorded {
    std::vector<std::pair<Eigen::Index, Eigen::Index>> pieces;
    std::set<std::thread::id> threads;
};

recorded run(Eigen::Index items, Eigen::Index granule, int threads) {
    Eigen::ThreadPool pool(3);
    const Eigen::ThreadPoolDevice device(&pool, 3);
    std::mutex lock;
    recorded r;
    mixt::detail::run_in_pieces(items, granule, device, threads, [&](Eigen::Index first, Eigen::Index last) {
        const std::lock_guard<std::mutex> guard(lock);
        r.pieces.emplace_back(first, last);
        r.threads.insert(std::this_thread::get_id());
    });
    return r;
}

TEST(pool, every_index_in_exactly_one_piece) {
    for (const Eigen::Index items : {0, 1, 7, 63, 64, 65, 1000, 100003})
        for (const Eigen::Index granule : {1, 64})
            for (const int threads : {1, 2, 4}) {
                const recorded r = run(items, granule, threads);
                std::vector<int> seen(static_cast<std::size_t>(items), 0);
                for (const auto& [first, last] : r.pieces) {
                    ASSERT_LE(0, first);
                    ASSERT_LE(first, last);
                    ASSERT_LE(last, items);
                    // A piece starts at a multiple of the granule, and only the last one is shorter.
                    EXPECT_EQ(first % granule, 0) << items << " items, granule " << granule;
                    if (last != items) {
                        EXPECT_EQ((last - first) % granule, 0) << items << " items";
                    }
                    for (Eigen::Index i = first; i < last; ++i) ++seen[static_cast<std::size_t>(i)];
                }
                for (Eigen::Index i = 0; i < items; ++i)
                    ASSERT_EQ(seen[static_cast<std::size_t>(i)], 1)
                        << "index " << i << " of " << items << ", granule " << granule << ", " << threads << " threads";
                // Cut into at most 4 pieces per thread.
                EXPECT_LE(r.pieces.size(), static_cast<std::size_t>(4 * threads));
            }
}

TEST(pool, one_thread_or_one_piece_runs_on_the_caller) {
    for (const auto& [items, threads] : {std::pair<Eigen::Index, int>{100003, 1}, {40, 4}, {0, 4}}) {
        const recorded r = run(items, 64, threads);
        ASSERT_EQ(r.pieces.size(), 1u);
        EXPECT_EQ(r.pieces[0], (std::pair<Eigen::Index, Eigen::Index>{0, items}));
        EXPECT_EQ(*r.threads.begin(), std::this_thread::get_id());
    }
}

TEST(pool, an_exception_is_rethrown_after_every_piece_ran) {
    Eigen::ThreadPool pool(3);
    const Eigen::ThreadPoolDevice device(&pool, 3);
    std::atomic<Eigen::Index> covered{0};
    const auto task = [&](Eigen::Index first, Eigen::Index last) {
        covered += last - first;
        if (first == 0) throw std::runtime_error("the first piece");
    };
    EXPECT_THROW(mixt::detail::run_in_pieces(Eigen::Index{1000}, 1, device, 4, task), std::runtime_error);
    EXPECT_EQ(covered.load(), 1000); // every piece ran before the caller rethrew
}

} // namespace
