"""The live "Thinking… 4 s" counter of the reasoning line: it counts while the
model thinks and stops when the answer starts. A scripted clock stands in for the seconds and the
timer ticks every 10 ms, so the test waits on the line's words, never for a fixed time."""

from __future__ import annotations

from cks_desktop.ui.chat.reasoning_view import ReasoningView


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_counter_runs_while_thinking_and_stops_when_the_answer_starts(qtbot) -> None:
    clock = Clock()
    view = ReasoningView(clock=clock)
    qtbot.addWidget(view)
    view.ticker.setInterval(10)
    view.set_state("Let me", None, True)
    assert view.headline == "Thinking…" and view.ticker.isActive()
    clock.now += 4.2
    qtbot.waitUntil(lambda: view.headline == "Thinking… 4 s", timeout=3000)
    assert view.toggle.text() == "Thinking… 4 s"
    view.set_state("Let me check", None, True)  # more thinking streams in: the count goes on
    assert view.headline == "Thinking… 4 s"
    clock.now += 3.0
    qtbot.waitUntil(lambda: view.headline == "Thinking… 7 s", timeout=3000)
    view.set_state("Let me check", 7.3, False)  # the answer started
    assert not view.ticker.isActive() and view.headline == "Thought for 7 s"
    clock.now += 10
    view.ticker.timeout.emit()  # a tick already queued when the answer started changes nothing
    assert view.headline == "Thought for 7 s" and not view.ticker.isActive()
