#!/usr/bin/env python3
"""mixt's benchmark report: runs mixt-bench, prints one table per size, writes the JSON, the tables and a plot.

    report.py --bench build/release/bench/mixt-bench --out build/release/report [--mode quick|full|smoke]

The mode defaults to $MIXT_REPORT_MODE, else quick:
    quick  7 rounds, 0.05 s minimum time per run (three to four minutes on 2 cores)
    full   10 rounds, 0.5 s minimum time per run
    smoke  2 rounds, 0.001 s, size 4096 only (ctest: the machinery works, the numbers mean nothing)
A round runs every single-threaded variant of an expression at a size once, in turn (mixt-bench --mixt_rounds),
so that the variants compared in a row of the tables are measured side by side, interleaved in time: a drift of
the shared machine's speed over seconds then reaches all of them alike. The rounds of mixt_threads follow. Each
round places the arrays anew (bench/suite.hpp, arena): the variants of a round share one placement, the rounds
of a row see different ones.
$MIXT_REPORT_FILTER is passed as --benchmark_filter, $MIXT_REPORT_SIZES as --mixt_sizes (e.g. 4096,262144).

To publish a run in docs/benchmarks.md (between its `<!-- report:begin -->` and `<!-- report:end -->` markers,
with the plot copied to docs/bench_gbps.svg), format the run's JSON again without rerunning it:

    bench/report.py --json build/release/report/bench.json --out build/release/report --update-doc docs/benchmarks.md

Every GB/s figure is the median over the rounds of bytes_per_second (for a JSON of repetitions instead, Google
Benchmark's `_median` aggregate); every ratio (mixt/hand_loop, mixt/eigen_cast, mixt % traffic and their
geometric means) is the median over the rounds of the ratio within each round, where the bytes are those of the
fused expression (every leaf read once, the result written once), whatever the variant does; GB/s are 10^9 bytes
per second. Under each table, the rows whose mixt/hand_loop or mixt/eigen_cast is below 1.00, or whose mixt %
traffic is below 90, are listed with the lowest and highest ratio of their single rounds: a row behind in every
round differs from one whose rounds fall on both sides of the mark. Written under --out: bench.json (Google
Benchmark's JSON), console.txt (its console output), report.md (the text printed), gbps.dat, gbps.gp and
gbps.svg (the plot; needs gnuplot). Standard library only.
"""

import argparse
import json
import math
import os
import re
import shutil
import subprocess
import sys
import time

MODES = {
    "quick": {"rounds": 7, "min_time": 0.05, "sizes": None},
    "full": {"rounds": 10, "min_time": 0.5, "sizes": None},
    "smoke": {"rounds": 2, "min_time": 0.001, "sizes": "4096"},
}
VARIANTS = ["mixt", "hand_loop", "eigen_cast", "eigen_unfused", "mixt_threads", "traffic"]
SIZE_LABELS = {4096: "L1", 262144: "L2/L3", 16777216: "DRAM"}
NAME = re.compile(r"^BM_(?P<variant>\w+?)/(?:(?P<id>[EBRSQ]\d+)/)?(?P<n>\d+)(?:/real_time)?$")


def say(text=""):
    print(text, flush=True)


