#!/usr/bin/env python3
"""Generates the differential test of mixt expressions: random expression trees as C++ test code.

Each tree becomes one GoogleTest case that
  - builds the expression with mixt's operators and functions over random Eigen tensors,
  - static_asserts that mixt's value type and lattice node are what this generator derived,
  - evaluates it with mixt::eval and mixt::assign, and hands the values to the reference evaluator
    (test/expr/reference.hpp), which recomputes every element from the tree's text.

The dtypes are decided here by this file's own copy of the rules: joins come from the published table
(test/data/promotion_jax_numpy.csv, 18 x 18 with the weak nodes i* f* c*), and for the narrow dtypes (int4 uint4
int2 uint2, the float8/float6/float4 formats) from their place in JAX's lattice (Lattice.join2); the
per-operation rules are those of spec/lattice.md, written out below without looking at mixt's traits. A weak
result is stored as i64 / f64 / c128.

The narrow dtypes come in through trees of their own theme (Generator.narrow_theme): one narrow dtype per tree,
the least used so far, with the dtypes that join it (bool; for a narrow float the classic integers too) and one
leaf of another narrow dtype, which only a cast combines (two narrow dtypes have no join). Their operations are
those exactly rounded (docs/semantics.md: computed in f32 or i32, rounded or wrapped once to the narrow dtype),
not exp log sin cos tanh pow of a narrow float; their literals fit them (an int literal within the range of a
narrow int, or of a narrow float that has infinities); trees of a narrow value are not reduced.

The trees are random but fixed: a tree's content depends only on --seed and its number, through the generator's
own PRNG (splitmix64), so every machine and every Python version generates the same code.

Operations whose result is not exactly rounded (exp log sin cos tanh, pow of floats, and on complex values
* / sqrt abs) are compared within a few ulp, so they are only placed at the root of a tree: below it, a one-ulp
difference could be amplified without bound (a comparison flips, a cast truncates the other way).

Usage: gen.py --csv promotion_jax_numpy.csv --out DIR [--trees N] [--take M] [--tus K] [--seed S]
writes DIR/trees_00.cpp ... DIR/trees_{K-1}.cpp and DIR/coverage.txt.
"""

import argparse
import collections
import csv
import math
import os
import struct
import sys

# ---------------------------------------------------------------------------------------------------------------
# dtypes

TAGS = ['b', 'u8', 'u16', 'u32', 'u64', 'i8', 'i16', 'i32', 'i64', 'bf16', 'f16', 'f32', 'f64', 'c64', 'c128',
        'i*', 'f*', 'c*']
# The narrow dtypes (docs/semantics.md, "Narrow dtypes"), by their long names, which are also their codes. The
# published table has none of them: JAX's lattice puts each narrow int directly above i* and each narrow float
# directly above f*, with nothing above any of them (Lattice.join).
NARROW_INTS = ['uint2', 'uint4', 'int2', 'int4']
NARROW_FLOATS = ['float4_e2m1fn', 'float6_e2m3fn', 'float6_e3m2fn', 'float8_e3m4', 'float8_e4m3', 'float8_e8m0fnu',
                 'float8_e4m3b11fnuz', 'float8_e4m3fn', 'float8_e4m3fnuz', 'float8_e5m2', 'float8_e5m2fnuz']
NARROW = NARROW_INTS + NARROW_FLOATS
CONCRETE = TAGS[:15] + NARROW
KIND = {'b': 'b', 'u8': 'u', 'u16': 'u', 'u32': 'u', 'u64': 'u', 'i8': 'i', 'i16': 'i', 'i32': 'i', 'i64': 'i',
        'bf16': 'f', 'f16': 'f', 'f32': 'f', 'f64': 'f', 'c64': 'c', 'c128': 'c', 'i*': 'i', 'f*': 'f', 'c*': 'c',
        'uint2': 'u', 'uint4': 'u', 'int2': 'i', 'int4': 'i', **{t: 'f' for t in NARROW_FLOATS}}
BITS = {'b': 8, 'u8': 8, 'u16': 16, 'u32': 32, 'u64': 64, 'i8': 8, 'i16': 16, 'i32': 32, 'i64': 64,
        'uint2': 2, 'uint4': 4, 'int2': 2, 'int4': 4}
CPP = {'b': 'bool', 'u8': 'std::uint8_t', 'u16': 'std::uint16_t', 'u32': 'std::uint32_t', 'u64': 'std::uint64_t',
       'i8': 'std::int8_t', 'i16': 'std::int16_t', 'i32': 'std::int32_t', 'i64': 'std::int64_t',
       'bf16': 'Eigen::bfloat16', 'f16': 'Eigen::half', 'f32': 'float', 'f64': 'double',
       'c64': 'std::complex<float>', 'c128': 'std::complex<double>', **{t: f'mixt::{t}' for t in NARROW}}
MIXT_TAG = {'b': 'bool_', 'u8': 'u8', 'u16': 'u16', 'u32': 'u32', 'u64': 'u64', 'i8': 'i8', 'i16': 'i16',
            'i32': 'i32', 'i64': 'i64', 'bf16': 'bf16', 'f16': 'f16', 'f32': 'f32', 'f64': 'f64', 'c64': 'c64',
            'c128': 'c128', 'i*': 'weak_int', 'f*': 'weak_float', 'c*': 'weak_complex', **{t: t for t in NARROW}}
# The int literals each narrow float takes (mixt's detail::literal_fits: an integer must round to a finite value
# without saturating): the integers up to its largest finite value; e8m0fnu's are the positive ones (0 and the
# negatives are its NaN).
NARROW_FLOAT_INTS = {'float8_e3m4': (-15, 15), 'float8_e4m3': (-240, 240), 'float8_e4m3fn': (-448, 448),
                     'float8_e4m3fnuz': (-240, 240), 'float8_e4m3b11fnuz': (-30, 30), 'float8_e5m2': (-57344, 57344),
                     'float8_e5m2fnuz': (-57344, 57344), 'float8_e8m0fnu': (1, 2 ** 20), 'float6_e2m3fn': (-7, 7),
                     'float6_e3m2fn': (-28, 28), 'float4_e2m1fn': (-6, 6)}
# Values each narrow float holds exactly (typed scalars of the dtype): e8m0fnu only powers of two, the fnuz
# formats no -0.
NARROW_FLOAT_POOL = {t: [0.0, -0.0, 1.0, -1.0, 0.5, 1.5, -2.0, 3.0] for t in NARROW_FLOATS}
NARROW_FLOAT_POOL['float8_e8m0fnu'] = [1.0, 2.0, 0.5, 4.0, 2.0 ** -127, 2.0 ** 127]
for _t in ('float8_e4m3fnuz', 'float8_e4m3b11fnuz', 'float8_e5m2fnuz'):
    NARROW_FLOAT_POOL[_t] = [0.0, 1.0, -1.0, 0.5, 1.5, -2.0, 3.0]
MATERIALIZE = {'i*': 'i64', 'f*': 'f64', 'c*': 'c128'}
F16_LIMIT = 65520  # the smallest integer that rounds to inf in f16


def mat(t):
    return MATERIALIZE.get(t, t)


