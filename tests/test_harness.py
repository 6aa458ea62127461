"""Black-box harness mode: a harness that owns its loop, inside the sandbox, on both backends.

mini-swe-agent's real CLI plays a whole graded episode against the scripted server through
the recording proxy (locally from the host's Python, in docker from a harness directory
built from the installed packages, as `pip install --target` would); a stdlib probe checks
the request budget, what is reachable from inside and that no answer is there; a harness
that never stops is cut at the wall clock with everything it started.
"""

from __future__ import annotations

import importlib.metadata as metadata
import json
import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement

import mle_gym
from mle_gym.data import CompetitionDirs
from mle_gym.data.checksums import md5_of
from mle_gym.harness import run_harness
from mle_gym.sandbox.base import ReadOnlyBind, SandboxSpec
from mle_gym.sandbox.factory import make_sandbox
from tests.conftest import REPO, require_bwrap
from tests.llm_server import (
    LOOK,
    RUN,
    SCRIPT_PATH,
    TRAIN_SCRIPT,
    Reply,
    ScriptedLLMServer,
    text,
    tool,
)
from tests.prerequisites import require

pytestmark = pytest.mark.timeout(300)

COMPETITION = "sklearn-digits"
#: mini-swe-agent's CLI, non-interactive: no first-run setup, litellm's bundled cost map
#: (the sandbox has no network), unpriced models allowed, few retries of a failed call.
MINI = (
    "MSWEA_CONFIGURED=true MSWEA_SILENT_STARTUP=1 LITELLM_LOCAL_MODEL_COST_MAP=True "
    "MSWEA_COST_TRACKING=ignore_errors MSWEA_MODEL_RETRY_STOP_AFTER_ATTEMPT=2 "
    'python3 -m minisweagent.run.mini -y --exit-immediately -m openai/scripted -t "$MLE_GYM_TASK" '
    "-o /tmp/trajectory.json"
)
#: Distributions the CLI never imports (data sets, AWS, Hugging Face), left out of the
#: harness directory to keep it small.
NOT_NEEDED = {"datasets", "pandas", "numpy", "pyarrow", "boto3", "botocore", "s3transfer"}
NOT_NEEDED |= {"hf-xet", "huggingface-hub", "multiprocess", "dill", "xxhash", "fsspec"}


