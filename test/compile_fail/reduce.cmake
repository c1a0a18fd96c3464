# Compile tests of reductions (mixt/expr/reduce.hpp): each misuse stops compilation with mixt's own message and
# names the dtype or the numbers involved (as template arguments of mixt's error templates). Their valid twins
# compile together in reduce.valid_twins.

set(_mixt_reduce_prelude [=[
#include <complex>
#include <cstdint>
#include <mixt/mixt.hpp>
template <class T, int N = 1, int L = Eigen::ColMajor>
Eigen::Tensor<T, N, L> t;
using c64 = std::complex<float>;
using x32 = mixt::policy::jax_x32;
]=])

function(_mixt_reduce_case name code regex)
  mixt_expect_compile_fail(${name} CODE "${_mixt_reduce_prelude}\nvoid f() {\n${code}\n}\n" REGEX "${regex}")
endfunction()

_mixt_reduce_case(reduce.argmax_of_complex
  "(void)(mixt::argmax(t<c64>));"
  "mixt: argmin/argmax: the operand is complex")
_mixt_reduce_case(reduce.eval_of_argmax_of_complex
  "auto r = mixt::eval(mixt::argmax(t<c64>)); (void)r;"
  "mixt: argmin/argmax: the operand is complex")
_mixt_reduce_case(reduce.mean_into_an_integer_dtype
  "(void)(mixt::mean<std::int32_t>(t<float>));"
  "mixt: mean<T>: T .the template argument. must be a floating or complex dtype")
_mixt_reduce_case(reduce.more_axes_than_the_rank
  "(void)(mixt::sum(t<float, 1>, {0, 1}));"
  "mixt: a reduction names more axes .first argument. than its operand's rank")
_mixt_reduce_case(reduce.to_eigen_of_an_inner_reduction
  "(void)(mixt::to_eigen(mixt::lazy(t<float, 2>) - mixt::sum(t<float, 2>, 1, mixt::keepdims)));"
  "mixt: to_eigen lowers a reduction only at the root of an expression")
_mixt_reduce_case(reduce.typed_under_another_policy
  "(void)(mixt::lazy<x32>(t<std::int32_t>) + mixt::sum(t<std::int8_t>));"
  "mixt: a reduction of an operand without a policy was typed under default_policy")

# The valid twins: the one change that makes each case legal.
mixt_expect_compiles(reduce.valid_twins CODE "${_mixt_reduce_prelude}
void f() {
    auto a = mixt::argmax(mixt::real(t<c64>));
    auto b = mixt::mean<double>(t<float>);
    auto c = mixt::sum(t<float, 2>, {0, 1});
    auto d = mixt::to_eigen(mixt::sum(t<float, 2>, 1));
    auto e = mixt::lazy<x32>(t<std::int32_t>) + mixt::sum(mixt::lazy<x32>(t<std::int8_t>));
    (void)a; (void)b; (void)c; (void)d; (void)e;
}
")
