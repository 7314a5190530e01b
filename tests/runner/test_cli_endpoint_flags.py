"""`eegbench eval`'s endpoint options: parsed into ModelSettings and ControlLimits, shown in
--help, refused with a message naming the flag or field, and recorded in run.json and the
resume key (the model's options and its endpoint's limits alike)."""
import pytest

from runner import cli
from runner.commands.parser import config_from_args


def config(*options: str):
    args = cli.build_parser().parse_args(["eval", "--model", "openai:m", "--run", "r", *options])
    return config_from_args(args, "openai:m")


def test_the_options_reach_the_settings():
    made = config("--temperature", "none", "--max-tokens-field", "max_completion_tokens",
                  "--reasoning-effort", "none", "--model-arg", "top_p=0.5", "--model-arg", 'provider={"sort": "price"}',
                  "--max-connections", "2", "--rpm", "60", "--tpm", "90000", "--max-instance-tokens", "50000")
    settings = made.model_settings
    assert settings.temperature is None and settings.max_tokens_field == "max_completion_tokens"
    assert settings.reasoning_effort == "none"
    assert settings.model_args == {"top_p": 0.5, "provider": {"sort": "price"}}
    assert (settings.max_connections, settings.rpm, settings.tpm) == (2, 60, 90000)
    assert made.controls.max_instance_tokens == 50000


def test_defaults_send_no_reasoning_and_no_ceiling():
    made = config()
    assert made.model_settings.reasoning_effort is None and made.model_settings.model_args == {}
    assert made.model_settings.max_connections == 8 and made.model_settings.rpm is None
    assert made.controls.max_instance_tokens is None and made.model_settings.temperature == 0.0


def test_options_and_limits_are_in_the_resume_key():
    base = config().resume_key()
    assert config("--jobs", "4").resume_key() == base  # how it runs is not
    for changed in (("--max-connections", "1"), ("--rpm", "5"), ("--tpm", "100"),("--model-arg", "seed=1"), ("--reasoning-effort", "low"), ("--temperature", "none"),
                    ("--max-tokens-field", "max_completion_tokens"), ("--max-instance-tokens", "9")):
        assert config(*changed).resume_key() != base, changed


@pytest.mark.parametrize("options, said", [
    (["--model-arg", "messages=[]"], "--model-arg messages"),
    (["--model-arg", "temperature=1"], "--temperature sets 'temperature'"),
    (["--temperature", "none", "--model-arg", "temperature=1"], None),  # not sent by a flag: allowed
    (["--model-arg", "top_p"], "--model-arg 'top_p': expected KEY=VALUE"),
    (["--max-connections", "0"], "max_connections"),
    (["--rpm", "0"], "rpm"),
    (["--tpm", "-5"], "tpm"),
    (["--max-instance-tokens", "0"], "max_instance_tokens"),
])
def test_bad_values_name_the_flag_or_field(tmp_path, monkeypatch, capsys, options, said):
    monkeypatch.setenv("EEGBENCH_RUNS", str(tmp_path))
    if said is None:
        config(*options)
        return
    assert cli.main(["eval", "--model", "openai:m", *options]) == cli.EXIT_USER_ERROR
    assert said in " ".join(capsys.readouterr().err.split())


@pytest.mark.parametrize("options", [["--temperature", "hot"], ["--reasoning-effort", "max"],
                                     ["--max-tokens-field", "limit"]])
def test_unparsable_values_are_refused_by_the_parser(options, capsys):
    with pytest.raises(SystemExit) as info:
        cli.build_parser().parse_args(["eval", *options])
    assert info.value.code == 2 and options[0] in capsys.readouterr().err


def test_help_lists_the_endpoint_options(capsys):
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args(["eval", "--help"])
    shown = capsys.readouterr().out
    for flag in ("--max-connections", "--rpm", "--tpm", "--model-arg", "--reasoning-effort",
                 "--max-tokens-field", "--max-instance-tokens", "--temperature"):
        assert flag in shown, flag
    assert "BrainBench ran with reasoning off" in " ".join(shown.split())
