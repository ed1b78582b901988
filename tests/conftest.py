"""Test isolation and shared helpers.

Inspect's data, cache and log directories go under a temporary directory (no
writes into the home directory). The data comes from ``CMI_DATA_DIR``, else the local
copy in ``../shared/data`` when it exists, else from the pinned download (cached for
the session), as in a user's run; a test that needs the real release or LoCoMo and can
have neither skips with one line saying how to provide them (the ``release_file`` and
``locomo_file`` fixtures). Every other test runs on fixtures in the repository.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = REPO.parent / "shared" / "data"
SYNTHETIC = REPO / "cmi_inspect" / "testing" / "synthetic.jsonl"
LABEL_FREE = REPO / "datasets" / "fixtures" / "label_free.jsonl"
LOCOMO_MINI = REPO / "datasets" / "fixtures" / "locomo_mini.json"

_TMP = Path(tempfile.mkdtemp(prefix="cmi-inspect-tests-"))
os.environ["XDG_DATA_HOME"] = str(_TMP / "data")
os.environ["XDG_CACHE_HOME"] = str(_TMP / "cache")
os.environ["INSPECT_CACHE_DIR"] = str(_TMP / "inspect-cache")
os.environ["INSPECT_LOG_DIR"] = str(_TMP / "logs")
os.environ["CMI_CACHE_DIR"] = str(_TMP / "cmi-cache")
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ.pop("CMI_PROBE_VERDICT", None)  # the probe decides, unless a test forces it
os.environ.pop("CMI_BATCH_VERDICT", None)  # the batch probe too
os.environ["MPLCONFIGDIR"] = str(_TMP / "matplotlib")
if SHARED_DATA.is_dir():  # a local copy when there is one; else the pinned download, cached
    os.environ.setdefault("CMI_DATA_DIR", str(SHARED_DATA))

import pytest  # noqa: E402
from cmi_inspect.latency_model import FixedLatencyModel  # noqa: E402
from inspect_ai.log import EvalLog, EvalSample  # noqa: E402
from inspect_ai.model import (  # noqa: E402
    ChatMessage,
    GenerateConfig,
    Model,
    ModelOutput,
    ModelUsage,
    get_model,
    modelapi,
)
from inspect_ai.scorer import Score  # noqa: E402

Responder = Callable[[str], Any]


def conversation_data(path: Path, conversations: dict[str, list[int]]) -> Path:
    """The synthetic records, copied into conversations (each its list of record indices)
    and named as the release names them (``conv-26_qa_0000``), written to ``path``."""
    lines = SYNTHETIC.read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines if line.strip()]
    copies = [
        json.dumps({**records[r], "example_id": f"{conv}_qa_{i:04d}"})
        for conv, held in conversations.items()
        for i, r in enumerate(held)
    ]
    path.write_text("\n".join(copies) + "\n", encoding="utf-8")
    return path


def mock_model(respond: Responder, prompts: list[str] | None = None, role: str | None = None) -> Model:
    """A mockllm model that answers each prompt with ``respond(prompt)``, usage set.

    Every prompt it receives is appended to ``prompts`` when given.
    """

    async def outputs(input: list[ChatMessage], tools: object, choice: object, config: GenerateConfig) -> ModelOutput:
        prompt = "\n".join(m.text for m in input)
        if prompts is not None:
            prompts.append(prompt)
        answer = respond(prompt)
        if inspect.isawaitable(answer):
            answer = await answer
        out = ModelOutput.from_content(model="mockllm", content=answer)
        out.usage = ModelUsage(
            input_tokens=len(prompt.split()),
            output_tokens=len(answer.split()),
            total_tokens=len(prompt.split()) + len(answer.split()),
        )
        return out

    return get_model("mockllm/model", custom_outputs=outputs, memoize=False)


def _pinned_or_skip(find: Callable[[], Path], what: str) -> Path:
    from cmi_inspect.causal_locomo.data import DATA_DIR_ENV, DataError

    try:
        return find()
    except DataError:
        pytest.skip(
            f"needs {what}: set {DATA_DIR_ENV} to a copy of the data folder "
            "(README, 'Data') or allow its pinned download"
        )


def require_data(*args: object) -> None:
    """Skip unless the data that a run with these task arguments (``data_file=F``,
    ``dataset=xl``, as CLI words or dict items) reads can be had."""
    words = " ".join(str(a) for a in args)
    if "data_file" in words:
        return
    if "dataset=xl" in words.replace("'", "").replace(": ", "="):
        from cmi_inspect.causal_locomo.xl import LOCOMO_PATH, locomo_path

        _pinned_or_skip(locomo_path, f"LoCoMo ({LOCOMO_PATH})")
    else:
        from cmi_inspect.causal_locomo.data import CAUSAL_LOCOMO_PATH, causal_locomo_path

        _pinned_or_skip(causal_locomo_path, f"the Causal-LoCoMo release ({CAUSAL_LOCOMO_PATH})")


@pytest.fixture(params=["usable", "unusable"])
def probe_verdict(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    """Each verdict the AMX probe can reach, forced (``CMI_PROBE_VERDICT``), so that a test of
    what follows from it holds on every CPU, not only on the one it was written on. Never use
    it to decode with the extra buffers: on CPUs whose AMX faults that crashes the process."""
    from cmi_inspect.local_model.probe import VERDICT_ENV

    monkeypatch.setenv(VERDICT_ENV, request.param)
    return request.param == "usable"


@pytest.fixture(params=["all", "short", "none"])
def batch_verdict(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each verdict the batch probe can reach, forced (``CMI_BATCH_VERDICT``), so that a test
    of what follows from it holds on every machine. Never use it to compare batched
    completions with one slot's: a forced ``all`` batches rows this CPU computes otherwise."""
    from cmi_inspect.local_model.batch_probe import VERDICT_ENV

    monkeypatch.setenv(VERDICT_ENV, request.param)
    return str(request.param)


