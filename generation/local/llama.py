"""A compact decoder for Llama-family models (Llama, SmolLM2, Qwen2, Mistral without sliding
windows): the local backend's fast path on the CPU.

A decode step of a 135M-parameter model needs about 0.3 GFLOP, far below what two cores
compute; what it pays for is reading the weights (540 MB a token in fp32) and the framework's
per-layer overhead (transformers' cache growing by `torch.cat`, masks built every step). So
this runner keeps the weights the step reads as int8 with a scale per output row (a quarter of
fp32's bytes, run by torch's int8-weight kernel on bf16 activations), fuses q/k/v and
gate/up into one matrix each, writes keys and values into one preallocated cache shared by
every slot (a row each, grown by doubling), and steps every active sequence in one batch with
one attention call per layer: two sequences cost little more than one, since the weights are
read once for both and no step loops over the sequences. Prompts are processed in fp32
(compute-bound, where fp32 kernels are fastest here).

Shapes: B sequences, R cache rows, H query heads, G key/value heads, D head size, T cache
positions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

SUPPORTED = frozenset({"llama", "qwen2", "mistral"})
_FIRST_CAPACITY = 256


def supported(model: Any) -> bool:
    """Can this transformers model run on the compact decoder?"""
    config = model.config
    if getattr(config, "model_type", None) not in SUPPORTED:
        return False
    rope = getattr(config, "rope_parameters", None) or getattr(config, "rope_scaling", None) or {}
    if (rope.get("rope_type") or rope.get("type") or "default") != "default":
        return False
    if getattr(config, "sliding_window", None) and getattr(config, "use_sliding_window", False):
        return False
    return getattr(config, "hidden_act", "silu") == "silu" and not getattr(config, "mlp_bias",
                                                                            False)


@dataclass
class _Layer:
    norm1: Any      # [hidden]
    qkv: Any        # decode weights: int8 [(H+2G)*D, hidden] (+ scales) or float
    qkv_scale: Any
    qkv_full: Any   # fp32 [(H+2G)*D, hidden], for prompts
    qkv_bias: Any   # [(H+2G)*D] or None
    o: Any
    o_scale: Any
    o_full: Any
    norm2: Any
    gate_up: Any
    gate_up_scale: Any
    gate_up_full: Any
    down: Any
    down_scale: Any
    down_full: Any


class LlamaRunner:
    """Prefill and batched decode steps over sequence slots (blocking; one thread at a time)."""

    def __init__(self, model: Any, weights: str = "int8") -> None:
        import torch

        self.torch = torch
        config = model.config
        self.heads = config.num_attention_heads
        self.kv_heads = getattr(config, "num_key_value_heads", None) or self.heads
        self.head_dim = getattr(config, "head_dim", None) or config.hidden_size // self.heads
        self.eps = config.rms_norm_eps
        self.weights = weights
        rope = getattr(config, "rope_parameters", None) or {}
        theta = rope.get("rope_theta") or getattr(config, "rope_theta", 10000.0)
        self.inv_freq = 1.0 / (theta ** (torch.arange(0, self.head_dim, 2,
                                                      dtype=torch.float32) / self.head_dim))
        self.act_dtype = torch.bfloat16 if weights == "int8" else torch.float32
        inner = model.model
        self.embed = inner.embed_tokens.weight.detach().float()
        self.final_norm = inner.norm.weight.detach().float()
        head = model.get_output_embeddings().weight.detach().float()
        self.head_full = head
        self.head, self.head_scale = self._decode_weight(head)
        self.layers = [self._layer(layer) for layer in inner.layers]
        self.cache = _Cache(self)

    # -- weights -----------------------------------------------------------------------

    def _decode_weight(self, w: Any) -> tuple[Any, Any]:
        torch = self.torch
        if self.weights != "int8":
            return w, None
        scale = (w.abs().amax(dim=1) / 127.0).clamp(min=1e-8)
        q = torch.round(w / scale[:, None]).clamp(-127, 127).to(torch.int8).contiguous()
        return q, scale.to(torch.bfloat16)

    def _layer(self, layer: Any) -> _Layer:
        torch = self.torch
        attn, mlp = layer.self_attn, layer.mlp
        qkv_full = torch.cat([attn.q_proj.weight, attn.k_proj.weight,
                              attn.v_proj.weight]).detach().float().contiguous()
        bias = None
        if getattr(attn.q_proj, "bias", None) is not None:
            bias = torch.cat([attn.q_proj.bias, attn.k_proj.bias, attn.v_proj.bias]).detach()
            bias = bias.float()
        gate_up_full = torch.cat([mlp.gate_proj.weight, mlp.up_proj.weight]).detach().float()
        o_full = attn.o_proj.weight.detach().float().contiguous()
        down_full = mlp.down_proj.weight.detach().float().contiguous()
        qkv, qkv_scale = self._decode_weight(qkv_full)
        o, o_scale = self._decode_weight(o_full)
        gate_up, gate_up_scale = self._decode_weight(gate_up_full.contiguous())
        down, down_scale = self._decode_weight(down_full)
        return _Layer(layer.input_layernorm.weight.detach().float(), qkv, qkv_scale, qkv_full,
                      bias, o, o_scale, o_full, layer.post_attention_layernorm.weight.detach()
                      .float(), gate_up, gate_up_scale, gate_up_full.contiguous(), down,
                      down_scale, down_full)

    def _linear(self, x: Any, w: Any, scale: Any, full: Any, decoding: bool) -> Any:
        torch = self.torch
        if not decoding:
            return torch.nn.functional.linear(x, full)
        if scale is None:
            return torch.nn.functional.linear(x, w)
        return torch.ops.aten._weight_int8pack_mm(x, w, scale)

    # -- slots ---------------------------------------------------------------------------

    def open(self, slot: int) -> None:
        self.cache.open(slot)

    def close(self, slot: int) -> None:
        self.cache.close(slot)

    def length(self, slot: int) -> int:
        return self.cache.lengths[slot]

    # -- forward ---------------------------------------------------------------------------

    def prefill(self, slot: int, ids: list[int]) -> Any:
        """Run `ids` after what the slot holds; the last position's logits [vocab] (fp32)."""
        torch = self.torch
        cache = self.cache
        start = cache.lengths[slot]
        cache.reserve(start + len(ids))
        row = cache.rows[slot]
        x = self.embed[torch.tensor(ids)]                              # [S, hidden]
        positions = torch.arange(start, start + len(ids))
        cos, sin = self._rope(positions)                               # [S, D/2]
        for index, layer in enumerate(self.layers):
            h = self._norm(x, layer.norm1)
            qkv = self._linear(h, None, None, layer.qkv_full, False)
            if layer.qkv_bias is not None:
                qkv = qkv + layer.qkv_bias
            q, k, v = self._split(qkv, len(ids))                       # [S, H|G, D]
            q, k = self._rotate(q, cos, sin), self._rotate(k, cos, sin)
            k, v = k.transpose(0, 1), v.transpose(0, 1)                # [G, S, D]
            cache.keys[index, row, :, start:start + len(ids)] = k
            cache.values[index, row, :, start:start + len(ids)] = v
            if start:  # what the slot held before, then this prompt's own keys in fp32
                k = torch.cat([cache.keys[index, row, :, :start].float(), k], dim=1)
                v = torch.cat([cache.values[index, row, :, :start].float(), v], dim=1)
            out = torch.nn.functional.scaled_dot_product_attention(
                q.transpose(0, 1).unsqueeze(0), k.unsqueeze(0), v.unsqueeze(0),
                attn_mask=self._causal(start, len(ids)), enable_gqa=True)  # [1, H, S, D]
            out = out[0].transpose(0, 1).reshape(len(ids), -1)
            x = x + self._linear(out, None, None, layer.o_full, False)
            h = self._norm(x, layer.norm2)
            x = x + self._mlp(h, layer, False)
        cache.lengths[slot] = start + len(ids)
        last = self._norm(x[-1:], self.final_norm)
        return torch.nn.functional.linear(last, self.head_full)[0]

    def step(self, slots: list[int], tokens: list[int]) -> Any:
        """One new token per slot, all in one batch; logits [B, vocab] (fp32)."""
        torch = self.torch
        cache = self.cache
        lengths = [cache.lengths[s] for s in slots]
        end = max(lengths) + 1
        cache.reserve(end)
        batch = len(slots)
        x = self.embed[torch.tensor(tokens)]                           # [B, hidden]
        positions = torch.tensor(lengths)
        cos, sin = self._rope(positions)                               # [B, D/2]
        rows = [cache.rows[s] for s in slots]
        # The batch's rows of the cache: a view where they lie together in order, else a copy.
        together = rows == list(range(rows[0], rows[0] + batch))
        row_index = torch.tensor(rows)
        # Shorter sequences see only their own positions; equal lengths need no mask.
        mask = None
        if min(lengths) != end - 1:
            mask = (torch.arange(end)[None, :] <= positions[:, None])[:, None, None, :]
        for index, layer in enumerate(self.layers):
            h = self._norm(x, layer.norm1).to(self.act_dtype)
            qkv = self._linear(h, layer.qkv, layer.qkv_scale, None, True).float()
            if layer.qkv_bias is not None:
                qkv = qkv + layer.qkv_bias
            q, k, v = self._split(qkv, batch)                          # [B, H|G, D]
            q, k = self._rotate(q, cos, sin), self._rotate(k, cos, sin)
            keys, values = cache.keys[index], cache.values[index]      # [R, G, T, D]
            keys[row_index, :, positions] = k.to(cache.dtype)
            values[row_index, :, positions] = v.to(cache.dtype)
            if together:
                keys = keys[rows[0]:rows[0] + batch, :, :end]
                values = values[rows[0]:rows[0] + batch, :, :end]
            else:
                keys = keys.index_select(0, row_index)[:, :, :end]
                values = values.index_select(0, row_index)[:, :, :end]
            out = torch.nn.functional.scaled_dot_product_attention(
                q.to(cache.dtype).unsqueeze(2), keys, values, attn_mask=mask,
                enable_gqa=True)                                        # [B, H, 1, D]
            out = out.reshape(batch, -1).to(self.act_dtype)
            x = x + self._linear(out, layer.o, layer.o_scale, None, True).float()
            h = self._norm(x, layer.norm2).to(self.act_dtype)
            x = x + self._mlp(h, layer, True).float()
        for slot, length in zip(slots, lengths, strict=True):
            cache.lengths[slot] = length + 1
        last = self._norm(x, self.final_norm).to(self.act_dtype)
        return self._linear(last, self.head, self.head_scale, None, True).float()

    # -- pieces ------------------------------------------------------------------------------

    def _mlp(self, h: Any, layer: _Layer, decoding: bool) -> Any:
        torch = self.torch
        gate_up = self._linear(h, layer.gate_up, layer.gate_up_scale, layer.gate_up_full,
                               decoding)
        gate, up = gate_up.chunk(2, dim=-1)
        return self._linear(torch.nn.functional.silu(gate) * up, layer.down, layer.down_scale,
                            layer.down_full, decoding)

    def _norm(self, x: Any, weight: Any) -> Any:
        torch = self.torch
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * weight

    def _split(self, qkv: Any, rows: int) -> tuple[Any, Any, Any]:
        d, h, g = self.head_dim, self.heads, self.kv_heads
        q = qkv[:, :h * d].view(rows, h, d)
        k = qkv[:, h * d:(h + g) * d].view(rows, g, d)
        v = qkv[:, (h + g) * d:].view(rows, g, d)
        return q, k, v

    def _rope(self, positions: Any) -> tuple[Any, Any]:
        freqs = positions.float()[:, None] * self.inv_freq[None, :]    # [S, D/2]
        return freqs.cos(), freqs.sin()

    def _rotate(self, x: Any, cos: Any, sin: Any) -> Any:
        """Rotary embedding, halves convention (transformers' rotate_half); x [S, heads, D]."""
        torch = self.torch
        half = self.head_dim // 2
        first, second = x[..., :half], x[..., half:]
        c, s = cos[:, None, :], sin[:, None, :]
        return torch.cat([first * c - second * s, second * c + first * s], dim=-1)

    def _causal(self, start: int, count: int) -> Any:
        """[S, T] boolean: prompt position i (at start + i) sees cache positions <= start + i."""
        torch = self.torch
        return torch.arange(start + count)[None, :] <= (start + torch.arange(count))[:, None]