def run_benchmarks(bench, out_dir, mode):
    settings = MODES[mode]
    json_path = os.path.join(out_dir, "bench.json")
    console_path = os.path.join(out_dir, "console.txt")
    args = [
        bench,
        "--benchmark_out=" + json_path,
        "--benchmark_out_format=json",
        "--mixt_rounds=%d" % settings["rounds"],
        "--benchmark_repetitions=1",
        "--benchmark_min_time=%g" % settings["min_time"],
        "--benchmark_color=false",
        # Recorded in the JSON, so that --json can describe a run it did not make.
        "--benchmark_context=mixt_mode=%s,mixt_min_time=%g,mixt_load_avg=%s"
        % (mode, settings["min_time"], load_average()),
    ]
    sizes = os.environ.get("MIXT_REPORT_SIZES") or settings["sizes"]
    if sizes:
        args.append("--mixt_sizes=" + sizes)
    if os.environ.get("MIXT_REPORT_FILTER"):
        args.append("--benchmark_filter=" + os.environ["MIXT_REPORT_FILTER"])

    listed = subprocess.run(args + ["--benchmark_list_tests=true"], capture_output=True, text=True)
    if listed.returncode != 0:
        sys.stderr.write(listed.stdout + listed.stderr)
        sys.exit("report: %s failed (exit %d)" % (bench, listed.returncode))
    total = len([line for line in listed.stdout.splitlines() if line.startswith("BM_")])
    say("running %d benchmarks (%s mode: %d rounds, min time %g s); console output: %s"
        % (total, mode, settings["rounds"], settings["min_time"], console_path))

    tty = sys.stdout.isatty()
    progress = Progress(total, tty)
    with open(console_path, "w") as console:
        process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for line in process.stdout:
            console.write(line)
            name = line.split(" ", 1)[0]
            if name.startswith("BM_"):
                progress.finished(name)
        process.wait()
    progress.close()
    if process.returncode != 0:
        with open(console_path) as console:
            sys.stderr.write("".join(console.readlines()[-30:]))
        sys.exit("report: %s failed (exit %d)" % (bench, process.returncode))
    return json_path


