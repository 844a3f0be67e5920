"""Tokenizer and path tokens of the lexical ranker (SPEC S-3.2, S-3.3), plus plural folding.

Seed behaviour (S-3.2): split on every character that is not a Unicode letter or digit; split each
chunk on camel case (a boundary at lower→Upper, or before the last capital of an acronym that is
followed by a lowercase letter: `HTTPClient` → `HTTP`, `Client`) and, when that produced more than
one piece, also keep the whole identifier; lowercase; drop pieces shorter than two characters and
the 35 stopwords. `HTTPClient.go` → `http, client, httpclient, go`.

Opt-in changes (on by default in the ranker, see `rank.RankOptions`), because measured
recall on real commit histories lost good matches without them (docs/RECALL.md, "Two modes",
and bench/bench_recall_quality.py):

* acronym plurals — the seed rule cuts `URLs` into `ur` + `ls`, two tokens no other text shares;
  with `acronym_plurals` an acronym followed by a lone final `s` stays one word (`urls`);
* plural folding — `tests`/`test`, `dependencies`/`dependency`, `classes`/`class` meet on one
  term. It is a small suffix rule, not a stemmer: it only removes plural endings, and because the
  same rule runs over documents and queries a rare wrong cut still matches itself;
* whole paths — beside its words (`src`, `parser`, `py`), a changed or focus file also yields
  one term for the path itself (`path:src/parser.py`), so "touched this very file" outweighs
  "touched some file with a similar name". On real histories this lifted MRR with focus files
  from 0.51 to 0.68 (HarfBuzz) and 0.78 to 0.87 (strace); see bench/bench_recall_quality.py.

* more stop words (`MORE_STOPWORDS`: `as`, `via`, `by`, …) and a namespaced language term — both
  glue words and the language field let a query pass the coverage gate on nothing.

Pure-digit tokens (issue and PR numbers, versions) are "noise" for the coverage gate; see
`is_noise` and `rank.RankOptions.numbers_are_noise`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

#: The 35 stopwords of S-3.2 (English glue words that match everything).
# fmt: off
STOPWORDS: frozenset[str] = frozenset({
    "the", "and", "for", "with", "that", "this", "from", "into", "you", "your", "are", "was",
    "but", "not", "all", "can", "use", "using", "add", "make", "please", "should", "would", "its",
    "it", "is", "to", "of", "in", "on", "an", "a", "be", "do", "we",
})
# fmt: on

# A run of Unicode letters or digits (\w minus the underscore).
_CHUNK = re.compile(r"[^\W_]+")

#: Glue words the seed's 35 miss: they match everything and made a query "pass" the
#: coverage gate on words that say nothing. Default mode only. Measured on five histories
#: (bench/bench_recall_quality.py): a longer list (or, at, if, so, than, then, also, when, …)
#: gained text-only MRR on this project's own log but cost text+files MRR on psf/requests.
MORE_STOPWORDS: frozenset[str] = frozenset({"as", "via", "by"})

# Words whose plural ends in "ches"/"shes" but whose singular keeps the "e" (cache → caches).
_E_SINGULARS: frozenset[str] = frozenset(
    {"cache", "niche", "ache", "headache", "tranche", "avalanche", "moustache", "microfiche"}
)
#: Singulars ending in "ie" (cookie → cookies, not "cooky"): the "-ies → -y" rule skips them.
_IE_SINGULARS: frozenset[str] = frozenset({
    "cookie", "movie", "zombie", "selfie", "rookie", "calorie", "goodie", "hoodie", "genie",
    "newbie", "freebie", "indie", "techie", "foodie", "pixie", "veggie", "smoothie", "hippie",
    "junkie", "groupie", "walkie", "talkie", "birdie", "brownie", "magpie", "necktie", "auntie",
    "prairie", "sortie", "boogie", "collie", "kiddie", "bookie", "yuppie", "roomie", "cutie",
    "bootie", "budgie", "coterie", "menagerie", "reverie", "rotisserie", "brasserie", "lassie",
    "eyrie", "faerie", "specie", "sweetie", "hottie", "quickie", "nightie", "oldie",
    "baddie", "biggie", "dearie", "doggie", "rowdie", "townie", "trekkie", "wheelie", "yardie",
    "lingerie", "goalie", "mountie", "bogie", "potpie", "stymie", "floppie", "emojie",
})
#: Singulars ending in "s" whose plural adds "es" (alias → aliases, status → statuses); without
#: them "-ses" only drops its "s" (cases → case, releases → release, responses → response).
_S_SINGULARS: frozenset[str] = frozenset({
    "alias", "bias", "canvas", "atlas", "gas", "bus", "status", "virus", "focus", "bonus",
    "campus", "census", "corpus", "plus", "minus", "chorus", "octopus", "prospectus", "syllabus",
    "apparatus", "iris", "lens", "nexus", "thesaurus", "walrus", "cactus", "circus", "fetus",
    "fungus", "genus", "hiatus", "impetus", "locus", "lotus", "mucus", "onus", "radius", "sinus",
    "stimulus", "surplus", "terminus", "torus", "uterus", "abacus", "callus", "consensus",
    "exodus", "ibis", "pelvis", "trellis", "metropolis", "chassis", "pancreas",
    "asbestos", "cosmos", "ethos", "pathos", "kudos", "mythos", "plexus",
})
#: Singulars ending in "o" whose plural adds "es" (hero → heroes, not "heroe").
_O_SINGULARS: frozenset[str] = frozenset({
    "hero", "potato", "tomato", "echo", "veto", "domino", "torpedo", "embargo", "volcano",
    "cargo", "mosquito", "tornado", "buffalo", "mango", "motto", "tuxedo", "zero", "innuendo",
    "grotto", "halo", "memento", "manifesto", "desperado", "no", "go", "do", "todo", "undo",
})

_ES_SINGULARS = _S_SINGULARS | _O_SINGULARS
#: Nouns that end in "s" in the singular too (one series, two series): never folded.
_INVARIANT: frozenset[str] = frozenset({
    "series", "species", "news", "means", "headquarters", "diabetes", "mathematics", "physics",
    "economics", "ethics", "politics", "gymnastics", "measles", "mumps", "aircraft",
})


@dataclass(frozen=True, slots=True)
class TokenizerOptions:
    """Switches on top of the seed tokenizer; `TokenizerOptions()` is the seed's exact behaviour."""

    fold_plurals: bool = False
    acronym_plurals: bool = False
    whole_paths: bool = False
    #: Drop `MORE_STOPWORDS` as well as the seed's 35.
    more_stopwords: bool = False
    #: An episode's language is the term `lang:python`, which no query word produces: a task
    #: that says "python" must not match every Python episode (and pass the coverage gate)
    #: through the language field. Language filtering is `RecallQuery.language`'s job.
    namespaced_language: bool = False


