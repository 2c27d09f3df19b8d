"""X-ray oracle: every named intermediate tensor ("edge") of openai-whisper's forward pass.

The parity test compares the generated C engine with openai-whisper edge by edge, so the
first edge that disagrees names the op that is wrong. This module runs the reference model
with forward hooks and returns `{edge_name: np.ndarray float32}`.

Edge names are `<op name>.<port>` with op names as the compiler unrolls the circuits
(`circuits/audio_transformer_encoder.json`, `circuits/audio_transformer_decoder.json`; repeat
groups become `blocks.<i>.<op>`, see tools/codegen/graph.py). Every array is token-major
`[rows, width]` with the batch dimension dropped: rows are mel frames / audio positions /
decoder tokens, width is channels. Conv outputs are transposed from PyTorch's [channels,
time] to the token-major layout the conv kernels write. Self-attention K/V are the token rows
of this call (the circuit stores them into the head-major cache); cross-attention K/V have all
`n_audio_ctx` rows of the encoder memory.

The circuits fuse each residual add into the projection before it (`linear_residual`), so
`out_proj.y`, `cross_out_proj.y` and `fc2.y` are residual sums. The projection output before
the add has no circuit edge; it is returned as `<op>.before_residual` (reference only, listed in
`REFERENCE_ONLY_PORTS`) so a mismatch can be split into "projection" vs "residual".

The mapping (E = `model.encoder`, D = `model.decoder`; i = layer; n = n_audio_ctx, d = width,
T = decoder tokens; "in(m)" is the input of module m, "out(m)" its output):

| part | edge                                     | shape      | openai-whisper tensor                         |
|------|------------------------------------------|------------|-----------------------------------------------|
| enc  | conv1.y                                  | [2n, d]    | in(E.conv2) = gelu(E.conv1(mel)), transposed  |
| enc  | conv2.y                                  | [n, d]     | gelu(out(E.conv2)), transposed                |
| enc  | positions.y                              | [n, d]     | in(E.blocks[0]) = conv2.y + positions         |
| both | blocks.i.attn_norm.y                     | [rows, d]  | out(blocks[i].attn_ln)                        |
| both | blocks.i.q_proj.y / k_proj.y / v_proj.y  | [rows, d]  | out(blocks[i].attn.query / key / value)       |
| both | blocks.i.self_attn.o                     | [rows, d]  | in(blocks[i].attn.out): heads concatenated    |
| both | blocks.i.out_proj.before_residual (ref)  | [rows, d]  | out(blocks[i].attn.out)                       |
| enc  | blocks.i.out_proj.y                      | [n, d]     | in(E.blocks[i].mlp_ln): residual after attn   |
| dec  | blocks.i.out_proj.y                      | [T, d]     | in(D.blocks[i].cross_attn_ln)                 |
| dec  | blocks.i.cross_attn_norm.y               | [T, d]     | out(D.blocks[i].cross_attn_ln)                |
| dec  | blocks.i.cross_q_proj.y                  | [T, d]     | out(D.blocks[i].cross_attn.query)             |
| dec  | blocks.i.cross_k_proj.y / cross_v_proj.y | [n, d]     | out(D.blocks[i].cross_attn.key / value)       |
| dec  | blocks.i.k_cache.dst / v_cache.dst       | [T, d]     | = k_proj.y / v_proj.y (the circuit appends    |
|      |                                          |            | them to its per-sequence head-major cache)    |
| dec  | blocks.i.cross_attn.o                    | [T, d]     | in(D.blocks[i].cross_attn.out)                |
| dec  | blocks.i.cross_qk.s                      | [H, T, n]  | whisper's qkv_attention qk: (q * Dh^-0.25) @  |
|      |                                          |            | (k * Dh^-0.25)^T per head, from cross q and k |
| dec  | blocks.i.cross_out_proj.before_residual  | [T, d]     | out(D.blocks[i].cross_attn.out) (ref)         |
| dec  | blocks.i.cross_out_proj.y                | [T, d]     | in(D.blocks[i].mlp_ln): residual after cross  |
| both | blocks.i.mlp_norm.y                      | [rows, d]  | out(blocks[i].mlp_ln)                         |
| both | blocks.i.fc1.y                           | [rows, 4d] | out(blocks[i].mlp[1]), the GELU               |
| both | blocks.i.fc2.before_residual (ref)       | [rows, d]  | out(blocks[i].mlp)                            |
| both | blocks.i.fc2.y                           | [rows, d]  | out(blocks[i]): the block output              |
| enc  | ln_post.y                                | [n, d]     | out(E.ln_post) = encoder memory               |
| dec  | embed.y                                  | [T, d]     | in(D.blocks[0]) = token + position embedding  |
| dec  | ln.y                                     | [T, d]     | out(D.ln)                                     |
| dec  | logits.y                                 | [T, vocab] | out(D) = ln.y @ token_embedding.T (decode)    |
| dec  | logit_rows.dst                           | [T, d]     | = ln.y (prefill: the rows whose logits are    |
|      |                                          |            | asked for; an X-ray asks for every row)       |
| dec  | prompt_logits.y                          | [T, vocab] | out(D) (prefill, every row asked for)         |

rows = n in the encoder, T in the decoder; (ref) = reference only, no circuit edge. The
decoder's reorder phase (kv_reorder.*) has no edge in a forward pass (`circuit_edges(...,
phase)` leaves out ops of other phases). The
attention ops' output port is `o` (the attention kernel's), every other op's is `y`.

`decoder_edges(..., first_row=p)` keeps token rows p.. only, as a decode step at position p
produces them (attention is causal, so rows p.. do not depend on how the earlier rows were
batched); cross K/V keep all rows.
"""