def clock(seconds):
    seconds = int(round(seconds))
    return "%d:%02d" % (seconds // 60, seconds % 60)


class Progress:
    """What the run is timing and the time left: on a terminal one updating line, else a line each time the
    run moves on to another expression or size (a log, CI, `| tee`)."""

    def __init__(self, total, tty):
        self.total, self.tty = total, tty
        self.done = 0
        self.start = time.monotonic()
        self.current = None

    def finished(self, name):
        self.done += 1
        match = NAME.match(name)
        what = name
        if match:
            n = int(match.group("n"))
            size = "n = %d%s" % (n, " (%s)" % SIZE_LABELS[n] if n in SIZE_LABELS else "")
            what = "%s, %s" % (match.group("id") or match.group("variant"), size)
        elapsed = time.monotonic() - self.start
        left = elapsed / self.done * (self.total - self.done)
        text = "[%d/%d] %s; %s elapsed, about %s left" % (self.done, self.total, what, clock(elapsed), clock(left))
        if self.tty:
            sys.stdout.write("\r  %-76s" % text)
            sys.stdout.flush()
        elif what != self.current:
            say("  " + text)
        self.current = what

    def close(self):
        if self.tty:
            sys.stdout.write("\r" + " " * 78 + "\r")
        say("timed %d benchmarks in %s" % (self.done, clock(time.monotonic() - self.start)))


def load_average():
    try:
        return " ".join("%.2f" % x for x in os.getloadavg())
    except (AttributeError, OSError):
        return "?"


def lscpu():
    try:
        text = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return {}
    fields = {}
    for line in text.splitlines():
        key, _, value = line.partition(":")
        fields.setdefault(key.strip(), value.strip())
    return fields


def machine_line(context):
    cpu = lscpu()
    model = cpu.get("Model name", "unknown CPU")
    cpus = cpu.get("CPU(s)", str(context.get("num_cpus", "?")))
    try:
        cores = int(cpu["Core(s) per socket"]) * int(cpu.get("Socket(s)", "1"))
    except (KeyError, ValueError):
        cores = None
    caches = ", ".join(
        "L%d%s %s" % (c["level"], {"Data": "d", "Instruction": "i"}.get(c["type"], ""), human_bytes(c["size"]))
        for c in context.get("caches", []) if c.get("type") != "Instruction")
    text = "%s, %s CPUs" % (model, cpus)
    if cores is not None:
        text += " (%d cores)" % cores
    if caches:
        text += "; caches (per instance) %s" % caches
    return text


def human_bytes(n):
    for unit in ["B", "KiB", "MiB", "GiB"]:
        if n < 1024 or unit == "GiB":
            return ("%d %s" % (n, unit)) if n == int(n) else ("%.1f %s" % (n, unit))
        n /= 1024.0


def read_results(json_path):
    with open(json_path) as f:
        data = json.load(f)
    context = data.get("context", {})
    rounds = {}  # (variant, id or None, n) -> [GB/s of each run]
    medians = {}  # the same from Google Benchmark's _median aggregates (a run with --benchmark_repetitions)
    for row in data.get("benchmarks", []):
        m = NAME.match(row.get("run_name", ""))
        if not m and row.get("run_name", "").startswith("BM_"):
            # A row of the suite this script does not know (a new id prefix): say so rather than leave it out.
            sys.exit("report: %s is not a name the report knows (NAME in bench/report.py)" % row["run_name"])
        if not m or "bytes_per_second" not in row or row.get("error_occurred"):
            continue
        key = (m.group("variant"), m.group("id"), int(m.group("n")))
        if row.get("run_type") == "aggregate":
            if row.get("aggregate_name") == "median":
                medians[key] = row["bytes_per_second"] / 1e9
        elif row.get("run_type", "iteration") == "iteration":
            rounds.setdefault(key, []).append(row["bytes_per_second"] / 1e9)
    gbps = {key: median(values) for key, values in rounds.items()}
    gbps.update(medians)
    return context, gbps, {key: values for key, values in rounds.items() if key not in medians}


def median(values):
    v = sorted(values)
    k = len(v) // 2
    return v[k] if len(v) % 2 else (v[k - 1] + v[k]) / 2


def expressions(context, gbps, prefix="E"):
    """[(id, text, result dtype)] of the rows whose id starts with prefix (E: E1-E12 at every size; B: the shape
    rows, R: the reductions, S: the reductions along short rows and Q: the narrow dtypes, at their own sizes), in
    number order, from the program's context."""
    found = {}
    for key, value in context.items():
        if re.fullmatch(r"mixt_[EBRSQ]\d+", key):
            text, _, rest = value.partition(" -> ")
            found[key[len("mixt_"):]] = (text, rest.split(" ")[0])
    ids = sorted({i for (_, i, _) in gbps if i and i.startswith(prefix)}, key=lambda i: int(i[1:]))
    return [(i,) + found.get(i, ("?", "?")) for i in ids]


def fmt(x, digits=1):
    return "–" if x is None else "%.*f" % (digits, x)


def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b


def round_ratios(runs, num, den):
    """num/den within each round, for the keys num and den (the k-th run of a benchmark is its run in round k: the
    same placement of the arrays, measured side by side); [] where the runs do not pair up."""
    a, b = runs.get(num), runs.get(den)
    if a and b and len(a) == len(b) and len(a) > 1 and all(b):
        return [x / y for x, y in zip(a, b)]
    return []


def paired_ratio(runs, gbps, num, den):
    """num/den: the median of round_ratios, or the ratio of the medians where the runs do not pair up."""
    rs = round_ratios(runs, num, den)
    return median(rs) if rs else ratio(gbps.get(num), gbps.get(den))


# The tables' ratio columns: (label, numerator variant, denominator variant, mark, scale of the printed figure,
# digits). The rows below a column's mark are listed under the table with the range of their single rounds.
RATIO_COLUMNS = [
    ("mixt/hand_loop", "mixt", "hand_loop", 1.0, 1, 2),
    ("mixt/eigen_cast", "mixt", "eigen_cast", 1.0, 1, 2),
    ("mixt % traffic", "mixt", "traffic", 0.9, 100, 0),
]


def below_mark_lines(runs, gbps, exprs, n, columns=None):
    """A line per ratio column (RATIO_COLUMNS, and the compute floor's where a row has one) that has rows below its
    mark at size n: each such row's median ratio and the lowest and highest ratio of its single rounds, so that a
    reader can tell a row that is behind in every round from one whose rounds fall on both sides of the mark, and,
    where the row's compute floor is below the mark against the same baseline, the floor's own ratio. A row with a
    compute floor meets the traffic mark where mixt reaches 80% of its floor, and the reverse."""
    lines = []
    for label, num, den, mark, scale, digits in columns or RATIO_COLUMNS:
        found = []
        for i, _, _ in exprs:
            r = paired_ratio(runs, gbps, (num, i, n), (den, i, n))
            if r is None or round(r * scale, digits) >= mark * scale:
                continue
            compute = paired_ratio(runs, gbps, ("mixt", i, n), ("compute_floor", i, n))
            traffic = paired_ratio(runs, gbps, ("mixt", i, n), ("traffic", i, n))
            if (den == "traffic" and compute is not None and compute >= COMPUTE_COLUMN[3]) or (
                    den == "compute_floor" and traffic is not None and traffic >= 0.9):
                continue
            rs = round_ratios(runs, (num, i, n), (den, i, n))
            spread = " (rounds %s to %s" % (fmt(min(rs) * scale, digits), fmt(max(rs) * scale, digits)) if rs else ""
            # A baseline that the row's compute floor (its work with mixt's bits, nothing else) does not reach
            # either: the ratio the floor itself gets.
            floor = paired_ratio(runs, gbps, ("compute_floor", i, n), (den, i, n)) if den in ("hand_loop", "eigen_cast") else None
            if floor is not None and floor < mark:
                spread += ("; " if spread else " (") + "the compute floor's own %s" % fmt(floor * scale, digits)
            found.append("%s %s%s" % (i, fmt(r * scale, digits), spread + (")" if spread else "")))
        if found:
            lines.append("- %s below %s: %s." % (label, fmt(mark * scale, digits), ", ".join(found)))
    return lines


def tables(context, gbps, exprs, runs=None):
    runs = runs or {}
    sizes = sorted({n for (_, i, n) in gbps if i is None or i.startswith("E")})
    lines = []
    for n in sizes:
        label = SIZE_LABELS.get(n)
        lines.append("### n = %d%s" % (n, " (%s)" % label if label else ""))
        lines.append("")
        # The compute floor's variant and ratio, where a row at this size has one (E4, E10).
        with_compute = any(v == "compute_floor" and m == n for (v, _, m) in gbps)
        variants = VARIANTS + (["compute_floor"] if with_compute else [])
        columns = RATIO_COLUMNS + ([COMPUTE_COLUMN] if with_compute else [])
        header = ["id", "expression", "result"] + variants + [column[0] for column in columns]
        lines.append("| " + " | ".join(header) + " |")
        lines.append("|" + "|".join(["---"] * 3 + ["---:"] * (len(header) - 3)) + "|")
        for i, text, result in exprs:
            v = {variant: gbps.get((variant, i, n)) for variant in variants}
            if all(x is None for x in v.values()):
                continue
            cells = [i, "`%s`" % text, result] + [fmt(v[variant]) for variant in variants]
            for _, num, den, _, scale, digits in columns:
                r = paired_ratio(runs, gbps, (num, i, n), (den, i, n))
                cells.append(fmt(None if r is None else r * scale, digits))
            lines.append("| " + " | ".join(cells) + " |")
        means = []
        for label, num, den in (("mixt/hand_loop", "mixt", "hand_loop"), ("mixt/eigen_cast", "mixt", "eigen_cast"),
                                ("mixt_threads/mixt", "mixt_threads", "mixt")):
            rs = [paired_ratio(runs, gbps, (num, i, n), (den, i, n)) for i, _, _ in exprs]
            rs = [r for r in rs if r]
            if rs:
                means.append("%s %s" % (label, fmt(math.exp(sum(math.log(r) for r in rs) / len(rs)), 2)))
        if means:
            lines.append("")
            lines.append("Geometric means over the expressions: " + ", ".join(means) + ".")
        below = below_mark_lines(runs, gbps, exprs, n, columns)
        if below:
            lines.append("")
            lines.append("Rows below the mark, with the range of their single rounds:")
            lines.append("")
            lines += below
        roof = [(k, gbps.get((k, None, n))) for k in ("stream_copy", "stream_triad")]
        roof = ["%s %s GB/s" % (k, fmt(x)) for k, x in roof if x is not None]
        if roof:
            lines.append("")
            lines.append("Roofline (f32): " + ", ".join(roof) + ".")
        lines.append("")
    return lines


# The shape rows' marks (issue 17): mixt % traffic at least 90 (80 for B1, a channel-last image), mixt at least its
# hand loop and 3x eigen_cast.
SHAPE_MARKS = {"traffic": 0.9, "B1": 0.8, "hand_loop": 1.0, "eigen_cast": 3.0}
SHAPE_VARIANTS = ["mixt", "mixt_threads", "hand_loop", "eigen_cast", "traffic"]


# The reduction rows' marks (issue 18): mixt % traffic at least 90 (or 80% of a compute floor, issue 43: R3, R4),
# mixt at least its hand loop and 3x eigen_cast.
REDUCTION_MARKS = {"traffic": 0.9, "hand_loop": 1.0, "eigen_cast": 3.0, "compute_floor": 0.8}
# Reductions along short rows (S rows): mixt at least as fast as its hand loop and Eigen, 90% of the traffic floor.
SHORT_ROW_MARKS = {"traffic": 0.9, "hand_loop": 1.0, "eigen_cast": 1.0}
# The narrow dtypes' rows (Q rows, issue 41): mixt % traffic at least 90, mixt ahead of its hand loop and of Eigen's
# unaryExpr/binaryExpr (the eigen_cast column).
NARROW_MARKS = {"traffic": 0.9, "hand_loop": 1.0, "eigen_cast": 1.0, "compute_floor": 0.8}
# A row whose conversion work bounds it on one core states a compute floor (its `compute_floor` variant: a hand loop
# doing only the conversions and arithmetic, in registers); it meets the traffic mark where mixt reaches 80% of that.
COMPUTE_COLUMN = ("mixt % compute", "mixt", "compute_floor", 0.8, 100, 0)


def mark_of(row_marks, i):
    """The traffic mark of row i."""
    return row_marks.get(i, row_marks["traffic"])


def shape_table(gbps, exprs, runs=None, title="Shapes: broadcasting, Dense operands, views as destinations",
                marks=None, marks_text="mixt % traffic 90, B1 80; mixt/hand_loop 1; mixt/eigen_cast 3"):
    """Rows at their own full sizes (B: broadcasting, Dense operands, views as destinations; R: reductions)."""
    runs = runs or {}
    marks = marks or SHAPE_MARKS
    row_marks = marks
    if not exprs:
        return []
    # The compute floor's variant and ratio, where a row of this table has one.
    with_compute = any(v == "compute_floor" and j in {i for i, _, _ in exprs} for (v, j, _) in gbps)
    variants = SHAPE_VARIANTS + (["compute_floor"] if with_compute else [])
    columns = RATIO_COLUMNS + ([COMPUTE_COLUMN] if with_compute else [])
    lines = ["### %s (full sizes)" % title, ""]
    header = ["id", "expression", "result", "elements"] + variants + [c[0] for c in columns]
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "|".join(["---"] * 3 + ["---:"] * (len(header) - 3)) + "|")
    below = []
    for i, text, result in exprs:
        ns = sorted({n for (_, j, n) in gbps if j == i})
        for n in ns:
            cells = [i, "`%s`" % text, result, str(n)] + [fmt(gbps.get((v, i, n))) for v in variants]
            compute = paired_ratio(runs, gbps, ("mixt", i, n), ("compute_floor", i, n))
            for label, num, den, _, scale, digits in columns:
                r = paired_ratio(runs, gbps, (num, i, n), (den, i, n))
                cells.append(fmt(None if r is None else r * scale, digits))
                mark = row_marks.get(i, row_marks["traffic"]) if den == "traffic" else row_marks[den]
                # The traffic mark, or the compute floor's where the row has one; each listed where both miss.
                met_other = (den == "traffic" and compute is not None and compute >= row_marks["compute_floor"]) or (
                    den == "compute_floor" and r is not None
                    and (paired_ratio(runs, gbps, ("mixt", i, n), ("traffic", i, n)) or 0) >= mark_of(row_marks, i))
                if r is not None and r < mark and not met_other:
                    rs = round_ratios(runs, (num, i, n), (den, i, n))
                    spread = (" (rounds %s to %s)" % (fmt(min(rs) * scale, digits), fmt(max(rs) * scale, digits))
                              if rs else "")
                    below.append("%s %s %s, mark %s%s" % (i, label, fmt(r * scale, digits), fmt(mark * scale, digits),
                                                          spread))
            lines.append("| " + " | ".join(cells) + " |")
    if below:
        lines += ["", "Below the marks (%s): " % marks_text + "; ".join(below) + "."]
    lines.append("")
    return lines


