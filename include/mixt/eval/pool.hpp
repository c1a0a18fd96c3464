#ifndef MIXT_EVAL_POOL_HPP
#define MIXT_EVAL_POOL_HPP

// Splitting a pass over [0, items) into pieces on an Eigen::ThreadPoolDevice: the fused loop's passes
// (assign.hpp), strided passes over runs, and reduction tasks (reduce.hpp) all run through run_in_pieces.

#include <algorithm>
#include <atomic>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>

#include <unsupported/Eigen/CXX11/Tensor>

#include "mixt/eval/callable_ref.hpp"
#include "mixt/eval/device.hpp"

namespace mixt::detail {

#if defined(EIGEN_USE_THREADS)
/// How many pieces run_in_pieces cuts a pass into per thread.
inline constexpr int pieces_per_thread = 4;

/// A piece's task(first, last), reached through a pointer to the caller's callable, so that run_pieces (the shared
/// state, the closures queued on the pool) is compiled once, not once for each caller's task.
using piece_task = callable_ref<void(Eigen::Index, Eigen::Index)>;

/// run_in_pieces' pieces of `piece` items (`pieces` of them, the last one shorter) on `threads` threads.
inline void run_pieces(Eigen::Index items, Eigen::Index piece, int pieces, const Eigen::ThreadPoolDevice& device,
                       int threads, piece_task task) {
    struct shared_state {
        std::atomic<int> next{0};
        std::atomic<int> done{0};
        std::mutex failure_lock;
        std::exception_ptr failure;
    };
    const auto state = std::make_shared<shared_state>();
    const auto work = [state, task, items, piece, pieces] {
        for (int p; (p = state->next.fetch_add(1, std::memory_order_relaxed)) < pieces;) {
            const Eigen::Index first = p * piece;
            try {
                task(first, std::min(items, first + piece));
            } catch (...) {
                const std::lock_guard<std::mutex> lock(state->failure_lock);
                if (!state->failure) state->failure = std::current_exception();
            }
            state->done.fetch_add(1, std::memory_order_release);
        }
    };
    for (int t = 1; t < std::min(threads, pieces); ++t) device.enqueueNoNotification(work);
    work();
    while (state->done.load(std::memory_order_acquire) < pieces) std::this_thread::yield();
    if (state->failure) std::rethrow_exception(state->failure);
}

/// Runs task(first, last) over [0, items) in pieces_per_thread * `threads` contiguous pieces (multiples of
/// `granule` items but the last), which the calling thread and `threads - 1` tasks on the pool take in turn
/// from a shared counter until none is left; the caller then waits for the pieces being computed, not for
/// tasks that have not started (a task that starts late finds no piece and only touches the shared state,
/// which it keeps alive; `task` is only called for a piece that was taken, which the caller waits for).
/// The caller computes instead of sleeping on a barrier while the pool works, as Eigen's parallelFor does
/// when it makes more blocks than threads: waking a sleeping thread costs tens of microseconds on a virtual
/// machine, which is most of a pass over 256K elements of f16 (0.5 MiB). Taking pieces in turn rather than
/// one range per thread keeps both cores' work when one of them runs slower (docs/performance-notes.md,
/// "Threads per pass"). A pass of one piece runs on the calling thread alone. A piece that throws (a
/// std::bad_alloc of its scratch) is counted done and its exception kept: the caller waits for every piece,
/// which may use its stack, before it rethrows the first one.
template <class Task>
void run_in_pieces(Eigen::Index items, Eigen::Index granule, const Eigen::ThreadPoolDevice& device, int threads,
                   const Task& task) {
    const Eigen::Index wanted = static_cast<Eigen::Index>(std::max(threads, 1)) * pieces_per_thread;
    const Eigen::Index piece = std::max<Eigen::Index>(granule, ((items + wanted - 1) / wanted + granule - 1) / granule * granule);
    const auto pieces = static_cast<int>((items + piece - 1) / piece);
    // (Through piece_task on one thread too: the task's code is compiled once, inside piece_task's call.)
    const auto erased = piece_task::of(task);
    if (threads <= 1 || pieces <= 1) {
        erased(Eigen::Index{0}, items);
        return;
    }
    run_pieces(items, piece, pieces, device, threads, erased);
}

#endif // EIGEN_USE_THREADS

/// Runs task(first, last) over [0, tasks) on `threads` threads of the device (the caller one of them), pieces
/// taken in turn from a shared counter (run_in_pieces); on any other device on the calling thread.
template <class Device, class Task>
void run_reduce_tasks(Eigen::Index tasks, const Device& device, int threads, const Task& task) {
#if defined(EIGEN_USE_THREADS)
    if constexpr (is_thread_pool_device_v<Device>) {
        run_in_pieces(tasks, 1, device, threads, task);
        return;
    }
#endif
    (void)device;
    (void)threads;
    task(Eigen::Index{0}, tasks);
}

} // namespace mixt::detail

#endif // MIXT_EVAL_POOL_HPP
