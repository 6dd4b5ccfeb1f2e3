"""The chat dock: a Qt-free model + presenter fed by agent events, and thin widgets."""
