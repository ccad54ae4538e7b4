"""models.py - test models in plain PyTorch: a BERT-style encoder layer, a GPT-2-style decoder block, a LLaMA-style decoder block, and small models for end-to-end runs."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class BertLayer(nn.Module):
    """One BERT-base encoder layer: self-attention (separate Q, K, V), add & LayerNorm, GELU MLP, add & LayerNorm."""

    def __init__(self, hidden=768, heads=12, intermediate=3072, seq=128, dropout=0.1):
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)
        self.attn_out = nn.Linear(hidden, hidden)
        self.attn_norm = nn.LayerNorm(hidden, eps=1e-12)
        self.intermediate = nn.Linear(hidden, intermediate)
        self.output = nn.Linear(intermediate, hidden)
        self.out_norm = nn.LayerNorm(hidden, eps=1e-12)
        self.dropout = nn.Dropout(dropout)
        self.input_shapes = [(1, seq, hidden)]

    def split_heads(self, x):
        b, s, _ = x.shape
        return x.view(b, s, self.heads, self.head_dim).permute(0, 2, 1, 3)

    def forward(self, x, attention_mask=None):
        q = self.split_heads(self.query(x))
        k = self.split_heads(self.key(x))
        v = self.split_heads(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        if attention_mask is not None:
            scores = scores + attention_mask
        probs = self.dropout(F.softmax(scores, dim=-1))
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        ctx = ctx.view(x.shape[0], x.shape[1], -1)
        attn = self.attn_norm(self.dropout(self.attn_out(ctx)) + x)
        inter = F.gelu(self.intermediate(attn))
        return self.out_norm(self.dropout(self.output(inter)) + attn)


class GPT2Block(nn.Module):
    """One GPT-2 decoder block: pre-LayerNorm causal self-attention (fused QKV, masked_fill), pre-LayerNorm tanh-GELU MLP."""

    def __init__(self, n_embd=768, n_head=12, block_size=128, dropout=0.1):
        super().__init__()
        self.n_head, self.n_embd = n_head, n_embd
        self.ln_1 = nn.LayerNorm(n_embd)
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.attn_proj = nn.Linear(n_embd, n_embd)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.c_fc = nn.Linear(n_embd, 4 * n_embd)
        self.mlp_proj = nn.Linear(4 * n_embd, n_embd)
        self.drop = nn.Dropout(dropout)
        self.register_buffer("bias", torch.tril(torch.ones(block_size, block_size)).view(1, 1, block_size, block_size))
        self.input_shapes = [(1, block_size, n_embd)]

    def attn(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = self.drop(F.softmax(att, dim=-1))
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.drop(self.attn_proj(y))

    def mlp(self, x):
        return self.drop(self.mlp_proj(F.gelu(self.c_fc(x), approximate="tanh")))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class RMSNorm(nn.Module):
    """LLaMA's RMSNorm written out (torch.nn.RMSNorm is newer than this torch): x * rsqrt(mean(x^2) + eps) * weight."""

    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate_half(x):
    """The rotary embedding's rotation: the last dimension's halves swapped, the first negated."""
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class LlamaBlock(nn.Module):
    """One LLaMA-style decoder block (TinyLlama's sizes: 2048 wide, 32 heads of 64, 4 key-value heads, SwiGLU MLP
    5632 wide): pre-RMSNorm causal self-attention with rotary embeddings on Q and K (cos/sin tables as buffers,
    rotate_half by slices, cat and neg), grouped-query attention (K and V expanded from 4 to 32 heads), softmax
    over a masked_fill causal mask; pre-RMSNorm SwiGLU MLP (silu(gate(x)) * up(x), then down).  No biases."""

    def __init__(self, dim=2048, n_heads=32, n_kv_heads=4, hidden=5632, seq=2048, rope_theta=10000.0):
        super().__init__()
        self.n_heads, self.n_kv_heads, self.head_dim = n_heads, n_kv_heads, dim // n_heads
        self.attention_norm = RMSNorm(dim)
        self.wq = nn.Linear(dim, n_heads * self.head_dim, bias=False)
        self.wk = nn.Linear(dim, n_kv_heads * self.head_dim, bias=False)
        self.wv = nn.Linear(dim, n_kv_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(n_heads * self.head_dim, dim, bias=False)
        self.ffn_norm = RMSNorm(dim)
        self.w1 = nn.Linear(dim, hidden, bias=False)   # gate
        self.w3 = nn.Linear(dim, hidden, bias=False)   # up
        self.w2 = nn.Linear(hidden, dim, bias=False)   # down
        inv = 1.0 / (rope_theta ** (torch.arange(0, self.head_dim, 2).float() / self.head_dim))
        freqs = torch.outer(torch.arange(seq).float(), inv)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos", emb.cos())
        self.register_buffer("sin", emb.sin())
        self.register_buffer("mask", torch.tril(torch.ones(seq, seq)).view(1, 1, seq, seq))
        self.input_shapes = [(1, seq, dim)]

    def rope(self, x, T):
        return x * self.cos[:T] + rotate_half(x) * self.sin[:T]

    def repeat_kv(self, x):
        B, kv, T, hd = x.shape
        rep = self.n_heads // kv
        return x[:, :, None, :, :].expand(B, kv, rep, T, hd).reshape(B, kv * rep, T, hd)

    def attn(self, x):
        B, T, _ = x.shape
        q = self.wq(x).view(B, T, self.n_heads, self.head_dim).transpose(1, 2)
        k = self.wk(x).view(B, T, self.n_kv_heads, self.head_dim).transpose(1, 2)
        v = self.wv(x).view(B, T, self.n_kv_heads, self.head_dim).transpose(1, 2)
        q, k = self.rope(q, T), self.rope(k, T)
        k, v = self.repeat_kv(k), self.repeat_kv(v)
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(self.head_dim)
        scores = scores.masked_fill(self.mask[:, :, :T, :T] == 0, float("-inf"))
        y = F.softmax(scores, dim=-1) @ v
        return self.wo(y.transpose(1, 2).contiguous().view(B, T, -1))

    def forward(self, x):
        h = x + self.attn(self.attention_norm(x))
        n = self.ffn_norm(h)
        return h + self.w2(F.silu(self.w1(n)) * self.w3(n))


class MLP(nn.Module):
    """Linear - ReLU - Linear - GELU - Linear: no Layout op once lowered."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(512, 1024)
        self.fc2 = nn.Linear(1024, 1024)
        self.fc3 = nn.Linear(1024, 256)
        self.input_shapes = [(256, 512)]

    def forward(self, x):
        return self.fc3(F.gelu(self.fc2(torch.relu(self.fc1(x)))))


class DataDependent(nn.Module):
    """Control flow on a tensor's value: torch.fx refuses it, the ONNX export traces the branch taken."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(64, 32)
        self.input_shapes = [(8, 64)]

    def forward(self, x):
        y = self.fc(x)
        if y.sum() > 0:
            return torch.relu(y)
        return torch.sigmoid(y)


class Unsupported(nn.Module):
    """torch.cumsum: no canonical op (and ONNX's CumSum has none either)."""

    input_shapes = [(4, 16)]

    def forward(self, x):
        return torch.relu(torch.cumsum(x, dim=1))


class Mismatch(nn.Module):
    """Adds tensors of shapes that do not broadcast."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 8)
        self.input_shapes = [(4, 16)]

    def forward(self, x):
        return self.fc(x) + x


def bert_layer():
    return BertLayer()


def gpt2_block():
    return GPT2Block()


def llama_block():
    return LlamaBlock()


def mlp():
    return MLP()


def data_dependent():
    return DataDependent()


def unsupported():
    return Unsupported()


def mismatch():
    return Mismatch()


def encoder_layer():
    """PyTorch's own nn.TransformerEncoderLayer (traced through, as nn.MultiheadAttention is)."""
    m = nn.TransformerEncoderLayer(256, 4, 1024, batch_first=True, activation="gelu")
    m.input_shapes = [(1, 64, 256)]
    return m
