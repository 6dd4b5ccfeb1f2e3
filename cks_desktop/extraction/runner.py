"""One extraction run: chunk, ask (or read the cache), resolve, plan — in the background.

Everything slow is off the event loop: the store's reads and writes run in ``asyncio.to_thread``
and the model calls are the provider's own async streams, so the window stays responsive and the
CLI's Ctrl-C is honoured between chunks. The run reports ``Progress`` (chunks done / total, objects
and relations found, calls and cost so far) after every chunk; ``pause()``/``resume()`` hold it
between chunks, ``cancel()`` stops it there (what was answered stays cached, so the next run
resumes). Before starting, ``estimate()`` says how many calls it will make and what they may cost
(calibrated token estimate ``agent.context.estimator_for`` × ``llm.prices``); a run whose estimate
is over its cap (calls or USD) refuses to start, and one whose real cost crosses the cap stops.

Cost: one call per uncached chunk, plus at most ONE batched call for the ambiguous pairs of the
whole document (its answer is cached too). A chunk whose answer stays malformed after
``respond_json``'s repair turn, or whose provider keeps failing, is skipped with a sentence (not
cached, so the next run asks again). Nothing here retries a failed request: the provider's stream is
the one layer that does (``llm/retry.py``), with the same policy as the chat, so a part whose
provider keeps refusing costs ``1 + max_retries`` requests and is then skipped.

Answer budget: each call asks for ``extraction.budget.answer_budget`` answer tokens (16,384 where
the model is known to allow it). An answer cut at the limit anyway is not repaired (the repair would
be as long): the part is halved at a sentence (``chunking.split_chunk``, exact offsets) and each
half asked — up to ``MAX_SPLITS`` deep; halves are cached under their own keys and the joined answer
under the part's, and every answered request (the cut one too: it is billed) counts as a call.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cks_desktop.extraction import prompt
from cks_desktop.extraction.boilerplate import boilerplate_spans
from cks_desktop.extraction.budget import answer_budget, effective_budget
from cks_desktop.extraction.cache import ExtractionCache, Runs
from cks_desktop.extraction.chunking import Chunk, chunk_text, split_chunk, without_boilerplate
from cks_desktop.extraction.plan import ChunkResult, Plan, collect_chunk, lay_out, resolve_mentions
from cks_desktop.extraction.resolution import Existing, Resolver, name_key
from cks_desktop.extraction.vocabulary import Vocabulary

if TYPE_CHECKING:
    from cks_desktop.documents.model import Document
    from cks_desktop.graph.store import GraphStore
    from cks_desktop.llm.events import RetryWait, Usage
    from cks_desktop.llm.provider import Provider

# Answer tokens per passage token, for the estimate. Every object and every relation carries a verbatim
# quote, so a sentence naming three things and two links between them is answered five times over,
# plus the JSON around each item: the generated world's dense prose measures about 7 (a 1,400-token
# part answered in 8,000 tokens); ordinary prose names fewer things per sentence. 0.5 (the figure
# before) under-estimated that world's cost 7-fold (tests/extraction/test_estimate_cost.py).
OUTPUT_RATIO = 4.0
# For foreseeing splits only: the answer tokens a passage character asks of a model that copies a
# quote for every object and relation, in the answer's own tokens (not the input estimator's cautious
# characters per token): the reading model answers 1.55-1.70 for parts of 1,000-5,000 characters of
# the generated world's dense prose. A part is halved where this passes the answer limit.
ANSWER_TOKENS_PER_CHAR = 1.6
PAIRS_CHARS_PER_PART = 1500  # the duplicate question's data, per part asked (measured: ~1,200 on the world)
VOCABULARY_CHARS = 2 * prompt.MAX_TYPES_OFFERED * 16  # the offered object and relation types, at most
MAX_PAIRS = 200
PRELOAD_LIMIT = 50_000  # objects: above this a session is searched per name instead of loaded whole
LOOKUP_HITS = 10
DENSE_FLOOR = 0.3  # cosine: a name against an object's indexed text (its name, type and properties)
WRITE_STREAM_OVER = 5000  # ops: a bigger plan written with progress is streamed (graph/stream.py)
WRITE_STEP = 2000  # ops planned and written at a time when streamed; progress after each
MAX_SPLITS = 3  # a part whose answer is cut at the answer limit is halved, at most this deep


class ExtractionStopped(Exception):
    """The run was cancelled or hit its cap; finished chunks stay cached."""

    def __init__(self, message: str, state: str) -> None:
        super().__init__(message)
        self.message = message
        self.state = state


@dataclass
class Estimate:
    chunks: int
    cached: int
    calls: int  # model calls at most (uncached chunks, their foreseen halves, + one resolution call)
    input_tokens: int
    output_tokens: int
    cost_usd: float | None  # None: the model has no known price
    model: str

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class Progress:
    run_id: str
    state: str  # "running" | "paused" | "done" | "cancelled" | "capped" | "failed"
    chunks_done: int
    chunks_total: int
    cached: int = 0
    calls: int = 0
    objects_found: int = 0
    relations_found: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    failed_chunks: list[str] = field(default_factory=list)
    model_seconds: float = 0.0  # time spent waiting for the model
    app_seconds: float = 0.0  # everything else of the run (cache, grounding, resolution)
    phases: dict[str, float] = field(default_factory=dict)  # app_seconds by phase (wall), for the bench
    split_parts: int = 0  # parts halved because the answer was cut at the model's answer limit
    waiting: str = ""  # while a request waits to be tried again: "waiting 8 s (rate limited)"; else ""

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class Context:
    """What the session already holds, read once per run (on a worker thread)."""

    existing: list[Existing]
    props: dict[str, dict[str, Any]]
    edges: dict[tuple[str, str, str], str]
    vocab: Vocabulary
    relation_types: list[str]
    distinct: list[tuple[str, str]]
    lookup: Callable[[str], list[Existing]] | None = None  # a big session: searched, not loaded
    sourced: dict[tuple[int, int], list[str]] = field(default_factory=dict)  # this document's object sources
    sourced_edges: dict[tuple[int, int], set[tuple[str, str, str]]] = field(default_factory=dict)  # its relations'

    @property
    def by_id(self) -> dict[str, Existing]:
        return {e.id: e for e in self.existing}


def _existing(obj: Any) -> Existing:
    raw = obj.properties.get("aliases")
    aliases = tuple(a for a in (raw if isinstance(raw, list) else [raw] if raw else []) if isinstance(a, str))
    desc = obj.properties.get("description")
    return Existing(obj.id, obj.name, obj.type, aliases, desc if isinstance(desc, str) else "")


def load_context(store: "GraphStore", session_id: str, preload_limit: int = PRELOAD_LIMIT,
                 document_id: str | None = None) -> Context:
    """The session as resolution needs it: every object up to ``preload_limit``; a bigger session is
    searched per name through the graph's full-text index instead (``Context.lookup``). With
    ``document_id``: where that document already sources objects (span → object ids), so extracting
    it again finds each mention's object by its own source first (``Resolver.add``), and relations
    (span → (source, type, target)), so a claim at a quote that already sources a relation between
    the same two things is that relation, whichever way the claim runs (``plan.lay_out``)."""
    lookup = None
    props: dict[str, dict[str, Any]] = {}
    if store.counts(session_id).get("objects", 0) > preload_limit:
        objects: list[Any] = []
        lookup = _fts_lookup(store, session_id, props)
    else:
        objects = store.all_objects(session_id)
    existing = [_existing(obj) for obj in objects]
    props.update({obj.id: dict(obj.properties) for obj in objects})
    edges = {(r.source_id, r.type, r.target_id): r.id for r in store.all_relations(session_id)}
    stats = store.type_stats(session_id)
    otypes = [str(t["name"]) for t in stats.get("object_types") or []]
    rtypes = [str(t["name"]) for t in stats.get("relation_types") or []]
    distinct = ExtractionCache(store, session_id).distinct_pairs()
    sourced: dict[tuple[int, int], list[str]] = {}
    sourced_edges: dict[tuple[int, int], set[tuple[str, str, str]]] = {}
    if document_id is not None:
        with store.connection_lock() as conn:
            rows = conn.execute("SELECT target_kind, span_start, span_end, target_id FROM evidence WHERE "
                                "session_id = ? AND document_id = ? AND span_start IS NOT NULL",
                                (session_id, document_id)).fetchall()
        triples = {rid: triple for triple, rid in edges.items()}
        for kind, start, end, target in rows:
            span = (int(start), int(end))
            if kind == "object":
                sourced.setdefault(span, []).append(str(target))
            elif kind == "relation" and str(target) in triples:
                sourced_edges.setdefault(span, set()).add(triples[str(target)])
    return Context(existing, props, edges, Vocabulary.of(otypes), rtypes, distinct, lookup, sourced, sourced_edges)


def _fts_lookup(store: "GraphStore", session_id: str,
                props: dict[str, dict[str, Any]]) -> Callable[[str], list[Existing]]:
    """Candidates for a name from the graph's full-text index (names weigh most, aliases are
    property text) and, where the session's search index exists, from its embeddings of the
    objects (``retrieval/items.py``: a typo, a transliteration or a short form shares no whole
    word with the name it stands for). The candidates only join the resolver's indexes: every
    rule of resolution still decides. Their properties go into ``props`` for the merge ops."""
    nearest = _dense_lookup(store, session_id)

    def lookup(name: str) -> list[Existing]:
        out = []
        seen: set[str] = set()
        for obj, _score in store.search_objects(session_id, name, limit=LOOKUP_HITS):
            props[obj.id] = dict(obj.properties)
            out.append(_existing(obj))
            seen.add(obj.id)
        for obj in nearest(name) if nearest is not None else []:
            if obj.id not in seen:
                props[obj.id] = dict(obj.properties)
                out.append(_existing(obj))
                seen.add(obj.id)
        return out

    return lookup


def _dense_lookup(store: "GraphStore", session_id: str) -> Callable[[str], list[Any]] | None:
    """The objects whose embedding is nearest a name (at least ``DENSE_FLOOR``, ``LOOKUP_HITS`` at
    most), from the session's search index as it was last kept current; None where there is none
    (never made, or a team database: its items are not kept there). An object gone since is skipped."""
    from cks_desktop.graph.errors import NotFound, StoreError
    from cks_desktop.retrieval import embedder, items, repair

    try:
        if store.backend != "sqlite" or not items.searchable(store):
            return None
    except (StoreError, repair.IndexDamaged):
        return None

    def nearest(name: str) -> list[Any]:
        try:
            vector = embedder.embed([name])[0]
            with repair.reading(store) as conn:
                found = items.dense_ranking(conn, id(store), session_id, vector, LOOKUP_HITS, DENSE_FLOOR)
                refs = items.resolve(conn, session_id, found)
        except (embedder.EmbedderError, StoreError, repair.IndexDamaged):
            return []
        out = []
        for n in found:
            kind, ref = refs.get(n, ("", ""))
            if kind == "object":
                try:
                    out.append(store.get_object(session_id, ref))
                except NotFound:
                    continue
        return out

    return nearest


def model_name(provider: "Provider | None") -> str:
    return f"{provider.config.name}:{provider.config.model}" if provider is not None else "none"


class Extraction:
    """One document's extraction in one session (see the module docstring).

    Constructing one chunks the document (about 2 ms per part; half a second for 300 pages):
    a window builds it on a worker thread (``asyncio.to_thread(Extraction, ...)``)."""

    def __init__(self, store: "GraphStore", session_id: str, document: "Document", provider: "Provider | None", *,
                 guidance: str = "", max_calls: int | None = None, max_cost_usd: float | None = None,
                 prices: dict[str, Any] | None = None, preload_limit: int = PRELOAD_LIMIT,
                 on_progress: Callable[[Progress], None] | None = None) -> None:
        self.store = store
        self.session_id = session_id
        self.document = document
        self.provider = provider
        self.guidance = guidance
        self.max_calls = max_calls
        self.max_cost_usd = max_cost_usd
        self.prices = prices
        self.on_progress = on_progress
        self.preload_limit = preload_limit
        self.boilerplate = boilerplate_spans(document.text, document.page_starts)  # marked before asking, never sent
        self.chunks: list[Chunk] = [without_boilerplate(c, self.boilerplate, document.text)
                                    for c in chunk_text(document.text, document.page_starts)]
        self.model = model_name(provider)
        self.cache = ExtractionCache(store, session_id)
        self._running = asyncio.Event()
        self._running.set()
        self._cancelled = False
        self.progress = Progress("", "running", 0, len(self.chunks))
        self.context: Context | None = None
        self.resolver: Resolver | None = None

    # -- control ---------------------------------------------------------------------------------
    def pause(self) -> None:
        self._running.clear()
        self.progress.state = "paused"
        self._emit()

    def resume(self) -> None:
        self.progress.state = "running"
        self._running.set()
        self._emit()

    def cancel(self) -> None:
        self._cancelled = True
        self._running.set()

    def _emit(self) -> None:
        if self.on_progress is not None:
            self.on_progress(self.progress)

    # -- the estimate --------------------------------------------------------------------------------
    def keys(self) -> list[str]:
        return [prompt.cache_key(c, self.model) for c in self.chunks]

    def estimate(self) -> Estimate:
        """Calls and cost before anything is asked (reads the cache: call from a worker thread)."""
        from cks_desktop.agent.context import estimator_for
        from cks_desktop.llm.prices import cost_usd, price_for

        keys = self.keys()
        cached = self.cache.has(keys)
        estimator = estimator_for(self.provider) if self.provider is not None else None
        per_token = estimator.chars_per_token if estimator is not None else 3.0
        # what each call sends: the system prompt, the schema, the offered types and the part's own
        # message (its passage, the previous part's tail and heading path as JSON, the guidance)
        fixed = len(prompt.SYSTEM) + len(json.dumps(prompt.SCHEMA)) + VOCABULARY_CHARS
        todo = [c for c, k in zip(self.chunks, keys, strict=True) if k not in cached]
        inp = out = calls = 0
        limit = self._limit()
        for c in todo:
            # the run's own rule: a piece whose answer passes the limit is halved (``pieces_of``)
            for piece, halved in pieces_of(c, self.document.text, self.document.page_starts,
                                           lambda p: int(p.chars * ANSWER_TOKENS_PER_CHAR), limit):
                calls += 1
                inp += int((fixed + len(prompt.user_message(piece, [], [], self.guidance))) / per_token)
                out += (limit or 0) if halved else int(piece.chars / per_token * OUTPUT_RATIO)
        calls += 1 if todo else 0
        if todo:  # the one duplicate question: its prompt and the pairs the new parts may raise
            inp += int((len(prompt.PAIRS_SYSTEM) + len(json.dumps(prompt.PAIRS_SCHEMA))
                        + PAIRS_CHARS_PER_PART * len(todo)) / per_token)
            out += int(PAIRS_CHARS_PER_PART / 10 * len(todo) / per_token)
        price = price_for(self._config()[1], self.prices)
        return Estimate(len(self.chunks), len(cached), calls, inp, out, cost_usd(price, inp, out), self.model)

    def _config(self) -> tuple[str, str, int | None]:
        if self.provider is None:
            return "", "", None
        config = self.provider.config
        return config.name, config.model, config.max_tokens

    def _budget(self) -> int | None:
        """The answer budget asked for (None: the provider's setting): ``extraction.budget``."""
        return answer_budget(*self._config()) if self.provider is not None else None

    def _limit(self) -> int | None:
        return effective_budget(*self._config()) if self.provider is not None else None

    def check_cap(self, estimate: Estimate) -> None:
        if self.max_calls is not None and estimate.calls > self.max_calls:
            raise ExtractionStopped(f"This extraction needs up to {estimate.calls} model calls, over the cap of "
                                    f"{self.max_calls}; raise the cap to run it.", "capped")
        if self.max_cost_usd is not None and estimate.cost_usd is not None and estimate.cost_usd > self.max_cost_usd:
            raise ExtractionStopped(f"This extraction may cost about ${estimate.cost_usd:.2f}, over the cap of "
                                    f"${self.max_cost_usd:.2f}; raise the cap to run it.", "capped")

    # -- the run ---------------------------------------------------------------------------------------
    async def run(self) -> Plan:
        """Ask every chunk (cache first), resolve, and return the plan (nothing is written here)."""
        loop = asyncio.get_running_loop()
        began = loop.time()
        clock = _Phases(self.progress.phases, loop.time)
        estimate = await asyncio.to_thread(self.estimate)
        self.check_cap(estimate)
        self.context = await asyncio.to_thread(load_context, self.store, self.session_id, self.preload_limit,
                                               self.document.id)
        runs = Runs(self.store, self.session_id)
        self.progress.run_id = await asyncio.to_thread(runs.start, self.document.id, len(self.chunks))
        results: list[ChunkResult] = []
        keys = self.keys()
        cached = await asyncio.to_thread(self.cache.get_many, keys)  # one read for the whole run
        clock.lap("start (estimate, session, cache read)")
        try:
            for chunk, key in zip(self.chunks, keys, strict=True):
                await self._running.wait()
                if self._cancelled:
                    raise ExtractionStopped("The extraction was cancelled; the chunks already read are kept and "
                                            "the next run goes on from there.", "cancelled")
                answer = cached.get(key)
                fresh = answer is None
                clock.lap("between chunks")
                if answer is None:
                    model_before = self.progress.model_seconds
                    answer = await self._answer(chunk)
                    clock.lap("asking (besides the model)", minus=self.progress.model_seconds - model_before)
                else:
                    self.progress.cached += 1
                if answer is not None:
                    result = collect_chunk(answer, chunk, self.document.id, self.document.page_starts, self.context.vocab,
                                           self.boilerplate)
                    results.append(result)
                    self.progress.objects_found += len(result.mentions)
                    self.progress.relations_found += len(result.relations)
                clock.lap("grounding (collect_chunk)")
                self.progress.chunks_done += 1
                if fresh and answer is not None:  # the answer and the progress: one commit
                    await asyncio.to_thread(self.cache.put_with_progress, key, answer, self.progress.run_id,
                                            self.progress.chunks_done)
                elif fresh or self.progress.chunks_done == len(self.chunks) or self.progress.chunks_done % 20 == 0:
                    await asyncio.to_thread(runs.update, self.progress.run_id, done=self.progress.chunks_done)
                clock.lap("cache write")
                self._emit()
                self._check_running_cost()
                clock.lap("progress")
            plan = await self._resolve(results, clock)
        except ExtractionStopped as exc:
            self.progress.state = exc.state
            await asyncio.to_thread(runs.update, self.progress.run_id, state=exc.state, detail=self.progress.to_json())
            self._emit()
            raise
        self.progress.app_seconds = max(0.0, loop.time() - began - self.progress.model_seconds)
        self.progress.state = "done"
        plan.stats = {**self.progress.to_json(), "estimate": estimate.to_json()}
        await asyncio.to_thread(runs.update, self.progress.run_id, state="done", detail=self.progress.to_json())
        self._emit()
        return plan

    def _check_running_cost(self) -> None:
        cost = self.progress.cost_usd
        if self.max_cost_usd is not None and cost is not None and cost > self.max_cost_usd:
            raise ExtractionStopped(f"The extraction stopped at its cost cap (${cost:.2f} of ${self.max_cost_usd:.2f}); "
                                    "the chunks read so far are kept.", "capped")
        if self.max_calls is not None and self.progress.calls >= self.max_calls and \
                self.progress.chunks_done < self.progress.chunks_total:
            raise ExtractionStopped(f"The extraction stopped at its cap of {self.max_calls} model calls; "
                                    "the chunks read so far are kept.", "capped")

    async def _answer(self, chunk: Chunk) -> dict[str, Any] | None:
        """The model's answer for a part that is not cached (None when it could not be had)."""
        if self.provider is None:
            self.progress.failed_chunks.append(f"part {chunk.index + 1}: no AI provider is set up")
            return None
        return await self._answer_piece(chunk, f"part {chunk.index + 1}", 0)

    async def _answer_piece(self, chunk: Chunk, what: str, depth: int) -> dict[str, Any] | None:
        """Ask for one piece; an answer cut at the model's answer limit is not repaired (the repair
        would be as long) but the piece is halved at a sentence and each half asked (each cached
        under its own key, so a killed run resumes there); their answers are joined into one."""
        assert self.context is not None
        message = prompt.user_message(chunk, self.context.vocab.types, self.context.relation_types, self.guidance)
        cut: list[bool] = []
        answer = await self._ask(message, prompt.SCHEMA, prompt.SYSTEM, what, cut_off=cut if depth < MAX_SPLITS else None)
        if answer is not None or not cut:
            return answer
        halves = split_chunk(chunk, self.document.text, self.document.page_starts)
        if halves is None:
            self.progress.failed_chunks.append(f"{what}: the answer does not fit the model's answer limit "
                                               "and the passage cannot be cut smaller")
            return None
        self.progress.split_parts += 1
        answers = []
        for n, half in enumerate(halves, start=1):
            key = prompt.cache_key(half, self.model)
            got = await asyncio.to_thread(self.cache.get, key)
            if got is None:
                got = await self._answer_piece(half, f"{what} (half {n})", depth + 1)
                if got is None:
                    return None
                await asyncio.to_thread(self.cache.put, key, got)
            answers.append(got)
        return join_answers(answers)

    async def _ask(self, message: str, schema: dict[str, Any], system: str, what: str,
                   cut_off: list[bool] | None = None) -> dict[str, Any] | None:
        """The schema-valid answer, or None (the reason in ``failed_chunks``). With ``cut_off`` given,
        an answer cut at the answer limit appends True there instead of failing the part."""
        from cks_desktop.llm.messages import Message
        from cks_desktop.llm.provider import ProviderError
        from cks_desktop.llm.structured import StructuredOutputError, respond_json

        assert self.provider is not None
        loop = asyncio.get_running_loop()
        usage: list["Usage"] = []
        started = loop.time()
        try:
            answer = await respond_json(self.provider, [Message.user(message)], schema, system=system, usage=usage,
                                        max_output_tokens=self._budget(), on_wait=self._waited)
        except ProviderError as exc:
            self.progress.waiting = ""
            self._count(usage, loop.time() - started, refused=exc.kind in ("rate_limited", "overloaded"))
            self.progress.failed_chunks.append(f"{what}: {exc.message}")
            return None
        except StructuredOutputError as exc:
            self._count(usage, loop.time() - started)
            if exc.cut_off and cut_off is not None:
                cut_off.append(True)
                return None
            self.progress.failed_chunks.append(f"{what}: {exc.message}")
            return None
        self._count(usage, loop.time() - started)
        return answer if isinstance(answer, dict) else None

    def _waited(self, wait: "RetryWait") -> None:
        """The provider's stream waits before a retry (or the wait is over): the progress says so."""
        self.progress.waiting = "" if wait.resumed else wait.text
        self._emit()

    def _count(self, usage: list["Usage"], seconds: float, refused: bool = False) -> None:
        """Add one ``respond_json`` exchange: each answered request (a repair turn is a second one)
        is a call and adds its reported usage once. A request the provider refused (429/529) is
        neither billed nor a call: counting it stopped a run at an exact call cap one part early."""
        from cks_desktop.llm.prices import cost_usd, price_for

        self.progress.model_seconds += seconds
        self.progress.calls += len(usage) if refused else max(1, len(usage))
        price = price_for(self._config()[1], self.prices)
        for u in usage:
            self.progress.input_tokens += u.input_tokens
            self.progress.output_tokens += u.output_tokens
            cost = cost_usd(price, u.input_tokens, u.output_tokens, u.cached_tokens)
            if cost is not None:
                self.progress.cost_usd = (self.progress.cost_usd or 0.0) + cost

    async def _resolve(self, results: list[ChunkResult], clock: "_Phases | None" = None) -> Plan:
        assert self.context is not None
        ctx = self.context
        resolver = Resolver(ctx.existing, ctx.distinct, ctx.lookup, sourced=ctx.sourced)
        self.resolver = resolver
        claims, skipped = await asyncio.to_thread(resolve_mentions, results, resolver)
        if clock is not None:
            clock.lap("resolution")
        model_before = self.progress.model_seconds
        verdicts = await self._verdicts(resolver)
        resolver.settle(verdicts)
        if clock is not None:
            clock.lap("duplicate question (besides the model)", minus=self.progress.model_seconds - model_before)
        plan = lay_out(self.session_id, self.document.id, self.document.name, claims,
                       [*skipped, *self.progress.failed_chunks], resolver, ctx.vocab, ctx.edges,
                       sourced_edges=ctx.sourced_edges)
        if clock is not None:
            clock.lap("plan")
        return plan

    async def _verdicts(self, resolver: Resolver) -> dict[int, str]:
        """The ONE batched question about ambiguous pairs; "distinct" when not asked.

        Each verdict is remembered per pair of (type, normalised name), so a pair the model already
        judged is not asked again — re-extracting a document whose objects are now in the graph
        (under the same names) asks nothing at all."""
        pairs = resolver.pairs[:MAX_PAIRS]
        if not pairs:
            return {}
        keys = [self._verdict_key(resolver, p) for p in pairs]
        known = await asyncio.to_thread(lambda: [self.cache.get(k) for k in keys])
        verdicts: dict[int, str] = {}
        shown = []
        for i, (pair, remembered) in enumerate(zip(pairs, known, strict=True)):
            if remembered is not None and remembered.get("verdict") in ("same", "distinct", "unsure"):
                verdicts[i] = str(remembered["verdict"])
                continue
            a, b = resolver.entities[pair.a], resolver.entities[pair.b]
            shown.append({"pair": i, "first": _side(a), "second": _side(b), "why_asked": pair.reason})
        if not shown or self.provider is None:
            return verdicts
        answer = await self._ask(prompt.pairs_message(shown), prompt.PAIRS_SCHEMA, prompt.PAIRS_SYSTEM,
                                 "the question about possible duplicates")
        asked = {item["pair"] for item in shown}
        new: dict[int, str] = {}
        for item in (answer or {}).get("answers") or []:
            if isinstance(item, dict) and item.get("pair") in asked and item.get("verdict") in ("same", "distinct", "unsure"):
                new[int(item["pair"])] = str(item["verdict"])
        if answer is not None:
            def remember() -> None:
                for i, verdict in new.items():
                    self.cache.put(keys[i], {"verdict": verdict})

            await asyncio.to_thread(remember)
        verdicts.update(new)
        return verdicts

    def _verdict_key(self, resolver: Resolver, pair: Any) -> str:
        sides = sorted(f"{e.type.casefold()}:{name_key(e.name)}:{e.description.casefold()}"
                       for e in (resolver.entities[pair.a], resolver.entities[pair.b]))
        material = json.dumps([prompt.PROMPT_VERSION, self.model, sides], ensure_ascii=False)
        return "verdict:" + hashlib.sha256(material.encode()).hexdigest()


class _Phases:
    """Wall time by phase into ``Progress.phases`` (``lap`` charges the time since the last lap,
    less ``minus`` — the model's own time inside it)."""

    def __init__(self, into: dict[str, float], now: Callable[[], float]) -> None:
        self.into = into
        self.now = now
        self.last = now()

    def lap(self, phase: str, minus: float = 0.0) -> None:
        t = self.now()
        self.into[phase] = self.into.get(phase, 0.0) + max(0.0, t - self.last - minus)
        self.last = t


def pieces_of(chunk: Chunk, text: str, page_starts: Sequence[int], answer_tokens: Callable[[Chunk], int],
              limit: int | None, depth: int = 0) -> list[tuple[Chunk, bool]]:
    """The requests a part makes, foreseen by the run's own rule (``_answer_piece``): a piece whose
    answer (``answer_tokens``) passes the answer limit is cut there — a billed call, ``True`` — and
    halved by ``split_chunk``, each half in turn, at most ``MAX_SPLITS`` deep; the rest are answered."""
    if not limit or depth >= MAX_SPLITS or answer_tokens(chunk) <= limit:
        return [(chunk, False)]
    halves = split_chunk(chunk, text, page_starts)
    if halves is None:
        return [(chunk, False)]
    return [(chunk, True), *(p for half in halves for p in pieces_of(half, text, page_starts, answer_tokens, limit,
                                                                    depth + 1))]


def join_answers(answers: list[dict[str, Any]]) -> dict[str, Any]:
    """The answers of a part's pieces as one answer for the whole part: each piece's chunk-local refs
    get the piece's prefix, so two pieces' "o1" stay two objects (resolution merges what is the same)."""
    objects: list[Any] = []
    relations: list[Any] = []
    for n, answer in enumerate(answers):
        prefix = f"p{n}."
        for obj in answer.get("objects") or []:
            if isinstance(obj, dict):
                objects.append({**obj, "ref": prefix + str(obj.get("ref", ""))})
        for rel in answer.get("relations") or []:
            if isinstance(rel, dict):
                relations.append({**rel, "source": prefix + str(rel.get("source", "")),
                                  "target": prefix + str(rel.get("target", ""))})
    return {"objects": objects, "relations": relations}


def _side(ent: Any) -> dict[str, Any]:
    quote = ""
    for m in ent.mentions[:1]:
        for ev in m.evidence[:1]:
            quote = ev.quote
    return {"name": ent.name, "type": ent.type, "description": ent.description,
            "in_graph_already": ent.existing_id is not None, "passage": quote[:300]}


def apply_plan(store: "GraphStore", plan: Plan, context: Context, origin: str, *,
               per_chunk: bool = False, on_write: Callable[[int, int], None] | None = None) -> list[Any]:
    """Write the plan's included items: ONE change (or one per chunk); returns the ApplyResults.

    Slow for a big document (~27 s for 70,000 ops): call it on a worker thread. ``on_write(done,
    total)`` hears how many ops are written (from that thread); with it, a plan of more than
    ``WRITE_STREAM_OVER`` ops goes through ``GraphStore.apply_stream`` — still one transaction and
    one change, planned and written ``WRITE_STEP`` ops at a time so there is progress to report
    (its result's ``created`` stays empty: callers that need the ids pass no ``on_write``)."""
    from cks_desktop.extraction.plan import fold_hand_merges, plan_ops

    refused = fold_hand_merges(plan)
    if refused:
        from cks_desktop.graph.errors import StoreError

        raise StoreError("Nothing was written: " + "; ".join(refused) + ".")
    if not per_chunk:
        ops = plan_ops(plan, context.by_id, context.props)
        return [_write(store, plan.session_id, ops, origin, on_write)] if ops else []
    results = []
    chunks = sorted({ev["chunk_index"] for item in plan.objects for ev in item.evidence})
    written: dict[str, str] = {}  # plan object key → id, once an earlier chunk wrote it
    for chunk in chunks:
        part = _chunk_part(plan, chunk, written)
        ops = plan_ops(part, context.by_id, context.props)
        if not ops:
            continue
        result = store.apply(plan.session_id, ops, origin)
        for key, ident in result.created.items():
            written[key.lstrip("$")] = ident
        results.append(result)
    return results


def _write(store: "GraphStore", session_id: str, ops: list[dict[str, Any]], origin: str,
           on_write: Callable[[int, int], None] | None) -> Any:
    total = len(ops)
    if on_write is None or total <= WRITE_STREAM_OVER:
        result = store.apply(session_id, ops, origin)
        if on_write is not None:
            on_write(total, total)
        return result

    def items() -> Any:
        for i, op in enumerate(ops):
            if i and i % WRITE_STEP == 0:
                on_write(i - WRITE_STEP, total)  # the stream pulls a step, then plans and writes it
            yield i, op

    result = store.apply_stream(session_id, items(), origin, chunk_size=WRITE_STEP)
    on_write(total, total)
    return result


def _chunk_part(plan: Plan, chunk: int, written: dict[str, str]) -> Plan:
    """The items first seen in ``chunk`` (objects an earlier chunk wrote become merges into them)."""
    import copy

    part = copy.copy(plan)
    objects = []
    for item in plan.objects:
        first = min((ev["chunk_index"] for ev in item.evidence), default=0)
        if first > chunk:
            continue
        if first == chunk:
            objects.append(item)
            continue
        into = written.get(item.key) or (item.existing_id if item.action == "merge" else None)
        if into is None or not item.include:
            continue  # not written by its first part (unticked): nothing to add sources to
        clone = copy.copy(item)  # already written: only this part's sources are new
        clone.action, clone.existing_id = "merge", into
        clone.evidence = [ev for ev in item.evidence if ev["chunk_index"] == chunk]
        clone.aliases, clone.properties, clone.conflicts, clone.description = [], {}, [], ""
        objects.append(clone)
    part.objects = objects
    present = {o.key for o in objects}
    part.relations = [r for r in plan.relations if min(ev["chunk_index"] for ev in r.evidence) == chunk
                      and r.source in present and r.target in present]
    return part
