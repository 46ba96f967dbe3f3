"""The one A/B runner every before/after bench uses: interleaved rounds and paired ratios.

A round runs every measurement once, in the given order on even rounds and reversed on odd ones
(A B, then B A), so a slow phase of a shared machine falls on both sides alike. A figure is then
the min and the median over rounds of the ratio of two measurements taken in the same round,
never a ratio of two medians. Each bench script says what it measures and checks every reply;
this module only orders the runs and summarises them.

    from ab import alternate, paired, report
    times = alternate(rounds, [("before", lambda i: measure(BEFORE)),
                               ("after", lambda i: measure(AFTER))])
    print(report("after/before", paired(times["before"], times["after"])))
"""
import statistics


def alternate(rounds, runs, on_round=None):
    """Runs each `(name, thunk)` of `runs` once a round for `rounds` rounds, in order on even
    rounds and reversed on odd ones; `thunk(round)` returns a measurement (a number or anything
    `paired`'s `key` reads). Returns {name: [measurement per round]}. `on_round(round, order,
    measured)` is called after each round (to print it), with the names in the order they ran
    and that round's {name: measurement}."""
    results = {name: [] for name, _ in runs}
    for i in range(rounds):
        order = runs if i % 2 == 0 else list(reversed(runs))
        measured = {}
        for name, thunk in order:
            measured[name] = thunk(i)
            results[name].append(measured[name])
        if on_round is not None:
            on_round(i, [name for name, _ in order], measured)
    return results


def paired(first, second, key=lambda m: m):
    """The ratios second/first of the measurements taken in the same round."""
    return [key(b) / key(a) for a, b in zip(first, second)]


def report(label, ratios):
    """`label: min X, median Y of the paired ratios over N rounds`."""
    return (f"{label}: min {min(ratios):.3f}, median {statistics.median(ratios):.3f} "
            f"of the paired ratios over {len(ratios)} rounds")


def spread(values):
    """`min X, median Y` of one side's measurements."""
    return f"min {min(values):.2f}, median {statistics.median(values):.2f}"
