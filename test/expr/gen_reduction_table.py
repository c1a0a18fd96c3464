#!/usr/bin/env python3
"""Writes test/data/reduction_dtypes.csv: the result and accumulator dtype of every reduction of mixt, for
every classic dtype, under the four built-in policies.

The rules are JAX 0.11.2's (jax/_src/numpy/reductions.py), restated here from its source, not from mixt:
  - sum, prod (`_reduce_sum`, `_reduce_prod`): `_promote_integer_dtype`: bool and signed ints narrower than
    the default int become the default int, unsigned ones narrower become the default uint; the computation
    is upcast from f16/bf16 to f32 (`_upcast_f16`), the result converted back;
  - mean (`_mean`): `to_inexact_dtype`: bool and ints of up to 32 bits -> float32, 64-bit ints -> float64
    (float32 without x64); f16/bf16 computed in f32;
  - max, min: the operand's dtype; argmax, argmin: the default int; complex is rejected; any, all: bool.
The default int/float of a policy is what it stores `i*` and `f*` as (int64/float64, int32/float32 for
jax_x32). The accumulator column for mean of integers is mixt's own choice (an exact 64-bit sum: int64 for
signed, uint64 for bool and unsigned), documented in the README; a '-' cell is a compile error.

Usage: gen_reduction_table.py > test/data/reduction_dtypes.csv
"""
import sys

DTYPES = ["bool", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64",
          "bfloat16", "float16", "float32", "float64", "complex64", "complex128"]
POLICIES = {"jax": ("int64", "float64"), "jax_x32": ("int32", "float32"),
            "jax_strict": ("int64", "float64"), "array_api": ("int64", "float64")}
KINDS = ["sum", "prod", "mean", "min", "max", "argmin", "argmax", "any", "all"]


def bits(d):
    return {"bool": 8}.get(d, int("".join(c for c in d if c.isdigit()) or 0))


def signed(d):
    return d.startswith("int")


def unsigned(d):
    return d.startswith("uint")


def upcast_f16(d):
    return "float32" if d in ("float16", "bfloat16") else d


def promote_integer(d, dint):
    if d == "bool":
        return dint
    if signed(d) and bits(d) < bits(dint):
        return dint
    if unsigned(d) and bits(d) < bits(dint):
        return "uint%d" % bits(dint)
    return d


def row(kind, d, dint, dfloat):
    if kind in ("sum", "prod"):
        r = promote_integer(d, dint)
        return r, upcast_f16(r)
    if kind == "mean":
        if d == "bool" or signed(d) or unsigned(d):
            if bits(d) <= 32:
                return "float32", ("int64" if signed(d) else "uint64")
            return dfloat, dfloat
        return d, upcast_f16(d)
    if kind in ("min", "max"):
        return d, upcast_f16(d)
    if kind in ("argmin", "argmax"):
        if d.startswith("complex"):
            return "-", "-"
        return dint, upcast_f16(d)
    return "bool", "bool"


def main():
    out = sys.stdout
    out.write("policy,reduction,dtype,result,accumulator\n")
    for policy, (dint, dfloat) in POLICIES.items():
        for kind in KINDS:
            for d in DTYPES:
                if policy == "array_api" and d in ("float16", "bfloat16"):
                    r = ("-", "-")  # not nodes of the Array API policy
                else:
                    r = row(kind, d, dint, dfloat)
                out.write("%s,%s,%s,%s,%s\n" % (policy, kind, d, r[0], r[1]))


if __name__ == "__main__":
    main()
