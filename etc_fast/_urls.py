"""``base_url`` spelling that does not change what server is meant (used by the run identity and the
reply cache key). Imports nothing heavy, so the config reader can use it."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

__all__ = ["normalise_base_url"]

#: Host names that all mean "this machine".
_LOOPBACK = {"localhost", "127.0.0.1", "::1", "[::1]", "0.0.0.0", "localhost.localdomain"}
_DEFAULT_PORTS = {"http": 80, "https": 443}


def normalise_base_url(url: str | None) -> str | None:
    """One spelling per endpoint: lower-case scheme and host, loopback names as ``localhost``,
    default ports dropped, trailing slashes removed. ``None`` (the OpenAI API) stays ``None``.

    >>> normalise_base_url("http://127.0.0.1:8000/v1/")
    'http://localhost:8000/v1'
    """
    if url is None:
        return None
    text = str(url).strip()
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        return text.rstrip("/")
    if not parts.scheme or not parts.hostname:
        return text.rstrip("/")
    scheme = parts.scheme.lower()
    host = parts.hostname.lower()
    if host in _LOOPBACK or host.startswith("127."):
        host = "localhost"
    elif ":" in host:
        host = f"[{host}]"
    netloc = host if port is None or _DEFAULT_PORTS.get(scheme) == port else f"{host}:{port}"
    if parts.username:
        netloc = "@" + netloc  # credentials never enter an identity or a cache key
    path = parts.path.rstrip("/")
    return urlunsplit((scheme, netloc, path, parts.query, ""))