@pytest.fixture(scope="session")
def release_file() -> Path:
    """The real Causal-LoCoMo release (skips when it cannot be had)."""
    from cmi_inspect.causal_locomo.data import CAUSAL_LOCOMO_PATH, causal_locomo_path

    return _pinned_or_skip(causal_locomo_path, f"the Causal-LoCoMo release ({CAUSAL_LOCOMO_PATH})")


@pytest.fixture(scope="session")
def locomo_file() -> Path:
    """The real LoCoMo conversations XL is built from (skips when they cannot be had)."""
    from cmi_inspect.causal_locomo.xl import LOCOMO_PATH, locomo_path

    return _pinned_or_skip(locomo_path, f"LoCoMo ({LOCOMO_PATH})")


@pytest.fixture(scope="session")
def real_records(release_file):
    from cmi_inspect.causal_locomo.data_files import load_records

    return load_records(release_file)


@pytest.fixture(scope="session")
def synthetic_records():
    from cmi_inspect.causal_locomo.data_files import load_records

    return load_records(SYNTHETIC)


@pytest.fixture(scope="session")
def mini_build(tmp_path_factory: pytest.TempPathFactory, mini_verdicts: Path) -> tuple[Path, dict[str, Any]]:
    """XL built from the LoCoMo-format fixture and its scripted verdicts, every example
    inline too: its folder and manifest."""
    from cmi_inspect.causal_locomo.xl import build_xl

    out = tmp_path_factory.mktemp("xl-mini")
    return out, build_xl(LOCOMO_MINI, out, inline=True, verdicts=mini_verdicts)


@pytest.fixture(scope="session")
def mini_records(mini_build):
    """The fixture's XL examples, expanded into the release's schema."""
    from cmi_inspect.causal_locomo.data_files import load_records
    from cmi_inspect.causal_locomo.xl import STORE_FILE

    out, _ = mini_build
    return load_records(out / STORE_FILE)


@pytest.fixture(scope="session")
def real_build(tmp_path_factory: pytest.TempPathFactory, locomo_file: Path) -> tuple[Path, dict[str, Any]]:
    """XL built from the real LoCoMo and the shipped verdict file, every example inline
    too: its folder and manifest."""
    from cmi_inspect.causal_locomo.xl import build_xl

    out = tmp_path_factory.mktemp("xl-real")
    return out, build_xl(locomo_file, out, inline=True)


@pytest.fixture(scope="session")
def mini_conversations():
    """The fixture's conversations, by id."""
    from cmi_inspect.causal_locomo.xl.locomo import load_locomo

    return {conv.sample_id: conv for conv in load_locomo(LOCOMO_MINI)}


def memory_task_for(record, protocol: str = "paper", model: Model | None = None, score_answer=None):
    """The MemoryTask a solver would build for one record (an ExampleRecord)."""
    from cmi_inspect.causal_locomo.dataset import conversation_of
    from cmi_inspect.causal_locomo.strategies.base import MemoryTask
    from cmi_inspect.causal_locomo.view import memory_view

    return MemoryTask(
        request=record.current_task.instruction,
        memories=memory_view(
            record.example_id,
            record.memory_bank,
            protocol,  # type: ignore[arg-type]
            [s.timestamp for s in record.past_sessions],
            record.dated_by_source,
        ),
        sessions=sorted(record.past_sessions, key=lambda s: s.timestamp),
        protocol=protocol,  # type: ignore[arg-type]
        model=model or mock_model(lambda p: "I do not know."),
        score_answer=score_answer,
        conversation=conversation_of(record.example_id) or record.example_id,
    )