@pytest.fixture
def digits(digits_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MLE_GYM_HOME", str(digits_home))
    return digits_home


def _closure(names: list[str]) -> list[metadata.Distribution]:
    """The installed distributions `names` need (extras aside), less NOT_NEEDED."""
    found: dict[str, metadata.Distribution] = {}
    pending = list(names)
    while pending:
        key = re.sub(r"[-_.]+", "-", pending.pop()).lower()
        if key in found or key in NOT_NEEDED:
            continue
        found[key] = dist = metadata.distribution(key)
        for line in dist.requires or []:
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                pending.append(requirement.name)
    return list(found.values())


@pytest.fixture(scope="session")
def mini_harness_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """mini-swe-agent with what it imports, laid out as `pip install --target DIR` does,
    from this interpreter's packages (linked, not downloaded), compiled files included."""
    require(
        sys.version_info[:2] == (3, 11),
        f"the docker image's Python is 3.11 and this one is {sys.version.split()[0]}: its "
        "compiled packages would not load there",
    )
    target = tmp_path_factory.mktemp("harness")
    target.chmod(0o755)  # the sandbox's user reads it
    for dist in _closure(["mini-swe-agent", "litellm", "mcp"]):
        root = Path(dist.locate_file("")).resolve()
        for name in dist.files or []:
            source = Path(dist.locate_file(name)).resolve()
            if not source.is_file() or not source.is_relative_to(root):
                continue
            dest = target / source.relative_to(root)
            dest.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(source, dest)
            except OSError:
                shutil.copy2(source, dest)
    return target


def _mini_plan() -> list[Reply]:
    return [
        tool("bash", command=LOOK),
        tool(
            "bash",
            expect="sample_submission.csv",
            command=f"cat > {SCRIPT_PATH} <<'PYEOF'\n{TRAIN_SCRIPT}PYEOF",
        ),
        tool("bash", command=RUN),
        tool(
            "bash",
            expect="predictions to /home/submission/submission.csv",
            command="echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT",
        ),
    ]


def test_mini_swe_agent_cli_plays_a_graded_episode(
    backend: str, digits: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    # locally the host's Python (with mini-swe-agent) is visible; docker gets a harness dir
    harness_dir = request.getfixturevalue("mini_harness_dir") if backend == "docker" else None
    with ScriptedLLMServer(_mini_plan()) as server:
        result = run_harness(
            COMPETITION,
            MINI,
            server.url,
            backend=backend,
            time_limit=600,
            run_dir=tmp_path / "run",
            harness_dir=harness_dir,
            api_key="the-real-key",
        )
    output = result.output_path.read_text(errors="replace")
    assert result.exit_code == 0 and not result.cut, output[-3000:]
    assert server.mismatches == []
    # graded as the env grades: the same reward `evaluate` gives the same file
    assert result.report["valid_submission"] and result.reward > 0.5
    assert result.submission_path is not None
    assert result.reward == mle_gym.evaluate(COMPETITION, result.submission_path)["reward"]
    # the task reached the model from $MLE_GYM_TASK
    task = server.requests[0]["messages"][1]["content"]
    assert "/home/submission/submission.csv" in task and "How this episode runs" in task
    # every exchange the server saw is in the log, in order, with its answer and usage
    lines = [json.loads(line) for line in result.log_path.read_text().splitlines()]
    assert result.requests == len(server.requests) == len(lines) == 4
    assert [line["request"] for line in lines] == server.requests
    for line, reply in zip(lines, _mini_plan(), strict=True):
        assert line["status"] == 200 and line["counted"] and line["usage"]["total_tokens"] > 0
        call = line["message"]["tool_calls"][0]["function"]
        assert json.loads(call["arguments"]) == reply.tool_calls[0][1]
    saved = json.loads((result.run_dir / "result.json").read_text())
    assert saved["reward"] == result.reward and saved["requests"] == 4


# A stdlib harness: three model calls (the budget is two), then what it can reach, and the
# md5 of every CSV it can read. It prints one JSON line.
PROBE = r"""
import hashlib, json, os, socket, sys, urllib.error, urllib.request

base = os.environ["OPENAI_BASE_URL"]
calls = []
for n in range(3):
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": f"call {n}"}]})
    req = urllib.request.Request(base + "/chat/completions", body.encode(),
                                 {"Content-Type": "application/json",
                                  "Authorization": "Bearer " + os.environ["OPENAI_API_KEY"]})
    try:
        with urllib.request.urlopen(req, timeout=30) as answer:
            calls.append([answer.status, json.load(answer)["choices"][0]["message"]["content"]])
    except urllib.error.HTTPError as exc:
        calls.append([exc.code, json.load(exc)["error"]])
reached = []
for host, port in json.loads(sys.argv[1]):
    try:
        socket.create_connection((host, port), timeout=3).close()
        reached.append([host, port])
    except OSError:
        pass
sums = []
for top, dirs, files in os.walk("/"):
    dirs[:] = [d for d in dirs if os.path.join(top, d) not in ("/proc", "/sys", "/dev")]
    for name in files:
        path = os.path.join(top, name)
        if name.endswith(".csv") and os.path.isfile(path):
            try:
                sums.append(hashlib.md5(open(path, "rb").read()).hexdigest())
            except OSError:
                pass
interfaces = [line.split(":")[0].strip() for line in open("/proc/net/dev").readlines()[2:]]
import harness_only, numpy  # the first only in the harness dir; numpy there is a decoy
print("PROBE" + json.dumps({"calls": calls, "reached": reached, "sums": sums,
                            "interfaces": interfaces, "key": os.environ["OPENAI_API_KEY"],
                            "docker_socket": os.path.exists("/var/run/docker.sock"),
                            "sandbox_numpy": not hasattr(numpy, "DECOY")}))
"""


def _listening(host: str) -> socket.socket:
    server = socket.socket()
    server.bind((host, 0))
    server.listen(8)
    return server


def _bridge_address(backend: str) -> str | None:
    """The host's address on Docker's default bridge (what `network=True` would reach)."""
    if backend != "docker":
        return None
    from mle_gym.sandbox.engine import connect

    config = connect().networks.get("bridge").attrs["IPAM"]["Config"]
    return config[0].get("Gateway") if config else None


def test_budget_reachability_and_no_answers(backend: str, digits: Path, tmp_path: Path) -> None:
    harness = tmp_path / "harness"
    harness.mkdir()
    (harness / "bin").mkdir()
    (harness / "bin" / "probe.py").write_text(PROBE)  # its own directory comes first
    (harness / "harness_only.py").write_text("")
    (harness / "numpy").mkdir()
    (harness / "numpy" / "__init__.py").write_text("DECOY = True\n")
    everywhere = _listening("0.0.0.0")  # reached by a bridge, were there one
    port = everywhere.getsockname()[1]
    targets = [["127.0.0.1", port], ["1.1.1.1", 53], ["8.8.8.8", 443]]
    if bridge := _bridge_address(backend):
        targets.append([bridge, port])
    plan = [text("first"), text("second"), text("never sent")]
    try:
        with ScriptedLLMServer(plan) as server:
            upstream_port = int(server.url.rsplit(":", 1)[1].split("/")[0])
            targets.append(["127.0.0.1", upstream_port])  # the real endpoint, on the host
            result = run_harness(
                COMPETITION,
                ["python3", "/opt/harness/bin/probe.py", json.dumps(targets)],
                server.url,
                backend=backend,
                time_limit=300,
                max_requests=2,
                run_dir=tmp_path / "run",
                harness_dir=harness,
                api_key="the-real-key",
            )
    finally:
        everywhere.close()
    output = result.output_path.read_text()
    assert result.exit_code == 0, output[-3000:]
    probe = json.loads(output.split("PROBE", 1)[1].splitlines()[0])
    # the budget: two answered, the third refused with an OpenAI-style error
    assert probe["calls"][:2] == [[200, "first"], [200, "second"]]
    status, error = probe["calls"][2]
    assert status == 403 and error["code"] == "request_budget" and "budget" in error["message"]
    assert result.requests == 2 and result.refused == 1 and len(server.requests) == 2
    lines = [json.loads(line) for line in result.log_path.read_text().splitlines()]
    assert [(line["status"], line["refused"]) for line in lines] == [
        (200, False),
        (200, False),
        (403, True),
    ]
    # nothing but the proxy: no host service, no outside address, loopback only
    assert probe["reached"] == [] and probe["interfaces"] == ["lo"]
    assert not probe["docker_socket"]
    # the harness dir fills in what the sandbox lacks; the sandbox's own packages win
    assert probe["sandbox_numpy"]
    assert probe["key"] != "the-real-key"  # the real key stays on the host
    # no answer file is readable inside
    private = CompetitionDirs.of(COMPETITION, digits).private
    answers = {md5_of(p) for p in private.rglob("*.csv")}
    assert answers and not answers & set(probe["sums"])
    assert md5_of(CompetitionDirs.of(COMPETITION, digits).public / "test.csv") in probe["sums"]
    assert not result.report["valid_submission"]  # it wrote none: graded as missing


COPY_SAMPLE = "cp /home/data/sample_submission.csv /home/submission/submission.csv"
HANGS = (
    f"{COPY_SAMPLE} && "
    "(setsid sh -c 'while :; do sleep 1; done' >/dev/null 2>&1 &) && "
    "echo hanging && sleep 100000"
)


def test_wall_clock_cuts_a_harness_that_never_stops(
    backend: str, digits: Path, tmp_path: Path
) -> None:
    with ScriptedLLMServer([]) as server:
        result = run_harness(
            COMPETITION, HANGS, server.url, backend=backend, time_limit=6, run_dir=tmp_path
        )
    assert result.cut and result.exit_code is None
    assert "hanging" in result.output_path.read_text()
    # graded all the same: what it wrote before the cut (the sample scores 0)
    assert result.report["valid_submission"] and result.reward == 0.0


#: Asks the proxy's validate route three times: no file, a header-only file, the sample.
CHECKS = (
    "cat > /tmp/check.py <<'PYEOF'\n"
    "import os, urllib.request as request\n"
    "call = request.Request(os.environ['MLE_GYM_VALIDATE_URL'], data=b'', method='POST')\n"
    "print(request.urlopen(call).read().decode())\n"
    "PYEOF\n"
    "python3 /tmp/check.py && printf 'id,label\\n' > /home/submission/submission.csv && "
    f"python3 /tmp/check.py && {COPY_SAMPLE} && python3 /tmp/check.py"
)


def test_the_validate_route_checks_the_submission(
    backend: str, digits: Path, tmp_path: Path
) -> None:
    """A harness has no validate step: the proxy answers one path itself, as the env's
    validate tool does (never a score), without counting it as a model call."""
    with ScriptedLLMServer([]) as server:
        result = run_harness(
            COMPETITION, CHECKS, server.url, backend=backend, max_requests=0, run_dir=tmp_path
        )
    answers = [
        json.loads(line)
        for line in result.output_path.read_text().splitlines()
        if line.startswith("{")
    ]
    assert [a["valid"] for a in answers] == [False, False, True], answers
    assert answers[0]["message"].startswith("No submission yet")
    assert answers[1]["message"].startswith("The submission is invalid: ")
    assert all("score" not in a["message"].lower() for a in answers)
    assert result.requests == 0 and result.refused == 0 and server.requests == []
    assert result.report["valid_submission"]


#: Every process's command line (no `ps` in the offline image).
PROCESSES = "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline; echo; done 2>/dev/null"


def test_kill_processes_ends_escaped_processes_too(backend: str, tmp_path: Path) -> None:
    """What the cut relies on: processes in sessions of their own die with the rest."""
    public = tmp_path / "public"
    public.mkdir()
    sandbox = make_sandbox(backend)
    try:
        sandbox.start(SandboxSpec(public))
        sandbox.run("(setsid sleep 12345 >/dev/null 2>&1 &); nohup sleep 12346 >/dev/null &", 30)
        assert "sleep 12345" in sandbox.run(PROCESSES, 30).output
        sandbox.kill_processes()
        left = sandbox.run(PROCESSES, 30).output
        assert "sleep 1234" not in left and "bash" in left, left
        sandbox.write_file("/home/code/kept.txt", b"files stay")
        assert sandbox.read_file("/home/code/kept.txt", 100) == b"files stay"
    finally:
        sandbox.stop()


def test_refusals_are_clear(digits: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="network=True is refused"):
        run_harness(COMPETITION, "true", "http://127.0.0.1:1/v1", network=True, run_dir=tmp_path)
    with pytest.raises(ValueError, match="not a directory"):
        run_harness(
            COMPETITION,
            "true",
            "http://127.0.0.1:1/v1",
            harness_dir=tmp_path / "x",
            run_dir=tmp_path,
        )
    with pytest.raises(ValueError, match="http"):
        run_harness(COMPETITION, "true", "ftp://somewhere", run_dir=tmp_path)


def test_the_run_command_runs_a_harness(digits: Path, tmp_path: Path) -> None:
    require_bwrap()
    with ScriptedLLMServer([]) as server:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "mle_gym.cli",
                "run",
                COMPETITION,
                "--harness",
                f"{COPY_SAMPLE} && cat TASK.md",
                "--model-endpoint",
                server.url,
                "--run-dir",
                str(tmp_path / "run"),
                "--time-limit",
                "120",
            ],
            capture_output=True,
            text=True,
            timeout=240,
            cwd=REPO,
            env={**os.environ, "COLUMNS": "200"},
        )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "exited with status 0" in done.stdout and "0 model call(s)" in done.stdout
    assert "How this episode runs" in (tmp_path / "run" / "harness.log").read_text()
    assert json.loads((tmp_path / "run" / "result.json").read_text())["report"]["valid_submission"]