class _Cache:
    """Every open slot's keys and values in one pair of tensors [layers, R, G, T, D], a row per
    slot, so that a decode step attends over the whole batch in one call. Rows are reused as
    slots close; both R and T grow by doubling, and all is freed once no slot is open."""

    def __init__(self, runner: LlamaRunner) -> None:
        self.runner = runner
        self.dtype = runner.act_dtype
        self.rows: dict[int, int] = {}      # slot -> row
        self.lengths: dict[int, int] = {}   # slot -> positions held
        self.keys: Any = None
        self.values: Any = None
        self.capacity = 0

    def open(self, slot: int) -> None:
        taken = set(self.rows.values())
        self.rows[slot] = next(row for row in range(len(taken) + 1) if row not in taken)
        self.lengths[slot] = 0
        self._grow(max(self.rows.values()) + 1, max(self.capacity, _FIRST_CAPACITY))

    def close(self, slot: int) -> None:
        self.rows.pop(slot, None)
        self.lengths.pop(slot, None)
        if not self.rows:
            self.keys = self.values = None
            self.capacity = 0

    def reserve(self, needed: int) -> None:
        if needed > self.capacity:
            capacity = self.capacity
            while capacity < needed:
                capacity *= 2
            self._grow(self.keys.shape[1], capacity)

    def _grow(self, rows: int, capacity: int) -> None:
        held = 0 if self.keys is None else self.keys.shape[1]
        if rows <= held and capacity <= self.capacity:
            return
        torch = self.runner.torch
        rows = max(rows, 2 * held) if rows > held else held
        shape = (len(self.runner.layers), rows, self.runner.kv_heads, capacity,
                 self.runner.head_dim)
        keys = torch.zeros(shape, dtype=self.dtype)
        values = torch.zeros(shape, dtype=self.dtype)
        if self.keys is not None:
            keys[:, :held, :, :self.capacity] = self.keys
            values[:, :held, :, :self.capacity] = self.values
        self.keys, self.values, self.capacity = keys, values, capacity