from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np
import torch

REFERENCE_ONLY_PORTS = ("before_residual",)

Edges = Dict[str, np.ndarray]


def is_reference_only(edge: str) -> bool:
    return edge.rsplit(".", 1)[-1] in REFERENCE_ONLY_PORTS


class _Recorder:
    """Forward hooks that copy tensors out under edge names; removed on exit."""

    def __init__(self, keep: Optional[Callable[[str], bool]]):
        self.edges: Edges = {}
        self._keep = keep
        self._handles: List = []

    def _put(self, name: str, t: torch.Tensor, transform: Optional[Callable] = None, channel_major: bool = False):
        if self._keep is not None and not self._keep(name):
            return
        t = t.detach()
        if transform is not None:
            t = transform(t)
        if t.dim() != 3 or t.shape[0] != 1:
            raise AssertionError(f"edge {name}: expected a batch of one [1, rows, width], got {tuple(t.shape)}")
        t = t[0]
        if channel_major:
            t = t.transpose(0, 1)
        self.edges[name] = np.array(t.float().contiguous().numpy(), dtype=np.float32, copy=True)

    def output(self, module: torch.nn.Module, name: str, transform=None, channel_major=False, index=None):
        def hook(_module, _args, out):
            self._put(name, out if index is None else out[index], transform, channel_major)

        self._handles.append(module.register_forward_hook(hook))

    def input(self, module: torch.nn.Module, name: str, channel_major=False):
        def hook(_module, args):
            self._put(name, args[0], None, channel_major)

        self._handles.append(module.register_forward_pre_hook(hook))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for h in self._handles:
            h.remove()
        self._handles.clear()
        return False


def _block_hooks(rec: _Recorder, block, prefix: str, cross: bool) -> None:
    rec.output(block.attn_ln, f"{prefix}attn_norm.y")
    rec.output(block.attn.query, f"{prefix}q_proj.y")
    rec.output(block.attn.key, f"{prefix}k_proj.y")
    rec.output(block.attn.value, f"{prefix}v_proj.y")
    rec.input(block.attn.out, f"{prefix}self_attn.o")
    rec.output(block.attn.out, f"{prefix}out_proj.before_residual")
    if cross:
        rec.input(block.cross_attn_ln, f"{prefix}out_proj.y")
        rec.output(block.cross_attn_ln, f"{prefix}cross_attn_norm.y")
        rec.output(block.cross_attn.query, f"{prefix}cross_q_proj.y")
        rec.output(block.cross_attn.key, f"{prefix}cross_k_proj.y")
        rec.output(block.cross_attn.value, f"{prefix}cross_v_proj.y")
        rec.input(block.cross_attn.out, f"{prefix}cross_attn.o")
        rec.output(block.cross_attn.out, f"{prefix}cross_out_proj.before_residual")
        rec.input(block.mlp_ln, f"{prefix}cross_out_proj.y")
    else:
        rec.input(block.mlp_ln, f"{prefix}out_proj.y")
    rec.output(block.mlp_ln, f"{prefix}mlp_norm.y")
    rec.output(block.mlp[1], f"{prefix}fc1.y")
    rec.output(block.mlp, f"{prefix}fc2.before_residual")
    rec.output(block, f"{prefix}fc2.y")