@pytest.mark.parametrize(
    ("target", "why"),
    [
        ("/usr/local/x", "inside /usr"),
        ("/home", "would hide /home/"),
        ("/home/data/more", "inside /home/data"),
        ("/opt/../etc", "normalised absolute"),
        ("relative", "normalised absolute"),
    ],
)
def test_bind_targets_cannot_shadow_the_sandbox(tmp_path: Path, target: str, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        ReadOnlyBind(tmp_path, target)
    with pytest.raises(ValueError, match="overlap"):
        SandboxSpec(
            tmp_path, binds=(ReadOnlyBind(tmp_path, "/opt/a"), ReadOnlyBind(tmp_path, "/opt/a/b"))
        )


#: On the development variant: the test rows the harness sees, a nearest-neighbour model's
#: submission, one check through the validate route, and what TASK.md says of the variant.
DEV_HARNESS = (
    "wc -l < /home/data/test.csv\n"
    'python -c "import pandas as pd; from sklearn.neighbors import KNeighborsClassifier as K; '
    "t = pd.read_csv('/home/data/train.csv'); x = pd.read_csv('/home/data/test.csv'); "
    "f = [c for c in x.columns if c != 'id']; "
    "pd.DataFrame({'id': x['id'], 'label': K(1).fit(t[f], t['label']).predict(x[f])})"
    ".to_csv('/home/submission/submission.csv', index=False)\"\n"
    "cat > /tmp/check.py <<'PYEOF'\n"
    "import os, urllib.request as request\n"
    "call = request.Request(os.environ['MLE_GYM_VALIDATE_URL'], data=b'', method='POST')\n"
    "print(request.urlopen(call).read().decode())\n"
    "PYEOF\n"
    "python3 /tmp/check.py\n"
    "grep -c 'development variant' TASK.md"
)


def test_a_harness_episode_on_the_dev_variant(digits: Path, tmp_path: Path) -> None:
    """`mle-gym run --harness --data dev --reward-mode dense`: the harness sees the variant's
    files, the validate route gives the development score, the submission is graded on the
    development answers (the reward, dense, sums to its normalised score), and the run's
    receipt passes."""
    require_bwrap()
    run = tmp_path / "run"
    with ScriptedLLMServer([]) as server:
        done = subprocess.run(
            [sys.executable, "-m", "mle_gym.cli", "run", COMPETITION, "--harness", DEV_HARNESS,
             "--model-endpoint", server.url, "--run-dir", str(run), "--time-limit", "120",
             "--data", "dev", "--reward-mode", "dense"],
            capture_output=True, text=True, timeout=240, cwd=REPO,
            env={**os.environ, "COLUMNS": "200"},
        )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    output = (run / "harness.log").read_text().splitlines()
    dev = CompetitionDirs.of(COMPETITION).root / "dev"
    assert output[0].strip() == str(len((dev / "public" / "test.csv").read_text().splitlines()))
    check = json.loads(next(line for line in output if line.startswith("{")))
    assert check["valid"] and "Development score: " in check["message"]
    assert output[-1].strip() != "0"  # TASK.md names the variant
    result = json.loads((run / "result.json").read_text())
    assert result["integrity"]["data_variant"] == "dev"
    expected = mle_gym.evaluate(COMPETITION, result["submission_path"], data="dev")
    assert result["report"]["score"] == pytest.approx(expected["score"]) and expected["valid"]
    assert result["reward"] == pytest.approx(max(0.0, expected["normalized_score"]))
    receipt = subprocess.run(
        [sys.executable, "-m", "mle_gym.cli", "receipt", str(run), "--json"],
        capture_output=True, text=True, timeout=120, cwd=REPO,
    )  # fmt: skip
    assert receipt.returncode == 0, receipt.stdout + receipt.stderr
    assert json.loads(receipt.stdout)["kind"] == "harness"
