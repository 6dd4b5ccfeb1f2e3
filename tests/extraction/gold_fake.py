"""A fake model that answers extraction requests from the gold graph, with seeded noise.

It plugs into any fake server of tests/fakes as its ``side_turn``: the real SDK sends a real
request over a real socket (OpenAI's chat completions with ``response_format``, here), the fake
reads the passage out of the request's data block, finds it in the rendered documents (so it knows
the passage's offsets), and answers what a careful model would: every gold mention inside the
passage as an object (the fullest surface as name, other surfaces as aliases, the sentence as
quote), every gold fact whose sentence lies inside as a relation. Then the noise, seeded by the
passage so the same chunk gets the same answer: aliases instead of names, typos, type drift (to
synonyms, and at high noise to types no synonym maps), missed and invented relations, paraphrased
and invented quotes, broken JSON on the first try (respond_json's repair turn gets the real answer),
and one HTTP 429. Like the real APIs it honours the answer budget: an answer longer than the request's
``max_tokens`` (Anthropic; OpenAI ``max_completion_tokens``/``max_tokens``; else ``default_max_output``,
the model's own limit when nothing is sent) is cut there, 4 characters a token as its usage counts
them, and finishes with "length" (the fakes send it as ``stop_reason: max_tokens`` /
``finish_reason: length``). The batched duplicate question is answered from the gold too (with "unsure" as
noise). A ``gold_id`` property rides along on each object so the bench can score clusters; the app
never reads it.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import random
import re
import threading
from dataclasses import dataclass, field
from typing import Any

from tests.extraction.world import Rendered, World
from tests.fakes.script import Turn

DATA_RE = re.compile(r"<<<DOCUMENT DATA \(JSON\)\n(.*?)\nDOCUMENT DATA>>>", re.DOTALL)
DRIFT = {"Person": ["Individual", "person"], "Organization": ["Organisation", "Company"],
         "Place": ["Location", "place"], "Event": ["Occurrence"], "Work": ["Creative work"]}
WILD = {"Person": "Agent", "Organization": "Group", "Place": "Geo", "Event": "Happening2", "Work": "Artifact"}


@dataclass
class Noise:
    level: float = 0.0
    broken_json: float = 0.0
    rate_limit_once: bool = False
    seed: int = 1

    @classmethod
    def low(cls) -> "Noise":
        return cls(level=0.03, broken_json=0.05, rate_limit_once=True)

    @classmethod
    def high(cls) -> "Noise":
        return cls(level=0.15, broken_json=0.15, rate_limit_once=True)


@dataclass
class GoldModel:
    world: World
    docs: list[Rendered]
    noise: Noise = field(default_factory=Noise)
    calls: int = 0
    chunk_calls: int = 0
    pair_calls: int = 0
    seen: set[str] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)
    _limited: bool = False
    # The model's own answer limit when a request names none (OpenAI's default is the model's maximum;
    # 16,384 is gpt-4o's). A test sets 4,096 to play a model, or a compatible server, with a small one.
    default_max_output: int = 16384
    cut_answers: int = 0  # answers stopped at the limit
    budgets: list[int] = field(default_factory=list)  # the limit each chunk request had
    _mention_starts: dict[str, list[int]] = field(default_factory=dict)
    _sent_starts: dict[str, list[int]] = field(default_factory=dict)

    # -- the side_turn hook ---------------------------------------------------------------------
    def __call__(self, body: Any) -> Turn | None:
        messages = body.get("messages") if isinstance(body, dict) else None
        if not messages:
            return None
        with self.lock:
            self.calls += 1
            if self.noise.rate_limit_once and not self._limited:
                self._limited = True
                return Turn(status=429, retry_after=0.01)
        system = next((m.get("content", "") for m in messages if m.get("role") == "system"), "") \
            or _content({"content": body.get("system")})  # Anthropic's wire: a top-level system (string or blocks)
        users = [m for m in messages if m.get("role") == "user"]
        first = _content(users[0]) if users else ""
        repair = len(users) > 1
        if "decide whether pairs" in str(system):
            with self.lock:
                self.pair_calls += 1
            return self._budgeted(_json_turn(self.pairs(first), body), body)
        match = DATA_RE.search(first)
        if not match:
            return Turn(text=['{"objects": [], "relations": []}'])
        data = json.loads(match.group(1))
        passage = str(data["passage"])
        digest = hashlib.sha256(passage.encode()).hexdigest()
        rng = random.Random(f"{self.noise.seed}:{digest}")
        with self.lock:
            if not repair:
                self.chunk_calls += 1
            first_time = digest not in self.seen
            self.seen.add(digest)
        if not repair and first_time and rng.random() < self.noise.broken_json:
            broken = '{"objects": [{"ref": "o1", "name": '
            return Turn(text=[broken], input_tokens=_sent_tokens(body), output_tokens=len(broken) // 4)
        with self.lock:
            self.budgets.append(self.limit_of(body))
        return self._budgeted(_json_turn(self.answer(passage, rng), body), body)

    # -- the answer budget ----------------------------------------------------------------------
    def limit_of(self, body: Any) -> int:
        """The request's answer budget in tokens, as the API reads it."""
        for key in ("max_tokens", "max_completion_tokens"):
            value = body.get(key)
            if isinstance(value, int) and value > 0:
                return value
        return self.default_max_output

    def _budgeted(self, turn: Turn, body: Any) -> Turn:
        """Cut the answer at the budget, as a real model stops: the text so far, "length"."""
        limit = self.limit_of(body)
        if turn.output_tokens <= limit:
            return turn
        with self.lock:
            self.cut_answers += 1
        text = "".join(turn.text)[:limit * 4]
        third = max(1, len(text) // 3)
        return Turn(text=[text[:third], text[third:2 * third], text[2 * third:]], input_tokens=turn.input_tokens,
                    output_tokens=limit, finish_reason="length")

    # -- a chunk --------------------------------------------------------------------------------
    def locate(self, passage: str) -> tuple[Rendered, int]:
        for doc in self.docs:
            at = doc.text.find(passage)
            if at >= 0:
                return doc, at
        raise AssertionError("the passage is in no document")

    def _sentence_starts(self, doc: Rendered) -> list[int]:
        cached = self._sent_starts.get(doc.name)
        if cached is None:
            cached = self._sent_starts[doc.name] = [x.start for x in doc.sentences]
        return cached

    def _starts(self, doc: Rendered) -> list[int]:
        cached = self._mention_starts.get(doc.name)
        if cached is None:
            cached = self._mention_starts[doc.name] = [m.start for m in doc.mentions]  # written in order
        return cached

    def answer(self, passage: str, rng: random.Random) -> dict[str, Any]:
        doc, base = self.locate(passage)
        end = base + len(passage)
        lvl = self.noise.level
        starts = self._starts(doc)
        lo, hi = bisect.bisect_left(starts, base), bisect.bisect_right(starts, end)
        inside = [m for m in doc.mentions[lo:hi] if m.start >= base and m.end <= end
                  and doc.sentences[m.sentence].start >= base and doc.sentences[m.sentence].end <= end]
        by_entity: dict[str, list[Any]] = {}
        for m in inside:
            by_entity.setdefault(m.entity, []).append(m)
        objects, refs = [], {}
        for n, (ent_id, ms) in enumerate(by_entity.items(), start=1):
            ent = self.world.entities[ent_id]
            surfaces = []
            for m in ms:
                s = " ".join(m.surface.split())
                if s not in surfaces:
                    surfaces.append(s)
            name = max(surfaces, key=len)
            aliases = [s for s in surfaces if s != name]
            if ent.aliases and name == ent.name and rng.random() < lvl:
                name, aliases = ent.aliases[0], [a for a in aliases if a != ent.aliases[0]]
            elif len(name) >= 8 and rng.random() < lvl:
                i = rng.randrange(1, len(name) - 2)
                if name[i].isalpha() and name[i + 1].isalpha():
                    name = name[:i] + name[i + 1] + name[i] + name[i + 2:]
            type_ = ent.type
            r = rng.random()
            if r < lvl:
                type_ = rng.choice(DRIFT.get(ent.type, [ent.type]))
            elif r < lvl * 1.3 and lvl >= 0.1:
                type_ = WILD.get(ent.type, ent.type)
            sent = doc.sentences[ms[0].sentence]
            quote = doc.text[sent.start:sent.end]
            quote = self._noisy_quote(quote, rng)
            ref = f"o{n}"
            refs[ent_id] = ref
            objects.append({"ref": ref, "name": name, "type": type_,
                            "description": ent.description if rng.random() >= lvl else "",
                            "aliases": aliases, "quote": quote,
                            "properties": [{"key": "gold_id", "value": ent_id}]})
        relations = []
        sent_starts = self._sentence_starts(doc)
        for sent in doc.sentences[bisect.bisect_left(sent_starts, base):bisect.bisect_right(sent_starts, end)]:
            if sent.start < base or sent.end > end:
                continue
            for src, kind, dst in sent.facts:
                if src not in refs or dst not in refs or rng.random() < lvl:
                    continue  # missed
                quote = self._noisy_quote(doc.text[sent.start:sent.end], rng)
                relations.append({"source": refs[src], "target": refs[dst], "type": kind, "quote": quote})
        if len(objects) >= 2 and rng.random() < lvl * 3:
            a, b = rng.sample(objects, 2)
            relations.append({"source": a["ref"], "target": b["ref"], "type": "knows", "quote": a["quote"]})
        return {"objects": objects, "relations": relations}

    def _noisy_quote(self, quote: str, rng: random.Random) -> str:
        flat = " ".join(quote.split())
        r = rng.random()
        lvl = self.noise.level
        if r < lvl / 3:
            return "According to the passage, this is stated somewhere."  # invented: never aligns
        if r < lvl:
            words = flat.split(" ")
            if len(words) > 6:
                del words[rng.randrange(1, len(words) - 1)]
            return " ".join(words).lower()
        return quote

    # -- the duplicate question ------------------------------------------------------------------------
    def gold_of(self, side: dict[str, Any]) -> str | None:
        import difflib

        name = re.sub(r"\s*\([^)]*\)\s*$", "", str(side.get("name", ""))).strip()
        desc = str(side.get("description", ""))
        best: list[tuple[float, str]] = []
        for ent in self.world.entities.values():
            for surface in (ent.name, *ent.aliases):
                score = difflib.SequenceMatcher(None, name.casefold(), surface.casefold()).ratio()
                if score >= 0.85:
                    best.append((score + (0.2 if desc and desc == ent.description else 0.0), ent.id))
        if not best:
            return None
        best.sort(reverse=True)
        return best[0][1]

    def pairs(self, message: str) -> dict[str, Any]:
        match = re.search(r"<<<DOCUMENT DATA \(JSON\)\n(.*?)\nDOCUMENT DATA>>>", message, re.DOTALL)
        pairs = json.loads(match.group(1))["pairs"] if match else []
        rng = random.Random(f"{self.noise.seed}:pairs:{len(pairs)}")
        answers = []
        for p in pairs:
            a, b = self.gold_of(p["first"]), self.gold_of(p["second"])
            verdict = "same" if a is not None and a == b else "distinct"
            if rng.random() < self.noise.level / 2:
                verdict = "unsure"
            answers.append({"pair": p["pair"], "verdict": verdict})
        return {"answers": answers}


def _content(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


def _sent_tokens(body: Any) -> int:
    """What a request bills as input: the whole request as sent, 4 characters a token."""
    return len(json.dumps(body, ensure_ascii=False)) // 4


def _json_turn(value: Any, body: Any) -> Turn:
    """The answer in three pieces, with the usage a real provider would bill: the input is what was
    sent (the whole request: messages and schema, 4 characters a token), the output what is answered.
    (It used to derive the input from the answer's length, 5x what was sent: see
    tests/extraction/test_estimate_cost.py.)"""
    text = json.dumps(value, ensure_ascii=False)
    third = max(1, len(text) // 3)
    return Turn(text=[text[:third], text[third:2 * third], text[2 * third:]], input_tokens=_sent_tokens(body),
                output_tokens=len(text) // 4)
