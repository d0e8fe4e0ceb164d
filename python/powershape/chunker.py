"""Online chunk-count selection in a training loop (the C API's ps_chunker):

    from powershape import AdaptiveChunker
    chunker = AdaptiveChunker(objective="time")          # counts 1, 2, 4, ..., 64
    for batch in loader:
        chunks = chunker.next()
        start.record(); loss = step(batch, chunks); end.record(); end.synchronize()
        chunker.report(chunks, start.elapsed_time(end))  # ms; joules too for energy objectives

It explores the counts by successive halving (a count far worse after one step is dropped at
once), settles on the best, probes its neighbours now and then, and searches again among them
when a CUSUM on the chosen count's objective says conditions moved (heat, a power limit, another
process on the GPU).
"""
import ctypes
from typing import Optional, Sequence

from ._lib import check, lib


class AdaptiveChunker:
    def __init__(self, arms: Optional[Sequence[int]] = None, objective: str = "time", power_limit_w: float = 0.0):
        """arms: the chunk counts (default 1, 2, 4, ..., 64); objective: "time", "energy", "edp"
        or "cost:ETA" (Zeus' cost, which needs power_limit_w)."""
        arr = (ctypes.c_int * len(arms))(*arms) if arms is not None else None
        self._c = lib().ps_chunker_open(
            arr, len(arms) if arms is not None else 0, objective.encode(), float(power_limit_w)
        )
        check(self._c)

    def next(self) -> int:
        """The chunk count for the next step."""
        return lib().ps_chunker_next(self._c)

    def report(self, chunks: int, ms: float, joules: float = 0.0) -> None:
        """What the step that used `chunks` took: its time in ms, and its energy in J."""
        check(lib().ps_chunker_report(self._c, int(chunks), float(ms), float(joules)) == 0)

    @property
    def best(self) -> int:
        return lib().ps_chunker_best(self._c)

    @property
    def settled(self) -> bool:
        return bool(lib().ps_chunker_settled(self._c))

    def __del__(self):
        if getattr(self, "_c", None):
            lib().ps_chunker_close(self._c)
            self._c = None
