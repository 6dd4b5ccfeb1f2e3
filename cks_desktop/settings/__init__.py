"""Settings: one JSON file (``file.py``: load, three-way merge under a lock, atomic save, unknown
keys kept) read and written through typed sections (``sections.py``, registered in ``schema.py``
with their defaults, checks and the migrations of older files' shapes).

    extraction = settings.section(Extraction)       # typed, defaults filled in
    settings.set_section(replace(extraction, review_over_chars=50_000))   # checked, then written
    settings.save()
"""

from cks_desktop.settings.file import (
    DEFAULT_MAX_ITERATIONS,
    DEFAULTS,
    LOCK_TIMEOUT,
    PROVIDERS,
    Settings,
    SettingsError,
    SettingsSaveError,
    apply_changes,
    atomic_write_text,
    changes_between,
)
from cks_desktop.settings.sections import (
    Agent,
    Documents,
    Extraction,
    ProviderEntry,
    Providers,
    Sharing,
    Storage,
    Ui,
)

__all__ = ["DEFAULTS", "DEFAULT_MAX_ITERATIONS", "LOCK_TIMEOUT", "PROVIDERS", "Agent", "Documents", "Extraction",
           "ProviderEntry", "Providers", "Settings", "SettingsError", "SettingsSaveError", "Sharing", "Storage", "Ui",
           "apply_changes", "atomic_write_text", "changes_between"]
