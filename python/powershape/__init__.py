"""powershape from Python: energy and throttling of named windows of your program (Monitor), and
the chunked LM head + cross-entropy for PyTorch (powershape.torch), and the online chunk-count
chooser (AdaptiveChunker). Pure Python over the C API
(libpowershape_c.so); it does not compile against torch."""
from ._lib import DeviceError, InvalidInputError, PowershapeError, UnsupportedError
from .chunker import AdaptiveChunker
from .monitor import GpuWindow, Monitor, Window, now_ns
from .step import Step, step

__version__ = "0.3.0"


def library_version() -> str:
    """The loaded libpowershape_c's version."""
    from ._lib import lib

    return lib().ps_version().decode()


__all__ = [
    "AdaptiveChunker",
    "Monitor",
    "Window",
    "GpuWindow",
    "PowershapeError",
    "InvalidInputError",
    "UnsupportedError",
    "DeviceError",
    "now_ns",
    "step",
    "Step",
    "library_version",
    "__version__",
]
