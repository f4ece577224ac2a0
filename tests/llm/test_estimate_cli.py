"""``--prices`` on the command line and model names that are a typo of an offline model."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from etc_fast.run import main
from etc_fast.runner import ConfigError
from etc_fast.runner._config import check_model_name
from etc_fast.runner._prices import parse_prices_option
from tests.llm.test_estimate import config


def usd_line(out: str) -> str:
    return next(x.strip() for x in out.splitlines() if x.strip().startswith("USD at"))


def test_inline_prices_price_every_llm_model_of_the_run(tmp_path, capsys):
    path = config(tmp_path)
    assert main([str(path), "--dry-run", "--prices", "input=0.4,output=1.6"]) == 0
    out = capsys.readouterr().out
    assert usd_line(out).startswith("USD at $0.4 prompt / $1.6 completion per 1M tokens: at least ~$"), out
    assert "no price for" not in out
    # prompt/completion are the same as input/output; spaces and case are ignored
    assert parse_prices_option(" Prompt = 1 , completion=2", ["a", "b"]) == {
        "a": {"prompt": 1.0, "completion": 2.0}, "b": {"prompt": 1.0, "completion": 2.0}}


def test_command_line_prices_replace_the_configs_price_of_that_model(tmp_path, capsys):
    path = config(tmp_path, prices={"test-model": {"prompt": 100.0, "completion": 100.0}})
    assert main([str(path), "--dry-run"]) == 0
    assert "$100 prompt" in usd_line(capsys.readouterr().out)
    assert main([str(path), "--dry-run", "--prices", "input=0,output=0"]) == 0
    line = usd_line(capsys.readouterr().out)
    assert line.startswith("USD at $0 prompt / $0 completion") and "at most ~$0.00" in line, line


def test_a_prices_file_prices_models_by_name(tmp_path, capsys):
    prices = tmp_path / "prices.yaml"
    prices.write_text(yaml.safe_dump({"test-model": {"prompt": 3, "completion": 12}, "other": {"prompt": 1, "completion": 1}}))
    assert main([str(config(tmp_path)), "--dry-run", "--prices", str(prices)]) == 0
    assert "$3 prompt / $12 completion" in usd_line(capsys.readouterr().out)


def test_the_shipped_prices_file_is_valid_and_names_the_shipped_llm_models():
    shipped = Path(__file__).resolve().parents[2] / "configs" / "prices" / "openai.yaml"
    prices = parse_prices_option(str(shipped), [])
    assert {"gpt-4.1-mini", "gpt-4.1", "gpt-4.1-mini-2025-04-14", "gpt-4.1-2025-04-14"} <= set(prices)
    assert "USD per 1M tokens" in shipped.read_text() and "check" in shipped.read_text()


@pytest.mark.parametrize("value, why", [
    ("input=0.4", "the output price is missing"),
    ("output=0.4", "the input price is missing"),
    ("input=cheap,output=1", "input='cheap' is not a number"),
    ("input=-1,output=1", "must be a finite number >= 0"),
    ("input=nan,output=1", "must be a finite number >= 0"),
    ("input=1,input=2,output=1", "the input price is given twice"),
    ("cached=0.1,input=1,output=1", "'cached=0.1' is not input=USD or output=USD"),
    ("input=1;output=2", "is not a number"),
    ("no-such-prices.yaml", "neither input=USD,output=USD nor a prices file"),
])
def test_bad_inline_prices_exit_2_naming_the_option(tmp_path, capsys, value, why):
    path = config(tmp_path)
    assert main([str(path), "--dry-run", "--prices", value]) == 2
    err = capsys.readouterr().err
    assert "command line: --prices: " in err and why in err, err


@pytest.mark.parametrize("body, key, why", [
    ("[1, 2]", "", "expected a mapping"),
    ("", "", "empty"),
    ("test-model: {prompt: 1}", "test-model.completion", "missing"),
    ("test-model: {prompt: 1, completion: -2}", "test-model.completion", ">= 0"),
    ("test-model: {prompt: 1, completion: 2, cached: 1}", "test-model", "cached"),
    ("test-model: {prompt: 1, completion: 2}\ntest-model: {prompt: 1, completion: 2}", "", "duplicate"),
    ("test-model: [", "", "not valid YAML"),
])
def test_a_bad_prices_file_exits_2_naming_the_file_and_key(tmp_path, capsys, body, key, why):
    prices = tmp_path / "prices.yaml"
    prices.write_text(body)
    assert main([str(config(tmp_path)), "--dry-run", "--prices", str(prices)]) == 2
    err = capsys.readouterr().err
    assert f"{prices}: {key}" in err and why in err, err


@pytest.mark.parametrize("typo, meant", [("symbollic", "symbolic"), ("symbolc", "symbolic"), ("Symbolic", "symbolic"),
                                          ("scriptd", "scripted")])
def test_a_model_name_close_to_an_offline_model_is_refused_in_yaml_and_on_the_command_line(tmp_path, capsys, typo, meant):
    raw = yaml.safe_load(config(tmp_path).read_text())
    raw["grids"][0]["model"] = typo
    bad = tmp_path / "typo.yaml"
    bad.write_text(yaml.safe_dump(raw))
    out = tmp_path / "out"
    for argv in ([str(bad), "--dry-run"], [str(bad), "--out", str(out)],
                 [str(config(tmp_path)), "--model", typo, "--dry-run"], [str(config(tmp_path)), "--model", typo, "--out", str(out)]):
        assert main(argv) == 2
        captured = capsys.readouterr()
        assert f"unknown model {typo!r}: did you mean {meant!r}?" in captured.err, captured.err
        assert ("grids[0].model" if argv[0] == str(bad) else "command line: --model") in captured.err
        assert "LLM estimate" not in captured.out
    assert not out.exists()


@pytest.mark.parametrize("name", ["gpt-4.1-mini", "gpt41mini", "o3", "s1", "o4mini", "test-model", "Qwen/Qwen3-8B",
                                  "llama3.2:1b", "gemma-3-270m", "symbolic", "scripted", "sr"])
def test_llm_names_and_offline_names_are_accepted(name):
    check_model_name(name, "x.yaml", "grids[0].model")


def test_a_typo_raises_a_config_error():
    with pytest.raises(ConfigError, match="did you mean 'symbolic'"):
        check_model_name("symbolik", "x.yaml", "grids[0].model")