SEED_TOKENIZER = TokenizerOptions()


def fold_plural(word: str) -> str:
    """Map a lowercase English plural onto its singular; other words come back unchanged.

    Rules, first match wins: `-ies` → `-y` (retries → retry) unless the singular ends in `ie`
    (cookies → cookie); `-sses` → `-ss`; `-xes`/`-zzes` → drop `es`; `-ches`/`-shes` → drop `es`
    (patches → patch) unless the singular ends in `e` (caches → cache); `-ses` → drop `es` for
    singulars in `s` (aliases → alias, statuses → status), else the `s` (cases → case); `-oes` →
    drop `es` for the singulars in `o` that take it (heroes → hero); words ending in `ss`, `us`,
    `is` are not plurals (class, status, analysis); any other final `s` is dropped (tests →
    test). Words of three letters or fewer, and singulars in `s` (alias, lens), are kept.
    """
    if len(word) <= 3 or word[-1] != "s" or word in _S_SINGULARS or word in _INVARIANT:
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-1] if word[:-1] in _IE_SINGULARS else word[:-3] + "y"
    if word.endswith(("sses", "xes", "zzes")):
        return word[:-2]
    if word.endswith(("ches", "shes")):
        return word[:-1] if word[:-1] in _E_SINGULARS else word[:-2]
    if word.endswith(("ses", "oes")) and word[:-2] in _ES_SINGULARS:
        return word[:-2]
    if word.endswith(("ss", "us", "is")):
        return word
    return word[:-1]


def _camel_pieces(chunk: str, acronym_plurals: bool) -> list[str]:
    """Split one letter/digit run at camel-case boundaries (S-3.2)."""
    pieces: list[str] = []
    start = 0
    last = len(chunk) - 1
    for i in range(1, len(chunk)):
        char = chunk[i]
        if not char.isupper():
            continue
        prev = chunk[i - 1]
        if prev.islower():
            pieces.append(chunk[start:i])
            start = i
        elif prev.isupper() and i < last and chunk[i + 1].islower():
            # `URLs`: with acronym plurals, a capital followed only by a final "s" is a plural.
            if acronym_plurals and i + 1 == last and chunk[last] == "s":
                continue
            pieces.append(chunk[start:i])
            start = i
    pieces.append(chunk[start:])
    return pieces


