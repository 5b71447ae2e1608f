"""The CLI contract through the real console script (subprocess)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from iclr25 import __version__
from iclr25.output import TOP_LEVEL_KEYS
from iclr25.testing import error_line, sigint_default


def test_help_lists_every_registered_command(cli):
    from iclr25.cli import COMMAND_MODULES, load_command_modules

    result = cli("--help")
    assert result.returncode == 0, result
    for module in load_command_modules():
        assert module.NAME in result.stdout
    assert len(COMMAND_MODULES) == len(set(COMMAND_MODULES))


def test_help_imports_no_heavy_library():
    code = (
        "import sys; from iclr25.cli import build_app; build_app(); "
        "heavy = [m for m in ('torch', 'transformers', 'cupy', 'matplotlib', 'sklearn') "
        "if m in sys.modules]; print(heavy); sys.exit(1 if heavy else 0)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_version(cli):
    result = cli("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"iclr25 {__version__}"


def test_no_args_prints_help(cli):
    result = cli()
    assert "Usage" in result.stdout + result.stderr
    assert "info" in result.stdout + result.stderr


def test_unknown_command_exits_2(cli):
    result = cli("nonsense")
    assert result.returncode == 2, result
    assert "No such command" in result.stderr


def test_unknown_option_exits_2(cli):
    result = cli("info", "--no-such-option")
    assert result.returncode == 2, result


def test_info_json_has_contract_keys(cli):
    result = cli("info", "--json")
    assert result.returncode == 0, result
    doc = result.json()
    assert tuple(doc) == TOP_LEVEL_KEYS
    assert doc["command"] == "info"
    assert doc["version"] == __version__
    env = doc["environment"]
    for key in ("python", "numpy", "torch", "cupy", "device"):
        assert key in env
    assert env["device"]["kind"] in ("cpu", "cuda")
    assert env["device"]["reason"]
    assert "total_s" in doc["timings"]
    assert "pairwise_sqdist" in doc["results"]["kernels_registered"]


def test_json_stdout_is_only_the_document(cli):
    result = cli("cite", "icl-order", "--json")
    assert result.returncode == 0
    json.loads(result.stdout)  # nothing else on stdout


def test_device_cuda_without_gpu_exits_2_with_fix(cli):
    from iclr25.gpu import cuda_available

    if cuda_available():
        return  # the contract under test is for CPU-only machines
    result = cli("info", "--device", "cuda")
    assert result.returncode == 2, result
    assert error_line(result.stderr).startswith("Error: ")
    assert "--device cpu" in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


def test_bad_device_value_exits_2(cli):
    result = cli("info", "--device", "tpu")
    assert result.returncode == 2


def test_out_dir_written_and_not_overwritten(cli, tmp_path):
    out = tmp_path / "run"
    first = cli("cite", "carbon-report", "--out", out)
    assert first.returncode == 0, first
    assert sorted(p.name for p in out.iterdir()) == ["config.json", "result.json"]
    doc = json.loads((out / "result.json").read_text())
    assert tuple(doc) == TOP_LEVEL_KEYS
    config = json.loads((out / "config.json").read_text())
    assert config["command"] == "cite"
    before = (out / "result.json").read_bytes()

    second = cli("cite", "gpu-bench", "--out", out)
    assert second.returncode == 2, second
    assert "--overwrite" in second.stderr
    assert (out / "result.json").read_bytes() == before
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".run")]  # no temp left

    third = cli("cite", "gpu-bench", "--out", out, "--overwrite")
    assert third.returncode == 0, third
    assert "spector2025thunderkittens" in (out / "result.json").read_text()


def test_out_into_empty_existing_dir_is_fine(cli, tmp_path):
    out = tmp_path / "empty"
    out.mkdir()
    result = cli("cite", "--out", out)
    assert result.returncode == 0, result
    assert (out / "result.json").exists()


def test_cite(cli):
    result = cli("cite", "dro-bound")
    assert result.returncode == 0
    assert "@inproceedings{le2025universal," in result.stdout
    assert "azizian2023exact" in result.stdout
    from iclr25.citations import PAPERS

    all_papers = cli("cite")
    entries = [ln for ln in all_papers.stdout.splitlines() if ln.startswith("@")]
    assert len(entries) == len({k for v in PAPERS.values() for k in v})
    assert "@inproceedings{liu2025pngail," in cli("cite", "pn-gail").stdout


def test_cite_unknown_command_lists_valid_ones(cli):
    result = cli("cite", "nonsense")
    assert result.returncode == 2
    assert "icl-order" in result.stderr and "gpu-bench" in result.stderr


def _start_long_run(console_command, out):
    cmd = [*console_command, "bandit-replicable", "run", "--algo"]
    cmd += ["ucb1", "--horizon", "1000000", "--runs", "20000", "--out", str(out)]
    return subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=sigint_default,
    )


def _wait_until_sigterm_is_handled(pid: int, limit_s: float = 120) -> None:
    """Until the CLI has installed its SIGTERM handler (it does so when the command
    starts, after every import), read from /proc on Linux; elsewhere a 3 s pause."""
    import time

    status = Path(f"/proc/{pid}/status")
    if not status.exists():
        time.sleep(3)
        return
    deadline = time.time() + limit_s
    while time.time() < deadline:
        caught = [ln for ln in status.read_text().splitlines() if ln.startswith("SigCgt:")]
        if caught and int(caught[0].split()[1], 16) & (1 << (15 - 1)):
            time.sleep(0.5)  # inside the command's work, not at its first line
            return
        time.sleep(0.05)


def _interrupt_after_start(console_command, tmp_path, sig, expected_code):
    out = tmp_path / "run"
    proc = _start_long_run(console_command, out)
    _wait_until_sigterm_is_handled(proc.pid)
    assert proc.poll() is None, proc.communicate()
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == expected_code, err
    assert "Traceback" not in err and err.startswith("Error: ")
    assert list(tmp_path.iterdir()) == []  # no run directory, no staged leftovers


def test_ctrl_c_exits_130_and_leaves_nothing(console_command, tmp_path):
    import signal

    _interrupt_after_start(console_command, tmp_path, signal.SIGINT, 130)


def test_sigterm_exits_143_and_leaves_nothing(console_command, tmp_path):
    import signal

    _interrupt_after_start(console_command, tmp_path, signal.SIGTERM, 143)
