#ifndef MIXT_EVAL_CALLABLE_REF_HPP
#define MIXT_EVAL_CALLABLE_REF_HPP

// callable_ref<R(Args...)>: a caller's callable reached through a pointer to it and one function pointer, for the
// executors that would otherwise be compiled once per caller's lambda (in reduce.hpp: the memory a reduction writes
// its result into, and the part of its strategies that depends on the expression; in pool.hpp: a piece of a pass
// on the thread pool). It does not own the callable, which must outlive every call.

namespace mixt::detail {

template <class Signature>
struct callable_ref;

template <class R, class... Args>
struct callable_ref<R(Args...)> {
    const void* callable;
    R (*call)(const void*, Args...);

    template <class F>
    static callable_ref of(const F& f) {
        return {&f, [](const void* p, Args... args) -> R { return (*static_cast<const F*>(p))(args...); }};
    }
    R operator()(Args... args) const { return call(callable, args...); }
};

} // namespace mixt::detail

#endif // MIXT_EVAL_CALLABLE_REF_HPP