def gold_scorer(record):
    """The paper's intervention scorer for one record: the deterministic score."""
    from cmi_inspect.causal_locomo.strategies.cmi import answer_key_scorer

    return answer_key_scorer(record.scoring_criteria)


def samples_of(log: EvalLog) -> list[EvalSample]:
    assert log.samples is not None, "the log has no samples"
    return log.samples


def score_of(sample: EvalSample, scorer: str) -> Score:
    assert sample.scores is not None, f"sample {sample.id} was not scored"
    return sample.scores[scorer]


def value_of(sample: EvalSample, scorer: str) -> dict[str, Any]:
    """A dict-valued score of the sample (task_score, memory_selection)."""
    value = score_of(sample, scorer).value
    assert isinstance(value, dict)
    return value


def run_blind(solver: Any, tmp_path: Path, prompts: list[str] | None = None, **task_args: Any) -> EvalLog:
    """One blind-protocol eval of ``solver`` on a model that always says "I am not sure.",
    recording its prompts in ``prompts``."""
    from cmi_inspect.causal_locomo.causal_locomo import causal_locomo
    from inspect_ai import eval as inspect_eval

    require_data(task_args)
    [log] = inspect_eval(
        causal_locomo(protocol="blind", **task_args),
        solver=solver,
        model=mock_model(lambda p: "I am not sure.", prompts),
        display="none",
        log_dir=str(tmp_path),
    )
    return log


@pytest.fixture
def hostile(tmp_path_factory):
    """The hostile strategies of ``tests/causal_locomo/strategies/hostile.py``, installed as a package's
    entry points install them: a distribution's metadata on the import path, here and in
    every process a test starts (``PYTHONPATH``), so that ``strategy_class`` finds them by
    name wherever it runs."""
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(REPO / "tests" / "causal_locomo" / "strategies"))
        from hostile import HOSTILE

        with installed(HOSTILE, tmp_path_factory.mktemp("plugins"), patch):
            yield


PLUGIN_DIST = "cmi_test_plugins-1.0.dist-info"