def _keep_fn(only: Optional[Iterable[str]]) -> Optional[Callable[[str], bool]]:
    if only is None:
        return None
    wanted = frozenset(only)
    return wanted.__contains__


def encoder_edges(model, mel, only: Optional[Iterable[str]] = None) -> Edges:
    """Edges of `model.encoder` on one window of log-mel `mel` [n_mels, 2 * n_audio_ctx].

    `only`: edge names to keep (default all; the base encoder's full set is ~250 MB).
    """
    enc = model.encoder
    x = torch.as_tensor(np.asarray(mel, dtype=np.float32)) if not isinstance(mel, torch.Tensor) else mel
    want = (model.dims.n_mels, 2 * model.dims.n_audio_ctx)
    if tuple(x.shape) != want:
        raise ValueError(f"mel has shape {tuple(x.shape)}; the encoder needs {want} (n_mels, 2 * n_audio_ctx)")
    with _Recorder(_keep_fn(only)) as rec:
        rec.input(enc.conv2, "conv1.y", channel_major=True)
        rec.output(enc.conv2, "conv2.y", transform=torch.nn.functional.gelu, channel_major=True)
        rec.input(enc.blocks[0], "positions.y")
        for i, block in enumerate(enc.blocks):
            _block_hooks(rec, block, f"blocks.{i}.", cross=False)
        rec.output(enc.ln_post, "ln_post.y")
        with torch.no_grad():
            enc(x.float()[None])
    return rec.edges


# The vocabulary projection's edge as each entry point reports it. A prefill asked for the logits
# of every prompt row (as an X-ray asks) also reports its row pick, which is the final norm itself.
LOGITS_EDGE = {"prefill": "prompt_logits.y", "decode": "logits.y"}
ROW_PICK, ROW_PICK_SOURCE = "logit_rows.dst", "ln.y"


