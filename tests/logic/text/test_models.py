"""Model-family folding and language names (SPEC S-6.5, S-6.6) on the seed's and real model ids."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.logic.text.models import model_family, normalize_language

SEED_EXAMPLES = [
    ("Qwen3-Coder-30B-A3B-Instruct-MLX-4bit", "qwen3-coder"),
    ("qwen2.5-coder:7b-instruct-q4_K_M", "qwen2.5-coder"),
    ("qwen2.5-coder:14b", "qwen2.5-coder"),
    ("deepseek-chat", "deepseek"),
    ("gpt-4o-mini", "gpt-4o-mini"),
    ("ollama/llama3.1:8b", "llama3.1"),
    ("codellama", "codellama"),
    ("Qwen3.8-27B-4bit", "qwen3.8"),
]

# Real ids as the providers and model hubs print them.
REAL_IDS = [
    # Ollama tags
    ("llama3.2:3b-instruct-q8_0", "llama3.2"),
    ("llama3:latest", "llama3"),
    ("codellama:13b-instruct", "codellama"),
    ("mistral:7b-instruct-v0.2-q4_K_M", "mistral"),
    ("deepseek-coder-v2:16b", "deepseek-coder-v2"),
    ("deepseek-r1:14b", "deepseek-r1"),
    ("qwen3:30b-a3b", "qwen3"),
    ("qwen3-coder:30b", "qwen3-coder"),
    ("gemma3:12b", "gemma3"),
    ("starcoder2:15b", "starcoder2"),
    ("granite-code:8b", "granite-code"),
    ("qwen2.5-coder:1.5b-base-fp16", "qwen2.5-coder"),
    # OpenAI
    ("gpt-4o", "gpt-4o"),
    ("gpt-4o-2024-08-06", "gpt-4o"),
    ("openai/gpt-4o-mini", "gpt-4o-mini"),
    ("gpt-4-turbo-2024-04-09", "gpt-4-turbo"),
    ("gpt-4.1-mini-2025-04-14", "gpt-4.1-mini"),
    ("gpt-3.5-turbo-0125", "gpt-3.5-turbo"),
    ("gpt-3.5-turbo-16k", "gpt-3.5-turbo"),
    ("gpt-4-0613", "gpt-4"),
    ("o1-mini-2024-09-12", "o1-mini"),
    ("o3-mini", "o3-mini"),
    ("gpt-5-codex", "gpt-5-codex"),
    # Anthropic (API, Bedrock)
    ("claude-3-5-sonnet-20241022", "claude-3-5-sonnet"),
    ("claude-3-5-haiku-20241022", "claude-3-5-haiku"),
    ("claude-3-opus-20240229", "claude-3-opus"),
    ("claude-sonnet-4-20250514", "claude-sonnet-4"),
    ("claude-opus-4-1-20250805", "claude-opus-4-1"),
    ("anthropic/claude-3-5-sonnet-latest", "claude-3-5-sonnet"),
    ("us.anthropic.claude-3-5-sonnet-20241022-v2:0", "claude-3-5-sonnet"),
    ("anthropic.claude-3-haiku-20240307-v1:0", "claude-3-haiku"),
    # Qwen (Hugging Face)
    ("Qwen/Qwen2.5-Coder-32B-Instruct", "qwen2.5-coder"),
    ("Qwen/Qwen2.5-Coder-7B-Instruct-GPTQ-Int4", "qwen2.5-coder"),
    ("Qwen/Qwen3-235B-A22B-Instruct-2507", "qwen3"),
    ("Qwen3-Coder-480B-A35B-Instruct-FP8", "qwen3-coder"),
    ("Qwen/QwQ-32B", "qwq"),
    ("accounts/fireworks/models/qwen2p5-coder-32b-instruct", "qwen2.5-coder"),
    # DeepSeek
    ("deepseek-ai/DeepSeek-V3", "deepseek-v3"),
    ("deepseek-ai/DeepSeek-V3-0324", "deepseek-v3"),
    ("deepseek-reasoner", "deepseek-reasoner"),
    ("TheBloke/deepseek-coder-6.7B-instruct-AWQ", "deepseek-coder"),
    # Llama (Hugging Face spells the family with a hyphen; Ollama without)
    ("meta-llama/Llama-3.1-8B-Instruct", "llama3.1"),
    ("meta-llama/Meta-Llama-3-8B-Instruct", "llama3"),
    ("meta-llama/Llama-3.3-70B-Instruct", "llama3.3"),
    ("llama-2-7b-chat-hf", "llama2"),
    # Mistral
    ("mistralai/Mistral-7B-Instruct-v0.3", "mistral"),
    ("mistralai/Mixtral-8x7B-Instruct-v0.1", "mixtral"),
    ("mistral-large-latest", "mistral-large"),
    ("mistral-large-2411", "mistral-large"),
    ("codestral-2501", "codestral"),
    ("devstral-small-2505", "devstral-small"),
    ("mistral-small-3.1-24b-instruct-2503", "mistral-small-3.1"),
    # Gemini / Gemma
    ("gemini-1.5-pro-002", "gemini-1.5-pro"),
    ("gemini-2.0-flash-001", "gemini-2.0-flash"),
    ("gemini-2.5-pro", "gemini-2.5-pro"),
    ("gemini-2.5-flash-preview-05-20", "gemini-2.5-flash"),
    ("models/gemini-1.5-flash-latest", "gemini-1.5-flash"),
    ("google/gemma-2-9b-it", "gemma2"),
    ("phi-4", "phi4"),
    # MLX / GGUF
    ("mlx-community/Qwen2.5-Coder-7B-Instruct-4bit", "qwen2.5-coder"),
    ("mlx-community/Meta-Llama-3.1-8B-Instruct-8bit", "llama3.1"),
    ("bartowski/Qwen2.5-Coder-14B-Instruct-GGUF", "qwen2.5-coder"),
    ("TheBloke/CodeLlama-7B-Instruct-GGUF", "codellama"),
    ("qwen2.5-coder-7b-instruct-q4_k_m.gguf", "qwen2.5-coder"),
    ("Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf", "llama3.1"),
    ("hf.co/bartowski/Qwen2.5-Coder-7B-Instruct-GGUF:Q4_K_M", "qwen2.5-coder"),
    ("tinyllama.gguf", "tinyllama"),
]


@pytest.mark.parametrize(("model_id", "family"), SEED_EXAMPLES)
def test_seed_examples_fold_as_documented(model_id: str, family: str) -> None:
    assert model_family(model_id) == family


@pytest.mark.parametrize(("model_id", "family"), REAL_IDS)
def test_real_model_ids_fold_to_their_family(model_id: str, family: str) -> None:
    assert model_family(model_id) == family


def test_dense_and_moe_qwen_stay_apart() -> None:
    # H-S-15: the latency store once merged these two.
    assert model_family("Qwen3.8-27B-4bit") != model_family("Qwen3-Coder-30B-A3B-Instruct-MLX-4bit")


def test_sibling_models_of_one_generation_stay_apart() -> None:
    assert model_family("claude-3-5-sonnet-20241022") != model_family("claude-3-5-haiku-20241022")
    assert model_family("gpt-4o") != model_family("gpt-4o-mini")


def test_same_model_from_ollama_and_hugging_face_shares_a_family() -> None:
    assert model_family("ollama/llama3.1:8b") == model_family("meta-llama/Llama-3.1-8B-Instruct")
    assert model_family("gemma2:9b") == model_family("google/gemma-2-9b-it")


def test_an_id_that_is_all_noise_is_returned_transformed() -> None:
    assert model_family("Q4_K_M") == "q4-k-m"
    assert model_family("") == ""


@settings(derandomize=True, max_examples=300)
@given(st.text(alphabet="abcdefqxkpAQB0123456789.-:_/ ", max_size=40))
def test_folding_is_idempotent_and_lowercase(model_id: str) -> None:
    family = model_family(model_id)
    assert family == family.lower()
    assert "/" not in family
    assert model_family(family) == family


@pytest.mark.parametrize(
    ("alias", "language"),
    [
        ("golang", "go"),
        ("py", "python"),
        ("python3", "python"),
        ("js", "javascript"),
        ("node", "javascript"),
        ("nodejs", "javascript"),
        ("JavaScript", "javascript"),
        ("ts", "typescript"),
        ("rs", "rust"),
        ("c++", "cpp"),
        ("cxx", "cpp"),
        ("  Kotlin ", "kotlin"),
        ("", ""),
    ],
)
def test_language_aliases(alias: str, language: str) -> None:
    assert normalize_language(alias) == language
