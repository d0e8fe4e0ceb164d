"""Training steps marked for powershape: `with powershape.step(): ...` around a step makes it a
region of the `powershape monitor`, `compare`, `tune` or `optimize` that runs the program (through
$POWERSHAPE_CONTROL, as `powershape mark` does), and, given a Monitor, a window of it too:

    with powershape.step() as s:           # under `powershape optimize -- python3 train.py`
        loss = model(**batch).loss; loss.backward(); opt.step(); opt.zero_grad()

    mon = powershape.Monitor()
    with powershape.step(monitor=mon) as s:
        ...
    print(s.window.total_energy, s.window.time)

Like a Monitor's windows, the step's edges wait for the GPUs' queued work (Zeus' sync_execution)
when torch with CUDA is imported.
"""
import contextlib
from typing import Iterator, Optional

from ._args import integer, text
from ._lib import check, lib
from .monitor import Monitor, Window, _sync


class Step:
    """What `with powershape.step()` gives: `window` (the Monitor's Window, when one was given,
    after the step), `sent` (whether a surrounding powershape received the marks), `tokens` (as
    given) and `energy_per_token` (J a token over every GPU, CodeCarbon#1347: with a Monitor and
    tokens, once the step ended; else None)."""

    def __init__(self, name: str, tokens: Optional[int] = None):
        self.name = name
        self.tokens = tokens
        self.window: Optional[Window] = None
        self.sent = False

    @property
    def energy_per_token(self) -> Optional[float]:
        if self.window is None or self.tokens is None or self.window.total_energy is None:
            return None
        return self.window.total_energy / self.tokens


@contextlib.contextmanager
def step(
    name: str = "step",
    monitor: Optional[Monitor] = None,
    sync_execution: Optional[bool] = None,
    tokens: Optional[int] = None,
) -> Iterator[Step]:
    """Marks the code inside as one region `name` (a step): for the powershape running this program
    and, when given, in `monitor`. A step that raises still ends. `tokens`: the tokens the step
    processes, for its energy a token (`powershape monitor --tokens-per-step` gives it from
    outside)."""
    text("name", name)
    if tokens is not None:
        tokens = integer("tokens", tokens, 1)
    s = Step(name, tokens)
    _sync(sync_execution, 0)
    if monitor is not None:
        monitor.begin_window(name, sync_execution=False)  # the monitor forwards the mark too
    else:
        sent = lib().ps_mark(1, name.encode(), 0)
        check(sent >= 0)
        s.sent = sent == 1
    try:
        yield s
    finally:
        _sync(sync_execution, 0)
        if monitor is not None:
            s.window = monitor.end_window(name, sync_execution=False)
        else:
            check(lib().ps_mark(0, name.encode(), 0) >= 0)
