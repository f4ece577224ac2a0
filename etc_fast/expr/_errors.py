"""The error raised for text outside the hypothesis language."""

from __future__ import annotations


class ExprError(ValueError):
    """A hypothesis is not in the hypothesis language.

    Attributes:
        message: What is wrong, e.g. ``"subscripts are not allowed"``.
        position: Where, as ``"line 1, col 7"`` (1-based), or None when it concerns the whole text.
    """

    def __init__(self, message: str, position: str | None = None):
        self.message = message
        self.position = position
        super().__init__(f"{message} at {position}" if position else message)

    def __reduce__(self):
        return (type(self), (self.message, self.position))
