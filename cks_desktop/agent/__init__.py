"""The chat loop (ai_chat), its events, and the transcript store."""
