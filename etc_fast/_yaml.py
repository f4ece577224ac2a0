"""Reading user YAML files (run configurations, custom tasks) without surprises.

PyYAML composes nested collections recursively, so a document nested a few thousand levels deep
ends in ``RecursionError`` (or worse) before any validation can run. :func:`nesting_problem` measures
the depth from the token stream, which PyYAML's scanner produces iteratively, and the loaders
refuse a deep document before composing it. :func:`decode_text` turns bytes that are not UTF-8
into a message that says where.
"""

from __future__ import annotations

import yaml

__all__ = ["MAX_NESTING", "nesting_problem", "decode_text"]

#: Deepest nesting of mappings and lists a user YAML file may have (the schemas need 4 or 5).
MAX_NESTING = 32

_OPEN = (yaml.BlockMappingStartToken, yaml.BlockSequenceStartToken, yaml.FlowMappingStartToken, yaml.FlowSequenceStartToken)
_CLOSE = (yaml.BlockEndToken, yaml.FlowMappingEndToken, yaml.FlowSequenceEndToken)


def nesting_problem(text: str, limit: int = MAX_NESTING) -> str | None:
    """Why ``text`` is nested too deeply to load (with the line), or ``None``.

    Scanning errors are left to the loader, which reports them with their position.
    """
    depth = 0
    try:
        for token in yaml.scan(text, Loader=yaml.SafeLoader):
            if isinstance(token, _OPEN):
                depth += 1
                if depth > limit:
                    line = token.start_mark.line + 1
                    return f"nested more than {limit} levels deep (line {line}); a file of this kind needs only a few"
            elif isinstance(token, _CLOSE):
                depth -= 1
    except yaml.YAMLError:
        return None
    return None


def decode_text(data: bytes) -> str:
    """``data`` as UTF-8 text.

    Raises:
        ValueError: Not UTF-8; the message gives the line and byte offset of the first bad byte.
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ValueError(
            f"not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}, line {line}); save the file as UTF-8"
        ) from None
