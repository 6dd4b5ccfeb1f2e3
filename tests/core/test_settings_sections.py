"""The typed settings: code reads sections, never the file's dict; a bad value is one sentence naming
its key and is never written; a hand-edited bad value reads as its default, with a note; the shapes
older versions wrote are migrated; keys this version does not know survive a save."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

from cks_desktop.settings import Agent, Documents, Extraction, Settings, SettingsError, Sharing, Storage, Ui

ROOT = Path(__file__).resolve().parents[2]
# the file's dict, or a provider's raw entry (``Settings.provider``, kept for tests that write a file
# as a person would): the app reads ``section(...)`` and ``provider_entry(name)``
RAW_READ = re.compile(r"settings\.data\b|\.data\[\"(providers|agent|documents|extraction|mcp_serve|storage|ui)\"\]"
                      r"|settings\.provider\(")


def test_no_module_outside_the_settings_package_reads_the_files_dict() -> None:
    offenders = []
    for path in sorted((ROOT / "cks_desktop").rglob("*.py")):
        if "settings" in path.relative_to(ROOT / "cks_desktop").parts[:1]:
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if RAW_READ.search(line):
                offenders.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert offenders == []


def test_a_bad_value_is_one_sentence_naming_its_key_and_nothing_is_written(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    settings = Settings.load(path)
    before = json.dumps(settings.data, sort_keys=True)
    bad = [replace(settings.section(Extraction), review_over_chars=-5),
           replace(settings.section(Agent), prices={"gpt-x": {"input": "cheap", "output": 1.0}}),
           replace(settings.section(Ui), theme="purple"),
           replace(settings.section(Documents), max_file_mb=0),
           replace(settings.section(Sharing), approval="nobody")]
    keys = ["extraction.review_over_chars", "agent.prices.gpt-x.input", "ui.theme", "documents.max_file_mb",
            "mcp_serve.approval"]
    for value, key in zip(bad, keys, strict=True):
        with pytest.raises(SettingsError) as info:
            settings.set_section(value)
        sentence = str(info.value)
        assert key in sentence and "\n" not in sentence and sentence.endswith("."), sentence
    assert json.dumps(settings.data, sort_keys=True) == before


def test_a_hand_edited_bad_value_reads_as_its_default_and_says_so(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"extraction": {"review_over_chars": "lots", "max_calls": 7},
                                "agent": {"prices": {"ok": {"input": 1, "output": 2}, "bad": {"input": -1}}}}),
                    encoding="utf-8")
    settings = Settings.load(path)
    extraction = settings.section(Extraction)
    assert extraction.review_over_chars == Extraction().review_over_chars and extraction.max_calls == 7
    assert set(settings.section(Agent).prices) == {"ok"}  # the good entry stays, the bad one is dropped
    assert "extraction.review_over_chars" in (settings.problem or "")
    # the file keeps what it held until that section is set
    settings.set_section(replace(extraction, max_calls=8))
    settings.save()
    assert json.loads(path.read_text(encoding="utf-8"))["extraction"] == {"review_over_chars": "lots", "max_calls": 8}


def test_older_shapes_are_migrated_and_unknown_keys_survive(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"agent.prices": {"m": {"input": 1, "output": 2}},
                                "extraction": {"caps": {"max_calls": 3, "max_cost_usd": 0.5}},
                                "storage": {"backend": "file", "from_a_newer_version": True},
                                "something_new": {"x": 1}}), encoding="utf-8")
    settings = Settings.load(path)
    assert settings.section(Agent).prices == {"m": {"input": 1.0, "output": 2.0}}
    assert (settings.section(Extraction).max_calls, settings.section(Extraction).max_cost_usd) == (3, 0.5)
    settings.set_section(replace(settings.section(Storage), backend="file"))
    settings.set_section(replace(settings.section(Ui), theme="dark"))
    settings.save()
    saved = json.loads(path.read_text(encoding="utf-8"))
    assert "agent.prices" not in saved and "caps" not in saved["extraction"]
    assert saved["storage"]["from_a_newer_version"] is True and saved["something_new"] == {"x": 1}
    assert saved["ui"]["theme"] == "dark"


def test_a_provider_entry_is_typed_checked_and_written_key_by_key(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    settings = Settings.load(path)
    settings.provider("openai").update({"images": True, "api": "responses", "context_window": 64_000,
                                       "future_key": "kept"})
    entry = settings.provider_entry("openai")
    assert (entry.images, entry.api, entry.context_window) == ("yes", "responses", 64_000)
    with pytest.raises(SettingsError, match="providers.openai.max_retries"):
        settings.set_provider_entry("openai", replace(entry, max_retries=99))
    settings.set_provider_entry("openai", replace(entry, model="gpt-test", images=None))
    settings.save()
    saved = json.loads(path.read_text())["providers"]["openai"]
    assert saved["model"] == "gpt-test" and "images" not in saved and saved["future_key"] == "kept"