def decoder_edges(
    model,
    tokens: Sequence[int],
    memory,
    first_row: int = 0,
    only: Optional[Iterable[str]] = None,
    phase: str = "prefill",
) -> Edges:
    """Edges of `model.decoder` running `tokens` (positions 0..T-1) against encoder `memory`
    [n_audio_ctx, n_text_state], without a KV cache. `first_row` drops the token rows before it.
    `phase` names the vocabulary projection as that entry point reports it: a prefill asked for
    the logits of every prompt row (`logit_rows.dst` = ln.y, `prompt_logits.y`), or a decode
    step (`logits.y`)."""
    if phase not in LOGITS_EDGE:
        raise ValueError(f"phase {phase!r}: the decoder's forward entry points are {', '.join(LOGITS_EDGE)}")
    dec = model.decoder
    tokens = [int(t) for t in tokens]
    if not 1 <= len(tokens) <= model.dims.n_text_ctx:
        raise ValueError(f"{len(tokens)} tokens; the decoder takes 1..{model.dims.n_text_ctx}")
    if not 0 <= first_row < len(tokens):
        raise ValueError(f"first_row {first_row} is not one of the {len(tokens)} token rows")
    m = torch.as_tensor(np.asarray(memory, dtype=np.float32)) if not isinstance(memory, torch.Tensor) else memory
    want = (model.dims.n_audio_ctx, model.dims.n_text_state)
    if tuple(m.shape) != want:
        raise ValueError(f"encoder memory has shape {tuple(m.shape)}; the decoder needs {want}")
    pick = phase == "prefill"
    if only is not None and pick and ROW_PICK in only:
        only = set(only) | {ROW_PICK_SOURCE}
    with _Recorder(_keep_fn(only)) as rec:
        rec.input(dec.blocks[0], "embed.y")
        for i, block in enumerate(dec.blocks):
            _block_hooks(rec, block, f"blocks.{i}.", cross=True)
        rec.output(dec.ln, "ln.y")
        rec.output(dec, LOGITS_EDGE[phase])
        with torch.no_grad():
            dec(torch.tensor([tokens], dtype=torch.long), m.float()[None])
    edges = rec.edges
    heads = model.dims.n_text_head
    for i in range(len(dec.blocks)):
        p = f"blocks.{i}."
        for kv in "kv":
            if f"{p}{kv}_proj.y" in edges and (rec._keep is None or rec._keep(f"{p}{kv}_cache.dst")):
                edges[f"{p}{kv}_cache.dst"] = edges[f"{p}{kv}_proj.y"]
        if (
            f"{p}cross_q_proj.y" in edges
            and f"{p}cross_k_proj.y" in edges
            and (rec._keep is None or rec._keep(f"{p}cross_qk.s"))
        ):
            edges[f"{p}cross_qk.s"] = _attention_logits(edges[f"{p}cross_q_proj.y"], edges[f"{p}cross_k_proj.y"], heads)
    if pick and ROW_PICK_SOURCE in edges and (rec._keep is None or rec._keep(ROW_PICK)):
        edges[ROW_PICK] = edges[ROW_PICK_SOURCE]
    if first_row:
        for name in edges:
            if name.endswith(".cross_qk.s"):
                edges[name] = np.ascontiguousarray(edges[name][:, first_row:])
            elif not (name.endswith(".cross_k_proj.y") or name.endswith(".cross_v_proj.y")):
                edges[name] = np.ascontiguousarray(edges[name][first_row:])
    return edges


def _attention_logits(q: np.ndarray, k: np.ndarray, heads: int) -> np.ndarray:
    """openai-whisper's qkv_attention `qk` (what its word timing hooks read), float32:
    (q * Dh^-0.25) @ (k * Dh^-0.25)^T per head, [heads, q rows, k rows]."""
    qt = torch.from_numpy(q).view(q.shape[0], heads, -1).permute(1, 0, 2)
    kt = torch.from_numpy(k).view(k.shape[0], heads, -1).permute(1, 0, 2)
    scale = qt.shape[-1] ** -0.25
    return ((qt * scale) @ (kt * scale).transpose(-1, -2)).numpy().astype(np.float32)


def circuit_edges(circuit: dict, n_layers: int, phase: Optional[str] = None) -> Tuple[List[str], Dict[str, str]]:
    """The op output edges of a circuit JSON document, unrolled as the compiler does (only the
    ops of `phase`, when given: an op's own phases, else its repeat's, else all).

    Returns (edge names in circuit order, {edge: op kind}). An op's output port is the one
    other ops read (`op:<name>.<port>`) or an output stacks, its `stores` port, or `y`.
    `op:<repeat>.<carry>` reads a repeat group's carry, which is another op's edge, and names no
    op itself.
    """
    read_ports: Dict[str, set] = {}

    def scan_refs(obj):
        if isinstance(obj, dict):
            for v in obj.values():
                scan_refs(v)
        elif isinstance(obj, list):
            for v in obj:
                scan_refs(v)
        elif isinstance(obj, str) and obj.startswith("op:"):
            name, _, port = obj[3:].partition(".")
            read_ports.setdefault(name, set()).add(port)

    scan_refs(circuit)
    edges: List[str] = []
    kinds: Dict[str, str] = {}

    def add(op: dict, prefix: str, default_phases=None):
        if phase is not None and phase not in op.get("phases", default_phases or [phase]):
            return
        ports = set(read_ports.get(op["name"], ())) | set(op.get("stores", {}))
        for port in sorted(ports or {"y"}):
            edges.append(f"{prefix}{op['name']}.{port}")
            kinds[edges[-1]] = op["kind"]

    for item in circuit["ops"]:
        if "repeat" in item:
            for i in range(n_layers):
                for op in item["ops"]:
                    add(op, f"{item['repeat']}.{i}.", item.get("phases"))
        else:
            add(item, "")
    return edges, kinds