# word (lowercase) → its token after folding and the checks, "" when dropped; bounded.
_FOLDED: dict[str, str] = {}
_FOLDED_MAX = 200_000


def _finish(word: str, fold_plurals: bool, more_stopwords: bool = False) -> str:
    """The token a lowercase word becomes ("" = dropped: too short or a stopword)."""
    if more_stopwords and word in MORE_STOPWORDS:
        return ""
    if fold_plurals:
        token = _FOLDED.get(word)
        if token is None:
            folded = fold_plural(word)  # before the checks: "uses" folds onto the stopword "use"
            token = folded if len(folded) >= 2 and folded not in STOPWORDS else ""
            if len(_FOLDED) >= _FOLDED_MAX:
                _FOLDED.clear()
            _FOLDED[word] = token
        return token
    return word if len(word) >= 2 and word not in STOPWORDS else ""


def _tokenize_uncached(text: str, fold_plurals: bool, acronym_plurals: bool,
                       more_stopwords: bool = False) -> tuple[str, ...]:
    out: list[str] = []
    append = out.append
    for chunk in _CHUNK.findall(text):
        if chunk.islower() or chunk.isupper() or chunk.isdigit() or len(chunk) < 3:
            # No case boundary is possible (or every piece would be too short to keep).
            token = _finish(chunk.lower(), fold_plurals, more_stopwords)
            if token:
                append(token)
            continue
        if fold_plurals and acronym_plurals and chunk[-1] == "s" and chunk[:-1].isupper():
            token = _finish(chunk[:-1].lower(), fold_plurals, more_stopwords)  # APIs → api
            if token:
                append(token)
            continue
        pieces = _camel_pieces(chunk, acronym_plurals)
        words = [p.lower() for p in pieces]
        if len(pieces) > 1:
            words.append(chunk.lower())
        for word in words:
            token = _finish(word, fold_plurals, more_stopwords)
            if token:
                append(token)
    return tuple(out)


_tokenize_cached = lru_cache(maxsize=16_384)(_tokenize_uncached)


def tokenize(text: str, options: TokenizerOptions = SEED_TOKENIZER) -> tuple[str, ...]:
    """Tokens of `text` in order, duplicates kept (they are term frequency)."""
    if not text:
        return ()
    if len(text) > 64:  # task texts are rarely repeated; the cache is for tools, tags, path parts
        return _tokenize_uncached(text, options.fold_plurals, options.acronym_plurals,
                                  options.more_stopwords)
    return _tokenize_cached(text, options.fold_plurals, options.acronym_plurals,
                            options.more_stopwords)


def path_parts(path: str) -> list[str]:
    """The raw path tokens of S-3.3: every `/` segment, then the basename stem, then the extension.

    `pkg/loop/runner.go` → `pkg loop runner.go runner go`. Backslashes count as `/`.
    """
    clean = path.replace("\\", "/").strip()
    if not clean:
        return []
    parts = [segment for segment in clean.split("/") if segment]
    if not parts:
        return []
    base = parts[-1]
    dot = base.rfind(".")
    if dot > 0:
        parts.append(base[:dot])
        if dot < len(base) - 1:
            parts.append(base[dot + 1 :])
    return parts


def path_tokens(path: str, options: TokenizerOptions = SEED_TOKENIZER) -> list[str]:
    """`path_parts` run through the tokenizer (`pkg/loop/runner.go` → pkg, loop, runner, go, …)."""
    out: list[str] = []
    for part in path_parts(path):
        out.extend(tokenize(part, options))
    if options.whole_paths:
        whole = path_term(path)
        if whole:
            out.append(whole)
    return out


def path_term(path: str) -> str:
    """The whole path as one term (`src/parser.py`): the file's identity, beside its words.

    It holds a `/` or `.` or is a bare file name, and is never produced by `tokenize`, so it can
    only match the same path in another document.
    """
    clean = path.replace("\\", "/").strip().lower()
    while clean.startswith("./"):
        clean = clean[2:]
    clean = clean.strip("/")
    return "path:" + clean if clean else ""


def is_noise(term: str) -> bool:
    """A term that says nothing about the task: a pure number such as an issue or PR reference."""
    return term.isdigit()
