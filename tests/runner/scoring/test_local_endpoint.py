"""The scoring endpoints against the real llama.cpp server (SmolLM2-135M via xllamacpp):
JSON mode reaches the server, and a reply cut short is retried once, then recorded."""
import json

import pytest

from runner.core.paths import Environment
from runner.core.settings import ModelSettings
from runner.models.endpoint import Endpoint
from runner.models.local_server import LocalModel
from runner.models.openai_client import JSON_MODE
from validation.llm_parser import llm_parse

MODELS = Environment.from_os().paths.data_root / "models"

REPORT = "Final answer: the recording has 64 channels sampled at 160 Hz."


def endpoint(model: LocalModel, cache_dir) -> Endpoint:
    send = lambda messages: model.client.complete(messages, response_format=JSON_MODE).text  # noqa: E731
    return Endpoint("parser", "local-test", send, cache_dir=cache_dir)


@pytest.fixture(scope="module")
def short_server():
    """max_tokens=4: every reply is cut inside its JSON object."""
    with LocalModel(models_dir=MODELS, settings=ModelSettings(max_tokens=4)) as model:
        yield model


@pytest.fixture(scope="module")
def server():
    with LocalModel(models_dir=MODELS, settings=ModelSettings(max_tokens=48)) as model:
        yield model


def test_cut_reply_is_retried_once_then_unparsed(short_server, tmp_path):
    calls = []
    ep = endpoint(short_server, tmp_path)
    counted = Endpoint("parser", "local-test", lambda m: calls.append(m) or ep.send(m), cache_dir=None)
    call = llm_parse(counted.chat, counted.model, REPORT, "Extract n_channels (integer).", ["n_channels"])
    assert len(calls) == 2 and len(call.replies) == 2
    assert call.status == "unparsed" and call.fields == {"n_channels": None}
    for reply in call.replies:
        with pytest.raises(ValueError):
            json.loads(reply)
    assert call.replies[0].lstrip().startswith("{")  # JSON mode: the grammar opens an object


def test_json_mode_reply_is_validated_and_cached(server, tmp_path):
    ep = endpoint(server, tmp_path / "cache")
    first = llm_parse(ep.chat, ep.model, REPORT, "Extract n_channels (integer).", ["n_channels"])
    assert first.status in ("parsed", "unparsed")
    if first.status == "parsed":
        assert set(first.fields) == {"n_channels"}
    cached = list((tmp_path / "cache").rglob("*.json"))
    assert len(cached) == len(first.replies)
    ep.send = lambda messages: pytest.fail("a cached request reached the server")
    again = llm_parse(ep.chat, ep.model, REPORT, "Extract n_channels (integer).", ["n_channels"])
    assert again.replies == first.replies
