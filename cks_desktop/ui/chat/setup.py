"""The "no provider yet" explanation shown above the chat (Qt-free text).

The app is useful without a model (every graph feature works by hand), so the
notice explains the three ways to get one, and says whether a local Ollama
answered at its default address.
"""

from __future__ import annotations

from html import escape


def setup_notice_html(ollama_url: str, ollama_running: bool | None) -> str:
    if ollama_running:
        ollama = (f"a local <b>Ollama</b> is running at {escape(ollama_url)} — "
                  "<a href='use-ollama'>use it</a>")
    elif ollama_running is None:
        ollama = f"a local <b>Ollama</b> (checking {escape(ollama_url)} …)"
    else:
        ollama = (f"a local <b>Ollama</b> — none answered at {escape(ollama_url)}; start it, or set its "
                  "address in <a href='settings:providers'>Settings → Providers</a>")
    return (
        "<b>No model provider is set up yet.</b> The graph, sessions, import and export all work without "
        "one. To chat with an assistant, use one of:"
        "<ul style='margin-left:-20px'>"
        "<li>an <b>Anthropic</b> API key — <a href='settings:providers'>Settings → Providers</a></li>"
        f"<li>{ollama}</li>"
        "<li>any <b>OpenAI-compatible</b> server (OpenAI, LM Studio, vLLM, llama.cpp) by its URL — "
        "<a href='settings:providers'>Settings → Providers</a></li>"
        "</ul>"
    )