def method(context):
    date = context.get("date", "?")
    if "mixt_rounds" in context and context.get("mixt_rounds") != "1":
        how = ("median of %s rounds of at least %s s per run (the single-threaded variants of an expression at a "
               "size once per round, in turn, each round starting one variant further and placing the arrays "
               "anew; then the rounds of mixt_threads)"
               % (context["mixt_rounds"], context.get("mixt_min_time", "?")))
    else:
        how = "median of %s repetitions of at least %s s each" % (
            context.get("mixt_repetitions", "?"), context.get("mixt_min_time", "?"))
    lines = [
        "- Machine: %s." % machine_line(context),
        "- Compiler: %s. Flags: `%s`." % (context.get("mixt_compiler", "?"), context.get("mixt_flags", "?")),
        "- Date: %s. Load average at the start: %s." % (date, context.get("mixt_load_avg", "?")),
        "- Method: %s mode, %s, wall-clock time%s; mixt_threads: "
        "Eigen::ThreadPoolDevice with %s threads (the caller and a pool of one fewer). Google Benchmark's library reports its own build as %s."
        % (context.get("mixt_mode", "?"), how,
           "; ratios are medians of the ratios within each round" if "mixt_rounds" in context and
           context.get("mixt_rounds") != "1" else "", context.get("mixt_threads", "?"),
           context.get("library_build_type", "?")),
    ]
    if not re.search(r"(^| )-O[23s]", context.get("mixt_flags", "-O2")):
        lines.append("- WARNING: not an optimized build; these numbers are not meaningful.")
    return lines


