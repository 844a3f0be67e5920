"""Language names and model-family folding (SPEC S-6.5, S-6.6), shared by every keyed store.

A family is the stable part of a model id: provider prefixes, sizes, quantisation and serving
suffixes are dropped, so `qwen2.5-coder:7b-instruct-q4_K_M` and `qwen2.5-coder:14b` share lessons.

Beyond the seed's rule (every seed example still folds the same — see tests/logic/text/test_models.py,
which also holds a table of real ids from Ollama, OpenAI, Anthropic, Qwen, DeepSeek, Llama,
Mistral, Gemini and MLX/GGUF repositories), a table test of real ids showed and this module fixes:
* release dates and revision numbers (`-20241022`, `-2024-08-06`, `-0125`, `-2501`, `-002`) and
  context sizes (`-16k`) are noise, so `gpt-4o-2024-08-06` → `gpt-4o`, `codestral-2501` → `codestral`;
* one- or two-digit version parts do not count toward the 3-part limit, so
  `claude-3-5-sonnet-20241022` → `claude-3-5-sonnet` (the seed folded it, and haiku, to `claude-3-5`);
* release stages (`preview`, `exp`) and mixture sizes (`8x7b`) are noise;
* Bedrock/Vertex vendor prefixes (`us.anthropic.`, `anthropic.`) and file extensions (`.gguf`)
  are dropped;
* the families Ollama spells without a hyphen are spelled the same from Hugging Face ids:
  `meta-llama/Llama-3.1-8B-Instruct` → `llama3.1` like `ollama/llama3.1:8b`, `gemma-2-9b-it` →
  `gemma2`, `phi-4` → `phi4`; Fireworks' `qwen2p5` reads as `qwen2.5`.
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

_NOISE_TEXT = (
    "instruct chat it mlx gguf awq gptq bit bf16 fp16 f16 int4 int8 quantized latest hf preview exp"
)
_NOISE_WORDS = frozenset(_NOISE_TEXT.split())
# Sizes (7b, 1.5b, 30b, 8x7b), quantisation levels (q4, q4km, q8), bit widths (4bit), MoE
# active-parameter markers (a3b), context sizes (16k) and dates/revisions (three or more digits)
# end the family part of an id.
_NOISE_PATTERN = re.compile(
    r"\d+(?:\.\d+)?b|\d+x\d+(?:\.\d+)?b|q\d.*|\d+bit|a\d+(?:\.\d+)?b|\d+k|\d{3,}"
)
_MAX_FAMILY_PARTS = 3
_MAX_ALL_PARTS = 6
_VERSION_PART = re.compile(r"\d{1,2}")
# Hosting prefixes written with dots (AWS Bedrock `us.anthropic.claude-…`, `meta.llama3-…`).
_DOTTED_PREFIX_TEXT = "us eu apac global anthropic meta mistral amazon cohere ai21"
_DOTTED_PREFIXES = frozenset(_DOTTED_PREFIX_TEXT.split())
# Families Ollama spells glued to their version (`llama3.1`) and Hugging Face with a hyphen.
_GLUED_FAMILIES = frozenset({"llama", "gemma", "phi", "qwen", "granite", "smollm"})
_DOTTED_VERSION = re.compile(r"\d+(?:\.\d+)*")
_FILE_SUFFIXES = (".gguf", ".bin", ".safetensors", ".mlx")
_P_DECIMAL = re.compile(r"(?<=\d)p(?=\d)")


def normalize_language(language: str) -> str:
    """Canonical language name: aliases folded (`golang` → `go`), otherwise lowercased and trimmed."""
    lang = language.strip().lower()
    return _LANGUAGE_ALIASES.get(lang, lang)


def _is_noise(part: str) -> bool:
    return part in _NOISE_WORDS or _NOISE_PATTERN.fullmatch(part) is not None


def _strip_hosting(text: str) -> str:
    """`/`-prefixes, dotted vendor prefixes and model-file extensions removed."""
    text = text.rsplit("/", 1)[-1]
    for suffix in _FILE_SUFFIXES:
        text = text.removesuffix(suffix)
    head, _, rest = text.partition(".")
    while rest and head in _DOTTED_PREFIXES:
        text = rest
        head, _, rest = text.partition(".")
    return text


def _glue(parts: list[str]) -> list[str]:
    """`meta-llama-3.1` → `llama3.1`, `gemma-2` → `gemma2`: one spelling per family."""
    if len(parts) > 1 and parts[0] == "meta" and parts[1].startswith("llama"):
        parts = parts[1:]
    if len(parts) > 1 and parts[0] in _GLUED_FAMILIES and _DOTTED_VERSION.fullmatch(parts[1]):
        parts = [parts[0] + parts[1], *parts[2:]]
    return parts


def model_family(model_id: str) -> str:
    """Fold a model id to its family (S-6.6): `Qwen3-Coder-30B-A3B-Instruct-MLX-4bit` → `qwen3-coder`."""
    text = _strip_hosting(model_id.strip().lower())
    text = text.replace(":", "-").replace("_", "-")
    kept: list[str] = []
    named = 0
    for raw in text.split("-"):
        part = raw.strip()
        if not part:
            continue
        if _is_noise(part):
            break
        kept.append(_P_DECIMAL.sub(".", part))
        # Bare version digits (`claude-3-5-sonnet`) do not use up the name parts.
        named += 0 if _VERSION_PART.fullmatch(part) else 1
        if named == _MAX_FAMILY_PARTS or len(kept) == _MAX_ALL_PARTS:
            break
    kept = _glue(kept)
    return "-".join(kept) if kept else text
