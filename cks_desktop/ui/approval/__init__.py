"""Approval dialogs: one modal question per ``ApprovalRequest``, one at a time."""