def plot(out_dir, context, gbps, exprs):
    sizes = sorted({n for (_, i, n) in gbps if i and i.startswith("E")})
    if not sizes:
        return None
    dat = os.path.join(out_dir, "gbps.dat")
    with open(dat, "w") as f:
        for n in sizes:
            f.write("id " + " ".join(VARIANTS) + "\n")
            for i, _, _ in exprs:
                values = [gbps.get((variant, i, n)) for variant in VARIANTS]
                f.write(i + " " + " ".join("?" if x is None else "%.4g" % x for x in values) + "\n")
            f.write("\n\n")
    svg = os.path.join(out_dir, "gbps.svg")
    gp = os.path.join(out_dir, "gbps.gp")
    title = "mixt-bench: GB/s by variant (median; %s; %s)" % (
        lscpu().get("Model name", "?"), context.get("mixt_compiler", "?").split(" (")[0])
    with open(gp, "w") as f:
        f.write("# Generated by bench/report.py; run: gnuplot gbps.gp\n")
        f.write('set terminal svg size 1200,%d dynamic noenhanced font "sans,11" background "white"\n'
                % (340 * len(sizes) + 60))
        f.write('set output "%s"\n' % svg)
        f.write('set datafile missing "?"\n')
        f.write("set style data histograms\nset style histogram clustered gap 1\n")
        f.write("set style fill solid 0.85 border -1\nset boxwidth 0.9\n")
        f.write("set logscale y\nset grid ytics\nset ylabel 'GB/s'\nset key outside right top vertical\n")
        f.write('set multiplot layout %d,1 title "%s"\n' % (len(sizes), title.replace('"', "'")))
        for k, n in enumerate(sizes):
            label = SIZE_LABELS.get(n)
            f.write('set title "n = %d%s"\n' % (n, " (%s)" % label if label else ""))
            triad = gbps.get(("stream_triad", None, n))
            extra = ", %g with lines dt 2 lc rgb 'black' title 'stream triad'" % triad if triad else ""
            f.write("plot for [c=2:%d] '%s' index %d using c:xtic(1) title columnheader(c)%s\n"
                    % (len(VARIANTS) + 1, dat, k, extra))
        f.write("unset multiplot\n")
    if not shutil.which("gnuplot"):
        say("gnuplot not found: no plot (install the Debian package gnuplot-nox); script: %s" % gp)
        return None
    result = subprocess.run(["gnuplot", gp], capture_output=True, text=True)
    if result.returncode != 0:
        sys.stderr.write(result.stderr)
        say("gnuplot failed: no plot; script: %s" % gp)
        return None
    return svg


