"""`cks-desktop documents extract --session S DOC`: a document's knowledge into the graph, with sources.

What it does, by option:
- ``--estimate``: chunks, cached chunks, model calls and cost at most; asks nothing.
- (none): runs the extraction (asking the model for every chunk not cached) and prints what would
  be added and merged, riskiest first; writes nothing to the graph.
- ``--review-file F``: the same, and writes the whole plan to F (JSON) for review: untick
  (``"include": false``), edit ``name``/``type``, merge one new object into another
  (``"merge_into": "e7"``), then apply it with ``--apply-review F``. Marking a merge
  ``"split": true`` records the two as different things and writes nothing: plan again (free).
- ``--apply``: runs and writes the plan as ONE change (``--per-chunk``: one change per chunk).
  Items whose quote was not found in the document are never written this way (they need review).
- ``--apply-review F``: writes an edited review file; asks the model nothing.

Writing asks first: on a terminal it shows the summary and waits for y/N; without a terminal it
needs ``--yes`` (and without it says so and exits 2): a run without a terminal never waits for an
answer. ``--max-calls``/``--max-cost`` cap the run (refused before it starts when the estimate is
over; stopped when the real cost crosses). Ctrl-C stops between chunks; what was read is cached,
so the next run goes on from there. Exit codes: 0 done, 1 stopped or some chunks failed, 2 usage.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cks_desktop.commands.common import EXIT_OK, EXIT_TOOL_ERROR, EXIT_USAGE, CliError, app_paths, print_json
from cks_desktop.commands.provider_opts import NO_PROVIDER, add_provider_flags, provider_holder
from cks_desktop.plural import counted

if TYPE_CHECKING:
    from cks_desktop.extraction.plan import Plan
    from cks_desktop.runtime.extraction import Extraction, Progress
    from cks_desktop.graph.store import GraphStore
    from cks_desktop.runtime.extraction import ExtractionUseCase

ORIGIN = "extraction"
SHOWN = 40


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("ref", metavar="DOC", help="the document's id (or its first 6+ characters) or file name")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--estimate", action="store_true", help="print the calls and cost it would take; ask nothing")
    what.add_argument("--review-file", metavar="F", help="write the plan to F for review (nothing is written)")
    what.add_argument("--apply-review", metavar="F", help="write a reviewed plan from F as one change")
    p.add_argument("--apply", action="store_true", help="write the plan (one change) after extracting")
    p.add_argument("--per-chunk", action="store_true", help="with --apply: one change per chunk")
    p.add_argument("--yes", action="store_true", help="write without asking (required without a terminal)")
    p.add_argument("--max-calls", type=int, metavar="N", help="refuse or stop above N model calls")
    p.add_argument("--max-cost", type=float, metavar="USD", help="refuse or stop above this cost in USD")
    p.add_argument("--guidance", default="", metavar="TEXT", help='e.g. "only people and organisations"')
    add_provider_flags(p)


def run_extract(args: argparse.Namespace) -> int:
    from cks_desktop.commands.sessions_cmd import store_for
    from cks_desktop.documents.errors import DocumentError

    if args.apply and (args.review_file or args.estimate):
        raise CliError("--apply cannot be combined with --review-file or --estimate.", EXIT_USAGE)
    if args.per_chunk and not args.apply:
        raise CliError("--per-chunk needs --apply.", EXIT_USAGE)
    with store_for(args) as store:
        try:
            doc = _document(store, args)
        except DocumentError as exc:
            raise CliError(str(exc), EXIT_USAGE) from None
        if args.apply_review:
            return _apply_review(store, args, doc)
        try:
            return asyncio.run(_run(store, args, doc))
        except KeyboardInterrupt:
            print("cks-desktop: stopped; the chunks already read are kept, the next run goes on from there.",
                  file=sys.stderr)
            return 130


def _document(store: "GraphStore", args: argparse.Namespace) -> Any:
    from cks_desktop.runtime.documents import DocumentsUseCase

    return DocumentsUseCase(store).open(args.session, args.ref)


async def _run(store: "GraphStore", args: argparse.Namespace, doc: Any) -> int:
    from cks_desktop.runtime.extraction import ExtractionStopped
    from cks_desktop.llm.provider import ProviderError
    from cks_desktop.runtime.cases import UseCases

    holder, settings = provider_holder(args)
    extraction = UseCases(store, settings).extraction
    provider = None
    unready = "" if holder.configured else "no AI provider is chosen"  # why the cost is unknown (--estimate)
    try:
        if holder.configured:
            try:
                provider = await holder.prepare()
            except (ProviderError, ValueError) as exc:
                message = exc.message if isinstance(exc, ProviderError) else str(exc)
                if not args.estimate:
                    raise CliError(message) from None
                unready = message  # an estimate still counts the parts and calls
        # the person's prices, and the cap of Settings → Chat & agent → Extracting documents unless given here
        ex = extraction.start(args.session, doc, provider, guidance=args.guidance, max_calls=args.max_calls,
                              max_cost_usd=args.max_cost, on_progress=None if args.json else _progress_printer())
        estimate = await asyncio.to_thread(ex.estimate)
        if args.estimate:
            return _print_estimate(args, doc, estimate, unready)
        if provider is None and estimate.calls:
            raise CliError(NO_PROVIDER)
        try:
            plan = await ex.run()
        except ExtractionStopped as exc:
            if args.json:
                print_json({"error": exc.message, "state": exc.state, "progress": ex.progress.to_json()})
            else:
                print(f"cks-desktop: {exc.message}", file=sys.stderr)
            return EXIT_TOOL_ERROR
        finally:
            if not args.json and sys.stderr.isatty():
                sys.stderr.write("\n" if ex.progress.chunks_done else "")
        return await _finish(extraction, args, ex, plan)
    finally:
        await holder.aclose()


def _progress_printer() -> Any:
    """One progress line, rewritten in place on a terminal; one line per part otherwise (a log)."""
    live = sys.stderr.isatty()

    def show(p: "Progress") -> None:
        cost = f", ${p.cost_usd:.4f}" if p.cost_usd is not None else ""
        line = (f"{p.chunks_done}/{p.chunks_total} parts read ({p.cached} from the cache), "
                f"{counted(p.objects_found, 'object')} found, {counted(p.calls, 'call')}{cost}"
                f"{f', {p.waiting}' if p.waiting else ''}")
        sys.stderr.write(f"\r{line}   " if live else f"{line}\n")
        sys.stderr.flush()

    return show


def _print_estimate(args: argparse.Namespace, doc: Any, e: Any, unready: str = "") -> int:
    """``unready``: why no provider could be used (the cost is then unknown; parts and calls are not)."""
    if args.json:
        out = {"document": doc.name, "estimate": e.to_json()}
        if unready:
            out["cost_unknown_because"] = unready
        print_json(out)
        return EXIT_OK
    why = unready.rstrip(".") if unready else "no price for this model"
    cost = f"about ${e.cost_usd:.4f}" if e.cost_usd is not None else f"unknown ({why})"
    print(f"{doc.name}: {counted(e.chunks, 'part')} ({e.cached} already read), at most "
          f"{counted(e.calls, 'model call')}, ~{e.input_tokens:,} input and ~{e.output_tokens:,} output tokens; "
          f"cost {cost}.")
    return EXIT_OK


def _summary(plan: "Plan") -> dict[str, int]:
    objs = [o for o in plan.objects if o.include]
    return {"objects_new": sum(1 for o in objs if o.action == "add"),
            "objects_merged": sum(1 for o in objs if o.action == "merge"),
            "relations_new": sum(1 for r in plan.relations if r.include and r.action == "add"),
            "held_for_review": sum(1 for i in plan.items() if not i.include),
            "possible_duplicates": len(plan.pairs)}


def _describe(plan: "Plan") -> str:
    s = _summary(plan)
    return (f"{counted(s['objects_new'], 'new object')}, {counted(s['objects_merged'], 'merge')} into existing "
            f"objects, {counted(s['relations_new'], 'new relation')}; {s['held_for_review']} held for review, "
            f"{counted(s['possible_duplicates'], 'possible duplicate')}")


def _print_plan(plan: "Plan") -> None:
    from cks_desktop.untrusted_text import reveal

    print(f"{plan.document_name}: {_describe(plan)}.")
    for warning in plan.warnings:
        print(f"warning: {warning}")
    items = plan.items()
    for item in items[:SHOWN]:
        if item.risk == 0 and item.include:
            continue
        mark = "  " if item.include else "✗ "
        what = f"{item.type} {item.name!r}" if item.kind == "object" else f"{item.source} —{item.type}→ {item.target}"
        print(reveal(f"{mark}[{item.key}] {item.action} {what}: {'; '.join(item.reasons)}"))
    for pair in plan.pairs[:SHOWN]:
        print(reveal(f"? {pair['a_name']!r} and {pair['b_name']!r} may be the same ({pair['reason']})"))
    for line in plan.skipped[:SHOWN]:
        print(reveal(f"skipped: {line}"))


def _confirm(args: argparse.Namespace, what: str) -> None:
    if args.yes:
        return
    if not sys.stdin.isatty():
        raise CliError(f"Writing {what} needs confirmation: run again with --yes (there is no terminal to ask).",
                       EXIT_USAGE)
    answer = input(f"Write {what} to the graph? [y/N] ").strip().casefold()
    if answer not in ("y", "yes"):
        raise CliError("Nothing was written.", EXIT_TOOL_ERROR)


async def _finish(extraction: "ExtractionUseCase", args: argparse.Namespace, ex: "Extraction", plan: "Plan") -> int:
    failed = bool(ex.progress.failed_chunks)
    if args.review_file:
        Path(args.review_file).expanduser().write_text(json.dumps(plan.to_json(), ensure_ascii=False, indent=1),
                                                       encoding="utf-8")
    if not args.apply:
        if args.json:
            print_json({"document": plan.document_name, "summary": _summary(plan), "progress": ex.progress.to_json(),
                        "review_file": args.review_file, "plan": None if args.review_file else plan.to_json()})
        else:
            _print_plan(plan)
            if args.review_file:
                print(f"The plan is in {args.review_file}; edit it, then: cks-desktop documents extract "
                      f"--session {args.session} {args.ref} --apply-review {args.review_file}")
        return EXIT_TOOL_ERROR if failed else EXIT_OK
    if not args.json:
        _print_plan(plan)
    _confirm(args, _describe(plan))
    results = await asyncio.to_thread(extraction.apply, ex, plan, ORIGIN, per_part=args.per_chunk)
    _report(args, plan, results, ex.progress.to_json())
    return EXIT_TOOL_ERROR if failed else EXIT_OK


def _report(args: argparse.Namespace, plan: "Plan", results: list[Any], progress: dict[str, Any] | None) -> None:
    changes = [r.change.id for r in results if r.change is not None]
    if args.json:
        print_json({"document": plan.document_name, "summary": _summary(plan), "changes": changes,
                    "written": [r.summary for r in results if r.change is not None], "progress": progress})
        return
    if not changes:
        print("Nothing new to write: the graph already has all of it.")
        return
    for r in results:
        if r.change is not None:
            print(f"Wrote change {r.change.id}: {r.summary}.")
    print(f"Undo with: cks-desktop tools call revert_change --session {args.session} "
          f"--args '{{\"change_id\": \"{changes[-1]}\"}}' --yes" if len(changes) == 1 else
          f"{counted(len(changes), 'change')} written (one per part).")


def _splits(plan: "Plan") -> list[tuple[str, str]]:
    """The merges the person marked ``"split": true`` in the review file, as identity pairs."""
    from cks_desktop.extraction.plan import split_identities

    out = []
    for item in plan.objects:
        names = [str(m.get("name", "")) for m in item.merges if isinstance(m, dict) and m.get("split") is True]
        if names:
            out.extend(split_identities(item, names))
    return out


def _apply_review(store: "GraphStore", args: argparse.Namespace, doc: Any) -> int:
    from cks_desktop.extraction.plan import Plan
    from cks_desktop.runtime.cases import UseCases
    from cks_desktop.settings import Settings

    path = Path(args.apply_review).expanduser()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise CliError(f"The review file {path} cannot be read ({exc.strerror or exc}).", EXIT_USAGE) from None
    except ValueError:
        raise CliError(f"The review file {path} is not valid JSON.", EXIT_USAGE) from None
    try:
        plan = Plan.from_json(data)
    except ValueError as exc:
        raise CliError(f"The review file {path} {exc}.", EXIT_USAGE) from None
    if plan.session_id != args.session or plan.document_id != doc.id:
        raise CliError(f"The review file {path} is for another session or document.", EXIT_USAGE)
    extraction = UseCases(store, Settings.load(app_paths(args).settings_file)).extraction
    splits = _splits(plan)
    if splits:
        extraction.mark_distinct(args.session, splits)
        print(f"Recorded {counted(len(splits), 'pair')} as different things; nothing was written. Plan again "
              f"(free, from the cache): cks-desktop documents extract --session {args.session} {args.ref} "
              f"--review-file {args.apply_review}")
        return EXIT_OK
    _confirm(args, _describe(plan))
    results = extraction.apply_reviewed(plan, ORIGIN)
    _report(args, plan, results, None)
    return EXIT_OK
