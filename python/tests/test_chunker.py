import random

import pytest

from powershape import AdaptiveChunker


def test_it_settles_on_the_cheapest_count_and_follows_a_change():
    cost = {1: 1.0, 2: 0.98, 4: 0.97, 8: 0.99, 16: 1.05, 32: 1.2, 64: 1.6}
    after = {1: 1.1, 2: 1.06, 4: 1.03, 8: 0.99, 16: 0.97, 32: 1.0, 64: 1.3}
    rng = random.Random(3)
    c = AdaptiveChunker()
    for step in range(600):
        k = c.next()
        table = cost if step < 300 else after
        c.report(k, 100 * table[k] * (1 + rng.gauss(0, 0.005)))
        if step == 299:
            assert c.settled and c.best == 4
    assert c.settled and c.best == 16


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="objective"):
        AdaptiveChunker(objective="speed")
    with pytest.raises(ValueError, match="chunk counts"):
        AdaptiveChunker(arms=[0, 2])
    c = AdaptiveChunker(arms=[1, 2])
    with pytest.raises(ValueError, match="above 0"):
        c.report(1, 0.0)
    # Reports no step could give are refused and change nothing (a negative energy once killed
    # the process; NaN silently picked a wrong count).
    for chunks, ms, joules in [(1, 10.0, -5.0), (1, 10.0, float("nan")), (1, float("inf"), 1.0), (3, 10.0, 1.0)]:
        with pytest.raises(ValueError):
            c.report(chunks, ms, joules)
    c.report(1, 10.0, 5.0)