def update_doc(doc, lines, svg):
    """Writes the method and tables between the report markers of `doc` (a Markdown file) and copies the plot to
    docs/bench_gbps.svg: next to `doc` when it is in a folder named docs, else in docs/ below its folder."""
    with open(doc) as f:
        text = f.read()
    begin, end = "<!-- report:begin -->", "<!-- report:end -->"
    if text.count(begin) != 1 or text.count(end) != 1 or text.index(begin) > text.index(end):
        sys.exit("report: %s needs one %s ... %s block" % (doc, begin, end))
    body = [line.replace("### n =", "#### n =") for line in lines]
    if svg:
        folder = os.path.dirname(os.path.abspath(doc))
        docs = folder if os.path.basename(folder) == "docs" else os.path.join(folder, "docs")
        os.makedirs(docs, exist_ok=True)
        target = os.path.join(docs, "bench_gbps.svg")
        shutil.copyfile(svg, target)
        link = os.path.relpath(target, folder).replace(os.sep, "/")
        body += ["![GB/s by variant, median, log scale](%s)" % link, ""]
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    with open(doc, "w") as f:
        f.write(head + begin + "\n" + "\n".join(body).rstrip("\n") + "\n" + end + tail)
    say("Updated %s%s" % (doc, " and %s" % target if svg else ""))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bench", help="the mixt-bench program (unless --json)")
    parser.add_argument("--out", required=True, help="directory for the JSON, tables and plot")
    parser.add_argument("--mode", choices=sorted(MODES), default=os.environ.get("MIXT_REPORT_MODE") or "quick")
    parser.add_argument("--json", help="format an existing Google Benchmark JSON file instead of running")
    parser.add_argument("--update-doc", "--update-readme", dest="update_doc", metavar="DOC",
                        help="write the method and tables between the report markers of DOC (docs/benchmarks.md) "
                             "and copy the plot to docs/bench_gbps.svg (--update-readme: the old name)")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)

    if args.json:
        json_path = args.json
    elif args.bench:
        json_path = run_benchmarks(args.bench, args.out, args.mode)
    else:
        parser.error("give --bench (run the suite) or --json (format a run)")
    context, gbps, runs = read_results(json_path)
    if not gbps:
        sys.exit("report: no median rows with bytes_per_second in %s" % json_path)
    exprs = expressions(context, gbps)

    lines = ["## mixt benchmark report", ""] + method(context) + [""]
    lines += tables(context, gbps, exprs, runs)
    lines += shape_table(gbps, expressions(context, gbps, "B"), runs)
    lines += shape_table(gbps, expressions(context, gbps, "R"), runs, title="Reductions", marks=REDUCTION_MARKS,
                         marks_text="mixt % traffic 90 or mixt % compute 80; mixt/hand_loop 1; mixt/eigen_cast 3")
    lines += shape_table(gbps, expressions(context, gbps, "S"), runs, title="Reductions along short rows",
                         marks=SHORT_ROW_MARKS, marks_text="mixt % traffic 90; mixt/hand_loop 1; mixt/eigen_cast 1")
    lines += shape_table(gbps, expressions(context, gbps, "Q"), runs, title="Narrow dtypes", marks=NARROW_MARKS,
                         marks_text="mixt % traffic 90 or mixt % compute 80; mixt/hand_loop 1; mixt/eigen_cast 1")
    with open(os.path.join(args.out, "report.md"), "w") as f:
        f.write("\n".join(lines))
    say("\n".join(lines))
    svg = plot(args.out, context, gbps, exprs)
    say("Raw results: %s" % json_path)
    say("Tables: %s" % os.path.join(args.out, "report.md"))
    if svg:
        say("Plot: %s" % svg)
    if args.update_doc:
        update_doc(args.update_doc, lines[2:], svg)


if __name__ == "__main__":
    main()
