# Compile tests of the per-operation rules (mixt/expr/rules.hpp): every rule asks mixt::op::defined_v before it
# stops compilation, and each family of rules reaches mixt's message by its own path. expr.cmake has one
# representative per message (join operations, comparisons, promotion under a stricter policy); these are the
# paths it does not cover: a unary operation, true division (rule 2), pow (rule 5, which needs the join even
# where it keeps the base) and where (rule 6). The full 22 x 18 x 18 table of which cells the predicate says are
# defined is test/expr/result_table_*. Uses expr.cmake's prelude and _mixt_expr_case (this file is included
# after it).

_mixt_expr_case(expr.bool_negate
  "auto e = -mixt::lazy(t<bool>);"
  "${_not_defined}" "not_defined_for_dtype<mixt::op::negate, mixt::dtype_tag<mixt::dtype::bool_>")
_mixt_expr_case(expr.jax_strict_f32_divide_f64
  "auto e = mixt::lazy<strict>(t<float>) / mixt::lazy<strict>(t<double>);"
  "${_no_path}"
  "no_implicit_promotion<mixt::op::divide, mixt::dtype_tag<mixt::dtype::float32>, mixt::dtype_tag<mixt::dtype::float64>, mixt::policy::jax_strict")
_mixt_expr_case(expr.jax_strict_pow_needs_the_join
  "auto e = mixt::pow(mixt::lazy<strict>(t<float>), mixt::lazy<strict>(t<std::int32_t>));"
  "${_no_path}"
  "no_implicit_promotion<mixt::op::pow, mixt::dtype_tag<mixt::dtype::float32>, mixt::dtype_tag<mixt::dtype::int32>, mixt::policy::jax_strict")
_mixt_expr_case(expr.array_api_where_int_float
  "auto e = mixt::where(mixt::lazy<array_api>(t<bool>), mixt::lazy<array_api>(t<std::int8_t>), mixt::lazy<array_api>(t<float>));"
  "${_no_path}"
  "no_implicit_promotion<mixt::op::where, mixt::dtype_tag<mixt::dtype::int8>, mixt::dtype_tag<mixt::dtype::float32>, mixt::policy::array_api")

mixt_expect_compiles(expr.rules_valid_twins CODE "${_mixt_expr_prelude}
void twins() {
    auto int_negate = -mixt::lazy(t<std::int8_t>);
    auto strict_divide = mixt::lazy<strict>(t<float>) / mixt::lazy<strict>(t<float>);
    auto strict_pow = mixt::pow(mixt::lazy<strict>(t<float>), mixt::lazy<strict>(t<float>));
    auto array_api_where = mixt::where(mixt::lazy<array_api>(t<bool>), mixt::lazy<array_api>(t<std::int8_t>),
                                       mixt::lazy<array_api>(t<std::int16_t>));
    (void)int_negate; (void)strict_divide; (void)strict_pow; (void)array_api_where;
}")
