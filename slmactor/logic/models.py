"""Language names and model-family folding (SPEC S-6.5, S-6.6), shared by every keyed store.

A family is the stable part of a model id: provider prefixes, sizes, quantisation and serving
suffixes are dropped, so `qwen2.5-coder:7b-instruct-q4_K_M` and `qwen2.5-coder:14b` share lessons.
"""

from __future__ import annotations

import re

_LANGUAGE_ALIASES = {
    "golang": "go",
    "py": "python",
    "python3": "python",
    "js": "javascript",
    "node": "javascript",
    "nodejs": "javascript",
    "javascript": "javascript",
    "ts": "typescript",
    "rs": "rust",
    "c++": "cpp",
    "cxx": "cpp",
}

_NOISE_WORDS = frozenset(
    "instruct chat it mlx gguf awq gptq bit bf16 fp16 f16 int4 int8 quantized latest hf".split()
)
# Sizes (7b, 1.5b, 30b), quantisation levels (q4, q4km, q8), bit widths (4bit) and MoE
# active-parameter markers (a3b) end the family part of an id.
_NOISE_PATTERN = re.compile(r"\d+(?:\.\d+)?b|q\d.*|\d+bit|a\d+(?:\.\d+)?b")
_MAX_FAMILY_PARTS = 3


def normalize_language(language: str) -> str:
    """Canonical language name: aliases folded (`golang` → `go`), otherwise lowercased and trimmed."""
    lang = language.strip().lower()
    return _LANGUAGE_ALIASES.get(lang, lang)


def _is_noise(part: str) -> bool:
    return part in _NOISE_WORDS or _NOISE_PATTERN.fullmatch(part) is not None


def model_family(model_id: str) -> str:
    """Fold a model id to its family (S-6.6): `Qwen3-Coder-30B-A3B-Instruct-MLX-4bit` → `qwen3-coder`."""
    text = model_id.strip().lower()
    text = text.rsplit("/", 1)[-1]
    text = text.replace(":", "-").replace("_", "-")
    kept: list[str] = []
    for part in text.split("-"):
        if not part:
            continue
        if _is_noise(part):
            break
        kept.append(part)
        if len(kept) == _MAX_FAMILY_PARTS:
            break
    return "-".join(kept) if kept else text
