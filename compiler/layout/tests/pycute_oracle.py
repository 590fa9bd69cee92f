"""Oracle for the differential test of cutec-layout against pycute (the nvidia-cutlass wheel's pure-Python CuTe).

Protocol: one JSON object per input line, `{"op": NAME, "a": LAYOUT, "b": ARG}` where a layout is
`{"shape": S, "stride": D}` (S, D nested JSON arrays or integers), and ARG is a layout, an integer, null (`_`) or an
array of those (a tiler). One JSON value per output line: `[size, rank, [mode sizes], [indices]]` for a layout result,
or a string (the error) when pycute fails. blocked_product and raked_product, absent from pycute, are written here as
CUTLASS C++ defines them, from pycute's logical_product and coalesce.
"""

import json
import sys

from pycute import (Layout, coalesce, complement, composition, filter, left_inverse, logical_divide, logical_product,
                    make_layout, right_inverse, size, tiled_divide, tiled_product, zipped_divide, zipped_product)

MAX_INDICES = 512


def tup(x):
    return tuple(tup(v) for v in x) if isinstance(x, list) else x


def arg(x):
    if isinstance(x, dict):
        return Layout(tup(x["shape"]), tup(x["stride"]))
    if isinstance(x, list):
        return tuple(arg(v) for v in x)
    return x


def append_to(layout, r):
    if len(layout) >= r:
        return layout
    return make_layout(*([layout[i] for i in range(len(layout))] + [Layout(1, 0)] * (r - len(layout))))


def rank_sensitive(a, b, raked):
    r = max(len(a), len(b))
    result = logical_product(append_to(a, r), append_to(b, r))
    x, y = (result[1], result[0]) if raked else (result[0], result[1])
    if r == 1:  # the single mode is (x, y), whatever their ranks
        zipped = make_layout(make_layout(x, y))
    else:
        zipped = make_layout(*[make_layout(x[i], y[i]) for i in range(r)])
    return coalesce(zipped, (1,) * r)


OPS = {
    "composition": lambda a, b: composition(a, b),
    "complement": lambda a, b: complement(a, b),
    "right_inverse": lambda a, b: right_inverse(a),
    "left_inverse": lambda a, b: left_inverse(a),
    "coalesce": lambda a, b: coalesce(a, b),
    "filter": lambda a, b: filter(a, b),
    "logical_divide": lambda a, b: logical_divide(a, b),
    "zipped_divide": lambda a, b: zipped_divide(a, b),
    "tiled_divide": lambda a, b: tiled_divide(a, b),
    "logical_product": lambda a, b: logical_product(a, b),
    "zipped_product": lambda a, b: zipped_product(a, b),
    "tiled_product": lambda a, b: tiled_product(a, b),
    "blocked_product": lambda a, b: rank_sensitive(a, b, False),
    "raked_product": lambda a, b: rank_sensitive(a, b, True),
}


def answer(case):
    try:
        result = OPS[case["op"]](arg(case["a"]), arg(case.get("b")))
        n = size(result)
        modes = [size(result[i]) for i in range(len(result))]
        return [n, len(result), modes, [result(i) for i in range(min(n, MAX_INDICES))]]
    except Exception as e:  # pycute signals failures with assertions and arithmetic errors
        return "%s: %s" % (type(e).__name__, e)


def main():
    out = []
    for line in sys.stdin:
        if line.strip():
            out.append(json.dumps(answer(json.loads(line)), separators=(",", ":")))
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
