"""PyTorch's own answers to a large-vocabulary LM head, as a 2026 user reaches for them before any
library: the plain loss compiled by Inductor (which chunks a loss by itself), and
torch.nn.functional.linear_cross_entropy where the installed torch has it. Shared by bench/peers.py
(the LM head alone) and bench/finetune_peers.py (a training step).

torch_peers() returns ({name: fn(hidden [N, D], weight [V, D], targets [N]) -> mean loss}, notes):
a note for each peer this torch lacks, naming its version, so that a table never drops one
silently.
"""
import torch


def _plain(hidden, weight, targets):
    return torch.nn.functional.cross_entropy((hidden @ weight.t()).float(), targets, ignore_index=-100)


def torch_peers():
    out, notes = {}, []
    version = torch.__version__.split("+")[0]
    if hasattr(torch, "compile"):
        out["torch.compile"] = torch.compile(_plain, dynamic=False)
    else:
        notes.append(f"torch.compile: not in torch {version}")
    lce = getattr(torch.nn.functional, "linear_cross_entropy", None)
    if lce is not None:
        out["torch LCE"] = lambda hidden, weight, targets: lce(hidden, weight, targets)
    else:
        notes.append(f"torch.nn.functional.linear_cross_entropy: not in torch {version}")
    return out, notes