def int_range(t):
    t = mat(t)
    bits = BITS[t]
    if KIND[t] == 'u':
        return 0, (1 << bits) - 1
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


class Lattice:
    def __init__(self, path):
        with open(path, newline='') as f:
            rows = list(csv.reader(f))
        header = rows[0][1:]
        if header != TAGS:
            sys.exit(f'gen.py: unexpected header in {path}: {header}')
        self.join_table = {}
        for row in rows[1:]:
            a = row[0]
            for b, cell in zip(header, row[1:]):
                self.join_table[(a, b)] = cell.strip()
        if len(self.join_table) != len(TAGS) ** 2:
            sys.exit(f'gen.py: {path} is not an {len(TAGS)} x {len(TAGS)} table')

    def join2(self, a, b):
        """The join of two nodes, None where there is none. A narrow node n is above exactly the nodes below i*
        (a narrow int) or f* (a narrow float), and below nothing: it joins x (to n) where x is n or x's join with
        i* (f*) is i* (f*) in the table, and two different narrow nodes have no join."""
        if a in NARROW or b in NARROW:
            if a == b:
                return a
            if a in NARROW and b in NARROW:
                return None
            small, other = (a, b) if a in NARROW else (b, a)
            below = 'f*' if small in NARROW_FLOATS else 'i*'
            return small if self.join2(other, below) == below else None
        r = self.join_table[(a, b)]
        return r if r in KIND else None

    def join(self, *ts):
        r = ts[0]
        for t in ts[1:]:
            r = self.join2(r, t)
            if r is None:
                return None
        return r


def to_inexact(t):
    if KIND[t] in 'bui':
        if t == 'i*':
            return 'f*'
        return 'f64' if t in ('u64', 'i64') else 'f32'
    return t


def real_part(t):
    return {'c64': 'f32', 'c128': 'f64', 'c*': 'f*'}.get(t, t)


# ---------------------------------------------------------------------------------------------------------------
# operations: name -> (arity, spelling, form). form: 'bin' C++ binary operator, 'un' C++ unary operator,
# 'fn' mixt::function. Named functions take plain Eigen tensors too; operators need one mixt expression.

OPS = {
    'add': (2, '+', 'bin'), 'sub': (2, '-', 'bin'), 'mul': (2, '*', 'bin'), 'div': (2, '/', 'bin'),
    'mod': (2, '%', 'bin'), 'floor_divide': (2, 'floor_divide', 'fn'),
    'eq': (2, '==', 'bin'), 'ne': (2, '!=', 'bin'), 'lt': (2, '<', 'bin'), 'le': (2, '<=', 'bin'),
    'gt': (2, '>', 'bin'), 'ge': (2, '>=', 'bin'),
    'logical_and': (2, '&&', 'bin'), 'logical_or': (2, '||', 'bin'),
    'bit_and': (2, '&', 'bin'), 'bit_or': (2, '|', 'bin'), 'bit_xor': (2, '^', 'bin'),
    'shl': (2, '<<', 'bin'), 'shr': (2, '>>', 'bin'),
    'pow': (2, 'pow', 'fn'), 'minimum': (2, 'minimum', 'fn'), 'maximum': (2, 'maximum', 'fn'),
    'neg': (1, '-', 'un'), 'logical_not': (1, '!', 'un'), 'bit_not': (1, '~', 'un'),
    'abs': (1, 'abs', 'fn'), 'sqrt': (1, 'sqrt', 'fn'), 'exp': (1, 'exp', 'fn'), 'log': (1, 'log', 'fn'),
    'sin': (1, 'sin', 'fn'), 'cos': (1, 'cos', 'fn'), 'tanh': (1, 'tanh', 'fn'),
    'real': (1, 'real', 'fn'), 'imag': (1, 'imag', 'fn'), 'conj': (1, 'conj', 'fn'), 'cast': (1, 'cast', 'fn'),
    'where': (3, 'where', 'fn'), 'clip': (3, 'clip', 'fn'),
}
COMPARISONS = ('eq', 'ne', 'lt', 'le', 'gt', 'ge')
ORDERED = ('lt', 'le', 'gt', 'ge')
TRANSCENDENTAL = ('exp', 'log', 'sin', 'cos', 'tanh')


def rule(lat, op, ts, cast_to=None):
    """(result tag, operand tags) of `op` on children of tags `ts`, or None where the operation is undefined.

    The operand tags are what each child's value is converted to (not materialized: i* stays i*)."""
    k = [KIND[t] for t in ts]
    if op == 'cast':
        return cast_to, [cast_to]
    if op in ('real', 'imag', 'abs'):
        return real_part(ts[0]), [ts[0]]
    if op == 'where':
        j = lat.join(ts[1], ts[2])
        return (j, ['b', j, j]) if j else None
    if op == 'pow':
        # The operands must join even where the base is kept (a narrow int exponent of a float base has none).
        j = lat.join(*ts)
        if j is None:
            return None
        if k[0] in 'fc' and k[1] in 'uib':
            return ts[0], [ts[0], ts[1]]
        return j, [j, j]
    j = lat.join(*ts)
    if j is None:
        return None
    kj = KIND[j]
    if op in COMPARISONS:
        if op in ORDERED and kj == 'c':
            return None
        return 'b', [j, j]
    if op in ('div', 'sqrt') + TRANSCENDENTAL:
        r = to_inexact(j)
        return r, [r] * len(ts)
    allowed = {
        'add': 'buifc', 'mul': 'buifc', 'minimum': 'buifc', 'maximum': 'buifc', 'clip': 'buifc', 'conj': 'buifc',
        'sub': 'uifc', 'neg': 'uifc', 'floor_divide': 'uif', 'mod': 'uif',
        'bit_and': 'bui', 'bit_or': 'bui', 'bit_xor': 'bui', 'bit_not': 'bui', 'shl': 'ui', 'shr': 'ui',
        'logical_and': 'b', 'logical_or': 'b', 'logical_not': 'b',
    }[op]
    if kj not in allowed:
        return None
    return j, [j] * len(ts)


def op_key(lat, op, kids, cast_to):
    """An operation and the kind of dtype it computes in: what the generator balances."""
    tags = [k.tag for k in kids]
    r = rule(lat, op, tags, cast_to)
    return op, KIND[r[0] if op in ('cast', 'where') else r[1][0]]


THEMES = [
    (26, (CONCRETE, [(5, 'i'), (3, 'f'), (1, 'c')])),                                      # anything
    (22, (['u8', 'u16', 'u32', 'u64', 'i8', 'i16', 'i32', 'i64', 'b'], [(1, 'i')])),       # integers
    (12, (['b', 'b', 'b', 'b', 'u8', 'i32'], [(1, 'i')])),                                # bool
    (20, (['bf16', 'f16', 'f32', 'f64', 'i8', 'u16', 'b'], [(3, 'i'), (3, 'f')])),        # floats
    (22, (['c64', 'c128', 'c64', 'c128', 'f32', 'i16'], [(1, 'i'), (1, 'f'), (2, 'c')])),  # complex
    (22, None),                                    # narrow: one narrow dtype per tree (Generator.narrow_theme)
]
NARROW_THEME = len(THEMES) - 1
NARROW_CAST_CHANCE = 2 / 3