@contextlib.contextmanager
def installed(points: dict[str, str], site: Path, patch: pytest.MonkeyPatch) -> Iterator[Path]:
    """``points`` (name -> ``module:Class``) installed as one distribution's entry points in
    the folder ``site``, put first on the import path of this process and of its children
    with ``tests/strategies`` (where the test strategies' modules are)."""
    from cmi_inspect.causal_locomo import strategies

    dist = site / PLUGIN_DIST
    dist.mkdir(parents=True, exist_ok=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: cmi-test-plugins\nVersion: 1.0\n")
    lines = "".join(f"{name} = {value}\n" for name, value in points.items())
    (dist / "entry_points.txt").write_text(f"[{strategies.ENTRY_POINT_GROUP}]\n{lines}")
    code = str(REPO / "tests" / "causal_locomo" / "strategies")
    patch.syspath_prepend(code)
    patch.syspath_prepend(str(site))
    path = [str(site), code, *filter(None, [os.environ.get("PYTHONPATH")])]
    patch.setenv("PYTHONPATH", os.pathsep.join(path))
    strategies.installed_strategies.cache_clear()
    try:
        yield dist
    finally:
        strategies.installed_strategies.cache_clear()


ScriptedReply = Callable[[dict[str, Any]], tuple[int, "str | dict[str, Any]"]]
"""What a scripted endpoint answers to a request's body: the status, and the reply's text or
its whole message (a dict, for tool calls)."""


@pytest.fixture
def scripted_endpoint():
    """A loopback OpenAI-compatible server answering as told, and an ``openai-api`` model
    naming it (the LLM of a memory library under test, without the embedded model)."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    servers: list[ThreadingHTTPServer] = []

    def serve(reply: ScriptedReply) -> Model:
        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                status, answer = reply(body)
                message = answer if isinstance(answer, dict) else {"role": "assistant", "content": answer}
                finish = "tool_calls" if message.get("tool_calls") else "stop"
                payload = (
                    {"id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
                     "choices": [{"index": 0, "finish_reason": finish, "message": message}],
                     "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}
                    if status == 200 else {"error": {"message": answer, "type": "invalid_request_error"}}
                )  # fmt: skip
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: object) -> None:
                pass

        class Server(ThreadingHTTPServer):
            request_queue_size = 128  # Graphiti's calls come in bursts; the default backlog is 5

        server = Server(("127.0.0.1", 0), Handler)
        servers.append(server)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        return get_model("openai-api/scripted/extractor", base_url=url, api_key="none", memoize=False)

    yield serve
    for server in servers:
        server.shutdown()
        server.server_close()


def message_text(body: dict[str, Any]) -> str:
    """The text of a chat request's messages, one after another."""
    return "\n".join(str(m.get("content") or "") for m in body["messages"])


@pytest.fixture
def by_entry_point(monkeypatch):
    """The strategy registry sees our pyproject's entry points, as an installed package shows them."""
    import re
    from importlib.metadata import EntryPoint

    from cmi_inspect.causal_locomo import strategies

    group = strategies.ENTRY_POINT_GROUP
    text = (REPO / "pyproject.toml").read_text()
    section = text.split(f'[project.entry-points."{group}"]\n', 1)[1].split("\n[", 1)[0]
    points = [EntryPoint(name, value, group) for name, value in re.findall(r'^(\w+) = "(.+)"', section, re.M)]
    assert points
    monkeypatch.setattr(strategies, "entry_points", lambda group: points)
    strategies.installed_strategies.cache_clear()
    yield
    strategies.installed_strategies.cache_clear()


def extra_missing(load: Callable[[], object]) -> str:
    """Why an optional library cannot be imported here: its extra's one line naming the
    install command ('' when it can), for a test that runs it to skip with."""
    from cmi_inspect.errors import UserError

    try:
        load()
    except UserError as ex:
        return str(ex)
    return ""


def needs_extra(load: Callable[[], object]) -> pytest.MarkDecorator:
    """Skip a test that runs an optional library where its extra is missing, with the line
    that names the install command (``extra_missing``)."""
    missing = extra_missing(load)
    return pytest.mark.skipif(bool(missing), reason=missing or "installed")


# XL v5: the LoCoMo-format fixture read by scripted readers
def scripted_row(item: dict[str, Any], reader: str) -> dict[str, Any]:
    """A reader's step-two row: candidates misleading to both readers when the turn comes
    from a question of the same form in session 1 or 2, to the first deciding reader alone otherwise;
    useful decoys state the gold; random decoys and wrong-person turns give nothing."""
    row = {"item": item["item"], "event": "another", "turn_supports_gold": False,
           "evidence_supports_gold": "yes", "answerable": None}  # fmt: skip
    if item["kind"] == "candidate":
        early = item["dia_id"].split(":")[0] in ("D1", "D2")
        from cmi_inspect.causal_locomo.xl.verdicts import READERS

        row["verdict"] = "wrong" if early or reader == READERS[0] else "none"
    elif item["kind"] == "useful":
        row |= {"verdict": "gold", "turn_supports_gold": True}
    else:
        row |= {"verdict": "none", "event": "unrelated"}
        if item["kind"] == "unanswerable":
            row["answerable"] = False
    return row


def read_by_script(folder: Path) -> None:
    """Every batch's step-two rows, for the deciding readers and the replaced ones."""
    items = [json.loads(line) for line in (folder / "items.jsonl").read_text().splitlines()]
    from cmi_inspect.causal_locomo.xl.verdicts import READERS, REPLACED

    for reader in (*READERS, *REPLACED):
        for batch in sorted({r["batch"] for r in items}):
            rows = [scripted_row(r, reader) for r in items if r["batch"] == batch]
            path = folder / f"batch-{batch:02d}.{reader}.verdicts.jsonl"
            path.write_text("".join(json.dumps(r) + "\n" for r in rows))


@pytest.fixture(scope="session")
def mini_verdicts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A verdict file of the fixture, read by script (no adjudication)."""
    from cmi_inspect.causal_locomo.xl import reading
    from cmi_inspect.causal_locomo.xl.locomo import load_locomo
    from cmi_inspect.causal_locomo.xl.verdicts import collect

    folder = tmp_path_factory.mktemp("reading")
    convs = {c.sample_id: c for c in load_locomo(Path(LOCOMO_MINI))}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(reading, "_convs", lambda: convs)
        patch.setattr(reading, "BATCHES", 2)
        reading.write_sheets(folder)
    read_by_script(folder)
    out = folder / "verdicts.json"
    collect(folder, out, Path(LOCOMO_MINI))
    return out


# --- a model with forced decoding (the attribution baselines' tests) -------------------------


class ForcedScript(FixedLatencyModel):
    """``fixed_latency`` (the first note, else "I do not know.", words as tokens) with forced
    decoding: a word of the reply costs 0.1 nats where the prompt has it, 3 where it does not,
    so a memory that holds the answer raises its log-probability (``forced_script/0``)."""

    async def continuation_logprobs(self, input: list[ChatMessage], continuations: list[str]) -> list[list[float]]:
        prompt = input[-1].text.lower()
        return [[-0.1 if w.lower() in prompt else -3.0 for w in c.split()] + [-0.1] for c in continuations]


@modelapi(name="forced_script")
def forced_script() -> type[FixedLatencyModel]:
    return ForcedScript
