#!/usr/bin/env python3
"""Writes test/data/promotion_torch.csv: PyTorch's result dtypes, asked of PyTorch itself, for every pair of
operands of the kinds PyTorch distinguishes (a tensor of rank 1, a tensor of rank 0, a Python scalar) and of the
dtypes PyTorch and mixt share, for torch.result_type and for the dtype of a + b, a * b and a / b (true division).

Each row: lhs kind, lhs dtype, rhs kind, rhs dtype, result_type, add, mul, div. Kinds: `dim` (a tensor of shape
[2]), `zerodim` (a tensor of shape []), `scalar` (a Python bool, int, float or complex; its dtype column is the
Python type). A cell PyTorch refuses (an error) is `error`. PyTorch's own names are mapped to mixt's short names
(b u8 i8 i16 i32 i64 bf16 f16 f32 f64 c64 c128); complex32 (`c32`) appears only as a result, and the unsigned
16/32/64-bit ints, which PyTorch 1.13 lacks, are left out.

Usage: gen_torch_table.py > test/data/promotion_torch.csv   (Debian 12: apt-get install python3-torch; run with /usr/bin/python3)
"""
import sys

import torch

DTYPES = [
    ("b", torch.bool),
    ("u8", torch.uint8),
    ("i8", torch.int8),
    ("i16", torch.int16),
    ("i32", torch.int32),
    ("i64", torch.int64),
    ("bf16", torch.bfloat16),
    ("f16", torch.float16),
    ("f32", torch.float32),
    ("f64", torch.float64),
    ("c64", torch.complex64),
    ("c128", torch.complex128),
]
NAME = {d: n for n, d in DTYPES}
NAME[torch.complex32] = "c32"  # a result only (f16 with a complex rank-0 operand or scalar): mixt has no c32
SCALARS = [("bool", True), ("int", 3), ("float", 2.5), ("complex", 1.5 + 0.5j)]


def operands():
    for name, dt in DTYPES:
        yield "dim", name, torch.ones(2, dtype=dt)
        yield "zerodim", name, torch.ones((), dtype=dt)
    for name, value in SCALARS:
        yield "scalar", name, value


def dtype_of(thunk):
    try:
        r = thunk()
    except Exception:  # PyTorch refuses the pair: the cell says so
        return "error"
    return NAME.get(r.dtype if isinstance(r, torch.Tensor) else r, "error")


def main():
    out = sys.stdout
    out.write("# torch %s: lhs_kind,lhs,rhs_kind,rhs,result_type,add,mul,div\n" % torch.__version__)
    ops = list(operands())
    for lk, ln, a in ops:
        for rk, rn, b in ops:
            if lk == "scalar" and rk == "scalar":
                continue  # two Python scalars are Python arithmetic, not PyTorch's
            result_type = dtype_of(lambda: torch.result_type(a, b))
            add = dtype_of(lambda: a + b)
            mul = dtype_of(lambda: a * b)
            div = dtype_of(lambda: a / b)
            out.write(",".join([lk, ln, rk, rn, result_type, add, mul, div]) + "\n")


if __name__ == "__main__":
    main()