# (operation, kind it computes in, not exactly rounded) at the root of the first trees
GOALS = [(op, 'c', True) for op in ('abs', 'sqrt', 'exp', 'log', 'sin', 'cos', 'tanh', 'pow', 'mul', 'div')] * 2 + \
        [(op, 'b', False) for op in ('add', 'mul', 'pow', 'logical_and', 'logical_or', 'logical_not', 'minimum',
                                     'maximum', 'bit_and', 'bit_or', 'bit_xor', 'bit_not', 'abs', 'where', 'clip',
                                     'lt', 'eq')] + \
        [(op, 'f', True) for op in ('exp', 'log', 'sin', 'cos', 'tanh', 'pow')] + \
        [(op, 'c', False) for op in ('add', 'sub', 'neg', 'conj', 'real', 'imag', 'eq', 'ne', 'minimum', 'maximum',
                                     'clip', 'where', 'cast')] + \
        [(op, 'u', False) for op in ('neg', 'floor_divide', 'mod', 'shl', 'shr', 'pow', 'abs', 'sub')]


def exactly_rounded(op, result, kid_tags):
    """Whether mixt's result is defined bit for bit (else: compared within a few ulp)."""
    kr = KIND[result]
    if op in TRANSCENDENTAL:
        return False
    if op == 'pow':
        return kr in 'bui'
    if op in ('mul', 'div', 'sqrt'):
        return kr != 'c'
    if op == 'abs':
        return KIND[kid_tags[0]] != 'c'
    return True


# ---------------------------------------------------------------------------------------------------------------
# random numbers: splitmix64, so that the trees do not depend on the Python version


class Rng:
    def __init__(self, seed):
        self.s = seed & 0xFFFFFFFFFFFFFFFF

    def u64(self):
        self.s = (self.s + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
        z = self.s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
        return z ^ (z >> 31)

    def below(self, n):
        return self.u64() % n

    def uniform(self):
        return (self.u64() >> 11) / float(1 << 53)

    def chance(self, p):
        return self.uniform() < p

    def choice(self, xs):
        return xs[self.below(len(xs))]

    def weighted(self, items):
        """items: [(weight, value)]"""
        total = sum(w for w, _ in items)
        x = self.uniform() * total
        for w, v in items:
            x -= w
            if x < 0:
                return v
        return items[-1][1]

    def int_between(self, lo, hi):
        return lo + self.below(hi - lo + 1)


# ---------------------------------------------------------------------------------------------------------------
# trees


class Leaf:
    def __init__(self, idx, tag, plain):
        self.idx, self.tag, self.plain = idx, tag, plain
        self.reshaped = False
        self.strided = False  # read through a strided view (set with the tree's shapes)

    def is_expr(self):  # a mixt expression (operators accept it)
        return not self.plain


class Lit:
    def __init__(self, kind):
        self.kind = kind  # 'i', 'f', 'c'
        self.tag = kind + '*'
        self.value = None
        self.spelling = None
        self.target = None  # the operand dtype it is converted to, 'exact' for an exact comparison
        self.overflows = False

    def is_expr(self):
        return False


class Strong:
    """A typed scalar, mixt::strong(x): joins as its own dtype, not as a weak literal."""

    def __init__(self, tag, value, spelling):
        self.tag, self.value, self.spelling = tag, value, spelling

    def is_expr(self):
        return True


class Node:
    def __init__(self, op, kids, cast_to=None):
        self.op, self.kids, self.cast_to = op, kids, cast_to
        self.tag = None
        self.operands = None
        self.exact = True

    def is_expr(self):
        return True


def height(n):
    return 1 + max(height(k) for k in n.kids) if isinstance(n, Node) else 0


def walk(n):
    yield n
    if isinstance(n, Node):
        for k in n.kids:
            yield from walk(k)


# Values that f16, bf16 or f32 cannot hold (the leaves hold their rounded neighbours): a comparison with one of
# them depends on whether the literal is converted to the array's dtype first.
ROUNDING_SENSITIVE = [0.1, 1.0 / 3, 2049.0, 257.0, 65519.0, 2.0 ** 24 + 1, 1e-8, -0.1, 4097.0]
ROUNDING_SENSITIVE_INTS = [2049, 257, 4097, 65519, 2 ** 24 + 1, 2 ** 53 + 1, -2049, 2 ** 63 - 1]
# The same for the narrow floats, within the range of every one that has infinities (15 for e3m4): integers that
# 1 to 4 significand bits cannot hold, some halfway between two of their values.
ROUNDING_SENSITIVE_NARROW_INTS = [5, 7, 9, 11, 13, -13, 15]

FLOAT_SPECIALS = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 1e-3, 0.1, -7.75, 100.0, 65504.0, 65519.0, 65520.0, 1e5,
                  1e10, -1e20, 3.4028234663852886e38, 1e300, -1e300, 5e-324, 2.2250738585072014e-308, 1e-40,
                  2.0 ** 24 + 1, 2.0 ** 53, 2.0 ** 63, -2.0 ** 63, 2.0 ** 64, float('nan'), float('inf'),
                  float('-inf')]


def random_double(rng):
    c = rng.below(10)
    if c < 4:
        return rng.choice(FLOAT_SPECIALS)
    if c < 7:  # small, often integral
        v = rng.int_between(-64, 64) / rng.choice([1, 1, 2, 4, 8, 3, 10])
        return float(v)
    if c < 9:  # any magnitude
        return rng.choice([1.0, -1.0]) * rng.uniform() * 2.0 ** rng.int_between(-60, 60)
    bits = rng.u64()  # any double, NaN included
    return struct.unpack('<d', struct.pack('<Q', bits))[0]


def random_int(rng, lo, hi):
    c = rng.below(8)
    if c < 3:
        cands = [v for v in (0, 1, -1, 2, 3, -2, 7, 8, 15, 16, 31, 32, 63, 64, 127, 128, 255, 256, -128, -129,
                             300, 1000, 32767, 65535, 65536, 65519, 2 ** 31 - 1, -2 ** 31, 2 ** 32, 2 ** 53 + 1,
                             2 ** 63 - 1, -2 ** 63, 2 ** 64 - 1) if lo <= v <= hi]
        return rng.choice(cands)
    if c < 5:
        return rng.choice([lo, hi, lo + 1, hi - 1]) if hi - lo > 2 else lo
    if c < 7:
        return max(lo, min(hi, rng.int_between(-20, 40)))
    return rng.int_between(lo, hi)


def f32_exact(v):
    if not math.isfinite(v):
        return False
    try:
        return struct.unpack('<f', struct.pack('<f', v))[0] == v
    except OverflowError:
        return False


def spell_double(rng, v):
    if math.isnan(v):
        return 'std::numeric_limits<double>::quiet_NaN()'
    if math.isinf(v):
        return ('-' if v < 0 else '') + 'std::numeric_limits<double>::infinity()'
    s = v.hex() if rng.chance(0.3) else repr(v)
    if f32_exact(v) and rng.chance(0.3):
        s += 'f'  # a float literal: still f*, its value exactly the double
    return f'({s})' if s.startswith('-') else s


