"""What screenshots of the real window once showed wrong (clipped labels, hidden sources), held by tests: a real window on a
throwaway data folder. Each test names the picture that showed the fault."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QToolButton

from tests.ui.conftest import open_window
from tests.ui.test_window_layout import resized, until

SMALL_SCREEN = (1024, 700)
TITLE_BAR = 40  # what a window manager's frame takes from a dialog's height, about


@pytest.mark.asyncio
async def test_the_settings_dialog_fits_a_1024x700_screen(qtbot, home) -> None:
    """settings-mcp-*-1024x700.png: Chat & agent (about 760 px tall) made the whole dialog taller
    than the screen, so Save and Cancel were off it; the page now scrolls."""
    from cks_desktop.ui.settings.dialog import SettingsDialog

    async with open_window(home) as window:
        window.open_settings("agent")
        dialog = window.findChild(SettingsDialog)
        assert dialog is not None
        need = dialog.minimumSizeHint()
        assert need.width() <= SMALL_SCREEN[0] and need.height() <= SMALL_SCREEN[1] - TITLE_BAR, need
        dialog.reject()


@pytest.mark.asyncio
async def test_an_empty_graph_shows_no_empty_legend_card(qtbot, home) -> None:
    """first-start-*.png: an empty "Types" card sat over the empty graph's call to action."""
    async with open_window(home) as window:
        view = window.graph_view
        await until(lambda: view.isVisible())
        assert not view.legend.isVisible()
        window.services.store.apply(window.current_session, [
            {"op": "add_object", "type": "Person", "name": "Ada Lovelace"}], "user")
        await until(lambda: view.legend.isVisible())


@pytest.mark.asyncio
async def test_the_composer_row_keeps_its_controls_readable_in_a_narrow_dock(qtbot, home) -> None:
    """chat-*-1024x700.png: "Fetc…dels" and "ttach." — text buttons clipped in the ~330 px dock.
    Fetch models (and the MCP Attach) are icon buttons that name themselves in a tooltip."""
    async with open_window(home) as window:
        await resized(window, *SMALL_SCREEN)
        fetch = window.chat_panel.composer.fetch_button
        assert isinstance(fetch, QToolButton) and not fetch.icon().isNull()
        assert fetch.toolButtonStyle().name == "ToolButtonIconOnly"
        assert "Fetch models" in fetch.toolTip() and fetch.accessibleName() == "Fetch models"


@pytest.mark.asyncio
async def test_a_long_session_title_never_scrolls_the_sessions_list_sideways(qtbot, home) -> None:
    """import-preview-*.png: "Joliot-Curie letters" gave the sessions list a horizontal scroll bar."""
    async with open_window(home) as window:
        await resized(window, *SMALL_SCREEN)
        window.sessions.create("Joliot-Curie letters and the Radium Institute, 1920–1934")
        listing = window.sidebar.list
        await until(lambda: listing.count() == 2)
        assert not listing.horizontalScrollBar().isVisible()
