"""A fake extraction model that reads: it answers from the words of the request it is sent, nothing else.

It plugs into any fake server of tests/fakes as its ``side_turn`` (the real adapter sends a real
request over a socket; here OpenAI's chat completions). It knows no gold: no ids, no descriptions,
no list of the world's names. It reads the passage out of the request's data block, splits it into
sentences and reads each with a small grammar of English clauses (``FRAMES``: "X, a clerk born in
Y, worked for the Z."; "X was captain of the Y."; a telegram's "X ARRIVED Y ABOARD Z STOP"), the way
a model reads: names are what the words say, as written (surname only, initials, titles, capitals,
another script, a typo), the type is what the clause says (captain *of* a ship), the description is
the clause's own words ("a clerk"). Inside one passage it does what a reader does: a later "Lind" or
"Herr Schmidt" is the latest person of that surname named before it; the same name with another
description is another person.

Then the noise a real model makes, fixed per level (``Noise.level``: 0, 0.08, 0.20) and seeded by
the passage, so a run repeats: a missed object or relation, an invented object (a name the passage
does not have) and an invented relation, a wrong type, a typo in a name, a swapped relation
direction, a paraphrased quote, a wrong "same"/"different" answer, broken JSON, a cut answer, and a
429. Its mistakes are decided before and independently of the app's resolver.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import threading
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from tests.fakes.script import Turn

DATA_RE = re.compile(r"<<<DOCUMENT DATA \(JSON\)\n(.*?)\nDOCUMENT DATA>>>", re.DOTALL)
_UPPER = "A-ZÀ-ÖØ-ÞА-ЯЁ"
_ABBR = rf"(?:[{_UPPER}](?:\.[{_UPPER}])*\.|(?:Mech|Capt|Co|Bros|St|Dr|Mr|Mrs)\.)"  # K.  S.S.  Co.  Capt.
_WORD = rf"(?!STOP\b)[{_UPPER}][\w'’]*(?:-[\w'’]+)*"
_TOKEN = rf"(?:{_ABBR}|{_WORD})"
_SEP = r"(?:(?<=[^\n]{40})[ \t]*\n[ \t]*|[ \t]+&[ \t]+|[ \t]+)"  # a name wraps at a long line's end only
_NAME = rf"(?-i:{_TOKEN}(?:{_SEP}{_TOKEN})*)"
_INVERTED = rf"(?-i:{_WORD},\s+{_WORD})"
_SLOTS = {"P": ("Person", _NAME), "Q": ("Person", _NAME), "R": ("Person", _INVERTED), "C": ("Place", _NAME),
          "O": ("Organization", _NAME), "O2": ("Organization", _NAME), "S": ("Ship", _NAME), "W": ("Work", _NAME), "E": ("Event", rf"{_NAME}(?:\s+of\s+\d{{4}})?")}
_END = r"(?:\.|\s+stop)"
# (clause, relations between its slots). {X} is a name; "(Y)" after a place is another name of it.
FRAMES_SOURCE: list[tuple[str, list[tuple[str, str, str]]]] = [
    (r"{P}, an? (?P<job>[a-z' ]+?) born in {C}, worked for the {O}(?: for many years)?\.",
     [("P", "born_in", "C"), ("P", "works_at", "O")]),
    (r"{P}, an? (?P<job>[a-z' ]+?) from {C}, opposed the {E} in [a-z ]+\.", [("P", "represents", "C"), ("P", "opposed", "E")]),
    (r"{P}, an? (?P<job>[a-z' ]+?) from {C}, opposed the [a-z]+ in [a-z ]+\.", [("P", "represents", "C")]),
    (r"the (?P<job>[a-z]+) {P} was born in {C} and [a-z ]+\.", [("P", "born_in", "C")]),
    (r"the (?P<job>[a-z]+) {P} later wrote [a-z ]+ of the {E}\.", [("P", "wrote_about", "E")]),
    (r"{P} joined the {O} as its [a-z ]+\.", [("P", "works_at", "O")]),
    (r"{P} managed the [a-z ]+ of the {O}\.", [("P", "works_at", "O")]),
    (r"{P} designed the {W} over the [a-z ]+ at {C}\.", [("P", "designed", "W"), ("W", "located_in", "C")]),
    (r"in \d+ the [a-z ]+ of the {O} began the {E}\.", [("E", "involved", "O")]),
    (r"the {E} took place at {C} in \d+\.", [("E", "located_in", "C")]),
    (r"{R}, (?P<job>[a-z' ]+), born in {C}\.", [("R", "born_in", "C")]),
    (r"{P} was a member of the {O}\.", [("P", "member_of", "O")]),
    (r"{P} was captain of the {S}" + _END, [("P", "captain_of", "S")]),
    (r"the {S} sailed to {C}\.", [("S", "sailed_to", "C")]),
    (r"(?:in \d+ )?{P} founded the {O} in {C}" + _END, [("P", "founded", "O"), ("O", "located_in", "C")]),
    (r"{P} wrote to {Q} about the {E}\.", [("P", "wrote_to", "Q"), ("P", "wrote_about", "E")]),
    (r"the {O} financed the {O2}(?: when [a-z ]+)?\.", [("O", "financed", "O2")]),
    (r"{P} opposed the {E}\.", [("P", "opposed", "E")]),
    (r"the {O} built the {S}\.", [("O", "built", "S")]),
    (r"{P} arrived {C} aboard {S}" + _END, [("P", "arrived_in", "C")]),
    (r"{P} was known as {Q}\.", [("Q", "=", "P")]),
    # what an eager reader also takes from a page's running footer or a site's footer
    (r"printed by {O}, {C}\.", [("O", "located_in", "C")]),
    (r"© \d+ {O}(?= ·)", []),
]


def _frame(source: str) -> re.Pattern[str]:
    def slot(m: re.Match[str]) -> str:
        name = m.group(1)
        body = _SLOTS[name][1]
        extra = rf"(?:\s+\((?P<{name}_alt>{_NAME})\))?" if _SLOTS[name][0] in ("Place", "Organization") else ""
        return f"(?P<{name}>{body}){extra}"

    return re.compile("(?i)" + re.sub(r"\{(\w+)\}", slot, source.replace(" ", r"\s+")))


FRAMES = [(_frame(src), rels) for src, rels in FRAMES_SOURCE]
_STARTS = re.compile(r"\n\s*|\.\s+|\bSTOP\s+")  # where a clause may begin
_TITLES = {"mr", "mrs", "ms", "herr", "frau", "capt", "captain", "dr"}
_CONFUSED = {"Person": "Organization", "Place": "Organization", "Ship": "Place", "Organization": "Place",
             "Event": "Work"}
_INVENTED = ["Harold Finch", "Mathilde Orsay", "Konrad Vesely", "Ottoline Marsh"]


@dataclass
class Noise:
    """How often the fake errs (each kind of mistake at about this rate) and its seed."""

    level: float = 0.0
    seed: int = 1
    broken_json: float | None = None  # how often a part's first answer is broken JSON (None: at ``level``)
    rate_limit_once: bool = False  # the run's first request is refused with a 429 (``named`` levels do)

    @classmethod
    def named(cls, percent: int, seed: int = 1) -> "Noise":
        return cls(level=percent / 100, seed=seed, rate_limit_once=True)


def fold(text: str) -> str:
    """Case and diacritics folded (how the reader compares a surname with a full name)."""
    return "".join(c for c in unicodedata.normalize("NFKD", text.casefold()) if not unicodedata.combining(c))


@dataclass
class _Obj:
    ref: str
    name: str
    type: str
    description: str
    quote: str
    aliases: list[str] = field(default_factory=list)
    at: int = 0


def _surname(name: str) -> str:
    if "," in name:
        return fold(name.split(",")[0].strip())
    return fold(name.split()[-1]) if name.split() else ""


def _is_partial(name: str) -> bool:
    """A surname alone, initials + surname, or a title + surname: the reader joins it to a full name."""
    words = name.replace(",", " ").split()
    if len(words) == 1:
        return True
    return all(w.rstrip(".").casefold() in _TITLES or (len(w.rstrip(".")) == 1) for w in words[:-1])


def read_passage(passage: str) -> tuple[list[_Obj], list[tuple[str, str, str, str]]]:
    """The objects and relations a careful reader finds in ``passage`` (no noise)."""
    objects: list[_Obj] = []
    relations: list[tuple[str, str, str, str]] = []

    def obj_for(name: str, type_: str, description: str, quote: str, at: int) -> _Obj:
        name = " ".join(name.split())
        same = [o for o in objects if o.type == type_ and (o.name == name or name in o.aliases)]
        if same:
            fitting = [o for o in same if not description or not o.description or o.description == description]
            if fitting:
                hit = fitting[-1]
                if description and not hit.description:
                    hit.description = description
                return hit
        elif type_ == "Person" and _is_partial(name):
            prior = [o for o in objects if o.type == "Person" and _surname(o.name) == _surname(name)
                     and not _is_partial(o.name)]
            if prior:
                hit = max(prior, key=lambda o: o.at)
                if name not in hit.aliases:
                    hit.aliases.append(name)
                hit.at = at
                return hit
        new = _Obj(f"o{len(objects) + 1}", name, type_, description, quote, at=at)
        objects.append(new)
        return new

    done = 0
    for start in sorted({0} | {m.end() for m in _STARTS.finditer(passage)}):
        if start < done:
            continue
        for pattern, rels in FRAMES:
            m = pattern.match(passage, start)
            if not m:
                continue
            done = m.end()
            sentence = m.group()
            found: dict[str, _Obj] = {}
            for slot, (type_, _) in _SLOTS.items():
                if slot not in pattern.groupindex or m.group(slot) is None:
                    continue
                desc = " ".join(m.group("job").split()) if "job" in pattern.groupindex and m.group("job") and slot in ("P", "R") else \
                    "printer" if slot == "O" and pattern.pattern.startswith("(?i)printed") else ""
                ob = obj_for(m.group(slot), type_, desc, sentence, m.start(slot))
                alt = f"{slot}_alt"
                if alt in pattern.groupindex and m.group(alt) and m.group(alt) not in ob.aliases:
                    ob.aliases.append(" ".join(m.group(alt).split()))
                found[slot] = ob
            for a, kind, b in rels:
                if kind == "=":  # "X was known as Y": Y is another name of X
                    nick, full = found[a], found[b]
                    if nick is not full:
                        objects.remove(nick)
                        if nick.name not in full.aliases:
                            full.aliases.append(nick.name)
                    continue
                relations.append((found[a].ref, kind, found[b].ref, sentence))
            break
    return objects, relations


@dataclass
class ReaderModel:
    """The ``side_turn`` of a fake server: extraction answers and duplicate answers, read from the request.

    Like the real APIs it honours the answer budget: an answer longer than the request's ``max_tokens``
    (Anthropic; OpenAI ``max_completion_tokens``/``max_tokens``; else ``default_max_output``, the model's
    own limit when nothing is sent) is cut there, 4 characters a token as its usage counts them, and
    finishes with "length". Its usage is what a provider bills: the whole request as input."""

    noise: Noise = field(default_factory=Noise)
    # The model's own answer limit when a request names none (16,384 is gpt-4o's); a test sets 4,096 to
    # play a model, or a compatible server, with a small one.
    default_max_output: int = 16384
    cut_answers: int = 0  # answers stopped at the limit
    budgets: list[int] = field(default_factory=list)  # the limit each part's request had
    calls: int = 0
    chunk_calls: int = 0
    pair_calls: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    seen: set[str] = field(default_factory=set)
    limited: set[str] = field(default_factory=set)
    cut: set[str] = field(default_factory=set)
    sent: list[str] = field(default_factory=list)  # every part's data block as received (passage and context)

    def __call__(self, body: Any) -> Turn | None:
        messages = body.get("messages") if isinstance(body, dict) else None
        if not messages:
            return None
        system = next((_content(m) for m in messages if m.get("role") == "system"), "") \
            or _content({"content": body.get("system")})  # Anthropic's wire: a top-level system
        users = [m for m in messages if m.get("role") == "user"]
        first = _content(users[0]) if users else ""
        repair = len(users) > 1
        digest = hashlib.sha256(first.encode()).hexdigest()
        rng = random.Random(f"{self.noise.seed}:{digest}")
        lvl = self.noise.level
        with self.lock:
            self.calls += 1
            if digest not in self.limited and ((not self.limited and self.noise.rate_limit_once)
                                               or (self.limited and rng.random() < lvl / 2)):
                self.limited.add(digest)  # the first request of a run, and now and then another, is refused
                return Turn(status=429, retry_after=0.01)
        if "decide whether pairs" in system:
            with self.lock:
                self.pair_calls += 1
            return self._budgeted(_json_turn(self.pairs(first, rng), body), body)
        match = DATA_RE.search(first)
        if not match:
            return _json_turn({"objects": [], "relations": []}, body)
        data = json.loads(match.group(1))
        passage = str(data.get("passage", ""))
        with self.lock:
            self.sent.append(f"{data.get('text_before', '')}\n{passage}")
            if not repair:
                self.chunk_calls += 1
            first_time = digest not in self.seen
            self.seen.add(digest)
        broken_rate = lvl if self.noise.broken_json is None else self.noise.broken_json
        if not repair and first_time and rng.random() < broken_rate:
            broken = '{"objects": [{"ref": "o1", "name": '
            return Turn(text=[broken], input_tokens=_sent_tokens(body), output_tokens=len(broken) // 4)
        with self.lock:
            self.budgets.append(self.limit_of(body))
        answer = self.answer(passage, rng)
        if not repair and first_time and len(passage) > 800 and rng.random() < lvl / 2:
            text = json.dumps(answer, ensure_ascii=False)
            return Turn(text=[text[:len(text) // 2]], input_tokens=_sent_tokens(body), output_tokens=len(text) // 8,
                        finish_reason="length")
        return self._budgeted(_json_turn(answer, body), body)

    # -- the answer budget ---------------------------------------------------------------------------
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

    # -- one passage ---------------------------------------------------------------------------------
    def answer(self, passage: str, rng: random.Random) -> dict[str, Any]:
        objects, relations = read_passage(passage)
        lvl = self.noise.level
        kept: list[dict[str, Any]] = []
        alive: set[str] = set()
        for o in objects:
            if rng.random() < lvl / 2:
                continue  # missed
            name, type_ = o.name, o.type
            if rng.random() < lvl / 2:
                type_ = _CONFUSED.get(type_, type_)
            if len(name) >= 8 and rng.random() < lvl / 4:
                i = rng.randrange(1, len(name) - 2)
                if name[i].isalpha() and name[i + 1].isalpha():
                    name = name[:i] + name[i + 1] + name[i] + name[i + 2:]
            kept.append({"ref": o.ref, "name": name, "type": type_, "description": o.description,
                         "aliases": list(o.aliases), "quote": self._quote(o.quote, rng), "properties": []})
            alive.add(o.ref)
        rels: list[dict[str, Any]] = []
        for src, kind, dst, sentence in relations:
            if src not in alive or dst not in alive or rng.random() < lvl / 2:
                continue
            if rng.random() < lvl / 2:
                src, dst = dst, src
            rels.append({"source": src, "target": dst, "type": kind, "quote": self._quote(sentence, rng)})
        if kept and rng.random() < lvl:
            other = rng.choice(kept)
            ref = f"o{len(objects) + 1}"
            kept.append({"ref": ref, "name": rng.choice(_INVENTED), "type": "Person", "description": "",
                         "aliases": [], "quote": other["quote"], "properties": []})
            rels.append({"source": ref, "target": other["ref"], "type": "knows", "quote": other["quote"]})
        if len(kept) >= 2 and rng.random() < lvl:
            a, b = rng.sample(kept, 2)
            rels.append({"source": a["ref"], "target": b["ref"], "type": "related_to", "quote": a["quote"]})
        return {"objects": kept, "relations": rels}

    def _quote(self, sentence: str, rng: random.Random) -> str:
        if rng.random() >= self.noise.level / 2:
            return sentence
        words = sentence.split()
        if len(words) > 6:
            del words[rng.randrange(1, len(words) - 1)]
        return " ".join(words).lower()

    # -- the duplicate question ----------------------------------------------------------------------
    def pairs(self, message: str, rng: random.Random) -> dict[str, Any]:
        match = DATA_RE.search(message)
        pairs = json.loads(match.group(1))["pairs"] if match else []
        answers = []
        for p in pairs:
            a, b = p.get("first", {}), p.get("second", {})
            verdict = "same" if _same(a, b) else "distinct"
            if rng.random() < self.noise.level:
                verdict = "distinct" if verdict == "same" else "same"
            answers.append({"pair": p["pair"], "verdict": verdict})
        return {"answers": answers}


def _words(name: str) -> list[str]:
    plain = re.sub(r"\s*\([^)]*\)\s*$", "", name)
    if "," in plain:
        last, _, first = plain.partition(",")
        plain = f"{first} {last}"
    return [w for w in re.findall(r"\w+", fold(plain)) if w not in _TITLES]


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """What a model judges from the two sides alone: the names agree (one may be a short form) and the
    descriptions do not say two different things."""
    if str(a.get("type", "")) != str(b.get("type", "")):
        return False
    da, db = fold(str(a.get("description", ""))), fold(str(b.get("description", "")))
    if da and db and not (set(da.split()) & set(db.split())):
        return False
    wa, wb = _words(str(a.get("name", ""))), _words(str(b.get("name", "")))
    if not wa or not wb:
        return False
    if wa == wb:
        return True
    if wa[-1] != wb[-1]:
        return False
    short, long = (wa, wb) if len(wa) < len(wb) else (wb, wa)
    return all(any(w == x or (len(w) == 1 and x.startswith(w)) for x in long[:-1]) for w in short[:-1])


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
    sent (the whole request: messages and schema), the output what is answered."""
    text = json.dumps(value, ensure_ascii=False)
    third = max(1, len(text) // 3)
    return Turn(text=[text[:third], text[third:2 * third], text[2 * third:]], input_tokens=_sent_tokens(body),
                output_tokens=len(text) // 4)