def spell_int(rng, v):
    if v > 2 ** 63 - 1:
        return f'{v}ULL'
    if v == -2 ** 63:
        return '(-9223372036854775807LL - 1)'
    if -2 ** 31 < v < 2 ** 31:
        forms = [str(v), f'{v}LL']
        if 0 <= v < 2 ** 31:
            forms.append(f'{v}u')
        if -128 <= v <= 127:
            forms.append(f'std::int8_t{{{v}}}')
        if 0 <= v <= 65535:
            forms.append(f'std::uint16_t{{{v}}}')
        s = rng.choice(forms)
    else:
        s = f'{v}LL'
    return f'({s})' if s.startswith('-') else s


def literal_fits(v, target):
    """Whether mixt accepts int literal v converted to target (else mixt::overflow_error)."""
    kt = KIND[target]
    if kt in 'ui':
        lo, hi = int_range(target)
        return lo <= v <= hi
    if target == 'f16':
        return -F16_LIMIT < v < F16_LIMIT
    if target in NARROW_FLOAT_INTS:
        lo, hi = NARROW_FLOAT_INTS[target]
        return lo <= v <= hi
    return True


class Generator:
    def __init__(self, lat, seed):
        self.lat = lat
        self.seed = seed
        self.op_count = collections.Counter()
        self.cast_count = {t: 0 for t in CONCRETE}
        self.narrow_count = {t: 0 for t in NARROW}
        self.tree_casts = collections.Counter()
        self.seen = set()

    # -- one tree ------------------------------------------------------------------------------------------------
    def tree(self, tid, retry=0):
        rng = Rng(self.seed * 0x100000001B3 + tid * 0x9E3779B97F4A7C15 + 1 + retry * 0xD1B54A32D192ED03)
        self.rng = rng
        t = {'id': tid}
        t['rank'] = rank = tid % 5 if tid < 50 else rng.below(5)
        t['layout'] = rng.choice(['Eigen::ColMajor', 'Eigen::RowMajor'])
        t['dims'] = self.dims(rank)
        t['depth'] = depth = [1, 2, 3, 4, 5, 6][tid % 6] if tid < 60 else rng.weighted(
            [(1, 1), (2, 2), (3, 3), (3, 4), (3, 5), (3, 6)])
        self.leaves = []
        self.max_nodes = rng.int_between(depth, 4 + 2 * depth)
        self.nodes = 0
        # A theme per tree: the leaves' dtypes and the literals' kinds. Mixed trees soon compute in floats, so
        # some trees keep to integers, to bool or to complex values, where those operations get exercised.
        theme = rng.weighted([(w, i) for i, (w, _) in enumerate(THEMES)])
        want_inexact = rng.chance({1: 0.1, 2: 0.1, 4: 0.7, NARROW_THEME: 0.1}.get(theme, 0.3))
        # The first trees each have a given operation on a given kind at the root: the combinations that random
        # trees seldom reach (complex functions, bool arithmetic) are then covered too.
        self.goal = GOALS[tid] if tid < len(GOALS) else None
        if self.goal:
            theme = {'b': 2, 'u': 1, 'i': 1, 'f': 3, 'c': 4}[self.goal[1]]
            want_inexact = self.goal[2]
        self.narrow = theme == NARROW_THEME
        self.theme = self.narrow_theme() if self.narrow else THEMES[theme][1]
        for _attempt in range(500):
            self.leaves = []
            self.nodes = 0
            self.tree_casts = collections.Counter()
            root = self.node(0, depth, True, 'inexact' if want_inexact else 'exact', True)
            if root is not None and height(root) == depth:
                break
        else:
            raise RuntimeError(f'tree {tid}: no tree found')
        if rng.chance(0.12):  # leaf 0 as an Eigen expression: the lowered path of eval and assign
            for n in walk(root):
                if isinstance(n, Leaf) and n.idx == 0:
                    n.reshaped = True
        key = (ref_text(root), tuple(self.leaves))
        if key in self.seen:  # the same tree again: take another (deterministically)
            return self.tree(tid, retry + 1)
        self.seen.add(key)
        t['root'] = root
        t['leaves'] = list(self.leaves)
        # A few trees hold one integer literal that does not fit the dtype it is converted to: evaluation must
        # throw mixt::overflow_error and write nothing.
        t['overflow'] = False
        if rng.chance(0.1):
            # Not a narrow target: the narrow dtypes' range checks (detail::literal_fits) are tested on their own
            # (test/expr/literal_test.cpp, test/eval/assign_test.cpp); here a narrow target's int literal that does
            # not fit is one the reference expects to throw, like any other.
            slots = [n for n in walk(root) if isinstance(n, Lit) and n.kind == 'i' and n.target not in
                     ('exact', 'b') and n.target not in NARROW and (KIND[n.target] in 'ui' or n.target == 'f16')]
            if slots:
                lit = rng.choice(slots)
                if lit.target == 'f16':
                    v = rng.choice([F16_LIMIT, -F16_LIMIT, 100000, -(2 ** 40)])
                else:
                    lo, hi = int_range(lit.target)
                    cands = [x for x in (lo - 1, hi + 1, hi + 1000, lo - 1000, 2 ** 64 - 1, -2 ** 63) if
                             (x < lo or x > hi) and -2 ** 63 <= x < 2 ** 64]
                    v = rng.choice(cands)
                lit.value = v
                lit.spelling = spell_int(rng, v)
                lit.overflows = True
                t['overflow'] = True
        # The destination of mixt::assign: any concrete dtype the result promotes to implicitly.
        tag = root.tag
        dsts = [d for d in CONCRETE if self.lat.join(tag, d) == d]
        # A third of the trees assign into a Tensor of the value type itself: the same instantiation as eval's,
        # so free to compile. The others write another dtype or through a TensorMap.
        if rng.chance(0.35):
            t['dst'], t['dst_map'] = mat(tag), False
        else:
            t['dst'], t['dst_map'] = rng.choice(dsts), rng.chance(0.5)
        t['to_eigen'] = tid % 8 == 0
        # One tree in three is also reduced: two reductions (over all axes, over one axis), the pair rotating
        # over the four the harness has (sum/max, mean/argmax, prod/argmin, any/all).
        # Not a tree whose value is a narrow dtype: the harness's bounds for reduced floats are those of the
        # classic dtypes (what remains to do for the narrow ones: a sum accumulated in f32 and rounded once).
        t['reduce'] = tid % 3 == 1 and mat(tag) not in NARROW
        t['reduce_pair'] = (tid // 3) % 4
        self.shapes(t)
        for n in walk(root):
            if isinstance(n, Node):
                self.op_count[op_key(self.lat, n.op, n.kids, n.cast_to)] += 1
                if n.op == 'cast':
                    self.cast_count[n.cast_to] += 1
        for tag in t['leaves']:
            if tag in NARROW:
                self.narrow_count[tag] += 1
        return t

    def narrow_theme(self):
        """The leaves and literal kinds of a tree of the narrow theme: mostly one narrow dtype, the least used so
        far in the run (so that every one appears in every stretch of narrow trees), with bool and, for a narrow
        float, a classic integer (both join it), and one leaf of another narrow dtype, which joins nothing but
        itself: the tree can only combine it through a cast."""
        rng = self.rng
        order = sorted(NARROW, key=lambda d: (self.narrow_count[d], rng.below(1000)))
        main, other = order[0], order[1]
        if main in NARROW_FLOATS:
            ints = rng.choice(['u8', 'u16', 'u32', 'u64', 'i8', 'i16', 'i32', 'i64'])
            return [main, main, main, 'b', ints, other], [(2, 'i'), (3, 'f')]
        return [main, main, main, 'b', other], [(1, 'i')]

    def dims(self, rank):
        rng = self.rng
        if rank == 0:
            return []
        while True:
            cap = {1: 300, 2: 30, 3: 11, 4: 7}[rank]
            d = [rng.choice([1, 2, 3, 5, 7, 9, 11, 13, 17, 19, 23, 29, 31, 37, 61, 67, 127, 131, 257])
                 for _ in range(rank)]
            d = [min(x, cap) if x <= cap else rng.int_between(1, cap) for x in d]
            n = math.prod(d)
            if n % 8 != 0 and n <= 600:
                return d

    def shapes(self, t):
        """Each leaf's shape and kind, from an RNG of their own (the tree itself does not change): three trees
        in four broadcast (all but tid % 4 == 3; the trees that also run to_eigen, tid % 8 == 0, among them) (a leaf loses leading dimensions, or has size 1 where the others stretch; at least one
        leaf does, leaf tid % leaves first, so that every operand position is broadcast in turn), a fifth of the
        trees read one leaf through a strided view (`stride` or `slice` of a larger tensor), and a sixth assign
        into a strided view of a larger destination."""
        tid, dims, nleaves = t['id'], t['dims'], len(t['leaves'])
        rng = Rng(self.seed * 0x2545F4914F6CDD1D + tid * 0x9E3779B97F4A7C15 + 7)
        rank = len(dims)
        leaf_dims = [list(dims) for _ in range(nleaves)]
        used = sorted({n.idx for n in walk(t['root']) if isinstance(n, Leaf)})
        if rank > 0 and tid % 4 != 3 and used:
            turn = used[tid % len(used)]
            for j in used:
                d = list(dims)
                if rng.chance(0.25) or (j == turn and rng.chance(0.3)):
                    d = d[rng.int_between(1, rank):]
                d = [1 if rng.chance(0.35) else x for x in d]
                leaf_dims[j] = d
            if leaf_dims[turn] == list(dims):  # make sure this leaf is broadcast
                big = [k for k, x in enumerate(dims) if x > 1]
                if big:
                    leaf_dims[turn][rng.choice(big)] = 1
                else:
                    leaf_dims[turn] = leaf_dims[turn][1:]
        # The result: the shapes of the leaves in the tree broadcast (aligned at the last dimension). A leaf the
        # tree does not use (the harness still gets its values) has the result's shape.
        out = list(dims)
        if used:
            out_rank = max(len(leaf_dims[j]) for j in used)
            out = [1] * out_rank
            for j in used:
                d = leaf_dims[j]
                for k, x in enumerate(d):
                    o = out_rank - len(d) + k
                    out[o] = max(out[o], x)
        for j in range(nleaves):
            if j not in used:
                leaf_dims[j] = list(out)
        t['leaf_dims'] = leaf_dims
        t['out_dims'] = out
        out_rank = len(out)
        # A strided leaf: any leaf of rank >= 1 not read as an Eigen expression.
        t['strided'] = {}
        reshaped = {n.idx for n in walk(t['root']) if isinstance(n, Leaf) and n.reshaped}
        cands = [j for j in used if len(leaf_dims[j]) > 0 and j not in reshaped]
        if tid % 5 == 2 and cands:
            j = rng.choice(cands)
            d = leaf_dims[j]
            axis = rng.below(len(d))
            if rng.chance(0.5):
                step = rng.int_between(2, 3)
                big = [x * step if k == axis else x for k, x in enumerate(d)]
                t['strided'][j] = ('stride', big, [step if k == axis else 1 for k in range(len(d))])
            else:
                off = rng.int_between(1, 3)
                big = [x + off + rng.below(3) if k == axis else x for k, x in enumerate(d)]
                t['strided'][j] = ('slice', big, [off if k == axis else 0 for k in range(len(d))])
        t['strided_dst'] = tid % 6 == 1 and out_rank > 0 and not t['dst_map']

    def new_leaf(self, plain):
        rng = self.rng
        if self.leaves and rng.chance(0.25):
            idx = rng.below(len(self.leaves))
        else:
            self.leaves.append(rng.choice(self.theme[0]))
            idx = len(self.leaves) - 1
        return Leaf(idx, self.leaves[idx], plain)

    # -- one node ------------------------------------------------------------------------------------------------
    def node(self, level, depth, spine, want, root):
        """A subtree at `level` whose height is depth - level if `spine`, at most that otherwise. `want`:
        'exact' (only exactly rounded operations), 'inexact' (the root's operation is not exactly rounded)."""
        rng = self.rng
        if level == depth or (not spine and (self.nodes >= self.max_nodes or rng.chance(0.3 + 0.1 * level))):
            return self.new_leaf(plain=rng.chance(0.2))
        self.nodes += 1
        for _attempt in range(30):
            # (narrow trees: more unary nodes, where their casts are)
            arity = rng.weighted([(6, 1), (6, 2), (1, 3)] if self.narrow else [(4, 1), (7, 2), (2, 3)])
            if want == 'inexact' and root:
                arity = rng.weighted([(6, 1), (4, 2)])
            if root and self.goal:
                arity = OPS[self.goal[0]][0]
            spine_pos = rng.below(arity)
            kids = []
            for pos in range(arity):
                # Never every operand a literal: the spine's operand is always an expression.
                if arity > 1 and pos != spine_pos and rng.chance(0.3):
                    if rng.chance(0.12):
                        kids.append(self.strong(rng.choice(self.theme[0])))
                    else:
                        kids.append(Lit(rng.weighted(self.theme[1])))
                else:
                    kid = self.node(level + 1, depth, spine and pos == spine_pos, 'exact', False)
                    if kid is None:
                        return None
                    kids.append(kid)
            ops = self.candidates(arity, kids, want if root else 'exact', all_casts=bool(root and self.goal))
            if root and self.goal:
                ops = [(o, c) for o, c in ops if (o, op_key(self.lat, o, kids, c)[1]) == self.goal[:2]]
            if not ops:
                continue
            # Favour the operations used least so far on this kind of operands, so that every one is well
            # covered on every kind it has.
            # A node of a tree of the narrow theme is a cast two times in three where it can be: a cast is how a
            # narrow dtype meets the others, and the cast targets are twice as many with the narrow ones, each
            # to be covered by every run.
            casts = [x for x in ops if x[0] == 'cast']
            if self.narrow and casts and rng.chance(NARROW_CAST_CHANCE):
                op, cast_to = rng.choice(casts)
            else:
                op, cast_to = rng.weighted([(1.0 / (1 + self.op_count[op_key(self.lat, o, kids, c)]) ** 2, (o, c))
                                            for o, c in ops])
            n = Node(op, kids, cast_to)
            if op == 'cast':
                self.tree_casts[cast_to] += 1
            n.tag, n.operands = rule(self.lat, op, [k.tag for k in kids], cast_to)
            n.exact = exactly_rounded(op, n.tag, [k.tag for k in kids])
            self.place_literals(n)
            self.order_operands(n)
            return n
        return None

    def candidates(self, arity, kids, want, all_casts=False):
        tags = [k.tag for k in kids]
        out = []
        for op, (a, _spelling, form) in OPS.items():
            if a != arity:
                continue
            if form in ('bin', 'un') and not self.operator_ok(form, kids):
                continue
            if form == 'fn' and not any(isinstance(k, (Leaf, Node)) for k in kids):
                continue
            targets = CONCRETE if op == 'cast' else [None]
            for c in targets:
                r = rule(self.lat, op, tags, c)
                if r is None:
                    continue
                # Not exp log sin cos tanh pow on a narrow float: mixt rounds f32's function to the format, the
                # reference its long double value, and the harness compares narrow results bit for bit.
                if op in TRANSCENDENTAL + ('pow',) and r[0] in NARROW_FLOATS:
                    continue
                exact = exactly_rounded(op, r[0], tags)
                if (want == 'exact') != exact:
                    continue
                out.append((op, c))
        # cast has 15 targets: count it once among the operations
        casts = [x for x in out if x[0] == 'cast']
        out = [x for x in out if x[0] != 'cast']
        if casts and all_casts:
            out += casts
        elif casts:
            # the casts of the run so far and of this tree so far (cast_count counts a tree once it is done)
            used = {c: self.cast_count[c] + self.tree_casts[c] for _, c in casts}
            fewest = min(used.values())
            out.append(self.rng.choice([x for x in casts if used[x[1]] == fewest]))
        return out

    @staticmethod
    def operator_ok(form, kids):
        # A C++ operator is mixt's only when one operand is a mixt expression: order_operands wraps leaves in
        # lazy() where needed, so any operation with a leaf or node operand can be an operator.
        return any(isinstance(k, (Leaf, Node)) for k in kids)

    def order_operands(self, n):
        """Plain tensors as operands of C++ operators: only on the right of a mixt expression (on the left,
        Eigen's own member operators would compete)."""
        form = OPS[n.op][2]
        if form == 'un':
            for k in n.kids:
                if isinstance(k, Leaf):
                    k.plain = False
        elif form == 'bin':
            a, b = n.kids
            if isinstance(a, Leaf) and a.plain:
                a.plain = False
            if isinstance(b, Leaf) and b.plain and not a.is_expr():
                b.plain = False

    def strong(self, tag):
        rng = self.rng
        k = KIND[tag]
        if tag in NARROW_INTS:
            lo, hi = int_range(tag)
            v = rng.int_between(lo, hi)
            return Strong(tag, v, f'mixt::strong({CPP[tag]}({v}))')
        if tag in NARROW_FLOATS:
            v = rng.choice(NARROW_FLOAT_POOL[tag])
            return Strong(tag, v, f'mixt::strong({CPP[tag]}({v.hex()}))')
        if k == 'b':
            v = rng.chance(0.5)
            return Strong(tag, int(v), f'mixt::strong({"true" if v else "false"})')
        if k in 'ui':
            lo, hi = int_range(tag)
            v = random_int(rng, lo, hi)
            if v == -2 ** 63:
                text = 'std::numeric_limits<std::int64_t>::min()'
            else:
                text = f'{v}ULL' if v > 2 ** 63 - 1 else f'{v}LL' if abs(v) >= 2 ** 31 else str(v)
            return Strong(tag, v, f'mixt::strong({CPP[tag]}{{{text}}})')
        if k == 'f':
            v = self.strong_real(tag)
            return Strong(tag, v, f'mixt::strong({self.spell_real(tag, v)})')
        comp = 'f32' if tag == 'c64' else 'f64'
        re, im = self.strong_real(comp), self.strong_real(comp)
        return Strong(tag, (re, im),
                      f'mixt::strong({CPP[tag]}({self.spell_real(comp, re)}, {self.spell_real(comp, im)}))')

    def strong_real(self, tag):
        """A value the float dtype holds exactly."""
        rng = self.rng
        pool = {'bf16': [0.0, -0.0, 1.0, -2.5, 0.1015625, 3.3895313892515355e38, 2.0 ** -133, 2.0 ** 24, 384.0],
                'f16': [0.0, -0.0, 1.0, -2.5, 0.099975586, 65504.0, 2.0 ** -24, 2048.0, 0.33325195],
                'f32': [0.0, -0.0, 1.0, -2.5, 16777216.0, 3.4028234663852886e38, 2.0 ** -149, 0.1, 1e10],
                'f64': [0.0, -0.0, 1.0, -2.5, 2.0 ** 53, 1e300, 5e-324, 0.1, 1.0 / 3]}[tag]
        c = rng.below(5)
        if c == 0:
            return rng.choice([float('nan'), float('inf'), float('-inf')])
        if c < 3:
            v = rng.choice(pool)
        else:
            v = rng.int_between(-64, 64) / 4.0
        if tag == 'f32' and not f32_exact(v) or tag in ('f16', 'bf16') and not math.isfinite(v):
            v = 0.5
        return v

    @staticmethod
    def spell_real(tag, v):
        if math.isnan(v):
            f = 'std::numeric_limits<float>::quiet_NaN()'
        elif math.isinf(v):
            f = ('-' if v < 0 else '') + 'std::numeric_limits<float>::infinity()'
        else:
            f = v.hex() + ('' if tag == 'f64' else 'f')
        if tag == 'f64' and not math.isfinite(v):
            f = f'static_cast<double>({f})'
        if f.startswith('-'):
            f = f'({f})'
        return {'bf16': f'Eigen::bfloat16({f})', 'f16': f'Eigen::half({f})'}.get(tag, f)

    def place_literals(self, n):
        rng = self.rng
        for i, k in enumerate(n.kids):
            if not isinstance(k, Lit):
                continue
            target = n.operands[i]
            others = [o for j, o in enumerate(n.kids) if j != i]
            if (n.op in COMPARISONS and k.kind in 'if' and KIND[mat(others[0].tag)] != 'c' and
                    target not in NARROW):
                target = 'exact'  # mixt compares a real array with a real literal without converting the literal
            k.target = target if target == 'exact' else mat(target)
            sensitive = (n.op in COMPARISONS and KIND[mat(others[0].tag)] == 'f' and mat(others[0].tag) != 'f64'
                         and rng.chance(0.5))
            if sensitive and k.kind == 'i':
                k.value = rng.choice(ROUNDING_SENSITIVE_NARROW_INTS if k.target in NARROW else ROUNDING_SENSITIVE_INTS)
                if k.target in NARROW_FLOAT_INTS and not literal_fits(k.value, k.target):
                    lo, hi = NARROW_FLOAT_INTS[k.target]  # (no draw: the trees stay those of the seed)
                    k.value = max(lo, min(hi, k.value))
                k.spelling = spell_int(rng, k.value)
            elif sensitive and k.kind == 'f':
                k.value = rng.choice(ROUNDING_SENSITIVE)
                k.spelling = spell_double(rng, k.value)
            elif k.kind == 'i':
                if k.target in ('exact', 'b') or KIND[k.target] in 'c':
                    v = random_int(rng, -2 ** 63, 2 ** 64 - 1)
                elif KIND[k.target] in 'ui':
                    lo, hi = int_range(k.target)
                    v = random_int(rng, lo, hi)
                elif k.target == 'f16':
                    v = random_int(rng, -F16_LIMIT + 1, F16_LIMIT - 1)
                elif k.target in NARROW_FLOAT_INTS:
                    v = random_int(rng, *NARROW_FLOAT_INTS[k.target])
                else:
                    v = random_int(rng, -2 ** 63, 2 ** 64 - 1)
                assert k.target == 'exact' or literal_fits(v, k.target)
                k.value = v
                k.spelling = spell_int(rng, v)
            elif k.kind == 'f':
                k.value = random_double(rng)
                k.spelling = spell_double(rng, k.value)
            else:
                re, im = random_double(rng), random_double(rng)
                k.value = (re, im)
                if f32_exact(re) and f32_exact(im) and rng.chance(0.3):
                    k.spelling = f'std::complex<float>({spell_double(rng, re)}, {spell_double(rng, im)})'
                else:
                    k.spelling = f'std::complex<double>({spell_double(rng, re)}, {spell_double(rng, im)})'


# ---------------------------------------------------------------------------------------------------------------
# emission


def cpp_expr(n):
    if isinstance(n, Leaf):
        # An Eigen expression as a leaf (not contiguous memory): evaluation takes the lowering to Eigen.
        x = f't{n.idx}.reshape(t{n.idx}.dimensions())' if n.reshaped else f't{n.idx}'
        return x if n.plain and not n.strided else f'mixt::lazy({x})'
    if isinstance(n, (Lit, Strong)):
        return n.spelling
    arity, spelling, form = OPS[n.op]
    kids = [cpp_expr(k) for k in n.kids]
    if n.op == 'cast':
        target = CPP[n.cast_to] if n.cast_to not in ('f16', 'bf16', 'b') or hash_of(n) % 2 else \
            f'mixt::dtypes::{MIXT_TAG[n.cast_to]}'
        return f'mixt::cast<{target}>({kids[0]})'
    if form == 'bin':
        return f'({kids[0]} {spelling} {kids[1]})'
    if form == 'un':
        return f'({spelling}{kids[0]})'
    return f'mixt::{spelling}({", ".join(kids)})'


def hash_of(n):
    return sum(ord(c) for c in ref_text(n))


def hex_double(v):
    if math.isnan(v):
        return 'nan'
    if math.isinf(v):
        return '-inf' if v < 0 else 'inf'
    return v.hex()


def ref_text(n):
    if isinstance(n, Leaf):
        return f'L{n.idx}'
    if isinstance(n, Strong):
        if KIND[n.tag] in 'bui':
            return f'S{n.tag}:{n.value}'
        if KIND[n.tag] == 'f':
            return f'S{n.tag}:{hex_double(n.value)}'
        return f'S{n.tag}:{hex_double(n.value[0])},{hex_double(n.value[1])}'
    if isinstance(n, Lit):
        if n.kind == 'i':
            return f'U{n.value}' if n.value > 2 ** 63 - 1 else f'I{n.value}'
        if n.kind == 'f':
            return 'F' + hex_double(n.value)
        return f'C{hex_double(n.value[0])},{hex_double(n.value[1])}'
    name = n.op if n.op != 'cast' else f'cast.{n.cast_to}'
    return f'({name} ' + ' '.join(ref_text(k) for k in n.kids) + ')'


def emit_tree(t):
    root = t['root']
    tid = t['id']
    for n in walk(root):
        if isinstance(n, Leaf):
            n.strided = n.idx in t['strided']

    def arr(xs):
        return f'std::array<Eigen::Index, {len(xs)}>{{{", ".join(str(x) for x in xs)}}}'

    shapes = ' '.join('[' + ', '.join(str(x) for x in d) + ']' for d in t['leaf_dims'])
    out = ', '.join(str(d) for d in t['out_dims'])
    lines = [f'// tree {tid}: height {height(root)}, rank {len(t["out_dims"])}, dims [{out}], {t["layout"]}; '
             f'leaves {shapes}',
             f'TEST(expr_differential, tree_{tid:04d}) {{',
             f'    static constexpr mixt_test::diff::tree_case c{{{tid}, R"mixt({ref_text(root)})mixt",',
             f'        R"mixt({cpp_expr(root)})mixt",',
             f'        "{root.tag}", {"true" if t["overflow"] else "false"}}};']
    for i, tag in enumerate(t['leaves']):
        make = f'mixt_test::diff::make_leaf<{CPP[tag]}, {t["layout"]}>'
        if i in t['strided']:
            how, big, arg = t['strided'][i]
            lines.append(f'    const auto b{i} = {make}({arr(big)}, c.id, {i});')
            if how == 'stride':
                lines.append(f'    const auto t{i} = b{i}.stride({arr(arg)});')
            else:
                lines.append(f'    const auto t{i} = b{i}.slice({arr(arg)}, {arr(t["leaf_dims"][i])});')
        else:
            lines.append(f'    const auto t{i} = {make}({arr(t["leaf_dims"][i])}, c.id, {i});')
    lines.append(f'    auto e = {cpp_expr(root)};')
    lines.append(f'    static_assert(std::is_same_v<mixt::value_t<decltype(e)>, {CPP[mat(root.tag)]}>, '
                 f'"tree {tid}: value type");')
    lines.append(f'    static_assert(std::is_same_v<mixt::tag_t<decltype(e)>, mixt::dtypes::{MIXT_TAG[root.tag]}>, '
                 f'"tree {tid}: lattice node");')
    views = ', '.join(f'mixt_test::diff::view(t{i})' for i in range(len(t['leaves'])))
    flags = ' | '.join(f for f, on in (('mixt_test::diff::use_map', t['dst_map']),
                                       ('mixt_test::diff::use_to_eigen', t['to_eigen']),
                                       ('mixt_test::diff::use_strided_dst', t['strided_dst']),
                                       ('mixt_test::diff::use_reduce', t['reduce']),
                                       ('mixt_test::diff::reduce_pair_1', t['reduce'] and t['reduce_pair'] & 1),
                                       ('mixt_test::diff::reduce_pair_2', t['reduce'] and t['reduce_pair'] & 2))
                      if on) or '0'
    lines.append(f'    mixt_test::diff::check<{CPP[t["dst"]]}, {flags}>(c, e, {{{views}}});')
    lines.append('}')
    return '\n'.join(lines)


HEADER = '''// Generated by test/expr/differential/gen.py ({what}); do not edit.
// Each case: the expression, its static type as the generator derived it from the published table and the
// per-operation rules, then mixt::eval / mixt::assign against the reference evaluator (test/expr/reference.hpp).

#include "harness.hpp"

// clang-format off
'''


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--csv', required=True)
    ap.add_argument('--out', required=True)
    ap.add_argument('--trees', type=int, default=512)
    ap.add_argument('--first', type=int, default=0, help='the number of the first tree: a tree depends on the '
                    'seed, its number and the trees generated before it in the run (the operations are balanced '
                    'over a run), so that runs from different first numbers check different trees')
    ap.add_argument('--take', type=int, default=0, help='keep this many of the trees (0: all), chosen so that '
                    'they cover every operation, dtype, rank, height and shape the whole run covers')
    ap.add_argument('--tus', type=int, default=8)
    ap.add_argument('--seed', type=int, default=20240601)
    args = ap.parse_args()

    lat = Lattice(args.csv)
    gen = Generator(lat, args.seed)
    trees = [gen.tree(i) for i in range(args.first, args.first + args.trees)]
    if 0 < args.take < len(trees):
        trees = take_covering(trees, args.take)

    os.makedirs(args.out, exist_ok=True)
    per = -(-len(trees) // args.tus)
    for k in range(args.tus):
        chunk = trees[k * per:(k + 1) * per]
        ids = [t['id'] for t in chunk]
        what = f'seed {args.seed}, trees {ids[0]} to {ids[-1]}' if ids else f'seed {args.seed}, no trees'
        if ids and len(ids) != ids[-1] - ids[0] + 1:
            what += f' ({len(ids)} of them)'
        text = HEADER.format(what=what)
        text += '\n\n'.join(emit_tree(t) for t in chunk) + '\n'
        write_if_different(os.path.join(args.out, f'trees_{k:02d}.cpp'), text)
    write_if_different(os.path.join(args.out, 'coverage.txt'), coverage(trees, gen))


def counts(trees):
    """What the trees exercise: the counts that a run must have above 0 (operations, leaf dtypes, literals,
    cast targets, ranks, heights, shapes), then the node results, the inexact roots and the overflows."""
    ops = {op: 0 for op in OPS}
    leaf_dtypes = {t: 0 for t in CONCRETE}
    results = {t: 0 for t in TAGS + NARROW}
    lits = {'i': 0, 'f': 0, 'c': 0, 'strong scalar': 0, 'Eigen expression leaf': 0}
    casts = {t: 0 for t in CONCRETE}
    ranks = {r: 0 for r in range(5)}
    heights = {h: 0 for h in range(1, 7)}
    inexact_roots = overflow = 0
    for t in trees:
        ranks[t['rank']] += 1
        heights[height(t['root'])] += 1
        inexact_roots += not t['root'].exact
        overflow += t['overflow']
        for tag in t['leaves']:
            leaf_dtypes[tag] += 1
        for n in walk(t['root']):
            if isinstance(n, Node):
                ops[n.op] += 1
                results[n.tag] += 1
                if n.op == 'cast':
                    casts[n.cast_to] += 1
            elif isinstance(n, Lit):
                lits[n.kind] += 1
            elif isinstance(n, Strong):
                lits['strong scalar'] += 1
            elif isinstance(n, Leaf) and n.reshaped:
                lits['Eigen expression leaf'] += 1
    shapes = {'broadcast trees': 0, 'leaf of lower rank': 0, 'leaf stretched along a size-1 axis': 0,
              'broadcast leaf at position 0': 0, 'broadcast leaf at position 1': 0, 'broadcast leaf at position 2': 0,
              'stride leaf': 0, 'slice leaf': 0, 'strided destination': 0, 'broadcast trees through to_eigen': 0,
              'reduced trees': 0, 'reduced broadcast trees': 0, 'reduced trees of rank 3 or more': 0}
    for pair in range(4):
        shapes[f'reduction pair {pair}'] = 0
    for t in trees:
        out = t['out_dims']
        bc = False
        used = sorted({n.idx for n in walk(t['root']) if isinstance(n, Leaf)})
        for j in used:
            d = t['leaf_dims'][j]
            lower = len(d) < len(out)
            stretched = any(x == 1 and out[len(out) - len(d) + k] > 1 for k, x in enumerate(d))
            shapes['leaf of lower rank'] += lower
            shapes['leaf stretched along a size-1 axis'] += stretched
            if (lower or stretched) and j < 3:
                shapes[f'broadcast leaf at position {j}'] += 1
            bc = bc or lower or stretched
        shapes['broadcast trees'] += bc
        for how, _, _ in t['strided'].values():
            shapes[f'{how} leaf'] += 1
        shapes['strided destination'] += t['strided_dst']
        shapes['broadcast trees through to_eigen'] += bc and t['to_eigen']
        if t['reduce'] and len(out) > 0:
            shapes['reduced trees'] += 1
            shapes['reduced broadcast trees'] += bc
            shapes['reduced trees of rank 3 or more'] += len(out) >= 3
            shapes[f'reduction pair {t["reduce_pair"]}'] += 1
    return (ops, leaf_dtypes, lits, casts, ranks, heights, shapes), results, inexact_roots, overflow


def covered(trees):
    """The (kind, key) pairs the trees exercise among those a run must."""
    required = counts(trees)[0]
    return {(i, k) for i, d in enumerate(required) for k, v in d.items() if v > 0}


def take_covering(trees, take):
    """`take` of the trees (in their order) that cover what the whole run covers: greedily the tree that adds
    the most that is not covered yet, then the first of the others."""
    need = covered(trees)
    each = [covered([t]) for t in trees]
    chosen = set()
    while need and len(chosen) < take:
        best = max((i for i in range(len(trees)) if i not in chosen), key=lambda i: (len(each[i] & need), -i))
        if not each[best] & need:
            break
        chosen.add(best)
        need -= each[best]
    for i in range(len(trees)):
        if len(chosen) >= take:
            break
        chosen.add(i)
    return [trees[i] for i in sorted(chosen)]


def coverage(trees, gen):
    (ops, leaf_dtypes, lits, casts, ranks, heights, shapes), results, inexact_roots, overflow = counts(trees)
    missing = [k for d in (ops, leaf_dtypes, lits, casts, ranks, heights, shapes) for k, v in d.items() if v == 0]
    if missing:
        sys.exit(f'gen.py: not covered: {missing}')
    same = sum(t['dst'] == mat(t['root'].tag) and not t['dst_map'] for t in trees)
    maps = sum(t['dst_map'] for t in trees)
    other = sum(t['dst'] != mat(t['root'].tag) and not t['dst_map'] for t in trees)
    lowered = sum(t['to_eigen'] for t in trees)
    expr_leaf = sum(any(isinstance(n, Leaf) and n.reshaped for n in walk(t['root'])) for t in trees)
    out = [f'trees: {len(trees)} (inexact root: {inexact_roots}, expecting overflow_error: {overflow})',
           f'evaluation: mixt::eval {len(trees)}; mixt::assign into a Tensor of the value type {same}, of another '
           f'dtype {other}, into a TensorMap {maps}; mixt::to_eigen {lowered}; with an Eigen expression leaf '
           f'(lowered path) {expr_leaf}']
    for name, d in (('operations', ops), ('leaf dtypes', leaf_dtypes), ('node results', results),
                    ('literals and other operands', lits), ('cast targets', casts), ('ranks', ranks), ('heights', heights),
                    ('shapes', shapes)):
        out.append(f'{name}: ' + ', '.join(f'{k} {v}' for k, v in d.items()))
    return '\n'.join(out) + '\n'


def write_if_different(path, text):
    try:
        with open(path) as f:
            if f.read() == text:
                return
    except FileNotFoundError:
        pass
    with open(path, 'w') as f:
        f.write(text)


if __name__ == '__main__':
    main()
