"""``--prices`` on the command line: token prices for the ``--dry-run`` estimate and the report.

Two forms:

* ``--prices input=0.4,output=1.6`` (``prompt``/``completion`` are accepted for ``input``/``output``):
  USD per 1M tokens for every LLM model of the run;
* ``--prices FILE.yaml``: a mapping ``{MODEL: {prompt: USD per 1M, completion: USD per 1M}}`` (the
  schema of ``llm.prices``), keyed by a grid's model name or the id sent.

Entries given on the command line replace the config's ``llm.prices`` entries of the same model;
the others are kept. Prices never change a run's identity, so they never block a resume.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["parse_prices_option", "with_prices"]

_PARTS = {"input": "prompt", "prompt": "prompt", "output": "completion", "completion": "completion"}
#: Largest prices file read.
_MAX_BYTES = 2**20


def _inline(value: str, models: Sequence[str]) -> dict[str, dict[str, float]]:
    from etc_fast.runner._config import ConfigError

    def err(message: str) -> ConfigError:
        return ConfigError("command line", "--prices", message)

    rate: dict[str, float] = {}
    for item in value.split(","):
        name, eq, number = item.partition("=")
        name = name.strip().lower()
        if not eq or name not in _PARTS:
            raise err(f"{item.strip()!r} is not input=USD or output=USD (USD per 1M tokens; e.g. input=0.4,output=1.6)")
        part = _PARTS[name]
        if part in rate:
            raise err(f"the {name} price is given twice")
        try:
            usd = float(number)
        except ValueError:
            raise err(f"{name}={number.strip()!r} is not a number (USD per 1M tokens)") from None
        if not math.isfinite(usd) or usd < 0:
            raise err(f"{name}={number.strip()} must be a finite number >= 0 (USD per 1M tokens)")
        rate[part] = usd
    missing = [p for p in ("prompt", "completion") if p not in rate]
    if missing:
        raise err(f"the {' and '.join('input' if p == 'prompt' else 'output' for p in missing)} price is missing "
                  "(give both: input=USD,output=USD per 1M tokens)")
    return {m: dict(rate) for m in models}


def _file(value: str) -> dict[str, dict[str, float]]:
    from etc_fast.runner._config import ConfigError, _Parser, read_yaml_file

    path = Path(value)
    if not path.is_file():
        raise ConfigError("command line", "--prices", f"{value!r} is neither input=USD,output=USD nor a prices file "
                          "(no such file)")
    raw = read_yaml_file(path, value, _MAX_BYTES, f"the prices file is larger than {_MAX_BYTES // 2**20} MiB")
    if raw is None:
        raise ConfigError(value, "", "the prices file is empty")
    return _Parser(value).prices(raw, key="")


def parse_prices_option(value: str, models: Sequence[str]) -> dict[str, dict[str, float]]:
    """The prices ``--prices VALUE`` gives: inline ``input=..,output=..`` for each of ``models``, or
    the mapping of a YAML file. Raises :class:`~etc_fast.runner.ConfigError` naming what is wrong."""
    if "=" in value:
        return _inline(value, models)
    return _file(value)


def with_prices(config: Any, value: str | None) -> Any:
    """``config`` with ``--prices VALUE`` merged into ``llm.prices`` (``None``: unchanged)."""
    from etc_fast.runner._config import OFFLINE_MODELS

    if value is None:
        return config
    llm_models = [m for m in config.models if m not in OFFLINE_MODELS]
    prices = {**config.llm.prices, **parse_prices_option(value, llm_models)}
    return dataclasses.replace(config, llm=dataclasses.replace(config.llm, prices=prices))
